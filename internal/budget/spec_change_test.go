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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// specChangeWorld: a Deployment of 6 pods, 2 per zone (one node per zone,
// each also in a rack of its own, the zone-a pods in two racks), one zone-a
// pod evicted under topologyKey zone and gone, its replacement not created
// (a ResourceQuota at its limit). The record carries the spec it was
// charged under.
func specChangeWorld(b *builders.BudgetWrapper) world {
	charged := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).Obj()
	rec := record("web-a0", "zone-a", "rs", at(-10*time.Second))
	rec.DomainSpec = DomainSpecOf(&charged.Spec)
	return world{
		tdb: b.DisruptedPods(rec),
		nodes: []*builders.NodeWrapper{
			node("na1").Zone("zone-a").Label("rack", "r1"), node("na2").Zone("zone-a").Label("rack", "r2"),
			node("nb").Zone("zone-b").Label("rack", "r3"), node("nc").Zone("zone-c").Label("rack", "r4"),
		},
		pods: []*builders.PodWrapper{
			pod("web-a1").OnNode("na2").ControlledBy(replicaSet("rs")).Ready(),
			pod("web-b0").OnNode("nb").ControlledBy(replicaSet("rs")).Ready(),
			pod("web-b1").OnNode("nb").ControlledBy(replicaSet("rs")).Ready(),
			pod("web-c0").OnNode("nc").ControlledBy(replicaSet("rs")).Ready(),
			pod("web-c1").OnNode("nc").ControlledBy(replicaSet("rs")).Ready(),
		},
		owners: []Owner{owner("rs", 6)},
	}
}

// A spec change never loosens the arithmetic: a record charged under
// another topologyKey or nodeSelectorTerm opens no row and its missing pod
// counts against every domain, as it would with no record at all.
func TestARecordOfAnotherSpecNeverLoosensTheBudget(t *testing.T) {
	cases := []struct {
		name     string
		b        *builders.BudgetWrapper
		want     summary
		sameSpec bool
	}{{
		name:     "same spec: the record places the missing pod in zone-a",
		b:        tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)),
		want:     withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 2, 2, 1, 1), row("zone-c", 2, 2, 1, 1)),
		sameSpec: true,
	}, {
		name: "topologyKey removed: one row, all, and the missing pod in it",
		b:    tdb("web").MaxUnavailable(intstr.FromInt32(1)),
		want: withRows(row(AllDomain, 6, 5, 5, 0)),
	}, {
		name: "topologyKey changed to rack: no zone row, every rack misses the pod",
		b:    tdb("web").TopologyKey("rack").MaxUnavailable(intstr.FromInt32(1)),
		want: withRows(row("r2", 2, 1, 1, 0), row("r3", 3, 2, 2, 0), row("r4", 3, 2, 2, 0)),
	}, {
		name: "nodeSelectorTerm added: the zone-a row is not kept by the record",
		b: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{
			MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{expr(zoneKey, "NotIn", "zone-a")}}),
		want: withRows(row("zone-b", 3, 2, 2, 0), row("zone-c", 3, 2, 2, 0)),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := specChangeWorld(tc.b).input()
			res := Compute(in)
			got := summarize(res)
			tc.want.DisruptedPods = []string{"web-a0@zone-a"} // kept, unchanged, while its pod is missing
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if tc.sameSpec {
				return
			}
			// Never looser than the same world without the record.
			bare := in
			bare.Budget = in.Budget.DeepCopy()
			bare.Budget.Status.DisruptedPods = nil
			without := Compute(bare)
			if res.DisruptionsAllowed > without.DisruptionsAllowed {
				t.Errorf("allowed %d with the record, %d without it", res.DisruptionsAllowed, without.DisruptionsAllowed)
			}
			for _, r := range res.Domains {
				for _, w := range without.Domains {
					if r.Name == w.Name && r.DisruptionsAllowed > w.DisruptionsAllowed {
						t.Errorf("domain %s allows %d with the record, %d without it", r.Name, r.DisruptionsAllowed, w.DisruptionsAllowed)
					}
				}
			}
		})
	}
}

// The eviction the issue reproduced: after topologyKey was removed, a
// second eviction of the 6 pods under maxUnavailable 1 is refused.
func TestASecondEvictionAfterTheKeyIsRemovedIsRefused(t *testing.T) {
	in := specChangeWorld(tdb("web").MaxUnavailable(intstr.FromInt32(1))).input()
	b := in.Budget.DeepCopy()
	b.Status = statusFrom(b, Compute(in))
	d := DecideEviction(b, EvictionRequest{Pod: pod("web-b0").OnNode("nb").ControlledBy(replicaSet("rs")).Ready().Obj(), Domain: AllDomain, Now: t0})
	if d.Allowed {
		t.Fatalf("second eviction allowed (%s); rows %+v", d.Reason, b.Status.Domains)
	}
}

