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
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
)

const (
	kindTDB = "TopologyDisruptionBudget"
	kindPDB = "PodDisruptionBudget"
	// coveredLabel marks the nodes a nodeSelectorTerm budget covers.
	coveredLabel = "e2e.tdb.dev/covered"
)

// webFixture: 2 nodes per zone, a StatefulSet "web" of 3 pods per zone
// (2 on one node, 1 on the other), Ready.
func webFixture(ctx context.Context, name string) *pool {
	f := newFixture(ctx, name, 2)
	f.createZoneStatefulSets(ctx, "web", 3)
	f.WaitPodsReady(ctx, "web", 9)
	return f
}

// kindsOf are the kinds of the budgets in refs, sorted, once each.
func kindsOf[T budgetRef | budgetNumbers](refs []T) []string {
	seen := map[string]bool{}
	for _, r := range refs {
		switch r := any(r).(type) {
		case budgetRef:
			seen[r.Kind] = true
		case budgetNumbers:
			seen[r.Kind] = true
		}
	}
	return keys(seen)
}

var _ = Describe("can-drain and why agree with the API server's dry-run evictions", func() {
	It("a TDB per zone (maxUnavailable 1): pods that may go alone but not together, then one zone short by an unready pod and another by two; DaemonSet pods left out as by kubectl drain",
		SpecTimeout(4*time.Minute), func(ctx SpecContext) {
			f := webFixture(ctx, "zones")
			f.createDaemonSet(ctx, "agent")
			f.WaitPodsReady(ctx, "agent", 6)
			f.CreateTDB(ctx, "web", zoneTDB("web", intstr.FromInt32(1)))
			f.waitDomains(ctx, "web", allZones(dom{3, 3, 1}))

			By("a zone-a node with 2 pods: each may go alone, not both (zone-a allows 1)")
			two, twoPods := f.nodeWith(ctx, "web", "zone-a", 2)
			dc, _ := f.expectAgreement(ctx, []string{two})
			Expect(dc.Pods).To(HaveLen(2))
			for _, p := range dc.Pods {
				Expect(p.EvictableNow).To(BeTrue(), "%s", p)
			}
			Expect(dc.AllowedTogether).To(BeFalse(), "2 pods of zone-a under maxUnavailable 1 cannot go together")
			Expect(dc.Together.BlockedBy).To(ContainElement(And(HaveField("Kind", kindTDB), HaveField("Name", "web"), HaveField("Domain", "zone-a"))),
				"together.blockedBy should name zone-a of budget web: %v", dc.Together.BlockedBy)
			expectVerify(ctx, []string{two}, 1)

			By("the zone-a node with 1 pod, and with it the zone-b node with 1 pod: all can go (exit 0)")
			oneA, _ := f.nodeWith(ctx, "web", "zone-a", 1)
			dc, _ = f.expectAgreement(ctx, []string{oneA})
			Expect(dc.AllowedTogether).To(BeTrue(), "one pod of zone-a, which allows 1")
			expectVerify(ctx, []string{oneA}, 0)
			oneB, _ := f.nodeWith(ctx, "web", "zone-b", 1)
			dc, _ = f.expectAgreement(ctx, []string{oneA, oneB})
			Expect(dc.AllowedTogether).To(BeTrue(), "one pod of zone-a and one of zone-b, each zone allows 1")
			expectVerify(ctx, []string{oneA, oneB}, 0)

			By("the real thing: of the 2 pods on " + two + ", evicted one after the other, the second is refused")
			Expect(f.Evict(ctx, twoPods[0])).To(Succeed())
			err := f.Evict(ctx, twoPods[1])
			Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "second eviction in zone-a: want 429, got %v", err)
			f.WaitPodsReady(ctx, "web", 9)
			f.waitDomains(ctx, "web", allZones(dom{3, 3, 1}))

			By("zone-b one short (an unready pod), zone-c two short (two unready pods)")
			f.setReady(ctx, "web-zone-b-0", false)
			f.setReady(ctx, "web-zone-c-0", false)
			f.setReady(ctx, "web-zone-c-1", false)
			f.waitDomains(ctx, "web", map[string]dom{"zone-a": {3, 3, 1}, "zone-b": {2, 3, 0}, "zone-c": {1, 3, 0}})
			_, dry := f.expectAgreement(ctx, f.AllNodes())
			expectMixed(dry)
			expectVerify(ctx, f.AllNodes(), 1)

			By("why: a Ready pod of zone-b is refused (exit 1) and the hints name zone-b")
			ec := f.expectWhy(ctx, "web-zone-b-1")
			Expect(ec.EvictableNow).To(BeFalse(), "zone-b allows nothing")
			Expect(ec.Hints).NotTo(BeEmpty())
			Expect(strings.Join(ec.Hints, "\n")).To(ContainSubstring("zone-b"), "hints of a pod refused in zone-b")
			for _, p := range []string{"web-zone-b-0", "web-zone-c-0", "web-zone-c-2", "web-zone-a-0"} {
				f.expectWhy(ctx, p)
			}

			By("plan over zone-c's nodes: nothing there can go, exit 1 and the nodes blocked")
			zoneC := f.ZoneNodes("zone-c")
			r := tdb(ctx, append(append([]string{"plan"}, zoneC...), "--ignore-daemonsets", "-o", "json")...)
			Expect(r.Exit).To(Equal(1), "%s", r)
			plan := decode[drainPlan](r, "DrainPlan")
			var blocked []string
			for _, b := range plan.Blocked {
				blocked = append(blocked, b.Node)
				Expect(b.BlockedBy).NotTo(BeEmpty(), "%s", r)
			}
			Expect(blocked).To(ConsistOf(zoneC), "%s", r)
			Expect(plan.Waves).To(BeEmpty(), "%s", r)

			By("status -A")
			f.expectStatus(ctx)

			By("without --ignore-daemonsets drain would refuse to start: drainErrors name the DaemonSet pod, exit 1")
			agents := f.PodsByNode(ctx, "agent")[oneA]
			Expect(agents).To(HaveLen(1))
			r = tdb(ctx, "can-drain", oneA, "-o", "json")
			Expect(r.Exit).To(Equal(1), "%s", r)
			noIgnore := decode[drainCheck](r, "DrainCheck")
			Expect(noIgnore.DrainErrors).NotTo(BeEmpty(), "%s", r)
			Expect(strings.Join(noIgnore.DrainErrors, "\n")).To(ContainSubstring(agents[0]), "%s", r)
			dd := drainDryRun(ctx, []string{oneA})
			Expect(dd.Evicting).To(BeEmpty(), "kubectl drain without --ignore-daemonsets evicted:\n%s", dd.Output)
			Expect(dd.Output).To(ContainSubstring("DaemonSet-managed"))
		})

	It("maxDisruptedDomains 1: pods of two zones may each go alone, not together; with zone-b disrupted nothing else may go",
		SpecTimeout(3*time.Minute), func(ctx SpecContext) {
			f := webFixture(ctx, "mdd")
			spec := zoneTDB("web", intstr.FromInt32(1))
			spec.MaxDisruptedDomains = ptr.To[int32](1)
			f.CreateTDB(ctx, "web", spec)
			f.waitDomains(ctx, "web", allZones(dom{3, 3, 1}))

			By("the 1-pod nodes of zone-a and zone-b")
			oneA, _ := f.nodeWith(ctx, "web", "zone-a", 1)
			oneB, _ := f.nodeWith(ctx, "web", "zone-b", 1)
			dc, _ := f.expectAgreement(ctx, []string{oneA, oneB})
			for _, p := range dc.Pods {
				Expect(p.EvictableNow).To(BeTrue(), "%s", p)
			}
			Expect(dc.AllowedTogether).To(BeFalse(), "two zones at once under maxDisruptedDomains 1")
			Expect(dc.Together.BlockedBy).NotTo(BeEmpty())

			By("zone-b disrupted by an unready pod")
			f.setReady(ctx, "web-zone-b-0", false)
			f.waitDomains(ctx, "web", map[string]dom{"zone-a": {3, 3, 0}, "zone-b": {2, 3, 0}, "zone-c": {3, 3, 0}})
			_, dry := f.expectAgreement(ctx, f.AllNodes())
			expectMixed(dry)
			expectVerify(ctx, f.AllNodes(), 1)
			ec := f.expectWhy(ctx, "web-zone-a-0")
			Expect(ec.EvictableNow).To(BeFalse(), "zone-b is disrupted and maxDisruptedDomains is 1")
			Expect(strings.Join(ec.Hints, "\n")).To(MatchRegexp(`zone-[ab]`), "hints of a pod refused under maxDisruptedDomains")
			f.expectStatus(ctx)
		})

	It("a TDB with a nodeSelectorTerm covers only the pods on its nodes",
		SpecTimeout(3*time.Minute), func(ctx SpecContext) {
			f := webFixture(ctx, "term")
			covered := map[string]bool{}
			for _, z := range fixture.Zones {
				n, _ := f.nodeWith(ctx, "web", z, 2)
				labelNodes(ctx, coveredLabel, "true", n)
				covered[n] = true
			}
			spec := zoneTDB("web", intstr.FromInt32(1))
			spec.NodeSelectorTerm = &policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
				{Key: coveredLabel, Operator: "In", Values: []string{"true"}},
			}}
			f.CreateTDB(ctx, "web", spec)
			f.waitDomains(ctx, "web", allZones(dom{2, 2, 1}))

			By("an unready pod on zone-b's covered node (zone-b short), one on zone-a's uncovered node (no budget counts it)")
			coveredB, bPods := f.nodeWith(ctx, "web", "zone-b", 2)
			_, aPods := f.nodeWith(ctx, "web", "zone-a", 1)
			f.setReady(ctx, bPods[0], false)
			f.setReady(ctx, aPods[0], false)
			f.waitDomains(ctx, "web", map[string]dom{"zone-a": {2, 2, 1}, "zone-b": {1, 2, 0}, "zone-c": {2, 2, 1}})
			dc, dry := f.expectAgreement(ctx, f.AllNodes())
			expectMixed(dry)
			for _, p := range dc.Pods {
				var named []string
				for _, b := range p.Budgets {
					if b.Kind == kindTDB {
						named = append(named, b.Name)
					}
				}
				if covered[p.Node] {
					Expect(named).To(ContainElement("web"), "pod on covered node %s: %s", p.Node, p)
				} else {
					Expect(named).NotTo(ContainElement("web"), "pod on uncovered node %s: %s", p.Node, p)
					Expect(kindsOf(p.BlockedBy)).NotTo(ContainElement(kindTDB), "pod on uncovered node %s: %s", p.Node, p)
				}
			}
			expectVerify(ctx, f.AllNodes(), 1)
			Expect(f.expectWhy(ctx, bPods[1]).EvictableNow).To(BeFalse(), "a Ready pod on %s, zone-b allows nothing", coveredB)
			f.expectWhy(ctx, aPods[0])
			f.expectStatus(ctx)
		})

	It("a policy/v1 PDB and a TDB over the same pods: the PDB refusing what the TDB allows, then the TDB refusing what the PDB allows",
		SpecTimeout(3*time.Minute), func(ctx SpecContext) {
			f := webFixture(ctx, "pdb")
			f.CreateTDB(ctx, "web", zoneTDB("web", intstr.FromInt32(1)))
			f.CreatePDB(ctx, "web", "web", 0)
			f.waitDomains(ctx, "web", allZones(dom{3, 3, 1}))
			f.WaitPDB(ctx, "web", 9, 9, 0)

			By("PDB maxUnavailable 0, TDB allows 1 per zone: every pod refused, by the PDB alone")
			dc, dry := f.expectAgreement(ctx, f.AllNodes())
			for _, p := range dc.Pods {
				Expect(dry[p.key()]).To(BeFalse(), "the PDB allows nothing, yet the server allowed %s", p.key())
				Expect(kindsOf(p.BlockedBy)).To(Equal([]string{kindPDB}), "%s", p)
				Expect(kindsOf(p.Budgets)).To(Equal([]string{kindPDB, kindTDB}), "budgets covering %s", p)
			}
			ec := f.expectWhy(ctx, "web-zone-a-0")
			Expect(kindsOf(ec.BlockedBy)).To(Equal([]string{kindPDB}))

			By("PDB maxUnavailable 2 and zone-b short: zone-b's Ready pods refused, by the TDB alone")
			var pdb policyv1.PodDisruptionBudget
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: "web"}, &pdb)).To(Succeed())
			patch := client.MergeFrom(pdb.DeepCopy())
			pdb.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(2))
			Expect(k8s.Patch(ctx, &pdb, patch)).To(Succeed())
			f.setReady(ctx, "web-zone-b-0", false)
			f.WaitPDB(ctx, "web", 9, 8, 1)
			f.waitDomains(ctx, "web", map[string]dom{"zone-a": {3, 3, 1}, "zone-b": {2, 3, 0}, "zone-c": {3, 3, 1}})
			dc, dry = f.expectAgreement(ctx, f.AllNodes())
			expectMixed(dry)
			for _, p := range dc.Pods {
				if !p.EvictableNow {
					Expect(kindsOf(p.BlockedBy)).To(Equal([]string{kindTDB}), "%s", p)
				}
			}
			Expect(f.expectWhy(ctx, "web-zone-b-1").EvictableNow).To(BeFalse())
			f.expectWhy(ctx, "web-zone-b-0")
			expectVerify(ctx, f.AllNodes(), 1)
			f.expectStatus(ctx)
		})
})
