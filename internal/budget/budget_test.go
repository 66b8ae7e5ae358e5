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
	"errors"
	"strings"
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

// pdbNumbers are the four numbers of a policy/v1 PodDisruptionBudget status.
type pdbNumbers struct {
	Expected, Healthy, Desired, Allowed int32
}

// policyV1 is the arithmetic of the policy/v1 disruption controller
// (pkg/controller/disruption, getExpectedPodCount, countHealthyPods and
// updatePdbStatus), written out independently of this package so that the
// parity test compares two implementations. pods are the selected pods;
// scales maps a controllerRef UID to the controller's scale; disrupted maps
// a pod name to the time its eviction was granted.
func policyV1(spec policyv1alpha1.TopologyDisruptionBudgetSpec, pods []*corev1.Pod, scales map[types.UID]int32,
	disrupted map[string]time.Time, now time.Time) pdbNumbers {
	var n pdbNumbers
	sumScales := func() int32 {
		seen := map[types.UID]bool{}
		var sum int32
		for _, p := range pods {
			ref := metav1.GetControllerOf(p)
			if ref == nil || seen[ref.UID] {
				continue
			}
			seen[ref.UID] = true
			sum += scales[ref.UID]
		}
		return sum
	}
	// roundUp is GetScaledValueFromIntOrPercent(v, total, true).
	roundUp := func(v *intstr.IntOrString, total int32) int32 {
		if v.Type == intstr.Int {
			return v.IntVal
		}
		var pct int32
		for _, c := range v.StrVal[:len(v.StrVal)-1] {
			pct = pct*10 + (c - '0')
		}
		return (pct*total + 99) / 100
	}
	switch {
	case spec.MaxUnavailable != nil:
		n.Expected = sumScales()
		n.Desired = max(0, n.Expected-roundUp(spec.MaxUnavailable, n.Expected))
	case spec.MinAvailable.Type == intstr.Int:
		n.Expected = int32(len(pods))
		n.Desired = spec.MinAvailable.IntVal
	default:
		n.Expected = sumScales()
		n.Desired = roundUp(spec.MinAvailable, n.Expected)
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if t, ok := disrupted[p.Name]; ok && t.Add(testRecordTimeout).After(now) {
			continue
		}
		if isReady(p) {
			n.Healthy++
		}
	}
	n.Allowed = n.Healthy - n.Desired
	if n.Expected <= 0 || n.Allowed <= 0 {
		n.Allowed = 0
	}
	return n
}

