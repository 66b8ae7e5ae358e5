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

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
)

// reopening is web-5's domain (zone-c) closed by its eviction, written so,
// and its replacement Ready since: the pass that reads it reopens zone-c.
func reopening(t *testing.T, delay time.Duration) (*fakeCluster, *BudgetReconciler, *clocktesting.FakeClock, *policyv1alpha1.TopologyDisruptionBudget) {
	t.Helper()
	objs, podOn := webMissingOne()
	rec := policyv1alpha1.DisruptedPod{Name: "web-5", UID: "uid-web-5-old", Domain: "zone-c", ControllerUID: "sts-web",
		Time: metav1.NewTime(fakeT0.Add(-3 * time.Second))}
	tdb := created(zonedBudget("web", "web").ObservedGeneration(1).DisruptedPods(rec).Obj())
	c := newFakeCluster(t, append(append(zoneNodes(2), objs...), tdb)...)
	clk := clocktesting.NewFakeClock(fakeT0)
	r := newBudgetReconciler(c, events.NewFakeRecorder(10), clk)
	r.ReopenWriteDelay = delay
	reconcileBudget(t, r, tdb.Name)
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(closedC) {
		t.Fatalf("rows with web-5 missing = %v, want %v", got, closedC)
	}
	if err := c.Create(context.Background(), podOn("web-5", "uid-web-5-new", "zone-c", 1).Ready().Obj()); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Second)
	r.pending().Touch(types.NamespacedName{Namespace: tdb.Namespace, Name: tdb.Name})
	return c, r, clk, tdb
}

var (
	closedC = []row{{"zone-a", 2, 2, 1, 1}, {"zone-b", 2, 2, 1, 1}, {"zone-c", 2, 1, 1, 0}}
	openC   = []row{{"zone-a", 2, 2, 1, 1}, {"zone-b", 2, 2, 1, 1}, {"zone-c", 2, 2, 1, 1}}
)

// With --reopen-write-delay, a reopen is held: the status stays as it was
// (stricter than the pods), behind the cache for the webhook, which grants
// on the recomputed numbers meanwhile; it is written once due.
func TestAReopenIsHeldUntilDue(t *testing.T) {
	c, r, clk, tdb := reopening(t, 10*time.Second)
	key := types.NamespacedName{Namespace: tdb.Namespace, Name: tdb.Name}
	writes := c.statusWrites.Load()

	res := reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 0 {
		t.Fatalf("a reopen was written at once (%d writes) with a 10s delay", n)
	}
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(closedC) {
		t.Errorf("rows while held = %v, want the written %v", got, closedC)
	}
	if !r.pending().Behind(key) {
		t.Errorf("a held status is reported current: the webhook would not recompute it")
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > 10*time.Second {
		t.Errorf("the holding pass comes back after %v; want within the delay", res.RequeueAfter)
	}

	// Another pass before it is due holds it still, from the first.
	clk.Step(6 * time.Second)
	res = reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 0 {
		t.Fatalf("written %d times 6s into a 10s hold", n)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > 4*time.Second {
		t.Errorf("6s into the hold the pass comes back after %v; want within the 4s left", res.RequeueAfter)
	}

	clk.Step(4 * time.Second)
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 1 {
		t.Errorf("status writes once due: %d, want 1", n)
	}
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(openC) {
		t.Errorf("rows once due = %v, want %v", got, openC)
	}
	if r.pending().Behind(key) {
		t.Errorf("the written status is still reported behind")
	}
}

// Without the delay (the default) the reopen is written at once.
func TestAReopenIsWrittenAtOnceByDefault(t *testing.T) {
	c, r, _, tdb := reopening(t, 0)
	writes := c.statusWrites.Load()
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 1 {
		t.Errorf("status writes of a reopen without a delay: %d, want 1", n)
	}
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(openC) {
		t.Errorf("rows = %v, want %v", got, openC)
	}
}

// A change that is not only a relaxing one (a pod of zone-a turning not
// Ready) is written at once during a hold, with what was held.
func TestAStricterChangeIsWrittenAtOnceDuringAHold(t *testing.T) {
	c, r, clk, tdb := reopening(t, 10*time.Second)
	reconcileBudget(t, r, tdb.Name)
	writes := c.statusWrites.Load()

	var pod corev1.Pod
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: fakeNS, Name: "web-0"}, &pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	if err := c.Status().Update(context.Background(), &pod); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Second)
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 1 {
		t.Fatalf("status writes after web-0 turned not Ready during a hold: %d, want 1 at once", n)
	}
	want := []row{{"zone-a", 2, 1, 1, 0}, {"zone-b", 2, 2, 1, 1}, {"zone-c", 2, 2, 1, 1}}
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows = %v, want %v (zone-a down, zone-c's held reopen with it)", got, want)
	}
}

// A write that carries the held change (the webhook's grant on the
// recomputed status) ends the hold: nothing is left to write.
func TestAGrantCarryingTheReopenEndsTheHold(t *testing.T) {
	c, r, clk, tdb := reopening(t, 10*time.Second)
	key := types.NamespacedName{Namespace: tdb.Namespace, Name: tdb.Name}
	reconcileBudget(t, r, tdb.Name)

	// The webhook's write: zone-c reopened, the record of web-5 dropped.
	got := c.budgetNamed(t, tdb.Name)
	computed, err := r.Snapshots.Compute(context.Background(), got, snapshot.ComputeOptions{Now: clk.Now(), GoneConfirmed: r.pending().Gone(key)})
	if err != nil {
		t.Fatal(err)
	}
	got.Status = *budget.StatusFor(got, &computed.Result, clk.Now(), "")
	if err := c.Status().Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	writes := c.statusWrites.Load()
	clk.Step(20 * time.Second)
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 0 {
		t.Errorf("the status controller wrote %d times after a grant carried the reopen; want 0", n)
	}
	if r.pending().Behind(key) {
		t.Errorf("the status carried by the grant is still reported behind")
	}
	if fmt.Sprint(rowsOf(c.budgetNamed(t, tdb.Name))) != fmt.Sprint(openC) {
		t.Errorf("rows = %v, want %v", rowsOf(c.budgetNamed(t, tdb.Name)), openC)
	}
}
