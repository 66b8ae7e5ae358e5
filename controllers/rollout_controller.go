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

package controllers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
)

const (
	// refusedRetry is how soon a rollout retries after an eviction was
	// refused (429: the budget, a PodDisruptionBudget or another admission
	// step is not ready for it). Pod and budget changes bring it back
	// sooner.
	refusedRetry = 5 * time.Second
	// expectationTimeout bounds how long an eviction the driver made counts
	// against its domain before the budget's status shows its record.
	expectationTimeout = 30 * time.Second
	// expectationGrace is how long an eviction keeps counting after its pod
	// is seen deleting or gone, in case the budget's cache has not shown
	// its record yet.
	expectationGrace = 2 * time.Second
	// revisionHashLabel is the StatefulSet controller's pod revision label.
	revisionHashLabel = appsv1.ControllerRevisionHashLabelKey
	// templateGenerationLabel is the DaemonSet controller's pod label for
	// the template generation the pod was created from.
	templateGenerationLabel = extensionsv1beta1.DaemonSetTemplateGenerationKey
)

// RolloutReconciler updates the OnDelete StatefulSets and DaemonSets covered
// by a budget with spec.rollout, by evicting outdated pods through the
// Eviction API in domain order, and reports progress in status.rollout.
type RolloutReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// APIReader reads a budget live when a status write conflicts.
	APIReader client.Reader
	// Recorder emits events on budgets.
	Recorder events.EventRecorder
	// Clock is injected so tests control the progress deadline.
	Clock clock.PassiveClock
	// OperatorNamespace is the operator's own namespace. The eviction
	// webhook lets every eviction there pass, so budgets there bound
	// nothing: their rollouts are not driven.
	OperatorNamespace string
	// Versions is the record of budget versions shared by every status
	// writer of the process (nil: none shared).
	Versions *budgetstatus.Versions
	// Snapshots gathers a budget's pods and nodes from the cache (nil: one
	// over Client, made by SetupWithManager).
	Snapshots *snapshot.Gatherer

	expect evictionExpectations
}

// +kubebuilder:rbac:groups="",resources=pods/eviction,verbs=create
// +kubebuilder:rbac:groups=apps,resources=statefulsets;daemonsets,verbs=get;list;watch