// TestComputePlainPDBParity: without topologyKey the budget is one domain
// "all" whose numbers are those policy/v1 computes for the same pods.
func TestComputePlainPDBParity(t *testing.T) {
	const rsA, rsB = types.UID("rs-a"), types.UID("rs-b")
	tenReady := readyPods("w", "n1", rsA, 10)
	tests := []struct {
		name    string
		field   string // "maxUnavailable=…" or "minAvailable=…"
		term    *policyv1alpha1.NodeSelectorTerm
		pods    []*builders.PodWrapper
		scales  map[types.UID]int32
		records []policyv1alpha1.DisruptedPod
		want    pdbNumbers
	}{
		{name: "maxUnavailable int", field: "maxUnavailable=1",
			pods: readyPods("w", "n1", rsA, 5), scales: map[types.UID]int32{rsA: 5},
			want: pdbNumbers{Expected: 5, Healthy: 5, Desired: 4, Allowed: 1}},
		{name: "maxUnavailable 0", field: "maxUnavailable=0",
			pods: readyPods("w", "n1", rsA, 5), scales: map[types.UID]int32{rsA: 5},
			want: pdbNumbers{Expected: 5, Healthy: 5, Desired: 5, Allowed: 0}},
		{name: "maxUnavailable int above expected", field: "maxUnavailable=7",
			pods: readyPods("w", "n1", rsA, 5), scales: map[types.UID]int32{rsA: 5},
			want: pdbNumbers{Expected: 5, Healthy: 5, Desired: 0, Allowed: 5}},
		{name: "maxUnavailable percent exact", field: "maxUnavailable=30%",
			pods: tenReady, scales: map[types.UID]int32{rsA: 10},
			want: pdbNumbers{Expected: 10, Healthy: 10, Desired: 7, Allowed: 3}},
		{name: "maxUnavailable percent rounds up", field: "maxUnavailable=25%",
			pods: tenReady, scales: map[types.UID]int32{rsA: 10},
			want: pdbNumbers{Expected: 10, Healthy: 10, Desired: 7, Allowed: 3}},
		{name: "maxUnavailable 1% of 10 rounds up to 1", field: "maxUnavailable=1%",
			pods: tenReady, scales: map[types.UID]int32{rsA: 10},
			want: pdbNumbers{Expected: 10, Healthy: 10, Desired: 9, Allowed: 1}},
		{name: "maxUnavailable 100%", field: "maxUnavailable=100%",
			pods: tenReady, scales: map[types.UID]int32{rsA: 10},
			want: pdbNumbers{Expected: 10, Healthy: 10, Desired: 0, Allowed: 10}},
		{name: "minAvailable int counts the pods, not the scale", field: "minAvailable=3",
			pods: readyPods("w", "n1", rsA, 5), scales: map[types.UID]int32{rsA: 8},
			want: pdbNumbers{Expected: 5, Healthy: 5, Desired: 3, Allowed: 2}},
		{name: "minAvailable int above the pods", field: "minAvailable=6",
			pods: readyPods("w", "n1", rsA, 5), scales: map[types.UID]int32{rsA: 5},
			want: pdbNumbers{Expected: 5, Healthy: 5, Desired: 6, Allowed: 0}},
		{name: "minAvailable int counts deleting and not-Ready pods as expected", field: "minAvailable=2",
			pods: append(readyPods("w", "n1", rsA, 3), pod("x-0").OnNode("n1").Ready().Deleting(t0).ControlledBy(replicaSet(rsA)),
				pod("x-1").OnNode("n1").NotReady().ControlledBy(replicaSet(rsA))),
			scales: map[types.UID]int32{rsA: 5},
			want:   pdbNumbers{Expected: 5, Healthy: 3, Desired: 2, Allowed: 1}},
		{name: "minAvailable percent rounds up", field: "minAvailable=75%",
			pods: tenReady, scales: map[types.UID]int32{rsA: 10},
			want: pdbNumbers{Expected: 10, Healthy: 10, Desired: 8, Allowed: 2}},
		{name: "minAvailable 0%", field: "minAvailable=0%",
			pods: tenReady, scales: map[types.UID]int32{rsA: 10},
			want: pdbNumbers{Expected: 10, Healthy: 10, Desired: 0, Allowed: 10}},
		{name: "missing pods count as unavailable", field: "maxUnavailable=1",
			pods: readyPods("w", "n1", rsA, 4), scales: map[types.UID]int32{rsA: 6},
			want: pdbNumbers{Expected: 6, Healthy: 4, Desired: 5, Allowed: 0}},
		{name: "missing pods with percent minAvailable", field: "minAvailable=50%",
			pods: readyPods("w", "n1", rsA, 4), scales: map[types.UID]int32{rsA: 6},
			want: pdbNumbers{Expected: 6, Healthy: 4, Desired: 3, Allowed: 1}},
		{name: "unscheduled pod counts as expected, not healthy", field: "maxUnavailable=1",
			pods: append(readyPods("w", "n1", rsA, 3), pod("p-0").Pending().ControlledBy(replicaSet(rsA))), scales: map[types.UID]int32{rsA: 4},
			want: pdbNumbers{Expected: 4, Healthy: 3, Desired: 3, Allowed: 0}},
		{name: "surge: more pods than the scale", field: "maxUnavailable=1",
			pods: readyPods("w", "n1", rsA, 4), scales: map[types.UID]int32{rsA: 3},
			want: pdbNumbers{Expected: 3, Healthy: 4, Desired: 2, Allowed: 2}},
		{name: "scale 0 with running pods allows nothing", field: "maxUnavailable=1",
			pods: readyPods("w", "n1", rsA, 2), scales: map[types.UID]int32{rsA: 0},
			want: pdbNumbers{Expected: 0, Healthy: 2, Desired: 0, Allowed: 0}},
		{name: "no pods at all", field: "maxUnavailable=1",
			want: pdbNumbers{Expected: 0, Healthy: 0, Desired: 0, Allowed: 0}},
		{name: "no pods at all, minAvailable 0", field: "minAvailable=0",
			want: pdbNumbers{Expected: 0, Healthy: 0, Desired: 0, Allowed: 0}},
		{name: "two controllers: sum of their scales", field: "maxUnavailable=20%",
			pods:   append(readyPods("a", "n1", rsA, 3), readyPods("b", "n2", rsB, 2)...),
			scales: map[types.UID]int32{rsA: 3, rsB: 3},
			want:   pdbNumbers{Expected: 6, Healthy: 5, Desired: 4, Allowed: 1}},
		{name: "deleting and not-Ready pods are not healthy", field: "maxUnavailable=2",
			pods: append(readyPods("w", "n1", rsA, 4), pod("x-0").OnNode("n1").Ready().Deleting(t0).ControlledBy(replicaSet(rsA)),
				pod("x-1").OnNode("n1").NotReady().ControlledBy(replicaSet(rsA))),
			scales: map[types.UID]int32{rsA: 6},
			want:   pdbNumbers{Expected: 6, Healthy: 4, Desired: 4, Allowed: 0}},
		{name: "a recorded eviction keeps its pod from counting", field: "maxUnavailable=2",
			pods: readyPods("w", "n1", rsA, 5), scales: map[types.UID]int32{rsA: 5},
			records: []policyv1alpha1.DisruptedPod{record("w-0", AllDomain, rsA, at(-time.Minute))},
			want:    pdbNumbers{Expected: 5, Healthy: 4, Desired: 3, Allowed: 1}},
		{name: "an empty nodeSelectorTerm changes nothing", field: "maxUnavailable=1",
			term: &policyv1alpha1.NodeSelectorTerm{},
			pods: append(readyPods("w", "n1", rsA, 3), pod("p-0").Pending().ControlledBy(replicaSet(rsA))), scales: map[types.UID]int32{rsA: 4},
			want: pdbNumbers{Expected: 4, Healthy: 3, Desired: 3, Allowed: 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tdb("web").DisruptedPods(tc.records...)
			field, value, _ := strings.Cut(tc.field, "=")
			if field == "maxUnavailable" {
				b.MaxUnavailable(intOrPct(value))
			} else {
				b.MinAvailable(intOrPct(value))
			}
			if tc.term != nil {
				b.NodeSelectorTerm(*tc.term)
			}
			var os []Owner
			for uid, n := range tc.scales {
				os = append(os, owner(uid, n))
			}
			w := world{tdb: b, nodes: threeZones(), pods: tc.pods, owners: os}
			in := w.input()

			disrupted := map[string]time.Time{}
			for _, r := range tc.records {
				disrupted[r.Name] = r.Time.Time
			}
			ref := policyV1(in.Budget.Spec, in.Pods, tc.scales, disrupted, t0)
			if diff := cmp.Diff(tc.want, ref); diff != "" {
				t.Fatalf("policy/v1 reference disagrees with the table (-want +got):\n%s", diff)
			}

			got := Compute(in)
			if len(got.Domains) != 1 || got.Domains[0].Name != AllDomain {
				t.Fatalf("Compute() domains = %v, want the single domain %q", got.Domains, AllDomain)
			}
			d := got.Domains[0]
			gotNumbers := pdbNumbers{Expected: d.ExpectedPods, Healthy: d.CurrentHealthy, Desired: d.DesiredHealthy, Allowed: d.DisruptionsAllowed}
			if diff := cmp.Diff(ref, gotNumbers); diff != "" {
				t.Errorf("Compute() differs from policy/v1 (-want +got):\n%s", diff)
			}
			totals := pdbNumbers{Expected: got.ExpectedPods, Healthy: got.CurrentHealthy, Desired: d.DesiredHealthy, Allowed: got.DisruptionsAllowed}
			if diff := cmp.Diff(ref, totals); diff != "" {
				t.Errorf("Compute() totals differ from policy/v1 (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeThreeZones drives Compute end to end over one topologyKey and
// three uneven zones: 4 pods in zone-a (on n1 and n2), 3 in zone-b, 2 in
// zone-c, all of one spread controller whose scale is 9.
func TestComputeThreeZones(t *testing.T) {
	const sts = types.UID("sts")
	base := func() []*builders.PodWrapper { return unevenZones(sts) }
	// unready makes the named pods not Ready.
	unready := func(ps []*builders.PodWrapper, names ...string) []*builders.PodWrapper {
		for _, p := range ps {
			for _, n := range names {
				if p.Obj().Name == n {
					p.NotReady()
				}
			}
		}
		return ps
	}
	tests := []struct {
		name   string
		budget *builders.BudgetWrapper
		pods   []*builders.PodWrapper
		want   summary
	}{
		{name: "maxUnavailable 1", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")), pods: base(),
			want: withRows(row("zone-a", 4, 4, 3, 1), row("zone-b", 3, 3, 2, 1), row("zone-c", 2, 2, 1, 1))},
		{name: "maxUnavailable 50%", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("50%")), pods: base(),
			want: withRows(row("zone-a", 4, 4, 2, 2), row("zone-b", 3, 3, 1, 2), row("zone-c", 2, 2, 1, 1))},
		{name: "minAvailable 2", budget: tdb("web").TopologyKey(zoneKey).MinAvailable(intOrPct("2")), pods: base(),
			want: withRows(row("zone-a", 4, 4, 2, 2), row("zone-b", 3, 3, 2, 1), row("zone-c", 2, 2, 2, 0))},
		{name: "minAvailable 60%", budget: tdb("web").TopologyKey(zoneKey).MinAvailable(intOrPct("60%")), pods: base(),
			want: withRows(row("zone-a", 4, 4, 3, 1), row("zone-b", 3, 3, 2, 1), row("zone-c", 2, 2, 2, 0))},
		{name: "not-Ready pod uses its own domain's budget only", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")),
			pods: unready(base(), "b-1"),
			want: withRows(row("zone-a", 4, 4, 3, 1), row("zone-b", 3, 2, 2, 0), row("zone-c", 2, 2, 1, 1))},
		{name: "maxDisruptedDomains 1: a disrupted domain stops the others",
			budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("2")).MaxDisruptedDomains(1), pods: unready(base(), "b-1"),
			want: withRows(row("zone-a", 4, 4, 2, 0), row("zone-b", 3, 2, 1, 1), row("zone-c", 2, 2, 0, 0))},
		{name: "maxDisruptedDomains 1 with nothing disrupted allows every domain",
			budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")).MaxDisruptedDomains(1), pods: base(),
			// Each domain allows 1, but only one may be disrupted at once.
			want: withRows(row("zone-a", 4, 4, 3, 1), row("zone-b", 3, 3, 2, 1), row("zone-c", 2, 2, 1, 1)).together(1)},
		{name: "maxDisruptedDomains 1 with two disrupted domains allows none",
			budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("2")).MaxDisruptedDomains(1), pods: unready(base(), "b-1", "c-1"),
			want: withRows(row("zone-a", 4, 4, 2, 0), row("zone-b", 3, 2, 1, 0), row("zone-c", 2, 1, 0, 0))},
		{name: "maxDisruptedDomains 2 with one disrupted domain allows every domain",
			budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("2")).MaxDisruptedDomains(2), pods: unready(base(), "b-1"),
			// zone-b is disrupted and allows 1; one more domain may join it,
			// and the better of zone-a and zone-c allows 2: 3 together.
			want: withRows(row("zone-a", 4, 4, 2, 2), row("zone-b", 3, 2, 1, 1), row("zone-c", 2, 2, 0, 2)).together(3)},
		{name: "maxDisruptedDomains 2 with two disrupted domains stops the third",
			budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("2")).MaxDisruptedDomains(2), pods: unready(base(), "b-1", "c-1"),
			want: withRows(row("zone-a", 4, 4, 2, 0), row("zone-b", 3, 2, 1, 1), row("zone-c", 2, 1, 0, 1))},
		{name: "spread controller missing a pod: every domain expects it", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")),
			pods: base()[:8], // c-1 is gone and the controller still wants 9: spread, so every domain expects it
			want: withRows(row("zone-a", 5, 4, 4, 0), row("zone-b", 4, 3, 3, 0), row("zone-c", 2, 1, 1, 0))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tc.budget, nodes: threeZones(), pods: tc.pods, owners: []Owner{owner(sts, 9)}}
			in := w.input()
			before := in.Budget.DeepCopy()
			got := Compute(in)
			if diff := cmp.Diff(tc.want, summarize(got)); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, in.Budget); diff != "" {
				t.Errorf("Compute() modified its input budget (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeOnePodDomains covers uneven domains of independent controllers,
// including a domain with one pod and one whose only pod is gone.
func TestComputeOnePodDomains(t *testing.T) {
	const rsA, rsB, rsC = types.UID("rs-a"), types.UID("rs-b"), types.UID("rs-c")
	podsOf := func() []*builders.PodWrapper {
		return append(append(readyPods("a", "n1", rsA, 5), readyPods("b", "n3", rsB, 2)...), readyPods("c", "n4", rsC, 1)...)
	}
	tests := []struct {
		name    string
		budget  *builders.BudgetWrapper
		pods    []*builders.PodWrapper
		records []policyv1alpha1.DisruptedPod
		want    summary
	}{
		{name: "maxUnavailable 1", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")), pods: podsOf(),
			want: withRows(row("zone-a", 5, 5, 4, 1), row("zone-b", 2, 2, 1, 1), row("zone-c", 1, 1, 0, 1))},
		{name: "maxUnavailable 10% rounds up to one pod per domain", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("10%")), pods: podsOf(),
			want: withRows(row("zone-a", 5, 5, 4, 1), row("zone-b", 2, 2, 1, 1), row("zone-c", 1, 1, 0, 1))},
		{name: "minAvailable 1", budget: tdb("web").TopologyKey(zoneKey).MinAvailable(intOrPct("1")), pods: podsOf(),
			want: withRows(row("zone-a", 5, 5, 1, 4), row("zone-b", 2, 2, 1, 1), row("zone-c", 1, 1, 1, 0))},
		{name: "minAvailable 50%", budget: tdb("web").TopologyKey(zoneKey).MinAvailable(intOrPct("50%")), pods: podsOf(),
			want: withRows(row("zone-a", 5, 5, 3, 2), row("zone-b", 2, 2, 1, 1), row("zone-c", 1, 1, 1, 0))},
		{name: "zero-pod domain: its only pod was evicted and is gone",
			budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")),
			pods:   podsOf()[:7], records: []policyv1alpha1.DisruptedPod{record("c-0", "zone-c", rsC, at(-time.Minute))},
			want: func() summary {
				s := withRows(row("zone-a", 5, 5, 4, 1), row("zone-b", 2, 2, 1, 1), row("zone-c", 1, 0, 0, 0))
				s.DisruptedPods = []string{"c-0@zone-c"}
				return s
			}()},
		{name: "zero-pod domain under minAvailable 0 allows nothing there",
			budget: tdb("web").TopologyKey(zoneKey).MinAvailable(intOrPct("0")),
			pods:   podsOf()[:7], records: []policyv1alpha1.DisruptedPod{record("c-0", "zone-c", rsC, at(-time.Minute))},
			want: func() summary {
				s := withRows(row("zone-a", 5, 5, 0, 5), row("zone-b", 2, 2, 0, 2), row("zone-c", 1, 0, 0, 0))
				s.DisruptedPods = []string{"c-0@zone-c"}
				return s
			}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tc.budget.DisruptedPods(tc.records...), nodes: threeZones(), pods: tc.pods,
				owners: []Owner{owner(rsA, 5), owner(rsB, 2), owner(rsC, 1)}}
			if diff := cmp.Diff(tc.want, summarize(Compute(w.input()))); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeResult checks a whole Result once, field by field, so that
// no field goes unasserted: records kept and expired, the recheck time,
// the unmanaged pods.
func TestComputeResult(t *testing.T) {
	const rs = types.UID("rs")
	w := world{
		tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")).DisruptedPods(
			record("a-0", "zone-a", rs, at(-time.Minute)),    // running: protects a-0 for one more minute
			record("a-1", "zone-a", rs, at(-3*time.Minute)),  // running for too long: expired
			record("b-9", "zone-b", rs, at(-10*time.Minute)), // gone: explains rs's missing pod
		),
		nodes: threeZones(),
		pods: []*builders.PodWrapper{
			pod("a-0").OnNode("n1").Ready().ControlledBy(replicaSet(rs)), pod("a-1").OnNode("n1").Ready().ControlledBy(replicaSet(rs)),
			pod("a-2").OnNode("n2").Ready().ControlledBy(replicaSet(rs)),
			pod("b-0").OnNode("n3").Ready().ControlledBy(replicaSet(rs)),
			pod("solo").OnNode("n4").Ready(),
		},
		owners: []Owner{owner(rs, 5)},
	}
	recheck := at(time.Minute)
	want := Result{
		Domains: []policyv1alpha1.DomainStatus{
			row("zone-a", 3, 2, 2, 0),
			row("zone-b", 2, 1, 1, 0),
			row("zone-c", 1, 1, 0, 1),
		},
		ExpectedPods: 6, CurrentHealthy: 4, DisruptionsAllowed: 1,
		DisruptedPods: []policyv1alpha1.DisruptedPod{
			record("a-0", "zone-a", rs, at(-time.Minute)),
			record("b-9", "zone-b", rs, at(-10*time.Minute)),
		},
		ExpiredRecords: []ExpiredRecord{{Pod: "a-1", Time: at(-3 * time.Minute)}},
		UnmanagedPods:  []string{"solo"},
		RecheckAt:      &recheck,
	}
	if diff := cmp.Diff(want, Compute(w.input())); diff != "" {
		t.Errorf("Compute() (-want +got):\n%s", diff)
	}
}

// TestResultBlocked: the reason and message that the DisruptionAllowed
// condition carries when nothing may be disrupted.
func TestResultBlocked(t *testing.T) {
	type blocked struct{ Reason, Message string }
	tests := []struct {
		name string
		res  Result
		want blocked
	}{
		{name: "numbers stand", res: Result{}, want: blocked{}},
		{name: "spec error", res: Result{Err: errors.New("spec.selector is required")},
			want: blocked{policyv1alpha1.ReasonSyncFailed, "spec.selector is required"}},
		{name: "domain issues", res: Result{DomainIssues: []DomainIssue{
			{Pod: "a-0", Node: "n9", Reason: "node has no label " + zoneKey}, {Pod: "a-1", Node: "n9", Reason: "x"}}},
			want: blocked{policyv1alpha1.ReasonDomainError,
				`2 covered pod(s) have no domain, e.g. pod a-0 on node "n9": node has no label topology.kubernetes.io/zone; label the node or fix nodeSelectorTerm`}},
		{name: "no scale", res: Result{NoScale: []string{"a-0"}},
			want: blocked{policyv1alpha1.ReasonSyncFailed,
				"1 covered pod(s) have a controller without a readable scale, e.g. pod a-0; give the controller a scale subresource or use an integer minAvailable without topologyKey"}},
		{name: "error wins over domain issues and no scale",
			res:  Result{Err: errors.New("boom"), DomainIssues: []DomainIssue{{Pod: "a"}}, NoScale: []string{"b"}},
			want: blocked{policyv1alpha1.ReasonSyncFailed, "boom"}},
		{name: "domain issues win over no scale",
			res:  Result{DomainIssues: []DomainIssue{{Pod: "a", Node: "n", Reason: "node not found"}}, NoScale: []string{"b"}},
			want: blocked{policyv1alpha1.ReasonDomainError, `1 covered pod(s) have no domain, e.g. pod a on node "n": node not found; label the node or fix nodeSelectorTerm`}},
		{name: "unmanaged pods do not block", res: Result{UnmanagedPods: []string{"solo"}}, want: blocked{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got blocked
			got.Reason, got.Message = tc.res.Blocked()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Blocked() (-want +got):\n%s", diff)
			}
		})
	}
}

// A spec that slipped past the API server's validation allows nothing and
// says why, instead of guessing a budget.
func TestComputeMalformedAmounts(t *testing.T) {
	tests := []struct {
		name    string
		budget  *builders.BudgetWrapper
		wantErr string
	}{
		{name: "neither field", budget: tdb("web").TopologyKey(zoneKey), wantErr: "exactly one of spec.minAvailable and spec.maxUnavailable must be set"},
		{name: "both fields", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")).MinAvailable(intOrPct("2")),
			wantErr: "exactly one of"},
		{name: "malformed percentage", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromString("ten%")), wantErr: `spec.maxUnavailable: "ten%" is not`},
		{name: "percentage above 100", budget: tdb("web").TopologyKey(zoneKey).MinAvailable(intstr.FromString("150%")), wantErr: `spec.minAvailable: "150%" is not`},
		{name: "negative integer", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(-1)), wantErr: `spec.maxUnavailable: "-1" is not`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tc.budget, nodes: threeZones(), pods: readyPods("w", "n1", "rs", 3), owners: []Owner{owner("rs", 3)}}
			got := Compute(w.input())
			if got.Err == nil || !strings.Contains(got.Err.Error(), tc.wantErr) {
				t.Fatalf("Compute().Err = %v, want it to contain %q", got.Err, tc.wantErr)
			}
			if diff := cmp.Diff(summary{Blocked: policyv1alpha1.ReasonSyncFailed}, summarize(got)); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}
