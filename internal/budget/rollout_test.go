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
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// rpod is a covered pod of a driven workload: by default outdated, Ready and
// not being deleted.
type rpod struct{ p RolloutPod }

func rp(name, domain string) *rpod {
	return &rpod{p: RolloutPod{Name: name, Domain: domain, Ready: true}}
}
func (b *rpod) updated() *rpod  { b.p.Updated = true; return b }
func (b *rpod) notReady() *rpod { b.p.Ready = false; return b }
func (b *rpod) deleting() *rpod { b.p.Deleting = true; b.p.Ready = false; return b }
func (b *rpod) evicted() *rpod  { b.p.Evicted = true; return b }

func rpods(bs ...*rpod) []RolloutPod {
	out := make([]RolloutPod, len(bs))
	for i, b := range bs {
		out[i] = b.p
	}
	return out
}

// zonePods returns n pods per zone named <zone>-<i>, outdated and Ready.
func zonePods(n int, zones ...string) []*rpod {
	var out []*rpod
	for _, z := range zones {
		for i := range n {
			out = append(out, rp(z+"-"+string(rune('0'+i)), z))
		}
	}
	return out
}

// budgetRow is a budget domain: expected pods, healthy pods, allowance.
func budgetRow(name string, expected, healthy, allowed int32) policyv1alpha1.DomainStatus {
	return policyv1alpha1.DomainStatus{Name: name, ExpectedPods: expected, CurrentHealthy: healthy, DesiredHealthy: healthy - allowed, DisruptionsAllowed: allowed}
}

func rolloutSpec(strategy policyv1alpha1.RolloutStrategyType, order ...string) *policyv1alpha1.TopologyDisruptionBudgetSpec {
	return &policyv1alpha1.TopologyDisruptionBudgetSpec{
		TopologyKey:    zoneKey,
		MaxUnavailable: ptr.To(intstr.FromInt32(1)),
		Rollout: &policyv1alpha1.RolloutSpec{
			Strategy: strategy, DomainOrder: order, ProgressDeadlineSeconds: ptr.To[int32](60),
		},
	}
}

func domainRow(name string, updated, total int32, phase policyv1alpha1.RolloutPhase, last *time.Time) policyv1alpha1.RolloutDomainStatus {
	r := policyv1alpha1.RolloutDomainStatus{Name: name, UpdatedPods: updated, TotalPods: total, Phase: phase}
	if last != nil {
		r.LastProgressTime = &metav1.Time{Time: *last}
	}
	return r
}

func tp(t time.Time) *time.Time { return &t }

