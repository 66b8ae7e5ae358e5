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

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

func maxUnavailableSpec(v string) *policyv1alpha1.TopologyDisruptionBudgetSpec {
	return &tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct(v)).Obj().Spec
}

func minAvailableSpec(v string) *policyv1alpha1.TopologyDisruptionBudgetSpec {
	return &tdb("web").TopologyKey(zoneKey).MinAvailable(intOrPct(v)).Obj().Spec
}

// TestDesiredHealthy: the healthy pods a domain must keep, for int and
// percent values of both fields; percentages are of the domain's expected
// pods, rounded up as policy/v1 does.
func TestDesiredHealthy(t *testing.T) {
	malformed := func(field string) *policyv1alpha1.TopologyDisruptionBudgetSpec {
		s := tdb("web").TopologyKey(zoneKey).Obj().Spec
		v := intstr.FromString("x%")
		if field == "maxUnavailable" {
			s.MaxUnavailable = &v
		} else {
			s.MinAvailable = &v
		}
		return &s
	}
	neither := &tdb("web").TopologyKey(zoneKey).Obj().Spec
	tests := []struct {
		name     string
		spec     *policyv1alpha1.TopologyDisruptionBudgetSpec
		expected int32
		want     int32
	}{
		{name: "maxUnavailable 1 of 5", spec: maxUnavailableSpec("1"), expected: 5, want: 4},
		{name: "maxUnavailable 1 of 1", spec: maxUnavailableSpec("1"), expected: 1, want: 0},
		{name: "maxUnavailable 1 of 0 is not negative", spec: maxUnavailableSpec("1"), expected: 0, want: 0},
		{name: "maxUnavailable 10 of 3", spec: maxUnavailableSpec("10"), expected: 3, want: 0},
		{name: "maxUnavailable 0", spec: maxUnavailableSpec("0"), expected: 5, want: 5},
		{name: "maxUnavailable 0%", spec: maxUnavailableSpec("0%"), expected: 5, want: 5},
		{name: "maxUnavailable 33% of 3 rounds 0.99 up to 1", spec: maxUnavailableSpec("33%"), expected: 3, want: 2},
		{name: "maxUnavailable 34% of 3 rounds 1.02 up to 2", spec: maxUnavailableSpec("34%"), expected: 3, want: 1},
		{name: "maxUnavailable 50% of 7", spec: maxUnavailableSpec("50%"), expected: 7, want: 3},
		{name: "maxUnavailable 100%", spec: maxUnavailableSpec("100%"), expected: 7, want: 0},
		{name: "maxUnavailable 10% of 0", spec: maxUnavailableSpec("10%"), expected: 0, want: 0},
		{name: "minAvailable 2 of 5", spec: minAvailableSpec("2"), expected: 5, want: 2},
		{name: "minAvailable 2 of 0 stays 2", spec: minAvailableSpec("2"), expected: 0, want: 2},
		{name: "minAvailable 0", spec: minAvailableSpec("0"), expected: 5, want: 0},
		{name: "minAvailable 50% of 3 rounds 1.5 up to 2", spec: minAvailableSpec("50%"), expected: 3, want: 2},
		{name: "minAvailable 1% of 50 rounds up to 1", spec: minAvailableSpec("1%"), expected: 50, want: 1},
		{name: "minAvailable 100% of 7", spec: minAvailableSpec("100%"), expected: 7, want: 7},
		{name: "minAvailable 0%", spec: minAvailableSpec("0%"), expected: 7, want: 0},
		{name: "neither field allows nothing", spec: neither, expected: 4, want: 4},
		{name: "malformed maxUnavailable allows nothing", spec: malformed("maxUnavailable"), expected: 4, want: 4},
		{name: "malformed minAvailable allows nothing", spec: malformed("minAvailable"), expected: 4, want: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, DesiredHealthy(tc.spec, tc.expected)); diff != "" {
				t.Errorf("DesiredHealthy(%d) (-want +got):\n%s", tc.expected, diff)
			}
		})
	}
}

