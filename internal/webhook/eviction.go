// Package webhook holds the eviction admission webhook: it decides each
// pods/eviction CREATE against every TopologyDisruptionBudget covering the
// pod, and records granted evictions in the budgets' status.
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// Path is where the eviction webhook is served.
const Path = "/validate-eviction"

const (
	// defaultMaxTries bounds the decide-and-write attempts per budget.
	defaultMaxTries = 8
	// defaultDeadline is below the webhook's timeoutSeconds (10 s), so the
	// API server gets a clear answer instead of a timeout.
	defaultDeadline = 7 * time.Second
	// undoDeadline bounds the removal of a partial charge.
	undoDeadline = 3 * time.Second
)

// +kubebuilder:webhook:path=/validate-eviction,mutating=false,failurePolicy=fail,sideEffects=NoneOnDryRun,groups="",resources=pods/eviction,verbs=create,versions=v1,name=eviction.policy.tdb.dev,admissionReviewVersions=v1,timeoutSeconds=10,matchPolicy=Equivalent
// +kubebuilder:rbac:groups=policy.tdb.dev,resources=topologydisruptionbudgets/status,verbs=get;update

// EvictionHandler decides evictions. Budgets, pods and nodes are read from
// the informer cache; a budget is re-read from the API server only when a
// status write conflicts. Every grant is a status write conditioned on the
// budget's resourceVersion, so concurrent decisions, in this process or in
// another replica, serialise on the API server and can never over-allow.
type EvictionHandler struct {
	// Cache reads pods, nodes and budgets.
	Cache client.Reader
	// Client writes budget status.
	Client client.Client
	// APIReader re-reads a budget after a conflict, and a pod the cache has
	// not seen yet.
	APIReader client.Reader
	// Clock stamps records.
	Clock clock.PassiveClock
	// ExemptNamespace is the operator's own namespace, whose evictions
	// always pass (so draining the operator's node cannot deadlock).
	ExemptNamespace string
	// Refusals reports refusals as events, rate-limited per budget.
	Refusals *RefusalReporter
	// MaxTries and Deadline bound the work on one request (defaults 8, 7 s).
	MaxTries int
	Deadline time.Duration

	ledger ledger
}

var _ admission.Handler = &EvictionHandler{}

// Handle answers one admission request.
func (h *EvictionHandler) Handle(ctx context.Context, req admission.Request) (resp admission.Response) {
	start := h.Clock.Now()
	out := outcome{decision: "allowed", reason: budget.DecisionPodNotRunning}
	defer func() {
		if r := recover(); r != nil {
			log.FromContext(ctx).Error(fmt.Errorf("panic: %v", r), "eviction webhook panicked")
			out = outcome{decision: "error", reason: "InternalError"}
			resp = admission.Errored(http.StatusInternalServerError, fmt.Errorf("internal error deciding the eviction"))
		}
		observe(out, h.Clock.Since(start))
	}()

	if req.Operation != admissionv1.Create || req.Resource.Resource != "pods" || req.SubResource != "eviction" {
		out = outcome{decision: "allowed", reason: "NotAnEviction"}
		return admission.Allowed("not a pod eviction")
	}
	ev, err := decodeEviction(req.Object.Raw)
	if err != nil {
		out = outcome{decision: "error", reason: "BadRequest"}
		return admission.Errored(http.StatusBadRequest, err)
	}
	if req.Namespace == h.ExemptNamespace && h.ExemptNamespace != "" {
		out.reason = "ExemptNamespace"
		return admission.Allowed("the operator's namespace is exempt")
	}
	dryRun := (req.DryRun != nil && *req.DryRun) || isDryRun(ev.DeleteOptions)

	ctx, cancel := context.WithTimeout(ctx, h.deadline())
	defer cancel()
	res, err := h.decide(ctx, req.Namespace, req.Name, dryRun)
	if err != nil && retryable(err) {
		// Nothing was decided (the operator is starting, or the API server
		// is slow): refuse in the way clients retry.
		out = outcome{decision: "refused", reason: "Unavailable"}
		log.FromContext(ctx).Info("eviction refused for now", "pod", klog.KRef(req.Namespace, req.Name), "error", err.Error())
		return tooManyRequests(fmt.Sprintf("topology disruption budgets cannot decide the eviction of %s/%s right now (%v); retry", req.Namespace, req.Name, err))
	}
	if err != nil {
		out = outcome{decision: "error", reason: "InternalError"}
		log.FromContext(ctx).Error(err, "deciding eviction", "pod", klog.KRef(req.Namespace, req.Name))
		return admission.Errored(http.StatusInternalServerError, err)
	}
	out = res.outcome
	log.FromContext(ctx).V(1).Info("eviction decided", "pod", klog.KRef(req.Namespace, req.Name),
		"decision", res.outcome.decision, "reason", res.outcome.reason, "dryRun", dryRun, "budgets", res.budgets)
	if res.outcome.decision == "allowed" {
		return admission.Allowed("")
	}
	if h.Refusals != nil && res.refusedBy != nil && !dryRun {
		h.Refusals.Refused(res.refusedBy, res.message)
	}
	return tooManyRequests(res.message)
}

