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

// Package evictionwebhook holds the eviction admission webhook: it decides each
// pods/eviction CREATE against every TopologyDisruptionBudget covering the
// pod, and records granted evictions in the budgets' status.
package evictionwebhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
	"github.com/tdb-operator/tdb-operator/internal/tombstone"
)

// Path is where the eviction webhook is served.
const Path = "/validate-eviction"

const (
	// defaultMaxTries bounds the decide-and-write attempts per budget.
	defaultMaxTries = 8
	// webhookTimeout is the configuration's timeoutSeconds: after it the
	// API server answers the eviction with an error of its own, which
	// kubectl drain does not retry, and a write made after it is a charge
	// for an eviction that was never let through.
	webhookTimeout = 10 * time.Second
	// answerMargin is left between the latest answer and webhookTimeout.
	answerMargin = time.Second
	// undoReserve is kept at the end of a request for removing the charges
	// of an eviction that a later budget refused.
	undoReserve = 2 * time.Second
	// defaultDeadline ends deciding and writing; undoing ends undoReserve
	// later, answerMargin before the API server's timeout.
	defaultDeadline = webhookTimeout - answerMargin - undoReserve
)

// +kubebuilder:webhook:path=/validate-eviction,mutating=false,failurePolicy=fail,sideEffects=NoneOnDryRun,groups="",resources=pods/eviction,verbs=create,versions=v1,name=eviction.policy.tdb.dev,admissionReviewVersions=v1,timeoutSeconds=10,matchPolicy=Equivalent
// +kubebuilder:rbac:groups=policy.tdb.dev,resources=topologydisruptionbudgets/status,verbs=get;update
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch

// EvictionHandler decides evictions. Budgets, pods and nodes are read from
// the informer cache; a budget is re-read from the API server only when a
// status write conflicts. Every grant is a status write conditioned on the
// budget's resourceVersion, so concurrent decisions, in this process or in
// another replica, serialise on the API server and can never over-allow.
type EvictionHandler struct {
	// Cache reads pods, nodes, budgets and PodDisruptionBudgets.
	Cache client.Reader
	// Client writes budget status.
	Client client.Client
	// APIReader re-reads a budget after a conflict, a pod the cache has not
	// seen yet or whose state would let it pass uncharged, a pod an
	// Eviction sets preconditions on, and a node the cache does not know.
	APIReader client.Reader
	// Clock stamps records.
	Clock clock.PassiveClock
	// ExemptNamespace is the operator's own namespace, whose evictions
	// always pass (so draining the operator's node cannot deadlock).
	ExemptNamespace string
	// Refusals reports refusals as events, rate-limited per budget.
	Refusals *RefusalReporter
	// Callers says which pods may call the webhook (see CallerPolicy); the
	// zero value lets any caller in.
	Callers CallerPolicy
	// GoneNodes remembers the last labels of deleted nodes (nil: none).
	GoneNodes *tombstone.Nodes
	// MaxTries and Deadline bound the work on one request (defaults 8, 7 s);
	// undoing a partial charge may take undoReserve more.
	MaxTries int
	Deadline time.Duration
	// Versions is the record of budget versions shared with the other
	// writers of the process (nil: the handler keeps its own).
	Versions *budgetstatus.Versions
	// BlockMarkDelay is how long after a domain's first refusal its
	// blockedSince is written (zero: at once; Register defaults it to
	// DefaultBlockMarkDelay).
	BlockMarkDelay time.Duration
	// Computes says whether this process runs the status controller, whose
	// cache the webhook shares: then a status that refuses for want of
	// allowance is recomputed from the cache before refusing (see
	// refresh). Nil: never.
	Computes func() bool
	// RecordTimeout is the status controller's --record-timeout, for
	// those computations.
	RecordTimeout time.Duration
	// Pending is shared with the status controller: which statuses are
	// behind the cache, and which records it confirmed gone (nil: no
	// status is recomputed).
	Pending *budgetstatus.Pending
	// Computations is the status controller's gathering layer, for those
	// computations (nil: the handler's own, which reads no custom scale).
	Computations *snapshot.Gatherer

	ledger      ledger
	memo        recomputeMemo
	ownVersions budgetstatus.Versions
	blocking    blockMarks
	gatherOnce  sync.Once
	gather      *snapshot.Gatherer
}

var _ admission.Handler = &EvictionHandler{}

