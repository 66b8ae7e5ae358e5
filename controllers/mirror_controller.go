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
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
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

// MirrorReconciler keeps, for each budget with
// spec.mirrorPodDisruptionBudgets: PerDomain, one policy/v1
// PodDisruptionBudget per domain (budget.MirrorDomains says what each must
// say), the domain label its mirrors select covered pods by
// (budget.MirrorDomainKey), and the Mirrored condition. It owns the
// mirrors, the label and the condition, nothing else: the eviction webhook
// decides evictions whatever the mirrors say.
//
// A budget never puts a pod under a second PodDisruptionBudget, not even for
// a moment: when a covered pod, labelled with its domain, would be selected
// by a PDB the budget does not own, the budget mirrors nothing
// (Mirrored=False, PDBConflict). Between two mirrored budgets selecting the
// same pods the younger yields (creation time, then name) to the older
// budget itself, mirrors or not, so the two cannot take turns, and the
// older creates its mirrors only once the younger's are gone. Within one
// budget, a mirror whose domain went (a key removed, the domain "all"
// appearing or leaving) or whose selector changes is deleted before any
// mirror is created, and no mirror is created or updated while another PDB
// still selects one of its pods.
type MirrorReconciler struct {
	// Client reads from the manager's cache and writes to the API server.
	Client client.Client
	// LiveReader reads a budget after a status write conflict.
	LiveReader client.Reader
	// Recorder emits events on budgets.
	Recorder events.EventRecorder
	// Clock stamps the condition.
	Clock clock.PassiveClock
	// OperatorNamespace is the operator's own namespace, whose budgets are
	// not enforced: nothing is mirrored there either.
	OperatorNamespace string
	// Versions is the record of budget versions shared by the process's
	// status writers.
	Versions *budgetstatus.Versions
	// Snapshots gathers a budget's pods and nodes from the cache.
	Snapshots *snapshot.Gatherer
}

// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch;create;update;delete
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets/status,verbs=update
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;patch
// +kubebuilder:rbac:groups=policy.tdb.dev,resources=topologydisruptionbudgets/status,verbs=get;update

// Reconcile brings one budget's mirrors, its pods' domain labels and its
// Mirrored condition to what its spec and status say.
func (r *MirrorReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var cached policyv1alpha1.TopologyDisruptionBudget
	if err := r.Client.Get(ctx, req.NamespacedName, &cached); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, fmt.Errorf("reading budget %s: %w", req.NamespacedName, err)
		}
		return ctrl.Result{}, r.removeMirrorsOfGone(ctx, req)
	}
	tdb := r.Versions.Newest(&cached)
	if !tdb.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.removeOwned(ctx, tdb, nil)
	}
	if tdb.Spec.MirrorPodDisruptionBudgets != policyv1alpha1.MirrorPerDomain {
		if err := r.removeOwned(ctx, tdb, nil); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.setCondition(ctx, tdb, nil)
	}
	if r.OperatorNamespace != "" && tdb.Namespace == r.OperatorNamespace {
		return ctrl.Result{}, r.notMirrored(ctx, tdb, policyv1alpha1.ReasonMirrorNotEnforced,
			"the budget is in the operator's own namespace and not enforced; no PodDisruptionBudget enforces it either", nil)
	}
	snap, err := r.Snapshots.Snapshot(ctx, tdb)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := snap.Coverage.Err(); err != nil {
		return ctrl.Result{}, r.notMirrored(ctx, tdb, policyv1alpha1.ReasonMirrorFailed,
			"the budget's spec cannot be evaluated: "+err.Error(), nil)
	}
	if tdb.Status.ObservedGeneration != tdb.Generation {
		// The status controller has not computed this spec yet; its write
		// brings us back.
		return ctrl.Result{}, nil
	}

	if n := len(tdb.Status.Domains); n > budget.MaxMirroredDomains {
		return ctrl.Result{}, r.notMirrored(ctx, tdb, policyv1alpha1.ReasonTooManyDomains, fmt.Sprintf(
			"the budget has %d domains and at most %d are mirrored (one PodDisruptionBudget each); the eviction webhook enforces it, planners that read PodDisruptionBudgets alone do not see it",
			n, budget.MaxMirroredDomains), nil)
	}
	key, operatorLabels := budget.MirrorDomainKey(&tdb.Spec)
	covered, uncovered, err := r.place(snap)
	if err != nil {
		return ctrl.Result{}, err
	}
	var pdbs policyv1.PodDisruptionBudgetList
	if err := r.Client.List(ctx, &pdbs, client.InNamespace(tdb.Namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("listing PodDisruptionBudgets of %s: %w", tdb.Namespace, err)
	}
	checked := checkedPods(tdb, key, operatorLabels, covered, uncovered)
	if c, err := r.conflict(ctx, tdb, key, checked, pdbs.Items); err != nil {
		return ctrl.Result{}, err
	} else if c != "" {
		return ctrl.Result{}, r.notMirrored(ctx, tdb, policyv1alpha1.ReasonPDBConflict, c, pdbs.Items)
	}

	if err := r.label(ctx, key, operatorLabels, covered, uncovered, tdb); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.clearReplacedDisruptions(ctx, tdb, snap, pdbs.Items); err != nil {
		return ctrl.Result{}, err
	}
	return r.mirror(ctx, tdb, key, checked, pdbs.Items)
}

