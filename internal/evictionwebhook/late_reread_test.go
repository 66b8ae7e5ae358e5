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

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
)

// Replica B writes the budget twice; replica A's webhook group conflicts and
// re-reads live at try 2 (outside the budget's write lock). The answer (B's
// first version) is recorded only after A's rollout controller, under the
// lock, re-read B's second version and wrote on it. Were A's Versions to
// call the live version "older" than B's first one from then on, with no
// other process writing, every eviction A decides would be answered 429
// (contended) and no writer of A could write the budget again.
func TestTheWebhookDoesNotFreezeAfterALateUnlockedReread(t *testing.T) {
	ctx := context.Background()
	objs := append(zonePods(4), zoneNode(), zoneBudget(4, 3))
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	key := client.ObjectKey{Namespace: "ns", Name: "b"}
	getB := func() *policyv1alpha1.TopologyDisruptionBudget {
		var b policyv1alpha1.TopologyDisruptionBudget
		if err := server.Get(ctx, key, &b); err != nil {
			t.Fatal(err)
		}
		return &b
	}
	replicaB := func(msg string) { // a write that does not change any decision
		b := getB()
		apimeta.SetStatusCondition(&b.Status.Conditions, metav1.Condition{Type: "TestNote", Status: metav1.ConditionTrue, Reason: "Note", Message: msg})
		if err := server.Status().Update(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	r0 := getB()
	staleCache := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(append(zonePods(4), zoneNode(), r0.DeepCopy())...).Build()
	replicaB("b1") // R1: the webhook's first write (on R0) conflicts

	versions := &budgetstatus.Versions{}
	rollout := &budgetstatus.Writer{Name: "test-rollout", Client: server, Live: server, Versions: versions}
	first := true
	live := fake.NewClientBuilder().WithScheme(scheme(t)).Build() // placeholder, replaced below
	_ = live
	apiReader := interceptor.NewClient(server, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, k client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if err := c.Get(ctx, k, obj, opts...); err != nil {
				return err
			}
			if _, ok := obj.(*policyv1alpha1.TopologyDisruptionBudget); ok && first {
				first = false
				// While this answer (R1) is on its way: B writes R2, and
				// A's rollout controller writes R3 under the lock.
				replicaB("b2")
				if _, err := rollout.Update(ctx, r0.DeepCopy(), func(b *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
					b.Status.Rollout = &policyv1alpha1.RolloutStatus{CurrentDomain: "zone-a"}
					return b, nil
				}); err != nil {
					t.Errorf("rollout write: %v", err)
				}
			}
			return nil
		},
	})
	h := newHandler(t, staleCache, server)
	h.APIReader = apiReader
	h.Versions = versions

	evict := func(name string) int32 {
		body := eviction()
		body["metadata"].(map[string]any)["name"] = name
		req := request(t, body, false)
		req.Name = name
		resp := h.Handle(ctx, req)
		if resp.Allowed {
			return http.StatusOK
		}
		return resp.Result.Code
	}
	t.Logf("web-0 (the racing request): %d", evict("web-0"))

	// Nobody else writes any more; A's cache catches up with the server.
	h.Cache = server
	for i := 1; i <= 2; i++ {
		if code := evict(fmt.Sprintf("web-%d", i)); code != http.StatusOK {
			t.Errorf("web-%d: %d, want allowed (the budget allows 3, nobody else writes); live %s, Versions' newest %s",
				i, code, getB().ResourceVersion, versions.Newest(getB()).ResourceVersion)
		}
	}
	// The status controller can no longer write either.
	status := &budgetstatus.Writer{Name: "test-status", Client: server, Live: server, Versions: versions, OnlyFromStart: true}
	start := versions.Newest(getB())
	if _, err := status.Update(ctx, start, func(b *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		b.Status.ExpectedPods = 4
		return b, nil
	}); err != nil {
		t.Errorf("status controller: %v", err)
	}
}
