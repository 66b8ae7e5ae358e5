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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// UnhealthyPodEvictionPolicyType says when pods that are running but not Ready
// may be evicted. The values and their meaning are those of policy/v1.
// +kubebuilder:validation:Enum=IfHealthyBudget;AlwaysAllow
type UnhealthyPodEvictionPolicyType string

const (
	// IfHealthyBudget lets a running but not Ready pod be evicted only while
	// its domain is not disrupted (currentHealthy >= desiredHealthy > 0).
	IfHealthyBudget UnhealthyPodEvictionPolicyType = "IfHealthyBudget"
	// AlwaysAllow lets a running but not Ready pod be evicted whatever the
	// budget says; such an eviction is not charged to the budget.
	AlwaysAllow UnhealthyPodEvictionPolicyType = "AlwaysAllow"
)

// MirrorMode says whether the operator keeps policy/v1 PodDisruptionBudgets
// that mirror a budget for the tools that plan from them.
// +kubebuilder:validation:Enum=None;PerDomain
type MirrorMode string

const (
	// MirrorNone keeps no PodDisruptionBudget: the budget exists only at the
	// eviction webhook.
	MirrorNone MirrorMode = "None"
	// MirrorPerDomain keeps one PodDisruptionBudget per domain, owned by the
	// budget, with an integer minAvailable.
	MirrorPerDomain MirrorMode = "PerDomain"
)

// NodeSelectorOperator is the operator of a NodeSelectorRequirement; the set is
// that of core/v1.
// +kubebuilder:validation:Enum=In;NotIn;Exists;DoesNotExist;Gt;Lt
type NodeSelectorOperator string

// The Gt/Lt rule below accepts exactly the values labels.NewRequirement
// parses: an int64 (strconv.ParseInt) that is also a label value, so without
// a sign. Leading zeros are allowed; 19 significant digits are compared as
// strings, which orders equal-length digit strings numerically.

// NodeSelectorRequirement is a core/v1 NodeSelectorRequirement whose
// invariants are checked by the API server, as Kubernetes' label selector
// parser checks them: the key is a label key, the values are label values,
// and Gt and Lt take one integer between 0 and 9223372036854775807 (a label
// value cannot begin with "-").
// +kubebuilder:validation:XValidation:rule="self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : true",message="values must be non-empty when operator is In or NotIn"
// +kubebuilder:validation:XValidation:rule="self.operator in ['Exists', 'DoesNotExist'] ? (!has(self.values) || size(self.values) == 0) : true",message="values must be empty when operator is Exists or DoesNotExist"
// +kubebuilder:validation:XValidation:rule="self.operator in ['Gt', 'Lt'] ? (has(self.values) && size(self.values) == 1 && (self.values[0].matches('^0*[0-9]{1,18}$') || (self.values[0].matches('^0*[1-9][0-9]{18}$') && self.values[0].substring(self.values[0].size() - 19) <= '9223372036854775807'))) : true",message="values must hold exactly one integer between 0 and 9223372036854775807 (an int64 without a sign) when operator is Gt or Lt",fieldPath=".values"
type NodeSelectorRequirement struct {
	// key is the node label key the requirement applies to: a valid label
	// key (an optional DNS subdomain prefix of at most 253 characters and a
	// "/", then a name of at most 63 characters).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="!self.contains('/') || self.split('/')[0].size() <= 253",message="the prefix of a key must be at most 253 characters"
	Key string `json:"key"`
	// operator relates the key to the values: In, NotIn, Exists, DoesNotExist,
	// Gt or Lt.
	// +required
	Operator NodeSelectorOperator `json:"operator"`
	// values are the label values, each a valid label value (at most 63
	// characters, empty or beginning and ending with a letter or digit, with
	// '-', '_' and '.' inside). In and NotIn need at least one; Exists and
	// DoesNotExist take none; Gt and Lt take exactly one integer.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:Pattern=`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`
	Values []string `json:"values,omitempty"`
}

