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

// The reconcilers' unit tests run Reconcile on the controller-runtime fake
// client, which stands for both the manager's cache and the API server. The
// helpers here build that fake cluster with the cache indexes the
// reconcilers query, and read back what a user sees.

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// fakeNS is the namespace of every object of the reconcilers' unit tests.
const fakeNS = "ns"

// fakeT0 is when the fake clocks start: whole seconds, as the API server
// keeps times.
var fakeT0 = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

var fakeZones = []string{"zone-a", "zone-b", "zone-c"}

// fakeCluster is the fake client with the reconcilers' cache indexes; it
// counts the budget status writes and the pod patches sent to it.
type fakeCluster struct {
	client.WithWatch
	statusWrites, podPatches atomic.Int32
}

// indexRecorder is the field indexer of indexingManager: it registers on
// the fake client's builder the indexes the controllers' own setup code
// (snapshot.IndexWorkloadsByUID, snapshot.IndexPodsByNode) registers on a manager.
type indexRecorder struct{ b *fake.ClientBuilder }

func (r *indexRecorder) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	r.b.WithIndex(obj, field, extract)
	return nil
}

// indexingManager is a manager that only has a field indexer.
type indexingManager struct {
	ctrl.Manager
	indexer *indexRecorder
}

func (m indexingManager) GetFieldIndexer() client.FieldIndexer { return m.indexer }

// newFakeCluster returns a fake cluster holding objs.
func newFakeCluster(t *testing.T, objs ...client.Object) *fakeCluster {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := policyv1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := &fakeCluster{}
	b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).
		// Registered inline by DeletionCostReconciler.SetupWithManager.
		WithIndex(&corev1.Pod{}, deletionCostBudgetIndex, func(o client.Object) []string {
			if b := o.GetAnnotations()[budget.DeletionCostBudgetAnnotation]; b != "" {
				return []string{b}
			}
			return nil
		}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, cl client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				if _, ok := obj.(*policyv1alpha1.TopologyDisruptionBudget); ok && sub == "status" {
					c.statusWrites.Add(1)
				}
				return cl.SubResource(sub).Update(ctx, obj, opts...)
			},
			Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
				if _, ok := obj.(*corev1.Pod); ok {
					c.podPatches.Add(1)
				}
				return cl.Patch(ctx, obj, patch, opts...)
			},
		})
	mgr := indexingManager{indexer: &indexRecorder{b: b}}
	if err := snapshot.IndexWorkloadsByUID(mgr); err != nil {
		t.Fatal(err)
	}
	if err := snapshot.IndexPodsByNode(mgr); err != nil {
		t.Fatal(err)
	}
	c.WithWatch = b.Build()
	return c
}

// reconcileBudget runs one Reconcile of the budget fakeNS/name.
func reconcileBudget(t *testing.T, r reconcile.Reconciler, name string) ctrl.Result {
	t.Helper()
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: fakeNS, Name: name}})
	if err != nil {
		t.Fatalf("Reconcile(%s): %v", name, err)
	}
	return res
}

// budgetNamed reads the budget fakeNS/name as a user would.
func (c *fakeCluster) budgetNamed(t *testing.T, name string) *policyv1alpha1.TopologyDisruptionBudget {
	t.Helper()
	var tdb policyv1alpha1.TopologyDisruptionBudget
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: fakeNS, Name: name}, &tdb); err != nil {
		t.Fatal(err)
	}
	return &tdb
}

// podNames lists the pods of fakeNS that exist.
func (c *fakeCluster) podNames(t *testing.T) []string {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(fakeNS)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, p.Name)
	}
	return out
}

// zonedBudget is the suites' budget: pods labelled app, spread over zones,
// one unavailable pod per zone; it has the UID and generation the API server
// would give it.
func zonedBudget(name, app string) *builders.BudgetWrapper {
	return builders.Budget(name).Namespace(fakeNS).MatchLabels(map[string]string{"app": app}).
		TopologyKey(builders.ZoneKey).MaxUnavailable(intstr.FromInt32(1)).Generation(1)
}

// created gives a budget built by a wrapper the UID the API server would.
func created(tdb *policyv1alpha1.TopologyDisruptionBudget) *policyv1alpha1.TopologyDisruptionBudget {
	tdb.UID = types.UID("uid-" + tdb.Name)
	return tdb
}

// zoneNodes returns perZone nodes per zone, named node-<zone>-<i>.
func zoneNodes(perZone int) []client.Object {
	var out []client.Object
	for _, z := range fakeZones {
		for i := range perZone {
			out = append(out, builders.Node(nodeName(z, i)).Zone(z).Obj())
		}
	}
	return out
}

func nodeName(zone string, i int) string { return fmt.Sprintf("node-%s-%d", zone, i) }

// eventReasons drains the reasons of the events recorded so far.
func eventReasons(rec *events.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			// "<type> <reason> <note>"
			if f := strings.Fields(e); len(f) > 1 {
				out = append(out, f[1])
			}
		default:
			return out
		}
	}
}

// snapshotsFor gathers the reconcilers' snapshots from c, read as the cache.
func snapshotsFor(c client.Client) *snapshot.Gatherer { return &snapshot.Gatherer{Cache: c} }

// newMirrorReconciler is the mirror controller over c, sharing the versions
// v with the status controller, its clock stopped at fakeT0.
func newMirrorReconciler(c client.Client, v *budgetstatus.Versions) *MirrorReconciler {
	return &MirrorReconciler{Client: c, LiveReader: c, Recorder: events.NewFakeRecorder(100),
		Clock: clocktesting.NewFakeClock(fakeT0), Versions: v, Snapshots: snapshotsFor(c)}
}

// intOne is the amount 1, for minAvailable and maxUnavailable.
func intOne() intstr.IntOrString { return intstr.FromInt32(1) }
