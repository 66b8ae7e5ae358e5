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
	"sort"
	"strconv"
	"strings"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// A budget over hundreds of partitions would carry a row per partition in
// its status, written on every eviction. The status as stored is compact:
// beyond MaxListedDomains domains, status.domains lists only the domains
// not at full health and status.healthyDomains groups the others by their
// numbers, naming runs of integer domains as ranges ("0-299"). Compaction
// loses nothing: ExpandStatus gives back every row, and the operator works
// on the expanded rows only. The writer compacts what it sends
// (budgetstatus.Writer.Put); the cache, the plugin and a live re-read
// expand what they receive, so no decision ever sees a compact status.

// MaxListedDomains is the most domains status.domains lists in full; a
// budget with more lists only those not at full health.
const MaxListedDomains = 20

// atFullHealth says whether row may be written in a group: every expected
// pod healthy, none warming up, not blocked.
func atFullHealth(row *policyv1alpha1.DomainStatus) bool {
	return row.CurrentHealthy == row.ExpectedPods && row.WarmingUp == 0 && row.BlockedSince == nil
}

// ListedDomains are the rows a stored status lists in status.domains: all
// of them up to MaxListedDomains, beyond only those not at full health.
func ListedDomains(rows []policyv1alpha1.DomainStatus) []policyv1alpha1.DomainStatus {
	if len(rows) <= MaxListedDomains {
		return rows
	}
	var listed []policyv1alpha1.DomainStatus
	for i := range rows {
		if !atFullHealth(&rows[i]) {
			listed = append(listed, rows[i])
		}
	}
	return listed
}

type groupKey struct{ expected, desired, allowed int32 }

// CompactStatus writes st as stored: with more than MaxListedDomains rows,
// the rows at full health move to st.HealthyDomains. st.Domains must be
// every row (an expanded status): groups st already has are replaced, never
// trusted, so a status computed afresh over a stale or unreadable one
// stores only what was computed.
func CompactStatus(st *policyv1alpha1.TopologyDisruptionBudgetStatus) {
	st.HealthyDomains = nil
	if len(st.Domains) <= MaxListedDomains {
		return
	}
	listed := make([]policyv1alpha1.DomainStatus, 0, len(st.Domains)/4)
	byKey := map[groupKey][]string{}
	var keys []groupKey
	for i := range st.Domains {
		row := &st.Domains[i]
		if !atFullHealth(row) {
			listed = append(listed, *row)
			continue
		}
		k := groupKey{row.ExpectedPods, row.DesiredHealthy, row.DisruptionsAllowed}
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], row.Name)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.expected != b.expected {
			return a.expected < b.expected
		}
		if a.desired != b.desired {
			return a.desired < b.desired
		}
		return a.allowed < b.allowed
	})
	var groups []policyv1alpha1.DomainGroup
	for _, k := range keys {
		names := byKey[k]
		g := policyv1alpha1.DomainGroup{Count: int32(len(names)), ExpectedPods: k.expected, DesiredHealthy: k.desired, DisruptionsAllowed: k.allowed}
		g.Ranges, g.Names = rangesOf(names)
		groups = append(groups, g)
	}
	st.Domains, st.HealthyDomains = listed, groups
}