// NodeFieldSelectorRequirement selects nodes by a field; as in core/v1 only
// metadata.name with In or NotIn is supported.
type NodeFieldSelectorRequirement struct {
	// key is the node field; only metadata.name is supported.
	// +required
	// +kubebuilder:validation:Enum=metadata.name
	Key string `json:"key"`
	// operator is In or NotIn.
	// +required
	// +kubebuilder:validation:Enum=In;NotIn
	Operator NodeSelectorOperator `json:"operator"`
	// values are node names; at least one.
	// +required
	// +listType=atomic
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=253
	Values []string `json:"values"`
}

// NodeSelectorTerm has the shape of core/v1 NodeSelectorTerm: the requirements
// are ANDed. An empty term matches every node.
type NodeSelectorTerm struct {
	// matchExpressions are requirements on node labels.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	MatchExpressions []NodeSelectorRequirement `json:"matchExpressions,omitempty"`
	// matchFields are requirements on node fields (metadata.name).
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	MatchFields []NodeFieldSelectorRequirement `json:"matchFields,omitempty"`
}

// PartitionSource says where a pod's partition is read: exactly one of
// label and podNameRegex.
// +kubebuilder:validation:XValidation:rule="has(self.label) != has(self.podNameRegex)",message="exactly one of label or podNameRegex must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.podNameRegexGroup) || has(self.podNameRegex)",message="podNameRegexGroup requires podNameRegex",fieldPath=".podNameRegexGroup"
type PartitionSource struct {
	// label is the pod label whose value is the pod's partition, such as the
	// StatefulSet's apps.kubernetes.io/pod-index. A covered pod without it
	// is refused, and makes the budget report DomainError.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	Label string `json:"label,omitempty"`

	// podNameRegex is a regular expression (RE2 syntax) matched against the
	// whole pod name; its capture group podNameRegexGroup is the pod's
	// partition, as in "ingester-zone-[a-z]-([0-9]+)". A covered pod whose
	// name does not match is refused, and makes the budget report
	// DomainError; an expression that does not compile, or has fewer groups,
	// makes it report SyncFailed.
	// +optional
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	PodNameRegex string `json:"podNameRegex,omitempty"`

	// podNameRegexGroup is the capture group of podNameRegex that holds the
	// partition (default 1).
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	PodNameRegexGroup *int32 `json:"podNameRegexGroup,omitempty"`
}

