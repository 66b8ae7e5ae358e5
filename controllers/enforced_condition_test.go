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

package controllers

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// The status controller reports how far the webhook enforces a budget in
// its Enforced condition, and still computes the budget: a webhook that may
// skip or let through some evictions is a warning, not a block.
func TestBudgetReconcileEnforcedCondition(t *testing.T) {
	const karpenter = `request.userInfo.username != "system:serviceaccount:karpenter:karpenter"`
	tests := []struct {
		name string
		// hook is the registration (nil: none); config "" turns the check off.
		hook       *hookWrapper
		config     string
		operatorNS string
		// allowed is the DisruptionAllowed condition's status and reason.
		allowed       metav1.ConditionStatus
		allowedReason string
		// enforced is the Enforced condition's status and reason, and a
		// substring of its message; "" reason: no such condition.
		enforced                    metav1.ConditionStatus
		enforcedReason, enforcedMsg string
	}{
		{name: "as installed", hook: evictionHook(), config: "tdb-vwc",
			allowed: metav1.ConditionTrue, allowedReason: policyv1alpha1.ReasonSufficientPods,
			enforced: metav1.ConditionTrue, enforcedReason: policyv1alpha1.ReasonFullyEnforced, enforcedMsg: "decides every eviction"},
		{name: "failurePolicy Ignore: numbers computed, fails open", hook: evictionHook().failurePolicy(ptr.To(admissionregistrationv1.Ignore)), config: "tdb-vwc",
			allowed: metav1.ConditionTrue, allowedReason: policyv1alpha1.ReasonSufficientPods,
			enforced: metav1.ConditionFalse, enforcedReason: policyv1alpha1.ReasonFailsOpen, enforcedMsg: "failurePolicy Ignore"},
		{name: "matchConditions: numbers computed, partially enforced", hook: evictionHook().matchCondition("not-karpenter", karpenter), config: "tdb-vwc",
			allowed: metav1.ConditionTrue, allowedReason: policyv1alpha1.ReasonSufficientPods,
			enforced: metav1.ConditionFalse, enforcedReason: policyv1alpha1.ReasonPartiallyEnforced, enforcedMsg: "not-karpenter"},
		{name: "rules without CREATE: not enforced, in both conditions", hook: evictionHook().operations(admissionregistrationv1.Update), config: "tdb-vwc",
			allowed: metav1.ConditionFalse, allowedReason: policyv1alpha1.ReasonNotEnforced,
			enforced: metav1.ConditionFalse, enforcedReason: policyv1alpha1.ReasonNotEnforced, enforcedMsg: "operations [UPDATE]"},
		{name: "the check off: nothing known, no Enforced condition", hook: evictionHook().failurePolicy(ptr.To(admissionregistrationv1.Ignore)),
			allowed: metav1.ConditionTrue, allowedReason: policyv1alpha1.ReasonSufficientPods},
		{name: "the operator's own namespace, the check off: not enforced", operatorNS: fakeNS,
			allowed: metav1.ConditionFalse, allowedReason: policyv1alpha1.ReasonNotEnforced,
			enforced: metav1.ConditionFalse, enforcedReason: policyv1alpha1.ReasonNotEnforced, enforcedMsg: "operator's own"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newIngesterWorld()
			tdb := created(zonedBudget("ingesters", "ingester").Obj())
			objs := append(w.objects(), tdb, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fakeNS}})
			if tc.hook != nil {
				objs = append(objs, tc.hook.in("tdb-vwc"))
			}
			c := newFakeCluster(t, objs...)
			r := newBudgetReconciler(c, events.NewFakeRecorder(10), clocktesting.NewFakeClock(fakeT0))
			r.OperatorNamespace = tc.operatorNS
			r.Scope = &WebhookScope{Reader: c, ConfigName: tc.config}

			reconcileBudget(t, r, tdb.Name)

			got := c.budgetNamed(t, tdb.Name)
			if diff := cmp.Diff(evenRows, rowsOf(got)); diff != "" {
				t.Errorf("status.domains (-want +got):\n%s", diff)
			}
			if st := got.Status; st.ExpectedPods != 9 || st.CurrentHealthy != 9 || st.DisruptionsAllowed != 3 {
				t.Errorf("expectedPods, currentHealthy, disruptionsAllowed = %d, %d, %d, want 9, 9, 3", st.ExpectedPods, st.CurrentHealthy, st.DisruptionsAllowed)
			}
			if c := apimeta.FindStatusCondition(got.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed); c == nil || c.Status != tc.allowed || c.Reason != tc.allowedReason {
				t.Errorf("DisruptionAllowed = %+v, want %s %s", c, tc.allowed, tc.allowedReason)
			}
			e := apimeta.FindStatusCondition(got.Status.Conditions, policyv1alpha1.ConditionEnforced)
			switch {
			case tc.enforcedReason == "" && e != nil:
				t.Errorf("Enforced = %+v, want none", e)
			case tc.enforcedReason == "":
			case e == nil:
				t.Errorf("no Enforced condition, want %s %s", tc.enforced, tc.enforcedReason)
			case e.Status != tc.enforced || e.Reason != tc.enforcedReason || !strings.Contains(e.Message, tc.enforcedMsg):
				t.Errorf("Enforced = %s %s %q, want %s %s containing %q", e.Status, e.Reason, e.Message, tc.enforced, tc.enforcedReason, tc.enforcedMsg)
			case e.ObservedGeneration != got.Generation:
				t.Errorf("Enforced for generation %d, want %d", e.ObservedGeneration, got.Generation)
			}

			// Nothing changed: the next pass writes nothing.
			writes := c.statusWrites.Load()
			reconcileBudget(t, r, tdb.Name)
			if n := c.statusWrites.Load(); n != writes {
				t.Errorf("a pass over an unchanged registration wrote the status: %d writes, want %d", n, writes)
			}
		})
	}
}
