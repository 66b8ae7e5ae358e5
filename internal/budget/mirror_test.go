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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

func TestMirrorDomains(t *testing.T) {
	row := func(name string, expected, healthy, desired int32) policyv1alpha1.DomainStatus {
		return policyv1alpha1.DomainStatus{Name: name, ExpectedPods: expected, CurrentHealthy: healthy, DesiredHealthy: desired}
	}
	spec := func(maxDomains *int32) *policyv1alpha1.TopologyDisruptionBudgetSpec {
		return &policyv1alpha1.TopologyDisruptionBudgetSpec{TopologyKey: corev1.LabelTopologyZone,
			MaxUnavailable: ptr.To(intstr.FromInt32(1)), MaxDisruptedDomains: maxDomains}
	}
	cases := []struct {
		name string
		spec *policyv1alpha1.TopologyDisruptionBudgetSpec
		rows []policyv1alpha1.DomainStatus
		want []MirrorDomain
	}{{
		name: "all healthy: each domain its desiredHealthy",
		spec: spec(ptr.To(int32(1))),
		rows: []policyv1alpha1.DomainStatus{row("a", 3, 3, 2), row("b", 3, 3, 2)},
		want: []MirrorDomain{{"a", 2, false}, {"b", 2, false}},
	}, {
		name: "one domain disrupted under maxDisruptedDomains 1: the others wait with all their expected pods",
		spec: spec(ptr.To(int32(1))),
		rows: []policyv1alpha1.DomainStatus{row("a", 3, 2, 2), row("b", 3, 3, 2), row("c", 4, 4, 3)},
		want: []MirrorDomain{{"a", 2, false}, {"b", 3, true}, {"c", 4, true}},
	}, {
		// A disrupted domain at its desired count keeps its healthy pods
		// and lets its not-Ready pod go, as the budget does: minAvailable
		// is its currentHealthy, not its expectedPods.
		name: "two disrupted under maxDisruptedDomains 1: every domain waits, each keeping its healthy pods",
		spec: spec(ptr.To(int32(1))),
		rows: []policyv1alpha1.DomainStatus{row("a", 3, 2, 2), row("b", 3, 2, 2), row("c", 3, 3, 2)},
		want: []MirrorDomain{{"a", 2, true}, {"b", 2, true}, {"c", 3, true}},
	}, {
		name: "a waiting domain below its desired count keeps every expected pod",
		spec: spec(ptr.To(int32(1))),
		rows: []policyv1alpha1.DomainStatus{row("a", 3, 1, 2), row("b", 4, 2, 3), row("c", 3, 3, 2)},
		want: []MirrorDomain{{"a", 3, true}, {"b", 4, true}, {"c", 3, true}},
	}, {
		name: "a waiting domain whose desiredHealthy is 0 keeps every expected pod",
		spec: spec(ptr.To(int32(1))),
		rows: []policyv1alpha1.DomainStatus{row("a", 1, 0, 0), row("b", 1, 0, 0), row("c", 1, 1, 0)},
		want: []MirrorDomain{{"a", 1, true}, {"b", 1, true}, {"c", 1, true}},
	}, {
		name: "one disrupted under maxDisruptedDomains 2: nobody waits",
		spec: spec(ptr.To(int32(2))),
		rows: []policyv1alpha1.DomainStatus{row("a", 3, 2, 2), row("b", 3, 3, 2)},
		want: []MirrorDomain{{"a", 2, false}, {"b", 2, false}},
	}, {
		name: "without maxDisruptedDomains: nobody waits, a domain expecting nothing keeps nothing",
		spec: spec(nil),
		rows: []policyv1alpha1.DomainStatus{row("a", 3, 1, 2), row("b", 0, 0, 0)},
		want: []MirrorDomain{{"a", 2, false}, {"b", 0, false}},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, MirrorDomains(tc.spec, &policyv1alpha1.TopologyDisruptionBudgetStatus{Domains: tc.rows})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A budget that allows nothing (a pod without a domain, a controller
// without a scale, a broken spec) has mirrors that allow nothing.
func TestMirrorDomainsOfABlockedBudget(t *testing.T) {
	spec := &policyv1alpha1.TopologyDisruptionBudgetSpec{TopologyKey: corev1.LabelTopologyZone, MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	for _, reason := range []string{policyv1alpha1.ReasonDomainError, policyv1alpha1.ReasonSyncFailed} {
		st := &policyv1alpha1.TopologyDisruptionBudgetStatus{
			Domains:    []policyv1alpha1.DomainStatus{{Name: "a", ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2}},
			Conditions: []metav1.Condition{{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionFalse, Reason: reason}},
		}
		if got := MirrorDomains(spec, st); len(got) != 1 || got[0] != (MirrorDomain{"a", 3, true}) {
			t.Errorf("%s: %+v, want every expected pod kept", reason, got)
		}
	}
}

func TestMirrorNamesAreValidStableAndDistinct(t *testing.T) {
	long := strings.Repeat("b", 253)
	domains := []string{"zone-a", "Zone-A", "us_east.1a", "-_.", "", strings.Repeat("x", 63), "all"}
	seen := map[string]string{}
	for _, b := range []string{"web", long, long[:200] + "x", "a.b-c"} {
		for _, d := range domains {
			n := MirrorName(b, d)
			if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
				t.Errorf("MirrorName(%q, %q) = %q: %v", b, d, n, errs)
			}
			if n != MirrorName(b, d) {
				t.Errorf("MirrorName(%q, %q) is not stable", b, d)
			}
			if prev, ok := seen[n]; ok {
				t.Errorf("MirrorName(%q, %q) = %q, as for %s", b, d, n, prev)
			}
			seen[n] = b + "/" + d
		}
		if errs := validation.IsValidLabelValue(MirrorBudgetLabelValue(b)); len(errs) > 0 {
			t.Errorf("MirrorBudgetLabelValue(%q): %v", b, errs)
		}
	}
	if got := MirrorName("web", "zone-a"); !strings.HasPrefix(got, "web-zone-a-") {
		t.Errorf("MirrorName(web, zone-a) = %q: want it readable", got)
	}
	if got := MirrorBudgetLabelValue("web"); got != "web" {
		t.Errorf("a short budget name is its own label value, got %q", got)
	}
}

func TestMirrorDomainKey(t *testing.T) {
	term := &policyv1alpha1.NodeSelectorTerm{}
	cases := []struct {
		topologyKey string
		term        *policyv1alpha1.NodeSelectorTerm
		key         string
		operator    bool
	}{
		{corev1.LabelTopologyZone, nil, corev1.LabelTopologyZone, false},
		{corev1.LabelTopologyRegion, nil, corev1.LabelTopologyRegion, false},
		{corev1.LabelTopologyZone, term, DomainLabel, true},
		{"rack", nil, DomainLabel, true},
		{"", nil, "", false},
		{"", term, DomainLabel, true},
	}
	for _, tc := range cases {
		key, op := MirrorDomainKey(&policyv1alpha1.TopologyDisruptionBudgetSpec{TopologyKey: tc.topologyKey, NodeSelectorTerm: tc.term})
		if key != tc.key || op != tc.operator {
			t.Errorf("topologyKey %q, term %v: got (%q, %v), want (%q, %v)", tc.topologyKey, tc.term != nil, key, op, tc.key, tc.operator)
		}
	}
}