// TopologyDisruptionBudgetSpec is the desired budget.
// +kubebuilder:validation:XValidation:rule="has(self.minAvailable) != has(self.maxUnavailable)",message="exactly one of minAvailable or maxUnavailable must be set"
// +kubebuilder:validation:XValidation:rule="!has(self.maxDisruptedDomains) || (has(self.topologyKey) && size(self.topologyKey) > 0) || has(self.partition)",message="maxDisruptedDomains requires topologyKey or partition",fieldPath=".maxDisruptedDomains"
// +kubebuilder:validation:XValidation:rule="!has(self.partition) || ((!has(self.topologyKey) || size(self.topologyKey) == 0) && !has(self.nodeSelectorTerm))",message="a budget takes its domains from one source: partition (the pod) excludes topologyKey and nodeSelectorTerm (the node)",fieldPath=".partition"
type TopologyDisruptionBudgetSpec struct {
	// selector picks the covered pods, in the budget's own namespace only,
	// with the fields of a Kubernetes label selector (matchLabels,
	// matchExpressions). An empty selector covers every pod of the
	// namespace, as in policy/v1. The API server refuses a selector that
	// Kubernetes' label selector parser would refuse: keys must be label
	// keys, values label values, operators In, NotIn, Exists or DoesNotExist.
	// +required
	Selector *LabelSelector `json:"selector"`

	// topologyKey is the node label whose value is a pod's failure domain; the
	// budget applies to each domain separately. Unset, the whole budget is one
	// domain named "all" and behaves like a policy/v1 PodDisruptionBudget.
	// +optional
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="!self.contains('/') || self.split('/')[0].size() <= 253",message="the prefix of topologyKey must be at most 253 characters"
	TopologyKey string `json:"topologyKey,omitempty"`

	// nodeSelectorTerm, when set, limits the budget to pods on nodes that
	// match it (the field of the KEP "Topology-aware Workload Controllers").
	// +optional
	NodeSelectorTerm *NodeSelectorTerm `json:"nodeSelectorTerm,omitempty"`

	// partition, when set, takes each pod's domain from the pod itself
	// instead of its node: a pod label, or a capture group of a regular
	// expression on the pod's name. Replicas of one partition (say
	// ingester-zone-a-5, ingester-zone-b-5 and ingester-zone-c-5) then form
	// one domain, and the budget applies to each partition separately,
	// wherever its pods run, scheduled or not. Excludes topologyKey and
	// nodeSelectorTerm.
	// +optional
	Partition *PartitionSource `json:"partition,omitempty"`

	// minReadySeconds is how long a pod must have been Ready, from its Ready
	// condition's lastTransitionTime, before the budget counts it healthy:
	// a replica that just recovered (Ready, but still catching up) does not
	// yet let another of its domain go. 0 (the default): at once.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	MinReadySeconds int32 `json:"minReadySeconds,omitempty"`

	// maxUnavailable is how many pods of each domain may be unavailable at
	// once: an integer, or a percentage "N%" of the domain's expected pods
	// rounded up. Exactly one of maxUnavailable and minAvailable is set.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="must be a non-negative integer or a percentage between 0% and 100%"
	MaxUnavailable *intstr.IntOrString `json:"maxUnavailable,omitempty"`

	// minAvailable is how many pods of each domain must stay healthy: an
	// integer, or a percentage "N%" of the domain's expected pods rounded up.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^(100|[1-9]?[0-9])%$')",message="must be a non-negative integer or a percentage between 0% and 100%"
	MinAvailable *intstr.IntOrString `json:"minAvailable,omitempty"`

	// maxDisruptedDomains, when set, is how many domains may have unavailable
	// pods at once: an eviction in a domain is allowed only if fewer than this
	// many other domains have unavailable pods. Needs topologyKey or partition.
	// +optional
	// +kubebuilder:validation:Minimum=1
	MaxDisruptedDomains *int32 `json:"maxDisruptedDomains,omitempty"`

	// unhealthyPodEvictionPolicy says when running pods that are not Ready
	// may be evicted: IfHealthyBudget (only while their domain is not
	// disrupted) or AlwaysAllow. Same meaning as in policy/v1.
	// +optional
	// +kubebuilder:default=IfHealthyBudget
	UnhealthyPodEvictionPolicy UnhealthyPodEvictionPolicyType `json:"unhealthyPodEvictionPolicy,omitempty"`

	// rollout, when set, lets the operator drive updates and order
	// scale-downs of the covered workloads by domain.
	// +optional
	Rollout *RolloutSpec `json:"rollout,omitempty"`

	// mirrorPodDisruptionBudgets makes the budget visible to the tools that
	// choose what to disrupt from policy/v1 PodDisruptionBudgets alone
	// (Karpenter, cluster-autoscaler, managed node upgrades, drain
	// planners). None (the default): no PodDisruptionBudget. PerDomain: the
	// operator keeps one PodDisruptionBudget per domain, named
	// <budget>-<domain>-<hash> and labelled policy.tdb.dev/budget, that
	// selects the budget's pods in that domain with an integer minAvailable:
	// the domain's desiredHealthy while it may be disrupted, all its
	// expected pods while it must wait under maxDisruptedDomains. A pod
	// already selected by another PodDisruptionBudget makes the operator
	// mirror nothing for this budget (condition Mirrored=False, reason
	// PDBConflict): the eviction API refuses a pod under two. The eviction
	// webhook stays the authority; the mirrors are advisory, and enforce the
	// per-domain minimum while the operator is down.
	// +optional
	// +kubebuilder:default=None
	MirrorPodDisruptionBudgets MirrorMode `json:"mirrorPodDisruptionBudgets,omitempty"`
}