// removeMirrorsOfGone removes the mirrors of a budget that is gone. The
// garbage collector removes them through their owner reference; so do we,
// for clusters (and tests) without one.
func (r *MirrorReconciler) removeMirrorsOfGone(ctx context.Context, req ctrl.Request) error {
	return r.removeMirrors(ctx, req.Namespace, func(p *policyv1.PodDisruptionBudget) bool {
		ref := metav1.GetControllerOfNoCopy(p)
		return ref != nil && ref.Kind == "TopologyDisruptionBudget" && ref.Name == req.Name
	}, nil)
}

// checkedPods are the pods whose domain label the mirrors select: the
// covered ones, and, when the operator writes the labels, the selected pods
// outside the term that carry one of the budget's domains. Its mirrors
// select those until label() strips the value; a PDB the budget does not
// own selecting them means the value is another budget's, and stripping it
// would take turns with that one.
func checkedPods(tdb *policyv1alpha1.TopologyDisruptionBudget, key string, operatorLabels bool, covered, uncovered []placedPod) []placedPod {
	if !operatorLabels {
		return covered
	}
	domains := map[string]bool{}
	for _, d := range tdb.Status.Domains {
		domains[d.Name] = true
	}
	checked := append([]placedPod(nil), covered...)
	for _, u := range uncovered {
		if v, ok := u.pod.Labels[key]; ok && domains[v] {
			checked = append(checked, placedPod{pod: u.pod, domain: v})
		}
	}
	return checked
}

// mirror brings the mirrors to one per domain and sets the Mirrored
// condition. A conflict, or a mirror held back while another
// PodDisruptionBudget still selects its pods, is retried quietly; any
// other failure is reported in the condition.
func (r *MirrorReconciler) mirror(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, key string, checked []placedPod, pdbs []policyv1.PodDisruptionBudget) (ctrl.Result, error) {
	if err := r.ensureMirrors(ctx, tdb, key, checked, pdbs); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) || errors.Is(err, errMirrorOverlap) {
			return ctrl.Result{RequeueAfter: conflictRetry}, nil
		}
		if werr := r.setCondition(ctx, tdb, &metav1.Condition{Status: metav1.ConditionFalse,
			Reason: policyv1alpha1.ReasonMirrorFailed, Message: err.Error()}); werr != nil {
			log.FromContext(ctx).Error(werr, "writing the Mirrored condition", "tdb", klog.KObj(tdb))
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, r.setCondition(ctx, tdb, &metav1.Condition{Status: metav1.ConditionTrue, Reason: policyv1alpha1.ReasonMirrored,
		Message: fmt.Sprintf("one PodDisruptionBudget per domain (%d), labelled %s=%s", len(tdb.Status.Domains),
			budget.MirrorBudgetLabel, budget.MirrorBudgetLabelValue(tdb.Name))})
}

// placedPod is a selected pod and its domain.
type placedPod struct {
	pod    *corev1.Pod
	domain string
}

// place splits the budget's live pods into those it covers in a domain and
// those it selects without covering (outside nodeSelectorTerm). Unscheduled
// and terminal pods are neither: no PodDisruptionBudget protects them.
func (r *MirrorReconciler) place(snap *snapshot.Snapshot) (covered, uncovered []placedPod, err error) {
	for _, p := range snap.Pods {
		if p.Spec.NodeName == "" || isTerminalPod(p) {
			continue
		}
		pl, perr := snap.Place(p)
		switch {
		case perr != nil || pl.NodeGone:
			// No domain known (the status reports it): the pod is left
			// as it is.
			continue
		case pl.Covered && pl.Domain != "":
			covered = append(covered, placedPod{pod: p, domain: pl.Domain})
		case !pl.Covered:
			uncovered = append(uncovered, placedPod{pod: p})
		}
	}
	if err := snap.Nodes.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading nodes for %s: %w", klog.KObj(snap.Budget), err)
	}
	// By name: a conflict names the same pod on every pass.
	sort.Slice(covered, func(i, j int) bool { return covered[i].pod.Name < covered[j].pod.Name })
	return covered, uncovered, nil
}