// Reconcile drives one budget's rollout one step: observe the driven pods,
// plan, evict, then report the plan in status.rollout.
func (r *RolloutReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tdb, err := r.budgetToDrive(ctx, req)
	if tdb == nil {
		return ctrl.Result{}, err
	}
	now := r.Clock.Now()
	state, err := r.observe(ctx, tdb, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	if state.unsynced {
		// An OnDelete workload's controller has not published the revision
		// of its latest template yet: acting or reporting now would treat
		// its pods as up to date. The workload's status update brings us
		// back.
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	plan := budget.PlanRollout(state.input)

	result := ctrl.Result{}
	if plan.RecheckAt != nil {
		result.RequeueAfter = plan.RecheckAt.Sub(now) + 100*time.Millisecond
	}
	// The status written below reports this pass's plan. It usually
	// conflicts with the webhook's writes for these evictions and is then
	// re-applied to the latest version; skipping it would leave the status
	// stale for as long as every pass evicts (AllDomains).
	live, refused, err := r.evict(ctx, tdb, state, plan.Evict, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	if live != nil && live.UID == tdb.UID && live.Generation == tdb.Generation {
		// Write the rollout status onto the version holding this pass's
		// records: onto the cached one it would conflict.
		tdb = live
	}
	if refused {
		result = soonest(result, refusedRetry)
	}
	if r.expect.pending(req.NamespacedName) {
		result = soonest(result, 2*time.Second)
	}
	if err := r.reportPlan(ctx, tdb, state, &plan, now); err != nil {
		return ctrl.Result{}, err
	}
	return result, nil
}

// budgetToDrive reads the budget a pass drives, at the newest version this
// process knows: the cache may not hold the webhook's latest records or
// this controller's last write. It returns nil when the pass ends here: the
// budget is gone or being deleted, has no spec.rollout (its rollout status
// is cleared), is in the operator's namespace (reported not enforced), or
// its status is of an older spec (the status controller's write brings us
// back); err is then the outcome of that pass.
func (r *RolloutReconciler) budgetToDrive(ctx context.Context, req ctrl.Request) (*policyv1alpha1.TopologyDisruptionBudget, error) {
	var cached policyv1alpha1.TopologyDisruptionBudget
	if err := r.Client.Get(ctx, req.NamespacedName, &cached); err != nil {
		if apierrors.IsNotFound(err) {
			r.expect.forget(req.NamespacedName)
			forgetRollout(req.Namespace, req.Name)
		}
		return nil, client.IgnoreNotFound(err)
	}
	if !cached.DeletionTimestamp.IsZero() {
		return nil, nil
	}
	tdb := *r.Versions.Newest(&cached)
	if tdb.Spec.Rollout == nil {
		r.expect.forget(req.NamespacedName)
		forgetRollout(req.Namespace, req.Name)
		return nil, r.clearRolloutStatus(ctx, &tdb)
	}
	if r.OperatorNamespace != "" && tdb.Namespace == r.OperatorNamespace {
		// Every eviction there passes the webhook: evictions driven by
		// this budget would be bounded by nothing.
		r.expect.forget(req.NamespacedName)
		forgetRollout(req.Namespace, req.Name)
		return nil, r.reportNotEnforced(ctx, &tdb)
	}
	if tdb.Status.ObservedGeneration != tdb.Generation {
		return nil, nil
	}
	return &tdb, nil
}

// reportPlan writes the pass's plan into the rollout status, unless it says
// nothing new, and emits the rollout's events after the write.
func (r *RolloutReconciler) reportPlan(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, state *rolloutState, plan *budget.RolloutPlan, now time.Time) error {
	prev := tdb.Status.DeepCopy()
	next := budget.RolloutStatusFor(tdb, plan, state.workloads, now)
	if equality.Semantic.DeepEqual(prev.Rollout, next.Rollout) && equality.Semantic.DeepEqual(prev.Conditions, next.Conditions) {
		exportRollout(tdb)
		return nil
	}
	if err := r.writeRolloutStatus(ctx, tdb, next); err != nil {
		return fmt.Errorf("updating rollout status of %s: %w", client.ObjectKeyFromObject(tdb), err)
	}
	log.FromContext(ctx).V(1).Info("rollout status updated", "tdb", klog.KObj(tdb), "currentDomain", next.Rollout.CurrentDomain,
		"evicted", len(plan.Evict), "complete", plan.Complete)
	exportRollout(tdb)
	r.emitRolloutEvents(tdb, prev, plan)
	return nil
}

// rolloutState is what one pass observed.
type rolloutState struct {
	input     budget.RolloutInput
	pods      map[string]*corev1.Pod
	domainOf  map[string]string
	workloads []policyv1alpha1.RolloutWorkloadStatus
	// unsynced is true when an OnDelete workload's controller has not
	// observed its latest spec: its update revision is unknown.
	unsynced bool
}

// drivenWorkload is a covered StatefulSet or DaemonSet.
type drivenWorkload struct {
	status   policyv1alpha1.RolloutWorkloadStatus
	uid      types.UID
	template labels.Set
	// consent is the budget its rollout-budget annotation names, if any.
	consent string
	// onDelete: the operator updates it (if this budget drives it);
	// synced: its controller published the revision of its latest spec;
	// driven: this budget updates it now.
	onDelete, synced, driven bool
	updated                  func(*corev1.Pod) bool
	lastName                 string // a StatefulSet's highest ordinal pod
}

// observe gathers the covered pods of the budget's StatefulSets and
// DaemonSets from the cache, the evictions of the budget not replaced yet,
// and what changed in the workloads since the last pass: the rollout's
// input.
func (r *RolloutReconciler) observe(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, now time.Time) (*rolloutState, error) {
	snap, err := r.Snapshots.Snapshot(ctx, tdb)
	if err != nil {
		return nil, err
	}
	if err := snap.Coverage.SelectorErr(); err != nil {
		return nil, err
	}
	// A spec whose selector parses but whose node term does not places no
	// pod (Snapshot lists none): the rollout has nothing to drive, and the
	// status controller reports the spec.
	obs := &rolloutObservation{
		rolloutState: &rolloutState{pods: map[string]*corev1.Pod{}, domainOf: map[string]string{}},
		workloads:    map[types.UID]*drivenWorkload{},
		recorded:     map[types.UID]bool{},
	}
	for _, rec := range tdb.Status.DisruptedPods {
		obs.recorded[rec.UID] = true
	}
	running := map[types.UID]bool{} // pods not being deleted
	for _, p := range snap.Pods {
		if p.DeletionTimestamp == nil {
			running[p.UID] = true
		}
		if err := r.observePod(ctx, tdb, snap, p, obs); err != nil {
			return nil, err
		}
	}
	if err := snap.Nodes.Err(); err != nil {
		// A pod whose node could not be read would look like one on a gone
		// node: its domain would seem to have nothing to drive.
		return nil, fmt.Errorf("reading nodes: %w", err)
	}
	inFlight, records, err := r.evictionsInFlight(ctx, tdb, obs.workloads)
	if err != nil {
		return nil, err
	}
	rows := r.chargeUnrecorded(tdb, inFlight, obs.recorded, running, now)
	sum := summarizeWorkloads(tdb, obs.workloads)
	state := obs.rolloutState
	state.workloads = sum.statuses
	state.input = budget.RolloutInput{
		Spec: &tdb.Spec, Budget: rows, Pods: state.input.Pods, InFlight: inFlight, Records: records,
		Previous: tdb.Status.Rollout, NewRevision: sum.newRevision, Now: now,
		OnDeleteWorkloads: sum.onDelete, NotHandedOver: sum.notHandedOver, BudgetName: tdb.Name,
	}
	return state, nil
}

// rolloutObservation is a pass's observation in the making: the state it
// fills, the workloads read so far by UID (nil: neither a StatefulSet nor
// a DaemonSet, or gone), and the pods with an eviction record in status.
type rolloutObservation struct {
	*rolloutState
	workloads map[types.UID]*drivenWorkload
	recorded  map[types.UID]bool
}

// observePod counts a running or pending pod of a StatefulSet or DaemonSet
// in its workload's status, and adds it to the rollout's pods when the
// budget drives that workload. A pod that is not covered, or has no domain,
// is left alone: the budget fails closed on the latter and says so. A
// replacement not scheduled yet has no domain either: the eviction record
// of the pod it replaces keeps that domain busy until it is scheduled.
func (r *RolloutReconciler) observePod(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, snap *snapshot.Snapshot, p *corev1.Pod, obs *rolloutObservation) error {
	ref := metav1.GetControllerOf(p)
	if ref == nil || (ref.Kind != "StatefulSet" && ref.Kind != "DaemonSet") || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil
	}
	place, err := snap.Coverage.Place(tdb, p, snap.Nodes.Get, nil)
	if err != nil || !place.Covered || place.Domain == "" {
		return nil
	}
	domain := place.Domain
	w, ok := obs.workloads[ref.UID]
	if !ok {
		if w, err = r.workload(ctx, tdb, ref); err != nil {
			return err
		}
		obs.workloads[ref.UID] = w
	}
	if w == nil {
		return nil
	}
	obs.domainOf[p.Name] = domain
	if p.Name == w.lastName {
		w.status.NextScaleDownPod, w.status.NextScaleDownDomain = p.Name, domain
	}
	updated := w.updated(p)
	ready := budget.IsHealthy(p)
	w.status.TotalPods++
	if updated && ready && p.DeletionTimestamp == nil {
		w.status.UpdatedPods++
	}
	if !w.driven {
		if w.onDelete && !w.synced && w.status.DrivenBy == tdb.Name {
			obs.unsynced = true
		}
		return nil
	}
	obs.pods[p.Name] = p.DeepCopy() // the cache's own object: the eviction request takes it
	obs.input.Pods = append(obs.input.Pods, budget.RolloutPod{
		Name: p.Name, Domain: domain, Updated: updated, Ready: ready,
		Deleting: p.DeletionTimestamp != nil,
		Evicted:  obs.recorded[p.UID] || r.expect.has(client.ObjectKeyFromObject(tdb), p.UID),
	})
	return nil
}

// evictionsInFlight counts, per domain, the budget's eviction records
// (records: each makes its domain disrupted) and those of pods of driven
// workloads (inFlight: they keep their domain in the rollout even when
// none of its pods is left). The workload of a record whose pods are all
// gone is read and added to workloads.
func (r *RolloutReconciler) evictionsInFlight(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, workloads map[types.UID]*drivenWorkload) (inFlight, records map[string]int32, err error) {
	inFlight, records = map[string]int32{}, map[string]int32{}
	for _, rec := range tdb.Status.DisruptedPods {
		records[rec.Domain]++
		w, known := workloads[rec.ControllerUID]
		if !known && rec.ControllerUID != "" {
			if w, err = r.workloadByUID(ctx, tdb, rec.ControllerUID); err != nil {
				return nil, nil, err
			}
			workloads[rec.ControllerUID] = w
		}
		if w != nil && w.driven {
			inFlight[rec.Domain]++
		}
	}
	return inFlight, records, nil
}

// chargeUnrecorded adds the evictions this driver was granted that the
// budget's status does not show yet to inFlight, and returns the budget's
// domains with their allowances reduced by them.
func (r *RolloutReconciler) chargeUnrecorded(tdb *policyv1alpha1.TopologyDisruptionBudget, inFlight map[string]int32, recorded, running map[types.UID]bool, now time.Time) []policyv1alpha1.DomainStatus {
	rows := append([]policyv1alpha1.DomainStatus(nil), tdb.Status.Domains...)
	for domain, n := range r.expect.unrecorded(client.ObjectKeyFromObject(tdb), recorded, running, tdb.ResourceVersion, now) {
		inFlight[domain] += n
		for i := range rows {
			if rows[i].Name == domain {
				rows[i].DisruptionsAllowed -= n
			}
		}
	}
	return rows
}

// workloadSummary is what the workloads tell the rollout: their statuses,
// sorted; whether a driven one has a new update revision or was handed
// over to the budget since the last pass (it restarts the progress
// deadline and the settle window); how many are OnDelete; and which of
// those no budget may update.
type workloadSummary struct {
	statuses      []policyv1alpha1.RolloutWorkloadStatus
	newRevision   bool
	onDelete      int
	notHandedOver []string
}

func summarizeWorkloads(tdb *policyv1alpha1.TopologyDisruptionBudget, workloads map[types.UID]*drivenWorkload) workloadSummary {
	var prevWorkloads map[string]policyv1alpha1.RolloutWorkloadStatus
	if tdb.Status.Rollout != nil {
		prevWorkloads = map[string]policyv1alpha1.RolloutWorkloadStatus{}
		for _, w := range tdb.Status.Rollout.Workloads {
			prevWorkloads[w.Kind+"/"+w.Name] = w
		}
	}
	var c workloadSummary
	for _, w := range workloads {
		if w == nil {
			continue
		}
		if old, ok := prevWorkloads[w.status.Kind+"/"+w.status.Name]; ok && w.driven &&
			(old.UpdateRevision != w.status.UpdateRevision || old.DrivenBy != tdb.Name) {
			c.newRevision = true
		}
		if w.onDelete {
			c.onDelete++
		}
		if w.onDelete && w.status.DrivenBy == "" {
			c.notHandedOver = append(c.notHandedOver, w.status.Kind+" "+w.status.Name)
		}
		c.statuses = append(c.statuses, w.status)
	}
	sort.Strings(c.notHandedOver)
	sort.Slice(c.statuses, func(i, j int) bool {
		a, b := c.statuses[i], c.statuses[j]
		return a.Kind+"/"+a.Name < b.Kind+"/"+b.Name
	})
	return c
}

// workloadByUID finds the StatefulSet or DaemonSet of an eviction record
// whose pods are all gone; nil when it is neither or gone.
func (r *RolloutReconciler) workloadByUID(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, uid types.UID) (*drivenWorkload, error) {
	ref, found, err := r.Snapshots.ControllerByUID(ctx, tdb.Namespace, uid)
	if err != nil || !found || (ref.Kind != "StatefulSet" && ref.Kind != "DaemonSet") {
		return nil, err
	}
	return r.workload(ctx, tdb, &ref)
}

// workload reads a pod's StatefulSet or DaemonSet from the cache; nil when
// it is gone or was recreated under the same name.
func (r *RolloutReconciler) workload(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, ref *metav1.OwnerReference) (*drivenWorkload, error) {
	w, err := r.readWorkload(ctx, tdb.Namespace, ref)
	if w == nil || err != nil || !w.onDelete {
		return w, err
	}
	driver, why, err := r.driverOf(ctx, tdb, w)
	if err != nil {
		return nil, err
	}
	w.status.DrivenBy, w.status.Message = driver, why
	// Only the budget the workload names drives it: two drivers would each
	// spend their own budget and disrupt more than either allows.
	w.driven = w.synced && driver == tdb.Name
	return w, nil
}

// driverOf is the budget that may drive an OnDelete workload: the one its
// rollout-budget annotation names, when that budget exists, has
// spec.rollout, is not being deleted and selects the workload's pods. The
// annotation is the workload owner's consent: whoever may write a budget
// must not be able to make the operator evict, with its own rights, pods
// the owner did not hand over. Without a driver it returns "" and a message
// saying why and how to hand the workload over to tdb.
func (r *RolloutReconciler) driverOf(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, w *drivenWorkload) (driver, why string, err error) {
	annotate := fmt.Sprintf("kubectl annotate %s %s %s=%s --overwrite",
		strings.ToLower(w.status.Kind), w.status.Name, policyv1alpha1.RolloutBudgetAnnotation, tdb.Name)
	if w.consent == "" {
		return "", fmt.Sprintf("not updated by the operator: the workload names no budget in its %s annotation; "+
			"to let budget %s update it: %s", policyv1alpha1.RolloutBudgetAnnotation, tdb.Name, annotate), nil
	}
	named := tdb
	if w.consent != tdb.Name {
		named = &policyv1alpha1.TopologyDisruptionBudget{}
		if err := r.Client.Get(ctx, client.ObjectKey{Namespace: tdb.Namespace, Name: w.consent}, named); err != nil {
			if !apierrors.IsNotFound(err) {
				return "", "", fmt.Errorf("reading budget %s named by %s %s: %w", w.consent, w.status.Kind, w.status.Name, err)
			}
			named = nil
		}
	}
	problem := ""
	switch {
	case named == nil:
		problem = "which does not exist in its namespace"
	case named.Spec.Rollout == nil || !named.DeletionTimestamp.IsZero():
		problem = "which has no spec.rollout"
	default:
		if cov := r.Snapshots.Coverage(named); cov.SelectorErr() != nil || !cov.MightSelect(named.Namespace, w.template) {
			problem = "whose selector does not select its pods"
		}
	}
	if problem != "" {
		return "", fmt.Sprintf("not updated by the operator: its %s annotation names budget %s, %s; "+
			"to let budget %s update it: %s", policyv1alpha1.RolloutBudgetAnnotation, w.consent, problem, tdb.Name, annotate), nil
	}
	return w.consent, "", nil
}

// readWorkload reads a StatefulSet or DaemonSet from the cache.
func (r *RolloutReconciler) readWorkload(ctx context.Context, ns string, ref *metav1.OwnerReference) (*drivenWorkload, error) {
	key := client.ObjectKey{Namespace: ns, Name: ref.Name}
	switch ref.Kind {
	case "StatefulSet":
		var sts appsv1.StatefulSet
		if err := r.Client.Get(ctx, key, &sts); err != nil || sts.UID != ref.UID {
			return nil, client.IgnoreNotFound(err)
		}
		strategy := string(sts.Spec.UpdateStrategy.Type)
		if strategy == "" {
			strategy = string(appsv1.RollingUpdateStatefulSetStrategyType)
		}
		rev := sts.Status.UpdateRevision
		w := &drivenWorkload{
			uid: sts.UID, template: sts.Spec.Template.Labels,
			status: policyv1alpha1.RolloutWorkloadStatus{
				Kind: "StatefulSet", Name: sts.Name, UpdateStrategy: strategy, UpdateRevision: rev,
			},
			consent:  sts.Annotations[policyv1alpha1.RolloutBudgetAnnotation],
			onDelete: strategy == string(appsv1.OnDeleteStatefulSetStrategyType),
			synced:   rev != "" && sts.Status.ObservedGeneration >= sts.Generation,
			updated:  func(p *corev1.Pod) bool { return rev != "" && p.Labels[revisionHashLabel] == rev },
		}
		replicas := int32(1)
		if sts.Spec.Replicas != nil {
			replicas = *sts.Spec.Replicas
		}
		start := int32(0)
		if sts.Spec.Ordinals != nil {
			start = sts.Spec.Ordinals.Start
		}
		if replicas > 0 {
			w.lastName = fmt.Sprintf("%s-%d", sts.Name, start+replicas-1)
		}
		return w, nil
	case "DaemonSet":
		var ds appsv1.DaemonSet
		if err := r.Client.Get(ctx, key, &ds); err != nil || ds.UID != ref.UID {
			return nil, client.IgnoreNotFound(err)
		}
		strategy := string(ds.Spec.UpdateStrategy.Type)
		if strategy == "" {
			strategy = string(appsv1.RollingUpdateDaemonSetStrategyType)
		}
		gen := ds.Annotations[snapshot.DaemonSetTemplateGeneration]
		return &drivenWorkload{
			uid: ds.UID, template: ds.Spec.Template.Labels,
			status: policyv1alpha1.RolloutWorkloadStatus{
				Kind: "DaemonSet", Name: ds.Name, UpdateStrategy: strategy, UpdateRevision: gen,
			},
			consent:  ds.Annotations[policyv1alpha1.RolloutBudgetAnnotation],
			onDelete: strategy == string(appsv1.OnDeleteDaemonSetStrategyType),
			synced:   gen != "" && ds.Status.ObservedGeneration >= ds.Generation,
			updated:  func(p *corev1.Pod) bool { return gen != "" && p.Labels[templateGenerationLabel] == gen },
		}, nil
	}
	return nil, nil
}

// evict requests the planned evictions through the Eviction API, so that
// the budget's webhook, PodDisruptionBudgets and any other admission step
// apply to them. They are sent at once: each one waits on the webhook's
// status write and on the API server's own checks, and a pass that sent them
// one after the other would take their sum. The webhook decides them one at
// a time per budget, so sending them together cannot over-spend it. A 429 is
// back-pressure, not an error.
//
// After a granted eviction it reads the budget live: that version holds the
// records the webhook wrote for this pass, and its resourceVersion tells
// when the cache has caught up with them (see evictionExpectations). It is
// returned, nil when nothing was granted or the read failed.
func (r *RolloutReconciler) evict(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, state *rolloutState, names []string, now time.Time) (live *policyv1alpha1.TopologyDisruptionBudget, refused bool, err error) {
	logger := log.FromContext(ctx)
	key := client.ObjectKeyFromObject(tdb)
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		p := state.pods[name]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev := &policyv1.Eviction{
				ObjectMeta:    metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
				DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}},
			}
			errs[i] = r.Client.SubResource("eviction").Create(ctx, p, ev)
		}()
	}
	wg.Wait()
	var fence string
	for _, err := range errs {
		if err == nil {
			fresh := &policyv1alpha1.TopologyDisruptionBudget{}
			if gerr := r.APIReader.Get(ctx, key, fresh); gerr == nil {
				r.Versions.Saw(fresh, tdb.ResourceVersion)
				live, fence = fresh.DeepCopy(), fresh.ResourceVersion
			}
			break
		}
	}
	var failed []error
	for i, name := range names {
		p, err := state.pods[name], errs[i]
		switch {
		case err == nil:
			operatormetrics.RolloutEvictions.WithLabelValues(tdb.Namespace, tdb.Name, "granted").Inc()
			r.expect.add(key, p.UID, state.domainOf[name], now, tdb.ResourceVersion, fence)
			logger.V(1).Info("evicted outdated pod", "tdb", klog.KObj(tdb), "pod", klog.KObj(p), "domain", state.domainOf[name])
		case apierrors.IsTooManyRequests(err):
			refused = true
			operatormetrics.RolloutEvictions.WithLabelValues(tdb.Namespace, tdb.Name, "refused").Inc()
			logger.V(1).Info("eviction refused, retrying later", "tdb", klog.KObj(tdb), "pod", klog.KObj(p), "reason", err.Error())
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			// Gone or replaced meanwhile: the next pass sees it.
		default:
			operatormetrics.RolloutEvictions.WithLabelValues(tdb.Namespace, tdb.Name, "error").Inc()
			failed = append(failed, fmt.Errorf("evicting pod %s/%s: %w", p.Namespace, p.Name, err))
		}
	}
	return live, refused, errors.Join(failed...)
}

