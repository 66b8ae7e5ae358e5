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

package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/predict"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// A budget whose webhook may let some evictions through unchecked (its
// Enforced condition False, PartiallyEnforced or FailsOpen) is printed
// with the warning, as a NotEnforced one is printed "not enforced":
// beside the budget in can-drain and why, and in status with the
// condition's message.
func TestEnforcementWarningPrinted(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		reason, message string
		// note is what can-drain prints beside the budget; "" for nothing.
		note string
	}{
		{policyv1alpha1.ReasonFailsOpen, "the eviction webhook fails open (failurePolicy Ignore)", "(fails open)"},
		{policyv1alpha1.ReasonPartiallyEnforced, "its matchConditions not-karpenter", "(partially enforced)"},
		{policyv1alpha1.ReasonFullyEnforced, "decides every eviction", ""},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			status := metav1.ConditionFalse
			if tc.reason == policyv1alpha1.ReasonFullyEnforced {
				status = metav1.ConditionTrue
			}
			tdb := builders.Budget("web").Namespace("ns").MatchLabels(map[string]string{"app": "web"}).TopologyKey(builders.ZoneKey).
				MaxUnavailable(intstr.FromInt32(1)).Generation(1).ObservedGeneration(1).
				StatusDomains(policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 2, CurrentHealthy: 2, DesiredHealthy: 1, DisruptionsAllowed: 1}).Obj()
			tdb.Status.Conditions = []metav1.Condition{
				{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionTrue, Reason: policyv1alpha1.ReasonSufficientPods, Message: "1 disruption(s) allowed in zone-a"},
				{Type: policyv1alpha1.ConditionEnforced, Status: status, Reason: tc.reason, Message: tc.message},
			}

			nodes := []corev1.Node{*builders.Node("n-a").Zone("zone-a").Obj()}
			pods := []*corev1.Pod{builders.Pod("web-0").Namespace("ns").Label("app", "web").OnNode("n-a").Running().Ready().Obj()}
			ds := &drainSet{nodes: []string{"n-a"}, pods: map[string][]*corev1.Pod{"n-a": pods},
				snap: predict.NewSnapshot(nodes, []policyv1alpha1.TopologyDisruptionBudget{*tdb}, nil, now)}
			var out bytes.Buffer
			printDrainCheck(&out, canDrain(ds))
			row := "tdb/web zone-a 2/2 healthy, keeps 1, allows 1"
			if !strings.Contains(out.String(), row) {
				t.Fatalf("can-drain output lacks %q:\n%s", row, out.String())
			}
			if got := strings.Contains(out.String(), row+" "+tc.note); tc.note != "" && !got {
				t.Errorf("can-drain output lacks %q beside the budget:\n%s", tc.note, out.String())
			}
			if tc.note == "" && strings.Contains(out.String(), row+" (") {
				t.Errorf("can-drain output notes a fully enforced budget:\n%s", out.String())
			}

			out.Reset()
			printStatus(&out, BudgetStatusList{Items: []predict.BudgetStatus{predict.StatusOf(tdb)}}, now)
			warning := "Warning: ns/web is " + tc.reason + ": " + tc.message
			if tc.note != "" {
				if !strings.Contains(out.String(), "SufficientPods "+tc.note) || !strings.Contains(out.String(), warning) {
					t.Errorf("status output lacks %q in STATE or the line %q:\n%s", "SufficientPods "+tc.note, warning, out.String())
				}
			} else if strings.Contains(out.String(), "Warning:") {
				t.Errorf("status output warns about a fully enforced budget:\n%s", out.String())
			}
		})
	}
}
