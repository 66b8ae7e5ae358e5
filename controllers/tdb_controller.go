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

// Package controllers holds the reconcilers of tdb-operator. They are thin
// I/O around internal/budget: read the caches, compute, write once.
package controllers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
	"github.com/tdb-operator/tdb-operator/internal/replica"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
	"github.com/tdb-operator/tdb-operator/internal/tombstone"
)

// customScaleResync is how often a budget whose pods belong to a custom
// controller (read through its scale subresource, not watched) is recomputed.
const customScaleResync = 30 * time.Second

// conflictRetry is how soon a status write that lost to a concurrent writer
// (usually the eviction webhook) is retried, if no watch event comes first.
const conflictRetry = 250 * time.Millisecond

// DefaultStatusWorkers is how many budgets the status controller passes at
// once. A pass takes about a millisecond of CPU; the rest is waiting on the
// API server (the status write, live reads of held records), which answers
// in hundreds of milliseconds under a large drain. At 4, a 100-node drain of
// 1,000 nodes kept a third of the passes queued for over a second, and the
// status lag p99 at 4.5-8 s (docs/scale.md).
const DefaultStatusWorkers = 16

// liveReadsPerPass bounds the live reads of one pass in flight at once;
// liveReads those of all passes together, so that a large
// --status-workers cannot flood the API server the webhook waits on. At
// the default workers only the first binds: a bound of 16 for all passes
// held records unconfirmed longer at a 1,000-node drain's peak (their
// allowance with them: drain 133 s, against 73 and 78 s with 8 per pass;
// docs/scale.md).
const (
	liveReadsPerPass = 8
	liveReads        = DefaultStatusWorkers * liveReadsPerPass
)

// liveReadRetry is how soon a pass whose live read of a held eviction record
// failed is run again: the record holds its domain's allowance until a read
// confirms it.
const liveReadRetry = 2 * time.Second

// BudgetReconciler computes each TopologyDisruptionBudget's status from the
// cached pods, nodes and owner scales, and writes it once per change.
type BudgetReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads scale subresources of custom controllers.
	APIReader client.Client
	// Recorder emits events on budgets.
	Recorder events.EventRecorder
	// Clock is injected so tests control record expiry.
	Clock clock.PassiveClock
	// LiveReader reads a pod from the API server before its record is
	// dropped: the cache alone may lag behind its deletion.
	LiveReader client.Reader
	// RecordTimeout bounds a record whose pod keeps running (default
	// budget.DefaultRecordTimeout), measured from when this process first
	// saw the record.
	RecordTimeout time.Duration
	// OperatorNamespace is the operator's own namespace: its budgets are
	// reported NotEnforced.
	OperatorNamespace string
	// Scope, if not nil, tells the namespaces the registered webhook does
	// not reach: their budgets are reported NotEnforced.
	Scope *WebhookScope
	// GoneNodes remembers the last labels of deleted nodes.
	GoneNodes *tombstone.Nodes
	// Versions is the record of budget versions shared by every status
	// writer of the process (nil: none shared).
	Versions *budgetstatus.Versions
	// Snapshots gathers a budget's pods and nodes from the cache (nil: one
	// over Client, made by SetupWithManager).
	Snapshots *snapshot.Gatherer
	// Passes, if not nil, hands the budget to the deletion-cost controller
	// at the end of each pass that leaves its status current (written, or
	// found so).
	Passes *StatusPasses
	// Pending tells the process's eviction webhook which statuses are
	// behind the cache, and which records live reads confirmed gone (nil:
	// the controller keeps its own).
	Pending *budgetstatus.Pending
	// Workers is how many budgets are passed at once (0:
	// DefaultStatusWorkers).
	Workers int
	// Memory is the process's memory, which forgets a deleted budget in
	// every part at once; the controller keeps its record sightings,
	// allowance series and status passes there (nil: a memory of its own,
	// holding those and Versions and Pending).
	Memory *replica.Memory

	sightings recordSightings
	// liveSlots bound the live reads in flight (liveReads, or
	// liveReadsLimit if positive: tests).
	liveSlots      chan struct{}
	liveSlotsOnce  sync.Once
	liveReadsLimit int
	ownPending     budgetstatus.Pending
	memoryOnce     sync.Once
}