// writeRolloutStatus writes status.rollout and the rollout conditions. The
// webhook and the status controller write the same status; on a conflict
// the budget is read again and only the fields this controller owns are
// applied to it.
func (r *RolloutReconciler) writeRolloutStatus(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, next *policyv1alpha1.TopologyDisruptionBudgetStatus) error {
	w := &budgetstatus.Writer{Name: budgetstatus.WriterRollout, Client: r.Client, Live: r.APIReader, Versions: r.Versions}
	written, err := w.Update(ctx, tdb, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		budget.ApplyRolloutFields(&base.Status, next)
		return base, nil
	})
	if written != nil {
		*tdb = *written
	}
	return err
}

// reportNotEnforced replaces the rollout status of a budget in the
// operator's namespace with conditions that say it is not enforced.
func (r *RolloutReconciler) reportNotEnforced(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget) error {
	next := tdb.Status.DeepCopy()
	next.Rollout = nil
	for _, c := range budget.NotEnforcedRolloutConditions(tdb.Namespace) {
		c.ObservedGeneration = tdb.Generation
		c.LastTransitionTime = metav1.NewTime(r.Clock.Now())
		apimeta.SetStatusCondition(&next.Conditions, c)
	}
	if tdb.Status.Rollout == nil && equality.Semantic.DeepEqual(tdb.Status.Conditions, next.Conditions) {
		return nil
	}
	return r.writeRolloutStatus(ctx, tdb, next)
}