// Handle answers one admission request.
func (h *EvictionHandler) Handle(ctx context.Context, req admission.Request) (resp admission.Response) {
	start := time.Now()
	out := outcome{decision: "allowed", reason: budget.DecisionPodNotRunning}
	defer func() {
		if r := recover(); r != nil {
			log.FromContext(ctx).Error(fmt.Errorf("panic: %v", r), "eviction webhook panicked")
			out = outcome{decision: "error", reason: ReasonInternalError}
			resp = admission.Errored(http.StatusInternalServerError, fmt.Errorf("internal error deciding the eviction"))
		}
		observe(out, time.Since(start))
	}()

	// Everything, the caller's lookup included, is bounded by the deadline.
	ctx, cancel := context.WithDeadline(ctx, start.Add(h.deadline()))
	defer cancel()
	who, err := h.untrustedCaller(ctx)
	if err != nil {
		log.FromContext(ctx).Error(err, "cannot tell who calls the webhook; deciding the review")
	}
	if len(who) > 0 {
		out = outcome{decision: "refused", reason: ReasonUntrustedCaller}
		log.FromContext(ctx).Info("admission review refused: it came from a pod, not the API server", "caller", who, "pod", klog.KRef(req.Namespace, req.Name))
		return deny(http.StatusForbidden, fmt.Sprintf("the eviction webhook answers the API server only; this review came from the address %s", strings.Join(who, ", ")))
	}
	if req.Operation != admissionv1.Create || req.Resource.Resource != "pods" || req.SubResource != "eviction" {
		out = outcome{decision: "allowed", reason: ReasonNotAnEviction}
		return admission.Allowed("not a pod eviction")
	}
	ev, err := decodeEviction(req.Object.Raw)
	if err != nil {
		out = outcome{decision: "error", reason: ReasonBadRequest}
		return admission.Errored(http.StatusBadRequest, err)
	}
	if req.Namespace == h.ExemptNamespace && h.ExemptNamespace != "" {
		out.reason = ReasonExemptNamespace
		return admission.Allowed("the operator's namespace is exempt")
	}
	er := evictionRequest{namespace: req.Namespace, name: req.Name,
		dryRun: (req.DryRun != nil && *req.DryRun) || isDryRun(ev.DeleteOptions),
		undoBy: start.Add(h.deadline() + undoReserve)}
	if ev.DeleteOptions != nil {
		er.preconditions = ev.DeleteOptions.Preconditions
	}

	res, err := h.decide(ctx, er)
	if err != nil && (retryable(err) || ctx.Err() != nil) {
		// Nothing was decided (the operator is starting, or the API server
		// is slow): refuse in the way clients retry.
		out = outcome{decision: "refused", reason: ReasonUnavailable}
		log.FromContext(ctx).Info("eviction refused for now", "pod", klog.KRef(req.Namespace, req.Name), "error", err.Error())
		return deny(http.StatusTooManyRequests, fmt.Sprintf("topology disruption budgets cannot decide the eviction of %s/%s right now (%v); retry", req.Namespace, req.Name, err))
	}
	if err != nil {
		out = outcome{decision: "error", reason: ReasonInternalError}
		log.FromContext(ctx).Error(err, "deciding eviction", "pod", klog.KRef(req.Namespace, req.Name))
		return admission.Errored(http.StatusInternalServerError, err)
	}
	out = res.outcome
	log.FromContext(ctx).V(1).Info("eviction decided", "pod", klog.KRef(req.Namespace, req.Name), "uid", res.uid, "node", res.node,
		"decision", res.outcome.decision, "reason", res.outcome.reason, "dryRun", er.dryRun, "budgets", res.budgets)
	if res.outcome.decision == "allowed" {
		return admission.Allowed("")
	}
	if res.refusedBy != nil && !er.dryRun {
		if h.Refusals != nil {
			h.Refusals.Refused(res.refusedBy, res.message)
			h.Refusals.RefusedPod(res.pod, res.message)
		}
		if res.blockedDomain != "" {
			h.markBlocked(res.refusedBy, res.blockedDomain)
		}
	}
	code := res.code
	if code == 0 {
		code = http.StatusTooManyRequests
	}
	return deny(code, res.message)
}

func (h *EvictionHandler) deadline() time.Duration {
	if h.Deadline > 0 {
		return h.Deadline
	}
	return defaultDeadline
}

// status is the handler's writer of budget status: every write is
// conditional on the resourceVersion, and a conflict re-reads the budget
// live, as many times as maxTries allows.
func (h *EvictionHandler) status() *budgetstatus.Writer {
	versions := h.Versions
	if versions == nil {
		versions = &h.ownVersions
	}
	return &budgetstatus.Writer{Name: budgetstatus.WriterWebhook, Client: h.Client, Live: h.APIReader, Versions: versions,
		Backoff: wait.Backoff{Steps: h.maxTries()}}
}

