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
// give it ("reopen"). Where this process runs the status controller, its
// cache is the one the status was computed from, at least as new: a
// refusal for want of allowance is checked against the same computation on
// the cache as it is now, with the records of the version being decided on,
// and an eviction it allows is granted in a write that carries the new
// numbers, as the status controller's own write would a moment later.
//
// Only refusals for want of allowance are checked: a status that is stale,
// fail-closed, not enforced or blocked is never overridden, and a check
// that cannot compute refuses as the status did. In a process that does not
// run the status controller (a replica that is not the leader) the cache
// may be older than the one the status came from, and nothing is checked.

// recomputable says whether d is a refusal a fresh computation may lift.
func recomputable(d budget.Decision) bool {
	return !d.Allowed && (d.Reason == budget.DecisionInsufficientPods || d.Reason == budget.DecisionMaxDisruptedDomains)
}

// refresh decides again on tdb's status recomputed from the cache, when d
// is a refusal that may be lifted and this process computes statuses. On a
// grant, tdb's status is replaced by the recomputed one (the decision's
// Status is built on it); otherwise tdb is left as it was and d returned.
func (h *EvictionHandler) refresh(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, d budget.Decision, req budget.EvictionRequest) budget.Decision {
	if !recomputable(d) || h.Computes == nil || !h.Computes() {
		return d
	}
	if c := apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed); c == nil || c.Reason == policyv1alpha1.ReasonNotEnforced ||
		c.Reason == policyv1alpha1.ReasonSyncFailed || c.Reason == policyv1alpha1.ReasonDomainError || tdb.Status.ObservedGeneration != tdb.Generation {
		return d
	}
	computed, err := h.snapshots().Compute(ctx, tdb, snapshot.ComputeOptions{Now: req.Now, RecordTimeout: h.RecordTimeout})
	if err != nil {
		log.FromContext(ctx).V(1).Info("recomputing a budget that refuses", "error", err.Error())
		return d
	}
	if reason, _ := computed.Result.Blocked(); reason != "" || computed.Result.Err != nil {
		return d
	}
	fresh := tdb.DeepCopy()
	fresh.Status = *budget.StatusFor(tdb, &computed.Result, req.Now, "")
	again := budget.DecideEviction(fresh, req)
	if !again.Allowed {
		return d
	}
	operatormetrics.RecomputedGrants.Inc()
	tdb.Status = fresh.Status
	return again
}
