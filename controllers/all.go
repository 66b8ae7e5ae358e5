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
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/tdb-operator/tdb-operator/internal/replica"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
	"github.com/tdb-operator/tdb-operator/internal/tombstone"
)

// Options configure the operator's controllers.
type Options struct {
	// Clock is the time source of every controller (a fake one in tests).
	Clock clock.PassiveClock
	// RecordTimeout bounds an eviction record whose pod keeps running.
	RecordTimeout time.Duration
	// OperatorNamespace is the operator's own namespace, whose evictions
	// the webhook lets through: budgets there are reported NotEnforced.
	OperatorNamespace string
	// WebhookConfigName is the ValidatingWebhookConfiguration that
	// registers the eviction webhook: budgets in namespaces its
	// namespaceSelector does not reach are reported NotEnforced ("": no
	// check, as in tests without a registered webhook).
	WebhookConfigName string
	// Memory is what the process remembers beyond its cache, shared with
	// the eviction webhook (replica.ForManager; nil: a new one for the
	// controllers alone, custom scales read live).
	Memory *replica.Memory
	// StatusWorkers is how many budgets the status controller passes at
	// once (0: DefaultStatusWorkers).
	StatusWorkers int
}

// NewGatherer is the controllers' gathering layer over mgr's cache, custom
// scales read live.
func NewGatherer(mgr ctrl.Manager, gone *tombstone.Nodes) *snapshot.Gatherer {
	return &snapshot.Gatherer{Cache: mgr.GetClient(), GoneNodes: gone, Scales: mgr.GetClient()}
}

// SetupAll registers every controller of the operator with mgr, as the
// manager binary and the integration suites run them. Each controller
// registers the cache indexes it reads.
func SetupAll(mgr ctrl.Manager, o Options) error {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	mem := o.Memory
	if mem == nil {
		mem = &replica.Memory{}
	}
	// One gathering layer for every controller: one cache of parsed specs.
	if mem.Snapshots == nil {
		mem.Snapshots = NewGatherer(mgr, mem.GoneNodes)
	}
	snapshots, versions := mem.Snapshots, mem.Versions()
	recorder := mgr.GetEventRecorder("tdb-operator")
	// Each status pass ends by handing the budget to the deletion-cost
	// controller.
	passes := NewStatusPasses()
	costs := &DeletionCostReconciler{
		Client:            mgr.GetClient(),
		OperatorNamespace: o.OperatorNamespace,
		Snapshots:         snapshots,
		Versions:          versions,
		Passes:            passes,
	}
	if err := (&BudgetReconciler{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetClient(),
		LiveReader:        mgr.GetAPIReader(),
		Recorder:          recorder,
		Clock:             o.Clock,
		RecordTimeout:     o.RecordTimeout,
		OperatorNamespace: o.OperatorNamespace,
		Scope:             &WebhookScope{Reader: mgr.GetClient(), ConfigName: o.WebhookConfigName},
		GoneNodes:         mem.GoneNodes,
		Versions:          versions,
		Snapshots:         snapshots,
		Passes:            passes,
		Pending:           mem.Pending(),
		Memory:            mem,
		Workers:           o.StatusWorkers,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the budget status controller: %w", err)
	}
	if err := costs.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the deletion-cost controller: %w", err)
	}
	rollouts := &RolloutReconciler{
		Client:            mgr.GetClient(),
		APIReader:         mgr.GetAPIReader(),
		Recorder:          recorder,
		Clock:             o.Clock,
		OperatorNamespace: o.OperatorNamespace,
		Versions:          versions,
		Snapshots:         snapshots,
	}
	if err := rollouts.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the rollout controller: %w", err)
	}
	mem.Keep("rollout expectations", rollouts.expect.forget)
	mem.Keep("rollout series", func(k types.NamespacedName) { forgetRollout(k.Namespace, k.Name) })
	if err := (&MirrorReconciler{
		Client:            mgr.GetClient(),
		LiveReader:        mgr.GetAPIReader(),
		Recorder:          recorder,
		Clock:             o.Clock,
		OperatorNamespace: o.OperatorNamespace,
		Versions:          versions,
		Snapshots:         snapshots,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the mirror controller: %w", err)
	}
	// Every replica exports the eviction webhook's failurePolicy.
	if err := mgr.Add(&FailurePolicyExporter{Reader: mgr.GetClient(), ConfigName: o.WebhookConfigName}); err != nil {
		return fmt.Errorf("setting up the webhook failurePolicy exporter: %w", err)
	}
	return nil
}