func (h *EvictionHandler) maxTries() int {
	if h.MaxTries > 0 {
		return h.MaxTries
	}
	return defaultMaxTries
}

// evictionRequest is what the handler decides.
type evictionRequest struct {
	namespace, name string
	dryRun          bool
	preconditions   *metav1.Preconditions
	// undoBy is when undoing a partial charge must be done.
	undoBy time.Time
}

// outcome labels the decision metric.
type outcome struct {
	decision string
	reason   budget.Reason
}

// Reasons of answers given before any budget decides.
const (
	// ReasonNotAnEviction: the request is not a pods/eviction CREATE.
	ReasonNotAnEviction budget.Reason = "NotAnEviction"
	// ReasonExemptNamespace: the pod is in the operator's namespace.
	ReasonExemptNamespace budget.Reason = "ExemptNamespace"
	// ReasonUntrustedCaller: the review came from a pod, not the API server.
	ReasonUntrustedCaller budget.Reason = "UntrustedCaller"
	// ReasonUnavailable: nothing could be decided in time (the operator is
	// starting, or the API server is slow); the client retries.
	ReasonUnavailable budget.Reason = "Unavailable"
	// ReasonBadRequest: the review does not hold an Eviction.
	ReasonBadRequest budget.Reason = "BadRequest"
	// ReasonInternalError: the decision failed.
	ReasonInternalError budget.Reason = "InternalError"
)

type result struct {
	outcome   outcome
	message   string
	refusedBy *policyv1alpha1.TopologyDisruptionBudget
	budgets   []string
	// code is the HTTP status of a refusal (0: 429).
	code int32
	// pod is the pod a budget refused to let go.
	pod *corev1.Pod
	// blockedDomain is the domain of refusedBy that has no allowance.
	blockedDomain string
	// uid and node are those of the pod decided on, for the log.
	uid  types.UID
	node string
}

func refused(tdb *policyv1alpha1.TopologyDisruptionBudget, d budget.Decision, budgets []string) result {
	return result{outcome: outcome{"refused", d.Reason}, message: d.Message, refusedBy: tdb, budgets: budgets, blockedDomain: d.BlockedDomain}
}

func staleDecision(tdb *policyv1alpha1.TopologyDisruptionBudget) budget.Decision {
	return budget.Decision{Reason: budget.DecisionStaleStatus, Message: fmt.Sprintf(
		"topology disruption budget %s/%s, or the pod's domain, changed while the eviction was decided; retry", tdb.Namespace, tdb.Name)}
}

