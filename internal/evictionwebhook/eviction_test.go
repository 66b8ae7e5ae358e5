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
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/flowcontrol"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
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

// getBudget reads the budget ns/name from c, failing the test if it cannot.
func getBudget(t *testing.T, c client.Client, name string) *policyv1alpha1.TopologyDisruptionBudget {
	t.Helper()
	var b policyv1alpha1.TopologyDisruptionBudget
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, &b); err != nil {
		t.Fatal(err)
	}
	return &b
}

// An Eviction whose preconditions do not match the pod is answered 409, as
// the API server would, and charges nothing: no record holds the allowance
// for an eviction that cannot happen.
func TestPreconditionMismatchIsNotCharged(t *testing.T) {
	var writes atomic.Int32
	server := countingServer(t, []client.Object{readyPod(), zoneNode(), budgetAllowing("b", 1)}, &writes)
	h := newHandler(t, server, server)
	for _, pre := range []map[string]any{{"uid": "another-uid"}, {"resourceVersion": "1"}} {
		body := eviction()
		body["deleteOptions"] = map[string]any{"preconditions": pre}
		resp := h.Handle(context.Background(), request(t, body, false))
		if resp.Allowed || resp.Result.Code != http.StatusConflict {
			t.Errorf("preconditions %v: %+v, want 409", pre, resp.Result)
		}
	}
	if writes.Load() != 0 || len(getBudget(t, server, "b").Status.DisruptedPods) != 0 {
		t.Errorf("a failed precondition was charged: %d writes", writes.Load())
	}
	// Matching preconditions are charged as usual.
	body := eviction()
	body["deleteOptions"] = map[string]any{"preconditions": map[string]any{"uid": "p0"}}
	if resp := h.Handle(context.Background(), request(t, body, false)); !resp.Allowed {
		t.Fatalf("matching precondition refused: %+v", resp.Result)
	}
	if n := len(getBudget(t, server, "b").Status.DisruptedPods); n != 1 {
		t.Errorf("records = %d, want 1", n)
	}
}

// When a policy/v1 PodDisruptionBudget over the pod allows nothing, core
// refuses after this webhook: the webhook refuses first, with core's reason,
// and writes nothing.
func TestPDBRefusalIsNotCharged(t *testing.T) {
	var writes atomic.Int32
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-pdb", Generation: 1},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, MinAvailable: &intstr.IntOrString{IntVal: 3}},
		Status:     policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 3},
	}
	server := countingServer(t, []client.Object{readyPod(), zoneNode(), budgetAllowing("b", 1), pdb}, &writes)
	h := newHandler(t, server, server)
	resp := h.Handle(context.Background(), request(t, eviction(), false))
	if resp.Allowed || resp.Result.Code != http.StatusTooManyRequests || !strings.Contains(resp.Result.Message, "web-pdb") {
		t.Fatalf("want 429 naming web-pdb, got %+v", resp.Result)
	}
	if writes.Load() != 0 {
		t.Errorf("status writes = %d, want none", writes.Load())
	}
	// Once the PDB allows, the budget charges.
	pdb.Status.DisruptionsAllowed = 1
	if err := server.Status().Update(context.Background(), pdb); err != nil {
		t.Fatal(err)
	}
	if resp := h.Handle(context.Background(), request(t, eviction(), false)); !resp.Allowed {
		t.Fatalf("refused with the PDB allowing: %+v", resp.Result)
	}
}

// A retry of a recorded pod renews its record in a conditional write: if the
// status controller removed the record meanwhile (the write conflicts), the
// retry is decided afresh and charged, never let through as already counted.
func TestAlreadyRecordedIsSerialisedWithTheRecordsRemoval(t *testing.T) {
	ctx := context.Background()
	b := allowing("b", 0).DisruptedPods(policyv1alpha1.DisruptedPod{Name: "web-0", UID: "p0", Domain: "zone-a", Time: metav1.NewTime(time.Date(2026, 11, 21, 17, 59, 0, 0, time.UTC))}).Obj()
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(readyPod(), zoneNode(), b).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	var cached policyv1alpha1.TopologyDisruptionBudget
	if err := server.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "b"}, &cached); err != nil {
		t.Fatal(err)
	}
	// The status controller drops the record (no deletion was seen) and
	// counts the pod healthy again: 3 healthy, needs 2, allows 1.
	dropped := cached.DeepCopy()
	dropped.Status = budgetAllowing("b", 1).Status
	if err := server.Status().Update(ctx, dropped); err != nil {
		t.Fatal(err)
	}
	cache := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(readyPod(), zoneNode(), &cached).Build()
	h := newHandler(t, cache, server)
	if resp := h.Handle(ctx, request(t, eviction(), false)); !resp.Allowed {
		t.Fatalf("refused: %+v", resp.Result)
	}
	got := getBudget(t, server, "b")
	if len(got.Status.DisruptedPods) != 1 || got.Status.Domains[0].DisruptionsAllowed != 0 || got.Status.Domains[0].CurrentHealthy != 2 {
		t.Errorf("after the retry: records %v, allowed %d, healthy %d; want the pod charged afresh (1 record, 0 allowed, 2 healthy)",
			got.Status.DisruptedPods, got.Status.Domains[0].DisruptionsAllowed, got.Status.Domains[0].CurrentHealthy)
	}
	if !got.Status.DisruptedPods[0].Time.Time.Equal(h.Clock.Now()) {
		t.Errorf("record time %v, want the retry's %v", got.Status.DisruptedPods[0].Time, h.Clock.Now())
	}
}

