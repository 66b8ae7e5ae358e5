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

package predict

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// BudgetStatus is one budget as kubectl tdb status shows it.
type BudgetStatus struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// AllowedTogether is the evictions that could be granted now together
	// (status.disruptionsAllowed, recomputed from the domains).
	AllowedTogether int32 `json:"allowedTogether"`
	// Condition is the DisruptionAllowed condition's reason and message.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Enforcement and EnforcementMessage are the Enforced condition's
	// reason and message when the webhook may let some of the budget's
	// evictions through unchecked (PartiallyEnforced, FailsOpen).
	Enforcement        string `json:"enforcement,omitempty"`
	EnforcementMessage string `json:"enforcementMessage,omitempty"`
	// Current says the status was computed for the budget's generation.
	Current bool           `json:"current"`
	Domains []DomainStatus `json:"domains"`
}

// DomainStatus is one domain of a budget.
type DomainStatus struct {
	Name     string `json:"name"`
	Healthy  int32  `json:"healthy"`
	Expected int32  `json:"expected"`
	Desired  int32  `json:"desired"`
	Allowed  int32  `json:"allowed"`
	// Waiting says the domain would allow an eviction but another domain
	// is disrupted (maxDisruptedDomains).
	Waiting bool `json:"waiting"`
	// InFlight counts granted evictions not yet accounted for.
	InFlight     int          `json:"inFlight"`
	BlockedSince *metav1.Time `json:"blockedSince,omitempty"`
	// RolloutPhase is the domain's phase in the rollout the operator
	// drives, when spec.rollout is set.
	RolloutPhase string `json:"rolloutPhase,omitempty"`
}

// StatusOf is the per-domain view of a budget.
func StatusOf(t *policyv1alpha1.TopologyDisruptionBudget) BudgetStatus {
	out := BudgetStatus{
		Namespace: t.Namespace, Name: t.Name,
		AllowedTogether: budget.AllowedTogether(&t.Spec, t.Status.Domains),
		Current:         t.Status.ObservedGeneration == t.Generation,
		Domains:         []DomainStatus{},
	}
	blocked := false
	if c := apimeta.FindStatusCondition(t.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed); c != nil {
		out.Reason, out.Message = c.Reason, c.Message
		blocked = c.Reason == policyv1alpha1.ReasonSyncFailed || c.Reason == policyv1alpha1.ReasonDomainError
	}
	if blocked {
		out.AllowedTogether = 0
	}
	out.Enforcement, out.EnforcementMessage = EnforcementWarning(t)
	inFlight := map[string]int{}
	for _, r := range t.Status.DisruptedPods {
		inFlight[r.Domain]++
	}
	phase := map[string]string{}
	if t.Status.Rollout != nil {
		for _, d := range t.Status.Rollout.Domains {
			phase[d.Name] = string(d.Phase)
		}
	}
	for _, d := range t.Status.Domains {
		out.Domains = append(out.Domains, DomainStatus{
			Name: d.Name, Healthy: d.CurrentHealthy, Expected: d.ExpectedPods, Desired: d.DesiredHealthy, Allowed: d.DisruptionsAllowed,
			Waiting:  !blocked && budget.Waiting(&t.Spec, d),
			InFlight: inFlight[d.Name], BlockedSince: d.BlockedSince, RolloutPhase: phase[d.Name],
		})
	}
	return out
}
