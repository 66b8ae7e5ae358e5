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
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// withRecords adds the names@domains of the records kept in status.
func (s summary) withRecords(rs ...string) summary { s.DisruptedPods = rs; return s }

// TestComputeMissingPods: missing pods (scale above the scheduled pods) are
// attributed to domains conservatively, never ignored. The budget is zoned
// with maxUnavailable 1 over n1, n2 (zone-a), n3 (zone-b), n4 (zone-c).
func TestComputeMissingPods(t *testing.T) {
	const (
		rs, sts, rsC, rsP, rsG = types.UID("rs"), types.UID("sts"), types.UID("rs-c"), types.UID("rs-p"), types.UID("rs-g")
		deploy, rsOld, rsNew   = types.UID("deploy"), types.UID("rs-old"), types.UID("rs-new")
	)
	notC := &policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{expr(zoneKey, "NotIn", "zone-c")}}
	spread := func(n1, n3, n4 bool) []*builders.PodWrapper {
		var ps []*builders.PodWrapper
		if n1 {
			ps = append(ps, pod("s-0").OnNode("n1").Ready().ControlledBy(replicaSet(sts)))
		}
		if n3 {
			ps = append(ps, pod("s-1").OnNode("n3").Ready().ControlledBy(replicaSet(sts)))
		}
		if n4 {
			ps = append(ps, pod("s-2").OnNode("n4").Ready().ControlledBy(replicaSet(sts)))
		}
		return ps
	}
	cZero := pod("c-0").OnNode("n4").Ready().ControlledBy(replicaSet(rsC))
	join := func(pss ...[]*builders.PodWrapper) []*builders.PodWrapper {
		var out []*builders.PodWrapper
		for _, ps := range pss {
			out = append(out, ps...)
		}
		return out
	}
	tests := []struct {
		name     string
		term     *policyv1alpha1.NodeSelectorTerm
		pods     []*builders.PodWrapper
		owners   []Owner
		ownerMap map[types.UID]Owner
		records  []policyv1alpha1.DisruptedPod
		want     summary
	}{
		// A controller whose pods all sit in one domain owns its missing pods there.
		{name: "single-domain controller: scale above its pods",
			pods: readyPods("a", "n1", rs, 3), owners: []Owner{owner(rs, 4)},
			want: withRows(row("zone-a", 4, 3, 3, 0))},
		{name: "single-domain controller: an unscheduled pod",
			pods: join(readyPods("a", "n1", rs, 2), []*builders.PodWrapper{pod("a-2").Pending().ControlledBy(replicaSet(rs))}), owners: []Owner{owner(rs, 3)},
			want: withRows(row("zone-a", 3, 2, 2, 0))},
		{name: "single-domain controller over two nodes of one zone",
			pods: join(readyPods("a", "n1", rs, 2), readyPods("x", "n2", rs, 1)), owners: []Owner{owner(rs, 4)},
			want: withRows(row("zone-a", 4, 3, 3, 0))},
		{name: "single-domain controller with a record of its gone pod",
			pods: readyPods("a", "n1", rs, 2), owners: []Owner{owner(rs, 3)},
			records: []policyv1alpha1.DisruptedPod{record("a-2", "zone-a", rs, at(-time.Minute))},
			want:    withRows(row("zone-a", 3, 2, 2, 0)).withRecords("a-2@zone-a")},
		{name: "single-domain controller, record in another domain: the record's domain keeps its missing pod",
			pods: readyPods("b", "n3", rs, 2), owners: []Owner{owner(rs, 3)},
			records: []policyv1alpha1.DisruptedPod{record("a-2", "zone-a", rs, at(-time.Minute))},
			want:    withRows(row("zone-a", 1, 0, 0, 0), row("zone-b", 2, 2, 1, 1)).withRecords("a-2@zone-a")},
		{name: "evicted pod's replacement pending: the record keeps it in its domain",
			pods:   join(readyPods("a", "n1", rs, 2), []*builders.PodWrapper{pod("r-0").Pending().ControlledBy(replicaSet(rs))}),
			owners: []Owner{owner(rs, 3)}, records: []policyv1alpha1.DisruptedPod{record("a-2", "zone-a", rs, at(-time.Minute))},
			want: withRows(row("zone-a", 3, 2, 2, 0)).withRecords("a-2@zone-a")},
		{name: "replacement scheduled in another domain: record dropped, counted there unready, the domain it left expects one fewer",
			pods:   join(readyPods("a", "n1", rs, 2), []*builders.PodWrapper{pod("r-0").OnNode("n3").NotReady().ControlledBy(replicaSet(rs))}),
			owners: []Owner{owner(rs, 3)}, records: []policyv1alpha1.DisruptedPod{record("a-2", "zone-a", rs, at(-time.Minute))},
			want: withRows(row("zone-a", 2, 2, 1, 1), row("zone-b", 1, 0, 0, 0))},

		// A spread controller's other missing pods count against every domain of the controller.
		{name: "spread controller missing a pod without a record: every domain of the controller expects it",
			pods: join(spread(true, true, false), []*builders.PodWrapper{cZero}), owners: []Owner{owner(sts, 3), owner(rsC, 1)},
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 2, 1, 1, 0), row("zone-c", 1, 1, 0, 1))},
		{name: "spread controller with an unscheduled pod: every domain of the controller expects it",
			pods:   join(spread(true, true, false), []*builders.PodWrapper{pod("s-9").Pending().ControlledBy(replicaSet(sts)), cZero}),
			owners: []Owner{owner(sts, 3), owner(rsC, 1)},
			want:   withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 2, 1, 1, 0), row("zone-c", 1, 1, 0, 1))},
		{name: "spread controller with a record of the gone pod: the record's domain",
			pods: join(spread(true, true, false), []*builders.PodWrapper{cZero}), owners: []Owner{owner(sts, 3), owner(rsC, 1)},
			records: []policyv1alpha1.DisruptedPod{record("s-2", "zone-c", sts, at(-time.Minute))},
			want: withRows(row("zone-a", 1, 1, 0, 1), row("zone-b", 1, 1, 0, 1), row("zone-c", 2, 1, 1, 0)).
				withRecords("s-2@zone-c")},
		{name: "StatefulSet replacement with the same name, pending: the old pod's record still places it",
			pods:    join(spread(true, true, false), []*builders.PodWrapper{pod("s-2").UID("uid-s-2-new").Pending().ControlledBy(replicaSet(sts)), cZero}),
			owners:  []Owner{owner(sts, 3), owner(rsC, 1)},
			records: []policyv1alpha1.DisruptedPod{record("s-2", "zone-c", sts, at(-time.Minute))},
			want: withRows(row("zone-a", 1, 1, 0, 1), row("zone-b", 1, 1, 0, 1), row("zone-c", 2, 1, 1, 0)).
				withRecords("s-2@zone-c")},
		{name: "StatefulSet replacement with the same name, scheduled: record dropped",
			pods:    join(spread(true, true, false), []*builders.PodWrapper{pod("s-2").UID("uid-s-2-new").OnNode("n4").NotReady().ControlledBy(replicaSet(sts)), cZero}),
			owners:  []Owner{owner(sts, 3), owner(rsC, 1)},
			records: []policyv1alpha1.DisruptedPod{record("s-2", "zone-c", sts, at(-time.Minute))},
			want:    withRows(row("zone-a", 1, 1, 0, 1), row("zone-b", 1, 1, 0, 1), row("zone-c", 2, 1, 1, 0))},
		{name: "controller with no scheduled pod at all: its missing pods count against every domain",
			pods:   join(spread(true, true, true), []*builders.PodWrapper{pod("p-0").Pending().ControlledBy(replicaSet(rsP)), pod("p-1").Pending().ControlledBy(replicaSet(rsP))}),
			owners: []Owner{owner(sts, 3), owner(rsP, 2)},
			want:   withRows(row("zone-a", 3, 1, 2, 0), row("zone-b", 3, 1, 2, 0), row("zone-c", 3, 1, 2, 0))},
		{name: "controller known only by a record: the record's domain, the rest everywhere",
			pods: spread(true, true, true), owners: []Owner{owner(sts, 3), owner(rsG, 2)},
			records: []policyv1alpha1.DisruptedPod{record("g-0", "zone-b", rsG, at(-time.Minute))},
			want:    withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 3, 1, 2, 0), row("zone-c", 2, 1, 1, 0)).withRecords("g-0@zone-b")},
		{name: "two missing pods, two records: both kept in their domains",
			pods: spread(true, true, false), owners: []Owner{owner(sts, 4)},
			records: []policyv1alpha1.DisruptedPod{
				record("s-2", "zone-b", sts, at(-5*time.Minute)), record("s-3", "zone-c", sts, at(-time.Minute))},
			want: withRows(row("zone-a", 1, 1, 0, 1), row("zone-b", 2, 1, 1, 0), row("zone-c", 1, 0, 0, 0)).
				withRecords("s-2@zone-b", "s-3@zone-c")},
		// Which record a replacement with a new name ends is unknown: each
		// domain expects as many missing pods as could be its own.
		{name: "a replacement with another name is scheduled: both records' domains expect the missing pod",
			pods:   join(spread(true, true, false), []*builders.PodWrapper{pod("s-x").OnNode("n1").NotReady().ControlledBy(replicaSet(sts))}),
			owners: []Owner{owner(sts, 4)},
			records: []policyv1alpha1.DisruptedPod{
				record("s-2", "zone-b", sts, at(-5*time.Minute)), record("s-3", "zone-c", sts, at(-time.Minute))},
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 2, 1, 1, 0), row("zone-c", 1, 0, 0, 0)).
				withRecords("s-2@zone-b", "s-3@zone-c")},
		{name: "grant times do not decide which record is done",
			pods:   join(spread(true, true, false), []*builders.PodWrapper{pod("s-x").OnNode("n1").NotReady().ControlledBy(replicaSet(sts))}),
			owners: []Owner{owner(sts, 4)},
			records: []policyv1alpha1.DisruptedPod{
				record("s-3", "zone-c", sts, at(-5*time.Minute)), record("s-2", "zone-b", sts, at(-time.Minute))},
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 2, 1, 1, 0), row("zone-c", 1, 0, 0, 0)).
				withRecords("s-2@zone-b", "s-3@zone-c")},
		// Two evictions granted in the same second: s-1's replacement is
		// placed under its name, s-2 has none yet. The missing pod is
		// zone-c's; counting it in zone-b instead (the record first by
		// name) let a rollout disrupt a third pod in zone-c.
		{name: "same grant second: the record replaced under its name is done, the other keeps its domain",
			pods: join(spread(true, false, false), []*builders.PodWrapper{
				pod("s-1").UID("uid-s-1-new").OnNode("n3").NotReady().ControlledBy(replicaSet(sts)), cZero}),
			owners: []Owner{owner(sts, 3), owner(rsC, 1)},
			records: []policyv1alpha1.DisruptedPod{
				record("s-1", "zone-b", sts, at(-time.Second)), record("s-2", "zone-c", sts, at(-time.Second))},
			want: withRows(row("zone-a", 1, 1, 0, 1), row("zone-b", 1, 0, 0, 0), row("zone-c", 2, 1, 1, 0)).
				withRecords("s-2@zone-c")},
		{name: "ReplicaSet: two records, one missing pod: both domains expect it until nothing is missing",
			pods: []*builders.PodWrapper{pod("r-0").OnNode("n1").Ready().ControlledBy(replicaSet(rs)), pod("r-new").OnNode("n1").NotReady().ControlledBy(replicaSet(rs)),
				pod("r-1").OnNode("n3").Ready().ControlledBy(replicaSet(rs)), pod("r-2").OnNode("n4").Ready().ControlledBy(replicaSet(rs))},
			owners: []Owner{owner(rs, 5)},
			records: []policyv1alpha1.DisruptedPod{
				record("r-3", "zone-b", rs, at(-time.Second)), record("r-4", "zone-c", rs, at(-time.Second))},
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 2, 1, 1, 0), row("zone-c", 2, 1, 1, 0)).
				withRecords("r-3@zone-b", "r-4@zone-c")},
		{name: "records beyond the missing count are dropped",
			pods: spread(true, true, false), owners: []Owner{owner(sts, 2)},
			records: []policyv1alpha1.DisruptedPod{record("s-9", "zone-c", sts, at(-time.Minute))},
			want:    withRows(row("zone-a", 1, 1, 0, 1), row("zone-b", 1, 1, 0, 1))},
		{name: "a record of an unknown or no controller is dropped",
			pods: readyPods("a", "n1", rs, 2), owners: []Owner{owner(rs, 2)},
			records: []policyv1alpha1.DisruptedPod{
				record("z-0", "zone-c", "rs-deleted", at(-time.Minute)), record("z-1", "zone-c", "", at(-time.Minute))},
			want: withRows(row("zone-a", 2, 2, 1, 1))},

		// Surge, several controllers, scale-bearing owners, coverage.
		{name: "surge in one domain: the domain expects the scale",
			pods: readyPods("a", "n1", rs, 3), owners: []Owner{owner(rs, 2)},
			want: withRows(row("zone-a", 2, 3, 1, 2))},
		{name: "surge of a spread controller: each domain expects its pods",
			pods: spread(true, true, true), owners: []Owner{owner(sts, 2)},
			want: withRows(row("zone-a", 1, 1, 0, 1), row("zone-b", 1, 1, 0, 1), row("zone-c", 1, 1, 0, 1))},
		{name: "several controllers under one budget are attributed independently",
			pods: join(readyPods("a", "n1", rs, 2), []*builders.PodWrapper{
				pod("s-0").OnNode("n2").Ready().ControlledBy(replicaSet(sts)), pod("s-1").OnNode("n3").Ready().ControlledBy(replicaSet(sts)),
				pod("s-2").OnNode("n4").Ready().ControlledBy(replicaSet(sts)), cZero}),
			owners: []Owner{owner(rs, 3), owner(sts, 3), owner(rsC, 1)},
			want:   withRows(row("zone-a", 4, 3, 3, 0), row("zone-b", 1, 1, 0, 1), row("zone-c", 2, 2, 1, 1))},
		{name: "two ReplicaSets of one Deployment count its scale once",
			pods:     join(readyPods("o", "n1", rsOld, 2), readyPods("n", "n1", rsNew, 2)),
			ownerMap: map[types.UID]Owner{rsOld: owner(deploy, 4), rsNew: owner(deploy, 4)},
			want:     withRows(row("zone-a", 4, 4, 3, 1))},
		{name: "two ReplicaSets of one Deployment in two zones share its missing pod",
			pods:     join(readyPods("o", "n1", rsOld, 2), readyPods("n", "n3", rsNew, 1)),
			ownerMap: map[types.UID]Owner{rsOld: owner(deploy, 4), rsNew: owner(deploy, 4)},
			want:     withRows(row("zone-a", 3, 2, 2, 0), row("zone-b", 2, 1, 1, 0))},
		{name: "a record of a ReplicaSet resolves to its Deployment",
			pods:     readyPods("o", "n1", rsOld, 2),
			ownerMap: map[types.UID]Owner{rsOld: owner(deploy, 3), rsNew: owner(deploy, 3)},
			records:  []policyv1alpha1.DisruptedPod{record("n-0", "zone-b", rsNew, at(-time.Minute))},
			want:     withRows(row("zone-a", 2, 2, 1, 1), row("zone-b", 1, 0, 0, 0)).withRecords("n-0@zone-b")},
		{name: "pods outside nodeSelectorTerm are still the controller's pods",
			term: notC, pods: spread(true, true, true), owners: []Owner{owner(sts, 3)},
			want: withRows(row("zone-a", 1, 1, 0, 1), row("zone-b", 1, 1, 0, 1))},
		{name: "a missing pod of a controller partly outside nodeSelectorTerm counts in its covered domains",
			term: notC, pods: spread(true, true, true), owners: []Owner{owner(sts, 4)},
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 2, 1, 1, 0))},
		{name: "a deleting pod is expected, not healthy",
			pods:   join(readyPods("a", "n1", rs, 2), []*builders.PodWrapper{pod("a-2").OnNode("n1").Ready().Deleting(t0).ControlledBy(replicaSet(rs))}),
			owners: []Owner{owner(rs, 3)},
			want:   withRows(row("zone-a", 3, 2, 2, 0))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).DisruptedPods(tc.records...)
			if tc.term != nil {
				b.NodeSelectorTerm(*tc.term)
			}
			w := world{tdb: b, nodes: threeZones(), pods: tc.pods, owners: tc.owners, ownerMap: tc.ownerMap}
			if diff := cmp.Diff(tc.want, summarize(Compute(w.input()))); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeUnmanagedPods: pods without a controller count where they run,
