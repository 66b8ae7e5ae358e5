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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/flowcontrol"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/internal/tombstone"
)

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

// A node relabelled after the request found the pod's domain: the grant is
// refused for a retry, not charged to the domain the pod left.
func TestRelabelledNodeIsNotChargedTheOldDomain(t *testing.T) {
	ctx := context.Background()
	var writes atomic.Int32
	server := countingServer(t, append(zonePods(2), zoneNode(), zoneBudget(2, 1)), &writes)
	f := newGroupFixture(t, server, 2)
	n := zoneNode()
	if err := server.Get(ctx, client.ObjectKeyFromObject(n), n); err != nil {
		t.Fatal(err)
	}
	n.Labels[zoneKey] = "zone-b"
	if err := server.Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	d, err := f.h.grant(ctx, f.c, f.last, f.h.Clock.Now())
	if err != nil || d.Allowed || d.Reason != budget.DecisionStaleStatus {
		t.Fatalf("decision %+v, %v; want refused StaleStatus", d, err)
	}
	if writes.Load() != 0 {
		t.Errorf("status writes = %d, want none", writes.Load())
	}
}

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

// Per-budget state is freed: ledger entries after an idle time, refusal
// windows after ten intervals.
func TestPerBudgetMemoryIsBounded(t *testing.T) {
	var l ledger
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 100; i++ {
		l.entryAt(types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("b%d", i)}, t0)
	}
	busy := l.entryAt(types.NamespacedName{Namespace: "ns", Name: "busy"}, t0)
	if err := busy.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.entryAt(types.NamespacedName{Namespace: "ns", Name: "b0"}, t0.Add(idleEntry+time.Second))
	if got := l.size(); got != 2 {
		t.Errorf("ledger entries after an idle time = %d, want 2 (the one in use and the one held)", got)
	}

	clk := clocktesting.NewFakeClock(t0)
	r := &RefusalReporter{Recorder: events.NewFakeRecorder(1000), Clock: clk, Interval: time.Minute}
	for i := 0; i < 100; i++ {
		r.Refused(builders.Budget("b").UID(types.UID(fmt.Sprint(i))).Obj(), "refused")
	}
	clk.Step(refusalWindowIdle*time.Minute + time.Second)
	r.Refused(builders.Budget("b").UID("new").Obj(), "refused")
	r.mu.Lock()
	n := len(r.last)
	r.mu.Unlock()
	if n != 1 {
		t.Errorf("refusal windows = %d, want 1", n)
	}
}

// A panic while a group is decided answers its grants and releases the
// budget's lock: later evictions of the budget are still decided.
func TestPanicReleasesTheBudgetsLock(t *testing.T) {
	var calls atomic.Int32
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(append(zonePods(3), zoneNode(), zoneBudget(3, 2))...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				if calls.Add(1) == 1 {
					panic("boom")
				}
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
	f := newGroupFixture(t, server, 3)
	func() {
		defer func() { _ = recover() }()
		_, _ = f.h.grant(context.Background(), f.c, f.last, f.h.Clock.Now())
	}()
	for i, g := range f.queued {
		if !g.done || g.decision.Allowed {
			t.Errorf("grant %d after the panic: done=%v allowed=%v; want answered, not allowed", i, g.done, g.decision.Allowed)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if d, err := f.h.grant(ctx, f.c, f.last, f.h.Clock.Now()); err != nil || !d.Allowed {
		t.Fatalf("after the panic: %+v, %v; want allowed (the lock was released)", d, err)
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

// A pod on a gone node is decided on the API server's copy: pod garbage
// collection may have replaced it, under the same name, with a Ready pod on a
// live node while the cache still shows the old one (found by the second
// reader: the stale copy let both healthy pods of zone-a go under
// maxUnavailable 1 when such pods passed uncharged).
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

// A refused domain is marked blocked only if it still allows nothing
// BlockMarkDelay after the refusal, with the refusal's time: a domain that
// reopens meanwhile, as one does while a drained pod's replacement starts,
// costs no status write.
func TestBlockedMarkWaitsForTheDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	for _, reopens := range []bool{false, true} {
		var writes, marks atomic.Int32
		server := countingServer(t, []client.Object{readyPod(), zoneNode(), budgetAllowing("b", 0)}, &writes, &marks)
		h := newHandler(t, server, server)
		h.BlockMarkDelay = delay
		refusedAt := h.Clock.Now()
		if resp := h.Handle(context.Background(), request(t, eviction(), false)); resp.Allowed || resp.Result.Code != http.StatusTooManyRequests {
			t.Fatalf("reopens=%v: %+v, want a 429 refusal", reopens, resp.Result)
		}
		time.Sleep(delay / 3)
		if got := getBudget(t, server, "b").Status.Domains[0].BlockedSince; got != nil || marks.Load() != 0 {
			t.Fatalf("reopens=%v: marked %v (%d writes) before the delay", reopens, got, marks.Load())
		}
		if reopens {
			// The status controller finds the domain's pod back.
			b := getBudget(t, server, "b")
			b.Status.Domains[0].CurrentHealthy, b.Status.Domains[0].DisruptionsAllowed = 3, 1
			if err := server.Status().Update(context.Background(), b); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(delay)
		deadline := time.Now().Add(5 * time.Second)
		got := getBudget(t, server, "b").Status.Domains[0].BlockedSince
		for !reopens && got == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			got = getBudget(t, server, "b").Status.Domains[0].BlockedSince
		}
		switch {
		case reopens && (got != nil || marks.Load() != 0):
			t.Errorf("a domain that allowed again within the delay was marked blocked: %v, %d mark writes", got, marks.Load())
		case !reopens && (got == nil || !got.Time.Equal(refusedAt.Truncate(time.Second)) || marks.Load() != 1):
			t.Errorf("blocked domain: blockedSince %v (%d mark writes), want the refusal's time %v in one write", got, marks.Load(), refusedAt)
		}
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