// ExpandStatus gives back every row of a stored status: the groups of
// st.HealthyDomains become rows again, merged into st.Domains by name. A
// status without groups is left as it is. An unreadable group (a malformed
// range, a count that disagrees, more than MaxExpandedDomains domains in
// all) is an error, and st is left as it is.
func ExpandStatus(st *policyv1alpha1.TopologyDisruptionBudgetStatus) error {
	if len(st.HealthyDomains) == 0 {
		return nil
	}
	// Count before unfolding anything: a hand-written status must not make
	// a reader allocate without end.
	total := len(st.Domains)
	for i, g := range st.HealthyDomains {
		n, err := countOf(g)
		if err != nil {
			return fmt.Errorf("status.healthyDomains[%d]: %w", i, err)
		}
		if int64(n) != int64(g.Count) {
			return fmt.Errorf("status.healthyDomains[%d]: count is %d, but it names %d domains", i, g.Count, n)
		}
		if total += n; total > MaxExpandedDomains {
			return fmt.Errorf("status.healthyDomains: more than %d domains in all", MaxExpandedDomains)
		}
	}
	rows := make([]policyv1alpha1.DomainStatus, 0, total)
	rows = append(rows, st.Domains...)
	listed := make(map[string]bool, total)
	for _, r := range st.Domains {
		listed[r.Name] = true
	}
	for i, g := range st.HealthyDomains {
		for _, n := range namesOf(g) {
			if listed[n] {
				return fmt.Errorf("status.healthyDomains[%d]: domain %q is listed twice", i, n)
			}
			listed[n] = true
			rows = append(rows, policyv1alpha1.DomainStatus{Name: n, ExpectedPods: g.ExpectedPods, CurrentHealthy: g.ExpectedPods,
				DesiredHealthy: g.DesiredHealthy, DisruptionsAllowed: g.DisruptionsAllowed})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].Name < rows[j].Name })
	st.Domains, st.HealthyDomains = rows, nil
	return nil
}

// integerName is n's value when n is an integer written the one way
// strconv.Itoa writes it (no sign, no leading zero), small enough that a
// range of them stays readable.
func integerName(n string) (int, bool) {
	if len(n) == 0 || len(n) > 9 || (len(n) > 1 && n[0] == '0') {
		return 0, false
	}
	v := 0
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return 0, false
		}
		v = v*10 + int(n[i]-'0')
	}
	return v, true
}

// rangesOf splits names into runs of consecutive integer names ("3-7", or
// "3" alone) and the other names, both sorted.
func rangesOf(names []string) (ranges, others []string) {
	var ints []int
	for _, n := range names {
		if v, ok := integerName(n); ok {
			ints = append(ints, v)
		} else {
			others = append(others, n)
		}
	}
	sort.Ints(ints)
	sort.Strings(others)
	for i := 0; i < len(ints); {
		j := i
		for j+1 < len(ints) && ints[j+1] == ints[j]+1 {
			j++
		}
		if i == j {
			ranges = append(ranges, strconv.Itoa(ints[i]))
		} else {
			ranges = append(ranges, strconv.Itoa(ints[i])+"-"+strconv.Itoa(ints[j]))
		}
		i = j + 1
	}
	return ranges, others
}

// MaxExpandedDomains bounds the domains a stored status may unfold to, so
// that a hand-written range ("0-999999999") cannot make a reader allocate
// without end.
const MaxExpandedDomains = 100000

// parseRange reads a range of g.Ranges: "first-last" or "n".
func parseRange(r string) (lo, hi int, err error) {
	first, last, ok := strings.Cut(r, "-")
	if !ok {
		last = first
	}
	lo, okLo := integerName(first)
	hi, okHi := integerName(last)
	if !okLo || !okHi || hi < lo {
		return 0, 0, fmt.Errorf("range %q is not \"first-last\" with integers first <= last", r)
	}
	return lo, hi, nil
}

// countOf is how many domains g names, without unfolding its ranges.
func countOf(g policyv1alpha1.DomainGroup) (int, error) {
	n := len(g.Names)
	for _, r := range g.Ranges {
		lo, hi, err := parseRange(r)
		if err != nil {
			return 0, err
		}
		if n += hi - lo + 1; n > MaxExpandedDomains {
			return 0, fmt.Errorf("more than %d domains in one group", MaxExpandedDomains)
		}
	}
	return n, nil
}

// namesOf lists the domains of g, whose ranges countOf read: its ranges
// unfolded, then its names.
func namesOf(g policyv1alpha1.DomainGroup) []string {
	out := make([]string, 0, int(g.Count))
	for _, r := range g.Ranges {
		lo, hi, _ := parseRange(r)
		for v := lo; v <= hi; v++ {
			out = append(out, strconv.Itoa(v))
		}
	}
	return append(out, g.Names...)
}
