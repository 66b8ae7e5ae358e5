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
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// partitionRows are n partitions "0".."n-1" of 3 replicas, one allowed
// each, with the rows of mutate changed.
func partitionRows(n int, mutate map[string]func(*policyv1alpha1.DomainStatus)) []policyv1alpha1.DomainStatus {
	rows := make([]policyv1alpha1.DomainStatus, 0, n)
	for i := 0; i < n; i++ {
		r := policyv1alpha1.DomainStatus{Name: fmt.Sprint(i), ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1}
		if m := mutate[r.Name]; m != nil {
			m(&r)
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	return rows
}

func degraded(r *policyv1alpha1.DomainStatus) { r.CurrentHealthy, r.DisruptionsAllowed = 2, 0 }

func TestCompactStatus(t *testing.T) {
	blocked := metav1.NewTime(time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC))
	cases := []struct {
		name       string
		rows       []policyv1alpha1.DomainStatus
		wantListed []string
		wantGroups []policyv1alpha1.DomainGroup
	}{{
		name:       "up to 20 domains are all listed, healthy or not",
		rows:       partitionRows(20, map[string]func(*policyv1alpha1.DomainStatus){"4": degraded}),
		wantListed: []string{"0", "1", "10", "11", "12", "13", "14", "15", "16", "17", "18", "19", "2", "3", "4", "5", "6", "7", "8", "9"},
	}, {
		name:       "300 partitions at full health are one range",
		rows:       partitionRows(300, nil),
		wantGroups: []policyv1alpha1.DomainGroup{{Count: 300, ExpectedPods: 3, DesiredHealthy: 2, DisruptionsAllowed: 1, Ranges: []string{"0-299"}}},
	}, {
		name: "degraded, warming and blocked partitions are listed, and split the range",
		rows: partitionRows(300, map[string]func(*policyv1alpha1.DomainStatus){
			"7":   degraded,
			"8":   func(r *policyv1alpha1.DomainStatus) { r.CurrentHealthy, r.WarmingUp, r.DisruptionsAllowed = 2, 1, 0 },
			"120": func(r *policyv1alpha1.DomainStatus) { r.DisruptionsAllowed, r.BlockedSince = 0, &blocked },
			"299": degraded,
		}),
		wantListed: []string{"120", "299", "7", "8"},
		wantGroups: []policyv1alpha1.DomainGroup{{Count: 296, ExpectedPods: 3, DesiredHealthy: 2, DisruptionsAllowed: 1, Ranges: []string{"0-6", "9-119", "121-298"}}},
	}, {
		name: "healthy domains with other numbers form their own groups; other names are listed by name",
		rows: func() []policyv1alpha1.DomainStatus {
			rows := partitionRows(25, map[string]func(*policyv1alpha1.DomainStatus){
				// Waiting under maxDisruptedDomains: at full health, none allowed.
				"3": func(r *policyv1alpha1.DomainStatus) { r.DisruptionsAllowed = 0 },
				"5": func(r *policyv1alpha1.DomainStatus) { r.DisruptionsAllowed = 0 },
			})
			rows = append(rows,
				policyv1alpha1.DomainStatus{Name: "07", ExpectedPods: 5, CurrentHealthy: 5, DesiredHealthy: 4, DisruptionsAllowed: 1},
				policyv1alpha1.DomainStatus{Name: "shard-b", ExpectedPods: 5, CurrentHealthy: 5, DesiredHealthy: 4, DisruptionsAllowed: 1},
				policyv1alpha1.DomainStatus{Name: "1-2", ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1},
				policyv1alpha1.DomainStatus{Name: "empty", ExpectedPods: 0, CurrentHealthy: 0, DesiredHealthy: 0, DisruptionsAllowed: 0})
			sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
			return rows
		}(),
		wantGroups: []policyv1alpha1.DomainGroup{
			{Count: 1, Names: []string{"empty"}},
			{Count: 2, ExpectedPods: 3, DesiredHealthy: 2, DisruptionsAllowed: 0, Ranges: []string{"3", "5"}},
			{Count: 24, ExpectedPods: 3, DesiredHealthy: 2, DisruptionsAllowed: 1, Ranges: []string{"0-2", "4", "6-24"}, Names: []string{"1-2"}},
			{Count: 2, ExpectedPods: 5, DesiredHealthy: 4, DisruptionsAllowed: 1, Names: []string{"07", "shard-b"}},
		},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			full := policyv1alpha1.TopologyDisruptionBudgetStatus{Domains: tc.rows, DomainCount: int32(len(tc.rows))}
			st := *full.DeepCopy()
			CompactStatus(&st)
			var listed []string
			for _, r := range st.Domains {
				listed = append(listed, r.Name)
			}
			if strings.Join(listed, ",") != strings.Join(tc.wantListed, ",") {
				t.Errorf("listed %v, want %v", listed, tc.wantListed)
			}
			if !equality.Semantic.DeepEqual(st.HealthyDomains, tc.wantGroups) {
				t.Errorf("groups:\n got %+v\nwant %+v", st.HealthyDomains, tc.wantGroups)
			}
			if err := ExpandStatus(&st); err != nil {
				t.Fatalf("ExpandStatus: %v", err)
			}
			if !equality.Semantic.DeepEqual(st, full) {
				t.Errorf("expanded status differs from the original:\n got %+v\nwant %+v", st.Domains, full.Domains)
			}
		})
	}
}

