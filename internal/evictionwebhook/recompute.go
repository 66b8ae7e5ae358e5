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

package evictionwebhook

import (
	"context"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
)

// A budget's status is the status controller's computation at its last
// pass. Between a pod event (a replacement turning Ready) and that pass's
// write, the status still refuses what the pods would allow: a client that
// retries at once meets a refusal core's PodDisruptionBudgets would not
// give it ("reopen"). Where this process runs the status controller, and
// while that controller holds an event of the budget no finished pass has
// read (budgetstatus.Pending), a refusal for want of allowance is checked
// against the status controller's own computation on the shared cache as
// it is now, with the records of the version being decided on and the
// records it confirmed gone; an eviction it allows is granted in a write
// that carries the new numbers, as the status controller's next write
// would. It trusts the cache exactly as that pass does, and drops no record
// that pass would keep.
//
// Only refusals for want of allowance are checked: a status that is stale,
// fail-closed, not enforced or blocked is never overridden, and a check
// that cannot compute refuses as the status did. In a process that does not
// run the status controller (a replica that is not the leader) nothing is
// checked.

// recomputable says whether d is a refusal a fresh computation may lift.
func recomputable(d budget.Decision) bool {
	return !d.Allowed && (d.Reason == budget.DecisionInsufficientPods || d.Reason == budget.DecisionMaxDisruptedDomains)
}

// behind says whether tdb's status may be behind this process's cache: the
// status controller runs here and has an event of the budget it has not
// finished a pass on (budgetstatus.Pending). Otherwise a computation would
// find what the status says, and costs a pass for nothing.
func (h *EvictionHandler) behind(tdb *policyv1alpha1.TopologyDisruptionBudget) bool {
	return h.Computes != nil && h.Computes() && h.Pending != nil && h.Pending.Behind(client.ObjectKeyFromObject(tdb))
}

// refresh decides again on tdb's status recomputed from the cache, when d
// is a refusal that may be lifted and the status is behind the cache. On a
// grant, tdb's status is replaced by the recomputed one (the decision's
// Status is built on it) and fresh is true; otherwise tdb is left as it was
// and d returned.
func (h *EvictionHandler) refresh(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, d budget.Decision, req budget.EvictionRequest) (_ budget.Decision, fresh bool) {
	if !recomputable(d) || !h.behind(tdb) {
		return d, false
	}
	if c := apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed); c == nil || c.Reason == policyv1alpha1.ReasonNotEnforced ||
		c.Reason == policyv1alpha1.ReasonSyncFailed || c.Reason == policyv1alpha1.ReasonDomainError || tdb.Status.ObservedGeneration != tdb.Generation {
		return d, false
	}
	// The records the status controller confirmed gone with a live read:
	// a StatefulSet pod's predecessor would otherwise be held as one more
	// expected pod of its domain, and its replacement's Ready never reopen
	// it here.
	computed, err := h.snapshots().Compute(ctx, tdb, snapshot.ComputeOptions{
		Now: req.Now, RecordTimeout: h.RecordTimeout, GoneConfirmed: h.Pending.Gone(client.ObjectKeyFromObject(tdb)),
	})
	if err != nil {
		log.FromContext(ctx).V(1).Info("recomputing a budget that refuses", "error", err.Error())
		return d, false
	}
	if reason, _ := computed.Result.Blocked(); reason != "" || computed.Result.Err != nil {
		return d, false
	}
	next := tdb.DeepCopy()
	next.Status = *budget.StatusFor(tdb, &computed.Result, req.Now, "")
	again := budget.DecideEviction(next, req)
	if !again.Allowed {
		return d, false
	}
	tdb.Status = next.Status
	return again, true
}

// countRecomputed counts the grants written on a recomputed status.
func countRecomputed(n int) {
	if n > 0 {
		operatormetrics.RecomputedGrants.Add(float64(n))
	}
}