// workers is Workers, or DefaultStatusWorkers if not positive.
func (r *BudgetReconciler) workers() int {
	if r.Workers > 0 {
		return r.Workers
	}
	return DefaultStatusWorkers
}

// memory is Memory, with the controller's own parts kept in it.
func (r *BudgetReconciler) memory() *replica.Memory {
	r.memoryOnce.Do(func() {
		if r.Memory == nil {
			r.Memory = &replica.Memory{}
			r.Memory.Keep("versions (the controller's)", r.Versions.Forget)
			r.Memory.Keep("pending (the controller's)", r.pending().Forget)
		}
		r.Memory.Keep("record sightings", r.sightings.forget)
		r.Memory.Keep("allowance series", func(k types.NamespacedName) { forgetAllowances(k.Namespace, k.Name) })
		r.Memory.Keep("status passes", r.Passes.forget)
	})
	return r.Memory
}

func (r *BudgetReconciler) pending() *budgetstatus.Pending {
	if r.Pending != nil {
		return r.Pending
	}
	return &r.ownPending
}

// status is the controller's writer: one attempt per reconcile, and only on
// the version the status was computed from (its records are in it); a
// conflict means a newer version, whose watch event brings the controller
// back.
func (r *BudgetReconciler) status() *budgetstatus.Writer {
	return &budgetstatus.Writer{Name: budgetstatus.WriterStatus, Client: r.Client, Live: r.LiveReader, Versions: r.Versions,
		Backoff: wait.Backoff{Steps: 1}, OnlyFromStart: true}
}

// recordSightings keeps, per budget, when this process first saw each
// eviction record: a record's age is measured on the clock of the process
// that expires it, never from a grant time another replica's clock wrote.
// Entries live as long as their record and their budget.
type recordSightings struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[budget.RecordKey]time.Time
}

// see returns the first-seen times of the records, adding the new ones at
// now and forgetting records that are gone.
func (s *recordSightings) see(key types.NamespacedName, records []policyv1alpha1.DisruptedPod, now time.Time) map[budget.RecordKey]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[types.NamespacedName]map[budget.RecordKey]time.Time{}
	}
	prev := s.m[key]
	next := make(map[budget.RecordKey]time.Time, len(records))
	for _, r := range records {
		k := budget.KeyOf(r)
		if t, ok := prev[k]; ok {
			next[k] = t
		} else {
			next[k] = now
		}
	}
	if len(next) == 0 {
		delete(s.m, key)
	} else {
		s.m[key] = next
	}
	out := make(map[budget.RecordKey]time.Time, len(next))
	for k, v := range next {
		out[k] = v
	}
	return out
}

func (s *recordSightings) forget(key types.NamespacedName) {
	s.mu.Lock()
	delete(s.m, key)
	s.mu.Unlock()
}

