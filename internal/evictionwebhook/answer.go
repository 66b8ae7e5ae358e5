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
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

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

// answerOf is the answer of a refusing verdict: a budget's refusal, or a
// PodDisruptionBudget's with core's code.
func answerOf(v budget.Verdict, covering []*coveringBudget, names []string) result {
	r := v.Answer
	if r.Budget >= 0 {
		return refused(covering[r.Budget].tdb, r.Decision, names)
	}
	return result{outcome: outcome{"refused", r.Decision.Reason}, code: r.Code, message: r.Decision.Message, budgets: names}
}

// ended is the answer of a pod read that ended the request (see reread);
// the zero result when none did.
func ended(d *budget.Decision, tdb *policyv1alpha1.TopologyDisruptionBudget, names []string) result {
	switch {
	case d == nil:
		return result{}
	case d.Allowed:
		return result{outcome: outcome{"allowed", d.Reason}}
	}
	return refused(tdb, *d, names)
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