// decide finds the budgets covering the pod and decides against all of them:
// allowed only if every one allows, and then charged to every one or none.
func (h *EvictionHandler) decide(ctx context.Context, er evictionRequest) (res result, err error) {
	// live: pod is the API server's copy, read during this request.
	pod, live, err := h.pod(ctx, er.namespace, er.name, er.preconditions != nil)
	defer func() {
		if res.refusedBy != nil {
			res.pod = pod
		}
		if pod != nil {
			res.uid, res.node = pod.UID, pod.Spec.NodeName
		}
	}()
	if err != nil {
		return result{}, err
	}
	if pod == nil {
		// The API server answers 404 for the eviction itself.
		return result{outcome: outcome{"allowed", budget.DecisionPodNotFound}}, nil
	}
	if msg := preconditionMismatch(er.preconditions, pod); msg != "" {
		// The API server will answer 409 and delete nothing: nothing to
		// charge. Answered here, so that no record is left for it.
		return result{outcome: outcome{"refused", budget.DecisionPreconditionFailed}, code: http.StatusConflict, message: msg}, nil
	}
	if budget.CanIgnoreBudget(pod) && !budget.IsBoundPending(pod) {
		// Terminal, deleting and unscheduled pods pass, as in core,
		// whatever their node or budgets say. A Pending pod on a node
		// passes too, recorded by the budgets that cover it
		// (budget.IsBoundPending).
		return result{outcome: outcome{"allowed", budget.DecisionPodNotRunning}}, nil
	}
	covering, err := h.covering(ctx, pod)
	if err != nil {
		return result{}, err
	}
	if len(covering) == 0 {
		return result{outcome: outcome{"allowed", budget.DecisionNotCovered}}, nil
	}
	for _, c := range covering {
		if !c.nodeGone {
			continue
		}
		// The pod's node is gone: pod garbage collection may have replaced
		// it (a StatefulSet pod keeps its name) while the cache still shows
		// the old one. Decide on the API server's copy, as for a pod that
		// would pass uncharged; another pod, or the pod on another node now,
		// was not placed by this lookup.
		fresh, err := h.livePod(ctx, pod)
		switch {
		case err != nil:
			return result{}, err
		case fresh == nil:
			return result{outcome: outcome{"allowed", budget.DecisionPodNotFound}}, nil
		case fresh.UID != pod.UID || fresh.Spec.NodeName != pod.Spec.NodeName:
			return refused(c.tdb, staleDecision(c.tdb), []string{c.tdb.Name}), nil
		case budget.CanIgnoreBudget(fresh):
			return result{outcome: outcome{"allowed", budget.DecisionPodNotRunning}}, nil
		}
		pod, live = fresh, true
		break
	}
	names := make([]string, len(covering))
	for i, c := range covering {
		names[i] = c.tdb.Name
		if c.placeErr != nil {
			return refused(c.tdb, budget.RefusePlacement(c.tdb, c.placeErr), names), nil
		}
	}

	now := h.Clock.Now()
	// A refusal needs no lock: refuse at once when the newest version known
	// here already refuses (allowances only fall between the status
	// controller's passes, and a refusal is always safe).
	for _, c := range covering {
		c.entry = h.ledger.entry(types.NamespacedName{Namespace: c.tdb.Namespace, Name: c.tdb.Name})
		newest := h.status().Newest(c.tdb)
		req := budget.EvictionRequest{Pod: pod, Domain: c.domain, Now: now, NodeGone: c.nodeGone}
		if d := budget.DecideEviction(newest, req); !d.Allowed {
			// Unless the cache already shows what the status controller
			// has not written yet (see refresh).
			if again, _ := h.refresh(ctx, newest.DeepCopy(), d, req); !again.Allowed {
				return refused(c.tdb, d, names), nil
			}
		}
	}
	// The API server evicts whichever pod holds the name when it gets
	// there. A pod read from the cache whose name a record holds may be a
	// predecessor the cache still shows healthy while its StatefulSet
	// replacement already runs, elsewhere: deciding on it would renew the
	// predecessor's record (AlreadyRecorded) and let the replacement go
	// uncharged, or charge the wrong domain. Such names are read live
	// (once: a version written later may show such a record too, see
	// tryCommit and charge).
	if !live && recordedName(h.status(), covering, pod.Name) {
		fresh, err := h.livePod(ctx, pod)
		switch {
		case err != nil:
			return result{}, err
		case fresh == nil:
			return result{outcome: outcome{"allowed", budget.DecisionPodNotFound}}, nil
		case fresh.UID != pod.UID || fresh.Spec.NodeName != pod.Spec.NodeName:
			return refused(covering[0].tdb, staleDecision(covering[0].tdb), names), nil
		case budget.CanIgnoreBudget(fresh):
			return result{outcome: outcome{"allowed", budget.DecisionPodNotRunning}}, nil
		}
		pod = fresh
	}
	// Admission runs before the API server's own PodDisruptionBudget check:
	// a charge for an eviction core then refuses would hold the domain's
	// allowance for nothing. Ask core's question first.
	// (Core lets a Pending pod go without asking its PDBs.)
	if !budget.CanIgnoreBudget(pod) {
		if res, refusedByPDB, err := h.checkPDBs(ctx, pod, covering, names); err != nil || refusedByPDB {
			return res, err
		}
	}
	if len(covering) == 1 && !er.dryRun {
		// The common case: one budget. Its grants are decided and written
		// in groups (see ledger).
		d, err := h.grant(ctx, covering[0], pod, now)
		if err != nil {
			return result{}, err
		}
		if !d.Allowed {
			return refused(covering[0].tdb, d, names), nil
		}
		return result{outcome: outcome{"allowed", d.Reason}, budgets: names}, nil
	}
	// Several budgets (or a dry run): lock the covering budgets, in name
	// order, for this process: requests for the same budget decide one
	// after the other, each from the newest version known here (see
	// ledger).
	for _, c := range covering {
		if err := c.entry.acquire(ctx); err != nil {
			return result{}, fmt.Errorf("waiting for budget %s/%s: %w", c.tdb.Namespace, c.tdb.Name, err)
		}
		defer c.entry.release()
		fresh := h.status().Newest(c.tdb)
		if fresh.UID != c.tdb.UID || fresh.Generation != c.tdb.Generation {
			return refused(c.tdb, staleDecision(c.tdb), names), nil
		}
		c.tdb = fresh
	}
	// With the versions fixed, decide on the pod as it is now: a pod that
	// was not Ready (and would pass uncharged) may have turned Ready.
	if !budget.IsHealthy(pod) {
		fresh, err := h.livePod(ctx, pod)
		if err != nil {
			return result{}, err
		}
		if fresh == nil {
			return result{outcome: outcome{"allowed", budget.DecisionPodNotFound}}, nil
		}
		if fresh.UID != pod.UID || fresh.Spec.NodeName != pod.Spec.NodeName {
			return refused(covering[0].tdb, staleDecision(covering[0].tdb), names), nil
		}
		if budget.CanIgnoreBudget(fresh) && !budget.IsBoundPending(fresh) {
			return result{outcome: outcome{"allowed", budget.DecisionPodNotRunning}}, nil
		}
		pod = fresh
	}

	// First decide against every budget as known: a refusal costs no write.
	decisions := make([]budget.Decision, len(covering))
	for i, c := range covering {
		req := budget.EvictionRequest{Pod: pod, Domain: c.domain, Now: now, NodeGone: c.nodeGone}
		decisions[i] = budget.DecideEviction(c.tdb, req)
		if checkable(decisions[i]) {
			decisions[i], _ = h.refresh(ctx, c.tdb.DeepCopy(), decisions[i], req)
		}
		if !decisions[i].Allowed {
			return refused(c.tdb, decisions[i], names), nil
		}
	}
	reason := decisions[0].Reason
	if er.dryRun {
		return result{outcome: outcome{"allowed", reason}, budgets: names}, nil
	}
	// The domains were found from the nodes as the request first saw them:
	// a node relabelled since would charge the wrong domain.
	for _, c := range covering {
		if !h.sameDomain(ctx, c.tdb, pod, c.domain, c.nodeGone) {
			return refused(c.tdb, staleDecision(c.tdb), names), nil
		}
	}
	// Then charge each budget in turn; if one refuses on a fresh read, undo
	// the charges this request made.
	var charged []charge
	for i, c := range covering {
		d, err := h.charge(ctx, c, &pod, decisions[i], now)
		if err != nil || !d.Allowed {
			if uerr := h.undo(ctx, er.undoBy, charged, pod); uerr != nil {
				err = errors.Join(err, fmt.Errorf("undoing the charges of an eviction another budget refused: %w", uerr))
			}
			if err != nil {
				return result{}, err
			}
			return refused(c.tdb, d, names), nil
		}
		if d.Status != nil {
			reason = d.Reason
		}
		if d.Reason == budget.DecisionCharged {
			// Only charges are undone: a renewed or uncharged record spends
			// no allowance, and may be another request's to keep.
			charged = append(charged, charge{budget: c, at: now})
		}
	}
	return result{outcome: outcome{"allowed", reason}, budgets: names}, nil
}

