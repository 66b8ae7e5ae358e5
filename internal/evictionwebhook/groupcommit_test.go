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
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// zoneBudget is a computed budget over n Ready pods in zone-a that allows
// `allowed` evictions.
func zoneBudget(n, allowed int32) *policyv1alpha1.TopologyDisruptionBudget {
	return computed("b", allowed, policyv1alpha1.DomainStatus{ExpectedPods: n, CurrentHealthy: n, DesiredHealthy: n - allowed, DisruptionsAllowed: allowed}).Obj()
}

// zonePods are the n pods web-<i> (UID p<i>) like readyPod.
func zonePods(n int) []client.Object {
	out := make([]client.Object, n)
	for i := range out {
		out[i] = webPod(fmt.Sprintf("web-%d", i), types.UID(fmt.Sprintf("p%d", i))).Obj()
	}
	return out
}

// countingServer is a fake API server that counts the budget status writes.
//
// Writes that only mark a domain blocked (status.domains[].blockedSince,
// written once per blocked domain after a refusal) are counted in marks,
// when given, not in writes.
func countingServer(t *testing.T, objs []client.Object, writes *atomic.Int32, marks ...*atomic.Int32) client.WithWatch {
	return fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				if next, ok := obj.(*policyv1alpha1.TopologyDisruptionBudget); ok && sub == "status" {
					var cur policyv1alpha1.TopologyDisruptionBudget
					if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &cur); err == nil && onlyMarksBlocked(&cur.Status, &next.Status) {
						for _, m := range marks {
							m.Add(1)
						}
					} else {
						writes.Add(1)
					}
				}
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
}

// onlyMarksBlocked says whether next differs from cur in blockedSince only.
func onlyMarksBlocked(cur, next *policyv1alpha1.TopologyDisruptionBudgetStatus) bool {
	strip := func(st *policyv1alpha1.TopologyDisruptionBudgetStatus) *policyv1alpha1.TopologyDisruptionBudgetStatus {
		st = st.DeepCopy()
		for i := range st.Domains {
			st.Domains[i].BlockedSince = nil
		}
		return st
	}
	return !equality.Semantic.DeepEqual(cur, next) && equality.Semantic.DeepEqual(strip(cur), strip(next))
}

// Grants queued on one budget are decided in queue order, each against the
// status the earlier ones produced, and written in one status write: the
// first `allowed` are granted and recorded, the rest refused.
func TestQueuedGrantsAreWrittenTogether(t *testing.T) {
	ctx := context.Background()
	var writes atomic.Int32
	server := countingServer(t, append(zonePods(10), zoneNode(), zoneBudget(10, 3)), &writes)
	// Nine requests queued while another held the lock, and the tenth,
	// which takes the lock and writes for all of them.
	f := newGroupFixture(t, server, 10)
	h, queued := f.h, f.queued
	d, err := h.grant(ctx, f.c, f.last, h.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.Reason != budget.DecisionInsufficientPods {
		t.Errorf("tenth request: %+v, want refused InsufficientPods", d)
	}
	for i, g := range queued {
		if !g.done || g.err != nil {
			t.Fatalf("queued grant %d not done: done=%v err=%v", i, g.done, g.err)
		}
		want := i < 3
		if g.decision.Allowed != want {
			t.Errorf("queued grant %d (%s): allowed=%v (%s), want %v", i, g.pod.Name, g.decision.Allowed, g.decision.Reason, want)
		}
	}
	if got := writes.Load(); got != 1 {
		t.Errorf("status writes = %d, want 1 for the whole queue", got)
	}
	var got policyv1alpha1.TopologyDisruptionBudget
	if err := server.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "b"}, &got); err != nil {
		t.Fatal(err)
	}
	var recorded []string
	for _, r := range got.Status.DisruptedPods {
		recorded = append(recorded, r.Name)
	}
	if fmt.Sprint(recorded) != "[web-0 web-1 web-2]" || got.Status.Domains[0].DisruptionsAllowed != 0 || got.Status.Domains[0].CurrentHealthy != 7 {
		t.Errorf("status after the write: records %v, allowed %d, healthy %d; want [web-0 web-1 web-2], 0, 7",
			recorded, got.Status.Domains[0].DisruptionsAllowed, got.Status.Domains[0].CurrentHealthy)
	}
}

