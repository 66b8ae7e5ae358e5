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

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// EnforceLabel is the namespace label the labelled webhook scope selects:
// with it, only namespaces labelled policy.tdb.dev/enforce=true send their
// evictions to the webhook.
const EnforceLabel = "policy.tdb.dev/enforce"

// WebhookScope tells how far the registered eviction webhook decides the
// evictions of a namespace, from the operator's own
// ValidatingWebhookConfiguration (every field the API server reads to
// decide whether to call the webhook, see enforcementOf) and the
// namespace's labels: a budget whose evictions it may skip says so. It
// reads through the cache; the operator only reads the configuration and
// the namespaces.
type WebhookScope struct {
	Reader client.Reader
	// ConfigName is the ValidatingWebhookConfiguration that registers the
	// webhook; "" turns the check off (nothing is known, nothing reported).
	ConfigName string
}

// evictionWebhook finds the configuration's webhook for pods/eviction.
func evictionWebhook(vwc *admissionregistrationv1.ValidatingWebhookConfiguration) *admissionregistrationv1.ValidatingWebhook {
	for i := range vwc.Webhooks {
		for _, r := range vwc.Webhooks[i].Rules {
			for _, res := range r.Resources {
				if resourceMatchesEviction(res) {
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

// registered finds the eviction webhooks registered for the operator: in
// the configuration ConfigName, the webhook named WebhookName, else the one
// whose rules name pods/eviction; when that configuration does not exist
// (OLM names the configuration itself), every configuration's webhook named
// WebhookName. A webhook found by its name is returned whatever its rules
// say: enforcementOf reads them. With none, the string says why.
func (s *WebhookScope) registered(ctx context.Context) ([]registration, string, error) {
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	err := s.Reader.Get(ctx, client.ObjectKey{Name: s.ConfigName}, &vwc)
	switch {
	case err == nil:
		w := namedWebhook(&vwc)
		if w == nil {
			w = evictionWebhook(&vwc)
		}
		if w != nil {
			return []registration{{config: s.ConfigName, webhook: w}}, "", nil
		}
		return nil, fmt.Sprintf("ValidatingWebhookConfiguration %s has no webhook for pods/eviction", s.ConfigName), nil
	case !apierrors.IsNotFound(err):
		return nil, "", fmt.Errorf("reading the webhook configuration %s: %w", s.ConfigName, err)
	}
	var all admissionregistrationv1.ValidatingWebhookConfigurationList
	if err := s.Reader.List(ctx, &all); err != nil {
		return nil, "", fmt.Errorf("listing webhook configurations: %w", err)
	}
	var out []registration
	for i := range all.Items {
		if w := namedWebhook(&all.Items[i]); w != nil {
			out = append(out, registration{config: all.Items[i].Name, webhook: w})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("the eviction webhook is not registered (ValidatingWebhookConfiguration %s does not exist, nor any with a webhook %s)", s.ConfigName, WebhookName), nil
	}
	return out, "", nil
}

// namedWebhook finds the configuration's webhook named WebhookName.
func namedWebhook(vwc *admissionregistrationv1.ValidatingWebhookConfiguration) *admissionregistrationv1.ValidatingWebhook {
	for i := range vwc.Webhooks {
		if vwc.Webhooks[i].Name == WebhookName {
			return &vwc.Webhooks[i]
		}
	}
	return nil
}

// Enforcement says how far the registered webhook decides the evictions of
// namespace ns: the reason and message of the budgets' Enforced condition.
// It is the zero Enforcement when the check is off.
func (s *WebhookScope) Enforcement(ctx context.Context, ns string) (Enforcement, error) {
	if s == nil || s.ConfigName == "" {
		return Enforcement{}, nil
	}
	regs, none, err := s.registered(ctx)
	if err != nil {
		return Enforcement{}, err
	}
	if len(regs) == 0 {
		return Enforcement{Reason: policyv1alpha1.ReasonNotEnforced, Message: none + ": no eviction is checked, so this budget is shown, not enforced"}, nil
	}
	var namespace corev1.Namespace
	if err := s.Reader.Get(ctx, client.ObjectKey{Name: ns}, &namespace); err != nil {
		return Enforcement{}, fmt.Errorf("reading namespace %s: %w", ns, err)
	}
	return enforcementOf(regs, &namespace), nil
}
