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
	"testing"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// TestAllowedTogether: the evictions that could be granted now together,
// one after the other without a pod turning Ready. Under
// maxDisruptedDomains only that many domains can be disrupted at once, so
// the domains' allowances do not simply add up.
func TestAllowedTogether(t *testing.T) {
	// Rows of maxUnavailable 2 over 3 expected pods: desired 1.
	whole := func(name string) policyv1alpha1.DomainStatus { return row(name, 3, 3, 1, 2) }
	downOne := func(name string) policyv1alpha1.DomainStatus { return row(name, 3, 2, 1, 1) }
	downTwo := func(name string) policyv1alpha1.DomainStatus { return row(name, 3, 1, 1, 0) }
	rows := func(rs ...policyv1alpha1.DomainStatus) []policyv1alpha1.DomainStatus { return rs }
	tests := []struct {
		name  string
		limit *int32
		rows  []policyv1alpha1.DomainStatus
		// limited passes rows through LimitDisruptedDomains first, as the
		// status controller and the webhook write them.
		limited bool
		want    int32
	}{
		{name: "maxUnavailable 2, maxDisruptedDomains 1, three whole zones of 3: 2, not 6",
			limit: ptrTo[int32](1), rows: rows(whole("a"), whole("b"), whole("c")), limited: true, want: 2},
		{name: "no maxDisruptedDomains: the sum",
			rows: rows(whole("a"), whole("b"), whole("c")), want: 6},
		{name: "no maxDisruptedDomains, one zone down a pod: the sum",
			rows: rows(whole("a"), downOne("b"), whole("c")), want: 5},
		{name: "maxDisruptedDomains 2, one disrupted zone: its allowance and the best other zone's",
			limit: ptrTo[int32](2), rows: rows(whole("a"), downOne("b"), whole("c")), limited: true, want: 1 + 2},
		{name: "maxDisruptedDomains 1, one disrupted zone: only its allowance",
			limit: ptrTo[int32](1), rows: rows(whole("a"), downOne("b"), whole("c")), limited: true, want: 1},
		{name: "maxDisruptedDomains 1, one disrupted zone with nothing to spare: 0",
			limit: ptrTo[int32](1), rows: rows(whole("a"), downTwo("b"), whole("c")), limited: true, want: 0},
		{name: "maxDisruptedDomains 1, two disrupted zones (beyond the limit): their allowances, 0 once limited",
			limit: ptrTo[int32](1), rows: rows(downOne("a"), downOne("b"), whole("c")), limited: true, want: 0},
		{name: "maxDisruptedDomains 1, two disrupted zones as given: each keeps its own allowance, no fresh zone",
			limit: ptrTo[int32](1), rows: rows(downOne("a"), downOne("b"), whole("c")), want: 2},
		{name: "maxDisruptedDomains 2, undisrupted zones: the largest allowances first",
			limit: ptrTo[int32](2), rows: rows(row("a", 4, 4, 3, 1), row("b", 4, 4, 1, 3), row("c", 4, 4, 2, 2)), want: 3 + 2},
		{name: "maxDisruptedDomains 2: a whole zone allowing nothing takes no room",
			limit: ptrTo[int32](2), rows: rows(row("a", 3, 3, 3, 0), whole("b"), whole("c")), limited: true, want: 4},
		{name: "maxDisruptedDomains 0: nothing, as no domain may be disrupted",
			limit: ptrTo[int32](0), rows: rows(whole("a"), whole("b")), limited: true, want: 0},
		{name: "maxDisruptedDomains larger than the domains: the sum",
			limit: ptrTo[int32](5), rows: rows(whole("a"), downOne("b"), whole("c")), limited: true, want: 5},
		{name: "negative allowances count as none",
			rows: rows(row("a", 3, 3, 1, 2), row("b", 3, 3, 1, -1)), want: 2},
		{name: "no domains: 0",
			limit: ptrTo[int32](1), want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := maxUnavailableSpec("2")
			spec.MaxDisruptedDomains = tc.limit
			in := append([]policyv1alpha1.DomainStatus(nil), tc.rows...)
			if tc.limited {
				LimitDisruptedDomains(spec, in)
			}
			if got := AllowedTogether(spec, in); got != tc.want {
				t.Errorf("AllowedTogether(%v) = %d, want %d", in, got, tc.want)
			}
		})
	}
}

// TestAllowedTogetherIsWhatEvictionsGet: the figure is the number of
// evictions DecideEviction grants one after the other, each in the domain
// that allows the most, before it refuses them all.
func TestAllowedTogetherIsWhatEvictionsGet(t *testing.T) {
	tests := []struct {
		name  string
		limit *int32
		rows  []policyv1alpha1.DomainStatus
	}{
		{name: "maxDisruptedDomains 1, three whole zones", limit: ptrTo[int32](1),
			rows: []policyv1alpha1.DomainStatus{row("zone-a", 3, 3, 1, 2), row("zone-b", 3, 3, 1, 2), row("zone-c", 3, 3, 1, 2)}},
		{name: "maxDisruptedDomains 2, zone-b disrupted", limit: ptrTo[int32](2),
			rows: []policyv1alpha1.DomainStatus{row("zone-a", 3, 3, 1, 2), row("zone-b", 3, 2, 1, 1), row("zone-c", 3, 3, 1, 2)}},
		{name: "no maxDisruptedDomains",
			rows: []policyv1alpha1.DomainStatus{row("zone-a", 3, 3, 1, 2), row("zone-b", 3, 2, 1, 1), row("zone-c", 3, 3, 1, 2)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("2")).StatusDomains(tc.rows...).Obj()
			b.Spec.MaxDisruptedDomains = tc.limit
			LimitDisruptedDomains(&b.Spec, b.Status.Domains)
			want := AllowedTogether(&b.Spec, b.Status.Domains)
			granted := int32(0)
			for i := 0; ; i++ {
				// Evict in the domain that still allows the most.
				best := -1
				for j, d := range b.Status.Domains {
					if d.DisruptionsAllowed > 0 && (best < 0 || d.DisruptionsAllowed > b.Status.Domains[best].DisruptionsAllowed) {
						best = j
					}
				}
				if best < 0 {
					break
				}
				p := pod("p-" + itoa(i)).OnNode("n").Ready().Obj()
				d := DecideEviction(b, EvictionRequest{Pod: p, Domain: b.Status.Domains[best].Name, Now: t0})
				if !d.Allowed {
					break
				}
				b.Status = *d.Status
				granted++
			}
			if granted != want {
				t.Errorf("AllowedTogether = %d, DecideEviction granted %d one after the other", want, granted)
			}
		})
	}
}