// When the write conflicts (another writer lowered the allowance), every
// grant of the group is decided again on the fresh version: none is granted
// on the stale one.
func TestGroupDecidedAgainAfterConflict(t *testing.T) {
	ctx := context.Background()
	var writes atomic.Int32
	objs := append(zonePods(4), zoneNode(), zoneBudget(4, 3))
	server := countingServer(t, objs, &writes)
	// The cache keeps the version allowing 3; the server now allows 1.
	var stale policyv1alpha1.TopologyDisruptionBudget
	if err := server.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "b"}, &stale); err != nil {
		t.Fatal(err)
	}
	cache := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(append(zonePods(4), zoneNode(), stale.DeepCopy())...).Build()
	fresh := stale.DeepCopy()
	fresh.Status = zoneBudget(4, 1).Status
	if err := server.Status().Update(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	writes.Store(0)

	h := newHandler(t, cache, server)
	var pods []*corev1.Pod
	for i := range 3 {
		p := &corev1.Pod{}
		if err := cache.Get(ctx, client.ObjectKey{Namespace: "ns", Name: fmt.Sprintf("web-%d", i)}, p); err != nil {
			t.Fatal(err)
		}
		pods = append(pods, p)
	}
	covering, err := h.covering(ctx, pods[0])
	if err != nil || len(covering) != 1 {
		t.Fatalf("covering = %v, %v", covering, err)
	}
	c := covering[0]
	c.entry = h.ledger.entry(types.NamespacedName{Namespace: "ns", Name: "b"})
	now := h.Clock.Now()
	g0 := &grant{pod: pods[0], domain: "zone-a", now: now, seen: c.tdb}
	g1 := &grant{pod: pods[1], domain: "zone-a", now: now, seen: c.tdb}
	c.entry.enqueue(g0)
	c.entry.enqueue(g1)
	d2, err := h.grant(ctx, c, pods[2], now)
	if err != nil {
		t.Fatal(err)
	}
	allowed := 0
	for _, d := range []budget.Decision{g0.decision, g1.decision, d2} {
		if d.Allowed {
			allowed++
		}
	}
	if !g0.decision.Allowed || allowed != 1 {
		t.Errorf("granted %d (first: %+v), want only the first of the group on the fresh version", allowed, g0.decision)
	}
	if got := writes.Load(); got != 2 {
		t.Errorf("status writes = %d, want 2 (the conflicting one and the one after the re-read)", got)
	}
}

// Many concurrent evictions through the handler: never more granted than the
// allowance, every grant recorded, at most one write per grant. (How many
// grants share a write depends on the timing; the queued case above pins it.)
func TestConcurrentEvictionsOneBudget(t *testing.T) {
	ctx := context.Background()
	const n, allowed = 64, 5
	for rep := range 10 {
		var writes, marks atomic.Int32
		objs := append(zonePods(n), zoneNode(), zoneBudget(n, allowed))
		server := countingServer(t, objs, &writes, &marks)
		h := newHandler(t, server, server)
		var granted, refused atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range n {
			wg.Go(func() {
				<-start
				req := request(t, eviction(), false)
				req.Name = fmt.Sprintf("web-%d", i)
				resp := h.Handle(ctx, req)
				switch {
				case resp.Allowed:
					granted.Add(1)
				case resp.Result != nil && resp.Result.Code == http.StatusTooManyRequests:
					refused.Add(1)
				default:
					t.Errorf("web-%d: neither allowed nor 429: %+v", i, resp.Result)
				}
			})
		}
		close(start)
		wg.Wait()
		var got policyv1alpha1.TopologyDisruptionBudget
		if err := server.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "b"}, &got); err != nil {
			t.Fatal(err)
		}
		if granted.Load() != allowed || refused.Load() != n-allowed || len(got.Status.DisruptedPods) != allowed {
			t.Fatalf("rep %d: granted %d, refused %d, recorded %d; want %d, %d, %d",
				rep, granted.Load(), refused.Load(), len(got.Status.DisruptedPods), allowed, n-allowed, allowed)
		}
		if w := writes.Load(); w < 1 || w > allowed {
			t.Fatalf("rep %d: %d status writes for %d grants", rep, w, allowed)
		}
		// The refusals mark the domain blocked, once, in the background.
		deadline := time.Now().Add(5 * time.Second)
		for {
			if err := server.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "b"}, &got); err != nil {
				t.Fatal(err)
			}
			if got.Status.Domains[0].BlockedSince != nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if got.Status.Domains[0].BlockedSince == nil {
			t.Fatalf("rep %d: %d refusals, and the domain is not marked blocked", rep, refused.Load())
		}
		if m := marks.Load(); m != 1 {
			t.Fatalf("rep %d: %d writes marked the domain blocked for %d refusals, want 1", rep, m, refused.Load())
		}
	}
}

