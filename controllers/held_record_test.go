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
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// The status controller's pod cache still shows the
// old web-5 (being deleted, in zone-b) while the StatefulSet has already
// recreated web-5 in zone-a, where it turned Ready and was evicted: the
// webhook read it live (the cached web-5 is not healthy) and recorded it,
// in zone-a. The record's pod is missing from the cache and another pod
// (its predecessor) holds its name there, so attribution takes the record
// for "replaced under the same name, and placed" (attribution.go) and
// drops it; the live read finds the recorded pod itself (same UID), so the
// record is held (UnconfirmedGone), but a held record changes no number
// (records.go holdUnconfirmedGone). Zone-a then expects only the two pods
// the cache shows there and would allow one more eviction while the
// recorded web-5 is still terminating in it: the held record counts as an
// expected, not healthy pod of its domain until a live read confirms it.
func TestHeldRecordOfAPodTheCacheHasNotSeenCountsInItsDomain(t *testing.T) {
	sts := builders.StatefulSet("web").Namespace(fakeNS).Replicas(6).PodLabels(map[string]string{"app": "web"}).Obj()
	sts.UID = "sts-web"
	podOn := func(name string, uid types.UID, node string) *builders.PodWrapper {
		return builders.Pod(name).Namespace(fakeNS).UID(uid).Labels(map[string]string{"app": "web"}).
			ControlledBy(builders.RefTo(sts)).OnNode(node).Running().Ready().CreatedAt(fakeT0.Add(-time.Hour))
	}
	deleting := func(p *corev1.Pod) *corev1.Pod {
		ts := metav1.NewTime(fakeT0.Add(-10 * time.Second))
		p.DeletionTimestamp, p.Finalizers = &ts, []string{"test/keep"}
		return p
	}
	cached := []client.Object{
		sts,
		podOn("web-0", "uid-web-0", nodeName("zone-a", 0)).Obj(),
		podOn("web-1", "uid-web-1", nodeName("zone-a", 1)).Obj(),
		podOn("web-2", "uid-web-2", nodeName("zone-b", 0)).Obj(),
		deleting(podOn("web-5", "uid-web-5-old", nodeName("zone-b", 1)).Obj()),
		podOn("web-3", "uid-web-3", nodeName("zone-c", 0)).Obj(),
		podOn("web-4", "uid-web-4", nodeName("zone-c", 1)).Obj(),
	}
	tdb := created(zonedBudget("web", "web").ObservedGeneration(1).DisruptedPods(policyv1alpha1.DisruptedPod{
		Name: "web-5", UID: "uid-web-5-new", Domain: "zone-a", ControllerUID: sts.UID, Time: metav1.NewTime(fakeT0.Add(-5 * time.Second)),
	}).Obj())
	c := newFakeCluster(t, append(append(zoneNodes(2), cached...), tdb)...)
	// The API server: the new web-5, in zone-a, being evicted.
	live := newFakeCluster(t, deleting(podOn("web-5", "uid-web-5-new", nodeName("zone-a", 1)).CreatedAt(fakeT0.Add(-30*time.Second)).Obj()))
	r := newBudgetReconciler(c, events.NewFakeRecorder(10), clocktesting.NewFakeClock(fakeT0))
	r.LiveReader = live

	reconcileBudget(t, r, tdb.Name)

	got := rowsOf(c.budgetNamed(t, tdb.Name))
	// zone-a: web-0, web-1 and the recorded web-5 (terminating): 3 expected,
	// 2 healthy, 2 needed, nothing to spare.
	if len(got) == 0 || got[0] != (row{"zone-a", 3, 2, 2, 0}) {
		t.Errorf("zone-a row = %+v, want {zone-a 3 2 2 0}; all rows:\n%s", got[0], cmp.Diff(nil, got))
	}
}

// failingReader answers every read with an error, as an API server that
// cannot be reached.
type failingReader struct{ client.Reader }

func (failingReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return errors.New("connection refused")
}

