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
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

const zoneKey = builders.ZoneKey

func scheme(t *testing.T) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := policyv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// webPod is a Running, Ready pod ns/name on n1, labelled app=web and
// controlled by the StatefulSet web (a reference without apiVersion).
func webPod(name string, uid types.UID) *builders.PodWrapper {
	return builders.Pod(name).Namespace("ns").UID(uid).Labels(map[string]string{"app": "web"}).
		ControlledBy(metav1.OwnerReference{Kind: "StatefulSet", Name: "web", UID: "s1"}).
		OnNode("n1").Running().Ready()
}

// readyPod is web-0, the pod the tests evict.
func readyPod() *corev1.Pod { return webPod("web-0", "p0").Obj() }

// zoneNode is n1, in zone-a.
func zoneNode() *corev1.Node { return builders.Node("n1").Zone("zone-a").Obj() }

// computed is a budget ns/name over app=web by zone, allowing
// maxUnavailable per zone, whose status at generation 1 has the one row
// zone-a and its totals (domainCount left unset).
func computed(name string, maxUnavailable int32, zoneA policyv1alpha1.DomainStatus) *builders.BudgetWrapper {
	zoneA.Name = "zone-a"
	return builders.Budget(name).Namespace("ns").Generation(1).MatchLabels(map[string]string{"app": "web"}).
		TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(maxUnavailable)).
		ObservedGeneration(1).StatusDomains(zoneA).DomainCount(0)
}

// allowing is a computed budget named name whose zone-a allows n.
func allowing(name string, n int32) *builders.BudgetWrapper {
	return computed(name, 1, policyv1alpha1.DomainStatus{ExpectedPods: 3, CurrentHealthy: 2 + n, DesiredHealthy: 2, DisruptionsAllowed: n})
}

// budgetAllowing is allowing built.
func budgetAllowing(name string, n int32) *policyv1alpha1.TopologyDisruptionBudget {
	return allowing(name, n).Obj()
}

func request(t *testing.T, body any, dryRun bool) admission.Request {
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "r1", Resource: metav1.GroupVersionResource{Version: "v1", Resource: "pods"}, SubResource: "eviction",
		Name: "web-0", Namespace: "ns", Operation: admissionv1.Create,
		Object: runtime.RawExtension{Raw: raw}, DryRun: ptr.To(dryRun),
	}}
}

func eviction() map[string]any {
	return map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": "web-0", "namespace": "ns"}}
}

func newHandler(t *testing.T, cache client.Reader, server client.Client) *EvictionHandler {
	return &EvictionHandler{Cache: cache, Client: server, APIReader: server,
		Clock: clocktesting.NewFakeClock(time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC))}
}

func TestHandleMalformedAndForeignRequests(t *testing.T) {
	s := scheme(t)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(readyPod(), zoneNode(), budgetAllowing("b", 0)).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	h := newHandler(t, c, c)

	tests := []struct {
		name     string
		req      admission.Request
		allowed  bool
		wantCode int32
	}{
		{name: "body is not JSON", req: func() admission.Request {
			r := request(t, eviction(), false)
			r.Object.Raw = []byte("{not json")
			return r
		}(), wantCode: http.StatusBadRequest},
		{name: "empty body", req: func() admission.Request {
			r := request(t, eviction(), false)
			r.Object.Raw = nil
			return r
		}(), wantCode: http.StatusBadRequest},
		{name: "another kind", req: request(t, map[string]any{"kind": "Pod"}, false), wantCode: http.StatusBadRequest},
		{name: "not an eviction passes", req: func() admission.Request {
			r := request(t, eviction(), false)
			r.SubResource = ""
			return r
		}(), allowed: true},
		{name: "covered and refused: 429", req: request(t, eviction(), false), wantCode: http.StatusTooManyRequests},
	}
	refusedBefore := testutil.ToFloat64(operatormetrics.EvictionDecisions.WithLabelValues("refused", "InsufficientPods"))
	badBefore := testutil.ToFloat64(operatormetrics.EvictionDecisions.WithLabelValues("error", "BadRequest"))
	defer func() {
		if got := testutil.ToFloat64(operatormetrics.EvictionDecisions.WithLabelValues("refused", "InsufficientPods")) - refusedBefore; got != 1 {
			t.Errorf("tdb_eviction_decisions_total{refused,InsufficientPods} rose by %v, want 1", got)
		}
		if got := testutil.ToFloat64(operatormetrics.EvictionDecisions.WithLabelValues("error", "BadRequest")) - badBefore; got != 3 {
			t.Errorf("tdb_eviction_decisions_total{error,BadRequest} rose by %v, want 3", got)
		}
	}()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := h.Handle(context.Background(), tc.req)
			if resp.Allowed != tc.allowed {
				t.Fatalf("allowed = %v, want %v (%+v)", resp.Allowed, tc.allowed, resp.Result)
			}
			if !tc.allowed && (resp.Result == nil || resp.Result.Code != tc.wantCode) {
				t.Fatalf("result = %+v, want code %d", resp.Result, tc.wantCode)
			}
		})
	}
}