// groupFixture queues grants for web-0..web-(n-2) on a budget allowing
// `allowed` and returns what the last request needs to lead the group.
type groupFixture struct {
	h      *EvictionHandler
	c      *coveringBudget
	queued []*grant
	last   *corev1.Pod
}

func newGroupFixture(t *testing.T, server client.Client, n int) *groupFixture {
	ctx := context.Background()
	h := newHandler(t, server, server)
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		pods[i] = &corev1.Pod{}
		if err := server.Get(ctx, client.ObjectKey{Namespace: "ns", Name: fmt.Sprintf("web-%d", i)}, pods[i]); err != nil {
			t.Fatal(err)
		}
	}
	covering, err := h.covering(ctx, pods[0])
	if err != nil || len(covering) != 1 {
		t.Fatalf("covering = %v, %v", covering, err)
	}
	c := covering[0]
	c.entry = h.ledger.entry(types.NamespacedName{Namespace: "ns", Name: "b"})
	f := &groupFixture{h: h, c: c, last: pods[n-1]}
	for _, p := range pods[:n-1] {
		g := &grant{pod: p, domain: "zone-a", now: h.Clock.Now(), seen: c.tdb}
		c.entry.enqueue(g)
		f.queued = append(f.queued, g)
	}
	return f
}

// A failed write (not a conflict) allows nobody in the group: each request
// that would have been allowed gets the error, the others their refusal.
func TestGroupWriteErrorAllowsNobody(t *testing.T) {
	objs := append(zonePods(4), zoneNode(), zoneBudget(4, 2))
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
				return apierrors.NewInternalError(errors.New("etcd is unhappy"))
			},
		}).Build()
	f := newGroupFixture(t, server, 4)
	d, err := f.h.grant(context.Background(), f.c, f.last, f.h.Clock.Now())
	if d.Allowed || err != nil || d.Reason != budget.DecisionInsufficientPods {
		t.Errorf("fourth request: %+v, %v; want refused (the two before it took the allowance), no error", d, err)
	}
	for i, g := range f.queued {
		if !g.done || g.decision.Allowed {
			t.Fatalf("grant %d: done=%v allowed=%v after a failed write", i, g.done, g.decision.Allowed)
		}
		if wantErr := i < 2; (g.err != nil) != wantErr {
			t.Errorf("grant %d: err = %v, want an error: %v", i, g.err, wantErr)
		}
	}
}

// A request whose client went away withdraws its grant before anything is
// written for it; the others' grants are still decided and written together
// by the next request that takes the lock.
func TestGroupWithdrawsAGrantWhoseRequestWentAway(t *testing.T) {
	objs := append(zonePods(4), zoneNode(), zoneBudget(4, 2))
	var writes atomic.Int32
	server := countingServer(t, objs, &writes)
	f := newGroupFixture(t, server, 3) // web-0 and web-1 queued; web-2 last
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	cancel()
	if _, err := f.h.grant(ctx, f.c, f.last, f.h.Clock.Now()); err == nil || !retryable(err) {
		t.Fatalf("cancelled request: err = %v, want a retryable error (429)", err)
	}
	var p3 corev1.Pod
	if err := server.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web-3"}, &p3); err != nil {
		t.Fatal(err)
	}
	d, err := f.h.grant(context.Background(), f.c, &p3, f.h.Clock.Now())
	if err != nil || d.Allowed {
		t.Fatalf("web-3: %+v, %v; want refused (the two queued took the allowance)", d, err)
	}
	for i, g := range f.queued {
		if !g.decision.Allowed || g.err != nil {
			t.Errorf("grant %d: allowed=%v err=%v; want allowed", i, g.decision.Allowed, g.err)
		}
	}
	var got policyv1alpha1.TopologyDisruptionBudget
	if err := server.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "b"}, &got); err != nil {
		t.Fatal(err)
	}
	if n := len(got.Status.DisruptedPods); n != 2 || got.Status.DisruptedPods[0].Name != "web-0" || got.Status.DisruptedPods[1].Name != "web-1" {
		t.Errorf("records = %v, want web-0 and web-1 only (web-2's request went away)", got.Status.DisruptedPods)
	}
	if writes.Load() != 1 {
		t.Errorf("status writes = %d, want 1", writes.Load())
	}
}

