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
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// evictionBudget is ns/web, zoned, maxUnavailable 1, whose status says that
// zone-a has no pod to spare and zone-b and zone-c have one each.
func evictionBudget() *builders.BudgetWrapper {
	return tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).
		StatusDomains(row("zone-a", 8, 7, 7, 0), row("zone-b", 8, 8, 7, 1), row("zone-c", 8, 8, 7, 1)).
		Conditions(disruptionAllowed(metav1.ConditionTrue, policyv1alpha1.ReasonSufficientPods, "some domain can lose a pod"))
}

// chargedStatus is the status of evictionBudget after one eviction of
// pod b-0 in zone-b at t0.
func chargedStatus() *policyv1alpha1.TopologyDisruptionBudgetStatus {
	st := evictionBudget().StatusDomains(row("zone-a", 8, 7, 7, 0), row("zone-b", 8, 7, 7, 0), row("zone-c", 8, 8, 7, 1)).Obj().Status
	st.DisruptedPods = []policyv1alpha1.DisruptedPod{
		{Name: "b-0", UID: "uid-b-0", Domain: "zone-b", ControllerUID: "rs", Time: metav1.NewTime(t0)},
	}
	// Still True, so the transition time stays; the message is rewritten.
	st.Conditions[0].Message = "1 disruption(s) allowed in zone-c"
	return &st
}

// withRecords is b's status with records set and nothing else changed.
func withRecords(b *builders.BudgetWrapper, recs ...policyv1alpha1.DisruptedPod) *policyv1alpha1.TopologyDisruptionBudgetStatus {
	st := b.Obj().Status
	st.DisruptedPods = recs
	return &st
}

