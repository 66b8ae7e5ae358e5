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

package budget

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// MaxDisruptedPods bounds status.disruptedPods, as policy/v1 bounds its map:
// past it, evictions are refused until the status controller catches up.
const MaxDisruptedPods = 2000

// Reason says why an eviction was decided as it was. Refusal messages,
// the decision metric's label and refusal events are built from it, so the
// set is closed: the Decision* constants below, and the admission-level
// Reason* constants of the webhook.
type Reason string

// Reasons of eviction decisions.
const (
	// DecisionCharged: allowed and recorded against the budget.
	DecisionCharged Reason = "Charged"
	// DecisionPodNotRunning: pending, terminal or deleting pods pass.
	DecisionPodNotRunning Reason = "PodNotRunning"
	// DecisionUnhealthyPod: a not-Ready pod passes under the
	// unhealthyPodEvictionPolicy without a charge.
	DecisionUnhealthyPod Reason = "UnhealthyPod"
	// DecisionAlreadyRecorded: the pod's eviction was granted before; it is
	// not charged twice.
	DecisionAlreadyRecorded Reason = "AlreadyRecorded"
	// DecisionStaleStatus: status.observedGeneration is behind the spec.
	DecisionStaleStatus Reason = "StaleStatus"
	// DecisionBlocked: the status controller could not compute the budget.
	DecisionBlocked Reason = "Blocked"
	// DecisionUnknownDomain: the pod's domain has no row in status yet.
	DecisionUnknownDomain Reason = "UnknownDomain"
	// DecisionInsufficientPods: the domain has no healthy pod to spare.
	DecisionInsufficientPods Reason = "InsufficientPods"
	// DecisionMaxDisruptedDomains: too many other domains are disrupted.
	DecisionMaxDisruptedDomains Reason = "MaxDisruptedDomains"
	// DecisionContended: the budget's status kept changing under the
	// webhook's writes; the client retries.
	DecisionContended Reason = "Contended"
	// DecisionTooManyRecords: status.disruptedPods is full.
	DecisionTooManyRecords Reason = "TooManyRecords"
	// DecisionPodDisruptionBudget: a policy/v1 PodDisruptionBudget covering
	// the pod refuses it now, so core would refuse the eviction after this
	// webhook: it is refused without a charge.
	DecisionPodDisruptionBudget Reason = "PodDisruptionBudget"
	// DecisionPreconditionFailed: the Eviction's UID or resourceVersion
	// precondition does not match the pod; the API server would answer 409.
	DecisionPreconditionFailed Reason = "PreconditionFailed"
	// DecisionNodeGone: the pod's node object is gone and its domain cannot
	// be told from its record, its topology label or the node's last labels.
	DecisionNodeGone Reason = "NodeGone"
	// DecisionNotEnforced: the budget is in the operator's own namespace,
	// whose evictions the webhook does not decide.
	DecisionNotEnforced Reason = "NotEnforced"
	// DecisionPodNotFound: the pod does not exist; the API server answers
	// 404 for the eviction itself.
	DecisionPodNotFound Reason = "PodNotFound"
	// DecisionNotCovered: no budget covers the pod.
	DecisionNotCovered Reason = "NotCovered"
)

// EvictionRequest is one eviction to decide against one budget.
type EvictionRequest struct {
	// Pod is the pod to evict, as the caller last saw it.
	Pod *corev1.Pod
	// Domain is the pod's domain under this budget (see DomainOf); "" for an
	// unscheduled pod.
	Domain string
	// Now is the time of the decision, recorded in the record.
	Now time.Time
	// NodeGone says the pod's node object is gone: the pod runs nowhere and
	// the budget never counts it healthy (see Compute), so its eviction
	// lowers no healthy count. It still needs an allowance: the status may
	// have been computed while the node existed (a node deleted and
	// re-registered), and then counted the pod healthy.
	NodeGone bool
}

