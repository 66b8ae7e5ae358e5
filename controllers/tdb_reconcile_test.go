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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus/testutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// The status controller's unit tests: the worlds and expected numbers of
// the integration suite (test/integration/controller/status_test.go),
// reconciled once on a fake client.

// ingesterWorld is the integration suite's three-zone world: two nodes per
// zone and, per zone, a StatefulSet of three Ready pods spread over its
// zone's nodes.
type ingesterWorld struct {
	nodes map[string]*corev1.Node
	sets  map[string]*appsv1.StatefulSet // by zone
	pods  map[string]*corev1.Pod
}

func newIngesterWorld() *ingesterWorld {
	w := &ingesterWorld{nodes: map[string]*corev1.Node{}, sets: map[string]*appsv1.StatefulSet{}, pods: map[string]*corev1.Pod{}}
	for _, o := range zoneNodes(2) {
		w.nodes[o.GetName()] = o.(*corev1.Node)
	}
	for _, z := range fakeZones {
		labels := map[string]string{"app": "ingester", "zone": z}
		sts := builders.StatefulSet("ingester-" + z).Namespace(fakeNS).Replicas(3).PodLabels(labels).Obj()
		sts.UID = types.UID("sts-" + z)
		w.sets[z] = sts
		for i := range 3 {
			name := fmt.Sprintf("ingester-%s-%d", z, i)
			w.pods[name] = builders.Pod(name).Namespace(fakeNS).UID(types.UID("uid-" + name)).Labels(labels).
				ControlledBy(builders.RefTo(sts)).OnNode(nodeName(z, i%2)).Running().Ready().Obj()
		}
	}
	return w
}

func (w *ingesterWorld) objects() []client.Object {
	var out []client.Object
	for _, n := range w.nodes {
		out = append(out, n)
	}
	for _, s := range w.sets {
		out = append(out, s)
	}
	for _, p := range w.pods {
		out = append(out, p)
	}
	return out
}

// row is a domain's numbers as a user reads them in status.
type row struct {
	Name                                string
	Expected, Healthy, Desired, Allowed int32
}

func rowsOf(tdb *policyv1alpha1.TopologyDisruptionBudget) []row {
	var out []row
	for _, d := range tdb.Status.Domains {
		out = append(out, row{d.Name, d.ExpectedPods, d.CurrentHealthy, d.DesiredHealthy, d.DisruptionsAllowed})
	}
	return out
}

// evenRows are the rows of the untouched world: three pods per zone, one
// may go.
var evenRows = []row{{"zone-a", 3, 3, 2, 1}, {"zone-b", 3, 3, 2, 1}, {"zone-c", 3, 3, 2, 1}}

func newBudgetReconciler(c client.Client, rec events.EventRecorder, clk *clocktesting.FakeClock) *BudgetReconciler {
	return &BudgetReconciler{
		Client: c, LiveReader: c, Recorder: rec, Clock: clk,
		Versions:  &budgetstatus.Versions{},
		Snapshots: &snapshot.Gatherer{Cache: c},
	}
}

