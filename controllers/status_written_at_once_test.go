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

// The written status is the truth within the status lag: no change is held
// back, a relaxing one (a reopen, a fall of expected pods) no more than a
// stricter one, so that kubectl tdb, kubectl get tdb, the mirrored
// PodDisruptionBudgets and every replica's webhook read what the pods say.

// reopening is web-5's domain (zone-c) closed by its eviction, written so,
// and its replacement Ready since: the pass that reads it reopens zone-c.
func reopening(t *testing.T) (*fakeCluster, *BudgetReconciler, *clocktesting.FakeClock, *policyv1alpha1.TopologyDisruptionBudget) {
	t.Helper()
	objs, podOn := webMissingOne()
	rec := policyv1alpha1.DisruptedPod{Name: "web-5", UID: "uid-web-5-old", Domain: "zone-c", ControllerUID: "sts-web",
		Time: metav1.NewTime(fakeT0.Add(-3 * time.Second))}
	tdb := created(zonedBudget("web", "web").ObservedGeneration(1).DisruptedPods(rec).Obj())
	c := newFakeCluster(t, append(append(zoneNodes(2), objs...), tdb)...)
	clk := clocktesting.NewFakeClock(fakeT0)
	r := newBudgetReconciler(c, events.NewFakeRecorder(10), clk)
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

// replacedInPlace is a ReplicaSet of 6, two pods per zone, whose web-a-0
// (zone-a) was evicted and is still terminating while its replacement
// web-a-2 is already scheduled in zone-a, not Ready: zone-a expects the
// terminating pod and its replacement both, and the status says so. The
// returned function ends web-a-0 (its finalizer removed: gone).
func replacedInPlace(t *testing.T) (*fakeCluster, *BudgetReconciler, *clocktesting.FakeClock, *policyv1alpha1.TopologyDisruptionBudget, func()) {
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

// A reopen (web-5's replacement Ready) is written at once.
func TestAReopenIsWrittenAtOnce(t *testing.T) {
	c, r, _, tdb := reopening(t)
	writes := c.statusWrites.Load()
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 1 {
		t.Errorf("status writes of a reopen: %d, want 1", n)
	}
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(openC) {
		t.Errorf("rows = %v, want %v", got, openC)
	}
	if r.pending().Behind(types.NamespacedName{Namespace: tdb.Namespace, Name: tdb.Name}) {
		t.Errorf("the written status is still reported behind")
	}
}

// A terminating pod whose replacement already runs in its domain is gone:
// its domain expects one pod fewer and nothing else changes. That is
// written at once too.
func TestAFallOfExpectedPodsAloneIsWrittenAtOnce(t *testing.T) {
	c, r, _, tdb, gone := replacedInPlace(t)
	gone()
	writes := c.statusWrites.Load()
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 1 {
		t.Errorf("status writes of zone-a's expected pods falling: %d, want 1", n)
	}
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(goneA) {
		t.Errorf("rows = %v, want %v", got, goneA)
	}
	if r.pending().Behind(types.NamespacedName{Namespace: tdb.Namespace, Name: tdb.Name}) {
		t.Errorf("the written status is still reported behind")
	}
}
