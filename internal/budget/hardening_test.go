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
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// A Deployment with one replica stuck Pending since before any eviction:
// evicting and replacing its other pods one after another must not pile up
// records. Each record lives while its own replacement is missing, and the
// pod that was Pending before every grant counts against every domain.
func TestRecordsStayBoundedWithAPermanentlyPendingReplica(t *testing.T) {
	const rs = types.UID("rs")
	stuck := pod("stuck").Pending().ControlledBy(replicaSet(rs)).CreatedAt(at(-time.Hour))
	budget := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1))
	zones := []string{"n1", "n3", "n4"}
	// Six pods, two per zone, plus the stuck one: replicas 7.
	running := []*builders.PodWrapper{}
	for i := 0; i < 6; i++ {
		running = append(running, pod(fmt.Sprintf("p-%d", i)).OnNode(zones[i%3]).Ready().ControlledBy(replicaSet(rs)))
	}
	var records []policyv1alpha1.DisruptedPod
	for i := 0; i < 50; i++ {
		now := at(time.Duration(i) * time.Minute)
		victim := running[i%6].Obj()
		domain := map[string]string{"n1": "zone-a", "n3": "zone-b", "n4": "zone-c"}[victim.Spec.NodeName]
		records = append(records, policyv1alpha1.DisruptedPod{Name: victim.Name, UID: victim.UID, Domain: domain,
			ControllerUID: rs, Time: metav1.NewTime(now)})
		// The evicted pod is gone and its replacement not created yet: the
		// new record is in flight and must be kept.
		rest := append(append([]*builders.PodWrapper{}, running[:i%6]...), running[i%6+1:]...)
		w := world{tdb: budget.DisruptedPods(records...), nodes: threeZones(), pods: append(rest, stuck), owners: []Owner{owner(rs, 7)}, now: now.Add(time.Second)}
		res := Compute(w.input())
		if len(res.DisruptedPods) != 1 || res.DisruptedPods[0].Name != victim.Name {
			t.Fatalf("eviction %d in flight: records %v, want only the one of %s", i, names(res.DisruptedPods), victim.Name)
		}
		// Every domain expects its two pods and the stuck one: the pod in
		// flight is expected in its own domain, no more.
		for _, d := range res.Domains {
			if want := int32(3); d.ExpectedPods != want {
				t.Fatalf("eviction %d in flight: %s expects %d, want %d", i, d.Name, d.ExpectedPods, want)
			}
		}
		// The replacement (a new name) is scheduled in the same zone.
		repl := pod(fmt.Sprintf("r-%d", i)).OnNode(victim.Spec.NodeName).Ready().ControlledBy(replicaSet(rs)).CreatedAt(now.Add(time.Second))
		running[i%6] = repl
		w.pods = append(append([]*builders.PodWrapper{}, running...), stuck)
		w.tdb = budget.DisruptedPods(res.DisruptedPods...)
		res = Compute(w.input())
		if len(res.DisruptedPods) != 0 {
			t.Fatalf("eviction %d replaced: records %v, want none (only the stuck replica is missing, and it predates them)", i, names(res.DisruptedPods))
		}
		records = res.DisruptedPods
	}
}

// Several records of one controller in one domain, fewer missing pods:
// the domain keeps no more records than missing pods it may explain, the
// newest, and its numbers are those of keeping them all.
func TestRecordsAreCappedPerDomainLosslessly(t *testing.T) {
	const rs = types.UID("rs")
	recs := []policyv1alpha1.DisruptedPod{
		record("a-7", "zone-a", rs, at(-3*time.Minute)), record("a-8", "zone-a", rs, at(-2*time.Minute)),
		record("a-9", "zone-a", rs, at(-time.Minute)), record("b-9", "zone-b", rs, at(-time.Minute)),
	}
	// replicas 6, 4 scheduled: 2 missing.
	ps := append(readyPods("a", "n1", rs, 2), readyPods("b", "n3", rs, 2)...)
	w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).DisruptedPods(recs...), nodes: threeZones(), pods: ps, owners: []Owner{owner(rs, 6)}}
	got := summarize(Compute(w.input()))
	want := withRows(row("zone-a", 4, 2, 3, 0), row("zone-b", 3, 2, 2, 0)).withRecords("a-8@zone-a", "a-9@zone-a", "b-9@zone-b")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Compute() (-want +got):\n%s", diff)
	}
}

