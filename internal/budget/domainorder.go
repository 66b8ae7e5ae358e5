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