// TestDecideEviction: one eviction against one budget's status.
func TestDecideEviction(t *testing.T) {
	const rs = types.UID("rs")
	podA := func() *builders.PodWrapper { return pod("a-0").OnNode("n1").Ready().ControlledBy(replicaSet(rs)) }
	podB := func() *builders.PodWrapper { return pod("b-0").OnNode("n3").Ready().ControlledBy(replicaSet(rs)) }
	records2000 := make([]policyv1alpha1.DisruptedPod, MaxDisruptedPods)
	for i := range records2000 {
		records2000[i] = record(fmt.Sprintf("old-%04d", i), "zone-c", rs, at(-time.Minute))
	}
	tests := []struct {
		name   string
		budget *builders.BudgetWrapper
		pod    *builders.PodWrapper
		domain string
		want   Decision
	}{
		// Pods that are not running pass, as in core.
		{name: "pending pod passes", budget: evictionBudget(), pod: pod("a-0").Pending().ControlledBy(replicaSet(rs)),
			want: Decision{Allowed: true, Reason: DecisionPodNotRunning}},
		{name: "succeeded pod passes", budget: evictionBudget(), pod: podA().Phase(corev1.PodSucceeded), domain: "zone-a",
			want: Decision{Allowed: true, Reason: DecisionPodNotRunning}},
		{name: "failed pod passes", budget: evictionBudget(), pod: podA().Phase(corev1.PodFailed), domain: "zone-a",
			want: Decision{Allowed: true, Reason: DecisionPodNotRunning}},
		{name: "deleting pod passes", budget: evictionBudget(), pod: podA().Deleting(t0), domain: "zone-a",
			want: Decision{Allowed: true, Reason: DecisionPodNotRunning}},
		{name: "not-running pods pass even when the status is stale", budget: evictionBudget().Generation(2).ObservedGeneration(1),
			pod: pod("a-0").Pending().ControlledBy(replicaSet(rs)), want: Decision{Allowed: true, Reason: DecisionPodNotRunning}},
		{name: "a pod in phase Unknown is decided by the budget, as in core",
			budget: evictionBudget(), pod: podA().Phase(corev1.PodUnknown), domain: "zone-a",
			want: Decision{Reason: DecisionInsufficientPods, BlockedDomain: "zone-a",
				Message: "topology disruption budget ns/web: domain zone-a (topology.kubernetes.io/zone) has 7 healthy pods, needs 7; 0 disruptions allowed"}},

		// Refusals.
		{name: "stale observedGeneration", budget: evictionBudget().Generation(3).ObservedGeneration(2), pod: podB(), domain: "zone-b",
			want: Decision{Reason: DecisionStaleStatus,
				Message: "topology disruption budget ns/web: status is being updated for the new spec (observedGeneration 2 < generation 3); retry shortly"}},
		{name: "blocked: domain error",
			budget: evictionBudget().Conditions(disruptionAllowed(metav1.ConditionFalse, policyv1alpha1.ReasonDomainError, "1 covered pod(s) have no domain")),
			pod:    podB(), domain: "zone-b",
			want: Decision{Reason: DecisionBlocked, BlockedDomain: "zone-b",
				Message: "topology disruption budget ns/web: no disruption is allowed: 1 covered pod(s) have no domain"}},
		{name: "blocked: sync failed",
			budget: evictionBudget().Conditions(disruptionAllowed(metav1.ConditionFalse, policyv1alpha1.ReasonSyncFailed, "spec.selector is required")),
			pod:    podB(), domain: "zone-b",
			want: Decision{Reason: DecisionBlocked, BlockedDomain: "zone-b",
				Message: "topology disruption budget ns/web: no disruption is allowed: spec.selector is required"}},
		{name: "unknown domain", budget: evictionBudget(), pod: pod("d-0").OnNode("n9").Ready().ControlledBy(replicaSet(rs)), domain: "zone-d",
			want: Decision{Reason: DecisionUnknownDomain,
				Message: `topology disruption budget ns/web: domain "zone-d" of pod d-0 is not in the budget's status yet; retry shortly`}},
		{name: "insufficient pods", budget: evictionBudget(), pod: podA(), domain: "zone-a",
			want: Decision{Reason: DecisionInsufficientPods, BlockedDomain: "zone-a",
				Message: "topology disruption budget ns/web: domain zone-a (topology.kubernetes.io/zone) has 7 healthy pods, needs 7; 0 disruptions allowed"}},
		{name: "insufficient pods without topologyKey",
			budget: tdb("web").MaxUnavailable(intstr.FromInt32(1)).StatusDomains(row(AllDomain, 5, 4, 4, 0)),
			pod:    podA(), domain: AllDomain,
			want: Decision{Reason: DecisionInsufficientPods, BlockedDomain: AllDomain,
				Message: "topology disruption budget ns/web: the budget has 4 healthy pods, needs 4; 0 disruptions allowed"}},
		{name: "maxDisruptedDomains",
			budget: evictionBudget().MaxDisruptedDomains(1).
				StatusDomains(row("zone-a", 8, 7, 7, 0), row("zone-b", 8, 8, 7, 0), row("zone-c", 8, 8, 7, 0)),
			pod: podB(), domain: "zone-b",
			want: Decision{Reason: DecisionMaxDisruptedDomains, BlockedDomain: "zone-b",
				Message: "topology disruption budget ns/web: domain zone-b (topology.kubernetes.io/zone) has 8 healthy pods, needs 7; but 1 other domain(s) are disrupted (zone-a) and maxDisruptedDomains is 1; 0 disruptions allowed"}},
		{name: "maxDisruptedDomains 2",
			budget: evictionBudget().MaxDisruptedDomains(2).
				StatusDomains(row("zone-a", 8, 7, 7, 0), row("zone-b", 8, 7, 7, 0), row("zone-c", 8, 8, 7, 0)),
			pod: pod("c-0").OnNode("n4").Ready().ControlledBy(replicaSet(rs)), domain: "zone-c",
			want: Decision{Reason: DecisionMaxDisruptedDomains, BlockedDomain: "zone-c",
				Message: "topology disruption budget ns/web: domain zone-c (topology.kubernetes.io/zone) has 8 healthy pods, needs 7; but 2 other domain(s) are disrupted (zone-a, zone-b) and maxDisruptedDomains is 2; 0 disruptions allowed"}},
		{name: "too many records", budget: evictionBudget().DisruptedPods(records2000...), pod: podB(), domain: "zone-b",
			want: Decision{Reason: DecisionTooManyRecords,
				Message: "topology disruption budget ns/web: 2000 evictions are still being accounted for; retry shortly"}},

		// Not-Ready pods.
		// An uncharged eviction is recorded with the numbers unchanged: the
		// pod cannot turn Ready and count again before it goes, and its
		// replacement is expected in its own domain.
		{name: "IfHealthyBudget: a not-Ready pod of a domain within its budget passes uncharged, recorded",
			budget: evictionBudget().UnhealthyPodEvictionPolicy(policyv1alpha1.IfHealthyBudget), pod: podA().NotReady(), domain: "zone-a",
			want: Decision{Allowed: true, Reason: DecisionUnhealthyPod, Status: withRecords(evictionBudget().UnhealthyPodEvictionPolicy(policyv1alpha1.IfHealthyBudget),
				policyv1alpha1.DisruptedPod{Name: "a-0", UID: "uid-a-0", Domain: "zone-a", ControllerUID: rs, Time: metav1.NewTime(t0)})}},
		{name: "IfHealthyBudget is the default",
			budget: evictionBudget(), pod: podA().NotReady(), domain: "zone-a",
			want: Decision{Allowed: true, Reason: DecisionUnhealthyPod, Status: withRecords(evictionBudget(),
				policyv1alpha1.DisruptedPod{Name: "a-0", UID: "uid-a-0", Domain: "zone-a", ControllerUID: rs, Time: metav1.NewTime(t0)})}},
		{name: "IfHealthyBudget: a not-Ready pod of a domain below its budget needs an allowance",
			budget: evictionBudget().StatusDomains(row("zone-a", 8, 6, 7, 0), row("zone-b", 8, 8, 7, 1)),
			pod:    podA().NotReady(), domain: "zone-a",
			want: Decision{Reason: DecisionInsufficientPods, BlockedDomain: "zone-a",
				Message: "topology disruption budget ns/web: domain zone-a (topology.kubernetes.io/zone) has 6 healthy pods, needs 7; 0 disruptions allowed"}},
		{name: "IfHealthyBudget: with desiredHealthy 0 a not-Ready pod is charged, and healthy pods stay healthy",
			budget: evictionBudget().StatusDomains(row("zone-a", 2, 1, 0, 1)),
			pod:    podA().NotReady(), domain: "zone-a",
			want: Decision{Allowed: true, Reason: DecisionCharged, Status: func() *policyv1alpha1.TopologyDisruptionBudgetStatus {
				st := evictionBudget().StatusDomains(row("zone-a", 2, 1, 0, 0)).
					Conditions(disruptionAllowed(metav1.ConditionFalse, policyv1alpha1.ReasonInsufficientPods, "no domain has a healthy pod to spare; evictions wait until pods become Ready")).Obj().Status
				st.Conditions[0].LastTransitionTime = metav1.NewTime(t0)
				st.DisruptedPods = []policyv1alpha1.DisruptedPod{
					{Name: "a-0", UID: "uid-a-0", Domain: "zone-a", ControllerUID: rs, Time: metav1.NewTime(t0)}}
				return &st
			}()}},
		{name: "AlwaysAllow: a not-Ready pod passes whatever the budget, recorded",
			budget: evictionBudget().UnhealthyPodEvictionPolicy(policyv1alpha1.AlwaysAllow).StatusDomains(row("zone-a", 8, 6, 7, 0)),
			pod:    podA().NotReady(), domain: "zone-a",
			want: Decision{Allowed: true, Reason: DecisionUnhealthyPod, Status: withRecords(
				evictionBudget().UnhealthyPodEvictionPolicy(policyv1alpha1.AlwaysAllow).StatusDomains(row("zone-a", 8, 6, 7, 0)),
				policyv1alpha1.DisruptedPod{Name: "a-0", UID: "uid-a-0", Domain: "zone-a", ControllerUID: rs, Time: metav1.NewTime(t0)})}},
		{name: "a not-Ready pod is not recorded past the record limit",
			budget: evictionBudget().DisruptedPods(records2000...), pod: podA().NotReady(), domain: "zone-a",
			want: Decision{Reason: DecisionTooManyRecords,
				Message: "topology disruption budget ns/web: 2000 evictions are still being accounted for; retry shortly"}},
		{name: "AlwaysAllow: a Ready pod still needs an allowance",
			budget: evictionBudget().UnhealthyPodEvictionPolicy(policyv1alpha1.AlwaysAllow), pod: podA(), domain: "zone-a",
			want: Decision{Reason: DecisionInsufficientPods, BlockedDomain: "zone-a",
				Message: "topology disruption budget ns/web: domain zone-a (topology.kubernetes.io/zone) has 7 healthy pods, needs 7; 0 disruptions allowed"}},

		// Records.
		// A retry renews the record in a conditional write, so that the
		// status controller's removal of it cannot pass unnoticed.
		{name: "already recorded: allowed again without a second charge; the record is renewed to this attempt",
			budget: evictionBudget().DisruptedPods(record("a-0", "zone-a", rs, at(-time.Minute))), pod: podA(), domain: "zone-a",
			want: Decision{Allowed: true, Reason: DecisionAlreadyRecorded, Status: withRecords(evictionBudget(), record("a-0", "zone-a", rs, t0))}},
		{name: "already recorded in this second: still written, so a failed write allows nothing",
			budget: evictionBudget().DisruptedPods(record("a-0", "zone-a", rs, t0)), pod: podA(), domain: "zone-a",
			want: Decision{Allowed: true, Reason: DecisionAlreadyRecorded, Status: withRecords(evictionBudget(), record("a-0", "zone-a", rs, t0))}},
		{name: "recorded in another domain (its node was relabelled): refused until the record goes",
			budget: evictionBudget().DisruptedPods(record("a-0", "zone-b", rs, at(-time.Minute))), pod: podA(), domain: "zone-a",
			want: Decision{Reason: DecisionStaleStatus,
				Message: "topology disruption budget ns/web: pod a-0 was recorded in domain zone-b and is now in zone-a; retry shortly"}},
		{name: "a record of an earlier pod of the same name is replaced by the new charge",
			budget: evictionBudget().DisruptedPods(func() policyv1alpha1.DisruptedPod {
				r := record("b-0", "zone-c", rs, at(-time.Hour))
				r.UID = "uid-old"
				return r
			}()),
			pod: podB(), domain: "zone-b",
			want: Decision{Allowed: true, Reason: DecisionCharged, Status: chargedStatus()}},

		// Charges.
		{name: "charge: record added, domain healthy and allowance decremented, totals updated",
			budget: evictionBudget(), pod: podB(), domain: "zone-b",
			want: Decision{Allowed: true, Reason: DecisionCharged, Status: chargedStatus()}},
		{name: "charge keeps the other records sorted by name",
			budget: evictionBudget().DisruptedPods(record("a-9", "zone-a", rs, at(-time.Minute)), record("c-9", "zone-c", rs, at(-time.Minute))),
			pod:    podB(), domain: "zone-b",
			want: Decision{Allowed: true, Reason: DecisionCharged, Status: func() *policyv1alpha1.TopologyDisruptionBudgetStatus {
				st := chargedStatus()
				st.DisruptedPods = []policyv1alpha1.DisruptedPod{
					record("a-9", "zone-a", rs, at(-time.Minute)),
					{Name: "b-0", UID: "uid-b-0", Domain: "zone-b", ControllerUID: rs, Time: metav1.NewTime(t0)},
					record("c-9", "zone-c", rs, at(-time.Minute)),
				}
				return st
			}()}},
		{name: "charge of a pod without a controller",
			budget: evictionBudget(), pod: pod("b-0").OnNode("n3").Ready(), domain: "zone-b",
			want: Decision{Allowed: true, Reason: DecisionCharged, Status: func() *policyv1alpha1.TopologyDisruptionBudgetStatus {
				st := chargedStatus()
				st.DisruptedPods[0].ControllerUID = ""
				return st
			}()}},
		{name: "status rows out of order are still found",
			budget: evictionBudget().StatusDomains(row("zone-c", 8, 8, 7, 0), row("zone-a", 8, 8, 7, 1)),
			pod:    podA(), domain: "zone-a",
			want: Decision{Allowed: true, Reason: DecisionCharged, Status: func() *policyv1alpha1.TopologyDisruptionBudgetStatus {
				st := evictionBudget().StatusDomains(row("zone-c", 8, 8, 7, 0), row("zone-a", 8, 7, 7, 0)).
					Conditions(disruptionAllowed(metav1.ConditionFalse, policyv1alpha1.ReasonInsufficientPods, "no domain has a healthy pod to spare; evictions wait until pods become Ready")).Obj().Status
				st.Conditions[0].LastTransitionTime = metav1.NewTime(t0)
				st.DisruptedPods = []policyv1alpha1.DisruptedPod{
					{Name: "a-0", UID: "uid-a-0", Domain: "zone-a", ControllerUID: rs, Time: metav1.NewTime(t0)}}
				return &st
			}()}},
		{name: "charge under maxDisruptedDomains 1 zeroes the other domains",
			budget: evictionBudget().MaxDisruptedDomains(1).
				StatusDomains(row("zone-a", 8, 8, 7, 1), row("zone-b", 8, 8, 7, 1), row("zone-c", 8, 8, 7, 1)),
			pod: podB(), domain: "zone-b",
			want: Decision{Allowed: true, Reason: DecisionCharged, Status: func() *policyv1alpha1.TopologyDisruptionBudgetStatus {
				st := evictionBudget().MaxDisruptedDomains(1).
					StatusDomains(row("zone-a", 8, 8, 7, 0), row("zone-b", 8, 7, 7, 0), row("zone-c", 8, 8, 7, 0)).
					Conditions(disruptionAllowed(metav1.ConditionFalse, policyv1alpha1.ReasonInsufficientPods, "no domain has a healthy pod to spare; evictions wait until pods become Ready")).Obj().Status
				st.Conditions[0].LastTransitionTime = metav1.NewTime(t0)
				st.DisruptedPods = chargedStatus().DisruptedPods
				return &st
			}()}},
		{name: "charge under maxDisruptedDomains 2 zeroes the third domain only",
			budget: evictionBudget().MaxUnavailable(intstr.FromInt32(2)).MaxDisruptedDomains(2).
				StatusDomains(row("zone-a", 8, 7, 6, 1), row("zone-b", 8, 8, 6, 2), row("zone-c", 8, 8, 6, 2)),
			pod: podB(), domain: "zone-b",
			want: Decision{Allowed: true, Reason: DecisionCharged, Status: func() *policyv1alpha1.TopologyDisruptionBudgetStatus {
				st := evictionBudget().StatusDomains(row("zone-a", 8, 7, 6, 1), row("zone-b", 8, 7, 6, 1), row("zone-c", 8, 8, 6, 0)).Obj().Status
				st.DisruptedPods = chargedStatus().DisruptedPods
				st.Conditions[0].Message = "2 disruption(s) allowed in zone-a, zone-b"
				return &st
			}()}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.budget.Obj()
			before := b.DeepCopy()
			got := DecideEviction(b, EvictionRequest{Pod: tc.pod.Obj(), Domain: tc.domain, Now: t0})
			// A record this decision writes (granted or renewed now)
			// carries the spec its domain was named under.
			if tc.want.Status != nil {
				for i := range tc.want.Status.DisruptedPods {
					if r := &tc.want.Status.DisruptedPods[i]; r.Time.Equal(&metav1.Time{Time: t0}) && r.DomainSpec == "" {
						r.DomainSpec = DomainSpecOf(&b.Spec)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DecideEviction() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, b); diff != "" {
				t.Errorf("DecideEviction() modified the budget it was given (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecideEvictionSequence: the status is the ledger. Starting from the
// status Compute gives, every Ready pod is evicted in turn, each allowed
// decision's Status written back as the webhook does. Exactly the allowed
// evictions succeed in each domain, retries are not charged twice, and the
// final ledger equals what Compute gives for the recorded evictions.
//
// The world: one spread controller (scale 9), 4 Ready pods in zone-a, 3 in
// zone-b, 2 in zone-c.
func TestDecideEvictionSequence(t *testing.T) {
	const sts = types.UID("sts")
	zoneOf := map[string]string{"n1": "zone-a", "n2": "zone-a", "n3": "zone-b", "n4": "zone-c"}
	ps := unevenZones(sts)
	interleaved := []string{"a-0", "b-0", "c-0", "a-0", "a-1", "b-1", "c-1", "a-2", "b-2", "a-3", "c-0"}
	byZone := []string{"a-0", "a-1", "a-2", "a-3", "b-0", "b-1", "b-2", "c-0", "c-1"}
	tests := []struct {
		name        string
		budget      *builders.BudgetWrapper
		order       []string
		wantAllowed map[string]int32 // from Compute, before any eviction
		wantCharged map[string]int32
	}{
		{name: "maxUnavailable 1", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)), order: interleaved,
			wantAllowed: map[string]int32{"zone-a": 1, "zone-b": 1, "zone-c": 1},
			wantCharged: map[string]int32{"zone-a": 1, "zone-b": 1, "zone-c": 1}},
		{name: "maxUnavailable 2", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(2)), order: interleaved,
			wantAllowed: map[string]int32{"zone-a": 2, "zone-b": 2, "zone-c": 2},
			wantCharged: map[string]int32{"zone-a": 2, "zone-b": 2, "zone-c": 2}},
		{name: "maxUnavailable 50%", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromString("50%")), order: byZone,
			wantAllowed: map[string]int32{"zone-a": 2, "zone-b": 2, "zone-c": 1},
			wantCharged: map[string]int32{"zone-a": 2, "zone-b": 2, "zone-c": 1}},
		{name: "minAvailable 2", budget: tdb("web").TopologyKey(zoneKey).MinAvailable(intstr.FromInt32(2)), order: interleaved,
			wantAllowed: map[string]int32{"zone-a": 2, "zone-b": 1, "zone-c": 0},
			wantCharged: map[string]int32{"zone-a": 2, "zone-b": 1}},
		{name: "minAvailable 60%", budget: tdb("web").TopologyKey(zoneKey).MinAvailable(intstr.FromString("60%")), order: byZone,
			wantAllowed: map[string]int32{"zone-a": 1, "zone-b": 1, "zone-c": 0},
			wantCharged: map[string]int32{"zone-a": 1, "zone-b": 1}},
		{name: "maxDisruptedDomains 1: the first domain charged takes its whole allowance, the others none",
			budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(2)).MaxDisruptedDomains(1), order: interleaved,
			wantAllowed: map[string]int32{"zone-a": 2, "zone-b": 2, "zone-c": 2},
			wantCharged: map[string]int32{"zone-a": 2}},
		{name: "maxDisruptedDomains 2: two domains charged, the third none",
			budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(2)).MaxDisruptedDomains(2), order: interleaved,
			wantAllowed: map[string]int32{"zone-a": 2, "zone-b": 2, "zone-c": 2},
			wantCharged: map[string]int32{"zone-a": 2, "zone-b": 2}},
		{name: "without topologyKey", budget: tdb("web").MaxUnavailable(intstr.FromString("30%")), order: interleaved,
			wantAllowed: map[string]int32{AllDomain: 3},
			wantCharged: map[string]int32{AllDomain: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tc.budget, nodes: threeZones(), pods: ps, owners: []Owner{owner(sts, 9)}}
			in := w.input()
			res := Compute(in)
			gotAllowed := map[string]int32{}
			for _, d := range res.Domains {
				gotAllowed[d.Name] = d.DisruptionsAllowed
			}
			if diff := cmp.Diff(tc.wantAllowed, gotAllowed); diff != "" {
				t.Fatalf("Compute() allowances (-want +got):\n%s", diff)
			}
			b := in.Budget
			b.Status = statusFrom(b, res)
			podByName := map[string]*corev1.Pod{}
			for _, p := range in.Pods {
				podByName[p.Name] = p
			}
			charged := map[string]int32{}
			evicted := map[string]bool{}
			for i, name := range tc.order {
				p := podByName[name]
				domain := AllDomain
				if b.Spec.TopologyKey != "" {
					domain = zoneOf[p.Spec.NodeName]
				}
				d := DecideEviction(b, EvictionRequest{Pod: p, Domain: domain, Now: t0.Add(time.Duration(i) * time.Second)})
				switch {
				case d.Allowed && d.Reason == DecisionCharged:
					if evicted[name] {
						t.Errorf("eviction %d of %s charged twice", i, name)
					}
					evicted[name] = true
					charged[domain]++
				case d.Allowed && d.Reason == DecisionAlreadyRecorded:
					if !evicted[name] {
						t.Errorf("eviction %d of %s: AlreadyRecorded for a pod never charged", i, name)
					}
				case d.Allowed:
					t.Errorf("eviction %d of %s: unexpected reason %s", i, name, d.Reason)
				case d.Reason != DecisionInsufficientPods && d.Reason != DecisionMaxDisruptedDomains:
					t.Errorf("eviction %d of %s refused for %s: %s", i, name, d.Reason, d.Message)
				}
				if d.Reason == DecisionCharged && d.Status == nil {
					t.Fatalf("eviction %d of %s: charged without a status to write", i, name)
				}
				if d.Status != nil {
					b.Status = *d.Status
				}
			}
			if diff := cmp.Diff(tc.wantCharged, charged); diff != "" {
				t.Errorf("charged evictions per domain (-want +got):\n%s", diff)
			}

			// The ledger after the evictions is what the status controller
			// computes from the records it holds, at the time of the last one.
			in.Budget = b
			in.Now = t0.Add(time.Duration(len(tc.order)) * time.Second)
			again := Compute(in)
			if diff := cmp.Diff(again.Domains, b.Status.Domains); diff != "" {
				t.Errorf("ledger rows differ from Compute over the records (-compute +ledger):\n%s", diff)
			}
			ledger := pdbNumbers{Expected: b.Status.ExpectedPods, Healthy: b.Status.CurrentHealthy, Allowed: b.Status.DisruptionsAllowed}
			computed := pdbNumbers{Expected: again.ExpectedPods, Healthy: again.CurrentHealthy, Allowed: again.DisruptionsAllowed}
			if diff := cmp.Diff(computed, ledger); diff != "" {
				t.Errorf("ledger totals differ from Compute over the records (-compute +ledger):\n%s", diff)
			}
		})
	}
}