// +kubebuilder:rbac:groups=policy.tdb.dev,resources=topologydisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups=policy.tdb.dev,resources=topologydisruptionbudgets/status,verbs=get;update
// +kubebuilder:rbac:groups="",resources=pods;nodes;replicationcontrollers,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=namespaces,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps,resources=deployments;replicasets;statefulsets;daemonsets,verbs=get;list;watch
// +kubebuilder:rbac:groups=*,resources=*/scale,verbs=get
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile computes and writes one budget's status: the pass computes it
// from the cache (confirming records with live reads), then writes it
// unless the written one is current (or differs only by records due to be
// dropped later).
func (r *BudgetReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cached policyv1alpha1.TopologyDisruptionBudget
	if err := r.Client.Get(ctx, req.NamespacedName, &cached); err != nil {
		if apierrors.IsNotFound(err) {
			// Also forgotten when the cache sees the deletion (every
			// replica's memory): a pass that ran meanwhile may have
			// noted the budget again.
			r.memory().Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cached.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	// The cache may not hold this process's latest writes yet (the
	// webhook's records, the rollout status): start from the newest
	// version known, whose write then does not conflict with them.
	p := &statusPass{tdb: *r.Versions.Newest(&cached), start: time.Now(), now: r.Clock.Now(),
		// The events read by this pass: its status, once current, is not
		// behind them (budgetstatus.Pending).
		events: r.pending().Begin(req.NamespacedName)}
	if err := r.computePass(ctx, p); err != nil {
		// Fail closed: nothing may be disrupted while we cannot tell.
		log.FromContext(ctx).Error(err, "computing budget status", "tdb", klog.KObj(&p.tdb))
		werr := r.failClosed(ctx, &p.tdb, err, p.now)
		if werr != nil && !apierrors.IsConflict(werr) {
			return ctrl.Result{}, fmt.Errorf("writing fail-closed status: %w (after %w)", werr, err)
		}
		if werr == nil {
			// The costs follow the fail-closed status (every domain at
			// tier 0), as they did before the hand-over.
			r.Passes.ended(ctx, &p.tdb, p.fingerprint)
		}
		return ctrl.Result{}, err
	}
	enforcement, err := r.enforcement(ctx, &p.tdb)
	if err != nil {
		return ctrl.Result{}, err
	}
	notEnforced := ""
	if enforcement.Reason == policyv1alpha1.ReasonNotEnforced {
		notEnforced = enforcement.Message
	}
	next := budget.StatusFor(&p.tdb, &p.res, p.now, notEnforced)
	setEnforcedCondition(next, enforcement, p.tdb.Generation, p.now)
	later, dropAt := dropLater(&p.tdb.Status, next, p.seen, p.now)
	if later || equality.Semantic.DeepEqual(&p.tdb.Status, next) {
		r.passEnded(ctx, p, nil)
		out := r.requeue(p.res, p.custom, p.unread, p.now)
		if later && (out.RequeueAfter == 0 || dropAt.Sub(p.now) < out.RequeueAfter) {
			out.RequeueAfter = dropAt.Sub(p.now)
		}
		return out, nil
	}
	return r.writePass(ctx, p, next)
}

// statusPass is one pass over a budget: what it read and computed.
type statusPass struct {
	tdb        policyv1alpha1.TopologyDisruptionBudget
	start, now time.Time
	events     uint64
	// seen holds when this process first saw each record.
	seen map[budget.RecordKey]time.Time
	res  budget.Result
	// custom: a custom scale was read; unread: a live read of a held
	// record failed, and the pass comes back soon, as no pod event may
	// follow.
	custom, unread bool
	// fingerprint is of the pods the pass read (see StatusPasses).
	fingerprint uint64
}

// computePass computes the budget's status from the cache. Records are
// dropped only on a live read of their pod: past their time, still
// running, not being deleted and the same pod; or no longer needed and
// really gone, not merely unseen by the cache.
func (r *BudgetReconciler) computePass(ctx context.Context, p *statusPass) error {
	key := types.NamespacedName{Namespace: p.tdb.Namespace, Name: p.tdb.Name}
	p.seen = r.sightings.see(key, p.tdb.Status.DisruptedPods, p.now)
	current := make(map[budget.RecordKey]bool, len(p.seen))
	for k := range p.seen {
		current[k] = true
	}
	r.pending().Keep(key, current)
	known := recordChecks{gone: r.pending().Gone(key)}
	var err error
	p.res, p.custom, err = r.compute(ctx, &p.tdb, p.now, p.seen, known, &p.fingerprint)
	if err != nil || len(p.res.Unconfirmed)+len(p.res.UnconfirmedGone) == 0 {
		return err
	}
	checks, cerr := r.confirmRecords(ctx, p.tdb.Namespace, p.res.Unconfirmed, p.res.UnconfirmedGone)
	if cerr != nil {
		log.FromContext(ctx).Error(cerr, "confirming eviction records", "tdb", klog.KObj(&p.tdb))
		p.unread = true
	}
	r.pending().ConfirmGone(key, checks.gone)
	if len(checks.phantoms)+len(checks.gone) == 0 {
		return nil
	}
	for k := range known.gone {
		checks.gone[k] = true
	}
	p.res, p.custom, err = r.compute(ctx, &p.tdb, p.now, p.seen, checks, &p.fingerprint)
	return err
}

// writePass writes the pass's status on the version it was computed from.
func (r *BudgetReconciler) writePass(ctx context.Context, p *statusPass, next *policyv1alpha1.TopologyDisruptionBudgetStatus) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	writeStart := time.Now()
	written, err := r.status().Update(ctx, &p.tdb, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		base.Status = *next
		return base, nil
	})
	if err != nil {
		if apierrors.IsConflict(err) {
			// The webhook recorded an eviction, or the spec changed: the
			// watch brings us back with the new version.
			logger.V(1).Info("status conflict, requeueing", "tdb", klog.KObj(&p.tdb))
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		return ctrl.Result{}, fmt.Errorf("updating status of %s/%s: %w", p.tdb.Namespace, p.tdb.Name, err)
	}
	operatormetrics.StatusChanges.WithLabelValues(string(budget.ChangeOf(&p.tdb.Status, next))).Inc()
	p.tdb = *written
	if v := logger.V(1); v.Enabled() {
		// How long the pass computed, and its write took (a status behind
		// its pods is one or the other, or a cache behind).
		v.Info("budget status updated", "tdb", klog.KObj(&p.tdb),
			"expected", next.ExpectedPods, "healthy", next.CurrentHealthy, "allowed", next.DisruptionsAllowed,
			"domains", domainsLine(next), "records", recordsLine(next), "resourceVersion", p.tdb.ResourceVersion,
			"computeTook", writeStart.Sub(p.start).String(), "writeTook", time.Since(writeStart).String())
	}
	r.passEnded(ctx, p, &p.res)
	return r.requeue(p.res, p.custom, p.unread, p.now), nil
}

// passEnded notes a pass that left the status current (written, or found
// so): the exported allowances, the statuses no longer behind the events
// it read, the events of what it wrote (res: nil when nothing was), and
// the hand-over to the deletion-cost controller.
func (r *BudgetReconciler) passEnded(ctx context.Context, p *statusPass, res *budget.Result) {
	exportAllowances(&p.tdb)
	r.pending().Done(types.NamespacedName{Namespace: p.tdb.Namespace, Name: p.tdb.Name}, p.events)
	if res != nil {
		r.emitEvents(&p.tdb, res)
	}
	r.Passes.ended(ctx, &p.tdb, p.fingerprint)
}

// RecordDropDelay is how long a status that differs from the computed one
// only by records no longer needed (a gone pod's whose replacement is
// scheduled) may keep them, counted from when this process first saw the
// record. Such a drop changes no number, and the next write (usually the
// replacement turning Ready a moment later) carries it: one status write
// per eviction saved. A record is never kept past it for nothing.
const RecordDropDelay = 30 * time.Second

// dropLater says whether next differs from cur only by records dropped,
// each first seen less than RecordDropDelay ago, and then when the oldest of
// them is due.
func dropLater(cur, next *policyv1alpha1.TopologyDisruptionBudgetStatus, seen map[budget.RecordKey]time.Time, now time.Time) (bool, time.Time) {
	if len(next.DisruptedPods) >= len(cur.DisruptedPods) {
		return false, time.Time{}
	}
	due, ok := droppedRecordsDue(cur, next, seen)
	if !ok || !now.Before(due) {
		return false, time.Time{}
	}
	same := *next
	same.DisruptedPods = cur.DisruptedPods
	if !equality.Semantic.DeepEqual(cur, &same) {
		return false, time.Time{}
	}
	return true, due
}

// droppedRecordsDue is when the earliest record that next drops from cur is
// due to go: RecordDropDelay from when this process first saw it (zero when
// next drops none). ok is false when next holds a record cur has not, or
// drops one seen does not know.
func droppedRecordsDue(cur, next *policyv1alpha1.TopologyDisruptionBudgetStatus, seen map[budget.RecordKey]time.Time) (due time.Time, ok bool) {
	kept := make(map[budget.RecordKey]bool, len(next.DisruptedPods))
	for _, r := range next.DisruptedPods {
		kept[budget.KeyOf(r)] = true
	}
	for _, r := range cur.DisruptedPods {
		k := budget.KeyOf(r)
		if kept[k] {
			delete(kept, k)
			continue
		}
		first, known := seen[k]
		if !known {
			return time.Time{}, false
		}
		if at := first.Add(RecordDropDelay); due.IsZero() || at.Before(due) {
			due = at
		}
	}
	return due, len(kept) == 0
}

// compute gathers the inputs of one budget from the cache and computes it;
// fingerprint receives that of the pods it read.
func (r *BudgetReconciler) compute(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, now time.Time,
	seen map[budget.RecordKey]time.Time, checks recordChecks, fingerprint *uint64) (budget.Result, bool, error) {
	c, err := r.Snapshots.Compute(ctx, tdb, snapshot.ComputeOptions{
		Now: now, RecordTimeout: r.RecordTimeout, RecordSeen: seen, Phantoms: checks.phantoms, GoneConfirmed: checks.gone,
	})
	*fingerprint = c.Fingerprint
	if err != nil {
		return budget.Result{}, false, err
	}
	return c.Result, c.Custom, nil
}

// recordChecks are what live reads confirmed about records.
type recordChecks struct {
	// phantoms: past their time, the pod still runs, not deleting, same pod.
	phantoms map[budget.RecordKey]bool
	// gone: the pod is gone, or another pod holds its name.
	gone map[budget.RecordKey]bool
}

// confirmRecords reads from the API server the pods of records past their
// time (expired) and of records about to be dropped as gone (gone).
func (r *BudgetReconciler) confirmRecords(ctx context.Context, ns string, expired, gone []policyv1alpha1.DisruptedPod) (recordChecks, error) {
	out := recordChecks{phantoms: map[budget.RecordKey]bool{}, gone: map[budget.RecordKey]bool{}}
	if r.LiveReader == nil {
		return out, nil
	}
	// The reads go out together (liveReadsPerPass at once): a budget whose
	// drain left several records waits for one round trip to a busy API
	// server, not one per record. All passes share liveReads slots.
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		pass = make(chan struct{}, liveReadsPerPass)
	)
	check := func(rec policyv1alpha1.DisruptedPod, judge func(*corev1.Pod)) {
		defer wg.Done()
		pass <- struct{}{}
		defer func() { <-pass }()
		var pod corev1.Pod
		err := r.readLive(ctx, client.ObjectKey{Namespace: ns, Name: rec.Name}, &pod)
		mu.Lock()
		defer mu.Unlock()
		switch {
		case apierrors.IsNotFound(err):
			judge(nil)
		case err != nil:
			errs = append(errs, fmt.Errorf("reading pod %s/%s: %w", ns, rec.Name, err))
		default:
			judge(&pod)
		}
	}
	for _, rec := range expired {
		wg.Add(1)
		go check(rec, func(pod *corev1.Pod) {
			if pod == nil {
				return // gone: the next pass sees it so
			}
			samePod := rec.UID == "" || rec.UID == pod.UID
			running := pod.Status.Phase != corev1.PodSucceeded && pod.Status.Phase != corev1.PodFailed
			if samePod && running && pod.DeletionTimestamp == nil {
				out.phantoms[budget.KeyOf(rec)] = true
			}
		})
	}
	for _, rec := range gone {
		wg.Add(1)
		go check(rec, func(pod *corev1.Pod) {
			if budget.RecordGone(rec, pod) {
				out.gone[budget.KeyOf(rec)] = true
			}
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// readLive reads obj from the API server in one of the controller's
// liveReads slots. A panic of the read is returned as an error, as
// controller-runtime returns one of a pass.
func (r *BudgetReconciler) readLive(ctx context.Context, key client.ObjectKey, obj client.Object) (err error) {
	r.liveSlotsOnce.Do(func() { r.liveSlots = make(chan struct{}, cmp.Or(r.liveReadsLimit, liveReads)) })
	select {
	case r.liveSlots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-r.liveSlots }()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic reading %s: %v", key, p)
		}
	}()
	return r.LiveReader.Get(ctx, key, obj)
}

// enforcement says how far the eviction webhook decides the budget's
// evictions (Reason "" when the webhook's registration is not read).
func (r *BudgetReconciler) enforcement(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget) (Enforcement, error) {
	if r.OperatorNamespace != "" && tdb.Namespace == r.OperatorNamespace {
		return Enforcement{Reason: policyv1alpha1.ReasonNotEnforced, Message: fmt.Sprintf(
			"namespace %s is the operator's own: the eviction webhook lets its evictions through, so that draining the operator's node cannot deadlock; this budget is shown, not enforced. Move the workload to another namespace to protect it",
			tdb.Namespace)}, nil
	}
	return r.Scope.Enforcement(ctx, tdb.Namespace)
}

// failClosed writes 0 allowed and a SyncFailed condition, keeping the records.
func (r *BudgetReconciler) failClosed(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, cause error, now time.Time) error {
	next := budget.FailClosedStatus(tdb, cause, now)
	if equality.Semantic.DeepEqual(&tdb.Status, next) {
		return nil
	}
	_, err := r.status().Update(ctx, tdb, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		base.Status = *next
		return base, nil
	})
	return err
}

// availableSlack is how long after a pod becomes available under
// minReadySeconds its pass runs: the time is exact (the Ready condition's
// lastTransitionTime plus the delay), so only the timer's own lateness
// matters; each wait of a drain under minReadySeconds costs this much more.
const availableSlack = 50 * time.Millisecond

func (r *BudgetReconciler) requeue(res budget.Result, custom, unread bool, now time.Time) ctrl.Result {
	var after time.Duration
	if res.RecheckAt != nil {
		after = res.RecheckAt.Sub(now) + time.Second
	}
	if res.AvailableAt != nil {
		if a := max(res.AvailableAt.Sub(now)+availableSlack, availableSlack); after == 0 || a < after {
			after = a
		}
	}
	if custom && (after == 0 || after > customScaleResync) {
		after = customScaleResync
	}
	if unread && (after == 0 || after > liveReadRetry) {
		after = liveReadRetry
	}
	return ctrl.Result{RequeueAfter: after}
}

// emitEvents reports, after a successful write, what the user must fix.
func (r *BudgetReconciler) emitEvents(tdb *policyv1alpha1.TopologyDisruptionBudget, res *budget.Result) {
	if r.Recorder == nil {
		return
	}
	if len(res.DomainIssues) > 0 {
		i := res.DomainIssues[0]
		if tdb.Spec.Partition != nil {
			r.Recorder.Eventf(tdb, nil, corev1.EventTypeWarning, policyv1alpha1.EventReasonDomainError, "Sync",
				"%d covered pod(s) have no partition, e.g. %s (%s): no eviction is allowed until spec.partition or the pods are fixed",
				len(res.DomainIssues), i.Pod, i.Reason)
		} else {
			r.Recorder.Eventf(tdb, nil, corev1.EventTypeWarning, policyv1alpha1.EventReasonDomainError, "Sync",
				"%d covered pod(s) have no domain, e.g. %s on node %q (%s): no eviction is allowed until the node is labelled %s",
				len(res.DomainIssues), i.Pod, i.Node, i.Reason, tdb.Spec.TopologyKey)
		}
	}
	if len(res.NoScale) > 0 {
		r.Recorder.Eventf(tdb, nil, corev1.EventTypeWarning, policyv1alpha1.EventReasonNoScale, "Sync",
			"%d covered pod(s) have a controller without a readable scale, e.g. %s: no eviction is allowed",
			len(res.NoScale), res.NoScale[0])
	}
	if len(res.UnmanagedPods) > 0 {
		r.Recorder.Eventf(tdb, nil, corev1.EventTypeNormal, policyv1alpha1.EventReasonUnmanagedPods, "Sync",
			"%d covered pod(s) have no controller and will not be replaced if evicted, e.g. %s",
			len(res.UnmanagedPods), res.UnmanagedPods[0])
	}
	for _, e := range res.ExpiredRecords {
		r.Recorder.Eventf(tdb, nil, corev1.EventTypeWarning, policyv1alpha1.EventReasonRecordExpired, "Sync",
			"eviction of pod %s granted at %s was not followed by its deletion (another admission step or a PodDisruptionBudget refused it); the pod counts as healthy again",
			e.Pod, e.Time.UTC().Format(time.RFC3339))
	}
}

// SetupWithManager wires the reconciler: budgets, and the pods, nodes and
// workload scales that change them, each mapped to the budgets it affects.
func (r *BudgetReconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.memory()
	if r.Snapshots == nil {
		r.Snapshots = &snapshot.Gatherer{Cache: r.Client, GoneNodes: r.GoneNodes, Scales: r.APIReader}
	}
	if err := snapshot.IndexWorkloadsByUID(mgr); err != nil {
		return err
	}
	if err := snapshot.IndexPodsByNode(mgr); err != nil {
		return err
	}
	if err := snapshot.IndexPodsByLabel(mgr, r.Snapshots); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&policyv1alpha1.TopologyDisruptionBudget{}).
		Named("topologydisruptionbudget").
		WithOptions(controller.Options{MaxConcurrentReconciles: r.workers()}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.touching(r.budgetsForPod)),
			builder.WithPredicates(podChanged{})).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.touching(r.budgetsForNode)),
			builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, createOrDelete())))
	for _, w := range snapshot.WorkloadObjects() {
		b = b.Watches(w, handler.EnqueueRequestsFromMapFunc(r.touching(r.budgetsForWorkload)),
			builder.WithPredicates(workloadChanged{}))
	}
	if r.Scope != nil && r.Scope.ConfigName != "" {
		// Whether a budget is enforced follows the webhook's registration
		// and its namespace's labels.
		name := r.Scope.ConfigName
		b = b.Watches(&admissionregistrationv1.ValidatingWebhookConfiguration{}, handler.EnqueueRequestsFromMapFunc(r.allBudgets),
			builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return isOurWebhookConfig(o, name) }))).
			Watches(&corev1.Namespace{}, handler.EnqueueRequestsFromMapFunc(r.budgetsInNamespace),
				builder.WithPredicates(predicate.LabelChangedPredicate{}))
	}
	return b.Complete(r)
}

