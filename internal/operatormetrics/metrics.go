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

// Package operatormetrics declares every metric the operator exports and
// registers them, once, with the manager's registry. docs/webhook.md
// (Observability) documents them.
package operatormetrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	// DomainAllowed is each domain's allowance as the status controller
	// last computed it.
	DomainAllowed = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tdb_domain_disruptions_allowed",
		Help: "Disruptions a domain of a TopologyDisruptionBudget allows, as last computed by the status controller.",
	}, []string{"namespace", "tdb", "domain"})

	// StatusWrites counts the writes of budget status, by writer and result.
	StatusWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tdb_status_writes_total",
		Help: "Writes of TopologyDisruptionBudget status by writer (status, rollout, webhook, mirror) and result (written; conflict: lost to a concurrent write; error; stale: not sent, a newer version was known).",
	}, []string{"writer", "result"})

	// StatusChanges counts the status controller's writes by what each
	// changes most (budget.StatusChange).
	StatusChanges = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tdb_status_changes_written_total",
		Help: "Status writes of the status controller by what each changes most: allowance (an allowance, the domains, the DisruptionAllowed condition or the generation observed), healthy (healthy pods), expected (expected or desired healthy pods), records (eviction records dropped), other.",
	}, []string{"change"})

	// RolloutEvictions counts the rollout driver's evictions by result.
	RolloutEvictions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tdb_rollout_evictions_total",
		Help: "Evictions the rollout driver requested, by result: granted, refused (429) or error.",
	}, []string{"namespace", "tdb", "result"})

	// DeletionCostPatches counts the deletion-cost controller's pod patches.
	DeletionCostPatches = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tdb_deletion_cost_patches_total",
		Help: "Pod patches the deletion-cost controller made (setting, changing or removing pod-deletion-cost) per TopologyDisruptionBudget.",
	}, []string{"namespace", "tdb"})

	// EvictionDecisions counts the webhook's decisions.
	EvictionDecisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tdb_eviction_decisions_total",
		Help: "Eviction admission decisions by decision (allowed, refused, error) and reason.",
	}, []string{"decision", "reason"})

	// EvictionDecisionSeconds is the time the webhook takes to decide.
	EvictionDecisionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tdb_eviction_decision_duration_seconds",
		Help:    "Time to decide one eviction, status writes included, by decision.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"decision"})

	// ChargesPerWrite is how many grants one webhook status write records.
	ChargesPerWrite = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "tdb_eviction_charges_per_status_write",
		Help:    "Evictions recorded by one status write of the webhook (concurrent grants on one budget are written together).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
	})

	// RecomputedGrants counts evictions the webhook granted on a status it
	// recomputed from the cache because the written one refused.
	RecomputedGrants = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "tdb_eviction_recomputed_grants_total",
		Help: "Evictions the webhook granted on a budget's status recomputed from the cache while the status controller had a pod event of it to write (written with the recomputed numbers).",
	})
	// Recomputations counts the webhook's recomputations of a budget
	// behind the cache: computed from the cache, or reused (no event of the
	// budget, and the same records, since the last one); and the grants
	// they withdrew.
	Recomputations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tdb_eviction_recomputations_total",
		Help: "The eviction webhook's recomputations of a budget whose status decided an eviction from its numbers while the status controller had an event of it to write, by result: computed from the cache, reused (no event of the budget and the same records since the last one), or withdrawn (a grant of the written status that the recomputed one refuses).",
	}, []string{"result"})
)

// DomainBlockedSince is when the eviction webhook first refused an eviction
// in a domain since the domain last allowed one (status.domains[].blockedSince),
// as Unix seconds; no series while the domain is not blocked.
var DomainBlockedSince = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "tdb_domain_blocked_since_seconds",
	Help: "Unix time since which a domain of a TopologyDisruptionBudget has refused evictions (status.domains[].blockedSince); absent while the domain is not blocked. Alert on time() minus it before a force-deleting deadline (Karpenter terminationGracePeriod, managed upgrades).",
}, []string{"namespace", "tdb", "domain"})

// MirrorWrites counts the writes of the mirror controller by operation:
// create, update and delete of mirrored PodDisruptionBudgets, and
// label (a covered pod's domain label set or removed), status (core's
// record of a replaced pod's eviction dropped from a mirror).
var MirrorWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "tdb_mirror_writes_total",
	Help: "Writes of the mirror controller: PodDisruptionBudgets created, updated or deleted, pods labelled with their domain, and mirrors' status cleared of replaced pods (operation: create, update, delete, label, status).",
}, []string{"operation"})

