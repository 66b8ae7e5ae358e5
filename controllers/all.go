package controllers

import (
	"fmt"
	"time"

	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Options configure the operator's controllers.
type Options struct {
	// Clock is the time source of every controller (a fake one in tests).
	Clock clock.PassiveClock
	// RecordTimeout bounds an eviction record whose pod keeps running.
	RecordTimeout time.Duration
}

// SetupAll registers every controller of the operator with mgr, as the
// manager binary and the integration suites run them. Call SetupIndexes
// first.
func SetupAll(mgr ctrl.Manager, o Options) error {
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	recorder := mgr.GetEventRecorder("tdb-operator")
	if err := (&BudgetReconciler{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetClient(),
		Recorder:      recorder,
		Clock:         o.Clock,
		RecordTimeout: o.RecordTimeout,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the budget status controller: %w", err)
	}
	if err := (&DeletionCostReconciler{
		Client: mgr.GetClient(),
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the deletion-cost controller: %w", err)
	}
	if err := (&RolloutReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  recorder,
		Clock:     o.Clock,
	}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the rollout controller: %w", err)
	}
	return nil
}
