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
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// StatusChange names what a status write of the status controller changes
// that matters most, so that its writes can be counted by why they were
// needed (tdb_status_changes_written_total).
type StatusChange string

// What a write changes, from the most to the least consequential; a write is
// named after the first that applies.
const (
	// ChangeAllowance: what an eviction would get now — an allowance (the
	// budget's or a domain's), the set of domains, the DisruptionAllowed
	// condition's status or reason, or the generation observed.
	ChangeAllowance StatusChange = "allowance"
	// ChangeHealthy: a domain's healthy pods, its allowance unchanged.
	ChangeHealthy StatusChange = "healthy"
	// ChangeExpected: a domain's expected or desired healthy pods, its
	// healthy pods and allowance unchanged.
	ChangeExpected StatusChange = "expected"
	// ChangeRecords: only eviction records (dropped).
	ChangeRecords StatusChange = "records"
	// ChangeOther: anything else (a blockedSince cleared, a condition's
	// message, the rollout's fields).
	ChangeOther StatusChange = "other"
)

// ChangeOf says what next changes of cur (see StatusChange).
func ChangeOf(cur, next *policyv1alpha1.TopologyDisruptionBudgetStatus) StatusChange {
	if cur.DisruptionsAllowed != next.DisruptionsAllowed || cur.ObservedGeneration != next.ObservedGeneration ||
		len(cur.Domains) != len(next.Domains) || conditionMoved(cur, next) {
		return ChangeAllowance
	}
	healthy, expected := cur.CurrentHealthy != next.CurrentHealthy, cur.ExpectedPods != next.ExpectedPods
	for i := range next.Domains {
		c, n := &cur.Domains[i], &next.Domains[i]
		if c.Name != n.Name || c.DisruptionsAllowed != n.DisruptionsAllowed {
			return ChangeAllowance
		}
		healthy = healthy || c.CurrentHealthy != n.CurrentHealthy
		expected = expected || c.ExpectedPods != n.ExpectedPods || c.DesiredHealthy != n.DesiredHealthy
	}
	switch {
	case healthy:
		return ChangeHealthy
	case expected:
		return ChangeExpected
	case !equality.Semantic.DeepEqual(cur.DisruptedPods, next.DisruptedPods):
		return ChangeRecords
	}
	return ChangeOther
}

// conditionMoved says whether the DisruptionAllowed condition's status or
// reason differs.
func conditionMoved(cur, next *policyv1alpha1.TopologyDisruptionBudgetStatus) bool {
	c := apimeta.FindStatusCondition(cur.Conditions, policyv1alpha1.ConditionDisruptionAllowed)
	n := apimeta.FindStatusCondition(next.Conditions, policyv1alpha1.ConditionDisruptionAllowed)
	if c == nil || n == nil {
		return c != n
	}
	return c.Status != n.Status || c.Reason != n.Reason
}
