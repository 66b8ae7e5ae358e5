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

package monitoring

import (
	"path/filepath"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/tdb-operator/tdb-operator/controllers"
)

// The annotation config/webhook sets, which the operator exports as the
// installed failurePolicy, is the policy config/webhook installs: otherwise
// TDBWebhookFailurePolicyChanged would fire on a fresh install.
func TestInstalledFailurePolicyAnnotationMatchesThePolicy(t *testing.T) {
	dir := filepath.Join(root, "config", "webhook")
	var generated, patch admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.Unmarshal(read(t, filepath.Join(dir, "manifests.yaml")), &generated); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(read(t, filepath.Join(dir, "installed_failure_policy_patch.yaml")), &patch); err != nil {
		t.Fatal(err)
	}
	if patch.Name != generated.Name {
		t.Errorf("the patch names %q, the configuration is %q", patch.Name, generated.Name)
	}
	if len(generated.Webhooks) != 1 || generated.Webhooks[0].FailurePolicy == nil {
		t.Fatalf("config/webhook/manifests.yaml: want one webhook with a failurePolicy, got %+v", generated.Webhooks)
	}
	want := string(*generated.Webhooks[0].FailurePolicy)
	if got := patch.Annotations[controllers.InstalledFailurePolicyAnnotation]; got != want {
		t.Errorf("annotation %s is %q, the installed failurePolicy is %q", controllers.InstalledFailurePolicyAnnotation, got, want)
	}
}