// are listed, and do not block the budget.
func TestComputeUnmanagedPods(t *testing.T) {
	const rs = types.UID("rs")
	tests := []struct {
		name   string
		budget *builders.BudgetWrapper
		pods   []*builders.PodWrapper
		want   summary
	}{
		{name: "counted where they run",
			budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)),
			pods: join2(readyPods("a", "n1", rs, 2),
				pod("solo-a").OnNode("n2").Ready(), pod("solo-b").OnNode("n3").Ready(), pod("solo-b2").OnNode("n3").NotReady()),
			want: func() summary {
				s := withRows(row("zone-a", 3, 3, 2, 1), row("zone-b", 2, 1, 1, 0))
				s.UnmanagedPods = []string{"solo-a", "solo-b", "solo-b2"}
				return s
			}()},
		{name: "an ownerReference that is not a controllerRef does not make a controller",
			budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)),
			pods:   []*builders.PodWrapper{pod("solo").OnNode("n3").Ready().ReferencedBy(metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm-cm", UID: "cm"})},
			want: func() summary {
				s := withRows(row("zone-b", 1, 1, 0, 1))
				s.UnmanagedPods = []string{"solo"}
				return s
			}()},
		{name: "unscheduled and deleting unmanaged pods",
			budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)),
			pods:   []*builders.PodWrapper{pod("solo-p").Pending(), pod("solo-d").OnNode("n3").Ready().Deleting(t0)},
			want: func() summary {
				s := withRows(row("zone-b", 1, 0, 0, 0))
				s.UnmanagedPods = []string{"solo-d"}
				return s
			}()},
		{name: "without topologyKey they count in the single domain",
			budget: tdb("web").MaxUnavailable(intstr.FromString("50%")),
			pods:   join2(readyPods("a", "n1", rs, 2), pod("solo").OnNode("n3").Ready()),
			want: func() summary {
				s := withRows(row(AllDomain, 3, 3, 1, 2))
				s.UnmanagedPods = []string{"solo"}
				return s
			}()},
		{name: "with an integer minAvailable without topologyKey",
			budget: tdb("web").MinAvailable(intstr.FromInt32(2)),
			pods:   join2(readyPods("a", "n1", rs, 2), pod("solo").OnNode("n3").Ready()),
			want: func() summary {
				s := withRows(row(AllDomain, 3, 3, 2, 1))
				s.UnmanagedPods = []string{"solo"}
				return s
			}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tc.budget, nodes: threeZones(), pods: tc.pods, owners: []Owner{owner(rs, 2)}}
			if diff := cmp.Diff(tc.want, summarize(Compute(w.input()))); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeNoScale: a pod whose controller has no known scale blocks every
