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
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
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

// deletionCostBudgetIndex indexes pods by the budget named in their
// deletion-cost marker, so the pods of a deleted budget, or of one whose
// selector no longer matches them, are found without a scan.
const deletionCostBudgetIndex = "metadata.annotations.deletion-cost-budget"

// deletionCostPatches counts the pod patches of the deletion-cost
// controller: how many pods one scale event rewrites.

// DeletionCostReconciler keeps controller.kubernetes.io/pod-deletion-cost on
// the covered pods of ReplicaSets (and so Deployments) of every budget with
// spec.rollout set, so that the ReplicaSet controller scales down in domain
// order. The order itself is budget.DeletionCosts; this is the I/O around it.
// StatefulSets are left alone: their scale-down always removes the highest
// ordinal, whatever the annotation says.
//
// It needs no consent from the workloads' owners, unlike the rollout driver:
// a cost changes which of a ReplicaSet's pods its own controller removes
// when it scales down, never whether or how many; the operator never
// overwrites a cost it did not set, and pods whose template carries a cost
// are never taken over (see docs/scale-down.md).
type DeletionCostReconciler struct {
	// Client reads from the manager's cache and patches pods.
	Client client.Client
	// OperatorNamespace is the operator's own namespace, whose budgets are
	// not enforced (the eviction webhook lets every eviction there pass):
	// they get no costs, and the pods they marked are released.
	OperatorNamespace string
	// Snapshots gathers a budget's pods and nodes from the cache (nil: one
	// over Client, made by SetupWithManager).
	Snapshots *snapshot.Gatherer
	// Versions is the record of budget versions shared by the process's
	// status writers: a recompute starts from the newest status known,
	// which the cache may not hold yet (nil: the cache's).
	Versions *budgetstatus.Versions
	// Passes hands over the budgets whose status pass ended: the
	// recompute's trigger for every change of pods, nodes and scales (see
	// StatusPasses). Nil: the controller follows pod and node events
	// itself (a reconciler run without the status controller).
	Passes *StatusPasses
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=apps,resources=replicasets;deployments,verbs=get;list;watch

// Reconcile brings the deletion costs of one budget's pods to what the
// budget wants, patching only the pods whose annotations must change.
func (r *DeletionCostReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	// What the last status pass read is taken before the budget: a pass
	// that ends after this left a status no older than the one read below,
	// and a fingerprint that cannot match ours.
	var pass *passRead
	if r.Passes != nil {
		if read, ok := r.Passes.last(req.NamespacedName); ok {
			pass = &read
		} else {
			pass = &passRead{}
		}
	}
	var tdb policyv1alpha1.TopologyDisruptionBudget
	if err := r.Client.Get(ctx, req.NamespacedName, &tdb); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading budget %s: %w", req.NamespacedName, err)
		}
		// Gone: release the pods it marked.
		return r.apply(ctx, req.NamespacedName, desired{})
	}
	// The status pass that brought us here may not be in the cache yet.
	tdb = *r.Versions.Newest(&tdb)
	if !tdb.DeletionTimestamp.IsZero() || tdb.Spec.Rollout == nil ||
		(r.OperatorNamespace != "" && tdb.Namespace == r.OperatorNamespace) {
		return r.apply(ctx, req.NamespacedName, desired{})
	}
	want, err := r.desiredCosts(ctx, &tdb, pass)
	if errors.Is(err, errStatusBehind) {
		log.FromContext(ctx).V(2).Info("pods changed since the status pass; waiting for the next one", "tdb", klog.KObj(&tdb))
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	return r.apply(ctx, req.NamespacedName, want)
}

// errStatusBehind says the budget's pods changed since its last status
// pass: costs are not computed from a status older than the pods.
var errStatusBehind = errors.New("the budget's status is older than its pods")

// desired is what one budget wants of its pods.
type desired struct {
	// selected are the pods the budget's selector matches.
	selected []*corev1.Pod
	// costs is the wanted cost by pod name; a selected or marked pod
	// without one is released.
	costs map[string]int32
	// undecided names pods left as they are for now: their ReplicaSet is
	// not in the cache yet.
	undecided map[string]bool
}

