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

// closedStatus is zone-a closed by web-0's eviction (2 of 3 healthy, 2
// desired: nothing to spare), zone-b whole; maxDisruptedDomains-style
// numbers at the top.
func closedStatus() *policyv1alpha1.TopologyDisruptionBudgetStatus {
	since := metav1.NewTime(metav1.Now().Rfc3339Copy().Time)
	return &policyv1alpha1.TopologyDisruptionBudgetStatus{
		ObservedGeneration: 3, ExpectedPods: 6, CurrentHealthy: 5, DisruptionsAllowed: 1, DomainCount: 2, DisruptedDomains: 1,
		Domains: []policyv1alpha1.DomainStatus{
			{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 2, DesiredHealthy: 2, DisruptionsAllowed: 0, BlockedSince: &since},
			{Name: "zone-b", ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1},
		},
		DisruptedPods: []policyv1alpha1.DisruptedPod{{Name: "web-0", UID: "u0", Domain: "zone-a"}},
		Conditions: []metav1.Condition{{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionTrue,
			Reason: policyv1alpha1.ReasonSufficientPods, Message: "1 allowed", ObservedGeneration: 3}},
	}
}

// reopened is closedStatus after web-0's replacement turned Ready.
func reopened(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
	st.Domains[0].CurrentHealthy, st.Domains[0].DisruptionsAllowed, st.Domains[0].BlockedSince = 3, 1, nil
	st.CurrentHealthy, st.DisruptionsAllowed, st.DisruptedDomains, st.DisruptedPods = 6, 2, 0, nil
	st.Conditions[0].Message = "2 allowed"
}

// Relaxes holds back only what allows no eviction that the written status
// refuses and leaves no grant on it looser than on the new one.
func TestRelaxes(t *testing.T) {
	cases := []struct {
		name   string
		change func(st *policyv1alpha1.TopologyDisruptionBudgetStatus)
		want   bool
	}{
		{"nothing", func(*policyv1alpha1.TopologyDisruptionBudgetStatus) {}, true},
		{"a replacement Ready: its domain reopened, its record dropped", reopened, true},
		{"a healthy pod more where nothing else moves", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains[0].CurrentHealthy, st.CurrentHealthy = 3, 6
		}, true},
		{"fewer desired (a scale-down)", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains[1].DesiredHealthy, st.Domains[1].ExpectedPods = 1, 2
		}, true},
		{"reopened, and a healthy pod fewer elsewhere", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			reopened(st)
			st.Domains[1].CurrentHealthy = 2
		}, false},
		{"a healthy pod fewer in a disrupted domain, nothing else", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains[0].CurrentHealthy = 1
		}, false},
		{"a domain's allowance lower", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.Domains[1].DisruptionsAllowed = 0 }, false},
		{"the budget's allowance lower", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.DisruptionsAllowed = 0 }, false},
		{"more desired healthy", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.Domains[1].DesiredHealthy = 3 }, false},
		{"a domain newly disrupted (an expected pod more, not Ready)", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains[1].ExpectedPods, st.ExpectedPods = 4, 7
		}, false},
		{"more disrupted domains", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.DisruptedDomains = 2 }, false},
		{"a record added", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.DisruptedPods = append(st.DisruptedPods, policyv1alpha1.DisruptedPod{Name: "web-1", UID: "u1", Domain: "zone-a"})
		}, false},
		{"a record replaced by another pod's", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.DisruptedPods[0].UID = "u0-new" }, false},
		{"a domain more", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains = append(st.Domains, policyv1alpha1.DomainStatus{Name: "zone-c", ExpectedPods: 1, CurrentHealthy: 1, DisruptionsAllowed: 1})
		}, false},
		{"a domain renamed", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.Domains[1].Name = "zone-c" }, false},
		{"another generation observed", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) { st.ObservedGeneration = 4 }, false},
		{"a failed computation", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			reopened(st)
			st.Conditions[0].Status, st.Conditions[0].Reason = metav1.ConditionFalse, policyv1alpha1.ReasonSyncFailed
		}, false},
		{"not enforced", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Conditions[0].Reason = policyv1alpha1.ReasonNotEnforced
		}, false},
		{"a rollout's fields", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Rollout = &policyv1alpha1.RolloutStatus{}
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cur := closedStatus()
			next := closedStatus()
			tc.change(next)
			if got := Relaxes(cur, next); got != tc.want {
				t.Errorf("Relaxes = %v, want %v", got, tc.want)
			}
		})
	}
	// A written status that is not a computed one is never held back.
	cur := closedStatus()
	cur.Conditions[0].Reason = policyv1alpha1.ReasonDomainError
	next := closedStatus()
	reopened(next)
	if Relaxes(cur, next) {
		t.Errorf("a reopen after a DomainError status relaxes; want it written at once")
	}
}

// terminatingStatus is closedStatus where zone-a's evicted pod still
// terminates beside its replacement, not Ready: zone-a expects both.
func terminatingStatus() *policyv1alpha1.TopologyDisruptionBudgetStatus {
	st := closedStatus()
	st.Domains[0].CurrentHealthy, st.CurrentHealthy = 1, 4
	return st
}

// predecessorGone is terminatingStatus once the terminating pod is gone:
// zone-a expects and desires one pod fewer, still short of one.
func predecessorGone(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
	st.Domains[0].ExpectedPods, st.Domains[0].DesiredHealthy, st.ExpectedPods = 2, 1, 5
}

// QuietlyRelaxes holds back only a fall of expected or desired pods that
// moves no healthy count and no allowance.
func TestQuietlyRelaxes(t *testing.T) {
	cases := []struct {
		name   string
		change func(st *policyv1alpha1.TopologyDisruptionBudgetStatus)
		want   bool
	}{
		{"a terminating pod beside its replacement gone: an expected and a desired pod fewer", predecessorGone, true},
		{"the same, and its record dropped", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			predecessorGone(st)
			st.DisruptedPods = nil
		}, true},
		{"nothing", func(*policyv1alpha1.TopologyDisruptionBudgetStatus) {}, false},
		{"a record dropped, nothing else (dropped on its own clock)", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.DisruptedPods = nil
		}, false},
		{"the predecessor gone and the replacement Ready: an allowance more", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			predecessorGone(st)
			st.Domains[0].CurrentHealthy, st.Domains[0].DisruptionsAllowed, st.CurrentHealthy, st.DisruptionsAllowed = 2, 1, 5, 2
		}, false},
		{"a healthy pod more, no allowance more", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains[0].CurrentHealthy, st.CurrentHealthy = 2, 5
		}, false},
		{"an expected pod more (a replacement bound beside a terminating pod)", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains[0].ExpectedPods, st.Domains[0].DesiredHealthy, st.ExpectedPods = 4, 3, 7
		}, false},
		{"the predecessor gone where a pod of zone-b turned not Ready", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			predecessorGone(st)
			st.Domains[1].CurrentHealthy, st.Domains[1].DisruptionsAllowed, st.CurrentHealthy, st.DisruptionsAllowed = 2, 0, 3, 0
		}, false},
		{"desired healthy falling to 0", func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
			st.Domains[0].DesiredHealthy = 0
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cur := terminatingStatus()
			next := terminatingStatus()
			tc.change(next)
			if got := QuietlyRelaxes(cur, next); got != tc.want {
				t.Errorf("QuietlyRelaxes = %v, want %v", got, tc.want)
			}
		})
	}
}
