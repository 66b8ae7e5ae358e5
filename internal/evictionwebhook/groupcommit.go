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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
)

// grant decides the eviction of pod against the one budget covering it and,
// when allowed, records it, together with the other grants queued for the
// budget meanwhile (see ledger). It waits no longer than ctx: a grant that
// no holder has taken by then is withdrawn, never to be written.
func (h *EvictionHandler) grant(ctx context.Context, c *coveringBudget, pod *corev1.Pod, now time.Time) (budget.Decision, error) {
	g := &grant{ctx: ctx, pod: pod, domain: c.domain, nodeGone: c.nodeGone, now: now, seen: c.tdb}
	c.entry.enqueue(g)
	for {
		if ctx.Err() != nil {
			if g.withdraw() {
				return budget.Decision{}, fmt.Errorf("waiting for budget %s/%s: %w", c.tdb.Namespace, c.tdb.Name, ctx.Err())
			}
			<-g.finished // a holder has it, and finishes by its deadline
			return g.decision, g.err
		}
		select {
		case <-g.finished:
			return g.decision, g.err
		case c.entry.lock <- struct{}{}:
			func() {
				// Released even if deciding panics: a lock held forever
				// would refuse every later eviction of the budget.
				defer c.entry.release()
				// A request already answered, or out of time, leads no
				// group: it would answer after its own deadline.
				if g.isFinished() || ctx.Err() != nil {
					return
				}
				if batch := c.entry.take(); len(batch) > 0 {
					h.commit(ctx, c, batch)
				}
			}()
			if g.isFinished() {
				return g.decision, g.err
			}
		case <-ctx.Done():
		}
	}
}

// groupContext bounds a group's work by the earliest deadline among the
// grants still waiting, so that no write lands after a request it answers
// has given up; it does not end when the holder's own client goes away,
// since the others' answers depend on it.
//
// The holder's own deadline bounds it too: the holder answers its own
// request when the group is done.
func groupContext(holder context.Context, batch []*grant) (context.Context, context.CancelFunc) {
	earliest, _ := holder.Deadline()
	for _, g := range batch {
		if d, ok := g.context().Deadline(); ok && (earliest.IsZero() || d.Before(earliest)) {
			earliest = d
		}
	}
	base := context.WithoutCancel(holder)
	if earliest.IsZero() {
		return context.WithCancel(base)
	}
	return context.WithDeadline(base, earliest)
}

// commit decides the grants in turn against the newest version of the
// budget, each seeing the records and allowances of those before it, and
// writes the result in one status write with the budget's resourceVersion.
// On a conflict it re-reads the budget and decides them all again. Every
// grant is finished when it returns; none is allowed unless the write that
// records it succeeded. Before each try, grants whose request has gone away
// are refused and left out: nothing is written for an answer nobody reads.
func (h *EvictionHandler) commit(holder context.Context, c *coveringBudget, batch []*grant) {
	defer func() {
		// Should deciding panic, no grant is left without an answer.
		for _, g := range batch {
			g.finish(budget.Decision{}, errors.New("internal error deciding the eviction"))
		}
	}()
	w := h.status()
	base := w.Newest(c.tdb)
	for _, g := range batch {
		if base != c.tdb {
			break
		}
		// A grant may have found an older cached copy, known older than
		// the newest version seen here.
		if cand := w.Newest(g.seen); cand != g.seen && cand.UID == c.tdb.UID {
			base = cand
		}
	}
	// Every attempt but the last that lost to a concurrent write is retried
	// at once (retry.OnError with errRetry): the entry's lock is held, and
	// the holder's deadline bounds the loop.
	try := 0
	_ = retry.OnError(wait.Backoff{Steps: h.maxTries()}, func(err error) bool { return errors.Is(err, errRetry) }, func() error {
		try++
		if try > 1 {
			if err := holder.Err(); err != nil {
				// The holder is out of time: it must answer now, and the
				// group would not be written in time anyway. The others
				// retry.
				for _, g := range batch {
					g.finish(budget.Decision{}, fmt.Errorf("the budget was contended until the deadline: %w", err))
				}
				return nil
			}
			rctx, rcancel := groupContext(holder, batch)
			fresh, err := w.Reread(rctx, client.ObjectKeyFromObject(base), base.ResourceVersion)
			rcancel()
			if err != nil {
				for _, g := range batch {
					g.finish(budget.Decision{}, err)
				}
				return nil
			}
			base = fresh
		}
		live := batch[:0:0]
		for _, g := range batch {
			if err := g.context().Err(); err != nil {
				g.finish(budget.Decision{}, fmt.Errorf("the eviction request went away: %w", err))
				continue
			}
			live = append(live, g)
		}
		if len(live) == 0 {
			return nil
		}
		batch = live
		ctx, cancel := groupContext(holder, batch)
		defer cancel()
		// The status controller and the rollout controller write the same
		// status: under the budget's write lock, decide on the newest
		// version any of them wrote, so that the write does not conflict.
		err := w.Locked(ctx, client.ObjectKeyFromObject(base), func() error {
			base = w.Newest(base)
			return h.tryCommit(ctx, batch, base, try)
		})
		if err != nil && !errors.Is(err, errRetry) {
			for _, g := range batch {
				g.finish(budget.Decision{}, err)
			}
		}
		return err
	})
}

