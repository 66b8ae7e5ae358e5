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
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// A not-Ready pod that would pass uncharged is decided on the pod as it is
// once the budget's version is fixed: turned Ready meanwhile, it is charged.
func TestUnchargedPassIsDecidedOnTheCurrentPod(t *testing.T) {
	ctx := context.Background()
	notReady := webPod("web-0", "p0").NotReady().Obj()
	var reads atomic.Int32
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(notReady, zoneNode(), budgetAllowing("b", 1)).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				if err := c.Get(ctx, key, obj, opts...); err != nil {
					return err
				}
				// The cache's read and the first live read (the request's
				// look at the pod) show it not Ready; it turns Ready before
				// the grant is decided under the budget's lock.
				if p, ok := obj.(*corev1.Pod); ok && reads.Add(1) > 2 {
					p.Status.Conditions[0].Status = corev1.ConditionTrue
				}
				return nil
			},
		}).Build()
	h := newHandler(t, server, server)
	resp := h.Handle(ctx, request(t, eviction(), false))
	if !resp.Allowed {
		t.Fatalf("refused: %+v", resp.Result)
	}
	got := getBudget(t, server, "b")
	if len(got.Status.DisruptedPods) != 1 || got.Status.Domains[0].DisruptionsAllowed != 0 {
		t.Errorf("records %v, allowed %d; want the now-Ready pod charged", got.Status.DisruptedPods, got.Status.Domains[0].DisruptionsAllowed)
	}
}

// An uncharged eviction of a not-Ready pod is recorded: its replacement is
// then expected in its own domain.
func TestUnchargedPassIsRecorded(t *testing.T) {
	notReady := webPod("web-0", "p0").NotReady().Obj()
	b := allowing("b", 1).UnhealthyPodEvictionPolicy(policyv1alpha1.AlwaysAllow).Obj()
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(notReady, zoneNode(), b).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	h := newHandler(t, server, server)
	if resp := h.Handle(context.Background(), request(t, eviction(), false)); !resp.Allowed {
		t.Fatalf("refused: %+v", resp.Result)
	}
	got := getBudget(t, server, "b")
	if len(got.Status.DisruptedPods) != 1 || got.Status.Domains[0].DisruptionsAllowed != 1 {
		t.Errorf("records %v, allowed %d; want a record and the allowance untouched", got.Status.DisruptedPods, got.Status.Domains[0].DisruptionsAllowed)
	}
}

// A Pending pod already bound to a node may turn Running and Ready between
// this webhook's answer and the API server's deletion (which reads the pod
// again and deletes it as it finds it). It passes, as core lets it pass (a
// pod stuck Pending must not hold a drain), even where its domain has
// nothing to spare and a PDB over it allows nothing; but its eviction is
// recorded, without a charge, so that the budget never counts it healthy.
// A Pending pod without a node passes unrecorded: it has no domain.
func TestScheduledPendingPodPassesRecorded(t *testing.T) {
	disrupted := computed("b", 1, policyv1alpha1.DomainStatus{ExpectedPods: 3, CurrentHealthy: 1, DesiredHealthy: 2}).Obj()
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-pdb"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(3)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status: policyv1.PodDisruptionBudgetStatus{ExpectedPods: 3, CurrentHealthy: 2, DesiredHealthy: 3}}
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		recorded bool
	}{
		{"bound to a node", webPod("web-0", "p0").Pending().OnNode("n1").Obj(), true},
		{"not scheduled", webPod("web-0", "p0").Pending().Obj(), false},
	} {
		var writes atomic.Int32
		server := countingServer(t, []client.Object{tc.pod, zoneNode(), disrupted.DeepCopy(), pdb.DeepCopy()}, &writes)
		h := newHandler(t, server, server)
		resp := h.Handle(context.Background(), request(t, eviction(), false))
		if !resp.Allowed {
			t.Errorf("Pending pod %s: refused (%+v), want allowed as core allows it", tc.name, resp.Result)
			continue
		}
		got := getBudget(t, server, "b").Status
		recorded := len(got.DisruptedPods) == 1 && got.DisruptedPods[0].Name == "web-0" && got.DisruptedPods[0].UID == "p0"
		if recorded != tc.recorded || (!tc.recorded && len(got.DisruptedPods) != 0) {
			t.Errorf("Pending pod %s: records %+v, want recorded=%v", tc.name, got.DisruptedPods, tc.recorded)
		}
		if d := got.Domains[0]; d.CurrentHealthy != 1 || d.DisruptionsAllowed != 0 {
			t.Errorf("Pending pod %s: zone-a %+v, want the numbers untouched (no charge)", tc.name, d)
		}
	}
}
