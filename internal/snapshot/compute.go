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

package snapshot

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// ComputeOptions are the inputs of a budget's computation that the cache
// does not hold.
type ComputeOptions struct {
	Now           time.Time
	RecordTimeout time.Duration
	// RecordSeen, Phantoms and GoneConfirmed are budget.Input's: what this
	// process knows of the records from its own clock and live reads. Left
	// empty, records past their time and records no longer needed are held
	// (budget.Result.Unconfirmed, UnconfirmedGone), never dropped.
	RecordSeen    map[budget.RecordKey]time.Time
	Phantoms      map[budget.RecordKey]bool
	GoneConfirmed map[budget.RecordKey]bool
}

// Computed is a budget's computation and what it was made from.
type Computed struct {
	Result budget.Result
	// Custom says a controller's scale was read through its scale
	// subresource (not watched).
	Custom bool
	// Fingerprint is that of the pods read.
	Fingerprint uint64
	// GoneNodeRead says a node was missing from the cache and the deleted
	// nodes' last labels were asked for it: they change without an event
	// of the budget (they expire, and may be noted after the node's
	// deletion event), so such a computation holds only for now.
	GoneNodeRead bool
}

// Compute gathers the inputs of one budget from the cache and computes its
// status with the records of tdb's status: the status controller's pass,
// and the eviction webhook's check of a status that refuses.
func (g *Gatherer) Compute(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, o ComputeOptions) (Computed, error) {
	snap, err := g.Snapshot(ctx, tdb)
	if err != nil {
		return Computed{}, err
	}
	out := Computed{Fingerprint: snap.Fingerprint()}
	if err := snap.Coverage.Err(); err != nil {
		out.Result = budget.Result{Err: err}
		return out, nil
	}
	sel := snap.Coverage.Selector()
	refs := map[types.UID]metav1.OwnerReference{}
	for _, p := range snap.Pods {
		if ref := metav1.GetControllerOf(p); ref != nil {
			refs[ref.UID] = *ref
		}
	}
	for _, rec := range tdb.Status.DisruptedPods {
		if _, ok := refs[rec.ControllerUID]; rec.ControllerUID != "" && !ok {
			ref, found, err := g.ControllerByUID(ctx, tdb.Namespace, rec.ControllerUID)
			if err != nil {
				return Computed{Fingerprint: out.Fingerprint}, err
			}
			if found {
				refs[rec.ControllerUID] = ref
			}
		}
	}
	controllersOfBudget, err := g.Controllers(ctx, tdb.Namespace, sel)
	if err != nil {
		return Computed{Fingerprint: out.Fingerprint}, err
	}
	owners, err := g.Owners(ctx, tdb.Namespace, refs)
	if err != nil {
		return Computed{Fingerprint: out.Fingerprint}, err
	}
	out.Custom = owners.Custom
	goneNodes := snap.GoneNodes()
	if last := goneNodes; last != nil {
		goneNodes = func(name string) (map[string]string, bool) {
			out.GoneNodeRead = true
			return last(name)
		}
	}
	out.Result = budget.Compute(budget.Input{
		Budget:        tdb,
		Coverage:      snap.Coverage,
		Pods:          snap.Pods,
		Nodes:         snap.Nodes.Get,
		Owners:        owners.Owners,
		Controllers:   controllersOfBudget,
		Now:           o.Now,
		RecordTimeout: o.RecordTimeout,
		RecordSeen:    o.RecordSeen,
		ConfirmExpiry: true,
		Phantoms:      o.Phantoms,
		GoneConfirmed: o.GoneConfirmed,
		GoneNodes:     goneNodes,
	})
	if err := snap.Nodes.Err(); err != nil {
		return Computed{Fingerprint: out.Fingerprint}, fmt.Errorf("reading nodes: %w", err)
	}
	return out, nil
}