// A Ready pod whose node is gone is not counted healthy by Compute, so its
// eviction lowers no healthy count (found by FuzzCompute: the ledger then
// counted one healthy pod fewer than a recomputation). It still needs and
// takes an allowance: the status may have been computed while the node
// existed.
func TestEvictionOfAPodOnAGoneNode(t *testing.T) {
	const rs = types.UID("rs")
	p := pod("w-0").OnNode("gone").Ready().ControlledBy(replicaSet(rs)).Obj()
	healthy := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).StatusDomains(row("zone-a", 3, 3, 2, 1)).Obj()
	d := DecideEviction(healthy, EvictionRequest{Pod: p, Domain: "zone-a", Now: t0, NodeGone: true})
	if !d.Allowed || d.Reason != DecisionCharged {
		t.Fatalf("pod on a gone node: %+v; want charged", d)
	}
	if got := d.Status.Domains[0]; got.CurrentHealthy != 3 || got.DisruptionsAllowed != 0 || len(d.Status.DisruptedPods) != 1 {
		t.Errorf("charge for a pod on a gone node: row %+v, records %v; want currentHealthy 3 (it was never counted), allowance 0, one record", got, d.Status.DisruptedPods)
	}
	// No allowance: refused, as any pod.
	none := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).StatusDomains(row("zone-a", 3, 2, 2, 0)).Obj()
	if d := DecideEviction(none, EvictionRequest{Pod: p, Domain: "zone-a", Now: t0, NodeGone: true}); d.Allowed {
		t.Errorf("pod on a gone node, no allowance: %+v; want refused", d)
	}
	// The same pod on a live node is charged as healthy.
	d = DecideEviction(healthy, EvictionRequest{Pod: p, Domain: "zone-a", Now: t0})
	if got := d.Status.Domains[0]; d.Reason != DecisionCharged || got.CurrentHealthy != 2 {
		t.Errorf("pod on a live node: %s, row %+v; want charged with currentHealthy 2", d.Reason, got)
	}
}
