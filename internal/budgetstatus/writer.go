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

package budgetstatus

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
)

// The writers of a budget's status, the label of their metrics.
const (
	WriterStatus  = "status"
	WriterRollout = "rollout"
	WriterWebhook = "webhook"
	WriterMirror  = "mirror"
)

// Results of a status write.
const (
	resultWritten  = "written"
	resultConflict = "conflict"
	resultError    = "error"
	// resultStale is a write not sent: a newer version than the one its
	// fields were derived from was known (OnlyFromStart).
	resultStale = "stale"
)

// Writer writes a budget's status for one writer.
type Writer struct {
	// Name is the writer's name in metrics (one of the Writer* constants).
	Name string
	// Client writes the status.
	Client client.Client
	// Live reads the budget from the API server after a conflict.
	Live client.Reader
	// Versions is shared by every writer of the process (nil: no sharing;
	// each write then starts from what the caller passes).
	Versions *Versions
	// Backoff paces the attempts of Update; its Steps bound them
	// (zero: retry.DefaultRetry).
	Backoff wait.Backoff
	// OnlyFromStart: see Update.
	OnlyFromStart bool
}

// Newest returns the newest version of cached's budget this process knows.
func (w *Writer) Newest(cached *policyv1alpha1.TopologyDisruptionBudget) *policyv1alpha1.TopologyDisruptionBudget {
	return w.Versions.Newest(cached)
}

// storedFull is set once the API server was seen to drop
// status.healthyDomains (a CustomResourceDefinition older than the field:
// Helm installs CRDs but never upgrades them): from then on this process
// stores every row, as before the field existed.
var storedFull atomic.Bool

// Put writes next's status once, conditional on next's resourceVersion, and
// records the result. The status is sent compact (budget.CompactStatus).
// On success next holds the written version as the API server answered it,
// expanded to every row; it must not be modified afterwards, as it is the
// newest version known.
//
// An API server whose CRD lacks status.healthyDomains drops the groups
// and answers with the listed rows only: Put then writes every row at once,
// on the version just written, and stores every row from then on.
func (w *Writer) Put(ctx context.Context, next *policyv1alpha1.TopologyDisruptionBudget) error {
	base := next.ResourceVersion
	sent := next.DeepCopy()
	if !storedFull.Load() {
		budget.CompactStatus(&sent.Status)
	}
	grouped := len(sent.Status.HealthyDomains) > 0
	var via []string
	err := w.Client.Status().Update(ctx, sent)
	if err == nil && grouped && len(sent.Status.HealthyDomains) == 0 {
		storedFull.Store(true)
		log.FromContext(ctx).Error(nil, "the API server dropped status.healthyDomains: the TopologyDisruptionBudget CRD is older than this operator; "+
			"storing every domain's row instead (apply the CRD of this release to store the status compact)",
			"budget", client.ObjectKeyFromObject(next).String())
		operatormetrics.StatusWrites.WithLabelValues(w.Name, resultWritten).Inc()
		via = append(via, sent.ResourceVersion)
		full := next.DeepCopy()
		full.ResourceVersion = sent.ResourceVersion
		full.Status.HealthyDomains = nil
		sent = full
		err = w.Client.Status().Update(ctx, sent)
	}
	switch {
	case err == nil:
		if xerr := budget.ExpandStatus(&sent.Status); xerr != nil {
			// The answer is what was sent, which always expands.
			return fmt.Errorf("reading the status written to %s: %w", client.ObjectKeyFromObject(next), xerr)
		}
		*next = *sent
		operatormetrics.StatusWrites.WithLabelValues(w.Name, resultWritten).Inc()
		w.Versions.Wrote(next, base, via...)
	case apierrors.IsConflict(err):
		operatormetrics.StatusWrites.WithLabelValues(w.Name, resultConflict).Inc()
	default:
		operatormetrics.StatusWrites.WithLabelValues(w.Name, resultError).Inc()
	}
	return err
}

