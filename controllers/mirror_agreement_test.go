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

	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// A budget that allows nothing because it is blocked (a covered pod on a
// node without the topology label: DomainError; or NoScale, or a
// fail-closed pass) must not keep mirrors whose minAvailable is
// desiredHealthy: core and the planners would see disruptionsAllowed: 1 per
// zone where the webhook refuses everything.
func TestABlockedBudgetsMirrorsAllowNoMoreThanIt(t *testing.T) {
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