// DomainStatus is the budget of one failure domain.
type DomainStatus struct {
	// name is the domain: the topologyKey label value of its nodes, the
	// pods' partition (spec.partition), or "all" when the budget has
	// neither.
	// +required
	Name string `json:"name"`
	// expectedPods are the covered pods scheduled in the domain plus the
	// missing pods attributed to it.
	ExpectedPods int32 `json:"expectedPods"`
	// currentHealthy counts the domain's pods that are Ready (for
	// minReadySeconds), not being deleted and not recorded in disruptedPods.
	CurrentHealthy int32 `json:"currentHealthy"`
	// warmingUp counts the domain's pods that are Ready for less than
	// minReadySeconds: not healthy yet, though core's PodDisruptionBudgets
	// count them (a mirror's minAvailable adds them).
	// +optional
	WarmingUp int32 `json:"warmingUp,omitempty"`
	// desiredHealthy is the number of healthy pods the budget keeps.
	DesiredHealthy int32 `json:"desiredHealthy"`
	// disruptionsAllowed is how many more pods of the domain may be evicted
	// right now, maxDisruptedDomains included.
	DisruptionsAllowed int32 `json:"disruptionsAllowed"`
	// blockedSince is when the eviction webhook first refused an eviction
	// in the domain since it last allowed one; unset while the domain
	// allows disruptions or nothing was refused. A long block is what a
	// managed upgrade or Karpenter's terminationGracePeriod ends by
	// force-deleting pods: alert on it (tdb_domain_blocked_since_seconds).
	// +optional
	BlockedSince *metav1.Time `json:"blockedSince,omitempty"`
}

// DomainGroup is a set of domains at full health (every expected pod
// healthy, none warming up, not blocked) that share their numbers: each is a
// row of domains with these numbers and currentHealthy equal to
// expectedPods.
type DomainGroup struct {
	// count is the number of domains in the group.
	Count int32 `json:"count"`
	// expectedPods of each domain of the group, all of them healthy.
	ExpectedPods int32 `json:"expectedPods"`
	// desiredHealthy of each domain of the group.
	DesiredHealthy int32 `json:"desiredHealthy"`
	// disruptionsAllowed of each domain of the group.
	DisruptionsAllowed int32 `json:"disruptionsAllowed"`
	// ranges are the group's domains named by consecutive integers (a
	// StatefulSet's pod index, a partition number), written "first-last",
	// or "n" for one: "0-41" is the domains "0", "1", ... "41".
	// +optional
	Ranges []string `json:"ranges,omitempty"`
	// names are the group's other domains.
	// +optional
	Names []string `json:"names,omitempty"`
}

// DisruptedPod records an eviction that was granted but whose effect the
// status controller has not finished accounting for.
type DisruptedPod struct {
	// name is the evicted pod's name.
	// +required
	Name string `json:"name"`
	// uid is the evicted pod's UID, so a new pod with the same name (a
	// StatefulSet replacement) is not mistaken for it.
	// +optional
	UID types.UID `json:"uid,omitempty"`
	// domain is the domain the pod was in when it was evicted.
	// +required
	Domain string `json:"domain"`
	// controllerUID is the UID of the pod's controller (its controllerRef),
	// so the pod, once gone, is counted missing in its own domain.
	// +optional
	ControllerUID types.UID `json:"controllerUID,omitempty"`
	// time is when the eviction was granted.
	// +required
	Time metav1.Time `json:"time"`
	// domainSpec identifies the spec fields that name domains
	// (topologyKey and nodeSelectorTerm) when the eviction was granted, as
	// a hash. A record charged under other such fields (the spec changed
	// since) no longer tells a domain: its pod counts where it is now, and
	// once gone, its missing pod counts against every domain. Empty in
	// records written before the field existed, which are taken as of the
	// current spec.
	// +optional
	DomainSpec string `json:"domainSpec,omitempty"`
}

