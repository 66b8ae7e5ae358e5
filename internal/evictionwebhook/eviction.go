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
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
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

func staleDecision(tdb *policyv1alpha1.TopologyDisruptionBudget) budget.Decision {
	return budget.Decision{Reason: budget.DecisionStaleStatus, Message: fmt.Sprintf(
		"topology disruption budget %s/%s, or the pod's domain, changed while the eviction was decided; retry", tdb.Namespace, tdb.Name)}
}

// decide finds the budgets covering the pod and decides against all of them:
// allowed only if every one allows, and then charged to every one or none.
// The steps: the pod read (podreads.go), the covering budgets, the verdict
// of all of them on the newest versions known (budget.Decide: a refusal
// needs no lock), then the commit (commit.go, groupcommit.go).
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
	if res, done := beforeBudgets(pod, er.preconditions); done {
		return res, nil
	}
	covering, err := h.covering(ctx, pod)
	switch {
	case err != nil:
		return result{}, err
	case len(covering) == 0:
		return result{outcome: outcome{"allowed", budget.DecisionNotCovered}}, nil
	}
	names := budgetNames(covering)
	if c := nodeGone(covering); c != nil {
		// The pod's node is gone: pod garbage collection may have replaced
		// it (a StatefulSet pod keeps its name) while the cache still shows
		// the old one. Decide on the API server's copy.
		fresh, end, err := h.reread(ctx, pod, c.tdb)
		if end != nil || err != nil {
			return ended(end, c.tdb, names), err
		}
		pod, live = fresh, true
	}
	pdbs, err := h.pdbs(ctx, pod.Namespace)
	if err != nil {
		return result{}, err
	}
	now := h.Clock.Now()
	// A refusal needs no lock: refuse at once when the newest versions known
	// here already refuse (allowances only fall between the status
	// controller's passes, and a refusal is always safe).
	if v := h.verdict(ctx, pod, covering, pdbs, now, true, false); !v.Allowed {
		return answerOf(v, covering, names), nil
	}
	// The API server evicts whichever pod holds the name when it gets
	// there. A pod read from the cache whose name a record holds may be a
	// predecessor the cache still shows healthy while its StatefulSet
	// replacement already runs, elsewhere: deciding on it would renew the
	// predecessor's record (AlreadyRecorded) and let the replacement go
	// uncharged, or charge the wrong domain. Such names are read live
	// (once: a version written later may show such a record too, see
	// tryCommit and charge), and the pod decided again as it is now.
	if !live && recordedName(h.status(), covering, pod.Name) {
		fresh, end, err := h.reread(ctx, pod, covering[0].tdb)
		if end != nil || err != nil {
			return ended(end, covering[0].tdb, names), err
		}
		pod = fresh
		if v := h.verdict(ctx, pod, covering, pdbs, now, true, false); !v.Allowed {
			return answerOf(v, covering, names), nil
		}
	}
	if len(covering) == 1 && !er.dryRun {
		// The common case: one budget. Its grants are decided and written
		// in groups (see ledger).
		d, err := h.grant(ctx, covering[0], pod, now)
		switch {
		case err != nil:
			return result{}, err
		case !d.Allowed:
			return refused(covering[0].tdb, d, names), nil
		}
		return result{outcome: outcome{"allowed", d.Reason}, budgets: names}, nil
	}
	return h.commitAll(ctx, er, covering, pod, pdbs, now, names)
}

// beforeBudgets answers what no budget decides: a pod that does not exist
// (the API server answers 404), an Eviction whose preconditions fail on it
// (409, nothing to charge: answered here so that no record is left for
// it), and a pod core lets go without asking (terminal, deleting,
// unscheduled). A Pending pod on a node is decided by its budgets, which
// record it (budget.IsBoundPending).
func beforeBudgets(pod *corev1.Pod, preconditions *metav1.Preconditions) (result, bool) {
	switch {
	case pod == nil:
		return result{outcome: outcome{"allowed", budget.DecisionPodNotFound}}, true
	case preconditionMismatch(preconditions, pod) != "":
		return result{outcome: outcome{"refused", budget.DecisionPreconditionFailed}, code: http.StatusConflict,
			message: preconditionMismatch(preconditions, pod)}, true
	case budget.CanIgnoreBudget(pod) && !budget.IsBoundPending(pod):
		return result{outcome: outcome{"allowed", budget.DecisionPodNotRunning}}, true
	}
	return result{}, false
}

// verdict decides the pod under every covering budget and its PDBs
// (budget.Decide). newest decides on the newest version of each budget
// known here (the lock-free check) rather than the one held; each decision
// the status's numbers made may be checked on this process's cache
// (refresh): refusals only, or grants too (all).
func (h *EvictionHandler) verdict(ctx context.Context, pod *corev1.Pod, covering []*coveringBudget, pdbs []policyv1.PodDisruptionBudget,
	now time.Time, newest, all bool) budget.Verdict {
	q := budget.PodEviction{Pod: pod, PDBs: pdbs, Now: now, Covering: make([]budget.Covering, len(covering))}
	for i, c := range covering {
		tdb := c.tdb
		if newest {
			tdb = h.status().Newest(c.tdb)
		}
		q.Covering[i] = budget.Covering{Budget: tdb, Domain: c.domain, NodeGone: c.nodeGone, PlaceErr: c.placeErr}
	}
	q.Recheck = func(i int, d budget.Decision) budget.Decision {
		if d.Allowed && !all || !checkable(d) {
			return d
		}
		c := q.Covering[i]
		again, _ := h.refresh(ctx, c.Budget.DeepCopy(), d, budget.EvictionRequest{Pod: pod, Domain: c.Domain, Now: now, NodeGone: c.NodeGone})
		return again
	}
	return budget.Decide(q)
}

// pdbs lists the policy/v1 PodDisruptionBudgets of the namespace from the
// cache: core asks them after this webhook, and a charge for an eviction
// core then refuses would hold the domain's allowance for nothing. A PDB
// the cache shows allowing while core sees it refusing still leaves a
// record; the status controller drops it once it finds the pod not deleted
// (see budget.DefaultRecordTimeout).
func (h *EvictionHandler) pdbs(ctx context.Context, ns string) ([]policyv1.PodDisruptionBudget, error) {
	var list policyv1.PodDisruptionBudgetList
	if err := h.Cache.List(ctx, &list, client.InNamespace(ns)); err != nil {
		return nil, fmt.Errorf("listing PodDisruptionBudgets in %s: %w", ns, err)
	}
	return list.Items, nil
}

// nodeGone is the first covering budget that found the pod's node gone.
func nodeGone(covering []*coveringBudget) *coveringBudget {
	for _, c := range covering {
		if c.nodeGone {
			return c
		}
	}
	return nil
}

// budgetNames are the covering budgets' names, for the log.
func budgetNames(covering []*coveringBudget) []string {
	names := make([]string, len(covering))
	for i, c := range covering {
		names[i] = c.tdb.Name
	}
	return names
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
		out = append(out, &coveringBudget{tdb: t.DeepCopy(), domain: p.Domain, nodeGone: p.NodeGone, placeErr: err,
			entry: h.ledger.entry(types.NamespacedName{Namespace: t.Namespace, Name: t.Name})})
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