func (h *EvictionHandler) deadline() time.Duration {
	if h.Deadline > 0 {
		return h.Deadline
	}
	return defaultDeadline
}

func (h *EvictionHandler) maxTries() int {
	if h.MaxTries > 0 {
		return h.MaxTries
	}
	return defaultMaxTries
}

// outcome labels the decision metric.
type outcome struct{ decision, reason string }

type result struct {
	outcome   outcome
	message   string
	refusedBy *policyv1alpha1.TopologyDisruptionBudget
	budgets   []string
}

func refused(tdb *policyv1alpha1.TopologyDisruptionBudget, d budget.Decision, budgets []string) result {
	return result{outcome: outcome{"refused", d.Reason}, message: d.Message, refusedBy: tdb, budgets: budgets}
}

// decide finds the budgets covering the pod and decides against all of them:
// allowed only if every one allows, and then charged to every one or none.
func (h *EvictionHandler) decide(ctx context.Context, ns, name string, dryRun bool) (result, error) {
	pod, err := h.pod(ctx, ns, name)
	if err != nil {
		return result{}, err
	}
	if pod == nil {
		// The API server answers 404 for the eviction itself.
		return result{outcome: outcome{"allowed", "PodNotFound"}}, nil
	}
	if budget.CanIgnoreBudget(pod) {
		// Pending, terminal and deleting pods pass, as in core, whatever
		// their node or budgets say.
		return result{outcome: outcome{"allowed", budget.DecisionPodNotRunning}}, nil
	}
	covering, err := h.covering(ctx, pod)
	if err != nil {
		return result{}, err
	}
	if len(covering) == 0 {
		return result{outcome: outcome{"allowed", "NotCovered"}}, nil
	}
	names := make([]string, len(covering))
	for i, c := range covering {
		names[i] = c.tdb.Name
		if c.domainErr != nil {
			return refused(c.tdb, budget.Decision{Reason: budget.DecisionBlocked, Message: fmt.Sprintf(
				"topology disruption budget %s/%s: %v; %s", c.tdb.Namespace, c.tdb.Name, c.domainErr, c.advice)}, names), nil
		}
	}

	now := h.Clock.Now()
	// A refusal needs no lock: refuse at once when the newest version known
	// here already refuses (allowances only fall between the status
	// controller's passes, and a refusal is always safe).
	for _, c := range covering {
		c.entry = h.ledger.entry(types.NamespacedName{Namespace: c.tdb.Namespace, Name: c.tdb.Name})
		if d := budget.DecideEviction(c.entry.newest(c.tdb), budget.EvictionRequest{Pod: pod, Domain: c.domain, Now: now}); !d.Allowed {
			return refused(c.tdb, d, names), nil
		}
	}
	if len(covering) == 1 && !dryRun {
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
		c.entry.Lock()
		defer c.entry.Unlock()
		c.tdb = c.entry.newest(c.tdb)
	}

	// First decide against every budget as known: a refusal costs no write.
	decisions := make([]budget.Decision, len(covering))
	for i, c := range covering {
		decisions[i] = budget.DecideEviction(c.tdb, budget.EvictionRequest{Pod: pod, Domain: c.domain, Now: now})
		if !decisions[i].Allowed {
			return refused(c.tdb, decisions[i], names), nil
		}
	}
	reason := decisions[0].Reason
	if dryRun {
		return result{outcome: outcome{"allowed", reason}, budgets: names}, nil
	}
	// Then charge each budget in turn; if one refuses on a fresh read, undo
	// the charges this request made.
	var charged []charge
	for i, c := range covering {
		d, err := h.charge(ctx, c, pod, decisions[i], now)
		if err != nil || !d.Allowed {
			if uerr := h.undo(ctx, charged, pod); uerr != nil {
				err = errors.Join(err, fmt.Errorf("undoing the charges of an eviction another budget refused: %w", uerr))
			}
			if err != nil {
				return result{}, err
			}
			return refused(c.tdb, d, names), nil
		}
		if d.Reason == budget.DecisionCharged {
			reason = d.Reason
			charged = append(charged, charge{budget: c, at: now})
		}
	}
	return result{outcome: outcome{"allowed", reason}, budgets: names}, nil
}