// Decision is the answer of one budget to one eviction.
type Decision struct {
	// Allowed says whether this budget lets the eviction proceed.
	Allowed bool
	// Reason is one of the Decision* constants.
	Reason Reason
	// Message explains a refusal to the user (kubectl prints it).
	Message string
	// Status, when not nil, is the new status to write for the eviction to
	// count: the record added and the domain's allowance decremented. An
	// allowed decision with a nil Status needs no write.
	Status *policyv1alpha1.TopologyDisruptionBudgetStatus
	// BlockedDomain names the domain of a refusal for want of allowance
	// (InsufficientPods, MaxDisruptedDomains) or because the budget allows
	// nothing at all (Blocked: DomainError, SyncFailed): the domain is
	// blocked (see MarkBlocked).
	BlockedDomain string
}

// RefusePlacement is the decision of a budget that covers the pod but could
// not place it (Place's error): the pod's node is gone and its domain
// unknown, the node lacks the topologyKey label, or the budget's spec
// cannot be evaluated. The message says what to do.
func RefusePlacement(tdb *policyv1alpha1.TopologyDisruptionBudget, err error) Decision {
	name := fmt.Sprintf("%s/%s", tdb.Namespace, tdb.Name)
	switch {
	case errors.Is(err, ErrNodeGone):
		return refuse(DecisionNodeGone, "topology disruption budget %s: %v; the pod runs nowhere; its controller's replacement is counted in every domain until the pod is removed", name, err)
	case errors.Is(err, ErrNoPartition):
		return refuse(DecisionBlocked, "topology disruption budget %s: cannot tell the partition of the pod: %v; fix spec.partition or the pod", name, err)
	case errors.Is(err, ErrNoDomainLabel):
		return refuse(DecisionBlocked, "topology disruption budget %s: cannot tell the domain of the pod: %v; label the node with %s", name, err, tdb.Spec.TopologyKey)
	default:
		return refuse(DecisionBlocked, "topology disruption budget %s: %v; fix the budget's spec (kubectl describe tdb shows the SyncFailed condition)", name, err)
	}
}

// DecideEviction decides one eviction against one budget's current status.
// The status is the ledger: the decision reads only it (not the pods), and an
// allowed eviction that must be counted returns the new status, to be written
// with the budget's resourceVersion so that concurrent decisions serialise.
func DecideEviction(tdb *policyv1alpha1.TopologyDisruptionBudget, req EvictionRequest) Decision {
	pod := req.Pod
	st := &tdb.Status
	if CanIgnoreBudget(pod) {
		if IsBoundPending(pod) && findDomain(st.Domains, req.Domain) != nil && findRecord(st.DisruptedPods, pod) < 0 &&
			len(st.DisruptedPods) < MaxDisruptedPods && st.ObservedGeneration >= tdb.Generation {
			return Decision{Allowed: true, Reason: DecisionPodNotRunning, Status: addRecord(tdb, req)}
		}
		return Decision{Allowed: true, Reason: DecisionPodNotRunning}
	}
	name := fmt.Sprintf("%s/%s", tdb.Namespace, tdb.Name)
	if c := apimeta.FindStatusCondition(st.Conditions, policyv1alpha1.ConditionDisruptionAllowed); c != nil &&
		(c.Reason == policyv1alpha1.ReasonSyncFailed || c.Reason == policyv1alpha1.ReasonDomainError) {
		d := refuse(DecisionBlocked, "topology disruption budget %s: no disruption is allowed: %s", name, c.Message)
		// The pod's domain refuses it like every other: it is blocked.
		d.BlockedDomain = req.Domain
		return d
	}
	if st.ObservedGeneration < tdb.Generation {
		return refuse(DecisionStaleStatus, "topology disruption budget %s: status is being updated for the new spec (observedGeneration %d < generation %d); retry shortly",
			name, st.ObservedGeneration, tdb.Generation)
	}
	row := findDomain(st.Domains, req.Domain)
	if row == nil {
		return refuse(DecisionUnknownDomain, "topology disruption budget %s: domain %q of pod %s is not in the budget's status yet; retry shortly",
			name, req.Domain, pod.Name)
	}
	if i := findRecord(st.DisruptedPods, pod); i >= 0 {
		if st.DisruptedPods[i].Domain != req.Domain {
			// The pod is in another domain than when it was recorded (its
			// node was relabelled): the record would place its missing pod
			// in the wrong one. It is refused until the status controller
			// drops the record (its pod not deleted), then charged afresh.
			return refuse(DecisionStaleStatus, "topology disruption budget %s: pod %s was recorded in domain %s and is now in %s; retry shortly",
				name, pod.Name, st.DisruptedPods[i].Domain, req.Domain)
		}
		// Granted before (a retry after a later admission step refused it):
		// the record already keeps the pod from counting as healthy, so it
		// is not charged twice. The record is renewed to this attempt, in a
		// conditional write: the status controller's removal of the record
		// (it found no deletion after the grant) and this renewal cannot
		// both succeed, so the pod is never let go while counted healthy.
		return Decision{Allowed: true, Reason: DecisionAlreadyRecorded, Status: renew(tdb, i, req)}
	}
	if !IsHealthy(pod) {
		// A not-Ready pod goes without a charge under AlwaysAllow, or under
		// IfHealthyBudget (as policy/v1) while its domain is not disrupted;
		// otherwise it needs an allowance like any. An uncharged eviction is
		// still recorded, without touching the numbers: should the pod turn
		// Ready before it is deleted it does not count as healthy, and once
		// it is gone its replacement is expected in its own domain.
		if tdb.Spec.UnhealthyPodEvictionPolicy == policyv1alpha1.AlwaysAllow ||
			(row.CurrentHealthy >= row.DesiredHealthy && row.DesiredHealthy > 0) {
			if len(st.DisruptedPods) >= MaxDisruptedPods {
				return refuse(DecisionTooManyRecords, "topology disruption budget %s: %d evictions are still being accounted for; retry shortly",
					name, len(st.DisruptedPods))
			}
			return Decision{Allowed: true, Reason: DecisionUnhealthyPod, Status: addRecord(tdb, req)}
		}
	}
	if row.DisruptionsAllowed <= 0 {
		return refuseNoAllowance(tdb, row)
	}
	if len(st.DisruptedPods) >= MaxDisruptedPods {
		return refuse(DecisionTooManyRecords, "topology disruption budget %s: %d evictions are still being accounted for; retry shortly",
			name, len(st.DisruptedPods))
	}
	return Decision{Allowed: true, Reason: DecisionCharged, Status: charge(tdb, req)}
}

