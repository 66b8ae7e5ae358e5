//go:build integration

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

package rbac_test

import (
	"fmt"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/test/integration/framework"
	rbactable "github.com/tdb-operator/tdb-operator/test/rbac"
)

// The names the operator's grants are restricted to, as config/default
// installs them.
const (
	certSecret    = "tdb-webhook-server-cert"
	webhookConfig = "tdb-validating-webhook-configuration"
	leaseName     = "tdb-operator.policy.tdb.dev"
	// otherSecret is another Secret of the operator's namespace, as Helm
	// keeps a release there.
	otherSecret = "sh.helm.release.v1.tdb.v1"
)

// access is one request a subject might make: a verb on a resource (with
// its subresource), in a namespace ("" for every namespace, or a
// cluster-scoped resource), on one named object or all.
type access struct {
	verb, group, resource, subresource, namespace, name string
}

func (a access) String() string {
	s := a.verb + " " + a.resource
	if a.subresource != "" {
		s += "/" + a.subresource
	}
	if a.group != "" {
		s += "." + a.group
	}
	if a.name != "" {
		s += " " + a.name
	}
	if a.namespace != "" {
		return s + " in " + a.namespace
	}
	return s + " cluster-wide"
}

// allowed asks the API server's authorizer whether id may make the request.
func allowed(id identity, a access) bool {
	sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
		User: id.user, Groups: id.groups,
		ResourceAttributes: &authorizationv1.ResourceAttributes{
			Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource,
			Namespace: a.namespace, Name: a.name,
		},
	}}
	Expect(k8s.Create(ctx, sar)).To(Succeed())
	return sar.Status.Allowed
}

// requestsOf turns a row of the table into the requests it allows: a
// ClusterRole's in every namespace at once (the operator's informers list
// cluster-wide), a Role's in the operator's namespace; a wildcard's as the
// concrete requests it exists for.
func requestsOf(r rbactable.Row) []access {
	ns := ""
	if r.Kind == "Role" {
		ns = rbactable.Namespace
	}
	names := []string{""}
	if r.Names != "" {
		names = strings.Split(r.Names, ",")
	}
	type gr struct{ group, resource, sub string }
	targets := []gr{{r.Group, r.Resource, ""}}
	if res, sub, ok := strings.Cut(r.Resource, "/"); ok {
		targets = []gr{{r.Group, res, sub}}
	}
	if r.Group == "*" && r.Resource == "*/scale" {
		// Every scalable controller's scale: built-in and custom ones.
		targets = []gr{{"apps", "deployments", "scale"}, {"apps", "replicasets", "scale"}, {"apps", "statefulsets", "scale"},
			{"", "replicationcontrollers", "scale"}, {"example.dev", "widgets", "scale"}}
	}
	var out []access
	for _, t := range targets {
		for _, n := range names {
			for _, v := range strings.Split(r.Verbs, ",") {
				out = append(out, access{verb: v, group: t.group, resource: t.resource, subresource: t.sub, namespace: ns, name: n})
			}
		}
	}
	return out
}

// grant is one verb on one resource and name ("": every name), as the
// roles and the API server's rules reviews list them.
type grant struct{ group, resource, name, verb string }