// grant decides the eviction of pod against the one budget covering it and,
// when allowed, records it, together with the other grants queued for the
// budget meanwhile.
func (h *EvictionHandler) grant(ctx context.Context, c *coveringBudget, pod *corev1.Pod, now time.Time) (budget.Decision, error) {
	g := &grant{pod: pod, domain: c.domain, now: now, seen: c.tdb}
	c.entry.enqueue(g)
	c.entry.Lock()
	defer c.entry.Unlock()
	if !g.done {
		h.commit(ctx, c, c.entry.take())
	}
	return g.decision, g.err
}

// commit decides the queued grants in turn against the newest version of the
// budget, each seeing the records and allowances of those before it, and
// writes the result in one status write with the budget's resourceVersion.
// On a conflict it re-reads the budget and decides them all again. Every
// grant is done when it returns; none is allowed unless the write that
// records it succeeded.
//
// The work runs until the leading request's deadline even if that request
// is cancelled (its client went away): the others' answers depend on it.
func (h *EvictionHandler) commit(ctx context.Context, c *coveringBudget, batch []*grant) {
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
	} else {
		ctx = context.WithoutCancel(ctx)
	}
	defer func() {
		// Should deciding panic, no grant is left without an answer.
		for _, g := range batch {
			if !g.done {
				g.done, g.decision, g.err = true, budget.Decision{}, errors.New("internal error deciding the eviction")
			}
		}
	}()
	base := c.entry.newest(c.tdb)
	for _, g := range batch {
		if cand := c.entry.newest(g.seen); newerVersion(cand, base) {
			base = cand
		}
	}
	finish := func(decisions []budget.Decision, err error) {
		for i, g := range batch {
			g.done, g.decision, g.err = true, decisions[i], nil
			if err != nil && decisions[i].Allowed {
				g.decision, g.err = budget.Decision{}, err
			}
		}
	}
	for try := 1; ; try++ {
		work := base.DeepCopy()
		decisions := make([]budget.Decision, len(batch))
		charges := 0
		for i, g := range batch {
			if g.seen.UID != work.UID || g.seen.Generation != work.Generation {
				// The pod's domain was found under another spec (or
				// another budget of the same name).
				decisions[i] = budget.Decision{Reason: budget.DecisionStaleStatus, Message: fmt.Sprintf(
					"topology disruption budget %s/%s changed while the eviction was decided; retry", work.Namespace, work.Name)}
				continue
			}
			decisions[i] = budget.DecideEviction(work, budget.EvictionRequest{Pod: g.pod, Domain: g.domain, Now: g.now})
			if decisions[i].Allowed && decisions[i].Status != nil {
				work.Status = *decisions[i].Status
				charges++
			}
		}
		if charges == 0 {
			finish(decisions, nil)
			return
		}
		err := h.Client.Status().Update(ctx, work)
		if err == nil {
			c.entry.latest.Store(work)
			chargesPerWrite.Observe(float64(charges))
			finish(decisions, nil)
			return
		}
		if !apierrors.IsConflict(err) {
			finish(decisions, fmt.Errorf("recording the eviction in %s/%s: %w", base.Namespace, base.Name, err))
			return
		}
		if try >= h.maxTries() {
			for i := range decisions {
				if decisions[i].Allowed {
					decisions[i] = budget.Decision{Reason: budget.DecisionContended, Message: fmt.Sprintf(
						"topology disruption budget %s/%s: too many concurrent evictions; retry", base.Namespace, base.Name)}
				}
			}
			finish(decisions, nil)
			return
		}
		fresh := &policyv1alpha1.TopologyDisruptionBudget{}
		if err := h.APIReader.Get(ctx, client.ObjectKeyFromObject(base), fresh); err != nil {
			finish(decisions, fmt.Errorf("re-reading %s/%s after a conflict: %w", base.Namespace, base.Name, err))
			return
		}
		c.entry.latest.Store(fresh)
		base = fresh
	}
}