// clearRolloutStatus removes the rollout status of a budget whose
// spec.rollout was removed.
func (r *RolloutReconciler) clearRolloutStatus(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget) error {
	if tdb.Status.Rollout == nil &&
		apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionRolloutProgressing) == nil &&
		apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionRolloutComplete) == nil {
		return nil
	}
	return r.writeRolloutStatus(ctx, tdb, &policyv1alpha1.TopologyDisruptionBudgetStatus{})
}

// emitRolloutEvents reports, after the write, a domain starting, a stall
// and the end of a rollout.
func (r *RolloutReconciler) emitRolloutEvents(tdb *policyv1alpha1.TopologyDisruptionBudget, prev *policyv1alpha1.TopologyDisruptionBudgetStatus, plan *budget.RolloutPlan) {
	if r.Recorder == nil {
		return
	}
	for _, d := range plan.Started {
		r.Recorder.Eventf(tdb, nil, corev1.EventTypeNormal, policyv1alpha1.EventReasonRolloutDomainStarted, domainAction(d),
			"updating domain %s (%s)", d, strategyOf(tdb))
	}
	wasStalled := map[string]bool{}
	if prev.Rollout != nil {
		for _, d := range prev.Rollout.Domains {
			wasStalled[d.Name] = d.Phase == policyv1alpha1.RolloutPhaseStalled
		}
	}
	for _, s := range plan.Stalled {
		if wasStalled[s.Domain] {
			continue
		}
		r.Recorder.Eventf(tdb, nil, corev1.EventTypeWarning, policyv1alpha1.EventReasonRolloutStalled, domainAction(s.Domain),
			"domain %s made no progress since %s (pods not updated and Ready: %v); the rollout stopped there: fix the workload or pause and resume",
			s.Domain, s.Since.UTC().Format(time.RFC3339), s.Pods)
	}
	if plan.Complete && wasUpdating(prev.Rollout) {
		r.Recorder.Eventf(tdb, nil, corev1.EventTypeNormal, policyv1alpha1.EventReasonRolloutComplete, "Rollout",
			"every driven pod is updated and Ready in %d domain(s)", len(plan.Status.Domains))
	}
}

