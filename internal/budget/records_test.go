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