// budget that needs scales (as policy/v1 fails its sync), but not an integer
// minAvailable without topology, which counts pods.
func TestComputeNoScale(t *testing.T) {
	const rs, unknown = types.UID("rs"), types.UID("rs-unknown")
	ps := join2(readyPods("a", "n1", rs, 2), pod("u-0").OnNode("n3").Ready().ControlledBy(replicaSet(unknown)),
		pod("u-1").Pending().ControlledBy(replicaSet(unknown)))
	blocked := func(rows ...policyv1alpha1.DomainStatus) summary {
		s := withRows(rows...)
		s.NoScale = []string{"u-0", "u-1"}
		s.Blocked = policyv1alpha1.ReasonSyncFailed
		return s
	}
	tests := []struct {
		name   string
		budget *builders.BudgetWrapper
		want   summary
	}{
		{name: "zoned maxUnavailable", budget: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)),
			want: blocked(row("zone-a", 2, 2, 1, 0), row("zone-b", 1, 1, 0, 0))},
		{name: "zoned integer minAvailable", budget: tdb("web").TopologyKey(zoneKey).MinAvailable(intstr.FromInt32(1)),
			want: blocked(row("zone-a", 2, 2, 1, 0), row("zone-b", 1, 1, 1, 0))},
		{name: "percentage minAvailable without topologyKey", budget: tdb("web").MinAvailable(intstr.FromString("50%")),
			want: blocked(row(AllDomain, 4, 3, 2, 0))},
		{name: "integer minAvailable without topologyKey needs no scale",
			budget: tdb("web").MinAvailable(intstr.FromInt32(1)),
			want:   withRows(row(AllDomain, 4, 3, 1, 2))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tc.budget, nodes: threeZones(), pods: ps, owners: []Owner{owner(rs, 2)}}
			if diff := cmp.Diff(tc.want, summarize(Compute(w.input()))); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}