// touching notes each budget an event of the cache enqueues as behind it
// (budgetstatus.Pending), for the eviction webhook.
func (r *BudgetReconciler) touching(m handler.MapFunc) handler.MapFunc {
	return func(ctx context.Context, obj client.Object) []reconcile.Request {
		reqs := m(ctx, obj)
		for _, req := range reqs {
			r.pending().Touch(req.NamespacedName)
		}
		return reqs
	}
}

// isOurWebhookConfig says whether a ValidatingWebhookConfiguration may
// register the eviction webhook (see WebhookScope.registered).
func isOurWebhookConfig(o client.Object, name string) bool {
	if o.GetName() == name {
		return true
	}
	vwc, ok := o.(*admissionregistrationv1.ValidatingWebhookConfiguration)
	if !ok {
		return false
	}
	for _, w := range vwc.Webhooks {
		if w.Name == WebhookName {
			return true
		}
	}
	return false
}

// allBudgets lists every budget.
func (r *BudgetReconciler) allBudgets(ctx context.Context, _ client.Object) []reconcile.Request {
	return r.budgetsIn(ctx, "")
}

// budgetsInNamespace lists the budgets of a namespace object.
func (r *BudgetReconciler) budgetsInNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	return r.budgetsIn(ctx, obj.GetName())
}

