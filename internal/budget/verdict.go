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
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// A pod's eviction is decided against every budget covering it at once: the
// eviction webhook answers with Verdict, and kubectl-tdb (internal/predict)
// predicts with it, so the two cannot order or combine the budgets
// differently. The rules, in order:
//
//  1. A pod core lets go without asking its PDBs (CanIgnoreBudget) passes,
//     unless it is Pending on a node (IsBoundPending): that one is still
//     decided by its budgets, which record it without a charge.
//  2. A budget that covers the pod but cannot place it refuses before any
//     other is asked (RefusePlacement).
//  3. Each budget decides on its status (DecideEviction), in the order
//     given: the webhook's is by name, the order in which it charges them.
//  4. The policy/v1 PDBs are asked as core will ask them after the webhook
//     (CheckPodDisruptionBudgets): a refusal there charges no budget.
//
// The first refusal is the answer. The eviction is allowed only if no
// budget refuses, and then charged to every budget whose decision carries a
// status to write.

// Covering is one TopologyDisruptionBudget covering the pod, with the pod's
// place in it (Coverage.Place).
type Covering struct {
	Budget *policyv1alpha1.TopologyDisruptionBudget
	// Domain is the pod's domain under the budget.
	Domain string
	// NodeGone says the pod's node object is gone.
	NodeGone bool
	// PlaceErr says why the budget could not place the pod it covers.
	PlaceErr error
}

// PodEviction is the question: may Pod be evicted now?
type PodEviction struct {
	Pod *corev1.Pod
	// Covering lists the TopologyDisruptionBudgets covering the pod, in the
	// order they are decided.
	Covering []Covering
	// PDBs are the policy/v1 PodDisruptionBudgets of the pod's namespace,
	// covering it or not.
	PDBs []policyv1.PodDisruptionBudget
	// Now is the time of the decision.
	Now time.Time
	// All asks for every refusal, not only the first.
	All bool
	// Recheck, if not nil, may change a budget's decision before it is
	// combined: the webhook checks a decision its status's numbers made
	// against its own cache (it is given the index in Covering). Nil: the
	// statuses decide.
	Recheck func(i int, d Decision) Decision
}

// Refusal is one budget refusing the eviction.
type Refusal struct {
	// Budget is the index in Covering of the refusing budget; -1 when a
	// PodDisruptionBudget refuses.
	Budget int
	// Decision is the refusing budget's (Reason, Message, BlockedDomain);
	// for a PDB, the combined Message the webhook answers with.
	Decision Decision
	// PDB is core's verdict when a PodDisruptionBudget refuses.
	PDB PDBVerdict
	// Code is the HTTP status of the refusal: 429, or core's for a PDB.
	Code int32
}

// Verdict is the answer to a PodEviction.
type Verdict struct {
	Allowed bool
	// Reason is the answer's reason: the refusal's, or why the eviction is
	// allowed (the first budget's decision, PodNotRunning, NotCovered).
	Reason Reason
	// Answer is the refusal that answers (zero when allowed): a placement
	// refusal before any other, else the first.
	Answer Refusal
	// Refusals lists the refusals in the order the budgets were decided
	// (the PDB's last); only the answer unless All was asked.
	Refusals []Refusal
	// Decisions holds each covering budget's decision, by index, when the
	// eviction is allowed: a decision's Status is the charge to write.
	Decisions []Decision
	// PDB is the PodDisruptionBudget covering the pod, when exactly one
	// does ("" otherwise).
	PDB string
	// PDBCharged says core spends that PDB's allowance on the eviction
	// (not for a not-Ready pod it lets go without one).
	PDBCharged bool
}

