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

// TestComputeRecordLifecycle: an eviction record keeps its running pod from
// counting as healthy until the record timeout, then expires; a deleting
// pod keeps its record; a gone pod's record lives on while it explains a
// missing pod. Three Ready pods a-0..a-2 of one controller (scale 3) run in
// zone-a under maxUnavailable 1.
func TestComputeRecordLifecycle(t *testing.T) {
	const rs = types.UID("rs")
	three := func(change func(ps []*builders.PodWrapper)) []*builders.PodWrapper {
		ps := readyPods("a", "n1", rs, 3)
		if change != nil {
			change(ps)
		}
		return ps
	}
	withUID := func(r policyv1alpha1.DisruptedPod, uid types.UID) policyv1alpha1.DisruptedPod { r.UID = uid; return r }
	type want struct {
		Summary   summary
		RecheckAt *time.Time
	}
	// protected: one pod of three does not count.
	protected := withRows(row("zone-a", 3, 2, 2, 0))
	free := withRows(row("zone-a", 3, 3, 2, 1))
	tests := []struct {
		name    string
		pods    []*builders.PodWrapper
		records []policyv1alpha1.DisruptedPod
		timeout time.Duration
		want    want
	}{
		{name: "no record", pods: three(nil), want: want{Summary: free}},
		{name: "a running record protects its pod until the timeout",
			pods: three(nil), records: []policyv1alpha1.DisruptedPod{record("a-0", "zone-a", rs, at(-time.Minute))},
			want: want{Summary: protected.withRecords("a-0@zone-a"), RecheckAt: ptrTo(at(time.Minute))}},
		{name: "one nanosecond before the timeout the record still protects",
			pods: three(nil), records: []policyv1alpha1.DisruptedPod{record("a-0", "zone-a", rs, at(-testRecordTimeout+1))},
			want: want{Summary: protected.withRecords("a-0@zone-a"), RecheckAt: ptrTo(at(1))}},
		{name: "at the timeout the record has expired and the pod is healthy again",
			pods: three(nil), records: []policyv1alpha1.DisruptedPod{record("a-0", "zone-a", rs, at(-testRecordTimeout))},
			want: want{Summary: func() summary { s := free; s.ExpiredRecords = []string{"a-0"}; return s }()}},
		{name: "RecordTimeout overrides the default",
			pods: three(nil), records: []policyv1alpha1.DisruptedPod{record("a-0", "zone-a", rs, at(-5*time.Minute))},
			timeout: 10 * time.Minute,
			want:    want{Summary: protected.withRecords("a-0@zone-a"), RecheckAt: ptrTo(at(5 * time.Minute))}},
		{name: "RecheckAt is the earliest expiry",
			pods: three(nil), records: []policyv1alpha1.DisruptedPod{
				record("a-0", "zone-a", rs, at(-30*time.Second)), record("a-1", "zone-a", rs, at(-90*time.Second))},
			want: want{Summary: withRows(row("zone-a", 3, 1, 2, 0)).withRecords("a-0@zone-a", "a-1@zone-a"),
				RecheckAt: ptrTo(at(30 * time.Second))}},
		{name: "a not-Ready pod's record is kept until the timeout too",
			pods:    three(func(ps []*builders.PodWrapper) { ps[0].NotReady() }),
			records: []policyv1alpha1.DisruptedPod{record("a-0", "zone-a", rs, at(-time.Minute))},
			want:    want{Summary: protected.withRecords("a-0@zone-a"), RecheckAt: ptrTo(at(time.Minute))}},
		{name: "a deleting pod keeps its record past the timeout",
			pods:    three(func(ps []*builders.PodWrapper) { ps[0].Deleting(t0) }),
			records: []policyv1alpha1.DisruptedPod{record("a-0", "zone-a", rs, at(-10*time.Minute))},
			want:    want{Summary: protected.withRecords("a-0@zone-a")}},
		{name: "a record whose UID differs from the pod of the same name counts as gone",
			pods:    three(nil),
			records: []policyv1alpha1.DisruptedPod{withUID(record("a-0", "zone-a", rs, at(-time.Minute)), "uid-old")},
			want:    want{Summary: free}},
		{name: "a record without UID protects the pod of that name",
			pods:    three(nil),
			records: []policyv1alpha1.DisruptedPod{withUID(record("a-0", "zone-a", rs, at(-time.Minute)), "")},
			want:    want{Summary: protected.withRecords("a-0@zone-a"), RecheckAt: ptrTo(at(time.Minute))}},
		{name: "a gone pod's record is kept past the timeout while its pod is missing",
			pods:    three(nil)[1:],
			records: []policyv1alpha1.DisruptedPod{record("a-0", "zone-a", rs, at(-time.Hour))},
			want:    want{Summary: protected.withRecords("a-0@zone-a")}},
		{name: "a terminal pod's record counts as gone",
			pods:    three(func(ps []*builders.PodWrapper) { ps[0].Phase(corev1.PodSucceeded) }),
			records: []policyv1alpha1.DisruptedPod{record("a-0", "zone-a", rs, at(-time.Minute))},
			want:    want{Summary: protected.withRecords("a-0@zone-a")}},
		{name: "a gone pod's record is dropped once its replacement is scheduled",
			pods:    append(three(nil)[1:], pod("a-3").OnNode("n1").NotReady().ControlledBy(replicaSet(rs))),
			records: []policyv1alpha1.DisruptedPod{record("a-0", "zone-a", rs, at(-time.Minute))},
			want:    want{Summary: protected}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).DisruptedPods(tc.records...),
				nodes: threeZones(), pods: tc.pods, owners: []Owner{owner(rs, 3)}}
			in := w.input()
			if tc.timeout > 0 {
				in.RecordTimeout = tc.timeout
			}
			res := Compute(in)
			got := want{Summary: summarize(res), RecheckAt: res.RecheckAt}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeRecordsKeepTheirFields: the records Compute keeps are the
// input records unchanged, sorted by pod name.
func TestComputeRecordsKeepTheirFields(t *testing.T) {
	const sts = types.UID("sts")
	recs := []policyv1alpha1.DisruptedPod{
		record("s-3", "zone-c", sts, at(-time.Minute)),
		record("s-0", "zone-a", sts, at(-30*time.Second)),
		record("s-2", "zone-b", sts, at(-time.Hour)),
	}
	w := world{
		tdb:   tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).DisruptedPods(recs...),
		nodes: threeZones(),
		pods: []*builders.PodWrapper{
			pod("s-0").OnNode("n1").Ready().ControlledBy(replicaSet(sts)), pod("s-1").OnNode("n3").Ready().ControlledBy(replicaSet(sts)),
		},
		owners: []Owner{owner(sts, 4)},
	}
	want := []policyv1alpha1.DisruptedPod{recs[1], recs[2], recs[0]}
	if diff := cmp.Diff(want, Compute(w.input()).DisruptedPods); diff != "" {
		t.Errorf("Compute().DisruptedPods (-want +got):\n%s", diff)
	}
}

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