// charge is a record this request wrote, to undo if another budget refuses.
type charge struct {
	budget *coveringBudget
	at     time.Time
}

// pod reads the pod from the cache, or from the API server when the cache
// has not seen it yet. A nil pod means it does not exist.
func (h *EvictionHandler) pod(ctx context.Context, ns, name string) (*corev1.Pod, error) {
	var pod corev1.Pod
	err := h.Cache.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pod)
	if apierrors.IsNotFound(err) && h.APIReader != nil {
		err = h.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &pod)
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading pod %s/%s: %w", ns, name, err)
	}
	if !budget.IsHealthy(&pod) || pod.Status.Phase != corev1.PodRunning {
		// A pod that would pass uncharged (pending, not Ready) may have
		// become Running and Ready since the cache saw it: decide on the
		// API server's copy, as core does.
		var live corev1.Pod
		err := h.APIReader.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &live)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading pod %s/%s: %w", ns, name, err)
		}
		return &live, nil
	}
	return &pod, nil
}

// coveringBudget is a budget that covers the pod, with the pod's domain.
type coveringBudget struct {
	tdb       *policyv1alpha1.TopologyDisruptionBudget
	domain    string
	domainErr error
	// advice tells the user how to clear domainErr.
	advice string
	// entry is the budget's ledger entry, locked while deciding.
	entry *budgetEntry
}

// covering lists the budgets of the pod's namespace that cover it, sorted
// by name so that concurrent requests charge them in the same order.
func (h *EvictionHandler) covering(ctx context.Context, pod *corev1.Pod) ([]*coveringBudget, error) {
	var list policyv1alpha1.TopologyDisruptionBudgetList
	// Budgets are copied only once known to cover the pod.
	if err := h.Cache.List(ctx, &list, client.InNamespace(pod.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("listing budgets in %s: %w", pod.Namespace, err)
	}
	var nodeErr error
	nodes := func(name string) *corev1.Node {
		var n corev1.Node
		if err := h.Cache.Get(ctx, client.ObjectKey{Name: name}, &n); err != nil {
			if !apierrors.IsNotFound(err) {
				nodeErr = err
			}
			return nil
		}
		return &n
	}
	var out []*coveringBudget
	for i := range list.Items {
		t := &list.Items[i]
		covered, domain, err := budget.DomainOf(t, pod, nodes)
		if nodeErr != nil {
			return nil, fmt.Errorf("reading node %s: %w", pod.Spec.NodeName, nodeErr)
		}
		switch {
		case !covered && err != nil:
			// The spec cannot be evaluated (a bad selector): it may cover
			// the pod, so it must refuse.
			out = append(out, &coveringBudget{tdb: t.DeepCopy(), domainErr: err,
				advice: "fix the budget's spec (kubectl describe tdb shows the SyncFailed condition)"})
		case covered && err != nil:
			out = append(out, &coveringBudget{tdb: t.DeepCopy(), domainErr: fmt.Errorf("cannot tell the domain of the pod: %w", err),
				advice: fmt.Sprintf("label the node with %s", t.Spec.TopologyKey)})
		case covered:
			out = append(out, &coveringBudget{tdb: t.DeepCopy(), domain: domain})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].tdb.Name < out[j].tdb.Name })
	return out, nil
}