// domainAction is the action of a per-domain rollout event. The events API
// folds events with the same regarding object, reason and action into one
// series that keeps the first note, so the domain is part of the action:
// otherwise "updating domain zone-b" would only bump the count of "updating
// domain zone-a".
func domainAction(domain string) string {
	return "UpdateDomain " + domain
}

// wasUpdating is true when the last status had a domain not complete.
func wasUpdating(ro *policyv1alpha1.RolloutStatus) bool {
	if ro == nil {
		return false
	}
	for _, d := range ro.Domains {
		if d.Phase != policyv1alpha1.RolloutPhaseComplete {
			return true
		}
	}
	return false
}

func strategyOf(tdb *policyv1alpha1.TopologyDisruptionBudget) string {
	if s := tdb.Spec.Rollout.Strategy; s != "" {
		return string(s)
	}
	return string(policyv1alpha1.DomainByDomain)
}

func soonest(r ctrl.Result, after time.Duration) ctrl.Result {
	if r.RequeueAfter == 0 || after < r.RequeueAfter {
		r.RequeueAfter = after
	}
	return r
}

// evictionExpectations remembers the evictions the driver was granted until
// the budget's status shows their records, so that a pass reading an older
// status neither evicts the same pod again nor spends the same allowance
// twice. It is only an optimisation: the webhook refuses what the budget
// does not allow, and the records in status survive restarts.
type evictionExpectations struct {
	mu sync.Mutex
	m  map[types.NamespacedName]map[types.UID]expectation
}

