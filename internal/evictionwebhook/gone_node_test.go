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
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/internal/tombstone"
)

// A pod whose node is gone is decided in the domain it was in, from the
// deleted node's last labels; with nothing known, only that pod is refused.
func TestPodOnAGoneNode(t *testing.T) {
	p := webPod("web-0", "p0").OnNode("gone").Obj()
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(p, zoneNode(), budgetAllowing("b", 1)).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	h := newHandler(t, server, server)
	resp := h.Handle(context.Background(), request(t, eviction(), false))
	if resp.Allowed || !strings.Contains(resp.Result.Message, "node is gone") {
		t.Fatalf("nothing known of the node: %+v, want a refusal saying the node is gone", resp.Result)
	}
	h.GoneNodes = tombstone.New(nil)
	h.GoneNodes.Deleted(builders.Node("gone").Zone("zone-a").Obj())
	if resp := h.Handle(context.Background(), request(t, eviction(), false)); !resp.Allowed {
		t.Fatalf("with the node's last labels: %+v, want allowed in zone-a", resp.Result)
	}
	st := getBudget(t, server, "b").Status
	if recs := st.DisruptedPods; len(recs) != 1 || recs[0].Domain != "zone-a" {
		t.Errorf("records %v, want one in zone-a", recs)
	}
	// The pod runs nowhere and was never counted healthy: its eviction
	// takes the allowance but no healthy pod.
	if row := st.Domains[0]; row.CurrentHealthy != 3 || row.DisruptionsAllowed != 0 {
		t.Errorf("zone-a after the eviction: %+v; want currentHealthy 3 (as before) and 0 allowed", row)
	}
}

// A pod on a gone node is decided on the API server's copy: pod garbage
// collection may have replaced it, under the same name, with a Ready pod on a
// live node while the cache still shows the old one (the stale copy let
// both healthy pods of zone-a go under maxUnavailable 1 when such pods
// passed uncharged).
func TestPodOnAGoneNodeIsReadLive(t *testing.T) {
	old := webPod("web-0", "p0").OnNode("gone").Obj()
	live := webPod("web-0", "p0-replacement").Obj()
	other := webPod("web-1", "p1").Obj()
	cache := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(old, other, zoneNode(), budgetAllowing("b", 1)).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(live, other, zoneNode(), budgetAllowing("b", 1)).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	h := newHandler(t, cache, server)
	h.GoneNodes = tombstone.New(nil)
	h.GoneNodes.Deleted(builders.Node("gone").Zone("zone-a").Obj())
	evict := func(name string) admission.Request {
		r := request(t, map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": name, "namespace": "ns"}}, false)
		r.Name = name
		return r
	}
	first := h.Handle(context.Background(), evict("web-0"))
	if first.Allowed || !strings.Contains(first.Result.Message, "changed while the eviction was decided") {
		t.Fatalf("eviction of web-0 decided on the stale copy: %+v; want a refusal for a retry", first.Result)
	}
	if recs := getBudget(t, server, "b").Status.DisruptedPods; len(recs) != 0 {
		t.Errorf("the refusal left records %v", recs)
	}
	if second := h.Handle(context.Background(), evict("web-1")); !second.Allowed {
		t.Errorf("web-1: %+v; want allowed (zone-a's allowance is untouched)", second.Result)
	}
}