func join2(ps []*builders.PodWrapper, more ...*builders.PodWrapper) []*builders.PodWrapper {
	return append(append([]*builders.PodWrapper{}, ps...), more...)
}

// A controller whose pods are all gone (deleted directly, or blocked from
// being created) is still counted: its scale is missing in every domain, so
// the others cannot be disrupted while it is down (the aws#28 bug class).
func TestComputeControllerWithoutPods(t *testing.T) {
	podsOf := append(readyPods("b", "n3", "sts-b", 2), readyPods("c", "n4", "sts-c", 2)...)
	base := world{
		tdb:    tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).MaxDisruptedDomains(1),
		nodes:  threeZones(),
		pods:   podsOf,
		owners: []Owner{owner("sts-b", 2), owner("sts-c", 2)},
	}
	in := base.input()
	got := Compute(in)
	if diff := cmp.Diff([]policyv1alpha1.DomainStatus{row("zone-b", 2, 2, 1, 1), row("zone-c", 2, 2, 1, 1)}, got.Domains); diff != "" {
		t.Fatalf("without the pod-less controller (-want +got):\n%s", diff)
	}

	in.Controllers = []Owner{owner("sts-a", 1), owner("sts-b", 2), owner("sts-c", 2)}
	got = Compute(in)
	// sts-a's one replica is missing in every domain: each is disrupted,
	// so with maxDisruptedDomains 1 nothing may go.
	want := []policyv1alpha1.DomainStatus{row("zone-b", 3, 2, 2, 0), row("zone-c", 3, 2, 2, 0)}
	if diff := cmp.Diff(want, got.Domains); diff != "" {
		t.Errorf("with the pod-less controller (-want +got):\n%s", diff)
	}

	in.Controllers = []Owner{owner("sts-a", 0), owner("sts-b", 2), owner("sts-c", 2)}
	got = Compute(in)
	if diff := cmp.Diff([]policyv1alpha1.DomainStatus{row("zone-b", 2, 2, 1, 1), row("zone-c", 2, 2, 1, 1)}, got.Domains); diff != "" {
		t.Errorf("a controller scaled to 0 expects nothing (-want +got):\n%s", diff)
	}
}

