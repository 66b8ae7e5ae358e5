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

package bundle

import (
	_ "embed"
)

// What OLM shows about the operator: everything in the CSV that does not
// come from config/. Field descriptions of the descriptors are not written
// here: they are taken from the CRD's schema, so the UI says what the API
// reference says.

// Package, channels and presentation.
const (
	PackageName    = "tdb-operator"
	Channel        = "alpha"
	DefaultChannel = "alpha"
	Maturity       = "alpha"
	DisplayName    = "Topology Disruption Budgets"
	Provider       = "tdb-operator"
	Repository     = "https://github.com/tdb-operator/tdb-operator"
	// Capability level: installs and upgrades as a Deployment; no operand
	// to manage beyond the budgets' status.
	Capabilities = "Basic Install"
	Categories   = "Application Runtime"
	// ShortDescription is metadata.annotations.description.
	ShortDescription = "Disruption budgets per failure domain: at most N pods down per zone, and at most M zones disrupted at once, enforced on every eviction."
	// MinKubeVersion is the oldest Kubernetes minor make test-compat runs
	// the operator on (the CRD with its CEL rules and invalid-spec cases,
	// the installs, drains under mirrored PDBs; docs/install.md), and the
	// Helm chart's kubeVersion too. The CRD's rules alone would need 1.29
	// (CEL GA, fieldPath from 1.28), but nothing older than 1.33 is run.
	MinKubeVersion = "1.33.0"
	// ManagerContainer is the manager's container in the Deployment; its
	// image is replaced by the bundle's image.
	ManagerContainer = "manager"
)

// description is spec.description (markdown).
//
//go:embed description.md
var description string

// icon is spec.icon, drawn for this project: three zones, one pod of each
// allowed out.
//
//go:embed icon.svg
var icon []byte

// Keywords, links and maintainers.
var (
	keywords = []string{
		"disruption", "poddisruptionbudget", "pdb", "eviction", "drain",
		"topology", "zone", "failure-domain", "availability", "rollout",
	}
	links = []AppLink{
		{Name: "Source", URL: Repository},
		{Name: "Documentation", URL: Repository + "/tree/main/docs"},
		{Name: "API and arithmetic", URL: Repository + "/blob/main/docs/budgets.md"},
		{Name: "Eviction webhook", URL: Repository + "/blob/main/docs/webhook.md"},
	}
	maintainers = []Maintainer{{Name: "tdb-operator maintainers"}}
)

// crdPresentation is what OLM shows about an owned CRD besides its schema.
type crdPresentation struct {
	displayName string
	description string
	// resources are the Kubernetes kinds a budget reads or acts on.
	resources []APIResourceReference
	spec      []descriptorSpec
	status    []descriptorSpec
}

// descriptorSpec names a field and its UI widgets; the description comes
// from the CRD schema at path.
type descriptorSpec struct {
	path         string
	displayName  string
	xDescriptors []string
}

// The x-descriptors used (OLM's descriptor reference).
const (
	xText          = "urn:alm:descriptor:com.tectonic.ui:text"
	xNumber        = "urn:alm:descriptor:com.tectonic.ui:number"
	xBooleanSwitch = "urn:alm:descriptor:com.tectonic.ui:booleanSwitch"
	xAdvanced      = "urn:alm:descriptor:com.tectonic.ui:advanced"
	xSelect        = "urn:alm:descriptor:com.tectonic.ui:select:"
	xPodSelector   = "urn:alm:descriptor:com.tectonic.ui:selector:core:v1:Pod"
	xStatusText    = "urn:alm:descriptor:text"
	xConditions    = "urn:alm:descriptor:io.kubernetes.conditions"
)

// presentations are keyed by CRD name.
var presentations = map[string]crdPresentation{
	"topologydisruptionbudgets.policy.tdb.dev": {
		displayName: "Topology Disruption Budget",
		description: "A disruption budget applied per failure domain: how many pods of each domain may be unavailable, and how many domains may be disrupted at once. Enforced on every eviction by the operator's webhook.",
		resources: []APIResourceReference{
			{Name: "pods", Kind: "Pod", Version: "v1"},
			{Name: "nodes", Kind: "Node", Version: "v1"},
			{Name: "statefulsets", Kind: "StatefulSet", Version: "v1"},
			{Name: "daemonsets", Kind: "DaemonSet", Version: "v1"},
			{Name: "deployments", Kind: "Deployment", Version: "v1"},
			{Name: "replicasets", Kind: "ReplicaSet", Version: "v1"},
		},
		spec: []descriptorSpec{
			{path: "selector", displayName: "Pod Selector", xDescriptors: []string{xPodSelector}},
			{path: "topologyKey", displayName: "Topology Key", xDescriptors: []string{xText}},
			{path: "maxUnavailable", displayName: "Max Unavailable per Domain", xDescriptors: []string{xText}},
			{path: "minAvailable", displayName: "Min Available per Domain", xDescriptors: []string{xText}},
			{path: "maxDisruptedDomains", displayName: "Max Disrupted Domains", xDescriptors: []string{xNumber}},
			{path: "unhealthyPodEvictionPolicy", displayName: "Unhealthy Pod Eviction Policy", xDescriptors: []string{xSelect + "IfHealthyBudget", xSelect + "AlwaysAllow"}},
			{path: "nodeSelectorTerm", displayName: "Node Selector Term", xDescriptors: []string{xAdvanced}},
			{path: "rollout.strategy", displayName: "Rollout Strategy", xDescriptors: []string{xSelect + "DomainByDomain", xSelect + "AllDomains", xAdvanced}},
			{path: "rollout.domainOrder", displayName: "Rollout Domain Order", xDescriptors: []string{xAdvanced}},
			{path: "rollout.paused", displayName: "Rollout Paused", xDescriptors: []string{xBooleanSwitch, xAdvanced}},
			{path: "rollout.progressDeadlineSeconds", displayName: "Rollout Progress Deadline (seconds)", xDescriptors: []string{xNumber, xAdvanced}},
		},
		status: []descriptorSpec{
			{path: "disruptionsAllowed", displayName: "Disruptions Allowed", xDescriptors: []string{xStatusText}},
			{path: "currentHealthy", displayName: "Healthy Pods", xDescriptors: []string{xStatusText}},
			{path: "expectedPods", displayName: "Expected Pods", xDescriptors: []string{xStatusText}},
			{path: "domainCount", displayName: "Domains", xDescriptors: []string{xStatusText}},
			{path: "domains", displayName: "Domain Budgets"},
			{path: "disruptedPods", displayName: "Evictions in Flight"},
			{path: "rollout.currentDomain", displayName: "Rollout Domain", xDescriptors: []string{xStatusText}},
			{path: "observedGeneration", displayName: "Observed Generation", xDescriptors: []string{xStatusText}},
			{path: "conditions", displayName: "Conditions", xDescriptors: []string{xConditions}},
		},
	},
}