// A queued grant whose request's deadline passed by the time a holder takes
// it is refused and not written; the group is written by the earliest
// deadline among the grants still waiting, never after one of them expired.
func TestGroupHonoursEachGrantsDeadline(t *testing.T) {
	objs := append(zonePods(3), zoneNode(), zoneBudget(3, 3))
	var deadlines []time.Time
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				d, _ := ctx.Deadline()
				deadlines = append(deadlines, d)
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
	f := newGroupFixture(t, server, 3)
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	f.queued[0].ctx = expired
	soon := time.Now().Add(30 * time.Second)
	soonCtx, cancel2 := context.WithDeadline(context.Background(), soon)
	defer cancel2()
	f.queued[1].ctx = soonCtx
	later, cancel3 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel3()
	if d, err := f.h.grant(later, f.c, f.last, f.h.Clock.Now()); err != nil || !d.Allowed {
		t.Fatalf("last request: %+v, %v; want allowed", d, err)
	}
	if g := f.queued[0]; g.decision.Allowed || g.err == nil {
		t.Errorf("expired grant: %+v, %v; want an error and no grant", g.decision, g.err)
	}
	var got policyv1alpha1.TopologyDisruptionBudget
	if err := server.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "b"}, &got); err != nil {
		t.Fatal(err)
	}
	for _, r := range got.Status.DisruptedPods {
		if r.Name == "web-0" {
			t.Errorf("the expired request's eviction was recorded: %v", got.Status.DisruptedPods)
		}
	}
	if len(deadlines) != 1 || !deadlines[0].Equal(soon) {
		t.Errorf("write deadlines = %v, want one write by the earliest live deadline %v", deadlines, soon)
	}
}

// The budget's lock is waited for no longer than the request's deadline:
// the request is then refused for a retry (429), and writes nothing.
func TestLockWaitEndsAtTheDeadline(t *testing.T) {
	objs := append(zonePods(2), zoneNode(), zoneBudget(2, 1))
	var writes atomic.Int32
	server := countingServer(t, objs, &writes)
	f := newGroupFixture(t, server, 1)
	if err := f.c.entry.acquire(context.Background()); err != nil { // another request holds it
		t.Fatal(err)
	}
	defer f.c.entry.release()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := f.h.grant(ctx, f.c, f.last, f.h.Clock.Now())
	if err == nil || !retryable(err) {
		t.Fatalf("err = %v, want a retryable deadline error", err)
	}
	if writes.Load() != 0 {
		t.Errorf("status writes = %d, want none", writes.Load())
	}
	if len(f.c.entry.take()) != 0 {
		t.Errorf("the withdrawn grant is still taken by the next holder")
	}
}

// A grant whose domain was found under another spec of the budget is refused
// for a retry, not charged under the new one.
func TestGroupRefusesGrantsOfAnotherSpec(t *testing.T) {
	objs := append(zonePods(3), zoneNode(), zoneBudget(3, 2))
	var writes atomic.Int32
	server := countingServer(t, objs, &writes)
	f := newGroupFixture(t, server, 3)
	old := f.c.tdb.DeepCopy()
	old.Generation = 0 // the first grant's request saw an older spec
	f.queued[0].seen = old
	d, err := f.h.grant(context.Background(), f.c, f.last, f.h.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if g := f.queued[0]; g.decision.Allowed || g.decision.Reason != budget.DecisionStaleStatus {
		t.Errorf("grant of the older spec: %+v, want refused StaleStatus", g.decision)
	}
	if !f.queued[1].decision.Allowed || !d.Allowed {
		t.Errorf("the other two: %+v, %+v; want both allowed", f.queued[1].decision, d)
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

// Two requests for the SAME pod in one group, same second. The first is
// charged in `work`; the second sees that unwritten record and is
// AlreadyRecorded with renew()==nil (no write of its own). The group write
// fails (not a conflict): the first gets the error, and the second must not
// be answered ALLOWED, as nothing was recorded.
func TestADuplicateGrantIsNotAllowedWhenTheGroupWriteFails(t *testing.T) {
	objs := append(zonePods(4), zoneNode(), zoneBudget(4, 1))
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(context.Context, client.Client, string, client.Object, ...client.SubResourceUpdateOption) error {
				return apierrors.NewTimeoutError("etcd slow", 1)
			},
		}).Build()
	f := newGroupFixture(t, server, 2) // web-0 queued; "last" is web-1
	// A second request for web-0 (a client retry, or a second drainer).
	dup := &grant{pod: f.queued[0].pod, domain: "zone-a", now: f.h.Clock.Now(), seen: f.c.tdb}
	f.c.entry.enqueue(dup)
	_, _ = f.h.grant(context.Background(), f.c, f.last, f.h.Clock.Now())
	first := f.queued[0]
	t.Logf("first: allowed=%v err=%v; duplicate: allowed=%v reason=%s err=%v", first.decision.Allowed, first.err, dup.decision.Allowed, dup.decision.Reason, dup.err)
	var got policyv1alpha1.TopologyDisruptionBudget
	_ = server.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "b"}, &got)
	if dup.decision.Allowed && dup.err == nil {
		t.Errorf("duplicate grant answered allowed (%s) though the write failed; records on the server: %d", dup.decision.Reason, len(got.Status.DisruptedPods))
	}
	_ = errors.New
}

