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

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
)

// A nodeSelectorTerm the CRD admits but the operator cannot evaluate
// (matchFields operator Exists): before 5a034c6 the rollout pass ran (no pod
// placed, status written); now every pass fails.
func TestRegressionRolloutBrokenNodeTerm(t *testing.T) {
	sts, objs := rolloutWorld()
	tdb := dbBudget(policyv1alpha1.AllDomains)
	tdb.Spec.NodeSelectorTerm = &policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{
		{Key: "metadata.name", Operator: "Exists", Values: []string{"x"}}}}
	c := newFakeCluster(t, append(objs, sts, tdb)...)
	r := &RolloutReconciler{
		Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10), Clock: clocktesting.NewFakeClock(fakeT0),
		Versions: &budgetstatus.Versions{}, Snapshots: snapshotsFor(c),
	}
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: fakeNS, Name: tdb.Name}})
	got := c.budgetNamed(t, tdb.Name)
	t.Logf("err=%v statusWrites=%d rollout=%+v", err, c.statusWrites.Load(), got.Status.Rollout)
	for _, cd := range got.Status.Conditions {
		t.Logf("cond %s=%s %s: %s", cd.Type, cd.Status, cd.Reason, cd.Message)
	}
	if err != nil {
		t.Errorf("Reconcile: %v (behaviour change)", err)
	}
}