// refuseNoAllowance is the refusal of a domain with no allowance left:
// for want of healthy pods, or because maxDisruptedDomains other domains
// are disrupted while this one has a pod to spare. The domain is blocked.
func refuseNoAllowance(tdb *policyv1alpha1.TopologyDisruptionBudget, row *policyv1alpha1.DomainStatus) Decision {
	name, where := tdb.Namespace+"/"+tdb.Name, describeDomain(tdb, row.Name)
	d := refuse(DecisionInsufficientPods, "topology disruption budget %s: %s has %d healthy pods, needs %d; 0 disruptions allowed",
		name, where, row.CurrentHealthy, row.DesiredHealthy)
	if others := disruptedDomains(tdb.Status.Domains, row.Name); tdb.Spec.MaxDisruptedDomains != nil &&
		row.CurrentHealthy > row.DesiredHealthy && int32(len(others)) >= *tdb.Spec.MaxDisruptedDomains {
		d = refuse(DecisionMaxDisruptedDomains,
			"topology disruption budget %s: %s has %d healthy pods, needs %d; but %d other domain(s) are disrupted (%s) and maxDisruptedDomains is %d; 0 disruptions allowed",
			name, where, row.CurrentHealthy, row.DesiredHealthy, len(others), strings.Join(others, ", "), *tdb.Spec.MaxDisruptedDomains)
	}
	d.BlockedDomain = row.Name
	return d
}

// countedHealthy says whether the budget counts the pod among its healthy
// pods: available (Ready for minReady, not deleting), and on a node that
// exists. A Ready pod within minReadySeconds is not counted yet, but its
// eviction needs an allowance like any Ready pod's, as core's PDBs (which
// know no delay) and so the mirrors decide it.
func (req EvictionRequest) countedHealthy(minReady time.Duration) bool {
	return !req.NodeGone && IsAvailable(req.Pod, minReady, req.Now)
}

