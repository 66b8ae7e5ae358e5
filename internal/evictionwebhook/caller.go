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
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Who calls the webhook. Only the API server should: anyone else who reaches
// the webhook port can forge an AdmissionReview for an eviction in any
// namespace and have the operator record a grant, spending a budget's
// allowance for an eviction that never happens. The NetworkPolicy and the
// API server's client certificate (docs/install.md) keep others out where a
// cluster can be configured for them; this check works everywhere: a review
// whose connection comes from the address of a pod is refused, unless that
// pod runs in a namespace trusted to relay the API server's calls (by
// default kube-system, where konnectivity agents and similar proxies run).
// The API server itself runs on a node's address, in the host network, or
// outside the cluster, never as an ordinary pod of the cluster it serves.
//
// It fails open: an address no pod holds, a pod of a trusted namespace
// holding it (addresses are reused), a pod on a node that is gone, or a
// cache that cannot be read lets the review through to be decided, so that
// the check can never refuse the API server's own calls for long. IPv6
// link-local callers are refused: no pod lists that address, yet every pod
// has one, and the API server never calls from it. Pods in the host network share their node's
// address and are not indexed: they cannot be told from the API server.

// PodIPIndex indexes the cached pods by their addresses (status.podIPs),
// leaving out pods in the host network and terminal pods.
const PodIPIndex = "tdb.status.podIPs"

// IndexPodIPs is the index function of PodIPIndex.
func IndexPodIPs(o client.Object) []string {
	p, ok := o.(*corev1.Pod)
	if !ok || p.Spec.HostNetwork || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	var out []string
	for _, ip := range p.Status.PodIPs {
		if a, err := netip.ParseAddr(ip.IP); err == nil {
			out = append(out, a.Unmap().String())
		}
	}
	return out
}

type remoteAddrKey struct{}

// withRemoteAddr keeps the connection's remote address in the context the
// handler gets.
func withRemoteAddr(ctx context.Context, r *http.Request) context.Context {
	return context.WithValue(ctx, remoteAddrKey{}, r.RemoteAddr)
}

// remoteAddr is the caller's address kept by withRemoteAddr, with any IPv6
// zone.
func remoteAddr(ctx context.Context) (netip.Addr, bool) {
	s, _ := ctx.Value(remoteAddrKey{}).(string)
	if s == "" {
		return netip.Addr{}, false
	}
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// CallerPolicy says which pods may call the webhook.
type CallerPolicy struct {
	// TrustedNamespaces are the namespaces whose pods may call (relay the
	// API server's calls). Nil disables the check.
	TrustedNamespaces map[string]bool
}

// ParseCallerNamespaces reads the --webhook-caller-namespaces flag: a
// comma-separated list of namespaces, or "*" to let any pod call.
func ParseCallerNamespaces(s string) (CallerPolicy, error) {
	s = strings.TrimSpace(s)
	if s == "*" {
		return CallerPolicy{}, nil
	}
	p := CallerPolicy{TrustedNamespaces: map[string]bool{}}
	for _, ns := range strings.Split(s, ",") {
		ns = strings.TrimSpace(ns)
		if ns == "" {
			continue
		}
		if ns == "*" {
			return CallerPolicy{}, fmt.Errorf("\"*\" must stand alone (any pod may call), got %q", s)
		}
		p.TrustedNamespaces[ns] = true
	}
	return p, nil
}

// untrustedCaller describes the caller when it is not to be answered: the
// pods holding its address, when every one of them is in an untrusted
// namespace and on a node that exists, or its IPv6 link-local address.
// Otherwise it returns nil.
func (h *EvictionHandler) untrustedCaller(ctx context.Context) ([]string, error) {
	if h.Callers.TrustedNamespaces == nil {
		return nil, nil
	}
	addr, ok := remoteAddr(ctx)
	if !ok {
		return nil, nil
	}
	if addr.Is6() && addr.IsLinkLocalUnicast() {
		// The API server dials the webhook Service's or a pod's address, so
		// its calls leave from a routable address of its own. An IPv6
		// link-local address is one every pod has without asking, and no
		// pod holds it in status.podIPs: a pod on the manager's node (on a
		// bridge network) could call from it unseen.
		return []string{"at the link-local address " + addr.String()}, nil
	}
	var pods corev1.PodList
	if err := h.Cache.List(ctx, &pods, client.MatchingFields{PodIPIndex: addr.String()}, client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("looking up the caller %s among pods: %w", addr, err)
	}
	var who []string
	for i := range pods.Items {
		p := &pods.Items[i]
		if h.Callers.TrustedNamespaces[p.Namespace] {
			return nil, nil
		}
		if p.Spec.NodeName != "" {
			// A pod whose node is gone runs nowhere: its address is free
			// again (a cloud may give it to a control-plane interface at
			// once), though the pod lingers until garbage collection.
			var n corev1.Node
			if err := h.Cache.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &n); apierrors.IsNotFound(err) {
				continue
			}
		}
		who = append(who, "of pod "+p.Namespace+"/"+p.Name)
	}
	sort.Strings(who)
	return who, nil
}