type expectation struct {
	domain string
	at     time.Time
	// before is the resourceVersion of the budget the pass that evicted
	// read: a budget still at it has not seen the eviction's record.
	before string
	// fence is the budget's resourceVersion read after the eviction was
	// granted ("" if unknown): a budget at it has seen the record, and
	// the status controller's handling of it. resourceVersions are
	// opaque: they are compared for equality only.
	fence string
}

func (e *evictionExpectations) add(key types.NamespacedName, uid types.UID, domain string, now time.Time, before, fence string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = map[types.NamespacedName]map[types.UID]expectation{}
	}
	if e.m[key] == nil {
		e.m[key] = map[types.UID]expectation{}
	}
	e.m[key][uid] = expectation{domain: domain, at: now, before: before, fence: fence}
}

func (e *evictionExpectations) has(key types.NamespacedName, uid types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.m[key][uid]
	return ok
}

// unrecorded drops the expectations the status shows, those whose fence the
// budget is at (the record was written, and if it is gone the status
// controller dropped it because the pod is replaced, which the status then
// counts), and those that timed out; it counts the others per domain. A
// budget at neither the fence nor the version the evicting pass read is of
// unknown order (resourceVersions are not compared for order): as without
// a fence (the live read failed), an expectation whose pod is seen deleting
// or gone is then dropped after expectationGrace, the time the budget's
// cache takes to catch up with the record written before the deletion.
func (e *evictionExpectations) unrecorded(key types.NamespacedName, recorded, running map[types.UID]bool, cached string, now time.Time) map[string]int32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := map[string]int32{}
	for uid, x := range e.m[key] {
		caughtUp := x.fence != "" && cached == x.fence
		behind := x.fence != "" && cached == x.before
		gone := !behind && !running[uid] && now.Sub(x.at) >= expectationGrace
		if recorded[uid] || caughtUp || gone || now.Sub(x.at) > expectationTimeout {
			delete(e.m[key], uid)
			continue
		}
		out[x.domain]++
	}
	return out
}

