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
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

func TestWebhookScopeNotEnforced(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	ns := func(name string, labels map[string]string) *corev1.Namespace {
		return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	}
	notOperator := metav1.LabelSelectorRequirement{Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"tdb-system"}}
	vwc := func(sel *metav1.LabelSelector, resource string) *admissionregistrationv1.ValidatingWebhookConfiguration {
		return &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "tdb-vwc"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: "eviction.policy.tdb.dev", NamespaceSelector: sel,
				Rules: []admissionregistrationv1.RuleWithOperations{evictionRule(resource)},
			}},
		}
	}
	renamed := func(v *admissionregistrationv1.ValidatingWebhookConfiguration, name string) *admissionregistrationv1.ValidatingWebhookConfiguration {
		v.Name = name
		return v
	}
	renamedHook := func(v *admissionregistrationv1.ValidatingWebhookConfiguration, name string) *admissionregistrationv1.ValidatingWebhookConfiguration {
		v.Webhooks[0].Name = name
		return v
	}
	all := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{notOperator}}
	labelled := &metav1.LabelSelector{MatchLabels: map[string]string{EnforceLabel: "true"}, MatchExpressions: []metav1.LabelSelectorRequirement{notOperator}}
	for _, tc := range []struct {
		name    string
		config  string
		objs    []client.Object
		ns      string
		want    string // substring of the message; "" for enforced
		notWant bool
	}{
		{name: "no configuration name: no check", config: "", ns: "shop"},
		{name: "every namespace but the operator's", config: "tdb-vwc", objs: []client.Object{vwc(all, "pods/eviction"), ns("shop", nil)}, ns: "shop"},
		{name: "labelled scope, labelled namespace", config: "tdb-vwc",
			objs: []client.Object{vwc(labelled, "pods/eviction"), ns("shop", map[string]string{EnforceLabel: "true"})}, ns: "shop"},
		{name: "labelled scope, unlabelled namespace", config: "tdb-vwc",
			objs: []client.Object{vwc(labelled, "pods/eviction"), ns("shop", nil)}, ns: "shop",
			want: "kubectl label namespace shop policy.tdb.dev/enforce=true"},
		{name: "labelled scope, namespace labelled false", config: "tdb-vwc",
			objs: []client.Object{vwc(labelled, "pods/eviction"), ns("shop", map[string]string{EnforceLabel: "false"})}, ns: "shop",
			want: "outside the eviction webhook's scope"},
		{name: "configuration missing", config: "tdb-vwc", objs: []client.Object{ns("shop", nil)}, ns: "shop",
			want: "not registered"},
		{name: "no webhook for evictions", config: "tdb-vwc", objs: []client.Object{vwc(all, "pods"), ns("shop", nil)}, ns: "shop",
			want: "no webhook for pods/eviction"},
		{name: "configuration under another name (OLM names it): found by its webhook's name", config: "tdb-vwc",
			objs: []client.Object{renamed(vwc(labelled, "pods/eviction"), "olm-generated"), ns("shop", nil)}, ns: "shop",
			want: "olm-generated"},
		{name: "another configuration's eviction webhook is not ours", config: "tdb-vwc",
			objs: []client.Object{renamedHook(renamed(vwc(all, "pods/eviction"), "other"), "other.example.com"), ns("shop", nil)}, ns: "shop",
			want: "not registered"},
		{name: "no namespaceSelector: every namespace", config: "tdb-vwc", objs: []client.Object{vwc(nil, "pods/eviction"), ns("shop", nil)}, ns: "shop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &WebhookScope{Reader: fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.objs...).Build(), ConfigName: tc.config}
			e, err := s.Enforcement(context.Background(), tc.ns)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if e.Reason == policyv1alpha1.ReasonNotEnforced {
				got = e.Message
			}
			if tc.want == "" && got != "" {
				t.Errorf("NotEnforced = %q, want enforced", got)
			}
			if tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("NotEnforced = %q, want it to contain %q", got, tc.want)
			}
			if wantReason := policyv1alpha1.ReasonFullyEnforced; tc.want == "" && tc.config != "" && e.Reason != wantReason {
				t.Errorf("Enforcement = %+v, want %s", e, wantReason)
			}
		})
	}
}