// A pod being deleted whose record is of another spec explains its missing
// pod where it is now, under the current spec; a pod on a deleted node is
// placed by its node's last labels, not by the stale record.
func TestAStaleRecordOfAPodStillThereFollowsThePod(t *testing.T) {
	old := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).Obj()
	rec := record("web-a1", "zone-a", "rs", at(-5*time.Second))
	rec.DomainSpec = DomainSpecOf(&old.Spec)
	w := world{
		tdb: tdb("web").TopologyKey("rack").MaxUnavailable(intstr.FromInt32(1)).DisruptedPods(rec),
		nodes: []*builders.NodeWrapper{
			node("na").Zone("zone-a").Label("rack", "r1"), node("nb").Zone("zone-b").Label("rack", "r2"),
		},
		pods: []*builders.PodWrapper{
			pod("web-a1").OnNode("na").ControlledBy(replicaSet("rs")).Ready().Deleting(at(-4 * time.Second)),
			pod("web-a2").OnNode("na").ControlledBy(replicaSet("rs")).Ready(),
			pod("web-b1").OnNode("nb").ControlledBy(replicaSet("rs")).Ready(),
			pod("web-b2").OnNode("nb").ControlledBy(replicaSet("rs")).Ready(),
		},
		owners: []Owner{owner("rs", 4)},
	}
	got := summarize(Compute(w.input()))
	want := withRows(row("r1", 2, 1, 1, 0), row("r2", 2, 2, 1, 1))
	want.DisruptedPods = []string{"web-a1@zone-a"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// DomainSpecOf changes with topologyKey and nodeSelectorTerm only.
func TestDomainSpecOf(t *testing.T) {
	base := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).Obj()
	same := []*policyv1alpha1.TopologyDisruptionBudget{
		tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(2)).Obj(),
		tdb("web").TopologyKey(zoneKey).MinAvailable(intstr.FromString("50%")).MaxDisruptedDomains(1).Obj(),
		tdb("other").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).MatchLabels(map[string]string{"app": "db"}).Obj(),
	}
	for _, s := range same {
		if DomainSpecOf(&s.Spec) != DomainSpecOf(&base.Spec) {
			t.Errorf("%+v: DomainSpec changed without a change of topologyKey or nodeSelectorTerm", s.Spec)
		}
	}
	other := []*policyv1alpha1.TopologyDisruptionBudget{
		tdb("web").MaxUnavailable(intstr.FromInt32(1)).Obj(),
		tdb("web").TopologyKey("rack").MaxUnavailable(intstr.FromInt32(1)).Obj(),
		tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{}).Obj(),
		tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{
			MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{expr(corev1.LabelTopologyZone, "In", "zone-a")}}).Obj(),
	}
	seen := map[string]bool{DomainSpecOf(&base.Spec): true}
	for _, o := range other {
		h := DomainSpecOf(&o.Spec)
		if seen[h] {
			t.Errorf("%+v: DomainSpec %s not distinct", o.Spec, h)
		}
		seen[h] = true
	}
}

// A stale record of a pod being deleted outside the new nodeSelectorTerm
// does not let its Pending replacement be taken for an uncovered pod: the
// pod stands in as one deleted without an eviction, and the replacement,
// which may land in any zone, counts against every covered one (second
// reader's finding).
func TestAStaleRecordOfAPodDeletedOutsideTheNewTermExplainsNoReplacement(t *testing.T) {
	old := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).Obj()
	rec := record("web-c0", "zone-c", "rs", at(-100*time.Second))
	rec.DomainSpec = DomainSpecOf(&old.Spec)
	nodes := []*builders.NodeWrapper{node("na").Zone("zone-a"), node("nb").Zone("zone-b"), node("nc").Zone("zone-c")}
	pods := []*builders.PodWrapper{
		pod("web-a0").OnNode("na").ControlledBy(replicaSet("rs")).Ready(),
		pod("web-a1").OnNode("na").ControlledBy(replicaSet("rs")).Ready(),
		pod("web-b0").OnNode("nb").ControlledBy(replicaSet("rs")).Ready(),
		pod("web-b1").OnNode("nb").ControlledBy(replicaSet("rs")).Ready(),
		pod("web-c0").OnNode("nc").ControlledBy(replicaSet("rs")).Ready().Deleting(at(-90 * time.Second)),
		pod("web-c1").OnNode("nc").ControlledBy(replicaSet("rs")).Ready(),
		pod("web-new").ControlledBy(replicaSet("rs")).Pending().CreatedAt(at(-80 * time.Second)),
	}
	term := policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{expr(zoneKey, "NotIn", "zone-c")}}
	w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).NodeSelectorTerm(term).DisruptedPods(rec),
		nodes: nodes, pods: pods, owners: []Owner{owner("rs", 6)}}
	in := w.input()
	with := Compute(in)
	bare := in
	bare.Budget = in.Budget.DeepCopy()
	bare.Budget.Status.DisruptedPods = nil
	without := Compute(bare)
	if with.DisruptionsAllowed > without.DisruptionsAllowed {
		t.Errorf("allowed %d with the stale record, %d without it; rows %+v", with.DisruptionsAllowed, without.DisruptionsAllowed, with.Domains)
	}
	if with.DisruptionsAllowed != 0 {
		t.Errorf("allowed %d; the Pending replacement may land in zone-a or zone-b, each at its budget: rows %+v", with.DisruptionsAllowed, with.Domains)
	}
}