func (r *BudgetReconciler) budgetsIn(ctx context.Context, ns string) []reconcile.Request {
	var l policyv1alpha1.TopologyDisruptionBudgetList
	if err := r.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
		log.FromContext(ctx).Error(err, "listing budgets after a webhook scope change")
		return nil
	}
	out := make([]reconcile.Request, len(l.Items))
	for i := range l.Items {
		out[i] = reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&l.Items[i])}
	}
	return out
}

// budgetsForLabels lists the budgets of a namespace whose selector matches.
func (r *BudgetReconciler) budgetsForLabels(ctx context.Context, ns string, set labels.Set, into map[types.NamespacedName]struct{}) {
	matchingBudgets(ctx, r.Snapshots, ns, set, into, nil)
}

// podEventLog logs the pod changes the status controller maps, at level 2.
var podEventLog = ctrl.Log.WithName("topologydisruptionbudget")

func (r *BudgetReconciler) budgetsForPod(ctx context.Context, obj client.Object) []reconcile.Request {
	set := map[types.NamespacedName]struct{}{}
	r.budgetsForLabels(ctx, obj.GetNamespace(), obj.GetLabels(), set)
	if v := podEventLog.V(2); v.Enabled() {
		// When the operator's cache saw a pod change, to read against the
		// audit log's patch of the pod and its budget's status writes. An
		// update passes both its objects here, the old one first.
		ready := corev1.ConditionUnknown
		if pod, ok := obj.(*corev1.Pod); ok {
			ready = readyOf(pod)
		}
		v.Info("pod event", "pod", klog.KObj(obj), "ready", ready, "deleting", obj.GetDeletionTimestamp() != nil,
			"resourceVersion", obj.GetResourceVersion(), "budgets", len(set))
	}
	return toRequests(set)
}