// Each record explains one missing pod at most, and only one missing since
// the unscheduled pods older than it: records newer than two Pending pods
// explain one of three missing pods, the Pending pods count against every
// zone, and an old record does not widen what the newer ones explain
// (with an old record in zone-a, 2 evictions are allowed, not 5).
func TestRecordsExplainNoMoreMissingPodsThanEachCan(t *testing.T) {
	nodes := threeZoneNodes()
	var pods []*builders.PodWrapper
	for _, z := range []string{"a", "b", "c"} {
		for i := range 3 {
			pods = append(pods, pod("web-"+z+itoa(i)).OnNode("n"+z).ControlledBy(replicaSet("rs")).Ready())
		}
	}
	for i := range 2 {
		pods = append(pods, pod("web-pending"+itoa(i)).ControlledBy(replicaSet("rs")).Pending().CreatedAt(at(-50*time.Second)))
	}
	recent := []policyv1alpha1.DisruptedPod{
		record("web-a9", "zone-a", "rs", at(-10*time.Second)),
		record("web-b9", "zone-b", "rs", at(-10*time.Second)),
		record("web-c9", "zone-c", "rs", at(-10*time.Second)),
	}
	cases := []struct {
		name  string
		extra policyv1alpha1.DisruptedPod
		want  summary
	}{{
		name:  "an old record in zone-a",
		extra: record("web-a8", "zone-a", "rs", at(-100*time.Second)),
		want:  withRows(row("zone-a", 6, 3, 3, 0), row("zone-b", 5, 3, 2, 1), row("zone-c", 5, 3, 2, 1)),
	}, {
		name: "an old record of another spec",
		extra: func() policyv1alpha1.DisruptedPod {
			r := record("web-a8", "zone-a", "rs", at(-100*time.Second))
			r.DomainSpec = "another spec"
			return r
		}(),
		want: withRows(row("zone-a", 6, 3, 3, 0), row("zone-b", 6, 3, 3, 0), row("zone-c", 6, 3, 3, 0)),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(3)).DisruptedPods(append(append([]policyv1alpha1.DisruptedPod(nil), recent...), tc.extra)...),
				nodes: nodes, pods: pods, owners: []Owner{owner("rs", 12)}}
			got := summarize(Compute(w.input()))
			got.DisruptedPods = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func threeZoneNodes() []*builders.NodeWrapper {
	return []*builders.NodeWrapper{node("na").Zone("zone-a"), node("nb").Zone("zone-b"), node("nc").Zone("zone-c")}
}

// A Deployment's surge pod, Pending since before a grant (a rollout in a
// full cluster), was NOT missing at the grant (it was a surplus pod):
// explainingRecords must not treat it as "already missing then" and drop the
// record of the pod evicted from zone-a. The controller has no other pod in
// zone-a, so zone-a would stop expecting the evicted pod and grant another
// eviction there.
func TestASurgePodPendingBeforeTheGrantKeepsTheRecord(t *testing.T) {
	const d, e = types.UID("d"), types.UID("e")
	// Deployment d: replicas 3, one pod per zone; a surge pod N1 Pending
	// since t0-1m. Deployment e: 2 pods, both in zone-a.
	surge := pod("d-new").Pending().ControlledBy(replicaSet(d)).CreatedAt(at(-time.Minute))
	before := []*builders.PodWrapper{
		pod("d-a").OnNode("n1").Ready().ControlledBy(replicaSet(d)), pod("d-b").OnNode("n3").Ready().ControlledBy(replicaSet(d)), pod("d-c").OnNode("n4").Ready().ControlledBy(replicaSet(d)),
		surge,
		pod("e-0").OnNode("n2").Ready().ControlledBy(replicaSet(e)), pod("e-1").OnNode("n2").Ready().ControlledBy(replicaSet(e)),
	}
	bud := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1))
	w := world{tdb: bud, nodes: threeZones(), pods: before, owners: []Owner{owner(d, 3), owner(e, 2)}}
	res := Compute(w.input())
	t.Logf("before: %+v", summarize(res).Domains)
	// d-a evicted at t0 (record in zone-a), then deleted; its replacement is
	// not created yet.
	rec := record("d-a", "zone-a", d, t0)
	after := []*builders.PodWrapper{before[1], before[2], surge, before[4], before[5]}
	w = world{tdb: bud.DisruptedPods(rec), nodes: threeZones(), pods: after, owners: []Owner{owner(d, 3), owner(e, 2)}, now: at(2 * time.Second)}
	res = Compute(w.input())
	s := summarize(res)
	t.Logf("after: %+v records=%v", s.Domains, s.DisruptedPods)
	for _, r := range res.Domains {
		if r.Name == "zone-a" && r.DisruptionsAllowed > 0 {
			t.Errorf("zone-a lost d-a (not replaced) and still allows %d more (expected %d, healthy %d); want 0", r.DisruptionsAllowed, r.ExpectedPods, r.CurrentHealthy)
		}
	}
	_ = policyv1alpha1.DisruptedPod{}
}

