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

package budgetstatus

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/util/wait"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// Another process (the second replica's webhook) writes R1 then R2. This
// process reads R1 live outside the write lock (groupcommit's Reread at
// try>1, undo's Reread, the rollout's read after evicting), but its Saw
// lands only after a locked writer of this process re-read R2 and wrote R3.
// R1 is of unknown order: it replaces R3 as the newest and R3 is recorded as
// older. From then on, with no other process writing, no writer of this
// process can ever write the budget again: each attempt is redirected to
// R1, conflicts, re-reads R3, and Saw ignores R3 because it is "older".
func TestRegressionLateUnlockedReadFreezesTheBudget(t *testing.T) {
	ctx := context.Background()
	c := server(t)
	versions := &Versions{}
	r0 := get(t, c)
	versions.Saw(r0)

	// Replica B writes R1 and R2.
	ext := r0.DeepCopy()
	ext.Status.ExpectedPods = 1
	if err := c.Status().Update(ctx, ext); err != nil {
		t.Fatal(err)
	}
	r1 := get(t, c) // this process's unlocked live read, answered now, Saw later
	ext = r1.DeepCopy()
	ext.Status.ExpectedPods = 2
	if err := c.Status().Update(ctx, ext); err != nil {
		t.Fatal(err)
	}

	// A locked writer of this process (e.g. the rollout controller) writes.
	w := &Writer{Name: "review-rollout", Client: c, Live: c, Versions: versions}
	if _, err := w.Update(ctx, r0.DeepCopy(), func(b *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		b.Status.CurrentHealthy = 7
		return b, nil
	}); err != nil {
		t.Fatal(err)
	}
	r3 := get(t, c)

	// The unlocked read's Saw lands late (as Writer.Reread records it).
	versions.Saw(r1, r0.ResourceVersion)

	if got := versions.Newest(r3); got.ResourceVersion != r3.ResourceVersion {
		t.Logf("Newest(live %s) = %s: an older version than the cache", r3.ResourceVersion, got.ResourceVersion)
	}
	// No other writer any more. Every writer of this process keeps losing.
	status := &Writer{Name: "review-status", Client: c, Live: c, Versions: versions, Backoff: wait.Backoff{Steps: 1}, OnlyFromStart: true}
	for i := 0; i < 20; i++ {
		cached := get(t, c) // the informer has caught up
		start := versions.Newest(cached)
		_, errS := status.Update(ctx, start, func(b *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
			b.Status.DisruptionsAllowed = int32(i)
			return b, nil
		})
		_, errW := w.Update(ctx, cached, func(b *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
			b.Status.CurrentHealthy = int32(i)
			return b, nil
		})
		if errS == nil || errW == nil {
			return // healed
		}
		if i == 19 {
			t.Fatalf("after 20 rounds with no other writer, status writer: %v; rollout writer: %v; live still %s",
				errS, errW, get(t, c).ResourceVersion)
		}
	}
}
