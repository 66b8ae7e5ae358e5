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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

func TestChangeOf(t *testing.T) {
	cases := []struct {
		name   string
		change func(st *policyv1alpha1.TopologyDisruptionBudgetStatus)
		want   StatusChange
	}{
		{"nothing", func(*policyv1alpha1.TopologyDisruptionBudgetStatus) {}, ChangeOther},
		{"a domain's allowance", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains[1].DisruptionsAllowed = 0
		}, ChangeAllowance},
		{"the budget's allowance", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.DisruptionsAllowed = 1 }, ChangeAllowance},
		{"a domain more", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains = append(st.Domains, policyv1alpha1.DomainStatus{Name: "zone-c"})
		}, ChangeAllowance},
		{"a domain renamed", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.Domains[1].Name = "zone-c" }, ChangeAllowance},
		{"the condition's reason", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Conditions[0].Reason = policyv1alpha1.ReasonInsufficientPods
		}, ChangeAllowance},
		{"the generation observed", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.ObservedGeneration = 4 }, ChangeAllowance},
		{"a domain's healthy pods, and its expected", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains[0].CurrentHealthy, st.Domains[0].ExpectedPods, st.CurrentHealthy = 2, 4, 5
		}, ChangeHealthy},
		{"a domain's expected pods", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains[0].ExpectedPods, st.ExpectedPods = 4, 7
		}, ChangeExpected},
		{"a domain's desired healthy pods", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.Domains[1].DesiredHealthy = 1 }, ChangeExpected},
		{"a record dropped", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.DisruptedPods = nil }, ChangeRecords},
		{"the condition's message", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.Conditions[0].Message = "now" }, ChangeOther},
		{"a blockedSince cleared", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains[0].BlockedSince = nil
		}, ChangeOther},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cur := statusOwnedByAll()
			since := metav1.Now()
			cur.Domains[0].BlockedSince = &since
			cur.Domains[0].ExpectedPods, cur.Domains[0].CurrentHealthy, cur.Domains[0].DesiredHealthy = 3, 3, 2
			cur.Domains[1].ExpectedPods, cur.Domains[1].CurrentHealthy, cur.Domains[1].DesiredHealthy = 3, 3, 2
			next := cur.DeepCopy()
			tc.change(next)
			if got := ChangeOf(&cur, next); got != tc.want {
				t.Errorf("ChangeOf = %q, want %q", got, tc.want)
			}
		})
	}
}
