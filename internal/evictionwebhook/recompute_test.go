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
	"fmt"
	"net/http"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// reopened is a cluster whose budget's status was computed while web-2 was
// not Ready (zone-a: 3 expected, 2 healthy, nothing to spare); web-2 has
// turned Ready since, and the status controller has not written it yet.
func reopened(t *testing.T, extra func(*builders.BudgetWrapper)) (client.Client, *policyv1alpha1.TopologyDisruptionBudget) {
	t.Helper()
	sts := builders.StatefulSet("web").Namespace("ns").Replicas(3).PodLabels(map[string]string{"app": "web"}).Obj()
	sts.UID = "s1"
	b := builders.Budget("b").Namespace("ns").Generation(1).MatchLabels(map[string]string{"app": "web"}).
		TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).ObservedGeneration(1).
		StatusDomains(policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 2, DesiredHealthy: 2}).
		Conditions(metav1.Condition{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionFalse,
			Reason: policyv1alpha1.ReasonInsufficientPods, ObservedGeneration: 1, LastTransitionTime: metav1.Now()})
	if extra != nil {
		extra(b)
	}
	objs := []client.Object{sts, zoneNode(), b.Obj()}
	for i := range 3 {
		objs = append(objs, builders.Pod(fmt.Sprintf("web-%d", i)).Namespace("ns").UID(types.UID(fmt.Sprintf("p%d", i))).
			Labels(map[string]string{"app": "web"}).ControlledBy(builders.RefTo(sts)).OnNode("n1").Running().Ready().Obj())
	}
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	return c, b.Obj()
}

func computes(v bool) func() bool { return func() bool { return v } }

// Where the status controller runs, a refusal for want of allowance is
// checked against the pods as the cache shows them now: a replacement
// Ready a moment ago reopens its domain without waiting for the status
// write, and the grant's write carries the new numbers.
func TestARefusingStatusIsRecomputedFromTheCache(t *testing.T) {
	c, _ := reopened(t, nil)
	h := newHandler(t, c, c)
	h.Computes = computes(true)

	resp := h.Handle(context.Background(), request(t, eviction(), false))
	if !resp.Allowed {
		t.Fatalf("refused (%d: %s); the cache shows zone-a whole, 3 of 3 Ready", resp.Result.Code, resp.Result.Message)
	}
	got := getBudget(t, c, "b")
	if len(got.Status.DisruptedPods) != 1 || got.Status.DisruptedPods[0].Name != "web-0" {
		t.Errorf("records after the grant: %+v; want web-0's", got.Status.DisruptedPods)
	}
	row := got.Status.Domains[0]
	if row.ExpectedPods != 3 || row.CurrentHealthy != 2 || row.DisruptionsAllowed != 0 {
		t.Errorf("zone-a after the grant: %+v; want 3 expected, 2 healthy (web-0 recorded), nothing allowed", row)
	}
	// And the next eviction in zone-a is refused: web-0 is charged.
	req := request(t, map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": "web-1", "namespace": "ns"}}, false)
	req.Name = "web-1"
	if resp := h.Handle(context.Background(), req); resp.Allowed {
		t.Errorf("a second eviction in zone-a was allowed; zone-a allows one")
	}
}

// Elsewhere (a replica that does not run the status controller, whose
// cache may be older than the one the status came from), and for a status
// that is not a plain want of allowance, the written status is final.
func TestARefusingStatusIsFinalWhereNothingIsRecomputed(t *testing.T) {
	for name, tc := range map[string]struct {
		computes bool
		extra    func(*builders.BudgetWrapper)
	}{
		"not the leader": {computes: false},
		"fail-closed status": {computes: true, extra: func(b *builders.BudgetWrapper) {
			b.Conditions(metav1.Condition{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionFalse,
				Reason: policyv1alpha1.ReasonSyncFailed, Message: "cannot read scale", ObservedGeneration: 1, LastTransitionTime: metav1.Now()})
		}},
		"stale status": {computes: true, extra: func(b *builders.BudgetWrapper) { b.Generation(2) }},
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := reopened(t, tc.extra)
			h := newHandler(t, c, c)
			h.Computes = computes(tc.computes)
			resp := h.Handle(context.Background(), request(t, eviction(), false))
			if resp.Allowed || resp.Result.Code != http.StatusTooManyRequests {
				t.Fatalf("answer %v %d (%s); want a 429 from the written status", resp.Allowed, resp.Result.Code, resp.Result.Message)
			}
			if got := getBudget(t, c, "b"); len(got.Status.DisruptedPods) != 0 {
				t.Errorf("records %+v; want none", got.Status.DisruptedPods)
			}
		})
	}
}

// A dry run is decided the same way, and writes nothing.
func TestADryRunSeesTheRecomputedStatus(t *testing.T) {
	c, _ := reopened(t, nil)
	h := newHandler(t, c, c)
	h.Computes = computes(true)
	resp := h.Handle(context.Background(), request(t, eviction(), true))
	if !resp.Allowed {
		t.Fatalf("dry run refused (%s)", resp.Result.Message)
	}
	if got := getBudget(t, c, "b"); len(got.Status.DisruptedPods) != 0 || got.Status.Domains[0].CurrentHealthy != 2 {
		t.Errorf("a dry run wrote the status: %+v", got.Status)
	}
}
