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

package controllers

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

// An eviction the driver was granted keeps its domain's allowance spent
// until the cached budget shows its record, or has caught up with the
// version read after the grant (the record may already be gone with the
// replaced pod), or, without such a version, until its pod is gone for the
// grace period; never past the timeout. resourceVersions are opaque: "99"
// is the version the evicting pass read, "100" the one read after the
// grant, and any other is of unknown order.
func TestEvictionExpectations(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "b"}
	t0 := time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC)
	setup := func() *evictionExpectations {
		e := &evictionExpectations{}
		e.add(key, "fenced", "zone-a", t0, "99", "100")
		e.add(key, "unfenced", "zone-b", t0, "99", "")
		return e
	}
	none := map[types.UID]bool{}
	tests := []struct {
		name              string
		recorded, running map[types.UID]bool
		cached            string
		at                time.Time
		want              map[string]int32
	}{
		{name: "cache behind the fence, pods running: both count", running: map[types.UID]bool{"fenced": true, "unfenced": true},
			cached: "99", at: t0.Add(time.Second), want: map[string]int32{"zone-a": 1, "zone-b": 1}},
		{name: "cache behind the fence, pods gone within the grace: both count", running: none,
			cached: "99", at: t0.Add(time.Second), want: map[string]int32{"zone-a": 1, "zone-b": 1}},
		{name: "cache caught up with the fence: the fenced one is done at once", running: map[types.UID]bool{"unfenced": true},
			cached: "100", at: t0.Add(100 * time.Millisecond), want: map[string]int32{"zone-b": 1}},
		{name: "a record shows: done", recorded: map[types.UID]bool{"fenced": true, "unfenced": true},
			cached: "1", at: t0.Add(100 * time.Millisecond), want: map[string]int32{}},
		{name: "no fence: pod gone past the grace is done; the fenced one still waits for the cache", running: none,
			cached: "99", at: t0.Add(expectationGrace), want: map[string]int32{"zone-a": 1}},
		{name: "cache at a version of unknown order (not the one the pass read): a pod gone past the grace is done", running: none,
			cached: "105", at: t0.Add(expectationGrace), want: map[string]int32{}},
		{name: "cache at a version of unknown order, pods running: both count", running: map[types.UID]bool{"fenced": true, "unfenced": true},
			cached: "105", at: t0.Add(expectationGrace), want: map[string]int32{"zone-a": 1, "zone-b": 1}},
		{name: "timeout", running: map[types.UID]bool{"fenced": true, "unfenced": true},
			cached: "1", at: t0.Add(expectationTimeout + time.Second), want: map[string]int32{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := setup()
			got := e.unrecorded(key, tc.recorded, tc.running, tc.cached, tc.at)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unrecorded (-want +got):\n%s", diff)
			}
			// What was dropped stays dropped.
			if again := e.unrecorded(key, nil, map[types.UID]bool{"fenced": true, "unfenced": true}, "", tc.at); len(again) != len(got) {
				t.Errorf("second call counts %v, first %v", again, got)
			}
		})
	}
}
