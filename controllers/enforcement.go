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

// Which evictions a registered eviction webhook sees. The API server calls
// a validating webhook on a request only when one of its rules matches the
// request, its namespaceSelector matches the namespace's labels, its
// objectSelector matches the labels of the request's object or old object,
// and all its matchConditions are true; a call that fails passes the
// request under failurePolicy Ignore (k8s.io/apiserver,
// pkg/admission/plugin/webhook: predicates/rules, predicates/namespace,
// predicates/object, matchconditions). For an eviction the object is the
// Eviction the client sends, not the pod, and there is no old object: an
// objectSelector reads the Eviction's own labels, which kubectl drain,
// Karpenter and the cluster autoscaler leave empty.

import (
	"fmt"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// Enforcement is how far the registered eviction webhook decides the
// evictions of a namespace: the reason and message of the Enforced
// condition of the namespace's budgets.
type Enforcement struct {
	// Reason is, first that applies: ReasonNotEnforced (the webhook sees
	// none of the evictions), ReasonPartiallyEnforced (some callers'
	// evictions skip it), ReasonFailsOpen (it sees every one, but lets them
	// through while it does not answer), else ReasonFullyEnforced. "" when
	// nothing was read (the check is off).
	Reason string
	// Message names what excludes the evictions, and what to change.
	Message string
}

// setEnforcedCondition sets the Enforced condition of st from e, or removes
// it when nothing is known (the registration is not read). It warns, and
// blocks nothing: DisruptionAllowed is computed as ever.
func setEnforcedCondition(st *policyv1alpha1.TopologyDisruptionBudgetStatus, e Enforcement, generation int64, now time.Time) {
	if e.Reason == "" {
		apimeta.RemoveStatusCondition(&st.Conditions, policyv1alpha1.ConditionEnforced)
		return
	}
	status := metav1.ConditionFalse
	if e.Reason == policyv1alpha1.ReasonFullyEnforced {
		status = metav1.ConditionTrue
	}
	apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
		Type: policyv1alpha1.ConditionEnforced, Status: status, Reason: e.Reason, Message: e.Message,
		ObservedGeneration: generation, LastTransitionTime: metav1.NewTime(now),
	})
}

// registration is one eviction webhook and the configuration it is in.
type registration struct {
	config  string
	webhook *admissionregistrationv1.ValidatingWebhook
}

// reach is what one registration does to the evictions of a namespace.
type reach struct {
	// rules says a rule matches a CREATE of pods/eviction; with none, the
	// rest is not read.
	rules bool
	// excluded names what keeps every eviction of the namespace away.
	excluded []string
	// partial names what lets some callers' evictions skip the webhook.
	partial []string
	// failsOpen: failurePolicy Ignore.
	failsOpen bool
}

// reason is the reach's Enforced reason.
func (r reach) reason() string {
	switch {
	case !r.rules || len(r.excluded) > 0:
		return policyv1alpha1.ReasonNotEnforced
	case len(r.partial) > 0:
		return policyv1alpha1.ReasonPartiallyEnforced
	case r.failsOpen:
		return policyv1alpha1.ReasonFailsOpen
	}
	return policyv1alpha1.ReasonFullyEnforced
}

// severity orders the reasons: a namespace reached by several
// registrations is enforced as far as the best of them enforces it.
var severity = map[string]int{
	policyv1alpha1.ReasonFullyEnforced:     0,
	policyv1alpha1.ReasonFailsOpen:         1,
	policyv1alpha1.ReasonPartiallyEnforced: 2,
	policyv1alpha1.ReasonNotEnforced:       3,
}