// TestCompactStatusSize: a budget of 300 partitions with four not at full
// health stores a status forty times smaller than one row per
// partition.
func TestCompactStatusSize(t *testing.T) {
	full := policyv1alpha1.TopologyDisruptionBudgetStatus{Domains: partitionRows(300, map[string]func(*policyv1alpha1.DomainStatus){
		"7": degraded, "8": degraded, "150": degraded, "299": degraded,
	})}
	compact := *full.DeepCopy()
	CompactStatus(&compact)
	a, _ := json.Marshal(full)
	b, _ := json.Marshal(compact)
	if len(b) > 1000 || len(b)*40 > len(a) {
		t.Errorf("compact status is %d bytes, one row per partition %d: want at most 1000 and 40x smaller", len(b), len(a))
	}
}

func TestExpandStatusRefusesWhatItCannotRead(t *testing.T) {
	for _, tc := range []struct {
		name  string
		group policyv1alpha1.DomainGroup
		want  string
	}{
		{"reversed range", policyv1alpha1.DomainGroup{Count: 3, Ranges: []string{"5-3"}}, `range "5-3"`},
		{"not integers", policyv1alpha1.DomainGroup{Count: 2, Ranges: []string{"a-b"}}, `range "a-b"`},
		{"leading zero", policyv1alpha1.DomainGroup{Count: 2, Ranges: []string{"01-02"}}, `range "01-02"`},
		{"count disagrees", policyv1alpha1.DomainGroup{Count: 3, Ranges: []string{"0-3"}}, "count is 3, but it names 4 domains"},
		{"listed twice", policyv1alpha1.DomainGroup{Count: 2, Ranges: []string{"1"}, Names: []string{"1"}}, `domain "1" is listed twice`},
		{"too many to unfold", policyv1alpha1.DomainGroup{Count: 1, Ranges: []string{"0-999999999"}}, "more than 100000 domains"},
		{"signed", policyv1alpha1.DomainGroup{Count: 2, Ranges: []string{"+1-+2"}}, `range "+1-+2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := policyv1alpha1.TopologyDisruptionBudgetStatus{
				Domains:        []policyv1alpha1.DomainStatus{{Name: "x", ExpectedPods: 3, CurrentHealthy: 1}},
				HealthyDomains: []policyv1alpha1.DomainGroup{tc.group},
			}
			before := *st.DeepCopy()
			err := ExpandStatus(&st)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ExpandStatus error %v, want one containing %q", err, tc.want)
			}
			if !equality.Semantic.DeepEqual(st, before) {
				t.Errorf("a status that cannot be expanded was changed: %+v", st)
			}
		})
	}
}

// FuzzCompactStatus: whatever the rows, a compacted status expands back to
// exactly the rows it had; it lists only rows not at full health once there
// are more than MaxListedDomains; and its groups count every other row.
func FuzzCompactStatus(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("0123456789abcdefghijklmnopqrstuvwxyz0123456789"))
	f.Add([]byte{30, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 200, 201, 202})
	f.Fuzz(func(t *testing.T, data []byte) {
		seen := map[string]bool{}
		var rows []policyv1alpha1.DomainStatus
		for i, b := range data {
			// Names: integers (some with gaps, some with a leading zero) and
			// words; numbers from the byte's bits.
			name := fmt.Sprint(int(b) % 97)
			switch {
			case b%11 == 0:
				name = "0" + name
			case b%13 == 0:
				name = fmt.Sprintf("zone-%c", 'a'+b%7)
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			expected := int32(b%4) + 1
			r := policyv1alpha1.DomainStatus{Name: name, ExpectedPods: expected, CurrentHealthy: expected, DesiredHealthy: expected - 1, DisruptionsAllowed: 1}
			switch i % 5 {
			case 1:
				r.CurrentHealthy, r.DisruptionsAllowed = expected-1, 0
			case 2:
				r.DisruptionsAllowed = 0
			case 3:
				if b%3 == 0 {
					r.WarmingUp, r.CurrentHealthy = 1, expected-1
				}
			}
			rows = append(rows, r)
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
		full := policyv1alpha1.TopologyDisruptionBudgetStatus{Domains: rows, DomainCount: int32(len(rows))}
		st := *full.DeepCopy()
		CompactStatus(&st)
		if len(rows) <= MaxListedDomains && len(st.HealthyDomains) > 0 {
			t.Fatalf("%d rows were grouped", len(rows))
		}
		counted := len(st.Domains)
		for _, g := range st.HealthyDomains {
			counted += int(g.Count)
		}
		if counted != len(rows) {
			t.Fatalf("listed and grouped %d domains of %d", counted, len(rows))
		}
		if len(rows) > MaxListedDomains {
			for _, r := range st.Domains {
				if atFullHealth(&r) {
					t.Fatalf("row %+v at full health is listed", r)
				}
			}
		}
		if err := ExpandStatus(&st); err != nil {
			t.Fatalf("ExpandStatus: %v", err)
		}
		if !equality.Semantic.DeepEqual(st, full) {
			t.Fatalf("round trip changed the rows:\n got %+v\nwant %+v", st.Domains, full.Domains)
		}
	})
}

// A status computed afresh over a stored one whose groups could not be
// read (or were copied along) stores only what was computed.
func TestCompactStatusReplacesOldGroups(t *testing.T) {
	st := policyv1alpha1.TopologyDisruptionBudgetStatus{
		Domains:        partitionRows(25, nil),
		HealthyDomains: []policyv1alpha1.DomainGroup{{Count: 2, Ranges: []string{"90-91"}}},
	}
	CompactStatus(&st)
	want := []policyv1alpha1.DomainGroup{{Count: 25, ExpectedPods: 3, DesiredHealthy: 2, DisruptionsAllowed: 1, Ranges: []string{"0-24"}}}
	if !equality.Semantic.DeepEqual(st.HealthyDomains, want) || len(st.Domains) != 0 {
		t.Errorf("compacted: domains %+v, groups %+v; want no row and %+v", st.Domains, st.HealthyDomains, want)
	}
	few := policyv1alpha1.TopologyDisruptionBudgetStatus{
		Domains:        partitionRows(3, nil),
		HealthyDomains: []policyv1alpha1.DomainGroup{{Count: 2, Ranges: []string{"90-91"}}},
	}
	CompactStatus(&few)
	if few.HealthyDomains != nil || len(few.Domains) != 3 {
		t.Errorf("compacted 3 rows: domains %+v, groups %+v; want the 3 rows and no group", few.Domains, few.HealthyDomains)
	}
}

// Groups of at most 100,000 domains each still cannot add up to more than
// 100,000 in all: a hand-written status of a few kilobytes must not make
// every replica allocate millions of rows.
func TestExpandStatusBoundsTheTotal(t *testing.T) {
	st := policyv1alpha1.TopologyDisruptionBudgetStatus{}
	for i := 0; i < 20; i++ {
		st.HealthyDomains = append(st.HealthyDomains, policyv1alpha1.DomainGroup{Count: 60000,
			Ranges: []string{fmt.Sprintf("%d-%d", i*60000, i*60000+59999)}})
	}
	err := ExpandStatus(&st)
	if err == nil || !strings.Contains(err.Error(), "more than 100000 domains in all") {
		t.Fatalf("ExpandStatus error %v, want the total refused", err)
	}
	if len(st.Domains) != 0 || len(st.HealthyDomains) != 20 {
		t.Errorf("a status that cannot be expanded was changed")
	}
}

// Names an integer could be mistaken for keep their spelling.
func TestCompactStatusKeepsSignedAndPaddedNames(t *testing.T) {
	rows := partitionRows(22, nil)
	for _, n := range []string{"+5", "-0", "007", "1e3", "12345678901"} {
		rows = append(rows, policyv1alpha1.DomainStatus{Name: n, ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	full := policyv1alpha1.TopologyDisruptionBudgetStatus{Domains: rows}
	st := *full.DeepCopy()
	CompactStatus(&st)
	if g := st.HealthyDomains; len(g) != 1 || strings.Join(g[0].Ranges, ",") != "0-21" || strings.Join(g[0].Names, ",") != "+5,-0,007,12345678901,1e3" {
		t.Errorf("groups %+v; want ranges 0-21 and the other names by name", g)
	}
	if err := ExpandStatus(&st); err != nil || !equality.Semantic.DeepEqual(st, full) {
		t.Errorf("round trip: %v, %+v", err, st.Domains)
	}
}
