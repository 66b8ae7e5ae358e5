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