func grantsOfRows(rows []rbactable.Row, kinds ...string) map[grant]bool {
	out := map[grant]bool{}
	for _, r := range rows {
		if len(kinds) > 0 && !contains(kinds, r.Kind) {
			continue
		}
		names := []string{""}
		if r.Names != "" {
			names = strings.Split(r.Names, ",")
		}
		for _, n := range names {
			for _, v := range strings.Split(r.Verbs, ",") {
				out[grant{r.Group, r.Resource, n, v}] = true
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// rulesOf is what the API server says id may do in namespace
// (SelfSubjectRulesReview, made as id): cluster-wide grants and the
// namespace's.
func rulesOf(id identity, namespace string) map[grant]bool {
	c, err := client.New(as(id), client.Options{Scheme: framework.Scheme})
	Expect(err).NotTo(HaveOccurred())
	review := &authorizationv1.SelfSubjectRulesReview{Spec: authorizationv1.SelfSubjectRulesReviewSpec{Namespace: namespace}}
	Expect(c.Create(ctx, review)).To(Succeed())
	Expect(review.Status.Incomplete).To(BeFalse(), review.Status.EvaluationError)
	out := map[grant]bool{}
	for _, r := range review.Status.ResourceRules {
		names := r.ResourceNames
		if len(names) == 0 {
			names = []string{""}
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, n := range names {
					for _, v := range r.Verbs {
						out[grant{g, res, n, v}] = true
					}
				}
			}
		}
	}
	return out
}

// minus lists the grants of a that b lacks, sorted.
func minus(a, b map[grant]bool) []string {
	var out []string
	for g := range a {
		if !b[g] {
			out = append(out, fmt.Sprintf("%s %s %q %s", g.verb, g.resource, g.group, g.name))
		}
	}
	sort.Strings(out)
	return out
}

var _ = Describe("The operator's ServiceAccount", func() {
	It("may do everything the table lists", func() {
		var refused []string
		n := 0
		for _, row := range rbactable.Expected {
			for _, a := range requestsOf(row) {
				n++
				if !allowed(operatorIdentity(), a) {
					refused = append(refused, a.String())
				}
			}
		}
		AddReportEntry("requests checked allowed", n)
		Expect(refused).To(BeEmpty(), "the table grants these, the installed roles do not")
	})

	It("may do nothing beyond it: other Secrets, other namespaces' objects, pod deletion and updates, node, budget and workload writes", func() {
		const tenant = "tenant"
		ns := rbactable.Namespace
		denied := []access{
			// Secrets: only the certificate's, only in the operator's
			// namespace, never created or deleted.
			{verb: "get", resource: "secrets", namespace: ns, name: otherSecret},
			{verb: "list", resource: "secrets", namespace: ns},
			{verb: "watch", resource: "secrets", namespace: ns},
			{verb: "list", resource: "secrets"},
			{verb: "get", resource: "secrets", namespace: tenant, name: certSecret},
			{verb: "list", resource: "secrets", namespace: tenant, name: certSecret},
			{verb: "create", resource: "secrets", namespace: ns},
			{verb: "delete", resource: "secrets", namespace: ns, name: certSecret},
			{verb: "patch", resource: "secrets", namespace: ns, name: certSecret},
			{verb: "update", resource: "secrets", namespace: ns, name: "another"},
			{verb: "get", resource: "configmaps", namespace: tenant},
			// Pods: read, patched (labels, deletion cost), evicted; never
			// created, updated, deleted, or exec'd into.
			{verb: "delete", resource: "pods", namespace: tenant, name: "p"},
			{verb: "deletecollection", resource: "pods", namespace: tenant},
			{verb: "update", resource: "pods", namespace: tenant, name: "p"},
			{verb: "create", resource: "pods", namespace: tenant},
			{verb: "update", resource: "pods", subresource: "status", namespace: tenant, name: "p"},
			{verb: "create", resource: "pods", subresource: "exec", namespace: tenant, name: "p"},
			{verb: "create", resource: "pods", subresource: "binding", namespace: tenant, name: "p"},
			// Nodes and namespaces: read only.
			{verb: "patch", resource: "nodes", name: "n"},
			{verb: "update", resource: "nodes", name: "n"},
			{verb: "delete", resource: "nodes", name: "n"},
			{verb: "update", resource: "namespaces", name: tenant},
			// Budgets: read; only their status written, never patched.
			{verb: "create", group: "policy.tdb.dev", resource: "topologydisruptionbudgets", namespace: tenant},
			{verb: "update", group: "policy.tdb.dev", resource: "topologydisruptionbudgets", namespace: tenant, name: "b"},
			{verb: "patch", group: "policy.tdb.dev", resource: "topologydisruptionbudgets", namespace: tenant, name: "b"},
			{verb: "delete", group: "policy.tdb.dev", resource: "topologydisruptionbudgets", namespace: tenant, name: "b"},
			{verb: "patch", group: "policy.tdb.dev", resource: "topologydisruptionbudgets", subresource: "status", namespace: tenant, name: "b"},
			// PodDisruptionBudgets: no patch, no bulk deletion.
			{verb: "patch", group: "policy", resource: "poddisruptionbudgets", namespace: tenant, name: "pdb"},
			{verb: "deletecollection", group: "policy", resource: "poddisruptionbudgets", namespace: tenant},
			{verb: "patch", group: "policy", resource: "poddisruptionbudgets", subresource: "status", namespace: tenant, name: "pdb"},
			// Workloads: read, their scale read; never written or scaled.
			{verb: "update", group: "apps", resource: "deployments", namespace: tenant, name: "d"},
			{verb: "patch", group: "apps", resource: "statefulsets", namespace: tenant, name: "s"},
			{verb: "delete", group: "apps", resource: "daemonsets", namespace: tenant, name: "d"},
			{verb: "update", group: "apps", resource: "deployments", subresource: "scale", namespace: tenant, name: "d"},
			{verb: "patch", group: "apps", resource: "statefulsets", subresource: "scale", namespace: tenant, name: "s"},
			// Leases: its own, in its namespace.
			{verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: ns, name: "another"},
			{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: ns, name: "another"},
			{verb: "delete", group: "coordination.k8s.io", resource: "leases", namespace: ns, name: leaseName},
			{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: "kube-system"},
			{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: "kube-system", name: "kube-controller-manager"},
			// Webhook configurations: its own updated, nothing deleted;
			// no mutating webhook.
			{verb: "update", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: "another"},
			{verb: "delete", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: webhookConfig},
			{verb: "patch", group: "admissionregistration.k8s.io", resource: "validatingwebhookconfigurations", name: webhookConfig},
			{verb: "update", group: "admissionregistration.k8s.io", resource: "mutatingwebhookconfigurations", name: "m"},
			// No way to more rights.
			{verb: "create", resource: "serviceaccounts", subresource: "token", namespace: ns, name: operator.Name},
			{verb: "impersonate", resource: "users", name: "admin"},
			{verb: "bind", group: "rbac.authorization.k8s.io", resource: "clusterroles", name: "cluster-admin"},
			{verb: "escalate", group: "rbac.authorization.k8s.io", resource: "clusterroles", name: "tdb-manager-role"},
			{verb: "update", group: "rbac.authorization.k8s.io", resource: "roles", namespace: ns, name: "tdb-manager-role"},
			{verb: "update", group: "apiextensions.k8s.io", resource: "customresourcedefinitions", name: "topologydisruptionbudgets.policy.tdb.dev"},
		}
		var granted []string
		for _, a := range denied {
			if allowed(operatorIdentity(), a) {
				granted = append(granted, a.String())
			}
		}
		AddReportEntry("requests checked refused", len(denied))
		// Refusals mean something only if the API server authorizes at all:
		// under AlwaysAllow every one of these would be granted.
		Expect(granted).To(BeEmpty(), "beyond the table (and docs/install.md)")
	})

	It("has, as the API server reports it, exactly the table's rights: in its namespace, and in any other", func() {
		// What every authenticated ServiceAccount may do (discovery,
		// reviews of its own access) is the cluster's, not the install's.
		baseline := serviceAccount(rbactable.Namespace, "nobody")
		for _, c := range []struct {
			namespace string
			want      map[grant]bool
		}{
			{rbactable.Namespace, grantsOfRows(rbactable.Expected)},
			{"tenant", grantsOfRows(rbactable.Expected, "ClusterRole")},
		} {
			got := rulesOf(operatorIdentity(), c.namespace)
			for g := range rulesOf(baseline, c.namespace) {
				delete(got, g)
			}
			Expect(minus(got, c.want)).To(BeEmpty(), "granted in %s, not in the table", c.namespace)
			Expect(minus(c.want, got)).To(BeEmpty(), "in the table, not granted in %s", c.namespace)
		}
	})

	It("reads the certificate Secret by name, its list and watch by a metadata.name field selector, and no other Secret", func() {
		c, err := client.New(as(operatorIdentity()), client.Options{Scheme: framework.Scheme})
		Expect(err).NotTo(HaveOccurred())
		var list corev1.SecretList
		Expect(c.List(ctx, &list, client.InNamespace(rbactable.Namespace),
			client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", certSecret)})).To(Succeed())
		err = c.List(ctx, &list, client.InNamespace(rbactable.Namespace))
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "listing every Secret of the namespace: %v", err)
		var s corev1.Secret
		err = c.Get(ctx, client.ObjectKey{Namespace: rbactable.Namespace, Name: otherSecret}, &s)
		Expect(apierrors.IsForbidden(err)).To(BeTrue(), "reading another Secret: %v", err)
	})
})
