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
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// benchBudgets are 100 budgets of 3 domains each, one blocked, as the
// status controller exports them in a drain of a large cluster.
func benchBudgets() []*policyv1alpha1.TopologyDisruptionBudget {
	blocked := metav1.NewTime(time.Unix(1700000000, 0))
	var out []*policyv1alpha1.TopologyDisruptionBudget
	for i := range 100 {
		out = append(out, &policyv1alpha1.TopologyDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns-%d", i%10), Name: fmt.Sprintf("tdb-%d", i)},
			Status: policyv1alpha1.TopologyDisruptionBudgetStatus{
				Domains: []policyv1alpha1.DomainStatus{
					{Name: "zone-a", ExpectedPods: 34, CurrentHealthy: 33, DesiredHealthy: 33, BlockedSince: &blocked},
					{Name: "zone-b", ExpectedPods: 33, CurrentHealthy: 33, DesiredHealthy: 32, DisruptionsAllowed: 1},
					{Name: "zone-c", ExpectedPods: 33, CurrentHealthy: 33, DesiredHealthy: 32, DisruptionsAllowed: 1},
				},
				Conditions: []metav1.Condition{{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionTrue, Reason: policyv1alpha1.ReasonSufficientPods}},
			},
		})
	}
	return out
}

// BenchmarkExportAllowances exports every budget's series once per
// operation, as their status passes do, while every budget's series are
// exported.
func BenchmarkExportAllowances(b *testing.B) {
	for _, tc := range []struct {
		name   string
		change func(tdb *policyv1alpha1.TopologyDisruptionBudget, i int)
	}{{
		name:   "unchanged",
		change: func(*policyv1alpha1.TopologyDisruptionBudget, int) {},
	}, {
		name: "one allowance changed",
		change: func(tdb *policyv1alpha1.TopologyDisruptionBudget, i int) {
			tdb.Status.Domains[1].DisruptionsAllowed = int32(i % 2)
		},
	}} {
		b.Run(tc.name, func(b *testing.B) {
			resetBudgetSeries()
			b.Cleanup(resetBudgetSeries)
			budgets := benchBudgets()
			for _, tdb := range budgets {
				exportAllowances(tdb)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				for _, tdb := range budgets {
					tc.change(tdb, i)
					exportAllowances(tdb)
				}
			}
		})
	}
}
