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

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// Regression (second reader) R1: a Deployment's surge pod, Pending since before a grant (a rollout
// in a full cluster), was NOT missing at the grant (it was a surplus pod), yet
// explainingRecords treats it as "already missing then" and drops the record
// of the pod evicted from zone-a. The controller has no other pod in zone-a,
// so zone-a stops expecting the evicted pod and grants another eviction there.
func TestRegressionSurgePendingPodDropsRecord(t *testing.T) {
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

// Regression (second reader) R2 (clock skew): the granting replica's clock runs 2 s ahead of the
// API server's. The replacement of the evicted pod is created 1 s after the
// grant in real time, so its creationTimestamp (API server clock) is before
// the record's time (operator clock): it is taken for a replica "already
// missing then" and the record is dropped.
func TestRegressionClockSkewDropsRecord(t *testing.T) {
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

// Regression (second reader) R3: a pod on a deleted node that is deleting (finalizer) has been
// replaced by its ReplicaSet; the gone-node pod "explains" the missing pod
// before any record does, so the record of a pod evicted from zone-b
// explains nothing and zone-b stops expecting it, although the scheduled
// replacement may be the gone pod's, not the evicted one's.
func TestRegressionGoneNodePodOutranksRecord(t *testing.T) {
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