func TestPlanRolloutEvictions(t *testing.T) {
	three := []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 2, 1), budgetRow("zone-b", 2, 2, 1), budgetRow("zone-c", 2, 2, 1)}
	cases := []struct {
		name        string
		spec        *policyv1alpha1.TopologyDisruptionBudgetSpec
		budget      []policyv1alpha1.DomainStatus
		pods        []*rpod
		inFlight    map[string]int32
		records     map[string]int32
		wantEvict   []string
		wantWaiting []string
		wantCurrent string
		wantPhases  map[string]policyv1alpha1.RolloutPhase
	}{
		{
			name:        "DomainByDomain starts with the first domain by name, within its allowance",
			spec:        rolloutSpec(policyv1alpha1.DomainByDomain),
			budget:      three,
			pods:        zonePods(2, "zone-a", "zone-b", "zone-c"),
			wantEvict:   []string{"zone-a-0"},
			wantCurrent: "zone-a",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing", "zone-b": "Pending", "zone-c": "Pending"},
		},
		{
			name:        "domainOrder comes first, unlisted domains follow by name",
			spec:        rolloutSpec(policyv1alpha1.DomainByDomain, "zone-c"),
			budget:      three,
			pods:        zonePods(2, "zone-a", "zone-b", "zone-c"),
			wantEvict:   []string{"zone-c-0"},
			wantCurrent: "zone-c",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Pending", "zone-b": "Pending", "zone-c": "Progressing"},
		},
		{
			name:   "a complete domain is passed over",
			spec:   rolloutSpec(policyv1alpha1.DomainByDomain),
			budget: three,
			pods: append([]*rpod{rp("zone-a-0", "zone-a").updated(), rp("zone-a-1", "zone-a").updated()},
				zonePods(2, "zone-b", "zone-c")...),
			wantEvict:   []string{"zone-b-0"},
			wantCurrent: "zone-b",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Complete", "zone-b": "Progressing", "zone-c": "Pending"},
		},
		{
			name:   "a replacement that is not Ready keeps its domain current; the next domain waits",
			spec:   rolloutSpec(policyv1alpha1.DomainByDomain),
			budget: []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 1, 0), budgetRow("zone-b", 2, 2, 1)},
			pods: append([]*rpod{rp("zone-a-0", "zone-a").updated().notReady(), rp("zone-a-1", "zone-a")},
				zonePods(2, "zone-b")...),
			wantCurrent: "zone-a",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing", "zone-b": "Pending"},
		},
		{
			name:        "a granted eviction whose pods are all gone keeps the domain current",
			spec:        rolloutSpec(policyv1alpha1.DomainByDomain),
			budget:      []policyv1alpha1.DomainStatus{budgetRow("zone-a", 1, 0, 0), budgetRow("zone-b", 2, 2, 1)},
			pods:        zonePods(2, "zone-b"),
			inFlight:    map[string]int32{"zone-a": 1},
			wantCurrent: "zone-a",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing", "zone-b": "Pending"},
		},
		{
			name:   "a finished domain still short of a pod holds the next domain back",
			spec:   rolloutSpec(policyv1alpha1.DomainByDomain),
			budget: []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 1, 0), budgetRow("zone-b", 2, 2, 1)},
			pods: append([]*rpod{rp("zone-a-0", "zone-a").updated()},
				zonePods(2, "zone-b")...),
			wantCurrent: "zone-b",
			wantWaiting: []string{"zone-a"},
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Complete", "zone-b": "Pending"},
		},
		{
			name:        "a drain's eviction elsewhere holds the current domain back",
			spec:        rolloutSpec(policyv1alpha1.DomainByDomain),
			budget:      []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 2, 1), budgetRow("zone-b", 2, 1, 0), budgetRow("zone-c", 2, 2, 1)},
			pods:        append(zonePods(2, "zone-a"), rp("zone-b-0", "zone-b").updated(), rp("zone-b-1", "zone-b").updated()),
			records:     map[string]int32{"zone-b": 1},
			wantCurrent: "zone-a",
			wantWaiting: []string{"zone-b"},
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Pending", "zone-b": "Complete"},
		},
		{
			name:   "a zone whose only pod was evicted and not replaced keeps DomainByDomain there",
			spec:   rolloutSpec(policyv1alpha1.DomainByDomain),
			budget: []policyv1alpha1.DomainStatus{budgetRow("zone-a", 1, 0, 0), budgetRow("zone-b", 1, 1, 1), budgetRow("zone-c", 1, 1, 1)},
			// zk-a-0's replacement is not scheduled yet: it has no domain
			// and is not among the pods.
			pods:        []*rpod{rp("zk-b-0", "zone-b"), rp("zk-c-0", "zone-c")},
			inFlight:    map[string]int32{"zone-a": 1},
			records:     map[string]int32{"zone-a": 1},
			wantCurrent: "zone-a",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing", "zone-b": "Pending", "zone-c": "Pending"},
		},
		{
			name:        "pods already evicted or deleting are not evicted again",
			spec:        rolloutSpec(policyv1alpha1.DomainByDomain),
			budget:      []policyv1alpha1.DomainStatus{budgetRow("zone-a", 3, 1, 1)},
			pods:        []*rpod{rp("zone-a-0", "zone-a").deleting(), rp("zone-a-1", "zone-a").evicted(), rp("zone-a-2", "zone-a")},
			wantEvict:   []string{"zone-a-2"},
			wantCurrent: "zone-a",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing"},
		},
		{
			name:        "outdated pods that are not Ready go first",
			spec:        rolloutSpec(policyv1alpha1.DomainByDomain),
			budget:      []policyv1alpha1.DomainStatus{budgetRow("zone-a", 3, 2, 0)},
			pods:        []*rpod{rp("zone-a-0", "zone-a"), rp("zone-a-1", "zone-a"), rp("zone-a-2", "zone-a").notReady()},
			wantEvict:   []string{"zone-a-2"},
			wantCurrent: "zone-a",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing"},
		},
		{
			name: "not-Ready outdated pods go without an allowance under AlwaysAllow",
			spec: func() *policyv1alpha1.TopologyDisruptionBudgetSpec {
				s := rolloutSpec(policyv1alpha1.DomainByDomain)
				s.UnhealthyPodEvictionPolicy = policyv1alpha1.AlwaysAllow
				return s
			}(),
			budget:      []policyv1alpha1.DomainStatus{budgetRow("zone-a", 3, 1, 0)},
			pods:        []*rpod{rp("zone-a-0", "zone-a"), rp("zone-a-1", "zone-a").notReady(), rp("zone-a-2", "zone-a").notReady()},
			wantEvict:   []string{"zone-a-1", "zone-a-2"},
			wantCurrent: "zone-a",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing"},
		},
		{
			name:        "under IfHealthyBudget a short domain's not-Ready pods need an allowance",
			spec:        rolloutSpec(policyv1alpha1.DomainByDomain),
			budget:      []policyv1alpha1.DomainStatus{{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 1, DesiredHealthy: 2}},
			pods:        []*rpod{rp("zone-a-0", "zone-a"), rp("zone-a-1", "zone-a").notReady(), rp("zone-a-2", "zone-a").notReady()},
			wantCurrent: "zone-a",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing"},
		},
		{
			name:        "as many pods at once as the domain allows",
			spec:        rolloutSpec(policyv1alpha1.DomainByDomain),
			budget:      []policyv1alpha1.DomainStatus{budgetRow("zone-a", 4, 4, 3), budgetRow("zone-b", 4, 4, 3)},
			pods:        zonePods(4, "zone-a", "zone-b"),
			wantEvict:   []string{"zone-a-0", "zone-a-1", "zone-a-2"},
			wantCurrent: "zone-a",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing", "zone-b": "Pending"},
		},
		{
			name:       "AllDomains updates every domain within its own allowance",
			spec:       rolloutSpec(policyv1alpha1.AllDomains),
			budget:     []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 2, 1), budgetRow("zone-b", 2, 2, 0), budgetRow("zone-c", 2, 2, 2)},
			pods:       zonePods(2, "zone-a", "zone-b", "zone-c"),
			wantEvict:  []string{"zone-a-0", "zone-c-0", "zone-c-1"},
			wantPhases: map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing", "zone-b": "Progressing", "zone-c": "Progressing"},
		},
		{
			name: "AllDomains with maxDisruptedDomains 1: a second domain waits while one is disrupted",
			spec: func() *policyv1alpha1.TopologyDisruptionBudgetSpec {
				s := rolloutSpec(policyv1alpha1.AllDomains)
				s.MaxDisruptedDomains = ptr.To[int32](1)
				return s
			}(),
			budget:     []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 1, 0), budgetRow("zone-b", 2, 2, 0), budgetRow("zone-c", 2, 2, 0)},
			pods:       append([]*rpod{rp("zone-a-0", "zone-a").updated().notReady(), rp("zone-a-1", "zone-a")}, zonePods(2, "zone-b", "zone-c")...),
			wantPhases: map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing", "zone-b": "Pending", "zone-c": "Pending"},
		},
		{
			name: "AllDomains with maxDisruptedDomains 2 starts two domains at once, not three",
			spec: func() *policyv1alpha1.TopologyDisruptionBudgetSpec {
				s := rolloutSpec(policyv1alpha1.AllDomains)
				s.MaxDisruptedDomains = ptr.To[int32](2)
				return s
			}(),
			budget:     three,
			pods:       zonePods(2, "zone-a", "zone-b", "zone-c"),
			wantEvict:  []string{"zone-a-0", "zone-b-0"},
			wantPhases: map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing", "zone-b": "Progressing", "zone-c": "Pending"},
		},
		{
			name: "paused: nothing is evicted",
			spec: func() *policyv1alpha1.TopologyDisruptionBudgetSpec {
				s := rolloutSpec(policyv1alpha1.DomainByDomain)
				s.Rollout.Paused = true
				return s
			}(),
			budget:      three,
			pods:        zonePods(2, "zone-a", "zone-b", "zone-c"),
			wantCurrent: "zone-a",
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Paused", "zone-b": "Pending", "zone-c": "Pending"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := PlanRollout(RolloutInput{Spec: tc.spec, Budget: tc.budget, Pods: rpods(tc.pods...), InFlight: tc.inFlight, Records: tc.records, Now: t0})
			if diff := cmp.Diff(tc.wantWaiting, plan.Waiting); diff != "" {
				t.Errorf("waiting (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvict, plan.Evict, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("evictions (-want +got):\n%s", diff)
			}
			if plan.Status.CurrentDomain != tc.wantCurrent {
				t.Errorf("current domain = %q, want %q", plan.Status.CurrentDomain, tc.wantCurrent)
			}
			got := map[string]policyv1alpha1.RolloutPhase{}
			for _, d := range plan.Status.Domains {
				got[d.Name] = d.Phase
			}
			if diff := cmp.Diff(tc.wantPhases, got); diff != "" {
				t.Errorf("phases (-want +got):\n%s", diff)
			}
			if plan.Complete {
				t.Errorf("complete = true with outdated pods left")
			}
		})
	}
}

