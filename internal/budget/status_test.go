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
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// statusOwnedByAll is a status in which every writer has set its fields.
func statusOwnedByAll() policyv1alpha1.TopologyDisruptionBudgetStatus {
	when := metav1.NewTime(time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC))
	return policyv1alpha1.TopologyDisruptionBudgetStatus{
		ObservedGeneration: 3, ExpectedPods: 6, CurrentHealthy: 6, DisruptionsAllowed: 2, DomainCount: 2,
		Domains:       []policyv1alpha1.DomainStatus{{Name: "zone-a", DisruptionsAllowed: 1}, {Name: "zone-b", DisruptionsAllowed: 1}},
		DisruptedPods: []policyv1alpha1.DisruptedPod{{Name: "web-0", UID: "p0", Domain: "zone-a", Time: when}},
		Rollout:       &policyv1alpha1.RolloutStatus{CurrentDomain: "zone-a"},
		Conditions: []metav1.Condition{
			{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionTrue, Reason: policyv1alpha1.ReasonSufficientPods, LastTransitionTime: when},
			{Type: policyv1alpha1.ConditionRolloutProgressing, Status: metav1.ConditionTrue, Reason: "Updating", LastTransitionTime: when},
		},
	}
}

// The rollout controller's write changes status.rollout and the rollout
// conditions, nothing the status controller or the webhook owns: applied on
// a newer version after a conflict, it keeps their fields.
func TestApplyRolloutFieldsTouchesOnlyTheRolloutsFields(t *testing.T) {
	dst := statusOwnedByAll()
	dst.DisruptedPods = append(dst.DisruptedPods, policyv1alpha1.DisruptedPod{Name: "web-1", UID: "p1", Domain: "zone-b"})
	dst.Domains[1].DisruptionsAllowed = 0
	completeFalse := metav1.Condition{Type: policyv1alpha1.ConditionRolloutComplete, Status: metav1.ConditionFalse, Reason: "Updating",
		LastTransitionTime: metav1.NewTime(time.Date(2026, 11, 24, 10, 30, 0, 0, time.UTC))}
	src := statusOwnedByAll()
	src.Rollout = &policyv1alpha1.RolloutStatus{CurrentDomain: "zone-b"}
	apimeta.SetStatusCondition(&src.Conditions, completeFalse)
	apimeta.RemoveStatusCondition(&src.Conditions, policyv1alpha1.ConditionRolloutProgressing)
	src.ExpectedPods = 99

	want := dst.DeepCopy()
	want.Rollout = &policyv1alpha1.RolloutStatus{CurrentDomain: "zone-b"}
	apimeta.RemoveStatusCondition(&want.Conditions, policyv1alpha1.ConditionRolloutProgressing)
	apimeta.SetStatusCondition(&want.Conditions, completeFalse)

	ApplyRolloutFields(&dst, &src)
	if diff := cmp.Diff(*want, dst); diff != "" {
		t.Errorf("status after ApplyRolloutFields (-want +got):\n%s", diff)
	}
}

// A budget that cannot be computed allows nothing in any domain, says why,
// and keeps its records and the rollout's fields.
func TestFailClosedStatusAllowsNothingAndKeepsRecords(t *testing.T) {
	tdb := &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Generation: 4}, Status: statusOwnedByAll()}
	now := time.Date(2026, 11, 24, 11, 0, 0, 0, time.UTC)
	got := FailClosedStatus(tdb, errors.New("parsing spec.selector: bad"), now)
	if got.DisruptionsAllowed != 0 || got.Domains[0].DisruptionsAllowed != 0 || got.Domains[1].DisruptionsAllowed != 0 {
		t.Errorf("allowances %d %+v, want 0 everywhere", got.DisruptionsAllowed, got.Domains)
	}
	c := apimeta.FindStatusCondition(got.Conditions, policyv1alpha1.ConditionDisruptionAllowed)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != policyv1alpha1.ReasonSyncFailed || c.Message != "parsing spec.selector: bad" || c.ObservedGeneration != 4 {
		t.Errorf("condition %+v, want False/SyncFailed naming the cause at generation 4", c)
	}
	if got.ObservedGeneration != 4 || len(got.DisruptedPods) != 1 || got.Rollout == nil || got.Rollout.CurrentDomain != "zone-a" {
		t.Errorf("status %+v: want generation 4, the record and the rollout kept", got)
	}
	if tdb.Status.DisruptionsAllowed != 2 {
		t.Errorf("the input budget was modified")
	}
}

