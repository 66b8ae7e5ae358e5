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
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// StatusPasses hands each budget whose status pass ended to the
// deletion-cost controller, with the fingerprint of the pods the pass read
// (snapshot.Snapshot.Fingerprint).
//
// The costs rank domains by the allowances the status holds, and pods by
// what the cache holds; the two agree only when the status was made from
// the pods the ranking sees. A pod event reaches the cache (and so the
// ranking) before the status pass it causes has written the allowances that
// follow from it: a pod turned Ready, say, while its domain still shows the
// allowance of it starting. Ranking on that mix would patch a domain's every
// pod, then patch them back a pass later. So the costs are recomputed when a
// pass ends, and only while the pods match what the pass read; when they do
// not, a newer pass is coming (every change the fingerprint covers is a pod
// event of the status controller), and its end brings the costs back.
type StatusPasses struct {
	events chan event.GenericEvent

	mu   sync.Mutex
	read map[types.NamespacedName]passRead
}

// passRead is what a budget's last pass read: which budget (a recreated one
// starts over) and the fingerprint of its pods.
type passRead struct {
	uid         types.UID
	fingerprint uint64
}

// NewStatusPasses makes the hand-over of one status and one deletion-cost
// controller.
func NewStatusPasses() *StatusPasses {
	return &StatusPasses{events: make(chan event.GenericEvent, 64), read: map[types.NamespacedName]passRead{}}
}

// ended records that the budget's status is current as of tdb, made from
// pods with the given fingerprint, and wakes the deletion-cost controller.
func (p *StatusPasses) ended(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, fingerprint uint64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.read[types.NamespacedName{Namespace: tdb.Namespace, Name: tdb.Name}] = passRead{uid: tdb.UID, fingerprint: fingerprint}
	p.mu.Unlock()
	select {
	case p.events <- event.GenericEvent{Object: tdb.DeepCopy()}:
	case <-ctx.Done():
	}
}

// forget drops a deleted budget.
func (p *StatusPasses) forget(key types.NamespacedName) {
	if p == nil {
		return
	}
	p.mu.Lock()
	delete(p.read, key)
	p.mu.Unlock()
}

// last returns what the budget's last pass read; ok is false if none
// ended since the process started or the budget was recreated.
func (p *StatusPasses) last(key types.NamespacedName) (read passRead, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	read, ok = p.read[key]
	return read, ok
}

// source enqueues the budgets whose pass ended.
func (p *StatusPasses) source() source.Source {
	return source.Channel(p.events, handler.EnqueueRequestsFromMapFunc(budgetItself))
}
