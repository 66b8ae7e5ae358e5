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

// Second reader's regression tests for the mirror controller (0c71a9f).
// Each fails on 41f60fa.

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

func newMirrorReconciler(c client.Client, v *budgetstatus.Versions) *MirrorReconciler {
	return &MirrorReconciler{Client: c, LiveReader: c, Recorder: events.NewFakeRecorder(100),
		Clock: clocktesting.NewFakeClock(fakeT0), Versions: v, Snapshots: snapshotsFor(c)}
}

// pdbsSelecting lists the PDBs of fakeNS whose selector matches the pod's
// labels as they are now, as core's eviction handler reads them.
func pdbsSelecting(t *testing.T, c client.Client, podName string) []string {
	t.Helper()
	ctx := context.Background()
	var pod corev1.Pod
	if err := c.Get(ctx, client.ObjectKey{Namespace: fakeNS, Name: podName}, &pod); err != nil {
		t.Fatal(err)
	}
	var pdbs policyv1.PodDisruptionBudgetList
	if err := c.List(ctx, &pdbs, client.InNamespace(fakeNS)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pdbs.Items {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err == nil && sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, p.Name)
		}
	}
	return out
}

// otherPDBEvent is the predicate SetupWithManager puts on the watch that
// maps a PDB event to every mirrored budget of its namespace (copied from
// mirror_controller.go, which builds it inline).

// Finding 2: two budgets over the same pods whose keys both map to the
// operator's policy.tdb.dev/domain label (a rack-keyed and a
// hostname-keyed budget) fight over the label forever: the younger checks
// for conflicts with the pod relabelled with its own value, which the
// older's mirrors do not select; the older ignores the younger's mirrors.
func TestRegressionTwoOperatorLabelledBudgetsFlipFlopTheDomainLabel(t *testing.T) {
	w := newIngesterWorld()
	for name, n := range w.nodes {
		n.Labels["kubernetes.io/hostname"] = name
		n.Labels["rack"] = "rack-" + n.Labels[builders.ZoneKey]
	}
	rack := created(builders.Budget("a-rack").Namespace(fakeNS).MatchLabels(map[string]string{"app": "ingester"}).
		TopologyKey("rack").MaxUnavailable(intOne()).Generation(1).Obj())
	rack.CreationTimestamp = metav1.NewTime(fakeT0.Add(-2 * time.Hour))
	rack.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
	host := created(builders.Budget("b-host").Namespace(fakeNS).MatchLabels(map[string]string{"app": "ingester"}).
		TopologyKey("kubernetes.io/hostname").MinAvailable(intOne()).Generation(1).Obj())
	host.CreationTimestamp = metav1.NewTime(fakeT0.Add(-1 * time.Hour))
	host.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
	c := newFakeCluster(t, append(w.objects(), rack, host)...)
	versions := &budgetstatus.Versions{}
	status := newBudgetReconciler(c, events.NewFakeRecorder(100), clocktesting.NewFakeClock(fakeT0))
	status.Versions = versions
	mirror := newMirrorReconciler(c, versions)
	reconcileBudget(t, status, rack.Name)
	reconcileBudget(t, status, host.Name)

	// Each pass of one is the pod events that bring the other back.
	var perRound []int32
	for range 4 {
		before := c.podPatches.Load()
		reconcileBudget(t, mirror, rack.Name)
		reconcileBudget(t, mirror, host.Name)
		perRound = append(perRound, c.podPatches.Load()-before)
	}
	if perRound[len(perRound)-1] != 0 {
		t.Errorf("pod label patches per round of the two budgets' passes: %v; want them to settle (one budget yielding with PDBConflict)", perRound)
	}
	tdb := c.budgetNamed(t, host.Name)
	if cnd := apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionMirrored); cnd == nil || cnd.Reason != policyv1alpha1.ReasonPDBConflict {
		t.Errorf("younger budget's Mirrored condition = %+v, want PDBConflict", cnd)
	}
}