// conflict names the first PodDisruptionBudget the budget does not own that
// selects, or would select once labelled with its domain, a covered pod; ""
// when there is none. Another mirrored budget's mirror counts only if that
// budget is older: a younger one yields to this one.
func (r *MirrorReconciler) conflict(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, key string,
	covered []placedPod, pdbs []policyv1.PodDisruptionBudget) (string, error) {
	sort.Slice(pdbs, func(i, j int) bool { return pdbs[i].Name < pdbs[j].Name })
	if c, err := r.olderBudgetSelecting(ctx, tdb, covered); err != nil || c != "" {
		return c, err
	}
	for i := range pdbs {
		pdb := &pdbs[i]
		if isMirrorOf(pdb, tdb) {
			continue
		}
		if yields, err := r.yieldsTo(ctx, tdb, pdb); err != nil || !yields {
			if err != nil {
				return "", err
			}
			continue
		}
		// A nil selector selects nothing, an empty one everything (as the
		// eviction API reads them); one that does not parse, nothing.
		sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
		if err != nil {
			continue
		}
		for _, c := range covered {
			set := labels.Set(c.pod.Labels)
			if key != "" {
				set = labels.Merge(set, labels.Set{key: c.domain})
			}
			// Selected now (say by another budget's value of the label),
			// or once labelled with ours: either puts it under two.
			if sel.Matches(set) || sel.Matches(labels.Set(c.pod.Labels)) {
				return fmt.Sprintf("pod %s is selected by PodDisruptionBudget %s, which this budget does not own; the eviction API refuses a pod under two, so nothing is mirrored (make the selectors disjoint, or delete that PodDisruptionBudget)",
					c.pod.Name, pdb.Name), nil
			}
		}
	}
	return "", nil
}

// olderBudgetSelecting names the first older mirrored budget of the
// namespace whose selector may select a covered pod; "" when there is none.
// The younger yields to the budget, not to its mirrors: the older one
// creates its mirrors only once the younger's are gone (ensureMirrors), so
// waiting for them would wait for ever.
func (r *MirrorReconciler) olderBudgetSelecting(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, covered []placedPod) (string, error) {
	var tdbs policyv1alpha1.TopologyDisruptionBudgetList
	if err := r.Client.List(ctx, &tdbs, client.InNamespace(tdb.Namespace)); err != nil {
		return "", fmt.Errorf("listing budgets of %s: %w", tdb.Namespace, err)
	}
	sort.Slice(tdbs.Items, func(i, j int) bool { return tdbs.Items[i].Name < tdbs.Items[j].Name })
	for i := range tdbs.Items {
		other := &tdbs.Items[i]
		if other.UID == tdb.UID || other.Spec.MirrorPodDisruptionBudgets != policyv1alpha1.MirrorPerDomain ||
			!other.DeletionTimestamp.IsZero() || !olderThan(other, tdb) {
			continue
		}
		cov := r.Snapshots.Coverage(other)
		for _, c := range covered {
			if cov.MightSelect(c.pod.Namespace, labels.Set(c.pod.Labels)) {
				return fmt.Sprintf("pod %s is also selected by budget %s, which is older and mirrored; the eviction API refuses a pod under two PodDisruptionBudgets, so this budget mirrors nothing (make the selectors disjoint, or turn mirroring off on one)",
					c.pod.Name, other.Name), nil
			}
		}
	}
	return "", nil
}

// olderThan orders budgets by creation time, then name.
func olderThan(a, b *policyv1alpha1.TopologyDisruptionBudget) bool {
	x, y := a.CreationTimestamp.Time, b.CreationTimestamp.Time
	return x.Before(y) || (x.Equal(y) && a.Name < b.Name)
}