func TestPlanRolloutProgressDeadline(t *testing.T) {
	budget := []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 1, 0), budgetRow("zone-b", 2, 2, 1)}
	stuck := func() []RolloutPod {
		return rpods(rp("zone-a-0", "zone-a").updated().notReady(), rp("zone-a-1", "zone-a"), rp("zone-b-0", "zone-b"), rp("zone-b-1", "zone-b"))
	}
	cases := []struct {
		name     string
		pods     []RolloutPod
		budget   []policyv1alpha1.DomainStatus
		previous []policyv1alpha1.RolloutDomainStatus
		newRev   bool
		now      time.Time
		want     policyv1alpha1.RolloutDomainStatus
		started  []string
		stalled  []StalledDomain
		recheck  *time.Time
		reason   string
	}{
		{
			name:    "a domain that starts gets the deadline from now, and an event",
			pods:    stuck(),
			budget:  budget,
			now:     t0,
			want:    domainRow("zone-a", 0, 2, "Progressing", tp(t0)),
			started: []string{"zone-a"},
			recheck: tp(at(60 * time.Second)),
			reason:  policyv1alpha1.ReasonRolloutUpdating,
		},
		{
			name:     "no progress within the deadline stalls the domain and names its pods",
			pods:     stuck(),
			budget:   budget,
			previous: []policyv1alpha1.RolloutDomainStatus{domainRow("zone-a", 0, 2, "Progressing", tp(t0))},
			now:      at(60 * time.Second),
			want:     domainRow("zone-a", 0, 2, "Stalled", tp(t0)),
			stalled:  []StalledDomain{{Domain: "zone-a", Pods: []string{"zone-a-0", "zone-a-1"}, Since: t0}},
			reason:   policyv1alpha1.ReasonProgressDeadlineExceeded,
		},
		{
			name:     "before the deadline it keeps waiting",
			pods:     stuck(),
			budget:   budget,
			previous: []policyv1alpha1.RolloutDomainStatus{domainRow("zone-a", 0, 2, "Progressing", tp(t0))},
			now:      at(59 * time.Second),
			want:     domainRow("zone-a", 0, 2, "Progressing", tp(t0)),
			recheck:  tp(at(60 * time.Second)),
			reason:   policyv1alpha1.ReasonRolloutUpdating,
		},
		{
			name: "one more updated Ready pod restarts the deadline",
			pods: rpods(rp("zone-a-0", "zone-a").updated(), rp("zone-a-1", "zone-a").updated().notReady(),
				rp("zone-b-0", "zone-b"), rp("zone-b-1", "zone-b")),
			budget:   budget,
			previous: []policyv1alpha1.RolloutDomainStatus{domainRow("zone-a", 0, 2, "Progressing", tp(t0))},
			now:      at(50 * time.Second),
			want:     domainRow("zone-a", 1, 2, "Progressing", tp(at(50*time.Second))),
			recheck:  tp(at(110 * time.Second)),
			reason:   policyv1alpha1.ReasonRolloutUpdating,
		},
		{
			name:     "a stalled domain that progresses runs again",
			pods:     rpods(rp("zone-a-0", "zone-a").updated(), rp("zone-a-1", "zone-a"), rp("zone-b-0", "zone-b"), rp("zone-b-1", "zone-b")),
			budget:   []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 2, 1), budgetRow("zone-b", 2, 2, 1)},
			previous: []policyv1alpha1.RolloutDomainStatus{domainRow("zone-a", 0, 2, "Stalled", tp(t0))},
			now:      at(5 * time.Minute),
			want:     domainRow("zone-a", 1, 2, "Progressing", tp(at(5*time.Minute))),
			recheck:  tp(at(6 * time.Minute)),
			reason:   policyv1alpha1.ReasonRolloutUpdating,
		},
		{
			name:     "a new revision restarts the deadline of a stalled domain",
			pods:     stuck(),
			budget:   budget,
			previous: []policyv1alpha1.RolloutDomainStatus{domainRow("zone-a", 0, 2, "Stalled", tp(t0))},
			newRev:   true,
			now:      at(5 * time.Minute),
			want:     domainRow("zone-a", 0, 2, "Progressing", tp(at(5*time.Minute))),
			recheck:  tp(at(6 * time.Minute)),
			reason:   policyv1alpha1.ReasonRolloutUpdating,
		},
		{
			name:     "resuming after a pause restarts the deadline without a new start event",
			pods:     stuck(),
			budget:   budget,
			previous: []policyv1alpha1.RolloutDomainStatus{domainRow("zone-a", 0, 2, "Paused", tp(t0))},
			now:      at(5 * time.Minute),
			want:     domainRow("zone-a", 0, 2, "Progressing", tp(at(5*time.Minute))),
			recheck:  tp(at(6 * time.Minute)),
			reason:   policyv1alpha1.ReasonRolloutUpdating,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := PlanRollout(RolloutInput{
				Spec: rolloutSpec(policyv1alpha1.DomainByDomain), Budget: tc.budget, Pods: tc.pods,
				Previous: &policyv1alpha1.RolloutStatus{Domains: tc.previous}, NewRevision: tc.newRev, Now: tc.now,
			})
			if diff := cmp.Diff(tc.want, plan.Status.Domains[0]); diff != "" {
				t.Errorf("zone-a (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.started, plan.Started); diff != "" {
				t.Errorf("started (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.stalled, plan.Stalled); diff != "" {
				t.Errorf("stalled (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.recheck, plan.RecheckAt); diff != "" {
				t.Errorf("recheck (-want +got):\n%s", diff)
			}
			if got := plan.Conditions[0].Reason; got != tc.reason {
				t.Errorf("RolloutProgressing reason = %s, want %s", got, tc.reason)
			}
			if len(tc.stalled) > 0 && len(plan.Evict) > 0 {
				t.Errorf("a stalled rollout evicted %v", plan.Evict)
			}
			if plan.Status.Domains[1].Phase != policyv1alpha1.RolloutPhasePending {
				t.Errorf("zone-b phase = %s while zone-a is not complete", plan.Status.Domains[1].Phase)
			}
		})
	}
}