// enforcementOf decides how far regs (at least one) decide the evictions of
// namespace ns.
func enforcementOf(regs []registration, ns *corev1.Namespace) Enforcement {
	reaches := make([]reach, len(regs))
	best := 0
	for i, reg := range regs {
		reaches[i] = reachOf(reg.webhook, labels.Set(ns.Labels))
		if severity[reaches[i].reason()] < severity[reaches[best].reason()] {
			best = i
		}
	}
	w, where, r := regs[best].webhook.Name, regs[best].config, reaches[best]
	switch r.reason() {
	case policyv1alpha1.ReasonFullyEnforced:
		return Enforcement{Reason: policyv1alpha1.ReasonFullyEnforced, Message: fmt.Sprintf(
			"the eviction webhook %s of ValidatingWebhookConfiguration %s decides every eviction in namespace %s, and refuses them while no operator replica answers (failurePolicy Fail)",
			w, where, ns.Name)}
	case policyv1alpha1.ReasonFailsOpen:
		return Enforcement{Reason: policyv1alpha1.ReasonFailsOpen, Message: fmt.Sprintf(
			"the eviction webhook %s of ValidatingWebhookConfiguration %s %s. Set its failurePolicy to Fail to refuse them instead",
			w, where, failsOpenClause(ns.Name))}
	case policyv1alpha1.ReasonPartiallyEnforced:
		msg := fmt.Sprintf("the eviction webhook %s of ValidatingWebhookConfiguration %s sees the evictions in namespace %s but may skip some: %s; an eviction it skips is not checked against this budget. Remove them from the webhook to enforce every eviction",
			w, where, ns.Name, strings.Join(r.partial, "; "))
		if r.failsOpen {
			msg += fmt.Sprintf(". It also %s", failsOpenClause(ns.Name))
		}
		return Enforcement{Reason: policyv1alpha1.ReasonPartiallyEnforced, Message: msg}
	}
	return notEnforced(regs, reaches, ns.Name)
}

func failsOpenClause(ns string) string {
	return fmt.Sprintf("fails open (failurePolicy Ignore): while no operator replica answers, or an answer misses the webhook's timeoutSeconds, the API server lets the evictions in namespace %s through unchecked", ns)
}

// notEnforced says what keeps every registration away from namespace ns's
// evictions.
func notEnforced(regs []registration, reaches []reach, ns string) Enforcement {
	var causes, configs []string
	noRules := true
	label := ""
	for i, r := range reaches {
		if !slices.Contains(configs, regs[i].config) {
			configs = append(configs, regs[i].config)
		}
		if !r.rules {
			causes = append(causes, fmt.Sprintf("the rules of its webhook %s (%s) match no CREATE of pods/eviction (group \"\", version v1, namespaced)",
				regs[i].webhook.Name, rulesString(regs[i].webhook.Rules)))
			continue
		}
		noRules = false
		causes = append(causes, r.excluded...)
		if sel := regs[i].webhook.NamespaceSelector; sel != nil {
			if v, ok := sel.MatchLabels[EnforceLabel]; ok {
				label = v
			}
		}
	}
	where := strings.Join(configs, ", ")
	if noRules {
		return Enforcement{Reason: policyv1alpha1.ReasonNotEnforced, Message: fmt.Sprintf(
			"ValidatingWebhookConfiguration %s has no webhook for pods/eviction: %s; no eviction is checked, so this budget is shown, not enforced",
			where, strings.Join(causes, "; "))}
	}
	msg := fmt.Sprintf("namespace %s is outside the eviction webhook's scope in ValidatingWebhookConfiguration %s: %s. Its evictions are not checked, so this budget is shown, not enforced",
		ns, where, strings.Join(causes, "; "))
	if label != "" {
		msg += fmt.Sprintf("; label the namespace to enforce it: kubectl label namespace %s %s=%s", ns, EnforceLabel, label)
	}
	return Enforcement{Reason: policyv1alpha1.ReasonNotEnforced, Message: msg}
}

