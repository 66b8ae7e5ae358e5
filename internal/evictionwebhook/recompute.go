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
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
)

// A budget's status is the status controller's computation at its last
// pass. Between a pod event and that pass's write, the status is behind the
// pods: it still refuses what they would allow (a replacement turned Ready:
// a client that retries at once meets a refusal core's PodDisruptionBudgets
// would not give it, "reopen"), or still allows what they no longer do (a
// pod of a domain turned not Ready, a replacement landed there: granted,
// the budget would be exceeded). Where this process runs the status
// controller, and while that controller holds an event of the budget no
// finished pass has read (budgetstatus.Pending), a decision the status's
// numbers made (a refusal for want of allowance, a charged grant, a
// not-Ready pod let go uncharged) is checked against the status
// controller's own computation on the shared cache as it is now, with the
// records of the version being decided on and the records it confirmed
// gone; an eviction it allows is granted in a write that carries the new
// numbers, as the status controller's next write would, and a grant it
// refuses is refused. It trusts the cache exactly as that pass does, and
// drops no record that pass would keep.
//
// A status that is stale, fail-closed, not enforced or blocked is never
// overridden; a refusal that cannot be recomputed stays a refusal, and a
// grant that cannot is refused, as the status controller's next write will
// refuse it.
//
// A replica that does not run the status controller (not the leader) cannot
// tell whether its cache is ahead of the status, and does not lift
// refusals: it decides each grant the numbers made again on its own cache,
// with the records of the version being decided on, and refuses it when
// that computation refuses (a pod of the domain turned not Ready or was
// deleted since the status was written). It writes nothing more than the
// grant: the stricter of the written status and its cache decides, so a
// storm of evictions spread over every replica is held as the leader holds
// it.

// recomputable says whether d is a refusal a fresh computation may lift.
func recomputable(d budget.Decision) bool {
	return !d.Allowed && (d.Reason == budget.DecisionInsufficientPods || d.Reason == budget.DecisionMaxDisruptedDomains)
}

// counted says whether d is a grant the numbers decided: one charged, or a
// not-Ready pod let go uncharged because its domain is not disrupted. A
// fresh computation may refuse it: a pod of its domain turned not Ready, or
// a replacement landed there, since the status was written.
func counted(d budget.Decision) bool {
	return d.Allowed && (d.Reason == budget.DecisionCharged || d.Reason == budget.DecisionUnhealthyPod)
}

// checkable says whether refresh may change d.
func checkable(d budget.Decision) bool { return recomputable(d) || counted(d) }

// behind says whether tdb's status may be behind this process's cache: the
// status controller runs here and has an event of the budget it has not
// finished a pass on (budgetstatus.Pending). Otherwise a computation would
// find what the status says, and costs a pass for nothing.
func (h *EvictionHandler) behind(tdb *policyv1alpha1.TopologyDisruptionBudget) bool {
	return h.Computes != nil && h.Computes() && h.Pending != nil && h.Pending.Behind(client.ObjectKeyFromObject(tdb))
}

// refresh decides again on tdb's status recomputed from the cache, when d
// depends on the numbers (checkable) and the status is behind the cache.
// On a grant, tdb's status is replaced by the recomputed one (the
// decision's Status is built on it) and fresh is true. A grant of d that
// the recomputed status refuses is refused so; otherwise tdb is left as it
// was and d returned.
func (h *EvictionHandler) refresh(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, d budget.Decision, req budget.EvictionRequest) (_ budget.Decision, fresh bool) {
	if !checkable(d) || !overridable(tdb) {
		return d, false
	}
	if h.follows() {
		if counted(d) {
			return h.checkOnFollower(ctx, tdb, d, req), false
		}
		return d, false
	}
	if !h.behind(tdb) {
		return d, false
	}
	key := client.ObjectKeyFromObject(tdb)
	for attempt := 0; ; attempt++ {
		res, custom, err := h.recompute(ctx, tdb, req.Now)
		if err != nil {
			log.FromContext(ctx).V(1).Info("recomputing a budget behind the cache", "error", err.Error())
			if d.Allowed {
				// The status controller's next pass fails closed on it too.
				return budget.Decision{Reason: ReasonUnavailable, Message: fmt.Sprintf(
					"topology disruption budget %s/%s: its pods cannot be read now; retry", tdb.Namespace, tdb.Name)}, false
			}
			return d, false
		}
		if reason, _ := res.Blocked(); reason != "" || res.Err != nil {
			// A grant on a budget that cannot be computed now is refused,
			// as the status controller's next write will refuse it
			// (DecideEviction on that status says why), unless the block
			// is only that this handler reads no custom scale.
			if !d.Allowed || (custom && h.Computations == nil) {
				return d, false
			}
		}
		next := tdb.DeepCopy()
		// A copy: the status built aliases the computation's lists, which
		// the memo shares with other requests, and a grant changes its
		// status.
		next.Status = *budget.StatusFor(tdb, res, req.Now, "").DeepCopy()
		again := budget.DecideEviction(next, req)
		switch {
		case again.Allowed:
			tdb.Status = next.Status
			return again, true
		case !d.Allowed:
			return d, false
		case attempt == 0 && len(res.UnconfirmedGone) > 0:
			// A record whose pod the cache no longer shows is held as one
			// more expected pod while a pod of its name runs (a
			// StatefulSet replacement): stricter than the status
			// controller, which confirms such records with a live read
			// before it writes. Confirm them here, for both, and decide
			// again.
			if gone, cerr := h.confirmGone(ctx, tdb.Namespace, res.UnconfirmedGone); cerr == nil && len(gone) > 0 {
				h.Pending.ConfirmGone(key, gone)
				continue
			}
		}
		// The written status allows what the pods as the cache shows them
		// no longer do: the status controller's write of it is on its way,
		// and granting now would exceed the budget.
		operatormetrics.Recomputations.WithLabelValues("withdrawn").Inc()
		return again, false
	}
}

