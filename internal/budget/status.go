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

package budget

// Status assembly: every status a writer writes is built here, so that the
// fields each writer owns are defined in one place. The status controller
// owns the numbers, the domains, the records it drops and the
// DisruptionAllowed condition (StatusFor, FailClosedStatus); the eviction
// webhook adds records and lowers allowances (DecideEviction); the rollout
// controller owns status.rollout and the rollout conditions
// (RolloutStatusFor, ApplyRolloutFields).

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// StatusFor builds the full new status from a computation. A budget that is
// not enforced (notEnforced says why) keeps its numbers, and its condition
// says it is not enforced.
func StatusFor(tdb *policyv1alpha1.TopologyDisruptionBudget, res *Result, now time.Time, notEnforced string) *policyv1alpha1.TopologyDisruptionBudgetStatus {
	next := tdb.Status.DeepCopy()
	next.ObservedGeneration = tdb.Generation
	next.ExpectedPods = res.ExpectedPods
	next.CurrentHealthy = res.CurrentHealthy
	next.DisruptionsAllowed = res.DisruptionsAllowed
	next.Domains = carryBlockedSince(tdb.Status.Domains, res.Domains)
	next.DomainCount = int32(len(res.Domains))
	next.DisruptedDomains = DisruptedDomains(res.Domains)
	next.DisruptedPods = res.DisruptedPods
	reason, msg := res.Blocked()
	if notEnforced != "" {
		reason, msg = policyv1alpha1.ReasonNotEnforced, notEnforced
	}
	apimeta.SetStatusCondition(&next.Conditions, DisruptionCondition(&tdb.Spec, res.Domains, reason, msg, tdb.Generation, now))
	return next
}

// carryBlockedSince keeps each domain's blockedSince while it still allows
// nothing, and clears it once it allows a disruption: the webhook sets it on
// its first refusal (MarkBlocked), the status controller ends it.
func carryBlockedSince(prev, next []policyv1alpha1.DomainStatus) []policyv1alpha1.DomainStatus {
	since := make(map[string]*metav1.Time, len(prev))
	for _, r := range prev {
		if r.BlockedSince != nil {
			since[r.Name] = r.BlockedSince
		}
	}
	if len(since) == 0 {
		return next
	}
	out := make([]policyv1alpha1.DomainStatus, len(next))
	copy(out, next)
	for i := range out {
		if t, ok := since[out[i].Name]; ok && out[i].DisruptionsAllowed == 0 {
			out[i].BlockedSince = t.DeepCopy()
		}
	}
	return out
}

// MarkBlocked returns the status with domain's blockedSince set to now, or
// nil when there is nothing to write: the domain is gone, allows a
// disruption again, or is already marked.
func MarkBlocked(st *policyv1alpha1.TopologyDisruptionBudgetStatus, domain string, now time.Time) *policyv1alpha1.TopologyDisruptionBudgetStatus {
	for i := range st.Domains {
		r := &st.Domains[i]
		if r.Name != domain {
			continue
		}
		if r.BlockedSince != nil || r.DisruptionsAllowed > 0 {
			return nil
		}
		next := st.DeepCopy()
		t := metav1.NewTime(now.Truncate(time.Second))
		next.Domains[i].BlockedSince = &t
		return next
	}
	return nil
}

// FailClosedStatus is the status of a budget whose status cannot be
// computed: nothing allowed, a SyncFailed condition naming the cause, and
// the records kept.
func FailClosedStatus(tdb *policyv1alpha1.TopologyDisruptionBudget, cause error, now time.Time) *policyv1alpha1.TopologyDisruptionBudgetStatus {
	next := tdb.Status.DeepCopy()
	// Allowing nothing is a valid status for the current spec: record the
	// generation, so the webhook reports this cause, not a stale status.
	next.ObservedGeneration = tdb.Generation
	next.DisruptionsAllowed = 0
	for i := range next.Domains {
		next.Domains[i].DisruptionsAllowed = 0
	}
	apimeta.SetStatusCondition(&next.Conditions, metav1.Condition{
		Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionFalse,
		Reason: policyv1alpha1.ReasonSyncFailed, Message: cause.Error(),
		ObservedGeneration: next.ObservedGeneration, LastTransitionTime: metav1.NewTime(now),
	})
	return next
}

// RolloutStatusFor builds the status with the plan's rollout status and
// conditions; every other field is kept.
func RolloutStatusFor(tdb *policyv1alpha1.TopologyDisruptionBudget, plan *RolloutPlan, workloads []policyv1alpha1.RolloutWorkloadStatus, now time.Time) *policyv1alpha1.TopologyDisruptionBudgetStatus {
	next := tdb.Status.DeepCopy()
	ro := plan.Status
	ro.Workloads = workloads
	next.Rollout = &ro
	for _, c := range plan.Conditions {
		c.ObservedGeneration = tdb.Generation
		c.LastTransitionTime = metav1.NewTime(now)
		apimeta.SetStatusCondition(&next.Conditions, c)
	}
	return next
}

// ApplyRolloutFields copies the fields the rollout controller owns, and only
// those, from src to dst: status.rollout and the rollout conditions.
func ApplyRolloutFields(dst, src *policyv1alpha1.TopologyDisruptionBudgetStatus) {
	dst.Rollout = src.Rollout
	for _, t := range []string{policyv1alpha1.ConditionRolloutProgressing, policyv1alpha1.ConditionRolloutComplete} {
		if c := apimeta.FindStatusCondition(src.Conditions, t); c != nil {
			apimeta.SetStatusCondition(&dst.Conditions, *c)
		} else {
			apimeta.RemoveStatusCondition(&dst.Conditions, t)
		}
	}
}
