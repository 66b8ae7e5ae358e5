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

package controllers

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/yaml"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// evictionRule is the rule config/webhook registers, for resource.
func evictionRule(resource string) admissionregistrationv1.RuleWithOperations {
	return admissionregistrationv1.RuleWithOperations{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
		Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{resource}},
	}
}

// hookWrapper builds an eviction webhook registration as config/webhook
// installs it, to be changed one field at a time.
type hookWrapper struct {
	admissionregistrationv1.ValidatingWebhook
}

func evictionHook() *hookWrapper {
	return &hookWrapper{admissionregistrationv1.ValidatingWebhook{
		Name:          WebhookName,
		Rules:         []admissionregistrationv1.RuleWithOperations{evictionRule("pods/eviction")},
		FailurePolicy: ptr.To(admissionregistrationv1.Fail),
		NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"tdb-system"},
		}}},
	}}
}

func (h *hookWrapper) rule(edit func(*admissionregistrationv1.RuleWithOperations)) *hookWrapper {
	edit(&h.Rules[0])
	return h
}

func (h *hookWrapper) operations(ops ...admissionregistrationv1.OperationType) *hookWrapper {
	return h.rule(func(r *admissionregistrationv1.RuleWithOperations) { r.Operations = ops })
}

func (h *hookWrapper) resources(res ...string) *hookWrapper {
	return h.rule(func(r *admissionregistrationv1.RuleWithOperations) { r.Resources = res })
}

func (h *hookWrapper) scope(s admissionregistrationv1.ScopeType) *hookWrapper {
	return h.rule(func(r *admissionregistrationv1.RuleWithOperations) { r.Scope = &s })
}

func (h *hookWrapper) objectSelector(sel *metav1.LabelSelector) *hookWrapper {
	h.ObjectSelector = sel
	return h
}

func (h *hookWrapper) matchCondition(name, expression string) *hookWrapper {
	h.MatchConditions = append(h.MatchConditions, admissionregistrationv1.MatchCondition{Name: name, Expression: expression})
	return h
}

func (h *hookWrapper) failurePolicy(p *admissionregistrationv1.FailurePolicyType) *hookWrapper {
	h.FailurePolicy = p
	return h
}

func (h *hookWrapper) namespaceSelector(sel *metav1.LabelSelector) *hookWrapper {
	h.NamespaceSelector = sel
	return h
}

func (h *hookWrapper) in(config string) *admissionregistrationv1.ValidatingWebhookConfiguration {
	return &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: config},
		Webhooks:   []admissionregistrationv1.ValidatingWebhook{h.ValidatingWebhook},
	}
}

func scopeOver(t *testing.T, config string, objs ...client.Object) *WebhookScope {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return &WebhookScope{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), ConfigName: config}
}