// desiredCosts lists the pods the budget's selector matches and the cost
// each covered pod of a ReplicaSet should carry. pass, if not nil, is what
// the last status pass read: the costs are computed only from a status of
// the budget's spec made from the pods the snapshot shows.
func (r *DeletionCostReconciler) desiredCosts(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, pass *passRead) (desired, error) {
	snap, err := r.Snapshots.Snapshot(ctx, tdb)
	if err != nil {
		return desired{}, err
	}
	if err := snap.Coverage.Err(); err != nil {
		// The status controller reports the bad spec; without one no pod
		// is covered, so every marked pod is released.
		log.FromContext(ctx).V(1).Info("budget spec cannot be evaluated; releasing its pods", "tdb", klog.KObj(tdb), "err", err.Error())
		return desired{}, nil
	}
	if pass != nil && (pass.uid != tdb.UID || pass.fingerprint != snap.Fingerprint() ||
		tdb.Status.ObservedGeneration != tdb.Generation) {
		// The pods (or the spec) moved on since the status was made; the
		// pass that follows their change brings us back.
		return desired{}, errStatusBehind
	}
	selected, byRS, err := coveredByReplicaSet(tdb, snap)
	if err != nil {
		return desired{}, err
	}
	roles := make(map[types.UID]replicaSetRole, len(byRS))
	for uid, rs := range byRS {
		role, err := r.roleOf(ctx, tdb.Namespace, rs.name, uid)
		if err != nil {
			return desired{}, err
		}
		roles[uid] = role
	}
	return costsOf(tdb, selected, byRS, roles), nil
}

// replicaSetPods are the covered, live pods with a domain of one
// ReplicaSet.
type replicaSetPods struct {
	name string
	pods []budget.ScaleDownPod
}

// coveredByReplicaSet returns the pods the budget's selector matches (the
// caller's own copies) and groups the covered, live ones with a domain by
// controlling ReplicaSet. A pod without a domain gets no cost: the status
// controller reports domain errors.
func coveredByReplicaSet(tdb *policyv1alpha1.TopologyDisruptionBudget, snap *snapshot.Snapshot) ([]*corev1.Pod, map[types.UID]*replicaSetPods, error) {
	selected := make([]*corev1.Pod, 0, len(snap.Pods))
	byRS := map[types.UID]*replicaSetPods{}
	for _, p := range snap.Pods {
		p = p.DeepCopy() // the cache's own object: a patch writes its answer into it
		selected = append(selected, p)
		if isTerminalPod(p) {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil || ref.Kind != "ReplicaSet" || ref.APIVersion != appsv1.SchemeGroupVersion.String() {
			continue
		}
		place, err := snap.Coverage.Place(tdb, p, snap.Nodes.Get, nil)
		if err != nil || !place.Covered || place.Domain == "" {
			continue
		}
		rs := byRS[ref.UID]
		if rs == nil {
			rs = &replicaSetPods{name: ref.Name}
			byRS[ref.UID] = rs
		}
		rs.pods = append(rs.pods, budget.ScaleDownPod{
			Name: p.Name, Domain: place.Domain, Ready: readyOf(p) == corev1.ConditionTrue, Created: p.CreationTimestamp.Time,
			Deleting: p.DeletionTimestamp != nil,
		})
	}
	if err := snap.Nodes.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading nodes for %s: %w", klog.KObj(tdb), err)
	}
	return selected, byRS, nil
}

// costsOf ranks each ReplicaSet's pods for scale-down, with the pods of
// the other ReplicaSets of its Deployment as siblings. The pods of a
// ReplicaSet not cached yet keep their annotations until its watch event
// brings us back.
func costsOf(tdb *policyv1alpha1.TopologyDisruptionBudget, selected []*corev1.Pod, byRS map[types.UID]*replicaSetPods, roles map[types.UID]replicaSetRole) desired {
	want := desired{selected: selected, costs: map[string]int32{}, undecided: map[string]bool{}}
	for uid, rs := range byRS {
		role := roles[uid]
		if !role.found {
			for _, p := range rs.pods {
				want.undecided[p.Name] = true
			}
			continue
		}
		var siblings []budget.ScaleDownPod
		for other, ors := range byRS {
			if other != uid && role.deployment != "" && roles[other].deployment == role.deployment {
				siblings = append(siblings, ors.pods...)
			}
		}
		for name, c := range budget.DeletionCosts(budget.ScaleDownInput{
			Spec: &tdb.Spec, Domains: tdb.Status.Domains, Pods: rs.pods, OldInRollout: role.old, Siblings: siblings,
		}) {
			want.costs[name] = c
		}
	}
	return want
}

