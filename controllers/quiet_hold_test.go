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
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// replacedInPlace is a ReplicaSet of 6, two pods per zone, whose web-a-0
// (zone-a) was evicted and is still terminating while its replacement
// web-a-2 is already scheduled in zone-a, not Ready: zone-a expects the
// terminating pod and its replacement both, and the status says so. The
// returned function ends web-a-0 (its finalizer removed: gone).
func replacedInPlace(t *testing.T, delay time.Duration) (*fakeCluster, *BudgetReconciler, *clocktesting.FakeClock, *policyv1alpha1.TopologyDisruptionBudget, func()) {
	t.Helper()
	rs := builders.ReplicaSet("web").Namespace(fakeNS).Replicas(6).PodLabels(map[string]string{"app": "web"}).Obj()
	rs.UID = "rs-web"
	podOn := func(name, zone string) *builders.PodWrapper {
		return builders.Pod(name).Namespace(fakeNS).UID(types.UID("uid-" + name)).Labels(map[string]string{"app": "web"}).
			ControlledBy(builders.RefTo(rs)).OnNode(nodeName(zone, 0)).Running().CreatedAt(fakeT0.Add(-time.Hour))
	}
	old := podOn("web-a-0", "zone-a").Ready().Obj()
	ts := metav1.NewTime(fakeT0.Add(-2 * time.Second))
	old.DeletionTimestamp, old.Finalizers = &ts, []string{"test/keep"}
	objs := []client.Object{rs, old,
		podOn("web-a-1", "zone-a").Ready().Obj(),
		podOn("web-a-2", "zone-a").NotReady().CreatedAt(fakeT0.Add(-time.Second)).Obj(),
		podOn("web-b-0", "zone-b").Ready().Obj(), podOn("web-b-1", "zone-b").Ready().Obj(),
		podOn("web-c-0", "zone-c").Ready().Obj(), podOn("web-c-1", "zone-c").Ready().Obj(),
	}
	rec := policyv1alpha1.DisruptedPod{Name: "web-a-0", UID: "uid-web-a-0", Domain: "zone-a", ControllerUID: rs.UID,
		Time: metav1.NewTime(fakeT0.Add(-3 * time.Second))}
	tdb := created(zonedBudget("web", "web").ObservedGeneration(1).DisruptedPods(rec).Obj())
	c := newFakeCluster(t, append(append(zoneNodes(1), objs...), tdb)...)
	clk := clocktesting.NewFakeClock(fakeT0)
	r := newBudgetReconciler(c, events.NewFakeRecorder(10), clk)
	r.ReopenWriteDelay, r.QuietWriteDelay = delay, DefaultQuietWriteDelay
	reconcileBudget(t, r, tdb.Name)
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(terminatingA) {
		t.Fatalf("rows while web-a-0 terminates beside its replacement = %v, want %v", got, terminatingA)
	}
	gone := func() {
		t.Helper()
		var p corev1.Pod
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(old), &p); err != nil {
			t.Fatal(err)
		}
		p.Finalizers = nil
		if err := c.Update(context.Background(), &p); err != nil {
			t.Fatal(err)
		}
		clk.Step(time.Second)
		r.pending().Touch(types.NamespacedName{Namespace: tdb.Namespace, Name: tdb.Name})
	}
	return c, r, clk, tdb, gone
}

var (
	// zone-a: web-a-0 terminating, web-a-1 Ready, web-a-2 not Ready.
	terminatingA = []row{{"zone-a", 3, 1, 2, 0}, {"zone-b", 2, 2, 1, 1}, {"zone-c", 2, 2, 1, 1}}
	// web-a-0 gone: zone-a expects 2 again, its allowance still 0.
	goneA = []row{{"zone-a", 2, 1, 1, 0}, {"zone-b", 2, 2, 1, 1}, {"zone-c", 2, 2, 1, 1}}
)

