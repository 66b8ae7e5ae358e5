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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// countingReader counts the pods read live.
type countingReader struct {
	client.Reader
	reads int
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.reads++
	return c.Reader.Get(ctx, key, obj, opts...)
}

// webMissingOne is a StatefulSet web of 6 in three zones whose web-5 (zone-c)
// was evicted and is gone, with the objects for a fake cluster and a way to
// make its pods.
func webMissingOne() ([]client.Object, func(name string, uid types.UID, zone string, i int) *builders.PodWrapper) {
	sts := builders.StatefulSet("web").Namespace(fakeNS).Replicas(6).PodLabels(map[string]string{"app": "web"}).Obj()
	sts.UID = "sts-web"
	podOn := func(name string, uid types.UID, zone string, i int) *builders.PodWrapper {
		return builders.Pod(name).Namespace(fakeNS).UID(uid).Labels(map[string]string{"app": "web"}).
			ControlledBy(builders.RefTo(sts)).OnNode(nodeName(zone, i)).Running().CreatedAt(fakeT0.Add(-time.Hour))
	}
	objs := []client.Object{sts}
	for i, z := range []string{"zone-a", "zone-a", "zone-b", "zone-b", "zone-c"} {
		objs = append(objs, podOn(fmt.Sprintf("web-%d", i), types.UID(fmt.Sprintf("uid-web-%d", i)), z, i%2).Ready().Obj())
	}
	return objs, podOn
}

// A record that is no longer needed (its StatefulSet pod's replacement is
// scheduled) but whose drop changes no number is not written at once: the
// next write carries it (in a drain, the replacement turning Ready a moment
// later), which saves a status write per eviction. It is written after
// RecordDropDelay at the latest, so no record outlives its use for long;
// and the live read that confirmed its pod gone is not repeated meanwhile.
func TestARecordNoLongerNeededIsDroppedWithTheNextWrite(t *testing.T) {
	objs, podOn := webMissingOne()
	// web-5 was evicted from zone-c and is gone; its record explains the
	// missing pod there.
	rec := policyv1alpha1.DisruptedPod{Name: "web-5", UID: "uid-web-5-old", Domain: "zone-c", ControllerUID: "sts-web",
		Time: metav1.NewTime(fakeT0.Add(-3 * time.Second))}
	tdb := created(zonedBudget("web", "web").ObservedGeneration(1).DisruptedPods(rec).Obj())
	c := newFakeCluster(t, append(append(zoneNodes(2), objs...), tdb)...)
	clk := clocktesting.NewFakeClock(fakeT0)
	r := newBudgetReconciler(c, events.NewFakeRecorder(10), clk)
	live := &countingReader{Reader: c}
	r.LiveReader = live

	reconcileBudget(t, r, tdb.Name)
	wantRows := []row{{"zone-a", 2, 2, 1, 1}, {"zone-b", 2, 2, 1, 1}, {"zone-c", 2, 1, 1, 0}}
	if got := rowsOf(c.budgetNamed(t, tdb.Name)); fmt.Sprint(got) != fmt.Sprint(wantRows) {
		t.Fatalf("rows with web-5 missing = %v, want %v", got, wantRows)
	}
	writes := c.statusWrites.Load()

	// Its replacement is scheduled in zone-c, not Ready yet: the record is
	// done, and zone-c's numbers stay what they were.
	if err := c.Create(context.Background(), podOn("web-5", "uid-web-5-new", "zone-c", 1).NotReady().Obj()); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Second)
	res := reconcileBudget(t, r, tdb.Name)
	got := c.budgetNamed(t, tdb.Name)
	if n := c.statusWrites.Load() - writes; n != 0 {
		t.Errorf("dropping a record that changes no number cost %d status writes at once; want 0 (the next write carries it)", n)
	}
	if len(got.Status.DisruptedPods) != 1 || fmt.Sprint(rowsOf(got)) != fmt.Sprint(wantRows) {
		t.Errorf("status after the deferred drop: records %+v, rows %v; want the record and %v", got.Status.DisruptedPods, rowsOf(got), wantRows)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > RecordDropDelay {
		t.Errorf("the pass that deferred the drop comes back after %v; want within %v", res.RequeueAfter, RecordDropDelay)
	}
	reads := live.reads
	clk.Step(time.Second)
	reconcileBudget(t, r, tdb.Name)
	if live.reads != reads {
		t.Errorf("a record confirmed gone was read live again (%d reads)", live.reads-reads)
	}

	// Past RecordDropDelay the drop is written on its own.
	clk.Step(RecordDropDelay)
	reconcileBudget(t, r, tdb.Name)
	got = c.budgetNamed(t, tdb.Name)
	if len(got.Status.DisruptedPods) != 0 {
		t.Errorf("records %+v are still in status %v after they were no longer needed; want none", got.Status.DisruptedPods, RecordDropDelay)
	}
	if c.statusWrites.Load()-writes != 1 {
		t.Errorf("status writes after the deferred drop: %d, want 1", c.statusWrites.Load()-writes)
	}
}

// A drop that comes with a change of numbers (the replacement Ready) is
// written at once, with them.
func TestARecordNoLongerNeededIsDroppedWithAChangeOfNumbers(t *testing.T) {
	objs, podOn := webMissingOne()
	rec := policyv1alpha1.DisruptedPod{Name: "web-5", UID: "uid-web-5-old", Domain: "zone-c", ControllerUID: "sts-web",
		Time: metav1.NewTime(fakeT0.Add(-3 * time.Second))}
	tdb := created(zonedBudget("web", "web").ObservedGeneration(1).DisruptedPods(rec).Obj())
	c := newFakeCluster(t, append(append(zoneNodes(2), objs...), tdb)...)
	clk := clocktesting.NewFakeClock(fakeT0)
	r := newBudgetReconciler(c, events.NewFakeRecorder(10), clk)
	reconcileBudget(t, r, tdb.Name)

	if err := c.Create(context.Background(), podOn("web-5", "uid-web-5-new", "zone-c", 1).Ready().Obj()); err != nil {
		t.Fatal(err)
	}
	clk.Step(time.Second)
	reconcileBudget(t, r, tdb.Name)
	got := c.budgetNamed(t, tdb.Name)
	want := []row{{"zone-a", 2, 2, 1, 1}, {"zone-b", 2, 2, 1, 1}, {"zone-c", 2, 2, 1, 1}}
	if len(got.Status.DisruptedPods) != 0 || fmt.Sprint(rowsOf(got)) != fmt.Sprint(want) {
		t.Errorf("after the replacement turned Ready: records %+v, rows %v; want none and %v", got.Status.DisruptedPods, rowsOf(got), want)
	}
}