// yieldsTo says whether tdb gives way to the PodDisruptionBudget: always to
// one that is not a mirror; to another budget's mirror only if that budget
// still exists and is older (creation time, then name).
func (r *MirrorReconciler) yieldsTo(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, pdb *policyv1.PodDisruptionBudget) (bool, error) {
	ref := metav1.GetControllerOfNoCopy(pdb)
	if ref == nil || ref.Kind != "TopologyDisruptionBudget" || ref.APIVersion != policyv1alpha1.GroupVersion.String() {
		return true, nil
	}
	var other policyv1alpha1.TopologyDisruptionBudget
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: pdb.Namespace, Name: ref.Name}, &other); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil // an orphan on its way out
		}
		return false, fmt.Errorf("reading budget %s/%s: %w", pdb.Namespace, ref.Name, err)
	}
	if other.UID != ref.UID || other.Spec.MirrorPodDisruptionBudgets != policyv1alpha1.MirrorPerDomain {
		return false, nil // its owner removes it
	}
	return olderThan(&other, tdb), nil
}

func isMirrorOf(pdb *policyv1.PodDisruptionBudget, tdb *policyv1alpha1.TopologyDisruptionBudget) bool {
	ref := metav1.GetControllerOfNoCopy(pdb)
	return ref != nil && ref.UID == tdb.UID
}

// label gives each covered pod the domain label its mirror selects it by,
// and, for the operator's own label, takes it off selected pods the budget
// does not cover whose value one of its mirrors would select.
func (r *MirrorReconciler) label(ctx context.Context, key string, operatorLabels bool, covered, uncovered []placedPod,
	tdb *policyv1alpha1.TopologyDisruptionBudget) error {
	if key == "" {
		return nil
	}
	for _, c := range covered {
		if v, ok := c.pod.Labels[key]; ok && v == c.domain {
			continue
		}
		d := c.domain
		if err := r.patchLabel(ctx, c.pod, key, &d); err != nil {
			return err
		}
	}
	if !operatorLabels {
		return nil
	}
	domains := map[string]bool{}
	for _, d := range tdb.Status.Domains {
		domains[d.Name] = true
	}
	for _, u := range uncovered {
		if v, ok := u.pod.Labels[key]; ok && domains[v] {
			if err := r.patchLabel(ctx, u.pod, key, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

// patchLabel sets (or, with a nil value, removes) one label of the pod, on
// the version read.
func (r *MirrorReconciler) patchLabel(ctx context.Context, p *corev1.Pod, key string, value *string) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": p.ResourceVersion,
		"labels":          map[string]*string{key: value},
	}})
	if err != nil {
		return fmt.Errorf("encoding patch: %w", err)
	}
	err = r.Client.Patch(ctx, p.DeepCopy(), client.RawPatch(types.MergePatchType, body))
	switch {
	case err == nil:
		operatormetrics.MirrorWrites.WithLabelValues("label").Inc()
		return nil
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		// The pod changed; its event brings us back.
		return nil
	}
	return fmt.Errorf("labelling pod %s/%s with its domain: %w", p.Namespace, p.Name, err)
}

// errMirrorOverlap says a mirror was not created because another
// PodDisruptionBudget still selects one of its pods (one being removed).
var errMirrorOverlap = errors.New("another PodDisruptionBudget still selects a pod of the mirror")

