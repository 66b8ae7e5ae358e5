//go:build e2e

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

package plugin_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
)

// zoneAtATime: all of a zone's pods may go at once, one zone at a time.
func zoneAtATime(app string) policyv1alpha1.TopologyDisruptionBudgetSpec {
	spec := zoneTDB(app, intstr.FromString("100%"))
	spec.MaxDisruptedDomains = ptr.To[int32](1)
	return spec
}

// waitCanDrain waits until `kubectl tdb can-drain NODES` exits 0 twice in a
// row, half a second apart (the budgets' status has caught up with the
// replacements of the previous wave).
func waitCanDrain(ctx context.Context, nodes []string) {
	args := append(append([]string{"can-drain"}, nodes...), "--ignore-daemonsets", "--delete-emptydir-data")
	Eventually(ctx, func(g Gomega) {
		for range 2 {
			r := tdb(ctx, args...)
			g.Expect(r.Exit).To(Equal(0), "%s", r)
			time.Sleep(500 * time.Millisecond)
		}
	}).WithTimeout(2 * time.Minute).WithPolling(time.Second).Should(Succeed())
}

var _ = Describe("plan", func() {
	DescribeTable("12 nodes in 3 zones, one pod on each, cordoned, a spare node per zone: the plan's waves, drained one after the other with real concurrent kubectl drains, meet no refusal",
		func(ctx SpecContext, name string, spec policyv1alpha1.TopologyDisruptionBudgetSpec, allowed int32, wantWaves int, zoneWaves bool) {
			f := newFixture(ctx, name, 4)
			f.createZoneStatefulSets(ctx, "db", 4)
			f.createDaemonSet(ctx, "agent")
			f.WaitPodsReady(ctx, "db", 12)
			f.WaitPodsReady(ctx, "agent", 12)
			planned := f.AllNodes()
			on := f.PodsByNode(ctx, "db")
			zoneOf := map[string]string{}
			for _, z := range fixture.Zones {
				for _, n := range f.ZoneNodes(z) {
					zoneOf[n] = z
					Expect(on[n]).To(HaveLen(1), "one pod of db on each node: %v", on)
				}
			}
			f.CreateTDB(ctx, "db", spec)
			f.waitDomains(ctx, "db", allZones(dom{4, 4, allowed}))

			By("cordoning the 12 planned nodes, then adding a spare node per zone for the replacements")
			r := kubectl(ctx, append([]string{"cordon"}, planned...)...)
			Expect(r.Exit).To(Equal(0), "%s", r)
			f.AddNodes(ctx, 1)
			f.WaitPodsReady(ctx, "agent", 15)

			By("kubectl tdb plan")
			r = tdb(ctx, append(append([]string{"plan"}, planned...), "--ignore-daemonsets", "--delete-emptydir-data", "-o", "json")...)
			Expect(r.Exit).To(Equal(0), "%s", r)
			plan := decode[drainPlan](r, "DrainPlan")
			Expect(plan.Blocked).To(BeEmpty(), "%s", r)
			var waves []string
			var all []string
			for _, w := range plan.Waves {
				waves = append(waves, fmt.Sprint(w.Nodes))
				all = append(all, w.Nodes...)
			}
			GinkgoWriter.Printf("plan: %d waves: %s\n", len(plan.Waves), strings.Join(waves, " "))
			Expect(all).To(ConsistOf(planned), "every planned node in exactly one wave:\n%s", r)
			Expect(len(plan.Waves)).To(BeNumerically("<=", len(planned)), "%s", r)
			Expect(plan.Waves).To(HaveLen(wantWaves), "the fewest waves possible:\n%s", r)
			seenZones := map[string]bool{}
			for i, w := range plan.Waves {
				inWave := map[string]int{}
				for _, n := range w.Nodes {
					inWave[zoneOf[n]]++
				}
				if zoneWaves {
					Expect(inWave).To(HaveLen(1), "wave %d holds one zone's nodes:\n%s", i+1, r)
					for z, n := range inWave {
						Expect(n).To(Equal(4), "wave %d holds all of %s:\n%s", i+1, z, r)
						Expect(seenZones[z]).To(BeFalse(), "%s in two waves:\n%s", z, r)
						seenZones[z] = true
					}
				} else {
					Expect(inWave).To(Equal(map[string]int{"zone-a": 1, "zone-b": 1, "zone-c": 1}), "wave %d holds one node per zone:\n%s", i+1, r)
				}
				Expect(w.Pods).To(Equal(len(w.Nodes)), "wave %d: one db pod per node (DaemonSet pods ignored):\n%s", i+1, r)
			}

			var drained []string
			for i, w := range plan.Waves {
				By(fmt.Sprintf("wave %d of %d: can-drain exits 0, then %d kubectl drains at once: %v", i+1, len(plan.Waves), len(w.Nodes), w.Nodes))
				waitCanDrain(ctx, w.Nodes)
				results := drainAll(ctx, w.Nodes)
				var refusals []string
				for _, res := range results {
					Expect(res.Exit).To(Equal(0), "kubectl drain %s:\n%s", res.Node, res.cmdResult)
					Expect(res.Stdout).To(ContainSubstring("evicting pod %s/%s\n", f.NS, on[res.Node][0]), "kubectl drain %s did not evict its pod:\n%s", res.Node, res.cmdResult)
					refusals = append(refusals, res.Refusals()...)
				}
				Expect(refusals).To(BeEmpty(), "wave %d met refusals", i+1)
				drained = append(drained, w.Nodes...)
				f.WaitPodsReady(ctx, "db", 12, drained...)
			}
			f.waitDomains(ctx, "db", allZones(dom{4, 4, allowed}))
		},
		Entry("maxUnavailable 1 per zone: 4 waves of one node per zone", SpecTimeout(4*time.Minute),
			"plan-one", zoneTDB("db", intstr.FromInt32(1)), int32(1), 4, false),
		Entry("maxUnavailable 100% and maxDisruptedDomains 1: 3 waves, a zone at a time", SpecTimeout(4*time.Minute),
			"plan-zone", zoneAtATime("db"), int32(4), 3, true),
	)
})