// Everything in the registration that decides whether the API server calls
// the webhook on an eviction is read: a budget whose evictions the webhook
// may skip, or let through unchecked, says so and names what does it.
func TestWebhookScopeEnforcement(t *testing.T) {
	const karpenter = `request.userInfo.username != "system:serviceaccount:karpenter:karpenter"`
	shop := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{"kubernetes.io/metadata.name": "shop"}}}
	for _, tc := range []struct {
		name       string
		configs    []*admissionregistrationv1.ValidatingWebhookConfiguration
		wantReason string
		// want are substrings of the message.
		want []string
	}{
		{name: "as installed: fully enforced",
			configs:    []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonFullyEnforced, want: []string{"decides every eviction in namespace shop", "failurePolicy Fail"}},
		{name: "rules: UPDATE only, no CREATE",
			configs:    []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().operations(admissionregistrationv1.Update).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonNotEnforced, want: []string{"no webhook for pods/eviction", "operations [UPDATE]", "not enforced"}},
		{name: "rules: resource pods only, not its eviction subresource",
			configs:    []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().resources("pods").in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonNotEnforced, want: []string{"no webhook for pods/eviction", "resources [pods]"}},
		{name: "rules: resource * names no subresource",
			configs:    []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().resources("*").in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonNotEnforced, want: []string{"resources [*]"}},
		{name: "rules: scope Cluster, evictions are namespaced",
			configs:    []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().scope(admissionregistrationv1.ClusterScope).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonNotEnforced, want: []string{"no webhook for pods/eviction", "scope Cluster"}},
		{name: "rules: apiVersions v1beta1 only, pods/eviction is in v1",
			configs: []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().rule(func(r *admissionregistrationv1.RuleWithOperations) {
				r.APIVersions = []string{"v1beta1"}
			}).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonNotEnforced, want: []string{"apiVersions [v1beta1]"}},
		{name: "rules: wildcards that match (*/*, operations *, apiGroups *, apiVersions *, scope Namespaced)",
			configs: []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().operations(admissionregistrationv1.OperationAll).resources("*/*").
				scope(admissionregistrationv1.NamespacedScope).rule(func(r *admissionregistrationv1.RuleWithOperations) {
				r.APIGroups, r.APIVersions = []string{"*"}, []string{"*"}
			}).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonFullyEnforced},
		{name: "rules: pods/* and scope *",
			configs:    []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().resources("pods/*").scope(admissionregistrationv1.AllScopes).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonFullyEnforced},
		{name: "rules: one rule of several matches",
			configs: []*admissionregistrationv1.ValidatingWebhookConfiguration{func() *admissionregistrationv1.ValidatingWebhookConfiguration {
				h := evictionHook()
				h.Rules = append([]admissionregistrationv1.RuleWithOperations{evictionRule("pods")}, evictionRule("*/eviction"))
				return h.in("tdb-vwc")
			}()},
			wantReason: policyv1alpha1.ReasonFullyEnforced},
		{name: "objectSelector the label-less Eviction fails: nothing reaches the webhook",
			configs: []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().
				objectSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonNotEnforced,
			want:       []string{"outside the eviction webhook's scope", "objectSelector app=web", "labels of the Eviction"}},
		{name: "objectSelector an Eviction's labels can fail: some callers skip the webhook",
			configs: []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().objectSelector(&metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "skip-tdb", Operator: metav1.LabelSelectorOpDoesNotExist}},
			}).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonPartiallyEnforced, want: []string{"objectSelector !skip-tdb", "labels of the Eviction"}},
		{name: "objectSelector {} selects everything",
			configs:    []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().objectSelector(&metav1.LabelSelector{}).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonFullyEnforced},
		{name: "matchConditions: an admin excludes Karpenter",
			configs:    []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().matchCondition("not-karpenter", karpenter).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonPartiallyEnforced, want: []string{"matchConditions", "not-karpenter (" + karpenter + ")", "may skip some"}},
		{name: "failurePolicy Ignore: fails open",
			configs:    []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().failurePolicy(ptr.To(admissionregistrationv1.Ignore)).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonFailsOpen, want: []string{"fails open (failurePolicy Ignore)", "namespace shop through unchecked", "failurePolicy to Fail"}},
		{name: "failurePolicy unset: the API server's default Fail",
			configs:    []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().failurePolicy(nil).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonFullyEnforced},
		{name: "precedence: matchConditions before failing open, the message names both",
			configs: []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().matchCondition("not-karpenter", karpenter).
				failurePolicy(ptr.To(admissionregistrationv1.Ignore)).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonPartiallyEnforced, want: []string{"not-karpenter", "fails open"}},
		{name: "precedence: a namespaceSelector that excludes the namespace before the rest",
			configs: []*admissionregistrationv1.ValidatingWebhookConfiguration{evictionHook().matchCondition("not-karpenter", karpenter).
				failurePolicy(ptr.To(admissionregistrationv1.Ignore)).
				namespaceSelector(&metav1.LabelSelector{MatchLabels: map[string]string{EnforceLabel: "true"}}).in("tdb-vwc")},
			wantReason: policyv1alpha1.ReasonNotEnforced, want: []string{"namespaceSelector policy.tdb.dev/enforce=true", "kubectl label namespace shop"}},
		{name: "registrations under other names (OLM): the one that enforces most decides",
			configs: []*admissionregistrationv1.ValidatingWebhookConfiguration{
				evictionHook().failurePolicy(ptr.To(admissionregistrationv1.Ignore)).in("olm-a"),
				evictionHook().in("olm-b"),
			},
			wantReason: policyv1alpha1.ReasonFullyEnforced, want: []string{"olm-b"}},
		{name: "registrations under other names (OLM), none reaching: each one's cause",
			configs: []*admissionregistrationv1.ValidatingWebhookConfiguration{
				evictionHook().objectSelector(&metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}).in("olm-a"),
				evictionHook().scope(admissionregistrationv1.ClusterScope).in("olm-b"),
			},
			wantReason: policyv1alpha1.ReasonNotEnforced, want: []string{"objectSelector app=web", "scope Cluster", "olm-a, olm-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := []client.Object{shop}
			for _, c := range tc.configs {
				objs = append(objs, c)
			}
			e, err := scopeOver(t, "tdb-vwc", objs...).Enforcement(context.Background(), "shop")
			if err != nil {
				t.Fatal(err)
			}
			if e.Reason != tc.wantReason {
				t.Errorf("reason = %s, want %s (message %q)", e.Reason, tc.wantReason, e.Message)
			}
			for _, w := range tc.want {
				if !strings.Contains(e.Message, w) {
					t.Errorf("message = %q, want it to contain %q", e.Message, w)
				}
			}
		})
	}
}

// The webhook configuration as config/webhook installs it (manifests.yaml
// with the namespaceSelector patch) decides every eviction but the
// operator's own namespace's, and fails closed.
func TestWebhookScopeDefaultManifests(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.UnmarshalStrict(raw, &vwc); err != nil {
		t.Fatalf("parsing manifests.yaml: %v", err)
	}
	raw, err = os.ReadFile(filepath.Join("..", "config", "webhook", "namespace_selector_patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var patch []struct {
		Path  string               `json:"path"`
		Value metav1.LabelSelector `json:"value"`
	}
	if err := yaml.Unmarshal(raw, &patch); err != nil {
		t.Fatalf("parsing namespace_selector_patch.yaml: %v", err)
	}
	if len(patch) != 1 || patch[0].Path != "/webhooks/0/namespaceSelector" || len(vwc.Webhooks) != 1 {
		t.Fatalf("want one webhook and one namespaceSelector patch of it, got %d webhooks and %+v", len(vwc.Webhooks), patch)
	}
	vwc.Webhooks[0].NamespaceSelector = &patch[0].Value
	vwc.Name = "tdb-validating-webhook-configuration"
	ns := func(name string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/metadata.name": name}}}
	}
	s := scopeOver(t, vwc.Name, &vwc, ns("shop"), ns("tdb-system"))
	for _, tc := range []struct{ ns, reason, message string }{
		{"shop", policyv1alpha1.ReasonFullyEnforced, "decides every eviction in namespace shop, and refuses them while no operator replica answers (failurePolicy Fail)"},
		{"tdb-system", policyv1alpha1.ReasonNotEnforced, "namespaceSelector kubernetes.io/metadata.name notin (tdb-system)"},
	} {
		e, err := s.Enforcement(context.Background(), tc.ns)
		if err != nil {
			t.Fatal(err)
		}
		if e.Reason != tc.reason || !strings.Contains(e.Message, tc.message) {
			t.Errorf("namespace %s: %s %q, want %s containing %q", tc.ns, e.Reason, e.Message, tc.reason, tc.message)
		}
	}
}