// A budget that covers a pod but cannot place it refuses it, saying why and
// what to do.
func TestRefusePlacement(t *testing.T) {
	tdb := &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"},
		Spec: policyv1alpha1.TopologyDisruptionBudgetSpec{TopologyKey: "topology.kubernetes.io/zone"}}
	tests := []struct {
		name   string
		err    error
		reason Reason
		says   string
	}{
		{"node gone, domain unknown", fmt.Errorf("pod ns/web-0: %w", ErrNodeGone), DecisionNodeGone, "the pod runs nowhere"},
		{"node without the label", &noLabelError{"pod ns/web-0 on node \"n1\": no label"}, DecisionBlocked, "label the node with topology.kubernetes.io/zone"},
		{"spec cannot be evaluated", errors.New("parsing spec.selector: bad"), DecisionBlocked, "fix the budget's spec"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := RefusePlacement(tdb, tc.err)
			if d.Allowed || d.Reason != tc.reason || d.Status != nil ||
				!strings.Contains(d.Message, "topology disruption budget ns/web") || !strings.Contains(d.Message, tc.err.Error()) || !strings.Contains(d.Message, tc.says) {
				t.Errorf("decision %+v: want refused with %s, naming the budget, the cause and %q", d, tc.reason, tc.says)
			}
		})
	}
}

// A domain is marked blocked once, while it allows nothing; the status
// controller keeps the mark while it still allows nothing and drops it once
// it allows a disruption again.
func TestBlockedSinceLifecycle(t *testing.T) {
	t1 := time.Date(2026, 11, 24, 12, 0, 0, 500, time.UTC)
	tdb := tdb("web").MaxUnavailable(intstr.FromInt32(1)).TopologyKey(zoneKey).
		StatusDomains(row("zone-a", 3, 2, 2, 0), row("zone-b", 3, 3, 2, 1)).Obj()

	if MarkBlocked(&tdb.Status, "zone-b", t1) != nil {
		t.Error("a domain that allows a disruption was marked blocked")
	}
	if MarkBlocked(&tdb.Status, "zone-x", t1) != nil {
		t.Error("a domain the status does not have was marked blocked")
	}
	marked := MarkBlocked(&tdb.Status, "zone-a", t1)
	if marked == nil || marked.Domains[0].BlockedSince == nil || !marked.Domains[0].BlockedSince.Time.Equal(t1.Truncate(time.Second)) {
		t.Fatalf("zone-a not marked at %v: %+v", t1, marked)
	}
	if tdb.Status.Domains[0].BlockedSince != nil {
		t.Error("MarkBlocked modified the status it was given")
	}
	tdb.Status = *marked
	if MarkBlocked(&tdb.Status, "zone-a", t1.Add(time.Minute)) != nil {
		t.Error("a domain already marked was marked again")
	}

	still := &Result{Domains: []policyv1alpha1.DomainStatus{row("zone-a", 3, 2, 2, 0), row("zone-b", 3, 3, 2, 1)}}
	next := StatusFor(tdb, still, t1, "")
	if next.Domains[0].BlockedSince == nil || !next.Domains[0].BlockedSince.Equal(marked.Domains[0].BlockedSince) {
		t.Errorf("the status controller dropped the mark of a domain still blocked: %+v", next.Domains[0])
	}
	recovered := &Result{Domains: []policyv1alpha1.DomainStatus{row("zone-a", 3, 3, 2, 1), row("zone-b", 3, 3, 2, 1)}}
	if next := StatusFor(tdb, recovered, t1, ""); next.Domains[0].BlockedSince != nil {
		t.Errorf("the mark outlived the block: %+v", next.Domains[0])
	}
}
