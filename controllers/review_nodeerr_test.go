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
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
)

// nodeFailing is the fake cluster whose cache fails to read one node with
// an error other than not found.
type nodeFailing struct {
	*fakeCluster
	node string
}

func (c nodeFailing) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Node); ok && key.Name == c.node {
		return errors.New("cache: timed out")
	}
	return c.fakeCluster.Get(ctx, key, obj, opts...)
}

// Commit 5a034c6 claims: "the rollout controller no longer swallows node
// read errors". A pass on which a node read fails must not decide.
func TestRegressionRolloutFailsOnNodeReadError(t *testing.T) {
	sts, objs := rolloutWorld()
	tdb := dbBudget(policyv1alpha1.AllDomains)
	fc := newFakeCluster(t, append(objs, sts, tdb)...)
	c := nodeFailing{fakeCluster: fc, node: nodeName("zone-b", 0)}
	before := fc.podNames(t)
	r := &RolloutReconciler{
		Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10), Clock: clocktesting.NewFakeClock(fakeT0),
		Versions: &budgetstatus.Versions{}, Snapshots: &snapshot.Gatherer{Cache: c},
	}
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: fakeNS, Name: tdb.Name}})
	evicted := slices.DeleteFunc(before, func(n string) bool { return slices.Contains(fc.podNames(t), n) })
	if err == nil {
		t.Errorf("Reconcile returned no error on a node read error; evicted %v", evicted)
	}
	if len(evicted) != 0 {
		t.Errorf("evicted %v on a pass whose node reads failed", evicted)
	}
}
