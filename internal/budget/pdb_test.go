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

package budget

import (
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CheckPodDisruptionBudgets answers as core's eviction handler would.
func TestCheckPodDisruptionBudgets(t *testing.T) {
	pdb := func(name string, allowed int32, mod ...func(*policyv1.PodDisruptionBudget)) policyv1.PodDisruptionBudget {
		p := policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Generation: 1},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
			Status:     policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: allowed, CurrentHealthy: 3, DesiredHealthy: 3 - allowed},
		}
		for _, m := range mod {
			m(&p)
		}
		return p
	}
	ready := pod("a-0").OnNode("n1").Ready().Obj()
	notReady := pod("a-0").OnNode("n1").NotReady().Obj()
	alwaysAllow := func(p *policyv1.PodDisruptionBudget) {
		p.Spec.UnhealthyPodEvictionPolicy = ptrTo(policyv1.AlwaysAllow)
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		pdbs     []policyv1.PodDisruptionBudget
		wantCode int32
	}{
		{"no PDB", ready, nil, 0},
		{"a PDB allowing one", ready, []policyv1.PodDisruptionBudget{pdb("p", 1)}, 0},
		{"a PDB allowing none", ready, []policyv1.PodDisruptionBudget{pdb("p", 0)}, http.StatusTooManyRequests},
		{"a PDB of another app", ready, []policyv1.PodDisruptionBudget{pdb("p", 0, func(p *policyv1.PodDisruptionBudget) {
			p.Spec.Selector.MatchLabels["app"] = "db"
		})}, 0},
		{"a PDB of another namespace", ready, []policyv1.PodDisruptionBudget{pdb("p", 0, func(p *policyv1.PodDisruptionBudget) { p.Namespace = "other" })}, 0},
		{"a PDB whose selector does not parse selects nothing", ready, []policyv1.PodDisruptionBudget{pdb("p", 0, func(p *policyv1.PodDisruptionBudget) {
			p.Spec.Selector.MatchLabels["bad key!"] = "x"
		})}, 0},
		{"a stale PDB", ready, []policyv1.PodDisruptionBudget{pdb("p", 1, func(p *policyv1.PodDisruptionBudget) { p.Generation = 2 })}, http.StatusTooManyRequests},
		{"two PDBs", ready, []policyv1.PodDisruptionBudget{pdb("p", 1), pdb("q", 1)}, http.StatusInternalServerError},
		{"not Ready under IfHealthyBudget while healthy: passes", notReady, []policyv1.PodDisruptionBudget{pdb("p", 0)}, 0},
		{"not Ready under IfHealthyBudget while short: refused", notReady, []policyv1.PodDisruptionBudget{pdb("p", 0, func(p *policyv1.PodDisruptionBudget) {
			p.Status.CurrentHealthy = 2
		})}, http.StatusTooManyRequests},
		{"not Ready under AlwaysAllow: passes", notReady, []policyv1.PodDisruptionBudget{pdb("p", 0, alwaysAllow, func(p *policyv1.PodDisruptionBudget) {
			p.Status.CurrentHealthy = 1
		})}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := CheckPodDisruptionBudgets(tc.pod, tc.pdbs)
			if v.Refused != (tc.wantCode != 0) || v.Code != tc.wantCode {
				t.Errorf("verdict = %+v, want code %d", v, tc.wantCode)
			}
		})
	}
}