// recordedName says whether the newest known status of a covering budget
// holds a record of a pod named name (of any UID).
func recordedName(w *budgetstatus.Writer, covering []*coveringBudget, name string) bool {
	for _, c := range covering {
		if holdsName(w.Newest(c.tdb), name) {
			return true
		}
	}
	return false
}

// holdsName says whether the budget's status holds a record of a pod named
// name (of any UID).
func holdsName(tdb *policyv1alpha1.TopologyDisruptionBudget, name string) bool {
	for _, r := range tdb.Status.DisruptedPods {
		if r.Name == name {
			return true
		}
	}
	return false
}

// errStalePod ends a charge whose pod another pod replaced under its name
// (or that moved), seen on a live read the version being written called
// for.
var errStalePod = errors.New("another pod holds the name now")

// recheckRecorded reads the pod live when the version about to be written
// holds a record of its name, unless readNow says it was just read, with
// that version fixed: it may be a predecessor a lagging cache still shows
// (the record may be another replica's, unknown here when the request
// began), or the pod read earlier may have been replaced since. It returns
// the pod to decide on, or a decision that ends the request (done).
func (h *EvictionHandler) recheckRecorded(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, pod *corev1.Pod, readNow bool) (*corev1.Pod, budget.Decision, bool, error) {
	if readNow || !holdsName(tdb, pod.Name) {
		return pod, budget.Decision{}, false, nil
	}
	fresh, err := h.livePod(ctx, pod)
	switch {
	case err != nil:
		return nil, budget.Decision{}, true, err
	case fresh == nil:
		return nil, budget.Decision{Allowed: true, Reason: budget.DecisionPodNotFound}, true, nil
	case fresh.UID != pod.UID || fresh.Spec.NodeName != pod.Spec.NodeName:
		return nil, staleDecision(tdb), true, nil
	case budget.CanIgnoreBudget(fresh) && !budget.IsBoundPending(fresh):
		return nil, budget.Decision{Allowed: true, Reason: budget.DecisionPodNotRunning}, true, nil
	}
	return fresh, budget.Decision{}, false, nil
}

