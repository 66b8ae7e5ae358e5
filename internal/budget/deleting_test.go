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

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// zoneRow returns the row of domain d, failing the test when there is none.
func zoneRow(t *testing.T, res Result, d string) (expected, healthy, allowed int32) {
	t.Helper()
	for _, r := range res.Domains {
		if r.Name == d {
			return r.ExpectedPods, r.CurrentHealthy, r.DisruptionsAllowed
		}
	}
	t.Fatalf("no row for %s in %+v", d, res.Domains)
	return 0, 0, 0
}

// A Deployment's replacement created while the pod it replaces is still
// being deleted must not hide another zone's missing pod. Found by make
// bench-scale's watcher at 1,000 nodes: zone-a's pod was evicted and is
// gone, zone-b's and zone-c's pods are being deleted, and one replacement
// exists (in zone-b). Two pods are missing and the place of neither is
// known, so zone-a must still expect its gone pod; counting the two
// deleting pods as present made nothing missing, dropped zone-a's record
// and let zone-a lose a second pod.
func TestReplacementOfADeletingPodDoesNotHideAnotherZonesMissingPod(t *testing.T) {
	const d = types.UID("d")
	rs := replicaSet(d)
	ps := []*builders.PodWrapper{
		pod("a1").OnNode("n1").Ready().ControlledBy(rs),
		pod("b1").OnNode("n3").Ready().ControlledBy(rs),
		pod("b-old").OnNode("n3").Ready().ControlledBy(rs).Deleting(at(time.Second)),
		pod("b-new").OnNode("n3").Running().NotReady().ControlledBy(rs).CreatedAt(at(2 * time.Second)),
		pod("c1").OnNode("n4").Ready().ControlledBy(rs),
		pod("c-old").OnNode("n4").Ready().ControlledBy(rs).Deleting(at(2 * time.Second)),
	}
	bud := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).
		DisruptedPods(record("a-gone", "zone-a", d, t0))
	w := world{tdb: bud, nodes: threeZones(), pods: ps, owners: []Owner{owner(d, 6)}, now: at(5 * time.Second)}
	res := Compute(w.input())
	if exp, healthy, allowed := zoneRow(t, res, "zone-a"); allowed != 0 || exp != 2 {
		t.Errorf("zone-a lost a-gone, which may not be replaced (2 pods missing, 1 replacement for 3 departures): expected %d, healthy %d, allowed %d; want 2 expected and nothing allowed", exp, healthy, allowed)
	}
	kept := false
	for _, r := range res.DisruptedPods {
		kept = kept || r.Name == "a-gone"
	}
	if !kept {
		t.Errorf("the record of a-gone was dropped while 2 pods are missing: %+v", res.DisruptedPods)
	}
	// Each deleting pod still counts where it runs, unhealthy.
	if exp, healthy, _ := zoneRow(t, res, "zone-c"); exp != 2 || healthy != 1 {
		t.Errorf("zone-c: expected %d, healthy %d; want 2 and 1", exp, healthy)
	}
}