// charge returns the status after one eviction in req.Domain: the record is
// added, the domain loses an allowance (and a healthy pod, when the pod was
// healthy), and the other domains' allowances are limited by
// maxDisruptedDomains. Allowances only go down here; only the status
// controller raises them.
func charge(tdb *policyv1alpha1.TopologyDisruptionBudget, req EvictionRequest) *policyv1alpha1.TopologyDisruptionBudgetStatus {
	next := addRecord(tdb, req)
	row := findDomain(next.Domains, req.Domain)
	if req.countedHealthy(time.Duration(tdb.Spec.MinReadySeconds) * time.Second) {
		// A pod that is not Ready, or whose node is gone, was never counted
		// healthy; the record keeps it uncounted, so only a healthy pod
		// lowers currentHealthy.
		row.CurrentHealthy--
	} else if !req.NodeGone && IsHealthy(req.Pod) && row.WarmingUp > 0 {
		// A Ready pod within minReadySeconds: no longer one core counts.
		row.WarmingUp--
	}
	row.DisruptionsAllowed--
	LimitDisruptedDomains(&tdb.Spec, next.Domains)
	next.CurrentHealthy = 0
	for _, d := range next.Domains {
		next.CurrentHealthy += d.CurrentHealthy
	}
	next.DisruptionsAllowed = AllowedTogether(&tdb.Spec, next.Domains)
	next.DisruptedDomains = DisruptedDomains(next.Domains)
	apimeta.SetStatusCondition(&next.Conditions, DisruptionCondition(&tdb.Spec, next.Domains, "", "", next.ObservedGeneration, req.Now))
	return next
}

// addRecord returns the status with a record of req's eviction added and
// the numbers unchanged.
func addRecord(tdb *policyv1alpha1.TopologyDisruptionBudget, req EvictionRequest) *policyv1alpha1.TopologyDisruptionBudgetStatus {
	next := tdb.Status.DeepCopy()
	rec := policyv1alpha1.DisruptedPod{
		Name:       req.Pod.Name,
		UID:        req.Pod.UID,
		Domain:     req.Domain,
		Time:       metav1.NewTime(req.Now),
		DomainSpec: DomainSpecOf(&tdb.Spec),
	}
	if ref := metav1.GetControllerOfNoCopy(req.Pod); ref != nil {
		rec.ControllerUID = ref.UID
	}
	// A record of an earlier pod with the same name (a StatefulSet
	// replacement now exists) has done its job; names key the list.
	kept := next.DisruptedPods[:0]
	for _, r := range next.DisruptedPods {
		if r.Name != rec.Name {
			kept = append(kept, r)
		}
	}
	next.DisruptedPods = append(kept, rec)
	sort.Slice(next.DisruptedPods, func(i, j int) bool { return next.DisruptedPods[i].Name < next.DisruptedPods[j].Name })
	return next
}

// renew returns the status with record i's grant time moved to req.Now. It
// is always written, even when the time does not change: the allowed answer
// then rests on a conditional write like every other, and a write that fails
// allows nothing.
func renew(tdb *policyv1alpha1.TopologyDisruptionBudget, i int, req EvictionRequest) *policyv1alpha1.TopologyDisruptionBudgetStatus {
	next := tdb.Status.DeepCopy()
	next.DisruptedPods[i].Time = metav1.NewTime(req.Now)
	if next.DisruptedPods[i].UID == "" {
		next.DisruptedPods[i].UID = req.Pod.UID
	}
	// The pod was found in the record's domain under the current spec.
	next.DisruptedPods[i].DomainSpec = DomainSpecOf(&tdb.Spec)
	return next
}