// preconditionMismatch says how the Eviction's preconditions fail on the
// live pod, or "" when they hold (or there are none).
func preconditionMismatch(p *metav1.Preconditions, pod *corev1.Pod) string {
	if p == nil {
		return ""
	}
	if p.UID != nil && *p.UID != "" && *p.UID != pod.UID {
		return fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, pod.UID)
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != "" && *p.ResourceVersion != pod.ResourceVersion {
		return fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, pod.ResourceVersion)
	}
	return ""
}

// checkPDBs refuses, without a charge, an eviction that the API server would
// refuse because of a policy/v1 PodDisruptionBudget, from the PDBs in the
// cache. A PDB the cache shows allowing while core sees it refusing still
// leaves a record; the status controller drops it once it finds the pod not
// deleted (see budget.DefaultRecordTimeout).
func (h *EvictionHandler) checkPDBs(ctx context.Context, pod *corev1.Pod, covering []*coveringBudget, names []string) (result, bool, error) {
	var pdbs policyv1.PodDisruptionBudgetList
	if err := h.Cache.List(ctx, &pdbs, client.InNamespace(pod.Namespace)); err != nil {
		return result{}, false, fmt.Errorf("listing PodDisruptionBudgets in %s: %w", pod.Namespace, err)
	}
	v := budget.CheckPodDisruptionBudgets(pod, pdbs.Items)
	if !v.Refused {
		return result{}, false, nil
	}
	tdbs := make([]string, len(covering))
	for i, c := range covering {
		tdbs[i] = c.tdb.Namespace + "/" + c.tdb.Name
	}
	return result{outcome: outcome{"refused", budget.DecisionPodDisruptionBudget}, code: v.Code, budgets: names,
		message: fmt.Sprintf("%s (topology disruption budget %s would allow it, and is not charged)", v.Message, strings.Join(tdbs, ", "))}, true, nil
}

// charge is a record this request wrote, to undo if another budget refuses.
type charge struct {
	budget *coveringBudget
	at     time.Time
}

// pod reads the pod from the cache, or from the API server when the cache
// has not seen it yet, when live is set (preconditions are checked against
// the pod core will see), or when its cached state would let it pass
// uncharged. A nil pod means it does not exist.
//
// It also says whether the pod returned is the API server's copy.
func (h *EvictionHandler) pod(ctx context.Context, ns, name string, live bool) (*corev1.Pod, bool, error) {
	key := client.ObjectKey{Namespace: ns, Name: name}
	if live {
		pod, err := h.livePod(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
		return pod, true, err
	}
	var pod corev1.Pod
	err := h.Cache.Get(ctx, key, &pod)
	fromServer := false
	if apierrors.IsNotFound(err) && h.APIReader != nil {
		err = h.APIReader.Get(ctx, key, &pod)
		fromServer = true
	}
	if apierrors.IsNotFound(err) {
		return nil, fromServer, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading pod %s/%s: %w", ns, name, err)
	}
	if !fromServer && (!budget.IsHealthy(&pod) || pod.Status.Phase != corev1.PodRunning) {
		// A pod that would pass uncharged (pending, not Ready) may have
		// become Running and Ready since the cache saw it: decide on the
		// API server's copy, as core does.
		live, err := h.livePod(ctx, &pod)
		return live, true, err
	}
	return &pod, fromServer, nil
}

// livePod reads the pod from the API server; nil when it does not exist.
func (h *EvictionHandler) livePod(ctx context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
	var live corev1.Pod
	err := h.APIReader.Get(ctx, client.ObjectKeyFromObject(pod), &live)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return &live, nil
}

// coveringBudget is a budget that covers the pod, with the pod's domain.
type coveringBudget struct {
	tdb    *policyv1alpha1.TopologyDisruptionBudget
	domain string
	// nodeGone says the pod's node was gone when the domain was found.
	nodeGone bool
	// placeErr says why the budget could not place the pod it covers
	// (budget.RefusePlacement turns it into the refusal).
	placeErr error
	// entry is the budget's ledger entry, locked while deciding.
	entry *budgetEntry
}

// snapshots is the handler's gathering layer: budgets and nodes from the
// cache, a node the cache does not know from the API server (a new node the
// cache has not seen yet, or one that is gone), and each budget's parsed
// spec kept until its generation changes.
func (h *EvictionHandler) snapshots() *snapshot.Gatherer {
	h.gatherOnce.Do(func() {
		h.gather = &snapshot.Gatherer{Cache: h.Cache, Live: h.APIReader, GoneNodes: h.GoneNodes}
	})
	return h.gather
}

// covering lists the budgets of the pod's namespace that cover it, sorted
// by name so that concurrent requests charge them in the same order. A
// budget whose spec cannot be evaluated covers the pods it might select,
// and refuses them; pods it clearly does not select are not its concern.
func (h *EvictionHandler) covering(ctx context.Context, pod *corev1.Pod) ([]*coveringBudget, error) {
	g := h.snapshots()
	// Budgets are copied only once known to cover the pod.
	candidates, err := g.BudgetsSelecting(ctx, pod.Namespace, pod.Labels)
	if err != nil {
		return nil, err
	}
	nodes := g.Nodes(ctx)
	var out []*coveringBudget
	for _, t := range candidates {
		p, err := g.Coverage(t).Place(t, pod, nodes.Get, h.GoneNodes.Labels)
		if nodes.Err() != nil {
			return nil, nodes.Err()
		}
		if !p.Covered {
			continue
		}
		out = append(out, &coveringBudget{tdb: t.DeepCopy(), domain: p.Domain, nodeGone: p.NodeGone, placeErr: err})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].tdb.Name < out[j].tdb.Name })
	return out, nil
}