// ensureMirrors brings the budget's mirrors to one per domain of the status.
// No pod is ever under two PodDisruptionBudgets on the way: first the
// mirrors of domains the budget no longer has, and those whose selector
// changes, are deleted; then each mirror is created or updated, unless a
// PodDisruptionBudget left (another budget's that must yield first, or one
// whose deletion is not confirmed) selects one of its pods, now or once
// labelled (pods: the covered pods with their domains).
func (r *MirrorReconciler) ensureMirrors(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, key string,
	pods []placedPod, pdbs []policyv1.PodDisruptionBudget) error {
	wanted := budget.MirrorDomains(&tdb.Spec, &tdb.Status)
	next := make(map[string]*policyv1.PodDisruptionBudget, len(wanted))
	for _, m := range wanted {
		p := mirrorOf(tdb, key, m)
		next[p.Name] = p
	}
	have := map[string]*policyv1.PodDisruptionBudget{}
	var stale, others []*policyv1.PodDisruptionBudget
	for i := range pdbs {
		p := &pdbs[i]
		switch n, ok := next[p.Name]; {
		case !isMirrorOf(p, tdb):
			others = append(others, p)
		case !ok || !equality.Semantic.DeepEqual(p.Spec.Selector, n.Spec.Selector):
			stale = append(stale, p)
		default:
			have[p.Name] = p
		}
	}
	if err := r.deleteMirrors(ctx, stale); err != nil {
		return err
	}
	var errs []error
	for _, m := range wanted {
		next := next[budget.MirrorName(tdb.Name, m.Domain)]
		cur, ok := have[next.Name]
		if !ok || !equality.Semantic.DeepEqual(cur.Spec.Selector, next.Spec.Selector) {
			if p, other := overlap(next, key, pods, others, have); p != "" {
				log.FromContext(ctx).V(1).Info("mirror waits for another PodDisruptionBudget to go", "tdb", klog.KObj(tdb),
					"mirror", next.Name, "pod", p, "pdb", other)
				errs = append(errs, fmt.Errorf("PodDisruptionBudget %s/%s: %w (pod %s, PodDisruptionBudget %s)", next.Namespace, next.Name, errMirrorOverlap, p, other))
				continue
			}
		}
		switch {
		case !ok:
			if err := r.Client.Create(ctx, next); err != nil {
				errs = append(errs, fmt.Errorf("creating PodDisruptionBudget %s/%s: %w", next.Namespace, next.Name, err))
				continue
			}
			operatormetrics.MirrorWrites.WithLabelValues("create").Inc()
		case !equality.Semantic.DeepEqual(cur.Spec, next.Spec) || !equality.Semantic.DeepEqual(cur.Labels, next.Labels):
			upd := cur.DeepCopy()
			upd.Spec = next.Spec
			upd.Labels = next.Labels
			if err := r.Client.Update(ctx, upd); err != nil {
				errs = append(errs, fmt.Errorf("updating PodDisruptionBudget %s/%s: %w", upd.Namespace, upd.Name, err))
				continue
			}
			operatormetrics.MirrorWrites.WithLabelValues("update").Inc()
		}
	}
	return errors.Join(errs...)
}