func TestBudgetReconcile(t *testing.T) {
	tests := []struct {
		name string
		// world and tdb change the world and the budget before the pass.
		world func(*ingesterWorld)
		tdb   func(*policyv1alpha1.TopologyDisruptionBudget)
		// operatorNS is the reconciler's OperatorNamespace.
		operatorNS string
		// rows nil: every domain must allow nothing.
		rows []row
		// totals are expectedPods, currentHealthy, disruptionsAllowed;
		// nil: disruptionsAllowed must be 0.
		totals          []int32
		status          metav1.ConditionStatus
		reason, message string
		events          []string
		requeue         time.Duration
	}{
		{
			name: "per-zone numbers and totals of three zones of three Ready pods",
			rows: evenRows, totals: []int32{9, 9, 3},
			status: metav1.ConditionTrue, reason: policyv1alpha1.ReasonSufficientPods,
			message: "3 disruption(s) allowed in zone-a, zone-b, zone-c",
		},
		{
			name: "a pod not Ready: its zone allows nothing",
			world: func(w *ingesterWorld) {
				w.pods["ingester-zone-a-0"].Status.Conditions[0].Status = corev1.ConditionFalse
			},
			rows: []row{{"zone-a", 3, 2, 2, 0}, {"zone-b", 3, 3, 2, 1}, {"zone-c", 3, 3, 2, 1}}, totals: []int32{9, 8, 2},
			status: metav1.ConditionTrue, reason: policyv1alpha1.ReasonSufficientPods,
		},
		{
			name:  "a StatefulSet scaled up whose new pod is missing: it counts in the owner's only zone",
			world: func(w *ingesterWorld) { w.sets["zone-c"].Spec.Replicas = ptr.To[int32](4) },
			rows:  []row{{"zone-a", 3, 3, 2, 1}, {"zone-b", 3, 3, 2, 1}, {"zone-c", 4, 3, 3, 0}}, totals: []int32{10, 9, 2},
			status: metav1.ConditionTrue, reason: policyv1alpha1.ReasonSufficientPods,
		},
		{
			name: "maxDisruptedDomains 1 with a zone disrupted: the other zones allow nothing",
			world: func(w *ingesterWorld) {
				w.pods["ingester-zone-b-1"].Status.Conditions[0].Status = corev1.ConditionFalse
			},
			tdb:  func(tdb *policyv1alpha1.TopologyDisruptionBudget) { tdb.Spec.MaxDisruptedDomains = ptr.To[int32](1) },
			rows: []row{{"zone-a", 3, 3, 2, 0}, {"zone-b", 3, 2, 2, 0}, {"zone-c", 3, 3, 2, 0}}, totals: []int32{9, 8, 0},
			status: metav1.ConditionFalse, reason: policyv1alpha1.ReasonInsufficientPods,
		},
		{
			name:   "a covered pod's node without the zone label: fail closed with DomainError",
			world:  func(w *ingesterWorld) { delete(w.nodes[nodeName("zone-a", 1)].Labels, builders.ZoneKey) },
			status: metav1.ConditionFalse, reason: policyv1alpha1.ReasonDomainError, message: nodeName("zone-a", 1),
			events: []string{policyv1alpha1.EventReasonDomainError},
		},
		{
			name: "a covered pod whose controller has no readable scale: fail closed with SyncFailed, rechecked",
			world: func(w *ingesterWorld) {
				p := builders.Pod("widget-0").Namespace(fakeNS).UID("uid-widget-0").Label("app", "ingester").
					ControlledBy(metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "w-uid"}).
					OnNode(nodeName("zone-b", 0)).Running().Ready().Obj()
				w.pods[p.Name] = p
			},
			status: metav1.ConditionFalse, reason: policyv1alpha1.ReasonSyncFailed, message: "widget-0",
			events: []string{policyv1alpha1.EventReasonNoScale}, requeue: customScaleResync,
		},
		{
			// The API server's CEL rules refuse such a selector; one that
			// slipped past them (an older CRD) must still fail closed.
			name: "a selector that does not parse: fail closed with SyncFailed, the old numbers dropped",
			tdb: func(tdb *policyv1alpha1.TopologyDisruptionBudget) {
				tdb.Spec.Selector = &policyv1alpha1.LabelSelector{MatchExpressions: []policyv1alpha1.LabelSelectorRequirement{{
					Key: "app", Operator: metav1.LabelSelectorOpIn,
				}}}
				tdb.Status.DisruptionsAllowed = 3
				tdb.Status.Domains = []policyv1alpha1.DomainStatus{{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1}}
			},
			rows: []row{}, totals: []int32{0, 0, 0},
			status: metav1.ConditionFalse, reason: policyv1alpha1.ReasonSyncFailed, message: "spec.selector",
		},
		{
			name:       "a budget in the operator's own namespace: its numbers are shown, not enforced",
			operatorNS: fakeNS,
			rows:       evenRows, totals: []int32{9, 9, 3},
			status: metav1.ConditionFalse, reason: policyv1alpha1.ReasonNotEnforced, message: "not enforced",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newIngesterWorld()
			if tc.world != nil {
				tc.world(w)
			}
			tdb := created(zonedBudget("ingesters", "ingester").Obj())
			if tc.tdb != nil {
				tc.tdb(tdb)
			}
			c := newFakeCluster(t, append(w.objects(), tdb)...)
			rec := events.NewFakeRecorder(10)
			r := newBudgetReconciler(c, rec, clocktesting.NewFakeClock(fakeT0))
			r.OperatorNamespace = tc.operatorNS

			res := reconcileBudget(t, r, tdb.Name)

			got := c.budgetNamed(t, tdb.Name)
			if tc.rows != nil {
				if diff := cmp.Diff(tc.rows, rowsOf(got), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("status.domains (-want +got):\n%s", diff)
				}
			} else {
				for _, d := range got.Status.Domains {
					if d.DisruptionsAllowed != 0 {
						t.Errorf("domain %s allows %d, want 0", d.Name, d.DisruptionsAllowed)
					}
				}
			}
			st := got.Status
			if totals := []int32{st.ExpectedPods, st.CurrentHealthy, st.DisruptionsAllowed}; tc.totals != nil && !slices.Equal(totals, tc.totals) ||
				tc.totals == nil && st.DisruptionsAllowed != 0 {
				t.Errorf("expectedPods, currentHealthy, disruptionsAllowed = %v, want %v", totals, tc.totals)
			}
			if st.DomainCount != int32(len(st.Domains)) {
				t.Errorf("domainCount = %d, with %d domains", st.DomainCount, len(st.Domains))
			}
			if got.Status.ObservedGeneration != got.Generation {
				t.Errorf("observedGeneration = %d, want %d", got.Status.ObservedGeneration, got.Generation)
			}
			cond := apimeta.FindStatusCondition(got.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed)
			switch {
			case cond == nil:
				t.Errorf("no %s condition", policyv1alpha1.ConditionDisruptionAllowed)
			case cond.Status != tc.status || cond.Reason != tc.reason || !strings.Contains(cond.Message, tc.message):
				t.Errorf("condition = %s %s %q, want %s %s containing %q", cond.Status, cond.Reason, cond.Message, tc.status, tc.reason, tc.message)
			case !cond.LastTransitionTime.Time.Equal(fakeT0) || cond.ObservedGeneration != got.Generation:
				t.Errorf("condition at %v for generation %d, want %v and %d", cond.LastTransitionTime, cond.ObservedGeneration, fakeT0, got.Generation)
			}
			if diff := cmp.Diff(tc.events, eventReasons(rec)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if res.RequeueAfter != tc.requeue {
				t.Errorf("RequeueAfter = %v, want %v", res.RequeueAfter, tc.requeue)
			}
		})
	}
}

