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

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

func TestDomainOrder(t *testing.T) {
	order := func(names ...string) *policyv1alpha1.RolloutSpec {
		return &policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain, DomainOrder: names}
	}
	cases := []struct {
		name    string
		spec    *policyv1alpha1.RolloutSpec
		domains []string
		want    []string
	}{
		{
			name:    "no rollout spec: ascending names",
			domains: []string{"zone-c", "zone-a", "zone-b"},
			want:    []string{"zone-a", "zone-b", "zone-c"},
		},
		{
			name:    "no domainOrder: ascending names",
			spec:    order(),
			domains: []string{"zone-b", "zone-a"},
			want:    []string{"zone-a", "zone-b"},
		},
		{
			name:    "listed domains first, in the listed order",
			spec:    order("zone-c", "zone-a"),
			domains: []string{"zone-a", "zone-b", "zone-c", "zone-d"},
			want:    []string{"zone-c", "zone-a", "zone-b", "zone-d"},
		},
		{
			name:    "listed domains without pods are left out",
			spec:    order("zone-x", "zone-b"),
			domains: []string{"zone-a", "zone-b"},
			want:    []string{"zone-b", "zone-a"},
		},
		{
			name:    "a domain given twice appears once",
			spec:    order("zone-b"),
			domains: []string{"zone-b", "zone-a", "zone-b", "zone-a"},
			want:    []string{"zone-b", "zone-a"},
		},
		{
			name: "no domains",
			spec: order("zone-a"),
			want: []string{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]string(nil), tc.domains...)
			got := DomainOrder(tc.spec, in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DomainOrder (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.domains, in); diff != "" {
				t.Errorf("DomainOrder changed its input (-want +got):\n%s", diff)
			}
		})
	}
}
