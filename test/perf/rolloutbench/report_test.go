//go:build perf

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

package rolloutbench

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// report prints the table, the ratios and the verdicts, and returns the exit
// code.
func report(results []*result) int {
	fmt.Println("\n== results (24 pods, 3 zones, pods Ready 2 s after scheduling; per pod = divided by the pods updated)")
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "ROUND\tCASE\tUPDATE\tWALL\tPODS\tMAX UNAVAIL a/b/c\tOVERALL\tZONES\tMOVED\tBOUND\tEXCEEDED\tUPDATED\tWRITES/POD\tEVICT/POD\t429s\tLOAD")
	code := 0
	for _, r := range results {
		if r.err != nil {
			_, _ = fmt.Fprintf(tw, "%d\t%s\t%s\terror: %v\n", r.round, r.c.id, r.c.title, r.err)
			code = 1
			continue
		}
		exceeded := "no"
		if !r.c.bounded {
			exceeded = "-"
		}
		if r.exceeded() {
			exceeded = "YES"
			code = 1
		}
		if r.premature != "" || r.moved > 0 {
			code = 1
		}
		perPod := func(v float64) string {
			if r.updated == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.2f", v/float64(r.updated))
		}
		_, _ = fmt.Fprintf(tw, "%d\t%s\t%s\t%.1fs\t%.1fs\t%d/%d/%d\t%d\t%d\t%d\t%s\t%s\t%d\t%s\t%s\t%d\t%s\n",
			r.round, r.c.id, r.c.title, r.wall.Seconds(), r.pods.Seconds(),
			r.maxPerZone["zone-a"], r.maxPerZone["zone-b"], r.maxPerZone["zone-c"], r.maxOverall, r.maxZones, r.moved,
			r.c.bound, exceeded, r.updated, perPod(r.operator.writes()), perPod(r.evictions()), int(r.operator.byCode("429")), r.load)
	}
	_ = tw.Flush()
	fmt.Println("WALL: template change -> completion signal (a: StatefulSet status; b, c: RolloutComplete True). PODS: -> all 24 pods seen updated and Ready.")
	fmt.Println("MOVED: pods whose zone changed. WRITES: the operator's POST/PUT/PATCH/DELETE (status writes, evictions, events; webhook included).")
	fmt.Println("EVICT: evictions the kube-apiserver granted. 429s: the operator's requests answered 429. LOAD: 1-min load average after the case (2 cores, shared).")

	fmt.Println("\noperator requests (METHOD/code), webhook decisions, apiserver evictions by code, operator log:")
	for _, r := range results {
		if r.err != nil && r.operator.requests == nil {
			continue
		}
		fmt.Printf("  round %d, %s: requests: %s\n", r.round, r.c.id, counts(r.operator.requests))
		fmt.Printf("     writes %d (%s)\n", int(r.operator.writes()), writesByMethod(r.operator))
		fmt.Printf("     webhook decisions: %s; rollout driver evictions: %s\n", counts(r.operator.webhook), counts(r.operator.rollout))
		conflicts, all := r.operator.statusConflicts()
		fmt.Printf("     status writes by writer/result: %s; conflicts %d of %d (%s)\n",
			counts(r.operator.statusWrites), int(conflicts), int(all), percent(conflicts, all))
		fmt.Printf("     apiserver pods/eviction: %s\n", counts(r.apiserver))
		fmt.Printf("     mean reconcile: status %s, rollout %s; mean wait in queue: status %s, rollout %s; webhook allowed %s\n",
			r.operator.mean("reconcile topologydisruptionbudget"), r.operator.mean("reconcile rollout"),
			r.operator.mean("queue topologydisruptionbudget"), r.operator.mean("queue rollout"), r.operator.mean("webhook allowed"))
		fmt.Printf("     watcher: %d samples, %d errors; operator log: %d lines, %d error lines\n",
			r.samples, r.sampleErrs, r.logLines, total(r.logErrors))
		for _, k := range sortedKeys(r.logErrors) {
			fmt.Printf("       %dx %s\n", r.logErrors[k], k)
		}
	}

	var conflicts, all float64
	for _, r := range results {
		c, a := r.operator.statusConflicts()
		conflicts, all = conflicts+c, all+a
	}
	fmt.Printf("\nstatus-write conflicts (409) over every case: %d of %d status writes (%s; target <= 5%%)\n",
		int(conflicts), int(all), percent(conflicts, all))

	fmt.Println()
	// Ratios within each round (its cases ran minutes apart, on the same
	// machine), then their median: the verdict.
	ratio := func(num, den, target string, want float64) {
		var per []float64
		var parts []string
		for round := 1; ; round++ {
			var a, b *result
			found := false
			for _, r := range results {
				if r.round != round {
					continue
				}
				found = true
				switch r.c.id {
				case num:
					a = r
				case den:
					b = r
				}
			}
			if !found {
				break
			}
			if a == nil || b == nil || a.err != nil || b.err != nil || b.wall <= 0 {
				parts = append(parts, fmt.Sprintf("round %d n/a", round))
				continue
			}
			got := a.wall.Seconds() / b.wall.Seconds()
			per = append(per, got)
			parts = append(parts, fmt.Sprintf("round %d %.1fs/%.1fs = %.2fx", round, a.wall.Seconds(), b.wall.Seconds(), got))
		}
		if len(per) == 0 {
			fmt.Printf("%s/%s: n/a\n", num, den)
			return
		}
		sort.Float64s(per)
		med := per[len(per)/2]
		if len(per)%2 == 0 {
			med = (per[len(per)/2-1] + per[len(per)/2]) / 2
		}
		verdict := ""
		if want > 0 {
			verdict = ": MET"
			if med < want {
				verdict = ": MISS"
			}
		}
		fmt.Printf("%s/%s: %s; median %.2fx (target %s)%s\n", num, den, strings.Join(parts, ", "), med, target, verdict)
	}
	ratio("a", "b", ">= 4x", 4)
	ratio("a", "c", "none", 0)
	fmt.Println()
	ok := true
	for _, r := range results {
		switch {
		case r.err != nil:
			ok = false
			fmt.Printf("round %d, case %s: ERROR: %v\n", r.round, r.c.id, r.err)
		case r.exceeded():
			ok = false
			fmt.Printf("round %d, case %s: BUDGET EXCEEDED (%s): max unavailable %s, zones at once %d\n", r.round, r.c.id, r.c.bound, kwokenv.ZoneList(r.maxPerZone), r.maxZones)
		}
		if r.err == nil && r.moved > 0 {
			ok = false
			fmt.Printf("round %d, case %s: %d pod(s) changed zone although their volumes pin them: the per-zone figures are not comparable\n", r.round, r.c.id, r.moved)
		}
		if r.premature != "" {
			ok = false
			fmt.Printf("round %d, case %s: RolloutComplete came before the pods were done: %s\n", r.round, r.c.id, r.premature)
		}
	}
	if ok {
		fmt.Println("every update completed, every budget held")
	}
	return code
}

func writesByMethod(s requestStats) string {
	by := map[string]float64{}
	for _, m := range writeMethods {
		for k, v := range s.requests {
			if len(k) > len(m) && k[:len(m)+1] == m+"/" {
				by[m] += v
			}
		}
	}
	return counts(by)
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// percent formats part/whole as a percentage, "-" for nothing.
func percent(part, whole float64) string {
	if whole == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*part/whole)
}