// DisruptionCondition is the DisruptionAllowed condition for a budget's
// domains, or for a budget blocked for blockedReason. The status controller
// and the webhook both write it, in the same words, so that a grant does not
// cause another status write. The number it gives is AllowedTogether's.
func DisruptionCondition(spec *policyv1alpha1.TopologyDisruptionBudgetSpec, domains []policyv1alpha1.DomainStatus, blockedReason, blockedMessage string, generation int64, now time.Time) metav1.Condition {
	c := metav1.Condition{
		Type:               policyv1alpha1.ConditionDisruptionAllowed,
		ObservedGeneration: generation,
		LastTransitionTime: metav1.NewTime(now),
	}
	var names []string
	for _, d := range domains {
		if d.DisruptionsAllowed > 0 {
			names = append(names, d.Name)
		}
	}
	allowed := AllowedTogether(spec, domains)
	switch {
	case blockedReason != "":
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, blockedReason, blockedMessage
	case allowed > 0:
		c.Status, c.Reason = metav1.ConditionTrue, policyv1alpha1.ReasonSufficientPods
		c.Message = fmt.Sprintf("%d disruption(s) allowed in %s", allowed, strings.Join(names, ", "))
		if spec.MaxDisruptedDomains != nil && int32(len(names)) > *spec.MaxDisruptedDomains {
			c.Message += fmt.Sprintf(", in at most %d domain(s) at a time", *spec.MaxDisruptedDomains)
		}
	default:
		c.Status, c.Reason = metav1.ConditionFalse, policyv1alpha1.ReasonInsufficientPods
		c.Message = "no domain has a healthy pod to spare; evictions wait until pods become Ready"
		if warming := warmingUp(domains); warming > 0 {
			c.Message = fmt.Sprintf("no domain has a healthy pod to spare; evictions wait until pods become Ready (%d Ready pod(s) count once Ready for minReadySeconds)", warming)
		}
	}
	return c
}

// warmingUp counts the pods Ready for less than minReadySeconds.
func warmingUp(domains []policyv1alpha1.DomainStatus) int32 {
	n := int32(0)
	for _, d := range domains {
		n += d.WarmingUp
	}
	return n
}

// CanIgnoreBudget says whether an eviction passes without asking the budget:
// exactly the pods core's eviction handler lets through (canIgnorePDB):
// Pending, Succeeded, Failed, or already being deleted. A pod in any other
// phase (Running, Unknown) is decided by the budget. A Pending pod bound to
// a node passes too, but recorded (IsBoundPending).
func CanIgnoreBudget(pod *corev1.Pod) bool {
	switch pod.Status.Phase {
	case corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed:
		return true
	}
	return pod.DeletionTimestamp != nil
}

// IsBoundPending says whether the pod is Pending on a node and not being
// deleted: it passes as core lets it pass, but its eviction is recorded
// (without a charge). The API server reads the pod again after the webhook
// answers and deletes it as it finds it, Running and Ready by then or not
// (core guards its own check with a precondition on the pod's version, which
// an admission webhook cannot set); the record keeps such a pod from being
// counted healthy, so no allowance is ever computed from a pod whose
// deletion is already under way. At 1,000 nodes, replacements that landed
// on nodes about to be drained went that way; refusing them instead would
// hold a drain for ever on a pod stuck Pending (an image that does not
// pull), which core lets go.
func IsBoundPending(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodPending && pod.Spec.NodeName != "" && pod.DeletionTimestamp == nil
}

func refuse(reason Reason, format string, args ...any) Decision {
	return Decision{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

func describeDomain(tdb *policyv1alpha1.TopologyDisruptionBudget, domain string) string {
	if tdb.Spec.Partition != nil {
		return fmt.Sprintf("partition %s", domain)
	}
	if tdb.Spec.TopologyKey == "" {
		return "the budget"
	}
	return fmt.Sprintf("domain %s (%s)", domain, tdb.Spec.TopologyKey)
}

func findDomain(rows []policyv1alpha1.DomainStatus, name string) *policyv1alpha1.DomainStatus {
	i := sort.Search(len(rows), func(i int) bool { return rows[i].Name >= name })
	if i < len(rows) && rows[i].Name == name {
		return &rows[i]
	}
	// Rows are sorted by the controller, but do not rely on it for safety.
	for i := range rows {
		if rows[i].Name == name {
			return &rows[i]
		}
	}
	return nil
}

func findRecord(records []policyv1alpha1.DisruptedPod, pod *corev1.Pod) int {
	for i, r := range records {
		if r.Name == pod.Name && (r.UID == "" || r.UID == pod.UID) {
			return i
		}
	}
	return -1
}
