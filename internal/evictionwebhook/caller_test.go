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
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// podAt is a Running pod ns/name on n1 whose address is ip.
func podAt(ns, name, ip string) *builders.PodWrapper {
	return builders.Pod(name).Namespace(ns).OnNode("n1").Running().IPs(ip)
}

func fromAddr(addr string) context.Context {
	return withRemoteAddr(context.Background(), &http.Request{RemoteAddr: addr})
}

// A forged AdmissionReview sent from a pod (any pod that can reach the
// webhook port) is refused and spends no budget, whichever namespace it
// names; the API server's calls, from addresses no ordinary pod holds or
// relayed by a pod of a trusted namespace, are decided as before.
func TestReviewsFromPodsAreRefused(t *testing.T) {
	objs := []*corev1.Pod{
		readyPod(),
		podAt("evil", "forger", "10.1.2.3").Obj(),
		podAt("kube-system", "konnectivity-agent", "10.9.9.9").Obj(),
		podAt("evil", "host", "192.168.1.5").HostNetwork().Obj(),
		podAt("evil", "done", "10.4.4.4").Phase(corev1.PodSucceeded).Obj(),
		// An address reused: a trusted pod holds it too.
		podAt("evil", "old", "10.9.9.9").Obj(),
		podAt("evil", "v6", "fd00::7").Obj(),
		// Its node is gone: the address is free again.
		podAt("evil", "lingering", "10.5.5.5").OnNode("gone").Obj(),
	}
	trusted := CallerPolicy{TrustedNamespaces: map[string]bool{"kube-system": true}}

	tests := []struct {
		name    string
		addr    string
		callers CallerPolicy
		refused bool
	}{
		{name: "a pod's address", addr: "10.1.2.3:40000", callers: trusted, refused: true},
		{name: "a pod's address, IPv4-mapped", addr: "[::ffff:10.1.2.3]:40000", callers: trusted, refused: true},
		{name: "a pod's IPv6 address", addr: "[fd00::7]:40000", callers: trusted, refused: true},
		{name: "an IPv6 link-local address (every pod has one; no pod lists it)", addr: "[fe80::fc:ff:fe00:1%eth0]:40000", callers: trusted, refused: true},
		{name: "a trusted namespace's pod (a proxy of the API server)", addr: "10.9.9.9:40000", callers: trusted},
		{name: "the address of a pod whose node is gone", addr: "10.5.5.5:40000", callers: trusted},
		{name: "a node's address (host-network pods share it)", addr: "192.168.1.5:40000", callers: trusted},
		{name: "a finished pod's address", addr: "10.4.4.4:40000", callers: trusted},
		{name: "an address no pod holds (the API server)", addr: "127.0.0.1:40000", callers: trusted},
		{name: "no remote address known", addr: "", callers: trusted},
		{name: "check disabled (*)", addr: "10.1.2.3:40000"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			builder := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(zoneNode(), budgetAllowing("b", 1)).
				WithIndex(&corev1.Pod{}, PodIPIndex, IndexPodIPs).
				WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{})
			for _, p := range objs {
				builder = builder.WithObjects(p)
			}
			c := builder.Build()
			h := newHandler(t, c, c)
			h.Callers = tc.callers
			resp := h.Handle(fromAddr(tc.addr), request(t, eviction(), false))
			recs := getBudget(t, c, "b").Status.DisruptedPods
			if tc.refused {
				if resp.Allowed || resp.Result.Code != http.StatusForbidden || !strings.Contains(resp.Result.Message, "this review came from the address ") {
					t.Fatalf("response %+v; want 403 naming the pod", resp.Result)
				}
				if len(recs) != 0 {
					t.Errorf("a refused review left records %v", recs)
				}
				return
			}
			if !resp.Allowed || len(recs) != 1 {
				t.Fatalf("response %+v, records %v; want the eviction decided and charged", resp.Result, recs)
			}
		})
	}
}

func TestParseCallerNamespaces(t *testing.T) {
	p, err := ParseCallerNamespaces(" kube-system, proxies ,")
	if err != nil || len(p.TrustedNamespaces) != 2 || !p.TrustedNamespaces["proxies"] {
		t.Errorf("list: %+v, %v", p, err)
	}
	if p, err := ParseCallerNamespaces("*"); err != nil || p.TrustedNamespaces != nil {
		t.Errorf("*: %+v, %v; want the check disabled", p, err)
	}
	if _, err := ParseCallerNamespaces("kube-system,*"); err == nil {
		t.Error("* in a list: want an error")
	}
	if p, err := ParseCallerNamespaces(""); err != nil || p.TrustedNamespaces == nil || len(p.TrustedNamespaces) != 0 {
		t.Errorf("empty: %+v, %v; want the check on with no trusted namespace", p, err)
	}
}

// The lookup of the caller is bounded by the request's deadline: a cache
// that does not answer ends in the usual retryable refusal, in time, not in
// the API server's timeout (a 500 that kubectl drain does not retry).
func TestCallerLookupIsBoundedByTheDeadline(t *testing.T) {
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(readyPod(), zoneNode(), budgetAllowing("b", 1)).
		WithIndex(&corev1.Pod{}, PodIPIndex, IndexPodIPs).WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).
		WithInterceptorFuncs(interceptor.Funcs{List: func(ctx context.Context, cl client.WithWatch, l client.ObjectList, o ...client.ListOption) error {
			if _, ok := l.(*corev1.PodList); ok {
				<-ctx.Done()
				return ctx.Err()
			}
			return cl.List(ctx, l, o...)
		}}).Build()
	h := newHandler(t, c, c)
	h.Deadline = 200 * time.Millisecond
	h.Callers = CallerPolicy{TrustedNamespaces: map[string]bool{"kube-system": true}}
	done := make(chan admission.Response, 1)
	go func() { done <- h.Handle(fromAddr("10.1.2.3:4000"), request(t, eviction(), false)) }()
	select {
	case resp := <-done:
		if resp.Allowed {
			t.Errorf("response %+v; want a refusal (nothing could be decided in time)", resp.Result)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Handle did not answer within its deadline")
	}
}
