package v1alpha1

// Annotations the operator reads on the objects of other owners.
const (
	// RolloutBudgetAnnotation, on a StatefulSet or DaemonSet with the
	// OnDelete update strategy, names the TopologyDisruptionBudget (in the
	// workload's namespace) that may update it by evicting its outdated
	// pods. It is the workload owner's consent: without it no budget drives
	// the workload, so whoever may write a budget cannot make the operator
	// evict pods the workload's owner did not hand over.
	RolloutBudgetAnnotation = "policy.tdb.dev/rollout-budget"
)
