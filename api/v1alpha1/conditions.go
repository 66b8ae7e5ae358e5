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

package v1alpha1

// Condition types, reasons and event reasons used in TopologyDisruptionBudget
// status and events.
const (
	// ConditionDisruptionAllowed is True when at least one eviction could be
	// allowed now.
	ConditionDisruptionAllowed = "DisruptionAllowed"

	// ReasonSufficientPods: some domain has more healthy pods than it needs.
	ReasonSufficientPods = "SufficientPods"
	// ReasonInsufficientPods: no domain has a healthy pod to spare.
	ReasonInsufficientPods = "InsufficientPods"
	// ReasonDomainError: a covered pod's domain is unknown (its node exists
	// but lacks the topologyKey label); nothing is allowed.
	ReasonDomainError = "DomainError"
	// ReasonSyncFailed: the status could not be computed; nothing is allowed.
	ReasonSyncFailed = "SyncFailed"
	// ReasonNotEnforced: the eviction webhook sees none of the budget's
	// evictions: the budget is in the operator's own namespace, whose
	// evictions the webhook lets through (so that draining the operator's
	// node cannot deadlock), or the webhook's registration excludes them
	// (not registered, rules, namespaceSelector, objectSelector). Its
	// numbers are shown, not enforced. A reason of DisruptionAllowed and of
	// Enforced.
	ReasonNotEnforced = "NotEnforced"

	// ConditionEnforced is True when the eviction webhook's registration
	// sends it every eviction of the budget's namespace and refuses them
	// while no operator replica answers; False, with the reason, when the
	// webhook may skip or let through some of them. A warning about
	// enforcement: the budget's numbers and DisruptionAllowed are computed
	// as ever (DisruptionAllowed also says NotEnforced). Absent when the
	// operator does not read its registration (--webhook-config-name "").
	ConditionEnforced = "Enforced"
	// ReasonFullyEnforced: the webhook decides every eviction of the
	// budget's namespace, and fails closed.
	ReasonFullyEnforced = "FullyEnforced"
	// ReasonPartiallyEnforced: the webhook sees the namespace's evictions,
	// but its matchConditions, or an objectSelector an Eviction's labels
	// can fail, let some callers' evictions skip it.
	ReasonPartiallyEnforced = "PartiallyEnforced"
	// ReasonFailsOpen: the webhook sees every eviction of the namespace,
	// but its failurePolicy is Ignore: while no operator replica answers,
	// the API server lets evictions through unchecked.
	ReasonFailsOpen = "FailsOpen"

	// ConditionMirrored is present when spec.mirrorPodDisruptionBudgets is
	// PerDomain: True when the operator keeps one PodDisruptionBudget per
	// domain, False when it keeps none (see the reason).
	ConditionMirrored = "Mirrored"
	// ReasonMirrored: every domain has its PodDisruptionBudget.
	ReasonMirrored = "PodDisruptionBudgetsInSync"
	// ReasonPDBConflict: a covered pod is already selected by a
	// PodDisruptionBudget the budget does not own; mirroring would put the
	// pod under two, which the eviction API refuses.
	ReasonPDBConflict = "PDBConflict"
	// ReasonMirrorFailed: the PodDisruptionBudgets could not be written.
	ReasonMirrorFailed = "MirrorFailed"
	// ReasonMirrorNotEnforced: the budget is not enforced (the operator's
	// own namespace): no PodDisruptionBudget enforces it either.
	ReasonMirrorNotEnforced = "NotEnforced"
	// ReasonTooManyDomains: the budget has more domains (partitions) than
	// the operator mirrors (one PodDisruptionBudget each); the webhook
	// still enforces it.
	ReasonTooManyDomains = "TooManyDomains"

	// ConditionRolloutProgressing is True while the operator replaces
	// outdated pods, False when paused, stalled or done.
	ConditionRolloutProgressing = "RolloutProgressing"
	// ConditionRolloutComplete is True when every driven pod runs its
	// workload's update revision and is Ready.
	ConditionRolloutComplete = "RolloutComplete"

	// ReasonRolloutUpdating: outdated pods are being replaced.
	ReasonRolloutUpdating = "Updating"
	// ReasonRolloutPaused: spec.rollout.paused is true.
	ReasonRolloutPaused = "Paused"
	// ReasonProgressDeadlineExceeded: a domain made no progress within
	// spec.rollout.progressDeadlineSeconds.
	ReasonProgressDeadlineExceeded = "ProgressDeadlineExceeded"
	// ReasonRolloutComplete: every driven pod is updated and Ready.
	ReasonRolloutComplete = "AllPodsUpdated"
	// ReasonNoDrivenWorkloads: no covered StatefulSet or DaemonSet uses the
	// OnDelete update strategy.
	ReasonNoDrivenWorkloads = "NoOnDeleteWorkloads"

	// EventReasonDomainError is emitted when covered pods sit on nodes
	// without the topologyKey label.
	EventReasonDomainError = "DomainError"
	// EventReasonNoScale is emitted when a covered pod's controller has no
	// scale the budget can read.
	EventReasonNoScale = "NoScale"
	// EventReasonUnmanagedPods is emitted when covered pods have no
	// controller. They count as expected where they run (policy/v1 leaves
	// them out of expectedPods but counts them healthy, which lets an owner
	// lose more pods than its budget); nothing replaces them once evicted.
	EventReasonUnmanagedPods = "UnmanagedPods"
	// EventReasonRecordExpired is emitted when an eviction record expires
	// because its pod kept running (the eviction was refused after the
	// webhook allowed it).
	EventReasonRecordExpired = "RecordExpired"
	// EventReasonEvictionRefused is emitted, at most once a minute per
	// budget, when the eviction webhook refuses evictions.
	EventReasonEvictionRefused = "EvictionRefused"
	// EventReasonPDBConflict is emitted when a mirrored budget's pod is
	// already selected by a PodDisruptionBudget it does not own.
	EventReasonPDBConflict = "PDBConflict"
	// EventReasonRolloutDomainStarted is emitted when a rollout starts
	// updating a domain.
	EventReasonRolloutDomainStarted = "RolloutDomainStarted"
	// EventReasonRolloutStalled is emitted when a domain exceeds the
	// progress deadline.
	EventReasonRolloutStalled = "RolloutStalled"
	// EventReasonRolloutComplete is emitted when every driven pod is
	// updated.
	EventReasonRolloutComplete = "RolloutComplete"
	// EventReasonInvalidSpec is emitted when the spec cannot be evaluated.
	EventReasonInvalidSpec = "InvalidSpec"
)
