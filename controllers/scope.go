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
	"fmt"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// EnforceLabel is the namespace label the labelled webhook scope selects:
// with it, only namespaces labelled policy.tdb.dev/enforce=true send their
// evictions to the webhook.
const EnforceLabel = "policy.tdb.dev/enforce"

// WebhookScope tells which namespaces the registered eviction webhook
// reaches, from the operator's own ValidatingWebhookConfiguration (its
// namespaceSelector): a budget in a namespace it does not reach is not
// enforced, and says so. It reads through the cache; the operator only
// reads the configuration and the namespaces.
type WebhookScope struct {
	Reader client.Reader
	// ConfigName is the ValidatingWebhookConfiguration that registers the
	// webhook; "" turns the check off (every namespace is reached).
	ConfigName string
}

// evictionWebhook finds the configuration's webhook for pods/eviction.
func evictionWebhook(vwc *admissionregistrationv1.ValidatingWebhookConfiguration) *admissionregistrationv1.ValidatingWebhook {
	for i := range vwc.Webhooks {
		for _, r := range vwc.Webhooks[i].Rules {
			for _, res := range r.Resources {
				if res == "pods/eviction" || res == "pods/*" || res == "*/*" {
					return &vwc.Webhooks[i]
				}
			}
		}
	}
	return nil
}

// WebhookName is the eviction webhook's name in its configuration
// (config/webhook/manifests.yaml, the OLM bundle, the Helm chart).
const WebhookName = "eviction.policy.tdb.dev"

// registered finds the eviction webhooks registered for the operator: those
// of the configuration ConfigName or, when it does not exist (OLM names the
// configuration itself), every configuration's webhook named WebhookName.
func (s *WebhookScope) registered(ctx context.Context) ([]*admissionregistrationv1.ValidatingWebhook, string, error) {
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	err := s.Reader.Get(ctx, client.ObjectKey{Name: s.ConfigName}, &vwc)
	switch {
	case err == nil:
		if w := evictionWebhook(&vwc); w != nil {
			return []*admissionregistrationv1.ValidatingWebhook{w}, s.ConfigName, nil
		}
		return nil, fmt.Sprintf("ValidatingWebhookConfiguration %s has no webhook for pods/eviction", s.ConfigName), nil
	case !apierrors.IsNotFound(err):
		return nil, "", fmt.Errorf("reading the webhook configuration %s: %w", s.ConfigName, err)
	}
	var all admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := s.Reader.List(ctx, &all); err != nil {
		return nil, "", fmt.Errorf("listing webhook configurations: %w", err)
	}
	var out []*admissionregistrationv1.ValidatingWebhook
	var names []string
	for i := range all.Items {
		if w := evictionWebhook(&all.Items[i]); w != nil && w.Name == WebhookName {
			out = append(out, w)
			names = append(names, all.Items[i].Name)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("the eviction webhook is not registered (ValidatingWebhookConfiguration %s does not exist, nor any with a webhook %s)", s.ConfigName, WebhookName), nil
	}
	return out, strings.Join(names, ", "), nil
}

// NotEnforced says why the webhook does not decide the evictions of
// namespace ns, or "" when it does.
func (s *WebhookScope) NotEnforced(ctx context.Context, ns string) (string, error) {
	if s == nil || s.ConfigName == "" {
		return "", nil
	}
	hooks, where, err := s.registered(ctx)
	if err != nil {
		return "", err
	}
	if len(hooks) == 0 {
		return where + ": no eviction is checked, so this budget is shown, not enforced", nil
	}
	var namespace corev1.Namespace
	if err := s.Reader.Get(ctx, client.ObjectKey{Name: ns}, &namespace); err != nil {
		return "", fmt.Errorf("reading namespace %s: %w", ns, err)
	}
	var selectors []string
	label := ""
	for _, w := range hooks {
		if w.NamespaceSelector == nil {
			return "", nil
		}
		sel, err := metav1.LabelSelectorAsSelector(w.NamespaceSelector)
		if err != nil {
			// The API server sends such a webhook nothing.
			selectors = append(selectors, fmt.Sprintf("(does not parse: %v)", err))
			continue
		}
		if sel.Matches(labels.Set(namespace.Labels)) {
			return "", nil
		}
		selectors = append(selectors, sel.String())
		if v, ok := w.NamespaceSelector.MatchLabels[EnforceLabel]; ok {
			label = v
		}
	}
	msg := fmt.Sprintf("namespace %s is outside the eviction webhook's scope (the namespaceSelector %s of ValidatingWebhookConfiguration %s): its evictions are not checked, so this budget is shown, not enforced",
		ns, strings.Join(selectors, "; "), where)
	if label != "" {
		msg += fmt.Sprintf("; label the namespace to enforce it: kubectl label namespace %s %s=%s", ns, EnforceLabel, label)
	}
	return msg, nil
}
