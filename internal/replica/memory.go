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

// Package replica holds what one operator process remembers beyond its
// informer cache, shared by its controllers and its eviction webhook, in
// one place, and forgets a budget's part of it when the budget is deleted.
//
// Per budget (by namespace/name):
//
//   - versions (budgetstatus.Versions): the newest version of each budget
//     this process wrote or read. Every status writer (the status, rollout,
//     mirror and deletion-cost controllers, the webhook's grants and
//     blocked marks) starts from it, so a write does not conflict with the
//     cache's lag.
//   - pending (budgetstatus.Pending): the events the status controller has
//     not finished a pass on, and the records it confirmed gone; the webhook
//     checks a decision on its cache only while a status is behind it.
//   - the parts their owners keep (Keep), each with its purpose:
//     the status controller's record sightings (when this process first
//     saw each eviction record: a record expires on this process's clock)
//     and exported allowance series; the hand-over of status passes to the
//     deletion-cost controller (the fingerprint of the pods a pass read);
//     the rollout controller's eviction expectations; the webhook's ledger
//     (the per-budget lock and group-commit queue) and its memo of
//     recomputed statuses.
//
// Shared, not per budget name: the last labels of deleted nodes
// (GoneNodes) and the gathering layer (Snapshots), whose parsed specs are
// replaced when a budget's generation or UID changes. The webhook's
// blocked-domain marks in flight and refusal-event windows are keyed by
// budget UID and end on their own within minutes; they are not kept here.
package replica

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
	"github.com/tdb-operator/tdb-operator/internal/tombstone"
)

// Memory is one process's memory: see the package comment for its parts.
// The zero value is ready for use (no gone nodes, no gathering layer).
type Memory struct {
	// GoneNodes remembers the last labels of deleted nodes (nil: none).
	GoneNodes *tombstone.Nodes
	// Snapshots is the gathering layer of the controllers and the
	// webhook's recomputations (nil: each makes its own).
	Snapshots *snapshot.Gatherer

	versions budgetstatus.Versions
	pending  budgetstatus.Pending

	mu    sync.Mutex
	parts map[string]func(types.NamespacedName)
}

// ForManager is the memory of a manager's process: gone nodes watched on
// its cache, one gathering layer over its client (custom scales read
// live), and each budget forgotten when the cache sees it deleted, on
// every replica, leader or not.
func ForManager(ctx context.Context, mgr ctrl.Manager) (*Memory, error) {
	gone := tombstone.New(nil)
	if err := gone.Watch(ctx, mgr.GetCache()); err != nil {
		return nil, err
	}
	m := &Memory{GoneNodes: gone, Snapshots: &snapshot.Gatherer{Cache: mgr.GetClient(), GoneNodes: gone, Scales: mgr.GetClient()}}
	if err := m.ForgetDeleted(ctx, mgr.GetCache()); err != nil {
		return nil, err
	}
	return m, nil
}

// Versions is the record of budget versions every status writer shares.
func (m *Memory) Versions() *budgetstatus.Versions { return &m.versions }

// Pending is what the status controller knows and the statuses do not
// show yet, for the webhook.
func (m *Memory) Pending() *budgetstatus.Pending { return &m.pending }

// Keep adds an owner's per-budget part, by name, with the function that
// forgets a budget in it. A part kept again under the same name replaces
// the first.
func (m *Memory) Keep(part string, forget func(types.NamespacedName)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.parts == nil {
		m.parts = map[string]func(types.NamespacedName){}
	}
	m.parts[part] = forget
}

// Parts names the parts kept, sorted, versions and pending included.
func (m *Memory) Parts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []string{"pending", "versions"}
	for p := range m.parts {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Forget drops everything remembered of a deleted budget. It may be
// called more than once.
func (m *Memory) Forget(key types.NamespacedName) {
	m.versions.Forget(key)
	m.pending.Forget(key)
	m.mu.Lock()
	forgets := make([]func(types.NamespacedName), 0, len(m.parts))
	for _, f := range m.parts {
		forgets = append(forgets, f)
	}
	m.mu.Unlock()
	for _, f := range forgets {
		f(key)
	}
}

// ForgetDeleted forgets each budget the informer sees deleted.
func (m *Memory) ForgetDeleted(ctx context.Context, informers cache.Informers) error {
	inf, err := informers.GetInformer(ctx, &policyv1alpha1.TopologyDisruptionBudget{})
	if err != nil {
		return fmt.Errorf("watching budget deletions: %w", err)
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{DeleteFunc: m.deleted})
	return err
}

// deleted forgets the budget of a delete event (a tombstone included).
func (m *Memory) deleted(obj any) {
	if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	if tdb, ok := obj.(*policyv1alpha1.TopologyDisruptionBudget); ok {
		m.Forget(types.NamespacedName{Namespace: tdb.Namespace, Name: tdb.Name})
	}
}
