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
	"sort"

	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// Per-domain allowance, with the arithmetic of policy/v1 applied to each
// domain on its own:
//
//	maxUnavailable: desiredHealthy = max(0, expected - maxUnavailable)
//	minAvailable:   desiredHealthy = minAvailable
//	a percentage is of the domain's expected pods, rounded up
//	disruptionsAllowed = max(0, currentHealthy - desiredHealthy), and 0 when
//	the domain expects no pod
//
// then maxDisruptedDomains: a domain may be disrupted only if fewer than
// maxDisruptedDomains other domains have unavailable pods
// (currentHealthy < expectedPods).

// DesiredHealthy is how many healthy pods a domain expecting expected pods
// must keep under spec.
func DesiredHealthy(spec *policyv1alpha1.TopologyDisruptionBudgetSpec, expected int32) int32 {
	var desired int32
	switch {
	case spec.MaxUnavailable != nil:
		// A malformed value makes no pod unavailable.
		desired = expected - scaled(spec.MaxUnavailable, expected, 0)
	case spec.MinAvailable != nil:
		// A malformed value keeps every pod.
		desired = scaled(spec.MinAvailable, expected, expected)
	default:
		// The API server refuses a spec with neither; treat one that slips
		// through as allowing nothing.
		desired = expected
	}
	return max(desired, 0)
}

// scaled resolves an int or a percentage of total, rounding up as policy/v1
// does. Values the API refuses (malformed percentages) resolve to
// malformed, which the caller picks to err on the side of allowing nothing.
func scaled(v *intstr.IntOrString, total, malformed int32) int32 {
	n, err := intstr.GetScaledValueFromIntOrPercent(v, int(total), true)
	if err != nil {
		return malformed
	}
	return int32(n)
}

// allowances fills desiredHealthy and disruptionsAllowed of each row.
func allowances(spec *policyv1alpha1.TopologyDisruptionBudgetSpec, rows []policyv1alpha1.DomainStatus) []policyv1alpha1.DomainStatus {
	for i := range rows {
		r := &rows[i]
		r.DesiredHealthy = DesiredHealthy(spec, r.ExpectedPods)
		r.DisruptionsAllowed = 0
		if r.ExpectedPods > 0 && r.CurrentHealthy > r.DesiredHealthy {
			r.DisruptionsAllowed = r.CurrentHealthy - r.DesiredHealthy
		}
	}
	LimitDisruptedDomains(spec, rows)
	return rows
}

// LimitDisruptedDomains zeroes the allowance of every domain that may not be
// disrupted because maxDisruptedDomains other domains already are.
func LimitDisruptedDomains(spec *policyv1alpha1.TopologyDisruptionBudgetSpec, rows []policyv1alpha1.DomainStatus) {
	if spec.MaxDisruptedDomains == nil {
		return
	}
	limit := *spec.MaxDisruptedDomains
	disrupted := int32(0)
	for _, r := range rows {
		if isDisrupted(r) {
			disrupted++
		}
	}
	for i := range rows {
		others := disrupted
		if isDisrupted(rows[i]) {
			others--
		}
		if others >= limit {
			rows[i].DisruptionsAllowed = 0
		}
	}
}

// AllowedTogether is how many evictions could be granted now together, one
// after the other, without waiting for a pod to turn Ready: the domains'
// allowances summed, except that under maxDisruptedDomains only that many
// domains can be disrupted at once. The domains already disrupted keep their
// allowances; the rest of the limit goes to the undisrupted domains that
// allow the most. This is status.disruptionsAllowed; each domain's own
// allowance stays in status.domains.
func AllowedTogether(spec *policyv1alpha1.TopologyDisruptionBudgetSpec, rows []policyv1alpha1.DomainStatus) int32 {
	var total int32
	if spec.MaxDisruptedDomains == nil {
		for _, r := range rows {
			total += max(r.DisruptionsAllowed, 0)
		}
		return total
	}
	var fresh []int32
	room := *spec.MaxDisruptedDomains
	for _, r := range rows {
		if isDisrupted(r) {
			total += max(r.DisruptionsAllowed, 0)
			room--
		} else if r.DisruptionsAllowed > 0 {
			fresh = append(fresh, r.DisruptionsAllowed)
		}
	}
	sort.Slice(fresh, func(i, j int) bool { return fresh[i] > fresh[j] })
	for i := 0; i < len(fresh) && int32(i) < room; i++ {
		total += fresh[i]
	}
	return total
}

// DisruptedDomains counts the domains with unavailable pods: those that
// maxDisruptedDomains counts.
func DisruptedDomains(rows []policyv1alpha1.DomainStatus) int32 {
	var n int32
	for _, r := range rows {
		if isDisrupted(r) {
			n++
		}
	}
	return n
}

// Waiting says whether a domain would allow an eviction but for
// maxDisruptedDomains: other domains are disrupted.
func Waiting(spec *policyv1alpha1.TopologyDisruptionBudgetSpec, r policyv1alpha1.DomainStatus) bool {
	return spec.MaxDisruptedDomains != nil && r.ExpectedPods > 0 && r.CurrentHealthy > r.DesiredHealthy && r.DisruptionsAllowed == 0
}

// isDisrupted says whether a domain has unavailable pods.
func isDisrupted(r policyv1alpha1.DomainStatus) bool {
	return r.CurrentHealthy < r.ExpectedPods
}

// disruptedDomains lists the domains with unavailable pods other than skip.
func disruptedDomains(rows []policyv1alpha1.DomainStatus, skip string) []string {
	var out []string
	for _, r := range rows {
		if r.Name != skip && isDisrupted(r) {
			out = append(out, r.Name)
		}
	}
	return out
}