// deleteMirrors deletes the given mirrors, each on the version read, and
// fails unless every one is gone: a mirror that is to be replaced must be
// gone before its replacement exists.
func (r *MirrorReconciler) deleteMirrors(ctx context.Context, pdbs []*policyv1.PodDisruptionBudget) error {
	for _, p := range pdbs {
		err := r.Client.Delete(ctx, p, client.Preconditions{UID: &p.UID, ResourceVersion: &p.ResourceVersion})
		switch {
		case err == nil:
			operatormetrics.MirrorWrites.WithLabelValues("delete").Inc()
		case apierrors.IsNotFound(err):
		default:
			// Changed since read (its event brings us back), or failed:
			// nothing is created over it.
			return fmt.Errorf("deleting PodDisruptionBudget %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

// overlap names a pod the mirror would select that a PodDisruptionBudget
// other than the mirror's current version also selects, and that
// PodDisruptionBudget; "" when there is none. A pod is taken with its labels
// as they are now and as label() makes them (its domain under key), each
// state on its own: a pod relabelled from one domain to another is never
// selected by both domains' mirrors at once.
func overlap(mirror *policyv1.PodDisruptionBudget, key string, pods []placedPod, others []*policyv1.PodDisruptionBudget,
	own map[string]*policyv1.PodDisruptionBudget) (pod, pdb string) {
	mine, err := metav1.LabelSelectorAsSelector(mirror.Spec.Selector)
	if err != nil {
		return "", ""
	}
	var rest []*policyv1.PodDisruptionBudget
	rest = append(rest, others...)
	for name, p := range own {
		if name != mirror.Name {
			rest = append(rest, p)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].Name < rest[j].Name })
	for _, c := range pods {
		now := labels.Set(c.pod.Labels)
		then := now
		if key != "" {
			then = labels.Merge(now, labels.Set{key: c.domain})
		}
		for _, o := range rest {
			// A nil selector selects nothing, as the eviction API reads it;
			// one that does not parse, nothing either.
			sel, err := metav1.LabelSelectorAsSelector(o.Spec.Selector)
			if err != nil || o.Spec.Selector == nil {
				continue
			}
			if (mine.Matches(now) && sel.Matches(now)) || (mine.Matches(then) && sel.Matches(then)) {
				return c.pod.Name, o.Name
			}
		}
	}
	return "", ""
}

// clearReplacedDisruptions drops, from the status of the budget's mirrors,
// the evictions core recorded (status.disruptedPods, by pod name) whose pod
// has since been replaced by a new pod of the same name, created at or
// after the eviction and not being deleted. The disruption controller keeps
// such an entry until it has seen the evicted pod being deleted, or for two
// minutes: when the pod went, and its replacement came, faster than it
// looked (a StatefulSet pod deleted without a grace period), it counts the
// replacement as disrupted, and the mirror refuses evictions the budget
// allows, for up to two minutes after each one. The evicted pod is gone; its
// entry says nothing true any more. The disruption controller recomputes
// the mirror's status from the update.
func (r *MirrorReconciler) clearReplacedDisruptions(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget,
	snap *snapshot.Snapshot, pdbs []policyv1.PodDisruptionBudget) error {
	byName := make(map[string]*corev1.Pod, len(snap.Pods))
	for _, p := range snap.Pods {
		byName[p.Name] = p
	}
	for i := range pdbs {
		pdb := &pdbs[i]
		if !isMirrorOf(pdb, tdb) || len(pdb.Status.DisruptedPods) == 0 {
			continue
		}
		var stale []string
		for name, at := range pdb.Status.DisruptedPods {
			if p := byName[name]; p != nil && p.DeletionTimestamp == nil && !p.CreationTimestamp.Before(&at) {
				stale = append(stale, name)
			}
		}
		if len(stale) == 0 {
			continue
		}
		next := pdb.DeepCopy()
		for _, name := range stale {
			delete(next.Status.DisruptedPods, name)
		}
		err := r.Client.Status().Update(ctx, next)
		switch {
		case err == nil:
			operatormetrics.MirrorWrites.WithLabelValues("status").Inc()
		case apierrors.IsConflict(err), apierrors.IsNotFound(err):
			// The disruption controller wrote first; its update brings us
			// back.
		default:
			return fmt.Errorf("clearing replaced pods from PodDisruptionBudget %s/%s: %w", pdb.Namespace, pdb.Name, err)
		}
	}
	return nil
}

// mirrorOf is the PodDisruptionBudget of one domain.
func mirrorOf(tdb *policyv1alpha1.TopologyDisruptionBudget, key string, m budget.MirrorDomain) *policyv1.PodDisruptionBudget {
	sel := tdb.Spec.Selector.AsMeta()
	if sel == nil {
		sel = &metav1.LabelSelector{}
	}
	if key != "" {
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: key, Operator: metav1.LabelSelectorOpIn, Values: []string{m.Domain}})
	}
	minAvailable := intstr.FromInt32(m.MinAvailable)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: tdb.Namespace,
			Name:      budget.MirrorName(tdb.Name, m.Domain),
			Labels: map[string]string{
				budget.MirrorBudgetLabel: budget.MirrorBudgetLabelValue(tdb.Name),
			},
			OwnerReferences: []metav1.OwnerReference{ownerRef(tdb)},
		},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel, MinAvailable: &minAvailable},
	}
	if errs := validation.IsValidLabelValue(m.Domain); len(errs) == 0 {
		pdb.Labels[budget.DomainLabel] = m.Domain
	}
	if p := tdb.Spec.UnhealthyPodEvictionPolicy; p != "" {
		policy := policyv1.UnhealthyPodEvictionPolicyType(p)
		pdb.Spec.UnhealthyPodEvictionPolicy = &policy
	}
	return pdb
}

// ownerRef makes the budget a mirror's controller, for the garbage
// collector. Without blockOwnerDeletion, which would need update on the
// budgets' finalizers where OwnerReferencesPermissionEnforcement runs: a
// budget's foreground deletion need not wait for its mirrors.
func ownerRef(tdb *policyv1alpha1.TopologyDisruptionBudget) metav1.OwnerReference {
	ref := metav1.NewControllerRef(tdb, policyv1alpha1.GroupVersion.WithKind("TopologyDisruptionBudget"))
	ref.BlockOwnerDeletion = nil
	return *ref
}

// removeOwned deletes every mirror of the budget.
func (r *MirrorReconciler) removeOwned(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, pdbs []policyv1.PodDisruptionBudget) error {
	return r.removeMirrors(ctx, tdb.Namespace, func(p *policyv1.PodDisruptionBudget) bool { return isMirrorOf(p, tdb) }, pdbs)
}

