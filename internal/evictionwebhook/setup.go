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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/replica"
)

// Options configure the eviction webhook.
type Options struct {
	// ExemptNamespace is the operator's own namespace.
	ExemptNamespace string
	// Clock defaults to the real clock.
	Clock clock.PassiveClock
	// RefusalEventInterval rate-limits refusal events per budget (default 1m).
	RefusalEventInterval time.Duration
	// Callers says which pods may call the webhook; nil TrustedNamespaces
	// lets any caller in (see CallerPolicy).
	Callers CallerPolicy
	// Memory is what the process remembers beyond its cache, shared with
	// the controllers (replica.ForManager): the last labels of gone nodes,
	// the budget versions every status writer shares, which statuses are
	// behind the cache, and the status controller's gathering layer for
	// the recomputations. The handler keeps its ledger and recomputations
	// there, forgotten with their budget. Nil: a memory of its own, which
	// knows no gone node and recomputes no status.
	Memory *replica.Memory
	// BlockMarkDelay is how long after a domain's first refusal its
	// blockedSince is written (zero: DefaultBlockMarkDelay; negative: at
	// once).
	BlockMarkDelay time.Duration
	// RecordTimeout is the status controller's --record-timeout.
	RecordTimeout time.Duration
	// NoRecompute turns off the recomputation of a refusing status from
	// the cache (see EvictionHandler.Computes); Register otherwise enables
	// it once the manager is the leader, where the status controller runs.
	NoRecompute bool
}

// Register serves the eviction webhook at Path on the manager's webhook
// server and returns the handler. Call before the manager starts: it adds
// the cache index of pods by address.
func Register(mgr ctrl.Manager, opts Options) (*EvictionHandler, error) {
	if opts.Callers.TrustedNamespaces != nil {
		if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, PodIPIndex, IndexPodIPs); err != nil {
			return nil, fmt.Errorf("indexing pods by address: %w", err)
		}
	}
	clk := opts.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	markDelay := opts.BlockMarkDelay
	switch {
	case markDelay == 0:
		markDelay = DefaultBlockMarkDelay
	case markDelay < 0:
		markDelay = 0
	}
	interval := opts.RefusalEventInterval
	if interval <= 0 {
		interval = time.Minute
	}
	mem := opts.Memory
	var pending *budgetstatus.Pending
	if mem == nil {
		mem = &replica.Memory{}
	} else {
		pending = mem.Pending()
	}
	h := &EvictionHandler{
		Cache:           mgr.GetClient(),
		Client:          mgr.GetClient(),
		APIReader:       mgr.GetAPIReader(),
		Clock:           clk,
		ExemptNamespace: opts.ExemptNamespace,
		GoneNodes:       mem.GoneNodes,
		Callers:         opts.Callers,
		Versions:        mem.Versions(),
		BlockMarkDelay:  markDelay,
		RecordTimeout:   opts.RecordTimeout,
		Pending:         pending,
		Computations:    mem.Snapshots,
		Refusals:        &RefusalReporter{Recorder: mgr.GetEventRecorder("tdb-operator-webhook"), Clock: clk, Interval: interval},
	}
	if !opts.NoRecompute {
		elected := mgr.Elected()
		h.Computes = func() bool {
			select {
			case <-elected:
				return true
			default:
				return false
			}
		}
	}
	mem.Keep("webhook ledger", h.ledger.forget)
	mem.Keep("webhook recomputations", h.memo.forget)
	mgr.GetWebhookServer().Register(Path, &admission.Webhook{Handler: h, WithContextFunc: withRemoteAddr})
	return h, nil
}
