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

package predict_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/predict"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// TestStatusOf: the per-domain view kubectl tdb status prints.
func TestStatusOf(t *testing.T) {
	nine := zonedNodes(3, "a", "b", "c")
	down := func(names ...string) map[string]func(*builders.PodWrapper) *builders.PodWrapper {
		out := map[string]func(*builders.PodWrapper) *builders.PodWrapper{}
		for _, n := range names {
			out[n] = notReady
		}
		return out
	}
	since := metav1.NewTime(now.Add(-5 * time.Minute))
	record := func(name, domain string) policyv1alpha1.DisruptedPod {
		return policyv1alpha1.DisruptedPod{Name: name, Domain: domain, Time: metav1.NewTime(now)}
	}
	tests := []struct {
		name  string
		tdb   *builders.BudgetWrapper
		pods  map[string]func(*builders.PodWrapper) *builders.PodWrapper
		edit  func(*policyv1alpha1.TopologyDisruptionBudget)
		want  predict.BudgetStatus
		extra []string // nodes without the zone label, with a web pod
	}{
		{name: "maxUnavailable 2, maxDisruptedDomains 1, three whole zones of 3: 2 together, not 6",
			tdb: webTDB("2").MaxDisruptedDomains(1),
			want: predict.BudgetStatus{Namespace: ns, Name: "web", AllowedTogether: 2, Reason: policyv1alpha1.ReasonSufficientPods, Current: true,
				Domains: []predict.DomainStatus{
					{Name: "zone-a", Healthy: 3, Expected: 3, Desired: 1, Allowed: 2},
					{Name: "zone-b", Healthy: 3, Expected: 3, Desired: 1, Allowed: 2},
					{Name: "zone-c", Healthy: 3, Expected: 3, Desired: 1, Allowed: 2},
				}}},
		{name: "zone-b disrupted under maxDisruptedDomains 1: zone-a and zone-c wait, evictions in flight counted",
			tdb: webTDB("2").MaxDisruptedDomains(1), pods: down("web-zone-b-1"),
			edit: func(t *policyv1alpha1.TopologyDisruptionBudget) {
				t.Status.DisruptedPods = []policyv1alpha1.DisruptedPod{
					record("web-zone-b-2", "zone-b"), record("web-zone-b-3", "zone-b"), record("web-zone-c-1", "zone-c")}
				t.Status.Domains[1].BlockedSince = &since
			},
			want: predict.BudgetStatus{Namespace: ns, Name: "web", AllowedTogether: 1, Reason: policyv1alpha1.ReasonSufficientPods, Current: true,
				Domains: []predict.DomainStatus{
					{Name: "zone-a", Healthy: 3, Expected: 3, Desired: 1, Allowed: 0, Waiting: true},
					{Name: "zone-b", Healthy: 2, Expected: 3, Desired: 1, Allowed: 1, InFlight: 2, BlockedSince: &since},
					{Name: "zone-c", Healthy: 3, Expected: 3, Desired: 1, Allowed: 0, Waiting: true, InFlight: 1},
				}}},
		{name: "a zone with no pod to spare is not waiting: it is short of pods",
			tdb: webTDB("1").MaxDisruptedDomains(1), pods: down("web-zone-b-1"),
			want: predict.BudgetStatus{Namespace: ns, Name: "web", AllowedTogether: 0, Reason: policyv1alpha1.ReasonInsufficientPods, Current: true,
				Domains: []predict.DomainStatus{
					{Name: "zone-a", Healthy: 3, Expected: 3, Desired: 2, Allowed: 0, Waiting: true},
					{Name: "zone-b", Healthy: 2, Expected: 3, Desired: 2, Allowed: 0},
					{Name: "zone-c", Healthy: 3, Expected: 3, Desired: 2, Allowed: 0, Waiting: true},
				}}},
		{name: "no maxDisruptedDomains: the zones' allowances add up, nothing waits",
			tdb: webTDB("2"), pods: down("web-zone-b-1"),
			want: predict.BudgetStatus{Namespace: ns, Name: "web", AllowedTogether: 5, Reason: policyv1alpha1.ReasonSufficientPods, Current: true,
				Domains: []predict.DomainStatus{
					{Name: "zone-a", Healthy: 3, Expected: 3, Desired: 1, Allowed: 2},
					{Name: "zone-b", Healthy: 2, Expected: 3, Desired: 1, Allowed: 1},
					{Name: "zone-c", Healthy: 3, Expected: 3, Desired: 1, Allowed: 2},
				}}},
		{name: "SyncFailed: allows nothing together, nothing waits",
			tdb: webTDB("2").MaxDisruptedDomains(1), pods: down("web-zone-b-1"),
			edit: func(t *policyv1alpha1.TopologyDisruptionBudget) {
				t.Status = *budget.FailClosedStatus(t, errors.New("no scale"), now)
				// A status written before the condition: allowances left.
				t.Status.Domains[1].DisruptionsAllowed = 1
			},
			want: predict.BudgetStatus{Namespace: ns, Name: "web", AllowedTogether: 0, Reason: policyv1alpha1.ReasonSyncFailed, Message: "no scale", Current: true,
				Domains: []predict.DomainStatus{
					{Name: "zone-a", Healthy: 3, Expected: 3, Desired: 1},
					{Name: "zone-b", Healthy: 2, Expected: 3, Desired: 1, Allowed: 1},
					{Name: "zone-c", Healthy: 3, Expected: 3, Desired: 1},
				}}},
		{name: "a node without the zone label: DomainError, allows nothing",
			tdb: webTDB("2"), extra: []string{"bare-1"},
			want: predict.BudgetStatus{Namespace: ns, Name: "web", AllowedTogether: 0, Reason: policyv1alpha1.ReasonDomainError, Current: true,
				Domains: []predict.DomainStatus{
					{Name: "zone-a", Healthy: 3, Expected: 3, Desired: 1},
					{Name: "zone-b", Healthy: 3, Expected: 3, Desired: 1},
					{Name: "zone-c", Healthy: 3, Expected: 3, Desired: 1},
				}}},
		{name: "status behind the spec: not current",
			tdb:  webTDB("1"),
			edit: func(t *policyv1alpha1.TopologyDisruptionBudget) { t.Generation = 2 },
			want: predict.BudgetStatus{Namespace: ns, Name: "web", AllowedTogether: 3, Reason: policyv1alpha1.ReasonSufficientPods,
				Domains: []predict.DomainStatus{
					{Name: "zone-a", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
					{Name: "zone-b", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
					{Name: "zone-c", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
				}}},
		{name: "the webhook fails open: a warning beside the numbers",
			tdb:  webTDB("1"),
			edit: withEnforced(metav1.ConditionFalse, policyv1alpha1.ReasonFailsOpen, "fails open (failurePolicy Ignore)"),
			want: predict.BudgetStatus{Namespace: ns, Name: "web", AllowedTogether: 3, Reason: policyv1alpha1.ReasonSufficientPods, Current: true,
				Enforcement: policyv1alpha1.ReasonFailsOpen, EnforcementMessage: "fails open (failurePolicy Ignore)",
				Domains: []predict.DomainStatus{
					{Name: "zone-a", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
					{Name: "zone-b", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
					{Name: "zone-c", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
				}}},
		{name: "some callers skip the webhook: a warning beside the numbers",
			tdb:  webTDB("1"),
			edit: withEnforced(metav1.ConditionFalse, policyv1alpha1.ReasonPartiallyEnforced, "its matchConditions not-karpenter"),
			want: predict.BudgetStatus{Namespace: ns, Name: "web", AllowedTogether: 3, Reason: policyv1alpha1.ReasonSufficientPods, Current: true,
				Enforcement: policyv1alpha1.ReasonPartiallyEnforced, EnforcementMessage: "its matchConditions not-karpenter",
				Domains: []predict.DomainStatus{
					{Name: "zone-a", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
					{Name: "zone-b", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
					{Name: "zone-c", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
				}}},
		{name: "fully enforced: no warning",
			tdb:  webTDB("1"),
			edit: withEnforced(metav1.ConditionTrue, policyv1alpha1.ReasonFullyEnforced, "decides every eviction"),
			want: predict.BudgetStatus{Namespace: ns, Name: "web", AllowedTogether: 3, Reason: policyv1alpha1.ReasonSufficientPods, Current: true,
				Domains: []predict.DomainStatus{
					{Name: "zone-a", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
					{Name: "zone-b", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
					{Name: "zone-c", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1},
				}}},
		{name: "the rollout's phase of each domain",
			tdb: webTDB("1"),
			edit: func(t *policyv1alpha1.TopologyDisruptionBudget) {
				t.Status.Rollout = &policyv1alpha1.RolloutStatus{CurrentDomain: "zone-b", Domains: []policyv1alpha1.RolloutDomainStatus{
					{Name: "zone-a", Phase: policyv1alpha1.RolloutPhaseComplete},
					{Name: "zone-b", Phase: policyv1alpha1.RolloutPhaseProgressing},
					{Name: "zone-c", Phase: policyv1alpha1.RolloutPhasePending},
				}}
			},
			want: predict.BudgetStatus{Namespace: ns, Name: "web", AllowedTogether: 3, Reason: policyv1alpha1.ReasonSufficientPods, Current: true,
				Domains: []predict.DomainStatus{
					{Name: "zone-a", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1, RolloutPhase: "Complete"},
					{Name: "zone-b", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1, RolloutPhase: "Progressing"},
					{Name: "zone-c", Healthy: 3, Expected: 3, Desired: 2, Allowed: 1, RolloutPhase: "Pending"},
				}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := append([]corev1.Node(nil), nine...)
			pws := with(onePodPerNode(nine), tc.pods)
			for _, n := range tc.extra {
				nodes = append(nodes, *builders.Node(n).Obj())
				pws = append(pws, webPod("web-"+n, n))
			}
			b := computed(tc.tdb, nodes, podObjs(pws...))
			if tc.edit != nil {
				tc.edit(&b)
			}
			got := predict.StatusOf(&b)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(predict.BudgetStatus{}, "Message")); diff != "" {
				t.Errorf("StatusOf (-want +got):\n%s", diff)
			}
			if tc.want.Message != "" && got.Message != tc.want.Message {
				t.Errorf("Message = %q, want %q", got.Message, tc.want.Message)
			}
			// Unless the budget is blocked, the figure is the budget
			// package's, which the status controller writes.
			if got.Reason != policyv1alpha1.ReasonSyncFailed && got.Reason != policyv1alpha1.ReasonDomainError {
				if want := budget.AllowedTogether(&b.Spec, b.Status.Domains); got.AllowedTogether != want {
					t.Errorf("AllowedTogether = %d, budget.AllowedTogether = %d", got.AllowedTogether, want)
				}
				if got.AllowedTogether != b.Status.DisruptionsAllowed {
					t.Errorf("AllowedTogether = %d, status.disruptionsAllowed = %d", got.AllowedTogether, b.Status.DisruptionsAllowed)
				}
			}
		})
	}
}

// withEnforced sets the budget's Enforced condition, as the status
// controller writes it.
func withEnforced(status metav1.ConditionStatus, reason, message string) func(*policyv1alpha1.TopologyDisruptionBudget) {
	return func(t *policyv1alpha1.TopologyDisruptionBudget) {
		t.Status.Conditions = append(t.Status.Conditions, metav1.Condition{
			Type: policyv1alpha1.ConditionEnforced, Status: status, Reason: reason, Message: message,
			ObservedGeneration: t.Generation, LastTransitionTime: metav1.NewTime(now),
		})
	}
}