func TestPlanRolloutStallStopsAllDomains(t *testing.T) {
	spec := rolloutSpec(policyv1alpha1.AllDomains)
	plan := PlanRollout(RolloutInput{
		Spec:   spec,
		Budget: []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 1, 0), budgetRow("zone-b", 2, 2, 1)},
		Pods:   rpods(rp("zone-a-0", "zone-a").updated().notReady(), rp("zone-a-1", "zone-a"), rp("zone-b-0", "zone-b"), rp("zone-b-1", "zone-b")),
		Previous: &policyv1alpha1.RolloutStatus{Domains: []policyv1alpha1.RolloutDomainStatus{
			domainRow("zone-a", 0, 2, "Progressing", tp(t0)), domainRow("zone-b", 0, 2, "Progressing", tp(at(50*time.Second))),
		}},
		Now: at(61 * time.Second),
	})
	if len(plan.Evict) != 0 {
		t.Errorf("evicted %v while zone-a is stalled", plan.Evict)
	}
	if plan.Status.Domains[0].Phase != policyv1alpha1.RolloutPhaseStalled || plan.Status.Domains[1].Phase != policyv1alpha1.RolloutPhaseProgressing {
		t.Errorf("phases = %s/%s, want Stalled/Progressing", plan.Status.Domains[0].Phase, plan.Status.Domains[1].Phase)
	}
}

func TestPlanRolloutConditions(t *testing.T) {
	cases := []struct {
		name             string
		pods             []RolloutPod
		paused           bool
		wantComplete     bool
		wantProgressing  metav1.ConditionStatus
		wantDone         metav1.ConditionStatus
		wantReason       string
		wantMessageParts []string
	}{
		{
			name:            "every pod updated and Ready",
			pods:            rpods(rp("zone-a-0", "zone-a").updated(), rp("zone-b-0", "zone-b").updated()),
			wantComplete:    true,
			wantProgressing: metav1.ConditionFalse, wantDone: metav1.ConditionTrue,
			wantReason: policyv1alpha1.ReasonRolloutComplete,
		},
		{
			name:            "no driven pods",
			wantComplete:    true,
			wantProgressing: metav1.ConditionFalse, wantDone: metav1.ConditionTrue,
			wantReason: policyv1alpha1.ReasonNoDrivenWorkloads,
		},
		{
			name:            "updating",
			pods:            rpods(rp("zone-a-0", "zone-a").updated(), rp("zone-a-1", "zone-a"), rp("zone-b-0", "zone-b")),
			wantProgressing: metav1.ConditionTrue, wantDone: metav1.ConditionFalse,
			wantReason:       policyv1alpha1.ReasonRolloutUpdating,
			wantMessageParts: []string{"DomainByDomain", "zone-a 1/2"},
		},
		{
			name:            "paused",
			pods:            rpods(rp("zone-a-0", "zone-a")),
			paused:          true,
			wantProgressing: metav1.ConditionFalse, wantDone: metav1.ConditionFalse,
			wantReason: policyv1alpha1.ReasonRolloutPaused,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := rolloutSpec(policyv1alpha1.DomainByDomain)
			spec.Rollout.Paused = tc.paused
			plan := PlanRollout(RolloutInput{
				Spec: spec, Pods: tc.pods, Now: t0,
				Budget: []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 2, 1), budgetRow("zone-b", 1, 1, 1)},
			})
			if plan.Complete != tc.wantComplete {
				t.Errorf("complete = %v, want %v", plan.Complete, tc.wantComplete)
			}
			if len(plan.Conditions) != 2 {
				t.Fatalf("conditions = %v, want RolloutProgressing and RolloutComplete", plan.Conditions)
			}
			p, c := plan.Conditions[0], plan.Conditions[1]
			if p.Type != policyv1alpha1.ConditionRolloutProgressing || c.Type != policyv1alpha1.ConditionRolloutComplete {
				t.Fatalf("condition types = %s, %s", p.Type, c.Type)
			}
			if p.Status != tc.wantProgressing || c.Status != tc.wantDone || p.Reason != tc.wantReason || c.Reason != tc.wantReason {
				t.Errorf("conditions = %s/%s %s, %s/%s %s; want %s/%s %s", p.Type, p.Status, p.Reason, c.Type, c.Status, c.Reason,
					tc.wantProgressing, tc.wantDone, tc.wantReason)
			}
			for _, part := range tc.wantMessageParts {
				if !strings.Contains(p.Message, part) {
					t.Errorf("message %q lacks %q", p.Message, part)
				}
			}
		})
	}
}

// settleSpec is a DomainByDomain spec over zones a, b, c in that order with
// the given settle window (nil: the default).
func settleSpec(settle *int32) *policyv1alpha1.TopologyDisruptionBudgetSpec {
	s := rolloutSpec(policyv1alpha1.DomainByDomain, "zone-a", "zone-b", "zone-c")
	s.Rollout.SettleSeconds = settle
	return s
}

