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
	"testing"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// Budgets whose names share their first 170 characters must not get the
// same mirror name for a domain: the second's Create would fail
// AlreadyExists on every pass (requeued every conflictRetry, forever), and
// its Mirrored condition would never say so.
func TestLongBudgetNamesGetDistinctMirrorNames(t *testing.T) {
	long := ""
	for len(long) < 180 {
		long += "x"
	}
	a, b := budget.MirrorName(long+"-a", "zone-a"), budget.MirrorName(long+"-b", "zone-a")
	if a == b {
		t.Errorf("budgets %s-a and %s-b both mirror zone-a as %s", long[:8]+"...", long[:8]+"...", a)
	}
}

// Long budget names, as the controller sees them: were their mirror names
// to collide, the second budget's pass would requeue every conflictRetry
// forever, with no PDB and a condition that does not say why.
func TestLongBudgetNamesMirrorWithoutCollidingInTheController(t *testing.T) {
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