// removeMirrors deletes the PodDisruptionBudgets of ns that carry the mirror
// label and that which picks, each on the version read; pdbs, when not
// nil, are the namespace's PDBs already listed.
func (r *MirrorReconciler) removeMirrors(ctx context.Context, ns string, which func(*policyv1.PodDisruptionBudget) bool, pdbs []policyv1.PodDisruptionBudget) error {
	if pdbs == nil {
		var list policyv1.PodDisruptionBudgetList
		if err := r.Client.List(ctx, &list, client.InNamespace(ns), client.HasLabels{budget.MirrorBudgetLabel}); err != nil {
			return fmt.Errorf("listing mirrored PodDisruptionBudgets of %s: %w", ns, err)
		}
		pdbs = list.Items
	}
	var errs []error
	for i := range pdbs {
		p := &pdbs[i]
		if _, mirror := p.Labels[budget.MirrorBudgetLabel]; !mirror || !which(p) {
			continue
		}
		err := r.Client.Delete(ctx, p, client.Preconditions{UID: &p.UID, ResourceVersion: &p.ResourceVersion})
		switch {
		case err == nil:
			operatormetrics.MirrorWrites.WithLabelValues("delete").Inc()
		case apierrors.IsNotFound(err):
		case apierrors.IsConflict(err):
			// Changed since read: its event brings us back.
		default:
			errs = append(errs, fmt.Errorf("deleting PodDisruptionBudget %s/%s: %w", p.Namespace, p.Name, err))
		}
	}
	return errors.Join(errs...)
}

// notMirrored removes the budget's mirrors and says why in its condition;
// an event is emitted when the reason is new.
func (r *MirrorReconciler) notMirrored(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, reason, msg string, pdbs []policyv1.PodDisruptionBudget) error {
	if err := r.removeOwned(ctx, tdb, pdbs); err != nil {
		return err
	}
	prev := apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionMirrored)
	if r.Recorder != nil && reason == policyv1alpha1.ReasonPDBConflict &&
		(prev == nil || prev.Reason != reason || prev.Message != msg) {
		r.Recorder.Eventf(tdb, nil, corev1.EventTypeWarning, policyv1alpha1.EventReasonPDBConflict, "Mirror", "%s", msg)
	}
	return r.setCondition(ctx, tdb, &metav1.Condition{Status: metav1.ConditionFalse, Reason: reason, Message: msg})
}

// setCondition writes the Mirrored condition (nil: removes it) when it
// changes, on the newest version of the budget.
func (r *MirrorReconciler) setCondition(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, c *metav1.Condition) error {
	now := time.Now()
	if r.Clock != nil {
		now = r.Clock.Now()
	}
	w := &budgetstatus.Writer{Name: budgetstatus.WriterMirror, Client: r.Client, Live: r.LiveReader, Versions: r.Versions}
	_, err := w.Update(ctx, tdb, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		if c == nil {
			if apimeta.FindStatusCondition(base.Status.Conditions, policyv1alpha1.ConditionMirrored) == nil {
				return nil, nil
			}
			apimeta.RemoveStatusCondition(&base.Status.Conditions, policyv1alpha1.ConditionMirrored)
			return base, nil
		}
		next := *c
		next.Type = policyv1alpha1.ConditionMirrored
		next.ObservedGeneration = base.Generation
		next.LastTransitionTime = metav1.NewTime(now)
		if prev := apimeta.FindStatusCondition(base.Status.Conditions, next.Type); prev != nil &&
			prev.Status == next.Status && prev.Reason == next.Reason && prev.Message == next.Message &&
			prev.ObservedGeneration == next.ObservedGeneration {
			return nil, nil
		}
		apimeta.SetStatusCondition(&base.Status.Conditions, next)
		return base, nil
	})
	if errors.Is(err, budgetstatus.ErrGone) {
		return nil
	}
	return err
}

// SetupWithManager wires the reconciler: mirrored budgets; their mirrors
// (someone changing or deleting one); other PodDisruptionBudgets, which may
// conflict; pods bound, relabelled or deleted; nodes relabelled.
func (r *MirrorReconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Snapshots == nil {
		r.Snapshots = &snapshot.Gatherer{Cache: r.Client}
	}
	if err := snapshot.IndexPodsByNode(mgr); err != nil {
		return err
	}
	if err := snapshot.IndexPodsByLabel(mgr, r.Snapshots); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("mirror").
		WithOptions(controller.Options{MaxConcurrentReconciles: 2}).
		For(&policyv1alpha1.TopologyDisruptionBudget{}, builder.WithPredicates(mirrorInputsOfBudgetChanged{})).
		// Another budget of the namespace created, deleted, or turning
		// mirroring on or off: a younger budget over the same pods yields
		// to an older one, and the older one waits for its mirrors to go.
		Watches(&policyv1alpha1.TopologyDisruptionBudget{}, handler.EnqueueRequestsFromMapFunc(r.mirroredBudgetsOfNamespace),
			builder.WithPredicates(mirroringOfBudgetChanged{})).
		Owns(&policyv1.PodDisruptionBudget{}).
		// Every PDB of the namespace, other budgets' mirrors included: an
		// older budget's new mirror makes a younger one yield, and its
		// removal lets the younger one mirror again.
		Watches(&policyv1.PodDisruptionBudget{}, handler.EnqueueRequestsFromMapFunc(r.mirroredBudgetsOfNamespace)).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.budgetsOfPod),
			builder.WithPredicates(mirrorInputsOfPodChanged{})).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.budgetsOfNode),
			builder.WithPredicates(predicate.LabelChangedPredicate{})).
		Complete(r)
}