// Clock skew: the granting replica's clock runs 2 s ahead of the API
// server's. The replacement of the evicted pod is created 1 s after the
// grant in real time, so its creationTimestamp (API server clock) is before
// the record's time (operator clock): it must not be taken for a replica
// "already missing then", dropping the record.
func TestAReplacementOlderThanItsRecordByClockSkewKeepsTheRecord(t *testing.T) {
	const d, e = types.UID("d"), types.UID("e")
	repl := pod("d-repl").Pending().ControlledBy(replicaSet(d)).CreatedAt(at(-1 * time.Second)) // API server clock
	ps := []*builders.PodWrapper{
		pod("d-b").OnNode("n3").Ready().ControlledBy(replicaSet(d)), pod("d-c").OnNode("n4").Ready().ControlledBy(replicaSet(d)), repl,
		pod("e-0").OnNode("n2").Ready().ControlledBy(replicaSet(e)), pod("e-1").OnNode("n2").Ready().ControlledBy(replicaSet(e)),
	}
	rec := record("d-a", "zone-a", d, at(time.Second)) // operator clock, 2 s ahead
	w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).DisruptedPods(rec), nodes: threeZones(), pods: ps,
		owners: []Owner{owner(d, 3), owner(e, 2)}, now: at(3 * time.Second)}
	res := Compute(w.input())
	for _, r := range res.Domains {
		if r.Name == "zone-a" && r.DisruptionsAllowed > 0 {
			t.Errorf("zone-a: expected %d healthy %d allowed %d; records %v", r.ExpectedPods, r.CurrentHealthy, r.DisruptionsAllowed, names(res.DisruptedPods))
		}
	}
}