// TopologyDisruptionBudgetStatus is the observed state of the budget.
type TopologyDisruptionBudgetStatus struct {
	// observedGeneration is the generation the status was computed for.
	// Evictions are refused while it is behind metadata.generation.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// expectedPods is the sum of the domains' expected pods.
	// +optional
	ExpectedPods int32 `json:"expectedPods"`
	// currentHealthy is the sum of the domains' healthy pods.
	// +optional
	CurrentHealthy int32 `json:"currentHealthy"`
	// disruptionsAllowed is how many evictions could be granted right now
	// together: the domains' allowances summed, but under
	// maxDisruptedDomains only for as many domains as may be disrupted at
	// once (those already disrupted first, then the undisrupted domains that
	// allow the most). Each domain's own allowance is in domains.
	// +optional
	DisruptionsAllowed int32 `json:"disruptionsAllowed"`
	// disruptedDomains counts the domains with unavailable pods (fewer
	// healthy than expected): the domains maxDisruptedDomains counts.
	// +optional
	DisruptedDomains int32 `json:"disruptedDomains"`
	// domainCount is the number of domains, listed in domains or grouped in
	// healthyDomains (for kubectl get).
	// +optional
	DomainCount int32 `json:"domainCount"`
	// domains has one entry per domain, sorted by name. With more than 20
	// domains (a budget over partitions, say), it lists only the domains
	// not at full health (fewer healthy than expected, pods warming up, or
	// blocked), and healthyDomains holds the others: the status stays small
	// however many domains a budget has. domainCount counts both.
	// +optional
	// +listType=map
	// +listMapKey=name
	Domains []DomainStatus `json:"domains,omitempty"`
	// healthyDomains lists, when there are more than 20 domains, the
	// domains at full health, in groups of domains with the same numbers.
	// +optional
	HealthyDomains []DomainGroup `json:"healthyDomains,omitempty"`
	// disruptedPods are evictions granted but not yet fully observed. They
	// live here, not in the operator's memory, so they survive restarts.
	// +optional
	// +listType=map
	// +listMapKey=name
	DisruptedPods []DisruptedPod `json:"disruptedPods,omitempty"`
	// rollout is the progress of the rollout the operator drives, when
	// spec.rollout is set.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`
	// conditions: DisruptionAllowed says whether an eviction could be
	// allowed now, and why not; Enforced says how much of the budget's
	// evictions the registered eviction webhook sees, and whether it fails
	// closed; Mirrored reports the mirrored PodDisruptionBudgets when
	// spec.mirrorPodDisruptionBudgets is PerDomain; RolloutProgressing and
	// RolloutComplete report the rollout when spec.rollout is set.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// TopologyDisruptionBudget is a disruption budget applied per failure domain.
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:shortName=tdb,categories=all
// +kubebuilder:printcolumn:name="Allowed",type=integer,JSONPath=`.status.disruptionsAllowed`,description="Evictions that could be granted now together (maxDisruptedDomains included)"
// +kubebuilder:printcolumn:name="Disrupted",type=integer,JSONPath=`.status.disruptedDomains`,description="Domains with unavailable pods"
// +kubebuilder:printcolumn:name="Healthy",type=integer,JSONPath=`.status.currentHealthy`
// +kubebuilder:printcolumn:name="Expected",type=integer,JSONPath=`.status.expectedPods`
// +kubebuilder:printcolumn:name="Domains",type=integer,JSONPath=`.status.domainCount`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type TopologyDisruptionBudget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired budget.
	// +required
	Spec TopologyDisruptionBudgetSpec `json:"spec"`
	// status is the budget as last computed by the operator.
	// +optional
	Status TopologyDisruptionBudgetStatus `json:"status,omitempty"`
}

// TopologyDisruptionBudgetList is a list of TopologyDisruptionBudgets.
// +kubebuilder:object:root=true
type TopologyDisruptionBudgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the budgets.
	Items []TopologyDisruptionBudget `json:"items"`
}

// ToCore returns the term as a core/v1 NodeSelectorTerm.
func (t *NodeSelectorTerm) ToCore() corev1.NodeSelectorTerm {
	out := corev1.NodeSelectorTerm{}
	for _, e := range t.MatchExpressions {
		out.MatchExpressions = append(out.MatchExpressions, corev1.NodeSelectorRequirement{
			Key: e.Key, Operator: corev1.NodeSelectorOperator(e.Operator), Values: e.Values,
		})
	}
	for _, f := range t.MatchFields {
		out.MatchFields = append(out.MatchFields, corev1.NodeSelectorRequirement{
			Key: f.Key, Operator: corev1.NodeSelectorOperator(f.Operator), Values: f.Values,
		})
	}
	return out
}
