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
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// blockMarks keeps one write of a domain's blockedSince in flight at a
// time: a drain retrying a refused pod every 5 seconds, or a storm of
// refusals, costs one status write per blocked domain, not one per refusal.
type blockMarks struct {
	mu       sync.Mutex
	inFlight map[blockKey]bool
}

type blockKey struct {
	budget types.UID
	domain string
}

// markBlockedTimeout bounds the write of one mark.
const markBlockedTimeout = 5 * time.Second

// DefaultBlockMarkDelay is how long after a domain's first refusal its
// blockedSince is written: in a drain a domain refuses while a replacement
// starts and allows again seconds later, and a mark written at once would
// cost a status write for each such wait (at 1,000 nodes, one in four of
// the webhook's writes). A domain still blocked after the delay is marked
// with the time of that first refusal; the alerts on blockedSince look at
// minutes.
const DefaultBlockMarkDelay = 5 * time.Second

// markBlocked records, in the background, that domain of tdb refused an
// eviction (status.domains[].blockedSince), unless the cached budget shows
// it marked already. The refusal's answer does not wait for it. The mark
// is written BlockMarkDelay later, with the time of this refusal, unless
// the domain allows a disruption by then (budget.MarkBlocked).
func (h *EvictionHandler) markBlocked(tdb *policyv1alpha1.TopologyDisruptionBudget, domain string) {
	for _, r := range h.status().Newest(tdb).Status.Domains {
		if r.Name == domain && r.BlockedSince != nil {
			return
		}
	}
	key := blockKey{budget: tdb.UID, domain: domain}
	h.blocking.mu.Lock()
	if h.blocking.inFlight == nil {
		h.blocking.inFlight = map[blockKey]bool{}
	}
	if h.blocking.inFlight[key] {
		h.blocking.mu.Unlock()
		return
	}
	h.blocking.inFlight[key] = true
	h.blocking.mu.Unlock()
	// Only the budget's name is kept for the delay, not a copy of it: with
	// many domains blocked at once those copies would add up.
	name, uid := client.ObjectKeyFromObject(tdb), tdb.UID
	now := h.Clock.Now()
	go func() {
		defer func() {
			h.blocking.mu.Lock()
			delete(h.blocking.inFlight, key)
			h.blocking.mu.Unlock()
		}()
		if d := h.BlockMarkDelay; d > 0 {
			time.Sleep(d)
		}
		ctx, cancel := context.WithTimeout(context.Background(), markBlockedTimeout)
		defer cancel()
		// The newest version known now: the charges and statuses written
		// meanwhile, which may allow the domain again.
		var cached policyv1alpha1.TopologyDisruptionBudget
		if err := h.Cache.Get(ctx, name, &cached); err != nil || cached.UID != uid {
			return // gone, or another budget of that name now
		}
		start := h.status().Newest(&cached)
		_, err := h.status().Update(ctx, start, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
			next := budget.MarkBlocked(&base.Status, domain, now)
			if next == nil {
				return nil, nil
			}
			base.Status = *next
			return base, nil
		})
		if err != nil {
			log.FromContext(ctx).V(1).Info("recording a blocked domain", "tdb", klog.KObj(start), "domain", domain, "error", err.Error())
		}
	}()
}