// A pod whose node object is gone runs nowhere: it is no domain error (which
// would refuse every eviction of the budget), it counts as gone in the domain
// it was in, and drains of the other domains go on.
func TestPodOnADeletedNode(t *testing.T) {
	const sts = types.UID("sts")
	three := func(gone *builders.PodWrapper) []*builders.PodWrapper {
		return []*builders.PodWrapper{
			pod("s-0").OnNode("n1").Ready().ControlledBy(replicaSet(sts)), pod("s-1").OnNode("n3").Ready().ControlledBy(replicaSet(sts)),
			pod("s-2").OnNode("n4").Ready().ControlledBy(replicaSet(sts)), gone,
		}
	}
	// s-3 was on n2 (zone-a), a node that is gone.
	onGone := func() *builders.PodWrapper { return pod("s-3").OnNode("n2").Ready().ControlledBy(replicaSet(sts)) }
	nodes := []*builders.NodeWrapper{node("n1").Zone("zone-a"), node("n3").Zone("zone-b"), node("n4").Zone("zone-c")}
	goneNodes := func(name string) (map[string]string, bool) {
		if name == "n2" {
			return map[string]string{zoneKey: "zone-a"}, true
		}
		return nil, false
	}
	tests := []struct {
		name   string
		pod    *builders.PodWrapper
		gone   func(string) (map[string]string, bool)
		budget *builders.BudgetWrapper
		want   summary
	}{
		{name: "the deleted node's last labels place it", pod: onGone(), gone: goneNodes, budget: tdb("web"),
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 1, 1, 0, 1), row("zone-c", 1, 1, 0, 1))},
		{name: "its eviction record places it", pod: onGone(), budget: tdb("web").DisruptedPods(record("s-3", "zone-a", sts, at(-time.Second))),
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 1, 1, 0, 1), row("zone-c", 1, 1, 0, 1)).withRecords("s-3@zone-a")},
		{name: "its topology label (PodTopologyLabels) places it", pod: onGone().Labels(map[string]string{"app": "web", zoneKey: "zone-a"}), budget: tdb("web"),
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 1, 1, 0, 1), row("zone-c", 1, 1, 0, 1))},
		{name: "nothing known: missing in every domain, still no domain error", pod: onGone(), budget: tdb("web"),
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 2, 1, 1, 0), row("zone-c", 2, 1, 1, 0))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tc.budget.TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)), nodes: nodes, pods: three(tc.pod), owners: []Owner{owner(sts, 4)}}
			in := w.input()
			in.GoneNodes = tc.gone
			if diff := cmp.Diff(tc.want, summarize(Compute(in))); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
	// A node that exists without the label is still a domain error.
	w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)), nodes: append(nodes, node("n2")), pods: three(onGone()), owners: []Owner{owner(sts, 4)}}
	res := Compute(w.input())
	if reason, _ := res.Blocked(); reason != policyv1alpha1.ReasonDomainError {
		t.Errorf("an existing node without the label: blocked %q, want DomainError", reason)
	}
	// The webhook's view: the domain of the pod, or ErrNodeGone.
	b := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).Obj()
	if covered, d, err := Locate(b, onGone().Obj(), nodeLookup(nodes...), goneNodes); !covered || d != "zone-a" || err != nil {
		t.Errorf("Locate(last labels) = %v, %q, %v; want covered in zone-a", covered, d, err)
	}
	if covered, d, err := Locate(b, onGone().Obj(), nodeLookup(nodes...), nil); !covered || d != "" || err == nil {
		t.Errorf("Locate(nothing known) = %v, %q, %v; want covered with ErrNodeGone", covered, d, err)
	}
}

// A record's age is measured from when the expiring process first saw it,
// not from the grant time another replica's clock wrote; past its time it is
// dropped only once a live read confirmed it a phantom.
func TestRecordAgeAndConfirmation(t *testing.T) {
	const rs = types.UID("rs")
	ps := []*builders.PodWrapper{pod("a-0").OnNode("n1").Ready().ControlledBy(replicaSet(rs)), pod("a-1").OnNode("n1").Ready().ControlledBy(replicaSet(rs)), pod("a-2").OnNode("n1").Ready().ControlledBy(replicaSet(rs))}
	// The granting replica's clock was two minutes behind: by the grant
	// time the record is long expired.
	rec := record("a-0", "zone-a", rs, at(-2*time.Minute))
	base := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).DisruptedPods(rec), nodes: threeZones(), pods: ps, owners: []Owner{owner(rs, 3)}}
	protected := withRows(row("zone-a", 3, 2, 2, 0)).withRecords("a-0@zone-a")

	in := base.input()
	in.RecordTimeout = 20 * time.Second
	in.RecordSeen = map[RecordKey]time.Time{KeyOf(rec): at(-5 * time.Second)}
	in.ConfirmExpiry = true
	if diff := cmp.Diff(protected, summarize(Compute(in))); diff != "" {
		t.Errorf("first seen 5 s ago (-want +got):\n%s", diff)
	}
	in.RecordSeen = map[RecordKey]time.Time{}
	if diff := cmp.Diff(protected, summarize(Compute(in))); diff != "" {
		t.Errorf("never seen before: first seen now (-want +got):\n%s", diff)
	}
	// Past its time by the first-seen clock: kept until confirmed.
	in.RecordSeen = map[RecordKey]time.Time{KeyOf(rec): at(-30 * time.Second)}
	res := Compute(in)
	if diff := cmp.Diff(protected, summarize(res)); diff != "" {
		t.Errorf("past its time, unconfirmed (-want +got):\n%s", diff)
	}
	if len(res.Unconfirmed) != 1 || res.Unconfirmed[0].Name != "a-0" || res.RecheckAt == nil {
		t.Errorf("Unconfirmed = %v, RecheckAt = %v; want a-0 and a recheck", res.Unconfirmed, res.RecheckAt)
	}
	in.Phantoms = map[RecordKey]bool{KeyOf(rec): true}
	got := summarize(Compute(in))
	want := withRows(row("zone-a", 3, 3, 2, 1))
	want.ExpiredRecords = []string{"a-0"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("confirmed phantom (-want +got):\n%s", diff)
	}
}

