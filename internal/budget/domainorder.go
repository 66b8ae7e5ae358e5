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

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// DomainOrder returns the given domains in the order a rollout walks them:
// first the domains named in spec.domainOrder, in that order, then every
// other domain in ascending name order. Names of spec.domainOrder that are
// not among domains are left out, and a domain given twice appears once, so
// the result is always a permutation of the distinct domains given. A nil
// spec orders by name alone.
//
// The rollout controller (which domain is updated next) and the
// deletion-cost controller (which domain a Deployment's old pods leave
// first) both use this order, so that the two never disagree.
func DomainOrder(spec *policyv1alpha1.RolloutSpec, domains []string) []string {
	present := make(map[string]bool, len(domains))
	for _, d := range domains {
		present[d] = true
	}
	out := make([]string, 0, len(present))
	if spec != nil {
		for _, d := range spec.DomainOrder {
			if present[d] {
				out = append(out, d)
				// Cleared, so a name listed twice is taken once and
				// is not repeated among the unlisted domains below.
				delete(present, d)
			}
		}
	}
	rest := make([]string, 0, len(present))
	for d := range present {
		rest = append(rest, d)
	}
	sort.Strings(rest)
	return append(out, rest...)
}
