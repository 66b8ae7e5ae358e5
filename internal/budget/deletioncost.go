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

import (
	"sort"
	"strconv"
	"time"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// Scale-down order of a ReplicaSet, through pod-deletion-cost.
//
// The ReplicaSet controller removes, on scale-down, the pods it ranks first:
// unscheduled before scheduled, Pending before Running, not Ready before
// Ready, and only then the lowest controller.kubernetes.io/pod-deletion-cost
// first (ties go on to node co-location, readiness time and age). The costs
// below are built from three keys, most significant first:
//
//	cost = tier × ZeroAllowanceOffset + position × DomainBand − spread
//
//   - tier is 1 for a pod in a domain with no disruption allowed while
//     another domain of the ReplicaSet has one, else 0: such a domain never
//     loses the first pod. An old ReplicaSet under a DomainByDomain rollout
//     gets no tier: there the domain order wins, since the rollout's own
//     surge pods, starting in the current domain, leave it without
//     allowance, and the Deployment's maxUnavailable bounds the rollout.
//   - position is, for an old ReplicaSet of a Deployment being rolled out
//     with strategy DomainByDomain, the index of the pod's domain in
//     DomainOrder over the budget's domains, so that old pods leave domain
//     by domain; 0 otherwise.
//   - spread ranks a domain's pods: with n pods in the domain, ordered
//     not Ready first, then newest first, then by name, the i-th (from 0)
//     gets spread n − i. The first pod of the largest domain thus costs −n,
//     the least of all, and the k lowest costs take pods from the most
//     over-represented domains until they are even (±1), whatever k is.
//
// The spread part is stable: removing a domain's lowest-cost pod, or adding
// a newer pod to it, leaves the costs of the domain's other pods unchanged,
// so one scale event patches at most the pods it adds.

// DeletionCostAnnotation is the annotation the ReplicaSet controller ranks
// scale-down victims by: lower costs are removed first.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// DeletionCostBudgetAnnotation marks a pod whose deletion cost the operator
// manages, naming the budget (in the pod's namespace) that set it. Only
// pods carrying it are ever changed or cleaned up by the operator.
const DeletionCostBudgetAnnotation = "policy.tdb.dev/deletion-cost-budget"

const (
	// DomainBand separates the domains of a DomainByDomain rollout; a
	// ReplicaSet with more pods than this in one domain sees its spread
	// clamped (ties, broken by the ReplicaSet controller's own ranking).
	DomainBand = 100_000
	// ZeroAllowanceOffset lifts the pods of domains without allowance
	// above every other cost. It exceeds maxPosition × DomainBand.
	ZeroAllowanceOffset = 100_000_000
	// maxPosition bounds a domain's position so costs stay within int32.
	maxPosition = 999
)

// ScaleDownPod is one pod of a ReplicaSet as the scale-down order sees it.
type ScaleDownPod struct {
	// Name identifies the pod in its namespace.
	Name string
	// Domain is the pod's domain under the budget; "" when the pod has
	// none (unscheduled, not covered, or on a node without the topology
	// label). Such pods get no cost and are not counted.
	Domain string
	// Ready is the pod's Ready condition.
	Ready bool
	// Created is the pod's creation time.
	Created time.Time
	// Deleting is true for a pod being deleted: the ReplicaSet no longer
	// counts it, so it gets no cost and is not counted in the spread, but
	// its domain's allowance is judged as it will stand once it is gone.
	Deleting bool
}

// ScaleDownInput is what DeletionCosts needs about one ReplicaSet.
type ScaleDownInput struct {
	// Spec is the covering budget's spec: its allowance arithmetic and its
	// rollout strategy and domain order are read.
	Spec *policyv1alpha1.TopologyDisruptionBudgetSpec
	// Domains is the budget's status.domains. A domain of a pod that has no
	// row is taken to allow nothing.
	Domains []policyv1alpha1.DomainStatus
	// Pods are the ReplicaSet's covered, non-terminal pods.
	Pods []ScaleDownPod
	// OldInRollout is true for a ReplicaSet of a Deployment that has a
	// newer ReplicaSet: the Deployment is rolling out and scales this one
	// down.
	OldInRollout bool
	// Siblings are the covered pods of the Deployment's other ReplicaSets.
	// They get no cost here; they only matter for the allowance (see
	// zeroAllowanceDomains).
	Siblings []ScaleDownPod
}

// DeletionCosts returns the pod-deletion-cost each pod with a domain should
// carry, by pod name, so that the ReplicaSet controller removes pods from
// the most over-represented domain first, never first from a domain without
// allowance while another has some, and, for an old ReplicaSet during a
// DomainByDomain rollout, from the domains in DomainOrder: the domains
// listed in spec.rollout.domainOrder first, then the others by ascending
// name.
func DeletionCosts(in ScaleDownInput) map[string]int32 {
	byDomain := map[string][]ScaleDownPod{}
	for _, p := range in.Pods {
		if p.Domain != "" && !p.Deleting {
			byDomain[p.Domain] = append(byDomain[p.Domain], p)
		}
	}
	if len(byDomain) == 0 {
		return map[string]int32{}
	}
	// churn counts, by domain, the workload's own pods that are starting
	// (not Ready) or leaving (being deleted).
	churn := map[string]int32{}
	for _, ps := range [][]ScaleDownPod{in.Pods, in.Siblings} {
		for _, p := range ps {
			if p.Domain != "" && (p.Deleting || !p.Ready) {
				churn[p.Domain]++
			}
		}
	}
	zero := zeroAllowanceDomains(in, byDomain, churn)
	position := rolloutPositions(in, byDomain)

	costs := make(map[string]int32, len(in.Pods))
	for d, ps := range byDomain {
		sort.Slice(ps, func(i, j int) bool { return removedBefore(ps[i], ps[j]) })
		base := int64(position[d]) * DomainBand
		if zero[d] && len(position) == 0 {
			base += ZeroAllowanceOffset
		}
		n := len(ps)
		for i, p := range ps {
			spread := min(n-i, DomainBand-1)
			costs[p.Name] = int32(base - int64(spread))
		}
	}
	return costs
}

// removedBefore orders a domain's pods as the ReplicaSet controller would
// remove them at equal cost, roughly: not Ready first, then newest, then by
// name. Following it makes the pod that actually leaves usually the one
// with the lowest cost, whose removal changes no other cost.
func removedBefore(a, b ScaleDownPod) bool {
	if a.Ready != b.Ready {
		return !a.Ready
	}
	if !a.Created.Equal(b.Created) {
		return a.Created.After(b.Created)
	}
	return a.Name < b.Name
}

// zeroAllowanceDomains returns the domains of the ReplicaSet that allow no
// disruption while another of its domains allows one. When status shows no
// domain of the ReplicaSet allowing anything (a missing pod counting against
// each of them, or a budget failing closed) the ranking stays that of the
// spread alone, and no cost changes.
//
// A domain's allowance is judged without the workload's own churn there:
// its pods being deleted (the last scale-down still terminating) and its
// pods not Ready (the ReplicaSet controller removes its own before looking
// at costs; a Deployment's new pods still starting are its rollout's
// business, paced by maxUnavailable). A domain whose only shortfall is the
// workload's scale event or rollout keeps its rank: that spares patching
// its every pod twice on each scale event, and keeps a DomainByDomain
// rollout in order while surge pods start.
func zeroAllowanceDomains(in ScaleDownInput, byDomain map[string][]ScaleDownPod, churn map[string]int32) map[string]bool {
	zero := map[string]bool{}
	some := false
	allowed := make(map[string]bool, len(in.Domains))
	rows := make([]policyv1alpha1.DomainStatus, 0, len(in.Domains))
	for _, r := range in.Domains {
		if r.DisruptionsAllowed > 0 {
			allowed[r.Name] = true
			_, mine := byDomain[r.Name]
			some = some || mine
		}
		r.ExpectedPods = max(r.ExpectedPods-churn[r.Name], 0)
		rows = append(rows, r)
	}
	if !some {
		return zero
	}
	if in.Spec != nil {
		for _, r := range allowances(in.Spec, rows) {
			allowed[r.Name] = allowed[r.Name] || r.DisruptionsAllowed > 0
		}
	}
	for d := range byDomain {
		if !allowed[d] {
			zero[d] = true
		}
	}
	return zero
}

// rolloutPositions returns each domain's position in the rollout order for
// an old ReplicaSet under DomainByDomain, and no positions otherwise. The
// order is taken over every domain of the budget, not only those still
// holding old pods, so a domain emptying does not renumber the others.
func rolloutPositions(in ScaleDownInput, byDomain map[string][]ScaleDownPod) map[string]int {
	pos := map[string]int{}
	if !in.OldInRollout || in.Spec == nil || in.Spec.Rollout == nil {
		return pos
	}
	// An empty strategy is the API default, DomainByDomain.
	if s := in.Spec.Rollout.Strategy; s != "" && s != policyv1alpha1.DomainByDomain {
		return pos
	}
	names := make([]string, 0, len(in.Domains)+len(byDomain))
	for _, r := range in.Domains {
		names = append(names, r.Name)
	}
	for d := range byDomain {
		names = append(names, d)
	}
	for i, d := range DomainOrder(in.Spec.Rollout, names) {
		pos[d] = min(i, maxPosition)
	}
	return pos
}

// DeletionCostPatch returns the annotation changes that bring a pod with
// the given annotations to the deletion cost budget wants for it (nil: the
// budget gives it no cost), as a merge patch's metadata.annotations (a nil
// value removes the key), or nil when nothing must change.
//
// Ownership is the marker DeletionCostBudgetAnnotation: a pod marked by
// budget is updated or, when it should have no cost any more, has both
// annotations removed. An unmarked pod is taken over only if it carries no
// deletion cost, since one without the marker was set by someone else; a
// pod marked by another budget is that budget's.
func DeletionCostPatch(annotations map[string]string, budget string, want *int32) map[string]*string {
	marker, marked := annotations[DeletionCostBudgetAnnotation]
	current, hasCost := annotations[DeletionCostAnnotation]
	mine := marked && marker == budget
	switch {
	case want == nil && mine:
		return map[string]*string{DeletionCostAnnotation: nil, DeletionCostBudgetAnnotation: nil}
	case want == nil:
		return nil
	case mine:
		v := strconv.FormatInt(int64(*want), 10)
		if hasCost && current == v {
			return nil
		}
		return map[string]*string{DeletionCostAnnotation: &v}
	case marked || hasCost:
		return nil
	}
	v := strconv.FormatInt(int64(*want), 10)
	return map[string]*string{DeletionCostAnnotation: &v, DeletionCostBudgetAnnotation: &budget}
}