func (e *evictionExpectations) pending(key types.NamespacedName) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.m[key]) > 0
}

func (e *evictionExpectations) forget(key types.NamespacedName) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}

// SetupWithManager wires the rollout driver: budgets with spec.rollout, and
// the pods, StatefulSets and DaemonSets that move their rollouts.
func (r *RolloutReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Snapshots == nil {
		r.Snapshots = &snapshot.Gatherer{Cache: r.Client}
	}
	if err := snapshot.IndexWorkloadsByUID(mgr); err != nil {
		return err
	}
	if err := snapshot.IndexPodsByLabel(mgr, r.Snapshots); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		For(&policyv1alpha1.TopologyDisruptionBudget{}, builder.WithPredicates(rolloutBudget{})).
		Named("rollout").
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.budgetsForPod), builder.WithPredicates(podChanged{})).
		// A budget created, deleted or respecified may become, or stop
		// being, the driver a workload names: the other budgets covering
		// that workload report it.
		Watches(&policyv1alpha1.TopologyDisruptionBudget{}, handler.EnqueueRequestsFromMapFunc(r.otherBudgets),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, createOrDelete()))).
		Watches(&appsv1.StatefulSet{}, handler.EnqueueRequestsFromMapFunc(r.budgetsForWorkload), builder.WithPredicates(revisionChanged{})).
		Watches(&appsv1.DaemonSet{}, handler.EnqueueRequestsFromMapFunc(r.budgetsForWorkload), builder.WithPredicates(revisionChanged{})).
		Complete(r)
}