// A not-Ready pod is re-read live in tryCommit; the live pod is a different
// pod of the same name (StatefulSet re-created it on a zone-b node, Ready).
// If it is charged, it must not be to the domain found for the OLD pod.
func TestAReplacedPodReadLiveIsNotChargedTheOldDomain(t *testing.T) {
	ctx := context.Background()
	b := zoneBudget(4, 1)
	b.Status.Domains = append(b.Status.Domains, policyv1alpha1.DomainStatus{Name: "zone-b", ExpectedPods: 4, CurrentHealthy: 4, DesiredHealthy: 3, DisruptionsAllowed: 1})
	nb := builders.Node("n2").Zone("zone-b").Obj()
	objs := append(zonePods(2), zoneNode(), nb, b)
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	h := newHandler(t, server, server)
	old := webPod("web-0", "p0").NotReady().Obj() // not Ready: re-read live in tryCommit
	covering, err := h.covering(ctx, old)
	if err != nil || len(covering) != 1 {
		t.Fatal(covering, err)
	}
	c := covering[0]
	c.entry = h.ledger.entry(types.NamespacedName{Namespace: "ns", Name: "b"})
	// Meanwhile web-0 is re-created on n2 (zone-b), Ready.
	var cur = readyPod()
	if err := server.Get(ctx, client.ObjectKeyFromObject(cur), cur); err != nil {
		t.Fatal(err)
	}
	if err := server.Delete(ctx, cur); err != nil {
		t.Fatal(err)
	}
	repl := webPod("web-0", "p0-new").OnNode("n2").Obj()
	if err := server.Create(ctx, repl); err != nil {
		t.Fatal(err)
	}
	d, err := h.grant(ctx, c, old, h.Clock.Now())
	var got policyv1alpha1.TopologyDisruptionBudget
	_ = server.Get(ctx, types.NamespacedName{Namespace: "ns", Name: "b"}, &got)
	t.Logf("decision %+v err %v records %+v", d, err, got.Status.DisruptedPods)
	if d.Allowed {
		for _, r := range got.Status.DisruptedPods {
			if r.UID == "p0-new" && r.Domain != "zone-b" {
				t.Errorf("pod %s (UID %s) running in zone-b charged to %s", r.Name, r.UID, r.Domain)
			}
		}
	}
}

// The holder's own grant expires during commit while the others' grants
// have later deadlines: were the holder to keep committing them up to
// THEIR deadlines, its own answer would come long after its own deadline
// (in production: after the API server's 10 s webhook timeout).
func TestTheHolderAnswersByItsOwnDeadline(t *testing.T) {
	objs := append(zonePods(3), zoneNode(), zoneBudget(3, 2))
	var calls atomic.Int32
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
				time.Sleep(400 * time.Millisecond) // a slow API server
				if calls.Add(1) == 1 {
					return apierrors.NewConflict(schema.GroupResource{}, "b", errors.New("conflict"))
				}
				return c.SubResource(sub).Update(ctx, obj, opts...)
			},
		}).Build()
	f := newGroupFixture(t, server, 2) // web-0 queued, web-1 holder
	qctx, qcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer qcancel()
	f.queued[0].ctx = qctx
	hctx, hcancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer hcancel()
	start := time.Now()
	_, err := f.h.grant(hctx, f.c, f.last, f.h.Clock.Now())
	took := time.Since(start)
	t.Logf("holder answered after %v (deadline 300ms), err=%v; queued allowed=%v", took, err, f.queued[0].decision.Allowed)
	if took > 600*time.Millisecond {
		t.Errorf("holder answered %v after start, its deadline was 300ms", took)
	}
}
