/*
Copyright 2026 The tdb-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package rbac

// Namespace is the operator's namespace in config/default.
const Namespace = "tdb-system"

// Expected is every grant the operator has, and why. A test fails when the
// roles grant anything else, or less: widen this table only with a reason.
var Expected = []Row{
	// The status controller: coverage, domains and expected pods.
	{Kind: "ClusterRole", Group: "", Resource: "nodes", Verbs: "get,list,watch"},
	{Kind: "ClusterRole", Group: "", Resource: "replicationcontrollers", Verbs: "get,list,watch"},
	// The status controller: whether the registered webhook's
	// namespaceSelector reaches a budget's namespace (NotEnforced otherwise).
	{Kind: "ClusterRole", Group: "", Resource: "namespaces", Verbs: "get,list,watch"},
	{Kind: "ClusterRole", Group: "apps", Resource: "daemonsets", Verbs: "get,list,watch"},
	{Kind: "ClusterRole", Group: "apps", Resource: "deployments", Verbs: "get,list,watch"},
	{Kind: "ClusterRole", Group: "apps", Resource: "replicasets", Verbs: "get,list,watch"},
	{Kind: "ClusterRole", Group: "apps", Resource: "statefulsets", Verbs: "get,list,watch"},
	// Expected pods of any controller with a scale subresource, as policy/v1
	// does: the only wildcard allowed.
	{Kind: "ClusterRole", Group: "*", Resource: "*/scale", Verbs: "get"},
	// Pods are read; patch keeps controller.kubernetes.io/pod-deletion-cost.
	{Kind: "ClusterRole", Group: "", Resource: "pods", Verbs: "get,list,patch,watch"},
	// The rollout driver evicts through the Eviction API, so every budget applies.
	{Kind: "ClusterRole", Group: "", Resource: "pods/eviction", Verbs: "create"},
	// PodDisruptionBudgets are read so the webhook refuses, without a
	// charge, an eviction core would refuse after it; the mirror controller
	// creates, updates and deletes the mirrors of budgets with
	// mirrorPodDisruptionBudgets: PerDomain (it touches only PDBs it owns:
	// controller reference and label).
	{Kind: "ClusterRole", Group: "policy", Resource: "poddisruptionbudgets", Verbs: "create,delete,get,list,update,watch"},
	// The mirror controller drops, from its own mirrors' status, core's
	// record of an eviction whose pod was replaced under the same name
	// (MirrorReconciler.clearReplacedDisruptions).
	{Kind: "ClusterRole", Group: "policy", Resource: "poddisruptionbudgets/status", Verbs: "update"},
	// Budgets: read, and their status (the ledger) written.
	{Kind: "ClusterRole", Group: "policy.tdb.dev", Resource: "topologydisruptionbudgets", Verbs: "get,list,watch"},
	{Kind: "ClusterRole", Group: "policy.tdb.dev", Resource: "topologydisruptionbudgets/status", Verbs: "get,update"},
	// Events on budgets (both APIs: the recorder and leader election).
	{Kind: "ClusterRole", Group: "", Resource: "events", Verbs: "create,patch"},
	{Kind: "ClusterRole", Group: "events.k8s.io", Resource: "events", Verbs: "create,patch"},
	// CA injection: the rotator watches webhook configurations and updates
	// only the operator's own.
	{Kind: "ClusterRole", Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations", Verbs: "get,list,watch"},
	{Kind: "ClusterRole", Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations", Names: "tdb-validating-webhook-configuration", Verbs: "update"},
	// In the operator's namespace only: the webhook certificate Secret, by
	// name for every verb (read by every replica, its lists and watches
	// with a metadata.name field selector; updated by the leader), and the
	// leader election Lease.
	{Kind: "Role", Group: "", Resource: "secrets", Names: "tdb-webhook-server-cert", Verbs: "get,list,update,watch"},
	{Kind: "Role", Group: "coordination.k8s.io", Resource: "leases", Verbs: "create"},
	{Kind: "Role", Group: "coordination.k8s.io", Resource: "leases", Names: "tdb-operator.policy.tdb.dev", Verbs: "get,update"},
}
