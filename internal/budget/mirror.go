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
	"hash/fnv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// Mirrored PodDisruptionBudgets: one policy/v1 PDB per domain, for the
// planners that read nothing else.
//
// A mirror selects the budget's pods of one domain and has an integer
// minAvailable, which makes the disruption controller count the pods it
// selects (not a controller's scale, which spans every domain):
//
//   - the domain's desiredHealthy while it may be disrupted, so the PDB
//     allows what the domain allows on its own;
//   - while it must wait under maxDisruptedDomains (other domains are
//     disrupted), its currentHealthy when that is at least a positive
//     desiredHealthy, else its expectedPods: the PDB then allows no healthy
//     pod to go, yet lets a not-Ready pod go exactly when the budget does
//     (under IfHealthyBudget, policy/v1 lets a not-Ready pod go only while
//     currentHealthy >= desiredHealthy > 0; a minAvailable of expectedPods
//     would refuse every not-Ready pod of a domain with one, which the
//     budget allows).
//
// The value changes only when a domain's desiredHealthy changes (a scale),
// it starts or stops waiting, or, while it waits, its healthy count
// changes: not on each eviction, since the disruption controller derives
// disruptionsAllowed from the pods itself. A pod of a waiting domain that
// turns Ready lets the mirror allow one healthy eviction the budget refuses
// until the mirror is rewritten (the status lag); the eviction webhook,
// which decides from the budget, still refuses it.

// MirrorBudgetLabel labels each mirror with its budget.
const MirrorBudgetLabel = "policy.tdb.dev/budget"

// DomainLabel carries a covered pod's domain when no label the API server
// sets does (see MirrorDomainKey); the operator writes it.
const DomainLabel = "policy.tdb.dev/domain"

// MaxMirroredDomains is the most domains a budget is mirrored for: one
// PodDisruptionBudget each, so a budget over hundreds of partitions would
// add hundreds of objects for planners to read. Beyond it the budget is
// not mirrored (condition Mirrored=False, reason TooManyDomains).
const MaxMirroredDomains = 100

// MirrorDomain is what one domain's mirror must say.
type MirrorDomain struct {
	// Domain is the domain's name (status.domains[].name).
	Domain string
	// MinAvailable is the mirror's minAvailable.
	MinAvailable int32
	// Waiting is true when the domain may not be disrupted because
	// maxDisruptedDomains other domains are.
	Waiting bool
}

// MirrorDomains returns, for each row of the budget's status, what its
// mirror must say. A budget that allows nothing whatever its numbers say
// (condition DisruptionAllowed with reason DomainError or SyncFailed: a pod
// without a domain, a controller without a readable scale, a spec that
// cannot be evaluated) keeps every expected pod in every domain: its
// mirrors allow nothing either.
func MirrorDomains(spec *policyv1alpha1.TopologyDisruptionBudgetSpec, st *policyv1alpha1.TopologyDisruptionBudgetStatus) []MirrorDomain {
	rows := st.Domains
	blocked := false
	for _, c := range st.Conditions {
		if c.Type == policyv1alpha1.ConditionDisruptionAllowed &&
			(c.Reason == policyv1alpha1.ReasonDomainError || c.Reason == policyv1alpha1.ReasonSyncFailed) {
			blocked = true
		}
	}
	out := make([]MirrorDomain, 0, len(rows))
	disrupted := int32(0)
	for _, r := range rows {
		if isDisrupted(r) {
			disrupted++
		}
	}
	for _, r := range rows {
		// Core counts the pods warming up (Ready within minReadySeconds)
		// healthy, which the budget does not yet: they are added, so
		// that core allows what the budget does.
		m := MirrorDomain{Domain: r.Name, MinAvailable: r.DesiredHealthy + r.WarmingUp}
		if blocked {
			m.Waiting, m.MinAvailable = true, r.ExpectedPods
			out = append(out, m)
			continue
		}
		if spec.MaxDisruptedDomains != nil {
			others := disrupted
			if isDisrupted(r) {
				others--
			}
			if others >= *spec.MaxDisruptedDomains {
				m.Waiting = true
				m.MinAvailable = waitingMinAvailable(r)
			}
		}
		out = append(out, m)
	}
	return out
}

// waitingMinAvailable is the minAvailable of a domain that must wait: no
// healthy pod may go, and a not-Ready one may exactly when the budget lets it
// (DecideEviction: currentHealthy >= desiredHealthy > 0), which policy/v1
// checks as the PDB's currentHealthy >= its minAvailable > 0.
func waitingMinAvailable(r policyv1alpha1.DomainStatus) int32 {
	if r.DesiredHealthy > 0 && r.CurrentHealthy >= r.DesiredHealthy {
		return r.CurrentHealthy + r.WarmingUp
	}
	return r.ExpectedPods
}

// MirrorDomainKey is the pod label a mirror selects a domain by, and
// whether the operator writes it. The API server copies a node's
// topology.kubernetes.io/zone and region onto the pods bound to it
// (PodTopologyLabels): a budget keyed by one of them over its whole
// namespace selects by it, and the operator writes it only on a covered pod
// that lacks it (one created already bound, say). A budget with neither
// topologyKey nor nodeSelectorTerm is one domain, selected by the budget's
// selector alone (key ""). Any other key, the domain "all" of a
// nodeSelectorTerm alone, or a nodeSelectorTerm (pods of the same zone outside
// the term must not be selected) uses DomainLabel, which the operator
// writes on covered pods and removes from the others.
func MirrorDomainKey(spec *policyv1alpha1.TopologyDisruptionBudgetSpec) (key string, operatorOwned bool) {
	if p := spec.Partition; p != nil {
		// A partition label is the pods' own; a partition read from the
		// name is written on each pod by the operator.
		if p.Label != "" {
			return p.Label, false
		}
		return DomainLabel, true
	}
	if spec.TopologyKey == "" && spec.NodeSelectorTerm == nil {
		// One domain, "all": the budget's selector alone.
		return "", false
	}
	if spec.NodeSelectorTerm == nil && (spec.TopologyKey == corev1.LabelTopologyZone || spec.TopologyKey == corev1.LabelTopologyRegion) {
		return spec.TopologyKey, false
	}
	return DomainLabel, true
}

// MirrorName is the name of the budget's mirror of domain: a DNS subdomain
// of at most 253 characters for any budget name and label value, stable,
// and distinct for distinct domains (domain values that differ only in case
// or in characters a name cannot hold differ in the hash).
func MirrorName(budgetName, domain string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(domain) {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	d := strings.Trim(b.String(), "-")
	if len(d) > 63 {
		d = strings.Trim(d[:63], "-")
	}
	name := budgetName
	if len(name) > 170 {
		// Budgets sharing the first 161 characters stay apart.
		name = strings.Trim(name[:161], "-.") + "-" + shortHash(budgetName)
	}
	if d == "" {
		return fmt.Sprintf("%s-%s", name, shortHash(domain))
	}
	return fmt.Sprintf("%s-%s-%s", name, d, shortHash(domain))
}

// MirrorBudgetLabelValue is the MirrorBudgetLabel value of a budget: its
// name, or, for a name longer than a label value may be, a prefix and a
// hash.
func MirrorBudgetLabelValue(budgetName string) string {
	if len(budgetName) <= 63 {
		return budgetName
	}
	return strings.Trim(budgetName[:54], "-.") + "-" + shortHash(budgetName)
}

func shortHash(s string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return fmt.Sprintf("%08x", h.Sum32())
}