// A pod on a deleted node that is deleting (finalizer) has been replaced by
// its ReplicaSet. Were the gone-node pod to "explain" the missing pod before
// any record does, the record of a pod evicted from zone-b would explain
// nothing and zone-b would stop expecting it, although the scheduled
// replacement may be the gone pod's, not the evicted one's.
func TestAPodOnAGoneNodeDoesNotOutrankARecord(t *testing.T) {
	const d, e = types.UID("d"), types.UID("e")
	gone := pod("d-a").OnNode("n-gone").Ready().ControlledBy(replicaSet(d)).Deleting(t0)
	ps := []*builders.PodWrapper{
		gone, pod("d-c").OnNode("n4").Ready().ControlledBy(replicaSet(d)), pod("d-r").OnNode("n4").Ready().ControlledBy(replicaSet(d)),
		pod("e-0").OnNode("n3").Ready().ControlledBy(replicaSet(e)), pod("e-1").OnNode("n3").Ready().ControlledBy(replicaSet(e)),
	}
	rec := record("d-b", "zone-b", d, at(-time.Second))
	w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).DisruptedPods(rec), nodes: threeZones(), pods: ps,
		owners: []Owner{owner(d, 3), owner(e, 2)}, now: at(2 * time.Second)}
	in := w.input()
	in.GoneNodes = func(n string) (map[string]string, bool) {
		if n == "n-gone" {
			return map[string]string{zoneKey: "zone-a"}, true
		}
		return nil, false
	}
	res := Compute(in)
	t.Logf("%+v records=%v", res.Domains, names(res.DisruptedPods))
	for _, r := range res.Domains {
		if r.Name == "zone-b" && r.DisruptionsAllowed > 0 {
			t.Errorf("zone-b: expected %d healthy %d allowed %d (record of d-b dropped)", r.ExpectedPods, r.CurrentHealthy, r.DisruptionsAllowed)
		}
	}
}
