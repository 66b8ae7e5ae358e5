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
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
)

// InstalledFailurePolicyAnnotation is the annotation of the operator's
// ValidatingWebhookConfiguration that records the failurePolicy the install
// set (config/webhook sets it beside the policy): the
// TDBWebhookFailurePolicyChanged alert fires when the eviction webhook's
// policy differs from it.
const InstalledFailurePolicyAnnotation = "policy.tdb.dev/installed-failure-policy"

// PolicyNotRegistered is the policy label of tdb_webhook_failure_policy
// while the configuration, or its webhook for pods/eviction, does not exist.
const PolicyNotRegistered = "None"

// DefaultFailurePolicyInterval is how often FailurePolicyExporter reads the
// webhook configuration.
const DefaultFailurePolicyInterval = 30 * time.Second

// FailurePolicyExporter exports the eviction webhook's current failurePolicy
// (tdb_webhook_failure_policy) and the one the install declared
// (tdb_webhook_installed_failure_policy), read from the operator's own
// ValidatingWebhookConfiguration every Interval, on every replica. It only
// reads the configuration, which the operator may already read.
type FailurePolicyExporter struct {
	// Reader reads the configuration (the manager's cached client).
	Reader client.Reader
	// ConfigName is the ValidatingWebhookConfiguration; "" exports nothing.
	ConfigName string
	// Interval between reads; DefaultFailurePolicyInterval when zero.
	Interval time.Duration
}

// Start exports at once, then every Interval until ctx ends.
func (e *FailurePolicyExporter) Start(ctx context.Context) error {
	if e.ConfigName == "" {
		return nil
	}
	interval := e.Interval
	if interval <= 0 {
		interval = DefaultFailurePolicyInterval
	}
	log := ctrl.LoggerFrom(ctx).WithName("webhook-failure-policy")
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		// A cache that cannot sync (no right to list the configurations)
		// must not hold the loop.
		readCtx, cancel := context.WithTimeout(ctx, interval)
		if err := e.Export(readCtx); err != nil {
			log.Error(err, "exporting the eviction webhook's failurePolicy")
		}
		cancel()
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// NeedLeaderElection is false: every replica reports what it reads.
func (*FailurePolicyExporter) NeedLeaderElection() bool { return false }

// Export reads the configuration once and replaces both metrics' series.
// On a read error the series are left as they were.
func (e *FailurePolicyExporter) Export(ctx context.Context) error {
	current, installed := PolicyNotRegistered, ""
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	err := e.Reader.Get(ctx, client.ObjectKey{Name: e.ConfigName}, &vwc)
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return fmt.Errorf("reading the webhook configuration %s: %w", e.ConfigName, err)
	default:
		installed = vwc.Annotations[InstalledFailurePolicyAnnotation]
		if w := evictionWebhook(&vwc); w != nil {
			// The API server defaults an unset policy to Fail.
			current = string(admissionregistrationv1.Fail)
			if w.FailurePolicy != nil {
				current = string(*w.FailurePolicy)
			}
		}
	}
	operatormetrics.WebhookFailurePolicy.Reset()
	operatormetrics.WebhookFailurePolicy.WithLabelValues(current).Set(1)
	operatormetrics.WebhookInstalledFailurePolicy.Reset()
	switch admissionregistrationv1.FailurePolicyType(installed) {
	case admissionregistrationv1.Fail, admissionregistrationv1.Ignore:
		operatormetrics.WebhookInstalledFailurePolicy.WithLabelValues(installed).Set(1)
	case "":
	default:
		return fmt.Errorf("the annotation %s of ValidatingWebhookConfiguration %s is %q, not Fail or Ignore", InstalledFailurePolicyAnnotation, e.ConfigName, installed)
	}
	return nil
}