// sameDomain says whether the pod is still in domain under tdb's spec, with
// the nodes as the cache shows them now, and its node still gone or not as
// when the domain was found.
func (h *EvictionHandler) sameDomain(ctx context.Context, tdb *policyv1alpha1.TopologyDisruptionBudget, pod *corev1.Pod, domain string, nodeGone bool) bool {
	g := h.snapshots()
	nodes := g.Nodes(ctx)
	p, err := g.Coverage(tdb).Place(tdb, pod, nodes.Get, h.GoneNodes.Labels)
	return nodes.Err() == nil && err == nil && p.Covered && p.Domain == domain && p.NodeGone == nodeGone
}

// charge writes the decision's status with the budget's resourceVersion. On
// a conflict it re-reads the budget from the API server and decides again,
// refusing when the budget changed spec (or was re-created) meanwhile: the
// pod's domain was found under the spec it had.
func (h *EvictionHandler) charge(ctx context.Context, c *coveringBudget, podp **corev1.Pod, d budget.Decision, now time.Time) (budget.Decision, error) {
	if d.Status == nil || !d.Allowed {
		return d, nil
	}
	var ended *budget.Decision
	recomputed := false
	written, err := h.status().Update(ctx, c.tdb, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		// Decided again on every version written on: a newer one than
		// c.tdb (another writer's, or the live one after a conflict) has
		// other records and allowances.
		if base.Generation != c.tdb.Generation {
			return nil, errSpecChanged
		}
		fresh, end, done, err := h.recheckRecorded(ctx, base, *podp, false)
		if err != nil {
			return nil, err
		}
		if done {
			ended = &end
			return nil, errStalePod
		}
		*podp = fresh
		req := budget.EvictionRequest{Pod: fresh, Domain: c.domain, Now: now, NodeGone: c.nodeGone}
		d, recomputed = h.refresh(ctx, base, budget.DecideEviction(base, req), req)
		if d.Status == nil || !d.Allowed {
			return nil, nil
		}
		base.Status = *d.Status
		return base, nil
	})
	switch {
	case errors.Is(err, errStalePod) && ended != nil:
		return *ended, nil
	case errors.Is(err, errSpecChanged) || errors.Is(err, budgetstatus.ErrGone):
		return staleDecision(c.tdb), nil
	case apierrors.IsConflict(err):
		return budget.Decision{Reason: budget.DecisionContended, Message: fmt.Sprintf(
			"topology disruption budget %s/%s: too many concurrent evictions; retry", c.tdb.Namespace, c.tdb.Name)}, nil
	case err != nil:
		return d, fmt.Errorf("recording the eviction in %s/%s: %w", c.tdb.Namespace, c.tdb.Name, err)
	}
	if written != nil {
		c.tdb = written
		if recomputed {
			countRecomputed(1)
		}
	}
	return d, nil
}