// overridable says whether a decision on tdb's status may be checked on the
// cache: the status is current and neither fail-closed, blocked nor not
// enforced.
func overridable(tdb *policyv1alpha1.TopologyDisruptionBudget) bool {
	c := apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed)
	return c != nil && c.Reason != policyv1alpha1.ReasonNotEnforced && c.Reason != policyv1alpha1.ReasonSyncFailed &&
		c.Reason != policyv1alpha1.ReasonDomainError && tdb.Status.ObservedGeneration == tdb.Generation
}

// follows says whether this process checks decisions on its cache without
// running the status controller: recomputation is on, and this replica is
// not the leader.
func (h *EvictionHandler) follows() bool { return h.Computes != nil && !h.Computes() }

// checkOnFollower decides the grant d again on tdb's status recomputed
// from this replica's cache, and refuses it when that refuses: the status
// may have been written before a pod of the domain turned not Ready or was
// deleted. A grant that cannot be recomputed is refused, as the leader
// refuses it. The grant, when it stands, is made on the written status.
func (h *EvictionHandler) checkOnFollower(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, d budget.Decision, req budget.EvictionRequest) budget.Decision {
	g := h.Computations
	if g == nil {
		g = h.snapshots()
	}
	var gone map[budget.RecordKey]bool
	for attempt := 0; ; attempt++ {
		// Not memoised: the events that would tell a memo stale are
		// counted by the status controller, which does not run here.
		computed, err := g.Compute(ctx, tdb, snapshot.ComputeOptions{Now: req.Now, RecordTimeout: h.RecordTimeout, GoneConfirmed: gone})
		if err != nil {
			log.FromContext(ctx).V(1).Info("recomputing a budget on a replica that is not the leader", "error", err.Error())
			return budget.Decision{Reason: ReasonUnavailable, Message: fmt.Sprintf(
				"topology disruption budget %s/%s: its pods cannot be read now; retry", tdb.Namespace, tdb.Name)}
		}
		operatormetrics.Recomputations.WithLabelValues("computed").Inc()
		res := &computed.Result
		if reason, _ := res.Blocked(); (reason != "" || res.Err != nil) && computed.Custom && h.Computations == nil {
			// Blocked only because this handler reads no custom scale.
			return d
		}
		next := tdb.DeepCopy()
		next.Status = *budget.StatusFor(tdb, res, req.Now, "").DeepCopy()
		again := budget.DecideEviction(next, req)
		if again.Allowed {
			return d
		}
		if attempt == 0 && len(res.UnconfirmedGone) > 0 {
			// A record whose pod the cache no longer shows is held as one
			// more expected pod while a pod of its name runs (a StatefulSet
			// replacement); the status controller confirms such records
			// with a live read before it writes, and so does this check.
			if confirmed, cerr := h.confirmGone(ctx, tdb.Namespace, res.UnconfirmedGone); cerr == nil && len(confirmed) > 0 {
				gone = confirmed
				continue
			}
		}
		operatormetrics.Recomputations.WithLabelValues("withdrawn").Inc()
		return again
	}
}

// recompute is the status controller's computation of tdb from the cache
// now, with the records of the version being decided on and the records it
// confirmed gone with a live read (a StatefulSet pod's predecessor would
// otherwise be held as one more expected pod of its domain, and its
// replacement's Ready never reopen it here). custom says a custom scale
// entered it. The result is shared: never to be modified.
func (h *EvictionHandler) recompute(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, now time.Time) (*budget.Result, bool, error) {
	key := client.ObjectKeyFromObject(tdb)
	in := memoKey{uid: tdb.UID, generation: tdb.Generation, events: h.Pending.Events(key),
		records: tdb.Status.DisruptedPods, gone: h.Pending.Gone(key)}
	if res, ok := h.memo.get(key, in); ok {
		return res, false, nil
	}
	g := h.Computations
	if g == nil {
		g = h.snapshots()
	}
	computed, err := g.Compute(ctx, tdb, snapshot.ComputeOptions{Now: now, RecordTimeout: h.RecordTimeout, GoneConfirmed: in.gone})
	if err != nil {
		return nil, false, err
	}
	operatormetrics.Recomputations.WithLabelValues("computed").Inc()
	if !computed.Custom && !computed.GoneNodeRead {
		h.memo.put(key, in, &computed.Result, time.Now())
	}
	return &computed.Result, computed.Custom, nil
}

