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
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// ledger serialises, within one process, the decisions that may write a
// budget's status; the newest version of each budget this process has
// written or read is in the handler's budgetstatus.Versions, shared with the
// controllers. Without them, concurrent evictions of one budget
// all decide from the same cached version, one wins the write and every
// other one conflicts, re-reads and retries: a drain of 64 pods cost dozens
// of writes and reads per granted eviction. With it, the next request decides
// from the version the last write returned and writes once. Across replicas,
// the status write's resourceVersion precondition still serialises
// everything: the ledger only saves work, safety never depends on it.
//
// Grants on one budget are also written together (group commit): a request
// covered by one budget queues its grant and waits for the entry's lock, or
// for its grant to be done by the holder; the holder decides every queued
// grant in turn, each against the status the previous ones produced, exactly
// as one after the other, and writes them in one status write. A drain storm
// of 64 evictions thus costs a few writes, not one per grant waited out in a
// line.
//
// Every wait is bounded by the request's own deadline: the lock is taken
// with the request's context, a queued grant whose request gives up is
// withdrawn and never written, and a group is written by the earliest
// deadline among its grants, so that no answer (and no write) comes after
// the API server stopped waiting for it.
//
// Entries unused for idleEntry are dropped (budgets deleted, or idle), so the
// ledger does not grow with every budget ever seen.
type ledger struct {
	mu        sync.Mutex
	budgets   map[types.NamespacedName]*budgetEntry
	lastSweep time.Time
}

// idleEntry is how long a budget's entry stays without use.
const idleEntry = 10 * time.Minute

type budgetEntry struct {
	// lock is held by the request deciding and writing for the budget; a
	// channel so that waiting for it respects a context.
	lock chan struct{}
	// lastUsed is the wall time of the last use, in Unix nanoseconds.
	lastUsed atomic.Int64

	queueMu sync.Mutex
	queue   []*grant
}

// grant is one eviction waiting to be decided and recorded in a budget's
// status. Its outcome is written by the request that holds the entry's lock
// and read by its own request once finished is closed.
type grant struct {
	// ctx is the request's context (nil: no deadline); a grant whose
	// request is done is withdrawn.
	ctx    context.Context
	pod    *corev1.Pod
	domain string
	// nodeGone says the pod's node was gone when the domain was found.
	nodeGone bool
	now      time.Time
	// seen is the budget as the request found it: the domain is the pod's
	// under this version's spec.
	seen *policyv1alpha1.TopologyDisruptionBudget

	mu       sync.Mutex
	state    grantState
	finished chan struct{}
	// done, decision and err are the outcome, set before finished closes.
	done     bool
	decision budget.Decision
	err      error
}

type grantState int

const (
	grantQueued grantState = iota
	grantTaken
	grantWithdrawn
	grantFinished
)

// context returns the grant's request context.
func (g *grant) context() context.Context {
	if g.ctx == nil {
		return context.Background()
	}
	return g.ctx
}

// take claims a queued grant for a group; false when it was withdrawn or
// finished.
func (g *grant) take() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != grantQueued {
		return false
	}
	g.state = grantTaken
	return true
}

// withdraw removes a grant nobody has taken yet; false when a holder has it
// (its outcome then comes by the group's deadline, which is no later than
// the grant's own).
func (g *grant) withdraw() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state != grantQueued {
		return false
	}
	g.state = grantWithdrawn
	return true
}

// finish sets the outcome once.
func (g *grant) finish(d budget.Decision, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.state == grantFinished || g.state == grantWithdrawn {
		return
	}
	g.state = grantFinished
	g.done, g.decision, g.err = true, d, err
	if g.finished != nil {
		close(g.finished)
	}
}

func (g *grant) isFinished() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.state == grantFinished
}

// enqueue adds a grant to the budget's queue.
func (e *budgetEntry) enqueue(g *grant) {
	g.mu.Lock()
	if g.finished == nil {
		g.finished = make(chan struct{})
	}
	g.mu.Unlock()
	e.queueMu.Lock()
	e.queue = append(e.queue, g)
	e.queueMu.Unlock()
}

// take empties the queue and returns the grants it could claim.
func (e *budgetEntry) take() []*grant {
	e.queueMu.Lock()
	q := e.queue
	e.queue = nil
	e.queueMu.Unlock()
	out := q[:0]
	for _, g := range q {
		if g.take() {
			out = append(out, g)
		}
	}
	return out
}

// acquire takes the entry's lock, or gives up when ctx is done.
func (e *budgetEntry) acquire(ctx context.Context) error {
	select {
	case e.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *budgetEntry) release() { <-e.lock }

// entry returns the budget's entry, unlocked.
func (l *ledger) entry(key types.NamespacedName) *budgetEntry {
	return l.entryAt(key, time.Now())
}

func (l *ledger) entryAt(key types.NamespacedName, now time.Time) *budgetEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.budgets == nil {
		l.budgets = map[types.NamespacedName]*budgetEntry{}
	}
	if now.Sub(l.lastSweep) > idleEntry {
		l.sweep(now)
	}
	e := l.budgets[key]
	if e == nil {
		e = &budgetEntry{lock: make(chan struct{}, 1)}
		l.budgets[key] = e
	}
	e.lastUsed.Store(now.UnixNano())
	return e
}

// sweep drops the entries idle for idleEntry that nobody holds or waits on.
// A request still holding a pointer to a dropped entry only loses the
// ledger's savings: its writes stay conditional on the resourceVersion.
func (l *ledger) sweep(now time.Time) {
	l.lastSweep = now
	for k, e := range l.budgets {
		if now.Sub(time.Unix(0, e.lastUsed.Load())) < idleEntry || len(e.lock) > 0 {
			continue
		}
		// Withdrawn grants stay queued until the next holder; they do
		// not keep an entry alive.
		e.queueMu.Lock()
		busy := false
		for _, g := range e.queue {
			g.mu.Lock()
			busy = busy || g.state == grantQueued
			g.mu.Unlock()
		}
		e.queueMu.Unlock()
		if !busy {
			delete(l.budgets, k)
		}
	}
}

// size is the number of budgets the ledger holds.
func (l *ledger) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.budgets)
}

// forget drops a deleted budget's entry; a request holding it keeps its
// copy until it is done.
func (l *ledger) forget(key types.NamespacedName) {
	l.mu.Lock()
	delete(l.budgets, key)
	l.mu.Unlock()
}