func hasRollout(t *policyv1alpha1.TopologyDisruptionBudget) bool {
	return t.Spec.Rollout != nil || t.Status.Rollout != nil
}

func (r *RolloutReconciler) budgetsForPod(ctx context.Context, obj client.Object) []reconcile.Request {
	set := map[types.NamespacedName]struct{}{}
	matchingBudgets(ctx, r.Snapshots, obj.GetNamespace(), obj.GetLabels(), set, hasRollout)
	return toRequests(set)
}

// otherBudgets maps a budget to the other budgets of its namespace that
// have or had a rollout.
func (r *RolloutReconciler) otherBudgets(ctx context.Context, obj client.Object) []reconcile.Request {
	var tdbs policyv1alpha1.TopologyDisruptionBudgetList
	if err := r.Client.List(ctx, &tdbs, client.InNamespace(obj.GetNamespace())); err != nil {
		log.FromContext(ctx).Error(err, "listing budgets to map a budget change", "namespace", obj.GetNamespace())
		return nil
	}
	var out []reconcile.Request
	for i := range tdbs.Items {
		t := &tdbs.Items[i]
		if t.Name != obj.GetName() && hasRollout(t) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(t)})
		}
	}
	return out
}

func (r *RolloutReconciler) budgetsForWorkload(ctx context.Context, obj client.Object) []reconcile.Request {
	set := map[types.NamespacedName]struct{}{}
	matchingBudgets(ctx, r.Snapshots, obj.GetNamespace(), snapshot.TemplateLabels(obj), set, hasRollout)
	return toRequests(set)
}

// rolloutBudget passes budgets that have or had a rollout.
type rolloutBudget struct{ predicate.Funcs }

func (rolloutBudget) Create(e event.CreateEvent) bool { return budgetHasRollout(e.Object) }
func (rolloutBudget) Delete(e event.DeleteEvent) bool { return budgetHasRollout(e.Object) }
func (rolloutBudget) Update(e event.UpdateEvent) bool {
	return budgetHasRollout(e.ObjectOld) || budgetHasRollout(e.ObjectNew)
}

func budgetHasRollout(o client.Object) bool {
	t, ok := o.(*policyv1alpha1.TopologyDisruptionBudget)
	return ok && hasRollout(t)
}

// revisionChanged passes workload updates that can start or move a rollout:
// a new spec, update revision or strategy, the controller catching up, or
// the owner handing the workload over (or back).
type revisionChanged struct{ predicate.Funcs }

func (revisionChanged) Update(e event.UpdateEvent) bool {
	if e.ObjectOld.GetAnnotations()[policyv1alpha1.RolloutBudgetAnnotation] != e.ObjectNew.GetAnnotations()[policyv1alpha1.RolloutBudgetAnnotation] {
		return true
	}
	switch o := e.ObjectOld.(type) {
	case *appsv1.StatefulSet:
		n, ok := e.ObjectNew.(*appsv1.StatefulSet)
		return !ok || o.Generation != n.Generation || o.Status.ObservedGeneration != n.Status.ObservedGeneration ||
			o.Status.UpdateRevision != n.Status.UpdateRevision ||
			!equality.Semantic.DeepEqual(o.Spec.UpdateStrategy, n.Spec.UpdateStrategy) ||
			!equality.Semantic.DeepEqual(o.Spec.Replicas, n.Spec.Replicas)
	case *appsv1.DaemonSet:
		n, ok := e.ObjectNew.(*appsv1.DaemonSet)
		return !ok || o.Generation != n.Generation || o.Status.ObservedGeneration != n.Status.ObservedGeneration ||
			o.Annotations[snapshot.DaemonSetTemplateGeneration] != n.Annotations[snapshot.DaemonSetTemplateGeneration] ||
			!equality.Semantic.DeepEqual(o.Spec.UpdateStrategy, n.Spec.UpdateStrategy)
	}
	return true
}