// Per-domain numbers of a budget's status, as the status controller last
// computed them (status.domains[]).
var (
	DomainExpectedPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tdb_domain_expected_pods",
		Help: "Pods a domain of a TopologyDisruptionBudget expects (status.domains[].expectedPods).",
	}, []string{"namespace", "tdb", "domain"})
	DomainCurrentHealthy = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tdb_domain_current_healthy",
		Help: "Healthy pods of a domain of a TopologyDisruptionBudget (status.domains[].currentHealthy).",
	}, []string{"namespace", "tdb", "domain"})
	DomainDesiredHealthy = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tdb_domain_desired_healthy",
		Help: "Healthy pods a domain of a TopologyDisruptionBudget must keep (status.domains[].desiredHealthy).",
	}, []string{"namespace", "tdb", "domain"})
)

// Domains of a budget by health, bounded where per-domain series are not:
// a budget with more than budget.MaxListedDomains domains exports the
// per-domain series above only for the domains not at full health (those
// its status lists), and these two for all.
var (
	BudgetDomains = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tdb_budget_domains",
		Help: "Domains of a TopologyDisruptionBudget (status.domainCount).",
	}, []string{"namespace", "tdb"})
	BudgetDisruptedDomains = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tdb_budget_disrupted_domains",
		Help: "Domains of a TopologyDisruptionBudget with fewer healthy pods than expected (status.disruptedDomains).",
	}, []string{"namespace", "tdb"})
)

// BudgetCondition is 1 for the status and reason of a budget's
// DisruptionAllowed condition as the status controller last wrote it: one
// series per budget (reason SyncFailed or DomainError: the budget is not in
// sync and refuses every eviction).
var BudgetCondition = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "tdb_budget_condition",
	Help: "1 for the current status and reason of a TopologyDisruptionBudget's condition (type DisruptionAllowed), as the status controller last wrote it.",
}, []string{"namespace", "tdb", "type", "status", "reason"})

// Rollout progress per domain (status.rollout.domains[]), as the rollout
// controller last computed it; no series for a budget without spec.rollout.
var (
	RolloutDomainPhase = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tdb_rollout_domain_phase",
		Help: "1 for the current rollout phase (Pending, Progressing, Paused, Stalled, Complete) of a domain of a TopologyDisruptionBudget with spec.rollout (status.rollout.domains[].phase).",
	}, []string{"namespace", "tdb", "domain", "phase"})
	RolloutDomainUpdatedPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tdb_rollout_domain_updated_pods",
		Help: "Driven pods of a domain that run the update revision and are Ready (status.rollout.domains[].updatedPods).",
	}, []string{"namespace", "tdb", "domain"})
	RolloutDomainPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tdb_rollout_domain_pods",
		Help: "Driven pods of a domain (status.rollout.domains[].totalPods).",
	}, []string{"namespace", "tdb", "domain"})
)

// WebhookCertificateExpiry is the notAfter of the certificates in this
// replica's webhook certificate directory, as Unix seconds: certificate
// "serving" (tls.crt) and "ca" (ca.crt, when present).
var WebhookCertificateExpiry = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "tdb_webhook_certificate_expiry_timestamp_seconds",
	Help: "Unix time at which the eviction webhook's certificate expires (notAfter), as this replica reads it from its certificate directory: certificate serving (tls.crt) or ca (ca.crt).",
}, []string{"certificate"})

// The eviction webhook's failurePolicy, read from the operator's own
// ValidatingWebhookConfiguration: the current one (policy "None" while the
// configuration or its eviction webhook does not exist), and the one the
// install declared in the configuration's annotation
// policy.tdb.dev/installed-failure-policy (no series without it).
var (
	WebhookFailurePolicy = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tdb_webhook_failure_policy",
		Help: "1 for the failurePolicy (Fail, Ignore; None: not registered) of the eviction webhook in the operator's ValidatingWebhookConfiguration now.",
	}, []string{"policy"})
	WebhookInstalledFailurePolicy = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "tdb_webhook_installed_failure_policy",
		Help: "1 for the failurePolicy the install declared in the annotation policy.tdb.dev/installed-failure-policy of the operator's ValidatingWebhookConfiguration; no series without the annotation.",
	}, []string{"policy"})
)

// Collectors are the operator's own metrics, registered with the manager's
// registry (controller-runtime's metrics.Registry) by this package.
func Collectors() []prometheus.Collector {
	return []prometheus.Collector{DomainAllowed, StatusWrites, StatusChanges, RolloutEvictions, DeletionCostPatches,
		EvictionDecisions, EvictionDecisionSeconds, ChargesPerWrite, RecomputedGrants, Recomputations, MirrorWrites, DomainBlockedSince,
		DomainExpectedPods, DomainCurrentHealthy, DomainDesiredHealthy, BudgetDomains, BudgetDisruptedDomains, BudgetCondition,
		RolloutDomainPhase, RolloutDomainUpdatedPods, RolloutDomainPods,
		WebhookCertificateExpiry, WebhookFailurePolicy, WebhookInstalledFailurePolicy}
}

func init() {
	metrics.Registry.MustRegister(Collectors()...)
}