// mirroring keeps the budgets that are, or were, mirrored.
func mirroring(t *policyv1alpha1.TopologyDisruptionBudget) bool {
	return t.Spec.MirrorPodDisruptionBudgets == policyv1alpha1.MirrorPerDomain ||
		apimeta.FindStatusCondition(t.Status.Conditions, policyv1alpha1.ConditionMirrored) != nil
}

func (r *MirrorReconciler) mirroredBudgetsOfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	var tdbs policyv1alpha1.TopologyDisruptionBudgetList
	if err := r.Client.List(ctx, &tdbs, client.InNamespace(obj.GetNamespace()), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "listing budgets to map an event", "namespace", obj.GetNamespace())
		return nil
	}
	var out []reconcile.Request
	for i := range tdbs.Items {
		if mirroring(&tdbs.Items[i]) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&tdbs.Items[i])})
		}
	}
	return out
}

func (r *MirrorReconciler) mirroredBudgets(ctx context.Context, ns string, set labels.Set, into map[types.NamespacedName]struct{}) {
	matchingBudgets(ctx, r.Snapshots, ns, set, into, mirroring)
}

func (r *MirrorReconciler) budgetsOfPod(ctx context.Context, obj client.Object) []reconcile.Request {
	set := map[types.NamespacedName]struct{}{}
	r.mirroredBudgets(ctx, obj.GetNamespace(), obj.GetLabels(), set)
	return toRequests(set)
}

func (r *MirrorReconciler) budgetsOfNode(ctx context.Context, obj client.Object) []reconcile.Request {
	return budgetsOfNodePods(ctx, r.Client, obj.GetName(), r.mirroredBudgets, nil)
}

// mirrorInputsOfBudgetChanged passes budget updates that change a mirror:
// the spec, the domains, the Mirrored condition (someone else's write may
// have dropped it), deletion.
type mirrorInputsOfBudgetChanged struct{ predicate.Funcs }

func (mirrorInputsOfBudgetChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*policyv1alpha1.TopologyDisruptionBudget)
	n, ok2 := e.ObjectNew.(*policyv1alpha1.TopologyDisruptionBudget)
	if !ok1 || !ok2 {
		return true
	}
	if !mirroring(o) && !mirroring(n) {
		return false
	}
	return o.Generation != n.Generation || o.Status.ObservedGeneration != n.Status.ObservedGeneration ||
		!equality.Semantic.DeepEqual(budget.MirrorDomains(&o.Spec, &o.Status), budget.MirrorDomains(&n.Spec, &n.Status)) ||
		!equality.Semantic.DeepEqual(apimeta.FindStatusCondition(o.Status.Conditions, policyv1alpha1.ConditionMirrored),
			apimeta.FindStatusCondition(n.Status.Conditions, policyv1alpha1.ConditionMirrored)) ||
		(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil)
}

// mirroringOfBudgetChanged passes budget creations and deletions, and
// updates of the spec (mirroring, selector) or of deletion.
type mirroringOfBudgetChanged struct{ predicate.Funcs }

func (mirroringOfBudgetChanged) Update(e event.UpdateEvent) bool {
	return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() ||
		(e.ObjectOld.GetDeletionTimestamp() == nil) != (e.ObjectNew.GetDeletionTimestamp() == nil)
}

// mirrorInputsOfPodChanged passes pod creations and deletions, and updates
// of labels (the domain label included) or node.
type mirrorInputsOfPodChanged struct{ predicate.Funcs }

func (mirrorInputsOfPodChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*corev1.Pod)
	n, ok2 := e.ObjectNew.(*corev1.Pod)
	if !ok1 || !ok2 {
		return true
	}
	return o.Spec.NodeName != n.Spec.NodeName || !equality.Semantic.DeepEqual(o.Labels, n.Labels) ||
		o.Status.Phase != n.Status.Phase
}