// TestAllowances: disruptionsAllowed = max(0, healthy - desired), and 0 in a
// domain that expects nothing.
func TestAllowances(t *testing.T) {
	tests := []struct {
		name string
		spec *policyv1alpha1.TopologyDisruptionBudgetSpec
		in   []policyv1alpha1.DomainStatus
		want []policyv1alpha1.DomainStatus
	}{
		{name: "maxUnavailable 1",
			spec: maxUnavailableSpec("1"),
			in:   []policyv1alpha1.DomainStatus{row("a", 3, 3, 0, 0), row("b", 3, 2, 0, 0), row("c", 3, 1, 0, 0)},
			want: []policyv1alpha1.DomainStatus{row("a", 3, 3, 2, 1), row("b", 3, 2, 2, 0), row("c", 3, 1, 2, 0)}},
		{name: "a stale allowance in the input is recomputed",
			spec: maxUnavailableSpec("1"),
			in:   []policyv1alpha1.DomainStatus{row("a", 3, 1, 9, 9)},
			want: []policyv1alpha1.DomainStatus{row("a", 3, 1, 2, 0)}},
		{name: "surge: healthy above expected",
			spec: maxUnavailableSpec("1"),
			in:   []policyv1alpha1.DomainStatus{row("a", 3, 5, 0, 0)},
			want: []policyv1alpha1.DomainStatus{row("a", 3, 5, 2, 3)}},
		{name: "a domain that expects nothing allows nothing",
			spec: minAvailableSpec("0"),
			in:   []policyv1alpha1.DomainStatus{row("a", 0, 2, 0, 0), row("b", 0, 0, 0, 0)},
			want: []policyv1alpha1.DomainStatus{row("a", 0, 2, 0, 0), row("b", 0, 0, 0, 0)}},
		{name: "minAvailable 60%",
			spec: minAvailableSpec("60%"),
			in:   []policyv1alpha1.DomainStatus{row("a", 5, 5, 0, 0), row("b", 1, 1, 0, 0)},
			want: []policyv1alpha1.DomainStatus{row("a", 5, 5, 3, 2), row("b", 1, 1, 1, 0)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, allowances(tc.spec, tc.in)); diff != "" {
				t.Errorf("allowances() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLimitDisruptedDomains: a domain may be disrupted only if fewer than
// maxDisruptedDomains other domains have unavailable pods.
func TestLimitDisruptedDomains(t *testing.T) {
	disrupted := func(name string) policyv1alpha1.DomainStatus { return row(name, 4, 3, 2, 1) }
	intact := func(name string) policyv1alpha1.DomainStatus { return row(name, 4, 4, 2, 2) }
	zeroed := func(r policyv1alpha1.DomainStatus) policyv1alpha1.DomainStatus { r.DisruptionsAllowed = 0; return r }
	tests := []struct {
		name  string
		limit *int32
		in    []policyv1alpha1.DomainStatus
		want  []policyv1alpha1.DomainStatus
	}{
		{name: "unset: no limit",
			in:   []policyv1alpha1.DomainStatus{disrupted("a"), disrupted("b"), intact("c")},
			want: []policyv1alpha1.DomainStatus{disrupted("a"), disrupted("b"), intact("c")}},
		{name: "1, nothing disrupted: every domain keeps its allowance", limit: ptrTo[int32](1),
			in:   []policyv1alpha1.DomainStatus{intact("a"), intact("b"), intact("c")},
			want: []policyv1alpha1.DomainStatus{intact("a"), intact("b"), intact("c")}},
		{name: "1, one disrupted: only that one may go on", limit: ptrTo[int32](1),
			in:   []policyv1alpha1.DomainStatus{intact("a"), disrupted("b"), intact("c")},
			want: []policyv1alpha1.DomainStatus{zeroed(intact("a")), disrupted("b"), zeroed(intact("c"))}},
		{name: "1, two disrupted: none may", limit: ptrTo[int32](1),
			in:   []policyv1alpha1.DomainStatus{disrupted("a"), disrupted("b"), intact("c")},
			want: []policyv1alpha1.DomainStatus{zeroed(disrupted("a")), zeroed(disrupted("b")), zeroed(intact("c"))}},
		{name: "2, one disrupted: every domain may", limit: ptrTo[int32](2),
			in:   []policyv1alpha1.DomainStatus{intact("a"), disrupted("b"), intact("c")},
			want: []policyv1alpha1.DomainStatus{intact("a"), disrupted("b"), intact("c")}},
		{name: "2, two disrupted: those two may go on, the third may not", limit: ptrTo[int32](2),
			in:   []policyv1alpha1.DomainStatus{disrupted("a"), disrupted("b"), intact("c")},
			want: []policyv1alpha1.DomainStatus{disrupted("a"), disrupted("b"), zeroed(intact("c"))}},
		{name: "2, three disrupted: none may", limit: ptrTo[int32](2),
			in:   []policyv1alpha1.DomainStatus{disrupted("a"), disrupted("b"), disrupted("c")},
			want: []policyv1alpha1.DomainStatus{zeroed(disrupted("a")), zeroed(disrupted("b")), zeroed(disrupted("c"))}},
		{name: "a surge domain (healthy above expected) is not disrupted", limit: ptrTo[int32](1),
			in:   []policyv1alpha1.DomainStatus{row("a", 2, 3, 1, 2), disrupted("b")},
			want: []policyv1alpha1.DomainStatus{zeroed(row("a", 2, 3, 1, 2)), disrupted("b")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := maxUnavailableSpec("2")
			spec.MaxDisruptedDomains = tc.limit
			got := append([]policyv1alpha1.DomainStatus(nil), tc.in...)
			LimitDisruptedDomains(spec, got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LimitDisruptedDomains() (-want +got):\n%s", diff)
			}
		})
	}
}