// Several budgets: when one changed spec between the request's look and the
// write, the eviction is refused for a retry, not charged to a domain found
// under the old spec.
func TestMultiBudgetRefusesAChangedSpec(t *testing.T) {
	ctx := context.Background()
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(readyPod(), zoneNode(), budgetAllowing("a", 1), budgetAllowing("b", 1)).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	cache := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(readyPod(), zoneNode(), budgetAllowing("a", 1), budgetAllowing("b", 1)).Build()
	// b's spec changes on the server (a new generation) and its status
	// moves on: the cached b conflicts.
	// (The fake API server does not bump generations: the test does.)
	fresh := getBudget(t, server, "b")
	fresh.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(2))
	fresh.Generation = 2
	if err := server.Update(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	fresh = getBudget(t, server, "b")
	// The status controller has already recomputed it: allowing, current.
	fresh.Status.ObservedGeneration = fresh.Generation
	if err := server.Status().Update(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if got := getBudget(t, server, "b"); got.Generation != 2 || got.Status.ObservedGeneration != 2 || got.Status.Domains[0].DisruptionsAllowed != 1 {
		t.Fatalf("setup: generation %d, observed %d", got.Generation, got.Status.ObservedGeneration)
	}
	h := newHandler(t, cache, server)
	resp := h.Handle(ctx, request(t, eviction(), false))
	if resp.Allowed || resp.Result.Code != http.StatusTooManyRequests || !strings.Contains(resp.Result.Message, "changed") {
		t.Fatalf("want 429 saying the budget changed, got %+v", resp.Result)
	}
	for _, name := range []string{"a", "b"} {
		if n := len(getBudget(t, server, name).Status.DisruptedPods); n != 0 {
			t.Errorf("budget %s keeps %d records of an eviction refused", name, n)
		}
	}
}

// A budget whose selector does not parse (stored before the CRD refused
// such selectors) refuses only the pods it might select; the namespace's
// other pods pass.
func TestBrokenBudgetBlocksOnlyWhatItMightCover(t *testing.T) {
	broken := allowing("broken", 1).Selector(&policyv1alpha1.LabelSelector{MatchLabels: map[string]policyv1alpha1.LabelValue{"app": "web"},
		MatchExpressions: []policyv1alpha1.LabelSelectorRequirement{{Key: "bad key", Operator: metav1.LabelSelectorOpDoesNotExist}}}).Obj()
	other := webPod("db-0", "d0").Labels(map[string]string{"app": "db"}).Obj()
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(readyPod(), other, zoneNode(), broken).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	h := newHandler(t, server, server)
	req := request(t, eviction(), false)
	req.Name = "db-0"
	if resp := h.Handle(context.Background(), req); !resp.Allowed {
		t.Errorf("a pod the broken budget cannot select was refused: %+v", resp.Result)
	}
	resp := h.Handle(context.Background(), request(t, eviction(), false))
	if resp.Allowed || !strings.Contains(resp.Result.Message, "spec.selector") {
		t.Errorf("a pod the broken budget might select: %+v, want refused naming spec.selector", resp.Result)
	}
}

// When the operator's own client holds a status write back (its client-side
// rate limiter would wait past the request's deadline, as under a drain of
// many nodes at once), nothing was written: the eviction is refused with a
// 429, which kubectl drain and the autoscalers retry, not failed with a 500
// that aborts the drain.
func TestClientThrottlingIsRefusedForARetry(t *testing.T) {
	limiter := flowcontrol.NewTokenBucketRateLimiter(0.001, 1)
	limiter.Accept() // the one token is spent: the next waits 1000 s
	var writes atomic.Int32
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(readyPod(), zoneNode(), budgetAllowing("b", 1)).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				// What client-go's REST client returns when its limiter
				// cannot let the request through before ctx's deadline.
				wctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
				defer cancel()
				if err := limiter.Wait(wctx); err != nil {
					return fmt.Errorf("client rate limiter Wait returned an error: %w", err)
				}
				writes.Add(1)
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
	h := newHandler(t, server, server)
	resp := h.Handle(context.Background(), request(t, eviction(), false))
	if resp.Allowed || resp.Result.Code != http.StatusTooManyRequests {
		t.Fatalf("throttled status write: allowed %v, %+v; want a 429 refusal", resp.Allowed, resp.Result)
	}
	if writes.Load() != 0 || len(getBudget(t, server, "b").Status.DisruptedPods) != 0 {
		t.Errorf("a throttled eviction was recorded: %d writes", writes.Load())
	}
}
