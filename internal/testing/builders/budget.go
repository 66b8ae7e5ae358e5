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

package builders

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// BudgetWrapper builds a TopologyDisruptionBudget.
type BudgetWrapper struct {
	tdb policyv1alpha1.TopologyDisruptionBudget
}

// Budget returns a wrapper of a TopologyDisruptionBudget named name and
// nothing else: no namespace, selector, topology key or amount, generation
// 0 and an empty status.
func Budget(name string) *BudgetWrapper {
	return &BudgetWrapper{tdb: policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}

// Obj returns a copy of the budget built so far.
func (w *BudgetWrapper) Obj() *policyv1alpha1.TopologyDisruptionBudget { return w.tdb.DeepCopy() }

// Namespace puts the budget in namespace ns.
func (w *BudgetWrapper) Namespace(ns string) *BudgetWrapper { w.tdb.Namespace = ns; return w }

// UID sets the budget's UID, which the API server assigns on create.
func (w *BudgetWrapper) UID(uid types.UID) *BudgetWrapper { w.tdb.UID = uid; return w }

// Spec replaces the budget's spec with a copy of spec, for a test that
// builds the spec as a value; the setters below change it further.
func (w *BudgetWrapper) Spec(spec policyv1alpha1.TopologyDisruptionBudgetSpec) *BudgetWrapper {
	w.tdb.Spec = *spec.DeepCopy()
	return w
}

// Selector sets spec.selector to s (nil: none, which the API refuses).
func (w *BudgetWrapper) Selector(s *policyv1alpha1.LabelSelector) *BudgetWrapper {
	w.tdb.Spec.Selector = s
	return w
}

// MatchLabels sets spec.selector to select the pods labelled with every
// label of labels.
func (w *BudgetWrapper) MatchLabels(labels map[string]string) *BudgetWrapper {
	return w.Selector(policyv1alpha1.SetAsLabelSelector(labels))
}

// TopologyKey sets spec.topologyKey, the node label whose values are the
// budget's domains (ZoneKey for zones).
func (w *BudgetWrapper) TopologyKey(key string) *BudgetWrapper {
	w.tdb.Spec.TopologyKey = key
	return w
}

// MaxUnavailable sets spec.maxUnavailable, an integer or a percentage per
// domain. spec.minAvailable is left as it is, so that a test can build the
// spec with both that the API refuses.
func (w *BudgetWrapper) MaxUnavailable(v intstr.IntOrString) *BudgetWrapper {
	w.tdb.Spec.MaxUnavailable = &v
	return w
}

// MinAvailable sets spec.minAvailable, an integer or a percentage per
// domain. spec.maxUnavailable is left as it is.
func (w *BudgetWrapper) MinAvailable(v intstr.IntOrString) *BudgetWrapper {
	w.tdb.Spec.MinAvailable = &v
	return w
}

// MaxDisruptedDomains sets spec.maxDisruptedDomains.
func (w *BudgetWrapper) MaxDisruptedDomains(n int32) *BudgetWrapper {
	w.tdb.Spec.MaxDisruptedDomains = &n
	return w
}

// NodeSelectorTerm sets spec.nodeSelectorTerm, the nodes whose pods the
// budget covers.
func (w *BudgetWrapper) NodeSelectorTerm(t policyv1alpha1.NodeSelectorTerm) *BudgetWrapper {
	w.tdb.Spec.NodeSelectorTerm = &t
	return w
}

// Partition sets spec.partition: domains read from the pods.
func (w *BudgetWrapper) Partition(p policyv1alpha1.PartitionSource) *BudgetWrapper {
	w.tdb.Spec.Partition = &p
	return w
}

// PartitionByName sets spec.partition to capture group 1 of re on the pod
// name.
func (w *BudgetWrapper) PartitionByName(re string) *BudgetWrapper {
	return w.Partition(policyv1alpha1.PartitionSource{PodNameRegex: re})
}

// MinReadySeconds sets spec.minReadySeconds.
func (w *BudgetWrapper) MinReadySeconds(n int32) *BudgetWrapper {
	w.tdb.Spec.MinReadySeconds = n
	return w
}

// UnhealthyPodEvictionPolicy sets spec.unhealthyPodEvictionPolicy.
func (w *BudgetWrapper) UnhealthyPodEvictionPolicy(p policyv1alpha1.UnhealthyPodEvictionPolicyType) *BudgetWrapper {
	w.tdb.Spec.UnhealthyPodEvictionPolicy = p
	return w
}

// Rollout sets spec.rollout to a copy of r.
func (w *BudgetWrapper) Rollout(r policyv1alpha1.RolloutSpec) *BudgetWrapper {
	w.tdb.Spec.Rollout = r.DeepCopy()
	return w
}

// Generation sets metadata.generation, which the API server sets and
// raises on every change of the spec.
func (w *BudgetWrapper) Generation(g int64) *BudgetWrapper { w.tdb.Generation = g; return w }

// ObservedGeneration sets status.observedGeneration, the generation the
// status was computed for.
func (w *BudgetWrapper) ObservedGeneration(g int64) *BudgetWrapper {
	w.tdb.Status.ObservedGeneration = g
	return w
}

// DisruptedPods sets status.disruptedPods, the eviction records.
func (w *BudgetWrapper) DisruptedPods(records ...policyv1alpha1.DisruptedPod) *BudgetWrapper {
	w.tdb.Status.DisruptedPods = records
	return w
}

// StatusDomains sets status.domains to rows and the totals the status
// controller derives from them: expectedPods, currentHealthy and
// disruptionsAllowed are the rows' sums (budget.AllowedTogether's figure when
// maxDisruptedDomains does not bind), disruptedDomains the rows with fewer
// healthy than expected pods, domainCount their number.
func (w *BudgetWrapper) StatusDomains(rows ...policyv1alpha1.DomainStatus) *BudgetWrapper {
	st := &w.tdb.Status
	st.Domains = rows
	st.ExpectedPods, st.CurrentHealthy, st.DisruptionsAllowed, st.DisruptedDomains = 0, 0, 0, 0
	for _, r := range rows {
		if r.CurrentHealthy < r.ExpectedPods {
			st.DisruptedDomains++
		}
		st.ExpectedPods += r.ExpectedPods
		st.CurrentHealthy += r.CurrentHealthy
		st.DisruptionsAllowed += r.DisruptionsAllowed
	}
	st.DomainCount = int32(len(rows))
	return w
}

// DomainCount sets status.domainCount alone, after StatusDomains, for a
// status whose count is not its rows' number (0: a status written without
// it).
func (w *BudgetWrapper) DomainCount(n int32) *BudgetWrapper {
	w.tdb.Status.DomainCount = n
	return w
}

// Conditions sets status.conditions to conditions.
func (w *BudgetWrapper) Conditions(conditions ...metav1.Condition) *BudgetWrapper {
	w.tdb.Status.Conditions = conditions
	return w
}