// replicaSetRole is where a ReplicaSet stands in its Deployment.
type replicaSetRole struct {
	// found is false when the ReplicaSet is not in the cache.
	found bool
	// deployment is the UID of the ReplicaSet's existing Deployment, if any.
	deployment types.UID
	// old is true when the Deployment has a ReplicaSet with a higher
	// deployment.kubernetes.io/revision: a rollout is retiring this one.
	old bool
}

// roleOf finds the ReplicaSet's Deployment and whether the ReplicaSet is an
// old one of it.
func (r *DeletionCostReconciler) roleOf(ctx context.Context, ns, name string, uid types.UID) (replicaSetRole, error) {
	var rs appsv1.ReplicaSet
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &rs); err != nil {
		if apierrors.IsNotFound(err) {
			return replicaSetRole{}, nil
		}
		return replicaSetRole{}, fmt.Errorf("reading ReplicaSet %s/%s: %w", ns, name, err)
	}
	if rs.UID != uid {
		return replicaSetRole{}, nil
	}
	dref, under := snapshot.CountedUnder(&rs)
	if !under {
		return replicaSetRole{found: true}, nil
	}
	var dep appsv1.Deployment
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: dref.Name}, &dep); err != nil {
		if apierrors.IsNotFound(err) {
			// An orphan about to be collected: ordered like a plain
			// ReplicaSet.
			return replicaSetRole{found: true}, nil
		}
		return replicaSetRole{}, fmt.Errorf("reading Deployment %s/%s: %w", ns, dref.Name, err)
	}
	if dep.UID != dref.UID {
		return replicaSetRole{found: true}, nil
	}
	role := replicaSetRole{found: true, deployment: dep.UID}
	var all appsv1.ReplicaSetList
	if err := r.Client.List(ctx, &all, client.InNamespace(ns)); err != nil {
		return replicaSetRole{}, fmt.Errorf("listing ReplicaSets of Deployment %s/%s: %w", ns, dep.Name, err)
	}
	mine := revisionOf(&rs)
	for i := range all.Items {
		s := &all.Items[i]
		if ref := metav1.GetControllerOfNoCopy(s); s.UID != rs.UID && ref != nil && ref.UID == dep.UID && revisionOf(s) > mine {
			role.old = true
			break
		}
	}
	return role, nil
}

func isTerminalPod(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// revisionOf reads a ReplicaSet's Deployment revision; a missing or bad one
// is 0, the oldest.
func revisionOf(rs *appsv1.ReplicaSet) int64 {
	v, err := strconv.ParseInt(rs.Annotations[snapshot.ReplicaSetRevision], 10, 64)
	if err != nil {
		return 0
	}
	return v
}

// apply patches the pods whose annotations differ from what the budget
// wants. Pods marked with the budget's name that are not selected any more,
// or have no cost, are released.
func (r *DeletionCostReconciler) apply(ctx context.Context, key types.NamespacedName, want desired) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	var marked corev1.PodList
	if err := r.Client.List(ctx, &marked, client.InNamespace(key.Namespace), client.MatchingFields{deletionCostBudgetIndex: key.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing pods marked by %s: %w", key, err)
	}
	pods := make(map[string]*corev1.Pod, len(want.selected)+len(marked.Items))
	for _, p := range want.selected {
		pods[p.Name] = p
	}
	for i := range marked.Items {
		pods[marked.Items[i].Name] = &marked.Items[i]
	}
	names := make([]string, 0, len(pods))
	for n := range pods {
		names = append(names, n)
	}
	sort.Strings(names)

	patched, conflicts := 0, 0
	for _, name := range names {
		p := pods[name]
		if p.DeletionTimestamp != nil || isTerminalPod(p) || want.undecided[name] {
			// Leaving anyway (a patch would be wasted), or not known yet.
			continue
		}
		var cost *int32
		if c, ok := want.costs[name]; ok {
			cost = &c
		}
		change := budget.DeletionCostPatch(p.Annotations, key.Name, cost)
		if change == nil {
			continue
		}
		if err := r.patch(ctx, p, change); err != nil {
			switch {
			case apierrors.IsNotFound(err):
				continue
			case apierrors.IsConflict(err):
				// The pod changed since the cache saw it; its watch
				// event brings us back with the new version.
				conflicts++
				continue
			}
			return ctrl.Result{}, fmt.Errorf("patching deletion cost of pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		patched++
		operatormetrics.DeletionCostPatches.WithLabelValues(key.Namespace, key.Name).Inc()
	}
	if patched > 0 || conflicts > 0 {
		logger.V(1).Info("pod deletion costs updated", "tdb", klog.KRef(key.Namespace, key.Name),
			"patched", patched, "conflicts", conflicts, "costed", len(want.costs))
	}
	if conflicts > 0 {
		return ctrl.Result{RequeueAfter: conflictRetry}, nil
	}
	return ctrl.Result{}, nil
}

// patch merges the annotation changes into the pod, on the condition that
// the pod is still at the version read: whether the pod was ours, or
// carried someone else's cost, was decided on that version.
func (r *DeletionCostReconciler) patch(ctx context.Context, p *corev1.Pod, annotations map[string]*string) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": p.ResourceVersion,
		"annotations":     annotations,
	}})
	if err != nil {
		return fmt.Errorf("encoding patch: %w", err)
	}
	return r.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, body))
}