// Finding 3: a budget that allows nothing because it is blocked (a covered
// pod on a node without the topology label: DomainError; or NoScale, or a
// fail-closed pass) keeps mirrors whose minAvailable is desiredHealthy:
// core and the planners see disruptionsAllowed: 1 per zone where the
// webhook refuses everything.
func TestRegressionBlockedBudgetMirrorsStillAllow(t *testing.T) {
	w := newIngesterWorld()
	unlabelled := builders.Node("node-nolabel").Obj()
	stray := builders.Pod("stray").Namespace(fakeNS).UID("uid-stray").Labels(map[string]string{"app": "ingester"}).
		OnNode(unlabelled.Name).Running().Ready().Obj()
	tdb := created(zonedBudget("ingesters", "ingester").Obj())
	tdb.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
	c := newFakeCluster(t, append(w.objects(), unlabelled, stray, tdb)...)
	versions := &budgetstatus.Versions{}
	status := newBudgetReconciler(c, events.NewFakeRecorder(100), clocktesting.NewFakeClock(fakeT0))
	status.Versions = versions
	reconcileBudget(t, status, tdb.Name)
	reconcileBudget(t, newMirrorReconciler(c, versions), tdb.Name)

	got := c.budgetNamed(t, tdb.Name)
	if cnd := apimeta.FindStatusCondition(got.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed); cnd == nil || cnd.Reason != policyv1alpha1.ReasonDomainError {
		t.Fatalf("DisruptionAllowed = %+v, want DomainError", cnd)
	}
	var pdbs policyv1.PodDisruptionBudgetList
	_ = c.List(context.Background(), &pdbs, client.InNamespace(fakeNS))
	rows := map[string]policyv1alpha1.DomainStatus{}
	for _, d := range got.Status.Domains {
		rows[d.Name] = d
	}
	for _, p := range pdbs.Items {
		d := rows[p.Labels[budget.DomainLabel]]
		if allowed := d.CurrentHealthy - p.Spec.MinAvailable.IntVal; allowed > d.DisruptionsAllowed {
			t.Errorf("mirror %s: minAvailable %d over %d healthy pods lets core allow %d; the budget allows %d (DomainError)",
				p.Name, p.Spec.MinAvailable.IntVal, d.CurrentHealthy, allowed, d.DisruptionsAllowed)
		}
	}
	if len(pdbs.Items) == 0 {
		t.Fatal("no mirrors")
	}
}

// Finding 4: budgets whose names share their first 170 characters get the
// same mirror name for a domain: the second's Create fails AlreadyExists on
// every pass (requeued every conflictRetry, forever), and its Mirrored
// condition never says so.
func TestRegressionLongBudgetNamesCollide(t *testing.T) {
	long := ""
	for len(long) < 180 {
		long += "x"
	}
	a, b := budget.MirrorName(long+"-a", "zone-a"), budget.MirrorName(long+"-b", "zone-a")
	if a == b {
		t.Errorf("budgets %s-a and %s-b both mirror zone-a as %s", long[:8]+"...", long[:8]+"...", a)
	}
}

var _ = types.UID("")

func intOne() intstr.IntOrString { return intstr.FromInt32(1) }

// Finding 4, as the controller sees it: the second budget's pass requeues
// every conflictRetry forever, with no PDB and a condition that does not say
// why.
func TestRegressionLongBudgetNamesCollideInTheController(t *testing.T) {
	long := ""
	for len(long) < 180 {
		long += "x"
	}
	w := newIngesterWorld()
	objs := w.objects()
	// a second app, disjoint from the first
	for _, z := range fakeZones {
		objs = append(objs, builders.Pod("other-"+z).Namespace(fakeNS).UID(types.UID("uid-other-"+z)).
			Labels(map[string]string{"app": "other"}).OnNode(nodeName(z, 0)).Running().Ready().Obj())
	}
	a := created(zonedBudget(long+"-a", "ingester").Obj())
	b := created(zonedBudget(long+"-b", "other").Obj())
	a.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
	b.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
	c := newFakeCluster(t, append(objs, a, b)...)
	versions := &budgetstatus.Versions{}
	status := newBudgetReconciler(c, events.NewFakeRecorder(100), clocktesting.NewFakeClock(fakeT0))
	status.Versions = versions
	mirror := newMirrorReconciler(c, versions)
	reconcileBudget(t, status, a.Name)
	reconcileBudget(t, status, b.Name)
	reconcileBudget(t, mirror, a.Name)
	res := reconcileBudget(t, mirror, b.Name)
	got := c.budgetNamed(t, b.Name)
	cnd := apimeta.FindStatusCondition(got.Status.Conditions, policyv1alpha1.ConditionMirrored)
	if res.RequeueAfter != 0 || cnd == nil || cnd.Status != metav1.ConditionTrue {
		t.Errorf("budget ...-b: Reconcile = %+v, Mirrored = %+v: its mirrors collide with budget ...-a's names", res, cnd)
	}
}