// reachOf reads one webhook's registration against a namespace's labels.
func reachOf(w *admissionregistrationv1.ValidatingWebhook, nsLabels labels.Set) reach {
	var r reach
	r.rules = slices.ContainsFunc(w.Rules, ruleMatchesEviction)
	if !r.rules {
		return r
	}
	// The API server defaults an unset selector to {}, which selects all.
	if w.NamespaceSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(w.NamespaceSelector)
		switch {
		case err != nil:
			// The API server sends such a webhook nothing.
			r.excluded = append(r.excluded, fmt.Sprintf("the namespaceSelector does not parse: %v", err))
		case !sel.Matches(nsLabels):
			r.excluded = append(r.excluded, "the namespaceSelector "+sel.String())
		}
	}
	if w.ObjectSelector != nil {
		sel, err := metav1.LabelSelectorAsSelector(w.ObjectSelector)
		switch {
		case err != nil:
			r.excluded = append(r.excluded, fmt.Sprintf("the objectSelector does not parse: %v", err))
		case sel.Empty():
		case !sel.Matches(labels.Set{}):
			// Nothing reaches the webhook but an Eviction that carries
			// the labels itself, which no usual client sends.
			r.excluded = append(r.excluded, fmt.Sprintf("the objectSelector %s, matched against the labels of the Eviction (not the pod's), which kubectl drain, Karpenter and the cluster autoscaler leave empty", sel))
		default:
			r.partial = append(r.partial, fmt.Sprintf("its objectSelector %s is matched against the labels of the Eviction (not the pod's), and an Eviction labelled to fail it skips the webhook", sel))
		}
	}
	if len(w.MatchConditions) > 0 {
		conds := make([]string, len(w.MatchConditions))
		for i, c := range w.MatchConditions {
			conds[i] = fmt.Sprintf("%s (%s)", c.Name, c.Expression)
		}
		r.partial = append(r.partial, fmt.Sprintf("its matchConditions %s, which call it only on the evictions for which all are true", strings.Join(conds, ", ")))
	}
	// The API server defaults an unset policy to Fail.
	r.failsOpen = w.FailurePolicy != nil && *w.FailurePolicy == admissionregistrationv1.Ignore
	return r
}

// ruleMatchesEviction says whether a rule matches a CREATE of the
// subresource eviction of pods (group "", version v1, namespaced), as the
// API server's rule matcher does.
func ruleMatchesEviction(r admissionregistrationv1.RuleWithOperations) bool {
	if r.Scope != nil && *r.Scope != admissionregistrationv1.AllScopes && *r.Scope != admissionregistrationv1.NamespacedScope {
		return false
	}
	return (slices.Contains(r.Operations, admissionregistrationv1.Create) || slices.Contains(r.Operations, admissionregistrationv1.OperationAll)) &&
		(slices.Contains(r.APIGroups, "") || slices.Contains(r.APIGroups, "*")) &&
		(slices.Contains(r.APIVersions, "v1") || slices.Contains(r.APIVersions, "*")) &&
		slices.ContainsFunc(r.Resources, resourceMatchesEviction)
}

// resourceMatchesEviction says whether a rule's resource names pods/eviction:
// pods/eviction, pods/*, */eviction or */*. "pods" and "*" name no
// subresource.
func resourceMatchesEviction(res string) bool {
	resource, sub, _ := strings.Cut(res, "/")
	return (resource == "pods" || resource == "*") && (sub == "eviction" || sub == "*")
}

// rulesString shows rules as a user reads them in the configuration.
func rulesString(rules []admissionregistrationv1.RuleWithOperations) string {
	if len(rules) == 0 {
		return "no rules"
	}
	out := make([]string, len(rules))
	for i, r := range rules {
		scope := "*"
		if r.Scope != nil {
			scope = string(*r.Scope)
		}
		out[i] = fmt.Sprintf("operations %v, apiGroups %q, apiVersions %v, resources %v, scope %s", r.Operations, r.APIGroups, r.APIVersions, r.Resources, scope)
	}
	return strings.Join(out, "; ")
}