// SetupWithManager registers the marker index and wires the reconciler:
// budgets, and the pods, nodes, ReplicaSets and Deployments that change the
// costs, each mapped to the budgets they concern.
func (r *DeletionCostReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Snapshots == nil {
		r.Snapshots = &snapshot.Gatherer{Cache: r.Client}
	}
	// A node's relabelling reaches the budgets through the pods on it.
	if err := snapshot.IndexPodsByNode(mgr); err != nil {
		return err
	}
	if err := snapshot.IndexPodsByLabel(mgr, r.Snapshots); err != nil {
		return err
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), &corev1.Pod{}, deletionCostBudgetIndex, func(o client.Object) []string {
		if b, ok := o.GetAnnotations()[budget.DeletionCostBudgetAnnotation]; ok && b != "" {
			return []string{b}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("indexing pods by deletion-cost budget: %w", err)
	}
	b := ctrl.NewControllerManagedBy(mgr).
		Named("deletioncost").
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		// A status write (the webhook's grants included), a spec change, a
		// deletion.
		Watches(&policyv1alpha1.TopologyDisruptionBudget{}, handler.EnqueueRequestsFromMapFunc(budgetItself),
			builder.WithPredicates(costInputsOfBudgetChanged{})).
		// A new ReplicaSet starts a rollout that may scale the old one down
		// within moments: its order is set at once.
		Watches(&appsv1.ReplicaSet{}, handler.EnqueueRequestsFromMapFunc(r.budgetsOfWorkload),
			builder.WithPredicates(replicaSetRevisionChanged{})).
		Watches(&appsv1.Deployment{}, handler.EnqueueRequestsFromMapFunc(r.budgetsOfWorkload),
			builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, createOrDelete())))
	if r.Passes != nil {
		// Pods, nodes and scales reach the costs through the status pass
		// they cause: the costs are computed once the allowances that
		// follow from the change are written. Only what the status does not
		// read is followed here: someone else changing a pod's cost or
		// marker.
		b = b.WatchesRawSource(r.Passes.source()).
			Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.budgetsOfPod),
				builder.WithPredicates(costAnnotationsChanged{}))
	} else {
		b = b.Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.budgetsOfPod),
			builder.WithPredicates(costInputsOfPodChanged{})).
			Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.budgetsOfNode),
				builder.WithPredicates(predicate.Or(predicate.LabelChangedPredicate{}, createOrDelete())))
	}
	return b.Complete(r)
}

func budgetItself(_ context.Context, obj client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(obj)}}
}

// orderingBudgets adds the budgets of ns with spec.rollout whose selector
// matches set.
func (r *DeletionCostReconciler) orderingBudgets(ctx context.Context, ns string, set labels.Set, into map[types.NamespacedName]struct{}) {
	matchingBudgets(ctx, r.Snapshots, ns, set, into, func(t *policyv1alpha1.TopologyDisruptionBudget) bool {
		return t.Spec.Rollout != nil && r.Snapshots.Coverage(t).Err() == nil
	})
}

