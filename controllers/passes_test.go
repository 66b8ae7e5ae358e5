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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// The deletion costs follow the status passes: they are computed from a
// status made from the very pods they rank, never from pods the cache shows
// newer than the allowances. The case is the integration suite's scale-up
// ("patches only the pods whose cost changes"): a new pod starts in zone-c,
// the status counts it as starting (zone-c allows nothing), then the pod
// turns Ready in the cache before the status pass that follows.
func TestDeletionCostsWaitForTheStatusOfThePodsTheyRank(t *testing.T) {
	w := &costWorld{objects: zoneNodes(1)}
	rs := w.replicaSet("web", "web", nil, 0)
	rs.Spec.Replicas = ptr.To(int32(6))
	w.pods(rs, map[string]int{"zone-a": 3, "zone-b": 2, "zone-c": 1})
	tdb := created(zonedBudget("web", "web").Rollout(policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.AllDomains}).Obj())
	c := newFakeCluster(t, append(w.objects, tdb)...)
	ctx := context.Background()

	passes := NewStatusPasses()
	status := newBudgetReconciler(c, nil, clocktesting.NewFakeClock(fakeT0))
	status.Passes = passes
	costs := &DeletionCostReconciler{Client: c, Snapshots: &snapshot.Gatherer{Cache: c}, Versions: status.Versions, Passes: passes}
	pass := func() {
		t.Helper()
		reconcileBudget(t, status, "web")
		select {
		case e := <-passes.events:
			if e.Object.GetName() != "web" {
				t.Fatalf("the pass handed over %s, want web", e.Object.GetName())
			}
		default:
			t.Fatal("the status pass handed nothing to the deletion-cost controller")
		}
	}
	expectCosts := func(step string, want map[string]string) {
		t.Helper()
		if diff := cmp.Diff(want, c.costs(t)); diff != "" {
			t.Errorf("%s: pods' deletion cost and marker (-want +got):\n%s", step, diff)
		}
	}

	reconcileBudget(t, costs, "web")
	expectCosts("before any status pass", webReleased)

	pass()
	reconcileBudget(t, costs, "web")
	expectCosts("after the first pass", webSpread)

	// Scale up: the new pod lands in zone-c, not Ready yet.
	rs.Spec.Replicas = ptr.To(int32(7))
	if err := c.Update(ctx, rs); err != nil {
		t.Fatal(err)
	}
	starting := builders.Pod("web-zone-c-new").Namespace(fakeNS).UID("uid-web-zone-c-new").Labels(rs.Spec.Template.Labels).
		ControlledBy(builders.RefTo(rs)).CreatedAt(fakeT0.Add(time.Minute)).OnNode(nodeName("zone-c", 0)).Running().NotReady().Obj()
	if err := c.Create(ctx, starting); err != nil {
		t.Fatal(err)
	}
	pass()
	if got := rowsOf(c.budgetNamed(t, "web")); got[2] != (row{"zone-c", 2, 1, 1, 0}) {
		t.Fatalf("zone-c while its new pod starts: %v, want it to allow nothing", got[2])
	}
	reconcileBudget(t, costs, "web")
	withNew := map[string]string{}
	for k, v := range webSpread {
		withNew[k] = v
	}
	withNew["web-zone-c-0"] = "-1 web"
	withNew["web-zone-c-new"] = "-2 web" // not Ready: removed first
	expectCosts("the new pod starting", withNew)
	patches := c.podPatches.Load()

	// The pod turns Ready; the cache shows it before the status pass that
	// follows has raised zone-c's allowance.
	var ready corev1.Pod
	if err := c.Get(ctx, client.ObjectKey{Namespace: fakeNS, Name: "web-zone-c-new"}, &ready); err != nil {
		t.Fatal(err)
	}
	ready.Status.Conditions = builders.Pod("x").Ready().Obj().Status.Conditions
	if err := c.Status().Update(ctx, &ready); err != nil {
		t.Fatal(err)
	}
	reconcileBudget(t, costs, "web")
	if n := c.podPatches.Load() - patches; n != 0 {
		t.Errorf("costs computed from pods newer than the status: %d pods patched (zone-c lifted above the others, to drop back a pass later), want none", n)
	}
	expectCosts("the pod Ready, its pass not yet run", withNew)

	pass()
	reconcileBudget(t, costs, "web")
	expectCosts("after the pass", withNew)
	if n := c.podPatches.Load() - patches; n != 0 {
		t.Errorf("%d pods patched once the pass caught up, want none (the new pod stays the newest of zone-c)", n)
	}
}

// A budget that is gone is forgotten; one never passed has no pass.
func TestStatusPassesForget(t *testing.T) {
	p := NewStatusPasses()
	key := types.NamespacedName{Namespace: fakeNS, Name: "web"}
	if _, ok := p.last(key); ok {
		t.Error("a budget never passed has a pass")
	}
	tdb := created(zonedBudget("web", "web").Obj())
	p.ended(context.Background(), tdb, 42)
	if read, ok := p.last(key); !ok || read != (passRead{uid: tdb.UID, fingerprint: 42}) {
		t.Errorf("last = %+v, %v; want the pass just ended", read, ok)
	}
	p.forget(key)
	if _, ok := p.last(key); ok {
		t.Error("a forgotten budget still has a pass")
	}
}