// Reread reads the budget live after a write based on staleVersion
// conflicted, and records it as newer than that version.
func (w *Writer) Reread(ctx context.Context, key client.ObjectKey, staleVersion string) (*policyv1alpha1.TopologyDisruptionBudget, error) {
	if w.Live == nil {
		return nil, fmt.Errorf("re-reading %s after a conflict: no live reader", key)
	}
	fresh := &policyv1alpha1.TopologyDisruptionBudget{}
	if err := w.Live.Get(ctx, key, fresh); err != nil {
		return nil, fmt.Errorf("re-reading %s after a conflict: %w", key, err)
	}
	if err := budget.ExpandStatus(&fresh.Status); err != nil {
		return nil, fmt.Errorf("re-reading %s after a conflict: %w", key, err)
	}
	w.Versions.Saw(fresh, staleVersion)
	return fresh.DeepCopy(), nil
}

// Apply builds the next version of base, a copy the function may modify and
// return; nil means nothing to write. It is called again on a newer version
// after a conflict, so it must derive the writer's fields from base alone.
type Apply func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error)

// ErrGone says the budget was deleted or re-created between attempts.
var ErrGone = errors.New("the budget was deleted or re-created")

// errNewerVersion is the conflict of a write whose start is not the newest
// version known: it is not sent, as the API server would refuse it.
var errNewerVersion = apierrors.NewConflict(policyv1alpha1.GroupVersion.WithResource("topologydisruptionbudgets").GroupResource(), "",
	errors.New("a newer version of the budget was written meanwhile"))

// lockedWriteTimeout bounds a write made under the budget's lock, so that
// a write the API server never answers does not hold the other writers: the
// webhook decides within 7 s (evictionwebhook's default deadline).
const lockedWriteTimeout = 5 * time.Second

// Update is the compare-and-swap of a budget's status: under the budget's
// write lock, it applies on the newest version known, writes conditional on
// its resourceVersion and, on a conflict, reads the budget live and applies
// again, as retry.RetryOnConflict paces it. It returns the written version
// (nil when Apply had nothing to write) and the last error, a conflict when
// every attempt lost. A re-read budget with another UID ends it with
// ErrGone.
//
// With OnlyFromStart, Apply's fields were derived from start, not from the
// version given (the status controller's numbers come from start's
// records): when a newer version is known, nothing is written and a
// conflict is returned without asking the API server.
func (w *Writer) Update(ctx context.Context, start *policyv1alpha1.TopologyDisruptionBudget, apply Apply) (*policyv1alpha1.TopologyDisruptionBudget, error) {
	backoff := w.Backoff
	if backoff.Steps == 0 {
		backoff = retry.DefaultRetry
	}
	key := client.ObjectKeyFromObject(start)
	base := start
	var written *policyv1alpha1.TopologyDisruptionBudget
	err := retry.RetryOnConflict(backoff, func() error {
		written = nil
		unlock, err := w.Versions.Lock(ctx, key)
		if err != nil {
			return err
		}
		defer unlock()
		if newest := w.Versions.Newest(base); newest != base {
			if w.OnlyFromStart {
				operatormetrics.StatusWrites.WithLabelValues(w.Name, resultStale).Inc()
				return errNewerVersion
			}
			base = newest
		}
		next, err := apply(base.DeepCopy())
		if err != nil || next == nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, lockedWriteTimeout)
		defer cancel()
		if err := w.Put(wctx, next); err != nil {
			if !apierrors.IsConflict(err) {
				return err
			}
			fresh, rerr := w.Reread(wctx, key, base.ResourceVersion)
			switch {
			case rerr != nil:
				return rerr
			case fresh.UID != start.UID:
				return ErrGone
			}
			base = fresh
			return err
		}
		written = next
		return nil
	})
	if err != nil {
		return nil, err
	}
	return written, nil
}

// Locked runs fn holding the budget's write lock (see Versions.Lock), for a
// writer with its own retry loop: fn chooses its base with Newest and
// writes with Put.
func (w *Writer) Locked(ctx context.Context, key client.ObjectKey, fn func() error) error {
	unlock, err := w.Versions.Lock(ctx, key)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}