// confirmGone reads live the pods of records a computation holds for want
// of a confirmation, and returns those gone: no pod of the name, or another
// pod under it (budget.RecordGone, the status controller's rule).
func (h *EvictionHandler) confirmGone(ctx context.Context, ns string, records []policyv1alpha1.DisruptedPod) (map[budget.RecordKey]bool, error) {
	gone := map[budget.RecordKey]bool{}
	for _, rec := range records {
		pod := &corev1.Pod{}
		err := h.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: rec.Name}, pod)
		switch {
		case apierrors.IsNotFound(err):
			pod = nil
		case err != nil:
			return nil, fmt.Errorf("reading pod %s/%s: %w", ns, rec.Name, err)
		}
		if budget.RecordGone(rec, pod) {
			gone[budget.KeyOf(rec)] = true
		}
	}
	return gone, nil
}

// Under a refusal storm (every drainer of a saturated cluster retrying a
// budget that allows nothing) each refusal would recompute the budget from
// the cache: most of the operator's CPU at 3,000 nodes. A computation is a
// function of the cache, the budget's spec, the records of the version
// being decided on and the records confirmed gone; the cache it reads is
// the status controller's, whose every event of the budget is counted
// (budgetstatus.Pending.Events) after the cache holds it. So a computation
// made after reading the count holds, for the same budget version of the
// spec, the same records and the same confirmations, until the count moves:
// it is reused until then, as the status the status controller would write
// from it would stand until its next event. Time does not enter it here
// (records past their time are held, not dropped, without the status
// controller's clock). A computation that read a custom scale through its
// subresource (not watched, so no event says it changed), or asked a
// deleted node's last labels (tombstone.Nodes: they expire, and are noted
// by a handler of their own, maybe after the node's event), is never
// reused.

// memoKey is what a recomputation of a budget was made from.
type memoKey struct {
	uid        types.UID
	generation int64
	events     uint64
	records    []policyv1alpha1.DisruptedPod
	gone       map[budget.RecordKey]bool
}

func (k memoKey) same(o memoKey) bool {
	return k.uid == o.uid && k.generation == o.generation && k.events == o.events &&
		apiequality.Semantic.DeepEqual(k.records, o.records) && equalKeys(k.gone, o.gone)
}

func equalKeys(a, b map[budget.RecordKey]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// memoTTL bounds how long an entry of a budget no longer refused (or
// deleted) is kept; it is no part of an entry's validity.
const memoTTL = 5 * time.Minute

// recomputeMemo holds the last recomputation of each budget.
type recomputeMemo struct {
	mu      sync.Mutex
	entries map[types.NamespacedName]memoEntry
	swept   time.Time
}

type memoEntry struct {
	key    memoKey
	result *budget.Result
	at     time.Time
}

// get returns the computation made from in, if one is kept: never to be
// modified.
func (m *recomputeMemo) get(name types.NamespacedName, in memoKey) (*budget.Result, bool) {
	m.mu.Lock()
	e, ok := m.entries[name]
	m.mu.Unlock()
	// Compared outside the lock: an entry is never modified, only replaced.
	if !ok || !e.key.same(in) {
		return nil, false
	}
	operatormetrics.Recomputations.WithLabelValues("reused").Inc()
	return e.result, true
}

func (m *recomputeMemo) put(name types.NamespacedName, in memoKey, res *budget.Result, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries == nil {
		m.entries = map[types.NamespacedName]memoEntry{}
	}
	// The records are the request's own copy of the version's; kept as
	// they were read.
	in.records = append([]policyv1alpha1.DisruptedPod(nil), in.records...)
	if e, ok := m.entries[name]; ok && e.key.events > in.events && e.key.uid == in.uid {
		return // a computation from a later event is kept already
	}
	m.entries[name] = memoEntry{key: in, result: res, at: now}
	if now.Sub(m.swept) > time.Minute {
		m.swept = now
		for k, e := range m.entries {
			if now.Sub(e.at) > memoTTL {
				delete(m.entries, k)
			}
		}
	}
}

// forget drops a deleted budget's computation.
func (m *recomputeMemo) forget(name types.NamespacedName) {
	m.mu.Lock()
	delete(m.entries, name)
	m.mu.Unlock()
}

// countRecomputed counts the grants written on a recomputed status.
func countRecomputed(n int) {
	if n > 0 {
		operatormetrics.RecomputedGrants.Add(float64(n))
	}
}