// When a terminating pod whose replacement already runs in its domain is
// gone, its domain expects one pod fewer and nothing else changes: no
// healthy count, no allowance. That write waits (DefaultQuietWriteDelay) for the
// next change to carry it, even without --reopen-write-delay; the status
// stays behind the cache meanwhile, so the webhook decides on the
// recomputed one.
func TestAFallOfExpectedPodsAloneWaitsForTheNextWrite(t *testing.T) {
	c, r, clk, tdb, gone := replacedInPlace(t, 0)
	key := types.NamespacedName{Namespace: tdb.Namespace, Name: tdb.Name}
	gone()
	writes := c.statusWrites.Load()
	res := reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 0 {
		t.Fatalf("zone-a's expected pods falling, alone, cost %d status writes at once; want 0", n)
	}
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(terminatingA) {
		t.Errorf("rows while held = %v, want the written %v", got, terminatingA)
	}
	if !r.pending().Behind(key) {
		t.Errorf("a held status is reported current: the webhook would not recompute it")
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > DefaultQuietWriteDelay {
		t.Errorf("the holding pass comes back after %v; want within %v", res.RequeueAfter, DefaultQuietWriteDelay)
	}

	// The replacement turns Ready: zone-a reopens, written at once with
	// what was held.
	var p corev1.Pod
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: fakeNS, Name: "web-a-2"}, &p); err != nil {
		t.Fatal(err)
	}
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	if err := c.Status().Update(context.Background(), &p); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Second)
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 1 {
		t.Errorf("status writes once web-a-2 is Ready: %d, want 1 (the reopen, carrying the held change)", n)
	}
	want := []row{{"zone-a", 2, 2, 1, 1}, {"zone-b", 2, 2, 1, 1}, {"zone-c", 2, 2, 1, 1}}
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows = %v, want %v", got, want)
	}
	if r.pending().Behind(key) {
		t.Errorf("the written status is still reported behind")
	}
}

// With nothing to carry it, the held change is written once due.
func TestAHeldFallOfExpectedPodsIsWrittenWhenDue(t *testing.T) {
	c, r, clk, tdb, gone := replacedInPlace(t, 0)
	gone()
	writes := c.statusWrites.Load()
	reconcileBudget(t, r, tdb.Name)
	clk.Step(DefaultQuietWriteDelay / 2)
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 0 {
		t.Fatalf("written %d times halfway through the hold", n)
	}
	clk.Step(DefaultQuietWriteDelay / 2)
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 1 {
		t.Errorf("status writes once due: %d, want 1", n)
	}
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(goneA) {
		t.Errorf("rows once due = %v, want %v", got, goneA)
	}
}

// Such a change waits the longer of the two delays: a shorter
// --reopen-write-delay does not cut it short, a longer one holds it as long.
func TestAFallOfExpectedPodsWaitsTheLongerDelay(t *testing.T) {
	for _, reopen := range []time.Duration{0, 3 * time.Second, 2 * DefaultQuietWriteDelay} {
		t.Run(fmt.Sprint("reopen-write-delay ", reopen), func(t *testing.T) {
			c, r, clk, tdb, gone := replacedInPlace(t, reopen)
			hold := max(reopen, DefaultQuietWriteDelay)
			gone()
			writes := c.statusWrites.Load()
			reconcileBudget(t, r, tdb.Name)
			clk.Step(hold - time.Second)
			reconcileBudget(t, r, tdb.Name)
			if n := c.statusWrites.Load() - writes; n != 0 {
				t.Errorf("written %d times %v into a %v hold", n, hold-time.Second, hold)
			}
			clk.Step(time.Second)
			reconcileBudget(t, r, tdb.Name)
			if n := c.statusWrites.Load() - writes; n != 1 {
				t.Errorf("status writes once due: %d, want 1", n)
			}
		})
	}
}

// Without the webhook in the process (QuietWriteDelay 0) nothing would
// decide on the held numbers: the change is written at once.
func TestAFallOfExpectedPodsIsWrittenAtOnceWithoutTheWebhook(t *testing.T) {
	c, r, _, tdb, gone := replacedInPlace(t, 0)
	r.QuietWriteDelay = 0
	gone()
	writes := c.statusWrites.Load()
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 1 {
		t.Errorf("status writes: %d, want 1 at once", n)
	}
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(goneA) {
		t.Errorf("rows = %v, want %v", got, goneA)
	}
}

// A held change that drops a record is written when the record is due
// (RecordDropDelay from when it was first seen), not later.
func TestAHeldChangeDroppingARecordIsWrittenWhenTheRecordIsDue(t *testing.T) {
	c, r, clk, tdb, gone := replacedInPlace(t, 0)
	// web-a-0's record was first seen by the first pass, at fakeT0.
	clk.Step(RecordDropDelay - 5*time.Second)
	gone() // one second more
	writes := c.statusWrites.Load()
	res := reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 0 {
		t.Fatalf("written %d times at once; want the change held", n)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > 4*time.Second {
		t.Errorf("the holding pass comes back after %v; want within the record's 4s left", res.RequeueAfter)
	}
	clk.Step(4 * time.Second)
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 1 {
		t.Errorf("status writes once the record is due: %d, want 1", n)
	}
	if got := c.budgetNamed(t, tdb.Name); len(got.Status.DisruptedPods) != 0 {
		t.Errorf("records %+v are still in status %v after they were first seen", got.Status.DisruptedPods, RecordDropDelay)
	}
}
