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

package evictionwebhook

import (
	"os"
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// The webhook configuration users install must match what the handler
// serves and the safety choices the docs promise.
func TestWebhookConfiguration(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "config", "webhook", "manifests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.UnmarshalStrict(raw, &cfg); err != nil {
		t.Fatalf("parsing manifests.yaml: %v", err)
	}
	if len(cfg.Webhooks) != 1 {
		t.Fatalf("want exactly one webhook, got %d", len(cfg.Webhooks))
	}
	w := cfg.Webhooks[0]
	check := func(what string, ok bool) {
		t.Helper()
		if !ok {
			t.Errorf("webhook %s: %s", w.Name, what)
		}
	}
	check("failurePolicy must be Fail", w.FailurePolicy != nil && *w.FailurePolicy == admissionregistrationv1.Fail)
	check("sideEffects must be NoneOnDryRun", w.SideEffects != nil && *w.SideEffects == admissionregistrationv1.SideEffectClassNoneOnDryRun)
	check("timeoutSeconds must leave room for the handler's deadline",
		w.TimeoutSeconds != nil && float64(*w.TimeoutSeconds) > defaultDeadline.Seconds() && *w.TimeoutSeconds <= 30)
	check("admissionReviewVersions must be [v1]", len(w.AdmissionReviewVersions) == 1 && w.AdmissionReviewVersions[0] == "v1")
	check("path must be the served path "+Path, w.ClientConfig.Service != nil && w.ClientConfig.Service.Path != nil && *w.ClientConfig.Service.Path == Path)
	check("must match CREATE of pods/eviction only", len(w.Rules) == 1 &&
		len(w.Rules[0].Operations) == 1 && w.Rules[0].Operations[0] == admissionregistrationv1.Create &&
		len(w.Rules[0].Resources) == 1 && w.Rules[0].Resources[0] == "pods/eviction" &&
		len(w.Rules[0].APIGroups) == 1 && w.Rules[0].APIGroups[0] == "")
	check("matchPolicy must be Equivalent (policy/v1beta1 evictions too)", w.MatchPolicy != nil && *w.MatchPolicy == admissionregistrationv1.Equivalent)

	patch, err := os.ReadFile(filepath.Join("..", "..", "config", "webhook", "namespace_selector_patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var ops []struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value struct {
			MatchExpressions []struct {
				Key      string   `json:"key"`
				Operator string   `json:"operator"`
				Values   []string `json:"values"`
			} `json:"matchExpressions"`
		} `json:"value"`
	}
	if err := yaml.UnmarshalStrict(patch, &ops); err != nil {
		t.Fatalf("parsing the namespaceSelector patch: %v", err)
	}
	if len(ops) != 1 || ops[0].Path != "/webhooks/0/namespaceSelector" || len(ops[0].Value.MatchExpressions) != 1 {
		t.Fatalf("the patch must add one namespaceSelector expression to the webhook, got %+v", ops)
	}
	e := ops[0].Value.MatchExpressions[0]
	if e.Key != "kubernetes.io/metadata.name" || e.Operator != "NotIn" || len(e.Values) != 1 || e.Values[0] != "tdb-system" {
		t.Errorf("the operator's namespace tdb-system must be exempt, got %+v", e)
	}
}