// A budget whose selector does not parse (stored before the CRD refused
// such selectors) blocks only the pods it could select.
func TestBrokenSelectorCoversOnlyWhatItMightSelect(t *testing.T) {
	broken := func(sel *policyv1alpha1.LabelSelector) *policyv1alpha1.TopologyDisruptionBudget {
		return tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).Selector(sel).Obj()
	}
	spaceValue := &policyv1alpha1.LabelSelector{MatchLabels: map[string]policyv1alpha1.LabelValue{"app": "web", "tier": "a b"}}
	badExpr := &policyv1alpha1.LabelSelector{MatchLabels: map[string]policyv1alpha1.LabelValue{"app": "web"},
		MatchExpressions: []policyv1alpha1.LabelSelectorRequirement{{Key: "bad key", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	tests := []struct {
		name        string
		tdb         *policyv1alpha1.TopologyDisruptionBudget
		pod         *builders.PodWrapper
		wantCovered bool
	}{
		{"another app is not touched", broken(spaceValue), pod("x").Labels(map[string]string{"app": "db"}).OnNode("n1"), false},
		{"a pod without the label is not touched", broken(badExpr), pod("x").Labels(map[string]string{"app": "db"}).OnNode("n1"), false},
		{"a pod the readable part selects is refused", broken(badExpr), pod("x").Labels(map[string]string{"app": "web"}).OnNode("n1"), true},
		{"another namespace is never touched", broken(badExpr), pod("x").Namespace("other").Labels(map[string]string{"app": "web"}).OnNode("n1"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			covered, _, err := DomainOf(tc.tdb, tc.pod.Obj(), nodeLookup(threeZones()...))
			if covered != tc.wantCovered {
				t.Errorf("covered = %v, want %v (err %v)", covered, tc.wantCovered, err)
			}
			if covered && err == nil {
				t.Errorf("covered by a broken budget without an error")
			}
		})
	}
	// The budget itself says SyncFailed, naming the field.
	w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).Selector(spaceValue), nodes: threeZones()}
	res := Compute(w.input())
	reason, msg := res.Blocked()
	if reason != policyv1alpha1.ReasonSyncFailed || !contains(msg, "spec.selector") {
		t.Errorf("Blocked() = %q, %q; want SyncFailed naming spec.selector", reason, msg)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func names(rs []policyv1alpha1.DisruptedPod) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}

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

// A record whose pod is missing from the cache is dropped only once a live
// read confirmed the pod gone: the webhook may have granted the eviction of
// a pod the cache has not seen yet.
func TestGoneRecordsAreDroppedOnlyWhenConfirmed(t *testing.T) {
	const rs = types.UID("rs")
	rec := record("a-9", "zone-a", rs, at(-time.Second))
	w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).DisruptedPods(rec), nodes: threeZones(),
		pods: readyPods("a", "n1", rs, 3), owners: []Owner{owner(rs, 3)}}
	in := w.input()
	in.ConfirmExpiry = true
	res := Compute(in)
	if len(res.UnconfirmedGone) != 1 || len(res.DisruptedPods) != 1 {
		t.Fatalf("unconfirmed: held %v, records %v; want the record held", names(res.UnconfirmedGone), names(res.DisruptedPods))
	}
	if diff := cmp.Diff(withRows(row("zone-a", 3, 3, 2, 1)).withRecords("a-9@zone-a"), summarize(res)); diff != "" {
		t.Errorf("a held record changes no number (-want +got):\n%s", diff)
	}
	in.GoneConfirmed = map[RecordKey]bool{KeyOf(rec): true}
	if res := Compute(in); len(res.DisruptedPods) != 0 || len(res.UnconfirmedGone) != 0 {
		t.Errorf("confirmed gone: records %v, want none", names(res.DisruptedPods))
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