// Once the replacements of the deleting pods exist, nothing is missing: the
// gone pod's record is dropped as before and the deleting pods still count
// where they run until they are gone.
func TestDeletingPodsWithTheirReplacementsLeaveNothingMissing(t *testing.T) {
	const d = types.UID("d")
	rs := replicaSet(d)
	ps := []*builders.PodWrapper{
		pod("a1").OnNode("n1").Ready().ControlledBy(rs),
		pod("a-new").OnNode("n2").Ready().ControlledBy(rs).CreatedAt(at(time.Second)),
		pod("b1").OnNode("n3").Ready().ControlledBy(rs),
		pod("b-old").OnNode("n3").Ready().ControlledBy(rs).Deleting(at(time.Second)),
		pod("b-new").OnNode("n3").Ready().ControlledBy(rs).CreatedAt(at(2 * time.Second)),
		pod("c1").OnNode("n4").Ready().ControlledBy(rs),
		pod("c2").OnNode("n4").Ready().ControlledBy(rs),
	}
	bud := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).
		DisruptedPods(record("a-gone", "zone-a", d, t0))
	w := world{tdb: bud, nodes: threeZones(), pods: ps, owners: []Owner{owner(d, 6)}, now: at(5 * time.Second)}
	res := Compute(w.input())
	for _, r := range res.DisruptedPods {
		if r.Name == "a-gone" {
			t.Errorf("a-gone is replaced (6 pods not deleting, scale 6) but its record is kept: %+v", res.DisruptedPods)
		}
	}
	if exp, healthy, allowed := zoneRow(t, res, "zone-a"); exp != 2 || healthy != 2 || allowed != 1 {
		t.Errorf("zone-a: expected %d, healthy %d, allowed %d; want 2, 2, 1", exp, healthy, allowed)
	}
	if exp, healthy, allowed := zoneRow(t, res, "zone-b"); exp != 3 || healthy != 2 || allowed != 0 {
		t.Errorf("zone-b: expected %d, healthy %d, allowed %d; want 3, 2, 0 (b-old deleting counts until gone)", exp, healthy, allowed)
	}
}

// A deleting pod counts where it runs also when its controller's pods all
// sit in one domain (rule 2), even when a pod on a deleted node takes the
// missing pod its deletion made (second reader).
func TestDeletingPodCountsInItsOnlyDomainBesideAPodOnAGoneNode(t *testing.T) {
	const d = types.UID("d")
	rs := replicaSet(d)
	ps := []*builders.PodWrapper{
		pod("a1").OnNode("n1").Ready().ControlledBy(rs),
		pod("a2").OnNode("n1").Ready().ControlledBy(rs),
		pod("a3").OnNode("n2").Ready().ControlledBy(rs).Deleting(at(-time.Second)),
		pod("c1").OnNode("gone").Ready().ControlledBy(rs),
	}
	w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)), nodes: threeZones(), pods: ps, owners: []Owner{owner(d, 3)}}
	in := w.input()
	in.GoneNodes = func(name string) (map[string]string, bool) {
		if name == "gone" {
			return map[string]string{zoneKey: "zone-c"}, true
		}
		return nil, false
	}
	res := Compute(in)
	if exp, healthy, allowed := zoneRow(t, res, "zone-a"); exp != 3 || allowed != 0 {
		t.Errorf("zone-a (a3 deleting there): expected %d, healthy %d, allowed %d; want 3 expected, nothing allowed", exp, healthy, allowed)
	}
}

// A deleting pod's stand-in does not take a Pending pod for its
// replacement: it vanishes once the pod is gone, and the budget would then
// allow less than it did a moment before (second reader: zone-c allowed 2
// with a1 deleting, 1 once a1 was gone).
func TestDeletingPodDoesNotClaimAPendingPod(t *testing.T) {
	const d = types.UID("d")
	rs := replicaSet(d)
	allowedInC := func(deleting bool) int32 {
		ps := []*builders.PodWrapper{
			pod("c1").OnNode("n4").Ready().ControlledBy(rs),
			pod("c2").OnNode("n4").Ready().ControlledBy(rs),
			pod("new").Pending().ControlledBy(rs).CreatedAt(at(-15 * time.Second)),
		}
		if deleting {
			ps = append(ps, pod("a1").OnNode("n1").Ready().ControlledBy(rs).Deleting(at(-33*time.Second)))
		}
		bud := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(2)).
			DisruptedPods(record("b1", "zone-b", d, at(-7*time.Second)))
		w := world{tdb: bud, nodes: threeZones(), pods: ps, owners: []Owner{owner(d, 4)}}
		in := w.input()
		in.RecordTimeout = time.Hour
		_, _, allowed := zoneRow(t, Compute(in), "zone-c")
		return allowed
	}
	during, after := allowedInC(true), allowedInC(false)
	if during > after {
		t.Errorf("zone-c allows %d while a1 is being deleted and %d once it is gone; want no more while it is deleting", during, after)
	}
}

