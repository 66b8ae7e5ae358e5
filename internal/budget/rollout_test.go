package budget

import (
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