func TestPlanRolloutSettleWindow(t *testing.T) {
	three := []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 2, 1), budgetRow("zone-b", 2, 2, 1), budgetRow("zone-c", 2, 2, 1)}
	// Only zone-c's workload has its new revision yet.
	onlyC := func() []RolloutPod {
		return rpods(rp("zone-a-0", "zone-a").updated(), rp("zone-a-1", "zone-a").updated(),
			rp("zone-b-0", "zone-b").updated(), rp("zone-b-1", "zone-b").updated(),
			rp("zone-c-0", "zone-c"), rp("zone-c-1", "zone-c"))
	}
	complete := &policyv1alpha1.RolloutStatus{Domains: []policyv1alpha1.RolloutDomainStatus{
		domainRow("zone-a", 2, 2, "Complete", tp(at(-time.Hour))), domainRow("zone-b", 2, 2, "Complete", tp(at(-time.Hour))),
		domainRow("zone-c", 2, 2, "Complete", tp(at(-time.Hour))),
	}}
	changedAt := func(prev *policyv1alpha1.RolloutStatus, t time.Time) *policyv1alpha1.RolloutStatus {
		out := prev.DeepCopy()
		out.LastRevisionChangeTime = &metav1.Time{Time: t}
		return out
	}
	cases := []struct {
		name        string
		spec        *policyv1alpha1.TopologyDisruptionBudgetSpec
		pods        []RolloutPod
		previous    *policyv1alpha1.RolloutStatus
		newRev      bool
		workloads   int
		now         time.Time
		wantEvict   []string
		wantPhases  map[string]policyv1alpha1.RolloutPhase
		wantCurrent string
		wantReason  string
		wantUntil   *time.Time
		wantChanged *time.Time
		wantStarted []string
	}{
		{
			name: "a new revision of one of several driven workloads starts no domain and evicts nothing during the window",
			spec: settleSpec(nil), pods: onlyC(), previous: complete, newRev: true, workloads: 3, now: t0,
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Complete", "zone-b": "Complete", "zone-c": "Pending"},
			wantCurrent: "zone-c", wantReason: policyv1alpha1.ReasonRolloutSettling,
			wantUntil: tp(at(DefaultSettle)), wantChanged: tp(t0),
		},
		{
			name: "the window is read back from the status: an operator restarted within it still waits",
			spec: settleSpec(nil), pods: onlyC(), previous: changedAt(complete, t0), workloads: 3, now: at(9 * time.Second),
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Complete", "zone-b": "Complete", "zone-c": "Pending"},
			wantCurrent: "zone-c", wantReason: policyv1alpha1.ReasonRolloutSettling,
			wantUntil: tp(at(DefaultSettle)), wantChanged: tp(t0),
		},
		{
			name: "once the revisions have settled the first outdated domain in order starts",
			spec: settleSpec(nil), pods: onlyC(), previous: changedAt(complete, t0), workloads: 3, now: at(DefaultSettle),
			wantEvict:   []string{"zone-c-0"},
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Complete", "zone-b": "Complete", "zone-c": "Progressing"},
			wantCurrent: "zone-c", wantReason: policyv1alpha1.ReasonRolloutUpdating, wantChanged: tp(t0),
			wantStarted: []string{"zone-c"},
		},
		{
			name: "a further revision change restarts the window",
			spec: settleSpec(nil), previous: changedAt(complete, t0), newRev: true, workloads: 3, now: at(8 * time.Second),
			pods: rpods(rp("zone-a-0", "zone-a").updated(), rp("zone-a-1", "zone-a").updated(),
				rp("zone-b-0", "zone-b"), rp("zone-b-1", "zone-b"), rp("zone-c-0", "zone-c"), rp("zone-c-1", "zone-c")),
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Complete", "zone-b": "Pending", "zone-c": "Pending"},
			wantCurrent: "zone-b", wantReason: policyv1alpha1.ReasonRolloutSettling,
			wantUntil: tp(at(8*time.Second + DefaultSettle)), wantChanged: tp(at(8 * time.Second)),
		},
		{
			name: "settleSeconds sets the window",
			spec: settleSpec(ptr.To[int32](30)), pods: onlyC(), previous: changedAt(complete, t0), workloads: 3, now: at(20 * time.Second),
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Complete", "zone-b": "Complete", "zone-c": "Pending"},
			wantCurrent: "zone-c", wantReason: policyv1alpha1.ReasonRolloutSettling,
			wantUntil: tp(at(30 * time.Second)), wantChanged: tp(t0),
		},
		{
			name: "settleSeconds 0 turns the window off",
			spec: settleSpec(ptr.To[int32](0)), pods: onlyC(), previous: complete, newRev: true, workloads: 3, now: t0,
			wantEvict:   []string{"zone-c-0"},
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Complete", "zone-b": "Complete", "zone-c": "Progressing"},
			wantCurrent: "zone-c", wantReason: policyv1alpha1.ReasonRolloutUpdating, wantChanged: tp(t0),
			wantStarted: []string{"zone-c"},
		},
		{
			name: "a single OnDelete workload does not wait: its new revision covers all its pods at once",
			spec: settleSpec(nil), pods: onlyC(), previous: complete, newRev: true, workloads: 1, now: t0,
			wantEvict:   []string{"zone-c-0"},
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Complete", "zone-b": "Complete", "zone-c": "Progressing"},
			wantCurrent: "zone-c", wantReason: policyv1alpha1.ReasonRolloutUpdating, wantChanged: tp(t0),
			wantStarted: []string{"zone-c"},
		},
		{
			name: "a domain already being updated keeps its phase during a new window but evicts nothing",
			spec: settleSpec(nil), newRev: true, workloads: 3, now: t0,
			pods: rpods(rp("zone-a-0", "zone-a").updated(), rp("zone-a-1", "zone-a"),
				rp("zone-b-0", "zone-b"), rp("zone-b-1", "zone-b"), rp("zone-c-0", "zone-c"), rp("zone-c-1", "zone-c")),
			previous: &policyv1alpha1.RolloutStatus{CurrentDomain: "zone-a", Domains: []policyv1alpha1.RolloutDomainStatus{
				domainRow("zone-a", 1, 2, "Progressing", tp(at(-5*time.Second))), domainRow("zone-b", 2, 2, "Complete", nil),
				domainRow("zone-c", 2, 2, "Complete", nil),
			}},
			wantPhases:  map[string]policyv1alpha1.RolloutPhase{"zone-a": "Progressing", "zone-b": "Pending", "zone-c": "Pending"},
			wantCurrent: "zone-a", wantReason: policyv1alpha1.ReasonRolloutSettling,
			wantUntil: tp(at(DefaultSettle)), wantChanged: tp(t0),
		},
		{
			name: "AllDomains waits for the window too",
			spec: func() *policyv1alpha1.TopologyDisruptionBudgetSpec {
				s := settleSpec(nil)
				s.Rollout.Strategy = policyv1alpha1.AllDomains
				return s
			}(),
			pods: onlyC(), previous: complete, newRev: true, workloads: 3, now: t0,
			wantPhases: map[string]policyv1alpha1.RolloutPhase{"zone-a": "Complete", "zone-b": "Complete", "zone-c": "Pending"},
			wantReason: policyv1alpha1.ReasonRolloutSettling, wantUntil: tp(at(DefaultSettle)), wantChanged: tp(t0),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := PlanRollout(RolloutInput{
				Spec: tc.spec, Budget: three, Pods: tc.pods, Previous: tc.previous, NewRevision: tc.newRev,
				OnDeleteWorkloads: tc.workloads, Now: tc.now,
			})
			if diff := cmp.Diff(tc.wantEvict, plan.Evict, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("evictions (-want +got):\n%s", diff)
			}
			got := map[string]policyv1alpha1.RolloutPhase{}
			for _, d := range plan.Status.Domains {
				got[d.Name] = d.Phase
			}
			if diff := cmp.Diff(tc.wantPhases, got); diff != "" {
				t.Errorf("phases (-want +got):\n%s", diff)
			}
			if plan.Status.CurrentDomain != tc.wantCurrent {
				t.Errorf("current domain = %q, want %q", plan.Status.CurrentDomain, tc.wantCurrent)
			}
			if got := plan.Conditions[0].Reason; got != tc.wantReason {
				t.Errorf("RolloutProgressing reason = %s, want %s (%s)", got, tc.wantReason, plan.Conditions[0].Message)
			}
			if diff := cmp.Diff(tc.wantUntil, plan.SettleUntil); diff != "" {
				t.Errorf("settle until (-want +got):\n%s", diff)
			}
			if tc.wantUntil != nil && (plan.RecheckAt == nil || plan.RecheckAt.After(*tc.wantUntil)) {
				t.Errorf("recheck at %v, want by the end of the window %v", plan.RecheckAt, *tc.wantUntil)
			}
			var changed *time.Time
			if c := plan.Status.LastRevisionChangeTime; c != nil {
				changed = &c.Time
			}
			if diff := cmp.Diff(tc.wantChanged, changed); diff != "" {
				t.Errorf("lastRevisionChangeTime (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStarted, plan.Started); diff != "" {
				t.Errorf("started (-want +got):\n%s", diff)
			}
		})
	}
}