// A budget that is not scale-based (integer minAvailable, no topologyKey)
// holds the record of a pod missing from the input until a live read
// confirms it gone, as a scale-based one does: the pod may be one the
// webhook read live and granted before the cache saw it, and once the cache
// sees it Ready it would count healthy (second reader).
func TestNonScaleBudgetHoldsAnUnconfirmedGoneRecord(t *testing.T) {
	const rs = types.UID("rs")
	rec := record("a-9", AllDomain, rs, at(-time.Second))
	w := world{tdb: tdb("web").MinAvailable(intstr.FromInt32(2)).DisruptedPods(rec), nodes: threeZones(),
		pods: readyPods("a", "n1", rs, 3), owners: []Owner{owner(rs, 4)}}
	in := w.input()
	in.ConfirmExpiry = true
	res := Compute(in)
	if len(res.DisruptedPods) != 1 || len(res.UnconfirmedGone) != 1 {
		t.Fatalf("records %+v, held %+v; want a-9's held until a live read confirms it gone", res.DisruptedPods, res.UnconfirmedGone)
	}
	in.GoneConfirmed = map[RecordKey]bool{KeyOf(rec): true}
	if res := Compute(in); len(res.DisruptedPods) != 0 {
		t.Errorf("records %+v after a live read confirmed a-9 gone; want none", res.DisruptedPods)
	}
}

// An evicted pod being deleted, whose replacement waits unscheduled, holds
// its own domain only: its record will explain the missing pod once it is
// gone, from the grant on, so the replacement created since may be its own.
// (Holding every domain while a replacement is Pending slowed a 1,000-node
// drain, make bench-scale; that hold is for pods deleted without an
// eviction, whose stand-in no record follows.)
func TestAnEvictedPodsPendingReplacementHoldsItsDomainOnly(t *testing.T) {
	const d = types.UID("d")
	rs := replicaSet(d)
	ps := []*builders.PodWrapper{
		pod("a1").OnNode("n1").Ready().ControlledBy(rs),
		pod("a-old").OnNode("n2").Ready().ControlledBy(rs).Deleting(at(time.Second)),
		pod("new").Pending().ControlledBy(rs).CreatedAt(at(2 * time.Second)),
		pod("b1").OnNode("n3").Ready().ControlledBy(rs), pod("b2").OnNode("n3").Ready().ControlledBy(rs),
		pod("c1").OnNode("n4").Ready().ControlledBy(rs), pod("c2").OnNode("n4").Ready().ControlledBy(rs),
	}
	rec := record("a-old", "zone-a", d, t0)
	rec.UID = ""
	bud := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).DisruptedPods(rec)
	w := world{tdb: bud, nodes: threeZones(), pods: ps, owners: []Owner{owner(d, 6)}, now: at(3 * time.Second)}
	res := Compute(w.input())
	if exp, _, allowed := zoneRow(t, res, "zone-a"); exp != 2 || allowed != 0 {
		t.Errorf("zone-a: expected %d, allowed %d; want 2 and 0", exp, allowed)
	}
	for _, z := range []string{"zone-b", "zone-c"} {
		if exp, healthy, allowed := zoneRow(t, res, z); allowed != 1 {
			t.Errorf("%s: expected %d, healthy %d, allowed %d; want 1 allowed (a-old's replacement is a-old's)", z, exp, healthy, allowed)
		}
	}
	// Deleted without an eviction (no record), the same pod holds every
	// domain while a pod of its controller waits unscheduled.
	w.tdb = tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1))
	res = Compute(w.input())
	if _, _, allowed := zoneRow(t, res, "zone-b"); allowed != 0 {
		t.Errorf("zone-b allows %d with a-old deleted without an eviction and a pod Pending; want 0", allowed)
	}
}
