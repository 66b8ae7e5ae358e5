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

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RolloutStrategyType says how the operator walks the domains during an update.
// +kubebuilder:validation:Enum=DomainByDomain;AllDomains
type RolloutStrategyType string

const (
	// DomainByDomain finishes one domain (every pod updated and Ready) before
	// it starts the next.
	DomainByDomain RolloutStrategyType = "DomainByDomain"
	// AllDomains updates every domain at once, each within its own budget.
	AllDomains RolloutStrategyType = "AllDomains"
)

// RolloutSpec asks the operator to drive updates and order scale-downs of the
// covered workloads domain by domain.
type RolloutSpec struct {
	// strategy is DomainByDomain (finish one domain before the next) or
	// AllDomains (every domain at once, each within its budget).
	// +optional
	// +kubebuilder:default=DomainByDomain
	Strategy RolloutStrategyType `json:"strategy,omitempty"`
	// domainOrder lists domain names in the order they are updated. Domains
	// not listed follow in ascending name order. Names must be unique.
	// +optional
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	DomainOrder []string `json:"domainOrder,omitempty"`
	// paused stops the rollout after the pods already being replaced.
	// Setting it back to false resumes where the rollout stopped and restarts
	// the progress deadline.
	// +optional
	Paused bool `json:"paused,omitempty"`
	// progressDeadlineSeconds is how long a domain being updated may go
	// without one more of its pods becoming updated and Ready. When it runs
	// out, the rollout stops in that domain (phase Stalled, condition
	// RolloutProgressing False with reason ProgressDeadlineExceeded) and does
	// not move on; a new workload revision or pausing and resuming restarts
	// the deadline.
	// +optional
	// +kubebuilder:default=600
	// +kubebuilder:validation:Minimum=1
	ProgressDeadlineSeconds *int32 `json:"progressDeadlineSeconds,omitempty"`
	// settleSeconds is how long the driven workloads must stay unchanged (no
	// new update revision, no workload newly handed over) before the
	// operator evicts a pod. Workloads changed one after the other (kubectl
	// apply of several files, a Helm upgrade, a GitOps sync) then all have
	// their new revision before a domain is chosen, so domainOrder holds
	// however the changes were spaced within the window: every further
	// change restarts it. It applies only while the budget covers more than
	// one OnDelete workload (one workload's new revision covers all its pods
	// at once). 0 turns it off.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	SettleSeconds *int32 `json:"settleSeconds,omitempty"`
}

// Condition reasons of the rollout conditions (RolloutProgressing and
// RolloutComplete) beside those in conditions.go. A budget in the
// operator's namespace gets ReasonNotEnforced there too.
const (
	// ReasonRolloutSettling: the driven workloads changed (a new update
	// revision, or a workload handed over) less than
	// spec.rollout.settleSeconds ago; nothing is evicted until they have
	// settled.
	ReasonRolloutSettling = "Settling"
	// ReasonWorkloadNotHandedOver: a covered OnDelete workload names no
	// budget that may update it in its policy.tdb.dev/rollout-budget
	// annotation; the operator does not update it.
	ReasonWorkloadNotHandedOver = "WorkloadNotHandedOver"
)

// RolloutPhase is where a domain is in a rollout.
// +kubebuilder:validation:Enum=Pending;Progressing;Paused;Stalled;Complete
type RolloutPhase string

const (
	// RolloutPhasePending means the domain has outdated pods and waits for its
	// turn (DomainByDomain) or for maxDisruptedDomains (AllDomains).
	RolloutPhasePending RolloutPhase = "Pending"
	// RolloutPhaseProgressing means the domain's outdated pods are being replaced.
	RolloutPhaseProgressing RolloutPhase = "Progressing"
	// RolloutPhasePaused means spec.rollout.paused stops the domain.
	RolloutPhasePaused RolloutPhase = "Paused"
	// RolloutPhaseStalled means the domain made no progress within
	// progressDeadlineSeconds; the rollout stopped there.
	RolloutPhaseStalled RolloutPhase = "Stalled"
	// RolloutPhaseComplete means every driven pod of the domain is updated and
	// Ready.
	RolloutPhaseComplete RolloutPhase = "Complete"
)