// The progress deadline of a domain being updated does not run while the
// settle window holds every eviction back.
func TestPlanRolloutDeadlineWaitsForTheWindow(t *testing.T) {
	spec := settleSpec(ptr.To[int32](30)) // deadline 60 s
	pods := rpods(rp("zone-a-0", "zone-a").updated(), rp("zone-a-1", "zone-a"), rp("zone-b-0", "zone-b"))
	budget := []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 2, 1), budgetRow("zone-b", 1, 1, 1)}
	prev := &policyv1alpha1.RolloutStatus{
		CurrentDomain:          "zone-a",
		LastRevisionChangeTime: &metav1.Time{Time: t0},
		Domains: []policyv1alpha1.RolloutDomainStatus{
			domainRow("zone-a", 1, 2, "Progressing", tp(t0)), domainRow("zone-b", 0, 1, "Pending", nil),
		},
	}
	plan := PlanRollout(RolloutInput{Spec: spec, Budget: budget, Pods: pods, Previous: prev, OnDeleteWorkloads: 2, Now: at(70 * time.Second)})
	if len(plan.Stalled) > 0 {
		t.Fatalf("stalled %v at t0+70s: the deadline (60 s) runs from the end of the window (t0+30s)", plan.Stalled)
	}
	if diff := cmp.Diff([]string{"zone-a-1"}, plan.Evict); diff != "" {
		t.Errorf("evictions (-want +got):\n%s", diff)
	}
	plan = PlanRollout(RolloutInput{Spec: spec, Budget: budget, Pods: pods, Previous: prev, OnDeleteWorkloads: 2, Now: at(90 * time.Second)})
	if len(plan.Stalled) != 1 {
		t.Errorf("not stalled at t0+90s, 60 s after the window: %v", plan.Status.Domains)
	}
}

