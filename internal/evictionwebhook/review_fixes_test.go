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
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// Regression (second reader) W1: two requests for the SAME pod in one group, same second. The
// first is charged in `work`; the second sees that unwritten record and is
// AlreadyRecorded with renew()==nil (no write of its own). The group write
// fails (not a conflict): the first gets the error, the second is answered
// ALLOWED although nothing was recorded.
func TestRegressionDuplicateGrantAllowedWhenGroupWriteFails(t *testing.T) {
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

// Regression (second reader) W2: a not-Ready pod is re-read live in tryCommit; the live pod is a
// different pod of the same name (StatefulSet re-created it on a zone-b
// node, Ready). It is charged, but to the domain found for the OLD pod.
func TestRegressionLiveRereadOfReplacedPodChargesOldDomain(t *testing.T) {
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

// Regression (second reader) L1: the holder's own grant expires during commit; the holder keeps
// committing the others' grants up to THEIR deadlines, so its own answer
// comes long after its own deadline (in production: after the API server's
// 10 s webhook timeout).
func TestRegressionHolderAnswersAfterItsDeadline(t *testing.T) {
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