func TestHandleNeverPanics(t *testing.T) {
	h := &EvictionHandler{Clock: clocktesting.NewFakeClock(time.Now())} // no clients: any read panics
	resp := h.Handle(context.Background(), request(t, eviction(), false))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusInternalServerError {
		t.Fatalf("want a 500 refusal, got %+v", resp)
	}
}

func TestDryRunInTheBodyIsNotRecorded(t *testing.T) {
	s := scheme(t)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(readyPod(), zoneNode(), budgetAllowing("b", 1)).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	h := newHandler(t, c, c)
	body := eviction()
	body["deleteOptions"] = map[string]any{"dryRun": []string{"All"}}
	if resp := h.Handle(context.Background(), request(t, body, false)); !resp.Allowed {
		t.Fatalf("dry run refused: %+v", resp.Result)
	}
	var got policyv1alpha1.TopologyDisruptionBudget
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "b"}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Status.DisruptedPods) != 0 || got.Status.DisruptionsAllowed != 1 {
		t.Fatalf("a dry run changed the status: %+v", got.Status)
	}
}

// When the second budget turns out, on a fresh read after a conflict, to
// refuse, the charge already written to the first budget is undone.
func TestChargedToAllOrNone(t *testing.T) {
	s := scheme(t)
	ctx := context.Background()
	// The API server's truth: a allows one, b allows none.
	server := fake.NewClientBuilder().WithScheme(s).
		WithObjects(readyPod(), zoneNode(), budgetAllowing("a", 1), budgetAllowing("b", 1)).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	// The cache still shows b allowing: read it before b changes.
	var staleB policyv1alpha1.TopologyDisruptionBudget
	var cachedA policyv1alpha1.TopologyDisruptionBudget
	if err := server.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "b"}, &staleB); err != nil {
		t.Fatal(err)
	}
	if err := server.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, &cachedA); err != nil {
		t.Fatal(err)
	}
	freshB := staleB.DeepCopy()
	freshB.Status = budgetAllowing("b", 0).Status
	if err := server.Status().Update(ctx, freshB); err != nil {
		t.Fatal(err)
	}
	cache := fake.NewClientBuilder().WithScheme(s).
		WithObjects(readyPod(), zoneNode(), &cachedA, &staleB).Build()

	h := newHandler(t, cache, server)
	resp := h.Handle(ctx, request(t, eviction(), false))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusTooManyRequests {
		t.Fatalf("want 429 from budget b, got %+v", resp.Result)
	}
	var a policyv1alpha1.TopologyDisruptionBudget
	if err := server.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "a"}, &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Status.DisruptedPods) != 0 {
		t.Fatalf("budget a keeps a charge for an eviction b refused: %+v", a.Status.DisruptedPods)
	}
}
