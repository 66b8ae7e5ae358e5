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

package budget

import (
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// The eviction webhook answers before the API server's own check of
// policy/v1 PodDisruptionBudgets. An eviction the webhook charged and core
// then refused would leave a record for an eviction that never happened,
// holding its domain's allowance. So, before charging, the webhook asks the
// same question core will ask, from the PDBs as it knows them.

// PDBVerdict is what core's eviction handler would answer for a pod because
// of its PodDisruptionBudgets.
type PDBVerdict struct {
	// Refused is true when core would refuse the eviction.
	Refused bool
	// Code is the HTTP status core would answer with: 429 for a budget
	// that allows nothing now, 403 for a broken one, 500 for a pod covered
	// by more than one PDB.
	Code int32
	// PDB names the refusing budget ("" for several).
	PDB string
	// Message says why, in core's words where it has them.
	Message string
}

// CheckPodDisruptionBudgets decides, as the API server's eviction handler
// does, whether the policy/v1 PDBs of the pod's namespace let a pod that
// cannot skip them (CanIgnoreBudget is false) be evicted: selectors that do
// not parse select nothing, more than one covering PDB is an error, a
// not-Ready pod passes under the PDB's unhealthyPodEvictionPolicy, and
// otherwise the PDB must be up to date and allow a disruption.
func CheckPodDisruptionBudgets(pod *corev1.Pod, pdbs []policyv1.PodDisruptionBudget) PDBVerdict {
	var covering []*policyv1.PodDisruptionBudget
	for i := range pdbs {
		p := &pdbs[i]
		if p.Namespace != pod.Namespace {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
			continue
		}
		covering = append(covering, p)
	}
	switch len(covering) {
	case 0:
		return PDBVerdict{}
	case 1:
	default:
		return PDBVerdict{Refused: true, Code: http.StatusInternalServerError,
			Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}
	}
	p := covering[0]
	if !isReady(pod) {
		if p.Spec.UnhealthyPodEvictionPolicy != nil && *p.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow {
			return PDBVerdict{}
		}
		if p.Status.CurrentHealthy >= p.Status.DesiredHealthy && p.Status.DesiredHealthy > 0 {
			return PDBVerdict{}
		}
	}
	refused := func(code int32, format string, args ...any) PDBVerdict {
		return PDBVerdict{Refused: true, Code: code, PDB: p.Name, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case p.Status.ObservedGeneration < p.Generation:
		return refused(http.StatusTooManyRequests, "the PodDisruptionBudget %s is still being processed by the server", p.Name)
	case p.Status.DisruptionsAllowed < 0:
		return refused(http.StatusForbidden, "the PodDisruptionBudget %s has a negative disruptionsAllowed", p.Name)
	case len(p.Status.DisruptedPods) > MaxDisruptedPods:
		return refused(http.StatusForbidden, "the PodDisruptionBudget %s has too many evictions not confirmed by its controller", p.Name)
	case p.Status.DisruptionsAllowed == 0:
		if c := apimeta.FindStatusCondition(p.Status.Conditions, policyv1.DisruptionAllowedCondition); c != nil &&
			c.Status == metav1.ConditionFalse && c.Reason == policyv1.SyncFailedReason && c.Message != "" {
			return refused(http.StatusTooManyRequests, "the PodDisruptionBudget %s does not allow evicting pods currently because it failed sync: %s", p.Name, c.Message)
		}
		return refused(http.StatusTooManyRequests, "the PodDisruptionBudget %s needs %d healthy pods and has %d currently; 0 disruptions allowed",
			p.Name, p.Status.DesiredHealthy, p.Status.CurrentHealthy)
	}
	return PDBVerdict{}
}
