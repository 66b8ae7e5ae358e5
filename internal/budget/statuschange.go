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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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

// Relaxes says whether next only relaxes cur: every eviction cur would
// allow, next allows too, and an eviction granted on cur leaves a status at
// least as strict as one granted on next. Each domain of next has at least
// cur's allowance and healthy pods, at most its desired healthy pods (and
// some if cur has some: a not-Ready pod goes uncharged only where some are
// desired), and at most cur's unavailable pods (expected less healthy: a
// domain a grant leaves disrupted on next is disrupted on cur, for
// maxDisruptedDomains); the budget allows at least as many and
// has at most as many disrupted domains; next keeps no record cur has not;
// the DisruptionAllowed condition of both is a computed one (pods Ready or
// not, not a stale, failed, blocked or not-enforced status); nothing else
// differs but blockedSince marks. Such a change (a replacement turning
// Ready: its domain reopened) may wait for a write that carries it.
func Relaxes(cur, next *policyv1alpha1.TopologyDisruptionBudgetStatus) bool {
	if cur.ObservedGeneration != next.ObservedGeneration || len(cur.Domains) != len(next.Domains) ||
		next.DisruptionsAllowed < cur.DisruptionsAllowed || next.DisruptedDomains > cur.DisruptedDomains ||
		!computedCondition(cur) || !computedCondition(next) {
		return false
	}
	for i := range next.Domains {
		c, n := &cur.Domains[i], &next.Domains[i]
		if c.Name != n.Name || n.DisruptionsAllowed < c.DisruptionsAllowed || n.CurrentHealthy < c.CurrentHealthy ||
			n.DesiredHealthy > c.DesiredHealthy || (c.DesiredHealthy > 0 && n.DesiredHealthy == 0) ||
			n.ExpectedPods-n.CurrentHealthy > c.ExpectedPods-c.CurrentHealthy {
			return false
		}
	}
	held := make(map[RecordKey]bool, len(cur.DisruptedPods))
	for _, r := range cur.DisruptedPods {
		held[KeyOf(r)] = true
	}
	for _, r := range next.DisruptedPods {
		if !held[KeyOf(r)] {
			return false
		}
	}
	// Nothing else may differ: the numbers, records, blockedSince marks
	// and the condition taken from cur, next must be cur.
	same := next.DeepCopy()
	same.ExpectedPods, same.CurrentHealthy, same.DisruptionsAllowed = cur.ExpectedPods, cur.CurrentHealthy, cur.DisruptionsAllowed
	same.DisruptedDomains, same.DomainCount, same.DisruptedPods = cur.DisruptedDomains, cur.DomainCount, cur.DisruptedPods
	for i := range same.Domains {
		c := &cur.Domains[i]
		d := &same.Domains[i]
		d.ExpectedPods, d.CurrentHealthy, d.DesiredHealthy, d.DisruptionsAllowed, d.BlockedSince =
			c.ExpectedPods, c.CurrentHealthy, c.DesiredHealthy, c.DisruptionsAllowed, c.BlockedSince
	}
	if i := conditionIndex(same.Conditions); i >= 0 {
		if j := conditionIndex(cur.Conditions); j >= 0 {
			same.Conditions[i] = cur.Conditions[j]
		}
	}
	return equality.Semantic.DeepEqual(cur, same)
}

// QuietlyRelaxes says whether next relaxes cur (Relaxes) by lowering
// expected or desired healthy pods (ChangeExpected: a replacement already in
// its domain when its predecessor finished terminating), with no healthy
// count and no allowance changed, the budget's or a domain's (records may
// go, a condition's message move). Decided on cur, an eviction gets what it
// gets on next, but that of a not-Ready pod refused for want of desired
// healthy pods under IfHealthyBudget; and the healthy counts that status
// readers wait on are not behind. Such a write may wait for the next change
// to carry it.
func QuietlyRelaxes(cur, next *policyv1alpha1.TopologyDisruptionBudgetStatus) bool {
	return ChangeOf(cur, next) == ChangeExpected && Relaxes(cur, next)
}

// computedCondition says whether st's DisruptionAllowed condition is one a
// computation over Ready pods gives: allowed, or refused for want of
// allowance.
func computedCondition(st *policyv1alpha1.TopologyDisruptionBudgetStatus) bool {
	c := apimeta.FindStatusCondition(st.Conditions, policyv1alpha1.ConditionDisruptionAllowed)
	if c == nil {
		return false
	}
	switch c.Reason {
	case policyv1alpha1.ReasonSufficientPods, policyv1alpha1.ReasonInsufficientPods:
		return true
	}
	return false
}

func conditionIndex(cs []metav1.Condition) int {
	for i := range cs {
		if cs[i].Type == policyv1alpha1.ConditionDisruptionAllowed {
			return i
		}
	}
	return -1
}