// errRetry says a group's write conflicted and is to be decided again.
var errRetry = errors.New("conflict")

// tryCommit decides and writes the group once on base. It finishes every
// grant, or none and returns errRetry after a conflict.
func (h *EvictionHandler) tryCommit(ctx context.Context, batch []*grant, base *policyv1alpha1.TopologyDisruptionBudget, try int) error {
	work := base.DeepCopy()
	// A status behind the cache is recomputed until a decision is made on
	// the recomputed status: the rest of the batch is decided on it, with
	// its grants (a computation is shared until the next event, see
	// recomputeMemo).
	refreshed := false
	recomputed := 0
	decisions := make([]budget.Decision, len(batch))
	errs := make([]error, len(batch))
	writes := 0
	for i, g := range batch {
		d, fresh, err := h.decideGrant(ctx, g, work, !refreshed)
		decisions[i], errs[i] = d, err
		if fresh {
			// The rest of the batch is decided on the recomputed status,
			// and its grants.
			refreshed = true
			recomputed++
		}
		if err == nil && d.Allowed && d.Status != nil {
			work.Status = *d.Status
			writes++
		}
	}
	finish := func(writeErr error) {
		for i, g := range batch {
			switch {
			case errs[i] != nil:
				g.finish(budget.Decision{}, errs[i])
			case writeErr != nil && decisions[i].Allowed && decisions[i].Status != nil:
				g.finish(budget.Decision{}, writeErr)
			default:
				g.finish(decisions[i], nil)
			}
		}
	}
	if writes == 0 {
		finish(nil)
		return nil
	}
	err := h.status().Put(ctx, work)
	switch {
	case err == nil:
		operatormetrics.ChargesPerWrite.Observe(float64(writes))
		countRecomputed(recomputed)
		finish(nil)
		return nil
	case !apierrors.IsConflict(err):
		finish(fmt.Errorf("recording the eviction in %s/%s: %w", base.Namespace, base.Name, err))
		return nil
	case try >= h.maxTries():
		for i := range decisions {
			if decisions[i].Allowed && decisions[i].Status != nil {
				decisions[i] = budget.Decision{Reason: budget.DecisionContended, Message: fmt.Sprintf(
					"topology disruption budget %s/%s: too many concurrent evictions; retry", base.Namespace, base.Name)}
			}
		}
		finish(nil)
		return nil
	}
	return errRetry
}

// decideGrant decides one queued grant on work, the version the group is
// written on, as if alone after the grants before it. mayRefresh lets a
// decision the status's numbers made be checked on the cache (refresh);
// fresh says work's status was replaced by the recomputed one.
func (h *EvictionHandler) decideGrant(ctx context.Context, g *grant, work *policyv1alpha1.TopologyDisruptionBudget, mayRefresh bool) (d budget.Decision, fresh bool, err error) {
	if g.seen.UID != work.UID || g.seen.Generation != work.Generation || !h.sameDomain(ctx, work, g.pod, g.domain, g.nodeGone) {
		// The pod's domain was found under another spec (or another budget
		// of the same name), or its node was relabelled since.
		return staleDecision(work), false, nil
	}
	pod := g.pod
	var end *budget.Decision
	if !budget.IsHealthy(pod) {
		// It would pass uncharged: decide on the pod as it is now, with the
		// version to write fixed. A pod that turned Ready since it was read
		// is charged like any; the record of an uncharged eviction keeps it
		// from counting should it turn Ready later.
		pod, end, err = h.reread(ctx, pod, work)
	} else {
		pod, end, err = h.recheckRecorded(ctx, work, pod)
	}
	switch {
	case err != nil:
		return budget.Decision{}, false, err
	case end != nil:
		return *end, false, nil
	}
	req := budget.EvictionRequest{Pod: pod, Domain: g.domain, Now: g.now, NodeGone: g.nodeGone}
	d = budget.DecideEviction(work, req)
	if checkable(d) && mayRefresh {
		d, fresh = h.refresh(ctx, work, d, req)
	}
	return d, fresh, nil
}