// errSpecChanged ends a charge whose budget changed spec between attempts.
var errSpecChanged = errors.New("the budget's spec changed")

// undo removes the records this request wrote, so that an eviction another
// budget refused is charged to none. Only records this request created are
// removed (same pod UID and grant time): a record another request granted
// for the same pod stays. The domain's allowance is not raised here: the
// status controller recomputes it from the pods (raising it is its job
// alone), so undoing errs on the side of allowing less for a moment. It runs
// until undoBy, whether or not the request's own deadline has passed (the
// request's may be what failed), and so still answers in time.
func (h *EvictionHandler) undo(ctx context.Context, undoBy time.Time, charged []charge, pod *corev1.Pod) error {
	if len(charged) == 0 {
		return nil
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), undoBy)
	defer cancel()
	var errs []error
	for _, c := range charged {
		key := client.ObjectKeyFromObject(c.budget.tdb)
		live, err := h.status().Reread(ctx, key, "")
		if err == nil {
			_, err = h.status().Update(ctx, live, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
				kept := base.Status.DisruptedPods[:0]
				removed := false
				for _, r := range base.Status.DisruptedPods {
					if r.Name == pod.Name && r.UID == pod.UID && r.Time.Time.Equal(metav1.NewTime(c.at).Rfc3339Copy().Time) {
						removed = true
						continue
					}
					kept = append(kept, r)
				}
				if !removed {
					return nil, nil
				}
				base.Status.DisruptedPods = kept
				return base, nil
			})
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

// decodeEviction reads the Eviction of the request (policy/v1 or v1beta1,
// whose JSON is the same for the fields read here).
func decodeEviction(raw []byte) (*policyv1.Eviction, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("the admission request carries no Eviction object")
	}
	var ev policyv1.Eviction
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, fmt.Errorf("decoding the Eviction: %w", err)
	}
	if ev.Kind != "" && ev.Kind != "Eviction" {
		return nil, fmt.Errorf("expected an Eviction, got kind %q", ev.Kind)
	}
	return &ev, nil
}

// isDryRun reports a dry run asked in the Eviction body: kubectl drain
// --dry-run=server sends deleteOptions.dryRun [All] without ?dryRun.
func isDryRun(o *metav1.DeleteOptions) bool {
	if o == nil {
		return false
	}
	for _, v := range o.DryRun {
		if v == metav1.DryRunAll {
			return true
		}
	}
	return false
}

// deny is a refusal with an HTTP status: 429 TooManyRequests is what
// kubectl drain, the cluster autoscaler and Karpenter retry; 409 and 500
// are what the API server itself would answer (a failed precondition, a pod
// under several PodDisruptionBudgets).
func deny(code int32, msg string) admission.Response {
	reason := metav1.StatusReasonTooManyRequests
	switch code {
	case http.StatusConflict:
		reason = metav1.StatusReasonConflict
	case http.StatusForbidden:
		reason = metav1.StatusReasonForbidden
	case http.StatusInternalServerError:
		reason = metav1.StatusReasonInternalError
	}
	st := &metav1.Status{Status: metav1.StatusFailure, Code: code, Reason: reason, Message: msg}
	if code == http.StatusTooManyRequests {
		// As core's eviction answers: the DisruptionBudget cause, and no
		// retryAfterSeconds. The API server turns that into a Retry-After
		// header, on which client-go retries inside the one call (up to ten
		// times): kubectl drain, Karpenter and the autoscaler would block
		// for a minute instead of seeing the 429 and retrying in their own
		// loops, as they do for core's refusals.
		st.Details = &metav1.StatusDetails{
			Causes: []metav1.StatusCause{{Type: policyv1.DisruptionBudgetCause, Message: msg}},
		}
	}
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: st}}
}

// retryable says whether an error means "not now" rather than "broken".
// A request the operator's own client held back (its client-side rate
// limiter would have waited past the deadline) was never sent: nothing was
// written, and the caller may retry as after any refusal. client-go wraps
// that limiter's error as text only, so it is recognised by its message.
func retryable(err error) bool {
	var notStarted *cache.ErrCacheNotStarted
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) || errors.As(err, &notStarted) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		strings.Contains(err.Error(), clientThrottled)
}

// clientThrottled is how client-go's REST client reports a request its rate
// limiter did not let through before the request's deadline.
const clientThrottled = "client rate limiter Wait returned an error"