// RolloutDomainStatus is a rollout's progress in one domain.
type RolloutDomainStatus struct {
	// name is the domain.
	// +required
	Name string `json:"name"`
	// updatedPods counts the domain's driven pods that run the update
	// revision and are Ready.
	UpdatedPods int32 `json:"updatedPods"`
	// totalPods counts the domain's driven pods.
	TotalPods int32 `json:"totalPods"`
	// phase is Pending, Progressing, Paused, Stalled or Complete.
	Phase RolloutPhase `json:"phase"`
	// lastProgressTime is when the domain last started or gained an updated
	// Ready pod; the progress deadline runs from it.
	// +optional
	LastProgressTime *metav1.Time `json:"lastProgressTime,omitempty"`
}

// RolloutWorkloadStatus is one covered workload of a budget with rollout set.
type RolloutWorkloadStatus struct {
	// kind is StatefulSet or DaemonSet.
	Kind string `json:"kind"`
	// name is the workload's name, in the budget's namespace.
	Name string `json:"name"`
	// updateStrategy is the workload's update strategy. Only OnDelete
	// workloads are updated by the operator; the others are listed for
	// nextScaleDown.
	UpdateStrategy string `json:"updateStrategy"`
	// drivenBy names the budget that updates this OnDelete workload: the
	// budget its policy.tdb.dev/rollout-budget annotation names, when that
	// budget exists, has spec.rollout and selects the workload's pods. Empty
	// when no budget may update it (see message); the other budgets that
	// cover it only report it.
	// +optional
	DrivenBy string `json:"drivenBy,omitempty"`
	// message says why no budget updates this OnDelete workload and how to
	// hand it over (the policy.tdb.dev/rollout-budget annotation).
	// +optional
	Message string `json:"message,omitempty"`
	// updateRevision is the revision covered pods are updated to: the
	// StatefulSet's status.updateRevision, or the DaemonSet's template
	// generation.
	// +optional
	UpdateRevision string `json:"updateRevision,omitempty"`
	// updatedPods counts the workload's covered pods at updateRevision and
	// Ready.
	UpdatedPods int32 `json:"updatedPods"`
	// totalPods counts the workload's covered pods.
	TotalPods int32 `json:"totalPods"`
	// nextScaleDownPod is, for a StatefulSet, the pod a scale-down removes
	// next: always the highest ordinal, which no budget can reorder.
	// +optional
	NextScaleDownPod string `json:"nextScaleDownPod,omitempty"`
	// nextScaleDownDomain is the domain of nextScaleDownPod, the domain a
	// scale-down by one takes a pod from.
	// +optional
	NextScaleDownDomain string `json:"nextScaleDownDomain,omitempty"`
}

// RolloutStatus reports the rollout the operator drives.
type RolloutStatus struct {
	// currentDomain is the domain being updated under DomainByDomain; empty
	// when nothing is being updated or under AllDomains.
	// +optional
	CurrentDomain string `json:"currentDomain,omitempty"`
	// lastRevisionChangeTime is when the operator last saw the driven
	// workloads change: a new update revision, or a workload handed over.
	// While the budget covers more than one OnDelete workload, no pod is
	// evicted until settleSeconds after it.
	// +optional
	LastRevisionChangeTime *metav1.Time `json:"lastRevisionChangeTime,omitempty"`
	// domains is the progress per domain, in rollout order.
	// +optional
	// +listType=map
	// +listMapKey=name
	Domains []RolloutDomainStatus `json:"domains,omitempty"`
	// workloads lists the covered StatefulSets and DaemonSets.
	// +optional
	Workloads []RolloutWorkloadStatus `json:"workloads,omitempty"`
}