func (r *BudgetReconciler) budgetsForNode(ctx context.Context, obj client.Object) []reconcile.Request {
	return budgetsOfNodePods(ctx, r.Client, obj.GetName(), r.budgetsForLabels, nil)
}

func (r *BudgetReconciler) budgetsForWorkload(ctx context.Context, obj client.Object) []reconcile.Request {
	set := map[types.NamespacedName]struct{}{}
	r.budgetsForLabels(ctx, obj.GetNamespace(), snapshot.TemplateLabels(obj), set)
	return toRequests(set)
}

// domainsLine is a status's domains for the debug log: per domain its
// healthy, desired healthy and expected pods and its allowance.
func domainsLine(st *policyv1alpha1.TopologyDisruptionBudgetStatus) string {
	var b strings.Builder
	for i, d := range st.Domains {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%d/%d/%d:%d", d.Name, d.CurrentHealthy, d.DesiredHealthy, d.ExpectedPods, d.DisruptionsAllowed)
	}
	return b.String()
}

// recordsLine is a status's eviction records for the debug log.
func recordsLine(st *policyv1alpha1.TopologyDisruptionBudgetStatus) string {
	var b strings.Builder
	for i, r := range st.DisruptedPods {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s@%s", r.Name, r.Domain)
	}
	return b.String()
}
