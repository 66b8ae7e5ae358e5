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

// Package budgetstatus is the one write protocol of a budget's status: every
// writer (the status controller, the rollout controller, the eviction
// webhook) starts from the newest version of the budget this process knows,
// applies its own fields, and writes with the version's resourceVersion as a
// precondition; on a conflict it reads the budget live and applies again.
//
// resourceVersions are opaque: this package compares them for equality only.
// It learns that one version is older than another from the order of events
// it saw itself: a write's result is newer than the version it was based on,
// and a live read after a conflict is newer than the version that
// conflicted.
package budgetstatus

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// maxOlder bounds the resourceVersions remembered as older than a budget's
// newest version. A cache lags by a few versions at most; one further behind
// is not recognised as stale, and a write from it costs a conflict and a
// live read, as without this record.
const maxOlder = 32

// idle is how long a budget's record is kept without use.
const idle = 10 * time.Minute

// Versions remembers, per budget, the newest version this process has read
// live or written, and the resourceVersions it knows to be older. The
// informer cache lags behind the process's own writes; writers that start
// from Newest instead of the cached copy do not conflict with each other
// within one process. It only saves work: every write stays conditional on
// the resourceVersion, so a wrong guess costs a conflict, never a lost
// update. Safe for concurrent use; the zero value is ready.
type Versions struct {
	mu        sync.Mutex
	budgets   map[types.NamespacedName]*known
	lastSweep time.Time
	// now is the clock of the idle sweep (time.Now when nil).
	now func() time.Time
}

type known struct {
	// lock is held by the writer writing the budget (see Lock).
	lock chan struct{}
	// latest is never modified once stored; nil until a version is seen.
	latest *policyv1alpha1.TopologyDisruptionBudget
	// older are resourceVersions of latest's budget older than latest,
	// the most recent last.
	older []string
	used  time.Time
}

func (v *Versions) clock() time.Time {
	if v.now != nil {
		return v.now()
	}
	return time.Now()
}

// Wrote records obj, the answer to a write this process made on the
// version base: the newest version, as far as this process knows (the API
// server applied the write on base; every version this process saw before
// is older, or the next conflict says otherwise), as are the versions
// named in older (a version the same write went through). obj must not be
// modified afterwards.
func (v *Versions) Wrote(obj *policyv1alpha1.TopologyDisruptionBudget, base string, older ...string) {
	v.record(obj, true, append([]string{base}, older...)...)
}

// Saw records obj, a version a live read returned, and the resourceVersions
// known to be older than it (the version whose write conflicted before the
// read). obj becomes the newest only when that is certain: nothing is known
// of the budget, or olderThanObj names the newest known. A read answered
// before a write of this process, whose answer is recorded after it, would
// otherwise replace a newer version with an older one; with the evidence
// rule, the worst a stale newest costs is one conflict, whose re-read names
// it. A live read holds the status as stored: Saw expands it in place
// (budget.ExpandStatus), as every version known has every row, and records
// nothing of a status it cannot expand. obj must not be modified
// afterwards.
// It expands obj even when v is nil (no sharing), so that its caller works
// on every row.
func (v *Versions) Saw(obj *policyv1alpha1.TopologyDisruptionBudget, olderThanObj ...string) {
	if obj == nil || budget.ExpandStatus(&obj.Status) != nil {
		return
	}
	v.record(obj, false, olderThanObj...)
}

func (v *Versions) record(obj *policyv1alpha1.TopologyDisruptionBudget, wrote bool, olderThanObj ...string) {
	if v == nil || obj == nil || obj.ResourceVersion == "" {
		return
	}
	key := types.NamespacedName{Namespace: obj.Namespace, Name: obj.Name}
	now := v.clock()
	v.mu.Lock()
	defer v.mu.Unlock()
	k := v.entry(key, now)
	if k.latest != nil && k.latest.UID != obj.UID {
		k.latest, k.older = nil, nil
	}
	if k.latest != nil && k.latest.ResourceVersion == obj.ResourceVersion {
		k.addOlder(olderThanObj...)
		return
	}
	newer := wrote || k.latest == nil || slices.Contains(olderThanObj, k.latest.ResourceVersion)
	if !newer {
		return
	}
	previous := k.latest
	k.latest = obj
	k.older = slices.DeleteFunc(k.older, func(rv string) bool { return rv == obj.ResourceVersion })
	if previous != nil {
		k.addOlder(previous.ResourceVersion)
	}
	k.addOlder(olderThanObj...)
}

func (k *known) addOlder(rvs ...string) {
	for _, rv := range rvs {
		if rv == "" || slices.Contains(k.older, rv) || (k.latest != nil && rv == k.latest.ResourceVersion) {
			continue
		}
		k.older = append(k.older, rv)
		if len(k.older) > maxOlder {
			k.older = k.older[len(k.older)-maxOlder:]
		}
	}
}

// Newest returns the newest known version of cached's budget: a copy of the
// version this process saw last when cached is known to be older than it,
// cached itself otherwise.
func (v *Versions) Newest(cached *policyv1alpha1.TopologyDisruptionBudget) *policyv1alpha1.TopologyDisruptionBudget {
	if v == nil || cached == nil {
		return cached
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	k := v.budgets[types.NamespacedName{Namespace: cached.Namespace, Name: cached.Name}]
	if k == nil || k.latest == nil || k.latest.UID != cached.UID || !slices.Contains(k.older, cached.ResourceVersion) {
		return cached
	}
	k.used = v.clock()
	return k.latest.DeepCopy()
}

// entry returns the budget's record, created if needed; v.mu is held.
func (v *Versions) entry(key types.NamespacedName, now time.Time) *known {
	v.sweep(now)
	if v.budgets == nil {
		v.budgets = map[types.NamespacedName]*known{}
	}
	k := v.budgets[key]
	if k == nil {
		k = &known{lock: make(chan struct{}, 1)}
		v.budgets[key] = k
	}
	k.used = now
	return k
}

// Lock takes the budget's write lock, held by one writer of the process at
// a time from choosing the version it writes on to the write's answer, so
// that the writers of one process do not conflict with each other. It waits
// no longer than ctx. With a nil Versions it does nothing.
func (v *Versions) Lock(ctx context.Context, key types.NamespacedName) (unlock func(), err error) {
	if v == nil {
		return func() {}, nil
	}
	v.mu.Lock()
	k := v.entry(key, v.clock())
	v.mu.Unlock()
	select {
	case k.lock <- struct{}{}:
		return func() { <-k.lock }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting to write the status of %s: %w", key, ctx.Err())
	}
}

// Forget drops what is known of a budget (deleted).
func (v *Versions) Forget(key types.NamespacedName) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.budgets, key)
}

// sweep drops the records idle for longer than idle, at most once per idle.
func (v *Versions) sweep(now time.Time) {
	if now.Sub(v.lastSweep) < idle {
		return
	}
	v.lastSweep = now
	for key, k := range v.budgets {
		if now.Sub(k.used) >= idle && len(k.lock) == 0 {
			delete(v.budgets, key)
		}
	}
}

// size is the number of budgets recorded.
func (v *Versions) size() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.budgets)
}