// A budget whose status is already what the pods make it is not written
// again, however late the pass; a change that matters is written once.
func TestBudgetReconcileWritesOnlyChanges(t *testing.T) {
	w := newIngesterWorld()
	tdb := created(zonedBudget("ingesters", "ingester").Obj())
	c := newFakeCluster(t, append(w.objects(), tdb)...)
	clk := clocktesting.NewFakeClock(fakeT0)
	r := newBudgetReconciler(c, events.NewFakeRecorder(10), clk)
	changes := func() map[budget.StatusChange]float64 {
		out := map[budget.StatusChange]float64{}
		for _, ch := range []budget.StatusChange{budget.ChangeAllowance, budget.ChangeHealthy, budget.ChangeExpected, budget.ChangeRecords, budget.ChangeOther} {
			out[ch] = testutil.ToFloat64(operatormetrics.StatusChanges.WithLabelValues(string(ch)))
		}
		return out
	}
	before := changes()

	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load(); n != 1 {
		t.Fatalf("first pass wrote the status %d times, want 1", n)
	}
	written := c.budgetNamed(t, tdb.Name)

	clk.Step(time.Minute)
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load(); n != 1 {
		t.Errorf("a pass over unchanged pods wrote the status: %d writes, want 1", n)
	}
	if again := c.budgetNamed(t, tdb.Name); again.ResourceVersion != written.ResourceVersion {
		t.Errorf("resourceVersion moved from %s to %s", written.ResourceVersion, again.ResourceVersion)
	}

	// A pod turns not Ready: one write, with the new numbers.
	pod := w.pods["ingester-zone-a-0"].DeepCopy()
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	pod.Status.Conditions[0].Status = corev1.ConditionFalse
	if err := c.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	reconcileBudget(t, r, tdb.Name)
	reconcileBudget(t, r, tdb.Name)
	if n := c.statusWrites.Load(); n != 2 {
		t.Errorf("%d status writes after a pod turned not Ready and two passes, want 2", n)
	}
	want := []row{{"zone-a", 3, 2, 2, 0}, {"zone-b", 3, 3, 2, 1}, {"zone-c", 3, 3, 2, 1}}
	if diff := cmp.Diff(want, rowsOf(c.budgetNamed(t, tdb.Name))); diff != "" {
		t.Errorf("status.domains (-want +got):\n%s", diff)
	}
	// Both writes changed an allowance (the first status; zone-a's 1 to 0):
	// tdb_status_changes_written_total says so.
	after := changes()
	for ch, n := range before {
		after[ch] -= n
	}
	wantChanges := map[budget.StatusChange]float64{budget.ChangeAllowance: 2, budget.ChangeHealthy: 0, budget.ChangeExpected: 0, budget.ChangeRecords: 0, budget.ChangeOther: 0}
	if diff := cmp.Diff(wantChanges, after); diff != "" {
		t.Errorf("tdb_status_changes_written_total by change (-want +got):\n%s", diff)
	}
}

// A deleted budget is forgotten without an error or a write.
func TestBudgetReconcileDeletedBudget(t *testing.T) {
	c := newFakeCluster(t, newIngesterWorld().objects()...)
	r := newBudgetReconciler(c, events.NewFakeRecorder(10), clocktesting.NewFakeClock(fakeT0))
	if res := reconcileBudget(t, r, "gone"); res != (ctrl.Result{}) {
		t.Errorf("Reconcile of a deleted budget = %+v, want no requeue", res)
	}
	if n := c.statusWrites.Load(); n != 0 {
		t.Errorf("%d status writes, want 0", n)
	}
}
