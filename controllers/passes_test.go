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
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	ctrlreconcile "sigs.k8s.io/controller-runtime/pkg/reconcile"

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

// A pass that ends between the deletion-cost controller's read of the
// budget (its status) and its snapshot of the pods must not let it rank the
// new pods on the old status.
func TestAPassEndingBetweenTheBudgetReadAndTheSnapshotIsNotMixed(t *testing.T) {
	w := &costWorld{objects: zoneNodes(1)}
	rs := w.replicaSet("web", "web", nil, 0)
	rs.Spec.Replicas = ptr.To(int32(7))
	w.pods(rs, map[string]int{"zone-a": 3, "zone-b": 2, "zone-c": 1})
	starting := builders.Pod("web-zone-c-new").Namespace(fakeNS).UID("uid-web-zone-c-new").Labels(rs.Spec.Template.Labels).
		ControlledBy(builders.RefTo(rs)).CreatedAt(fakeT0.Add(time.Minute)).OnNode(nodeName("zone-c", 0)).Running().NotReady().Obj()
	w.objects = append(w.objects, starting)
	tdb := created(zonedBudget("web", "web").Rollout(policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.AllDomains}).Obj())
	c := newFakeCluster(t, append(w.objects, tdb)...)

	passes := NewStatusPasses()
	status := newBudgetReconciler(c, nil, clocktesting.NewFakeClock(fakeT0))
	status.Passes = passes
	pass := func() {
		t.Helper()
		reconcileBudget(t, status, "web")
		<-passes.events
	}

	// The cost controller's cache reader: armed, its next pod List first
	// lets the new pod turn Ready and the status pass run to its end.
	var armed atomic.Bool
	cache := interceptor.NewClient(c.WithWatch, interceptor.Funcs{
		List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*corev1.PodList); ok && armed.CompareAndSwap(true, false) {
				var p corev1.Pod
				if err := cl.Get(ctx, client.ObjectKey{Namespace: fakeNS, Name: "web-zone-c-new"}, &p); err != nil {
					t.Fatal(err)
				}
				p.Status.Conditions = builders.Pod("x").Ready().Obj().Status.Conditions
				if err := cl.Status().Update(ctx, &p); err != nil {
					t.Fatal(err)
				}
				pass()
			}
			return cl.List(ctx, list, opts...)
		},
	})
	costs := &DeletionCostReconciler{Client: c, Snapshots: &snapshot.Gatherer{Cache: cache}, Versions: status.Versions, Passes: passes}

	pass()
	reconcileBudget(t, costs, "web")
	if got := rowsOf(c.budgetNamed(t, "web")); got[2] != (row{"zone-c", 2, 1, 1, 0}) {
		t.Fatalf("zone-c while its new pod starts: %v", got[2])
	}
	before := c.costs(t)
	patches := c.podPatches.Load()

	// A recompute that starts (any trigger: a ReplicaSet event, a webhook
	// grant, a cost annotation change) just as the pod turns Ready.
	armed.Store(true)
	reconcileBudget(t, costs, "web")
	if n := c.podPatches.Load() - patches; n != 0 {
		t.Errorf("costs computed from the old status and the new pods: %d pods patched; diff (-before +after):\n%s",
			n, cmp.Diff(before, c.costs(t)))
	}
	// The pass's own hand-over then patches them back.
	p2 := c.podPatches.Load()
	reconcileBudget(t, costs, "web")
	t.Logf("patched back by the follow-up reconcile: %d pods", c.podPatches.Load()-p2)
}

// A budget whose status pass fails (fail closed) must still hand over, or
// its costs are never computed (after a restart) or stay frozen. Here the
// budget also covers a custom controller's pod whose scale read fails with
// a 503 (an aggregated API / conversion webhook down); the ReplicaSet's
// pods, which the cost controller can rank, get nothing.
func TestAFailingStatusPassStillHandsOverTheCosts(t *testing.T) {
	for _, handOver := range []bool{false, true} {
		name := map[bool]string{false: "before (no hand-over)", true: "after (hand-over)"}[handOver]
		t.Run(name, func(t *testing.T) {
			w := &costWorld{objects: zoneNodes(1)}
			webWorld(w)
			widget := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "wid", UID: "uid-wid", Controller: ptr.To(true)}
			w.objects = append(w.objects, builders.Pod("wid-0").Namespace(fakeNS).UID("uid-wid-0").Label("app", "web").
				ControlledBy(widget).CreatedAt(fakeT0).OnNode(nodeName("zone-a", 0)).Running().Ready().Obj())
			tdb := created(zonedBudget("web", "web").Rollout(policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.AllDomains}).Obj())
			c := newFakeCluster(t, append(w.objects, tdb)...)
			scales := interceptor.NewClient(c.WithWatch, interceptor.Funcs{
				SubResourceGet: func(context.Context, client.Client, string, client.Object, client.Object, ...client.SubResourceGetOption) error {
					return apierrors.NewServiceUnavailable("widgets.example.com scale: the API is down")
				},
			})
			status := newBudgetReconciler(c, nil, clocktesting.NewFakeClock(fakeT0))
			status.Snapshots = &snapshot.Gatherer{Cache: c, Scales: scales}
			costs := &DeletionCostReconciler{Client: c, Snapshots: &snapshot.Gatherer{Cache: c}, Versions: status.Versions}
			if handOver {
				status.Passes = NewStatusPasses()
				costs.Passes = status.Passes
			}
			for i := 0; i < 3; i++ {
				if _, err := status.Reconcile(context.Background(), reqFor("web")); err == nil {
					t.Fatal("want the status pass to fail")
				}
				reconcileBudget(t, costs, "web")
			}
			got := c.costs(t)
			delete(got, "wid-0")
			if diff := cmp.Diff(webSpread, got); diff != "" {
				t.Errorf("while the status pass fails closed, the ReplicaSet's pods (-want +got):\n%s", diff)
			}
		})
	}
}

func reqFor(name string) ctrlRequest {
	return ctrlRequest{NamespacedName: client.ObjectKey{Namespace: fakeNS, Name: name}}
}

type ctrlRequest = ctrlreconcile.Request