// wholeWeb is a StatefulSet web of six Ready pods, two per zone, none
// missing: the StatefulSet first, then its pods.
func wholeWeb() (*appsv1.StatefulSet, []client.Object) {
	sts := builders.StatefulSet("web").Namespace(fakeNS).Replicas(6).PodLabels(map[string]string{"app": "web"}).Obj()
	sts.UID = "sts-web"
	objs := []client.Object{sts}
	for i, z := range []string{"zone-a", "zone-a", "zone-b", "zone-b", "zone-c", "zone-c"} {
		name := fmt.Sprintf("web-%d", i)
		objs = append(objs, builders.Pod(name).Namespace(fakeNS).UID(types.UID("uid-"+name)).Labels(map[string]string{"app": "web"}).
			ControlledBy(builders.RefTo(sts)).OnNode(nodeName(z, i%2)).Running().Ready().CreatedAt(fakeT0.Add(-time.Hour)).Obj())
	}
	return sts, objs
}

// A record the controller would drop (its pod is gone from the cache and
// nothing is missing) is held until a live read confirms its pod gone. When
// that read fails, the pass must come back soon: no pod event may follow,
// and the held record keeps a domain one short until it is confirmed.
func TestFailedLiveReadOfAHeldRecordIsRetried(t *testing.T) {
	sts, objs := wholeWeb()
	// web-9 was evicted from zone-a; the cache no longer shows it, and
	// nothing is missing: the record would be dropped once confirmed.
	tdb := created(zonedBudget("web", "web").ObservedGeneration(1).DisruptedPods(policyv1alpha1.DisruptedPod{
		Name: "web-9", UID: "uid-web-9", Domain: "zone-a", ControllerUID: sts.UID, Time: metav1.NewTime(fakeT0.Add(-5 * time.Second)),
	}).Obj())
	c := newFakeCluster(t, append(append(zoneNodes(2), objs...), tdb)...)
	r := newBudgetReconciler(c, events.NewFakeRecorder(10), clocktesting.NewFakeClock(fakeT0))
	r.LiveReader = failingReader{}

	res := reconcileBudget(t, r, tdb.Name)

	held := false
	for _, rec := range c.budgetNamed(t, tdb.Name).Status.DisruptedPods {
		held = held || rec.Name == "web-9"
	}
	if !held {
		t.Fatalf("the record of web-9 was dropped without a live read confirming its pod gone")
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > 5*time.Second {
		t.Errorf("after a failed live read the pass comes back after %v; want within 5s", res.RequeueAfter)
	}
}

// togetherReader answers NotFound to each read once n reads are in flight at
// once; a read that waits 5 s for the others fails, as a read of an API
// server that does not answer.
type togetherReader struct {
	client.Reader
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

func (r *togetherReader) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	r.mu.Lock()
	r.arrived++
	if r.arrived == r.n {
		close(r.all)
	}
	r.mu.Unlock()
	select {
	case <-r.all:
		return apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
	case <-time.After(5 * time.Second):
		return fmt.Errorf("reading %s: no answer (the other reads never came)", key)
	}
}

// A pass that holds several records of gone pods confirms them with live
// reads that go out together: under a large drain each read of a busy API
// server takes hundreds of milliseconds, and one after another they kept a
// budget's status seconds behind its pods. With reads that answer only when
// all are in flight at once, the records are dropped in one pass.
func TestLiveReadsOfOnePassGoOutTogether(t *testing.T) {
	sts, objs := wholeWeb()
	// Three evicted pods, one per zone, gone from the cache with nothing
	// missing: each record waits for a live read to confirm it gone.
	var records []policyv1alpha1.DisruptedPod
	for i, z := range []string{"zone-a", "zone-b", "zone-c"} {
		name := fmt.Sprintf("web-%d", 7+i)
		records = append(records, policyv1alpha1.DisruptedPod{Name: name, UID: types.UID("uid-" + name), Domain: z,
			ControllerUID: sts.UID, Time: metav1.NewTime(fakeT0.Add(-5 * time.Second))})
	}
	tdb := created(zonedBudget("web", "web").ObservedGeneration(1).DisruptedPods(records...).Obj())
	c := newFakeCluster(t, append(append(zoneNodes(2), objs...), tdb)...)
	r := newBudgetReconciler(c, events.NewFakeRecorder(10), clocktesting.NewFakeClock(fakeT0))
	r.LiveReader = &togetherReader{n: len(records), all: make(chan struct{})}

	reconcileBudget(t, r, tdb.Name)

	got := c.budgetNamed(t, tdb.Name)
	if len(got.Status.DisruptedPods) > 0 {
		t.Errorf("records still held after one pass: %+v; the live reads went out one at a time", got.Status.DisruptedPods)
	}
	if rows := rowsOf(got); !cmp.Equal(rows, []row{{"zone-a", 2, 2, 1, 1}, {"zone-b", 2, 2, 1, 1}, {"zone-c", 2, 2, 1, 1}}) {
		t.Errorf("rows = %+v, want each zone whole with one to spare", rows)
	}
}

// inFlightReader answers NotFound after a moment and keeps the most reads
// it had in flight at once.
type inFlightReader struct {
	client.Reader
	mu             sync.Mutex
	inFlight, most int
}

func (r *inFlightReader) Get(_ context.Context, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
	r.mu.Lock()
	r.inFlight++
	r.most = max(r.most, r.inFlight)
	r.mu.Unlock()
	time.Sleep(20 * time.Millisecond)
	r.mu.Lock()
	r.inFlight--
	r.mu.Unlock()
	return apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
}

// However many records a pass confirms, and however many passes run, the
// status controller's live reads in flight stay within bounds: a pass's
// within liveReadsPerPass, all passes' within the controller's limit. A
// drain that leaves hundreds of records must not flood the API server the
// eviction webhook is waiting on.
func TestLiveReadsInFlightAreBounded(t *testing.T) {
	for _, tc := range []struct {
		name           string
		budgets, limit int
		want           int
	}{
		{name: "one pass", budgets: 1, want: liveReadsPerPass},
		{name: "three passes, all passes' limit 10", budgets: 3, limit: 10, want: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sts := builders.StatefulSet("web").Namespace(fakeNS).Replicas(0).PodLabels(map[string]string{"app": "web"}).Obj()
			sts.UID = "sts-web"
			reader := &inFlightReader{}
			c := newFakeCluster(t, append(zoneNodes(2), sts)...)
			r := newBudgetReconciler(c, events.NewFakeRecorder(100), clocktesting.NewFakeClock(fakeT0))
			r.LiveReader, r.liveReadsLimit = reader, tc.limit
			var names []string
			for b := range tc.budgets {
				name := fmt.Sprintf("web-%d", b)
				names = append(names, name)
				// Six times a pass's bound of records of gone pods.
				var records []policyv1alpha1.DisruptedPod
				for i := range 6 * liveReadsPerPass {
					pod := fmt.Sprintf("%s-%d", name, i)
					records = append(records, policyv1alpha1.DisruptedPod{Name: pod, UID: types.UID("uid-" + pod), Domain: "zone-a",
						ControllerUID: sts.UID, Time: metav1.NewTime(fakeT0.Add(-5 * time.Second))})
				}
				if err := c.Create(context.Background(), created(zonedBudget(name, "web").ObservedGeneration(1).DisruptedPods(records...).Obj())); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			for _, name := range names {
				wg.Add(1)
				go func() {
					defer wg.Done()
					reconcileBudget(t, r, name)
				}()
			}
			wg.Wait()
			if reader.most > tc.want {
				t.Errorf("%d live reads in flight at once, want at most %d", reader.most, tc.want)
			}
			for _, name := range names {
				if got := c.budgetNamed(t, name).Status.DisruptedPods; len(got) > 0 {
					t.Errorf("%s: %d records still held after its pass; every pod was gone", name, len(got))
				}
			}
		})
	}
}