// budgetsOfPod maps a pod to the budgets that order it and to the budget its
// marker names, which must release it when the others no longer match.
func (r *DeletionCostReconciler) budgetsOfPod(ctx context.Context, obj client.Object) []reconcile.Request {
	set := map[types.NamespacedName]struct{}{}
	r.orderingBudgets(ctx, obj.GetNamespace(), obj.GetLabels(), set)
	if b := obj.GetAnnotations()[budget.DeletionCostBudgetAnnotation]; b != "" {
		set[types.NamespacedName{Namespace: obj.GetNamespace(), Name: b}] = struct{}{}
	}
	return toRequests(set)
}

// budgetsOfNode maps a node's relabelling (a new domain, or leaving
// nodeSelectorTerm) to the budgets of the pods on it.
func (r *DeletionCostReconciler) budgetsOfNode(ctx context.Context, obj client.Object) []reconcile.Request {
	// A marked pod's budget, too: it may no longer cover the pod.
	return budgetsOfNodePods(ctx, r.Client, obj.GetName(), r.orderingBudgets, func(p *corev1.Pod) string {
		return p.Annotations[budget.DeletionCostBudgetAnnotation]
	})
}

// budgetsOfWorkload maps a ReplicaSet or Deployment to the budgets ordering
// its pods: a new ReplicaSet turns the others old.
func (r *DeletionCostReconciler) budgetsOfWorkload(ctx context.Context, obj client.Object) []reconcile.Request {
	set := map[types.NamespacedName]struct{}{}
	r.orderingBudgets(ctx, obj.GetNamespace(), snapshot.TemplateLabels(obj), set)
	return toRequests(set)
}

// costInputsOfBudgetChanged passes budget updates that change the costs:
// the spec, the domains' allowances, deletion.
type costInputsOfBudgetChanged struct{ predicate.Funcs }

func (costInputsOfBudgetChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*policyv1alpha1.TopologyDisruptionBudget)
	n, ok2 := e.ObjectNew.(*policyv1alpha1.TopologyDisruptionBudget)
	if !ok1 || !ok2 {
		return true
	}
	return o.Generation != n.Generation ||
		!equality.Semantic.DeepEqual(o.Status.Domains, n.Status.Domains) ||
		(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
}

// costInputsOfPodChanged passes pod updates that can change a cost or its
// ownership: what the status controller watches, plus the two annotations.
type costInputsOfPodChanged struct{ podChanged }

func (p costInputsOfPodChanged) Update(e event.UpdateEvent) bool {
	return p.podChanged.Update(e) || costAnnotationsChanged{}.Update(e)
}

// costAnnotationsChanged passes pod updates of the cost or its marker:
// someone removing or overwriting them. Creations and deletions reach the
// costs through the status pass.
type costAnnotationsChanged struct{ predicate.Funcs }

// Create passes marked pods: at start-up, the pods of a budget deleted
// while the operator was down reach its name, and are released.
func (costAnnotationsChanged) Create(e event.CreateEvent) bool {
	return e.Object.GetAnnotations()[budget.DeletionCostBudgetAnnotation] != ""
}

func (costAnnotationsChanged) Delete(event.DeleteEvent) bool { return false }

func (costAnnotationsChanged) Generic(event.GenericEvent) bool { return false }

func (costAnnotationsChanged) Update(e event.UpdateEvent) bool {
	o, n := e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()
	return o[budget.DeletionCostAnnotation] != n[budget.DeletionCostAnnotation] ||
		o[budget.DeletionCostBudgetAnnotation] != n[budget.DeletionCostBudgetAnnotation]
}

// replicaSetRevisionChanged passes ReplicaSet creations, deletions and
// changes of revision (a rollback re-numbers an old ReplicaSet) or owner.
type replicaSetRevisionChanged struct{ predicate.Funcs }

func (replicaSetRevisionChanged) Create(event.CreateEvent) bool { return true }

func (replicaSetRevisionChanged) Delete(event.DeleteEvent) bool { return true }

func (replicaSetRevisionChanged) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetAnnotations()[snapshot.ReplicaSetRevision] != e.ObjectNew.GetAnnotations()[snapshot.ReplicaSetRevision] ||
		!reflect.DeepEqual(e.ObjectOld.GetOwnerReferences(), e.ObjectNew.GetOwnerReferences())
}