// A domain whose update started stays current until it is complete, even
// when a domain earlier in the order gets outdated pods meanwhile.
func TestPlanRolloutKeepsTheStartedDomain(t *testing.T) {
	budget := []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 2, 1), budgetRow("zone-b", 2, 2, 1), budgetRow("zone-c", 2, 2, 1)}
	// zone-c is half updated; zone-a's workload has just been updated.
	pods := rpods(rp("zone-a-0", "zone-a"), rp("zone-a-1", "zone-a"),
		rp("zone-b-0", "zone-b").updated(), rp("zone-b-1", "zone-b").updated(),
		rp("zone-c-0", "zone-c").updated(), rp("zone-c-1", "zone-c"))
	for _, phase := range []policyv1alpha1.RolloutPhase{"Progressing", "Stalled", "Paused"} {
		t.Run(string(phase), func(t *testing.T) {
			prev := &policyv1alpha1.RolloutStatus{CurrentDomain: "zone-c", Domains: []policyv1alpha1.RolloutDomainStatus{
				domainRow("zone-a", 2, 2, "Complete", tp(at(-time.Hour))), domainRow("zone-b", 2, 2, "Complete", tp(at(-time.Hour))),
				domainRow("zone-c", 1, 2, phase, tp(at(-time.Second))),
			}}
			plan := PlanRollout(RolloutInput{Spec: settleSpec(nil), Budget: budget, Pods: pods, Previous: prev, OnDeleteWorkloads: 3, Now: t0})
			if plan.Status.CurrentDomain != "zone-c" {
				t.Errorf("current domain = %q, want zone-c, whose update started", plan.Status.CurrentDomain)
			}
			if diff := cmp.Diff([]string{"zone-c-1"}, plan.Evict); diff != "" {
				t.Errorf("evictions (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("paused before it started", func(t *testing.T) {
		spec := settleSpec(nil)
		spec.Rollout.Paused = true
		prev := &policyv1alpha1.RolloutStatus{CurrentDomain: "zone-c", Domains: []policyv1alpha1.RolloutDomainStatus{
			domainRow("zone-a", 2, 2, "Complete", tp(at(-time.Hour))), domainRow("zone-b", 2, 2, "Complete", tp(at(-time.Hour))),
			domainRow("zone-c", 0, 2, "Paused", nil),
		}}
		pods := rpods(rp("zone-a-0", "zone-a"), rp("zone-a-1", "zone-a"),
			rp("zone-b-0", "zone-b").updated(), rp("zone-b-1", "zone-b").updated(),
			rp("zone-c-0", "zone-c"), rp("zone-c-1", "zone-c"))
		plan := PlanRollout(RolloutInput{Spec: spec, Budget: budget, Pods: pods, Previous: prev, OnDeleteWorkloads: 3, Now: t0})
		if plan.Status.CurrentDomain != "zone-a" {
			t.Errorf("current domain = %q, want zone-a: nothing was evicted in zone-c, so the order decides", plan.Status.CurrentDomain)
		}
	})
}

// rolloutSim plays, in fake time, the per-zone OnDelete workloads of a
// budget (one workload per zone, perZone pods each, maxUnavailable 1) and
// their controllers around PlanRollout: each workload gets its new revision
// at the time given; an evicted pod goes away after 500 ms and its
// replacement, at the workload's revision, becomes Ready readyAfter later.
// The status goes through JSON between passes, as through the API server
// (times to the second).
type rolloutSim struct {
	spec       *policyv1alpha1.TopologyDisruptionBudgetSpec
	perZone    int
	readyAfter time.Duration
	publish    map[string]time.Duration // zone -> when its workload gets revision 2

	rev  map[string]int
	pods map[string]*simPod
	// evictions are the zones of the evicted pods, in order; done is when
	// each zone first had every pod updated and Ready.
	evictions []string
	evictedAt map[string][]time.Time
	done      map[string]time.Time
}

type simPod struct {
	zone             string
	rev              int
	ready            bool
	evictedAt, since time.Time
}

func (s *rolloutSim) run(t *testing.T, zones []string) {
	t.Helper()
	s.rev, s.pods, s.evictedAt, s.done = map[string]int{}, map[string]*simPod{}, map[string][]time.Time{}, map[string]time.Time{}
	for _, z := range zones {
		s.rev[z] = 1
		for i := range s.perZone {
			s.pods[z+"-"+itoa(i)] = &simPod{zone: z, rev: 1, ready: true}
		}
	}
	var prev *policyv1alpha1.RolloutStatus
	for now := t0; now.Before(at(10 * time.Minute)); now = now.Add(250 * time.Millisecond) {
		newRev := false
		for z, when := range s.publish {
			if s.rev[z] == 1 && !now.Before(at(when)) {
				s.rev[z], newRev = 2, true
			}
		}
		var in []RolloutPod
		rows := []policyv1alpha1.DomainStatus{}
		allDone := true
		for _, z := range zones {
			healthy := int32(0)
			updated := 0
			for i := range s.perZone {
				name := z + "-" + itoa(i)
				p := s.pods[name]
				switch {
				case !p.evictedAt.IsZero() && now.Sub(p.evictedAt) >= 500*time.Millisecond:
					s.pods[name] = &simPod{zone: z, rev: s.rev[z], since: now}
					p = s.pods[name]
				case p.evictedAt.IsZero() && !p.ready && now.Sub(p.since) >= s.readyAfter:
					p.ready = true
				}
				evicted := !p.evictedAt.IsZero()
				if p.ready && !evicted {
					healthy++
					if p.rev == s.rev[z] {
						updated++
					}
				}
				in = append(in, RolloutPod{Name: name, Domain: z, Updated: p.rev == s.rev[z], Ready: p.ready && !evicted, Deleting: evicted})
			}
			if updated == s.perZone && s.done[z].IsZero() {
				s.done[z] = now
			}
			allDone = allDone && updated == s.perZone
			desired := int32(s.perZone - 1)
			rows = append(rows, policyv1alpha1.DomainStatus{Name: z, ExpectedPods: int32(s.perZone), CurrentHealthy: healthy,
				DesiredHealthy: desired, DisruptionsAllowed: max(0, healthy-desired)})
		}
		if allDone && len(s.publish) == countNewRevisions(s.rev) {
			return
		}
		plan := PlanRollout(RolloutInput{Spec: s.spec, Budget: rows, Pods: in, Previous: prev, NewRevision: newRev, OnDeleteWorkloads: len(zones), Now: now})
		for _, name := range plan.Evict {
			p := s.pods[name]
			p.evictedAt, p.ready = now, false
			s.evictions = append(s.evictions, p.zone)
			s.evictedAt[p.zone] = append(s.evictedAt[p.zone], now)
		}
		prev = throughAPI(t, plan.Status)
	}
	t.Fatalf("the rollout did not complete in 10 minutes: evictions %v", s.evictions)
}

func countNewRevisions(rev map[string]int) int {
	n := 0
	for _, r := range rev {
		if r > 1 {
			n++
		}
	}
	return n
}

// throughAPI is the status as a later pass reads it back.
func throughAPI(t *testing.T, st policyv1alpha1.RolloutStatus) *policyv1alpha1.RolloutStatus {
	t.Helper()
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var out policyv1alpha1.RolloutStatus
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// expectZonesInOrder checks that the zones were updated one after the
// other in order: every pod of a zone was evicted only after every pod of
// the zone before it was updated and Ready.
func (s *rolloutSim) expectZonesInOrder(t *testing.T, order []string) {
	t.Helper()
	var want []string
	for _, z := range order {
		for range s.perZone {
			want = append(want, z)
		}
	}
	if diff := cmp.Diff(want, s.evictions); diff != "" {
		t.Errorf("zones of the evictions, in order (-want +got):\n%s", diff)
	}
	for i := 1; i < len(order); i++ {
		// The pass that sees a zone done may start the next one.
		if first := s.evictedAt[order[i]]; len(first) > 0 && first[0].Before(s.done[order[i-1]]) {
			t.Errorf("%s started at t0+%s, before %s was done at t0+%s", order[i], first[0].Sub(t0), order[i-1], s.done[order[i-1]].Sub(t0))
		}
	}
}

// Three per-zone workloads updated one after the other, in an order other
// than domainOrder, a second or two apart (kubectl apply of three files, a
// Helm upgrade, a GitOps sync): the zones are still updated strictly in
// domainOrder.
func TestPlanRolloutStaggeredUpdatesKeepDomainOrder(t *testing.T) {
	order := []string{"zone-a", "zone-b", "zone-c"}
	for _, gaps := range [][2]time.Duration{
		{300 * time.Millisecond, 300 * time.Millisecond},
		{2 * time.Second, 2 * time.Second},
		{5 * time.Second, 9 * time.Second},
	} {
		t.Run(fmt.Sprintf("zone-c, then zone-b after %s, then zone-a after %s", gaps[0], gaps[1]), func(t *testing.T) {
			s := &rolloutSim{
				spec: settleSpec(nil), perZone: 3, readyAfter: 2 * time.Second,
				publish: map[string]time.Duration{"zone-c": 0, "zone-b": gaps[0], "zone-a": gaps[0] + gaps[1]},
			}
			s.run(t, order)
			s.expectZonesInOrder(t, order)
			if first := s.evictedAt["zone-a"][0]; first.Before(at(gaps[0] + gaps[1] + DefaultSettle - time.Second)) {
				t.Errorf("first eviction in zone-a at t0+%s, within the settle window of the last change", first.Sub(t0))
			}
		})
	}
}

// A workload updated after its zone's turn, once the rollout has started
// elsewhere: the zone being updated is finished first, then the late zone
// follows; no zone is left half updated while another one starts.
func TestPlanRolloutLateUpdateDoesNotInterleaveZones(t *testing.T) {
	s := &rolloutSim{
		spec: settleSpec(nil), perZone: 8, readyAfter: 3 * time.Second,
		// zone-c takes about 30 s; zone-a's workload changes while it is
		// half done.
		publish: map[string]time.Duration{"zone-c": 0, "zone-a": 20 * time.Second},
	}
	s.run(t, []string{"zone-a", "zone-b", "zone-c"})
	if len(s.evictedAt["zone-b"]) != 0 {
		t.Errorf("zone-b, whose workload did not change, had pods evicted")
	}
	s.expectZonesInOrder(t, []string{"zone-c", "zone-a"})
	if c := s.evictedAt["zone-c"]; !c[0].Before(at(20*time.Second)) || c[len(c)-1].Before(at(20*time.Second)) {
		t.Fatalf("the test does not exercise a late update: zone-c was evicted from t0+%s to t0+%s, not around zone-a's change at t0+20s",
			c[0].Sub(t0), c[len(c)-1].Sub(t0))
	}
}

func TestPlanRolloutNotHandedOver(t *testing.T) {
	budget := []policyv1alpha1.DomainStatus{budgetRow("zone-a", 2, 2, 1), budgetRow("zone-b", 1, 1, 1)}
	cases := []struct {
		name            string
		pods            []RolloutPod
		notHandedOver   []string
		wantComplete    bool
		wantProgressing metav1.ConditionStatus
		wantDone        metav1.ConditionStatus
		wantReason      string
		wantEvict       []string
	}{
		{
			name:          "nothing driven, a workload not handed over: not complete, and the message says how to hand it over",
			notHandedOver: []string{"StatefulSet db"},
			wantComplete:  true, wantProgressing: metav1.ConditionFalse, wantDone: metav1.ConditionFalse,
			wantReason: policyv1alpha1.ReasonWorkloadNotHandedOver,
		},
		{
			name:          "every driven pod updated, another workload not handed over: not complete",
			pods:          rpods(rp("zone-a-0", "zone-a").updated(), rp("zone-b-0", "zone-b").updated()),
			notHandedOver: []string{"StatefulSet db"},
			wantComplete:  true, wantProgressing: metav1.ConditionFalse, wantDone: metav1.ConditionFalse,
			wantReason: policyv1alpha1.ReasonWorkloadNotHandedOver,
		},
		{
			name:            "updating the driven workloads, another workload not handed over: updating, and the message names it",
			pods:            rpods(rp("zone-a-0", "zone-a"), rp("zone-b-0", "zone-b")),
			notHandedOver:   []string{"StatefulSet db"},
			wantProgressing: metav1.ConditionTrue, wantDone: metav1.ConditionFalse,
			wantReason: policyv1alpha1.ReasonRolloutUpdating, wantEvict: []string{"zone-a-0"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := PlanRollout(RolloutInput{
				Spec: rolloutSpec(policyv1alpha1.DomainByDomain), Budget: budget, Pods: tc.pods, Now: t0,
				NotHandedOver: tc.notHandedOver, BudgetName: "ingesters",
			})
			if plan.Complete != tc.wantComplete {
				t.Errorf("complete = %v, want %v", plan.Complete, tc.wantComplete)
			}
			if diff := cmp.Diff(tc.wantEvict, plan.Evict, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("evictions (-want +got):\n%s", diff)
			}
			p, c := plan.Conditions[0], plan.Conditions[1]
			if p.Status != tc.wantProgressing || c.Status != tc.wantDone || p.Reason != tc.wantReason || c.Reason != tc.wantReason {
				t.Errorf("conditions = %s/%s %s, %s/%s %s; want %s/%s %s", p.Type, p.Status, p.Reason, c.Type, c.Status, c.Reason,
					tc.wantProgressing, tc.wantDone, tc.wantReason)
			}
			for _, part := range []string{"StatefulSet db", "kubectl annotate statefulset db policy.tdb.dev/rollout-budget=ingesters"} {
				if !strings.Contains(p.Message, part) {
					t.Errorf("message %q lacks %q", p.Message, part)
				}
			}
		})
	}
}

func TestNotEnforcedRolloutConditions(t *testing.T) {
	conds := NotEnforcedRolloutConditions("tdb-system")
	if len(conds) != 2 {
		t.Fatalf("conditions = %v", conds)
	}
	for _, c := range conds {
		if c.Status != metav1.ConditionFalse || c.Reason != policyv1alpha1.ReasonNotEnforced || !strings.Contains(c.Message, "tdb-system") {
			t.Errorf("%s = %s/%s %q, want False/%s naming the namespace", c.Type, c.Status, c.Reason, c.Message, policyv1alpha1.ReasonNotEnforced)
		}
	}
}