// Decide answers q. It reads only its arguments (and calls q.Recheck).
func Decide(q PodEviction) (v Verdict) {
	v.Allowed = true
	if CanIgnoreBudget(q.Pod) && !IsBoundPending(q.Pod) {
		v.Reason = DecisionPodNotRunning
		return v
	}
	defer func() {
		if !v.Allowed {
			v.Decisions = nil
			if !q.All {
				v.Refusals = []Refusal{v.Answer}
			}
		}
	}()
	placement := make([]Decision, len(q.Covering))
	for i, c := range q.Covering {
		if c.PlaceErr != nil {
			placement[i] = RefusePlacement(c.Budget, c.PlaceErr)
			v.refuse(Refusal{Budget: i, Decision: placement[i]}, false)
			if !q.All {
				return v
			}
		}
	}
	v.Decisions = make([]Decision, len(q.Covering))
	for i, c := range q.Covering {
		d := placement[i]
		if c.PlaceErr == nil {
			d = DecideEviction(c.Budget, EvictionRequest{Pod: q.Pod, Domain: c.Domain, Now: q.Now, NodeGone: c.NodeGone})
			if q.Recheck != nil {
				d = q.Recheck(i, d)
			}
		}
		v.Decisions[i] = d
		if !d.Allowed {
			v.refuse(Refusal{Budget: i, Decision: d}, true)
			if !q.All {
				return v
			}
		}
	}
	if !CanIgnoreBudget(q.Pod) {
		// Core lets a Pending pod go without asking its PDBs.
		v.checkPDBs(q)
	}
	switch {
	case !v.Allowed:
	case len(q.Covering) == 0:
		v.Reason = DecisionNotCovered
	default:
		v.Reason = v.Decisions[0].Reason
	}
	return v
}

// refuse makes r the answer unless one was found before, and lists it.
func (v *Verdict) refuse(r Refusal, list bool) {
	if r.Code == 0 {
		r.Code = http.StatusTooManyRequests
	}
	if v.Allowed {
		v.Allowed = false
		v.Answer = r
		v.Reason = r.Decision.Reason
	}
	if list {
		v.Refusals = append(v.Refusals, r)
	}
}

// checkPDBs asks the pod's PodDisruptionBudgets, as core will.
func (v *Verdict) checkPDBs(q PodEviction) {
	var covering []string
	for i := range q.PDBs {
		p := &q.PDBs[i]
		if p.Namespace != q.Pod.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err == nil && sel.Matches(labels.Set(q.Pod.Labels)) {
			covering = append(covering, p.Name)
			if len(covering) == 1 {
				v.PDBCharged = pdbSpends(q.Pod, p)
			}
		}
	}
	if len(covering) == 1 {
		v.PDB = covering[0]
	} else {
		v.PDBCharged = false
	}
	pv := CheckPodDisruptionBudgets(q.Pod, q.PDBs)
	if !pv.Refused {
		return
	}
	v.PDBCharged = false
	msg := pv.Message
	if len(q.Covering) > 0 {
		tdbs := make([]string, len(q.Covering))
		for i, c := range q.Covering {
			tdbs[i] = c.Budget.Namespace + "/" + c.Budget.Name
		}
		msg = fmt.Sprintf("%s (topology disruption budget %s would allow it, and is not charged)", pv.Message, strings.Join(tdbs, ", "))
	}
	r := Refusal{Budget: -1, PDB: pv, Code: pv.Code, Decision: Decision{Reason: DecisionPodDisruptionBudget, Message: msg}}
	v.refuse(r, true)
}

// pdbSpends says whether the API server spends the PDB's allowance on the
// pod's eviction: not for a not-Ready pod it lets go under the PDB's
// unhealthyPodEvictionPolicy.
func pdbSpends(pod *corev1.Pod, p *policyv1.PodDisruptionBudget) bool {
	if IsHealthy(pod) {
		return true
	}
	if p.Spec.UnhealthyPodEvictionPolicy != nil && *p.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow {
		return false
	}
	return p.Status.CurrentHealthy < p.Status.DesiredHealthy || p.Status.DesiredHealthy <= 0
}