// charge writes the decision's status with the budget's resourceVersion. On
// a conflict it re-reads the budget from the API server and decides again.
func (h *EvictionHandler) charge(ctx context.Context, c *coveringBudget, pod *corev1.Pod, d budget.Decision, now time.Time) (budget.Decision, error) {
	for try := 1; ; try++ {
		if d.Status == nil || !d.Allowed {
			return d, nil
		}
		next := c.tdb.DeepCopy()
		next.Status = *d.Status
		err := h.Client.Status().Update(ctx, next)
		if err == nil {
			c.tdb = next
			c.entry.latest.Store(next)
			return d, nil
		}
		if !apierrors.IsConflict(err) {
			return d, fmt.Errorf("recording the eviction in %s/%s: %w", c.tdb.Namespace, c.tdb.Name, err)
		}
		if try >= h.maxTries() {
			return budget.Decision{Reason: budget.DecisionContended, Message: fmt.Sprintf(
				"topology disruption budget %s/%s: too many concurrent evictions; retry", c.tdb.Namespace, c.tdb.Name)}, nil
		}
		fresh := &policyv1alpha1.TopologyDisruptionBudget{}
		if err := h.APIReader.Get(ctx, client.ObjectKeyFromObject(c.tdb), fresh); err != nil {
			return d, fmt.Errorf("re-reading %s/%s after a conflict: %w", c.tdb.Namespace, c.tdb.Name, err)
		}
		c.tdb = fresh
		c.entry.latest.Store(fresh)
		d = budget.DecideEviction(fresh, budget.EvictionRequest{Pod: pod, Domain: c.domain, Now: now})
	}
}

// undo removes the records this request wrote, so that an eviction another
// budget refused is charged to none. Only records this request created are
// removed (same pod UID and grant time): a record another request granted
// for the same pod stays. The domain's allowance is not raised here: the
// status controller recomputes it from the pods (raising it is its job
// alone), so undoing errs on the side of allowing less for a moment. It runs
// on its own deadline: the request's may be what failed.
func (h *EvictionHandler) undo(ctx context.Context, charged []charge, pod *corev1.Pod) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), undoDeadline)
	defer cancel()
	var errs []error
	for _, c := range charged {
		key := client.ObjectKeyFromObject(c.budget.tdb)
		err := retryOnConflict(ctx, h.maxTries(), func() error {
			fresh := &policyv1alpha1.TopologyDisruptionBudget{}
			if err := h.APIReader.Get(ctx, key, fresh); err != nil {
				return err
			}
			kept := fresh.Status.DisruptedPods[:0]
			removed := false
			for _, r := range fresh.Status.DisruptedPods {
				if r.Name == pod.Name && r.UID == pod.UID && r.Time.Time.Equal(metav1.NewTime(c.at).Rfc3339Copy().Time) {
					removed = true
					continue
				}
				kept = append(kept, r)
			}
			if !removed {
				return nil
			}
			fresh.Status.DisruptedPods = kept
			return h.Client.Status().Update(ctx, fresh)
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	return errors.Join(errs...)
}

func retryOnConflict(ctx context.Context, tries int, f func() error) error {
	var err error
	for i := 0; i < tries; i++ {
		if err = f(); !apierrors.IsConflict(err) {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return err
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

// tooManyRequests is the refusal kubectl drain, the cluster autoscaler and
// Karpenter retry: HTTP 429 with reason TooManyRequests.
func tooManyRequests(msg string) admission.Response {
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{
		Allowed: false,
		Result: &metav1.Status{
			Status:  metav1.StatusFailure,
			Code:    http.StatusTooManyRequests,
			Reason:  metav1.StatusReasonTooManyRequests,
			Message: msg,
		},
	}}
}

// retryable says whether an error means "not now" rather than "broken".
func retryable(err error) bool {
	var notStarted *cache.ErrCacheNotStarted
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &notStarted) ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err)
}
