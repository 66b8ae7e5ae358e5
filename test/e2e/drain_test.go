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

package e2e_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

var _ = Describe("Concurrent node drains", func() {
	DescribeTable("every node drained at once (one kubectl drain per node) while new nodes are added",
		func(ctx SpecContext, name string, maxDisruptedDomains *int32) {
			f := newFixture(ctx, name, 4)
			f.createStatefulSets(ctx, "ingester", 4, nil)
			f.WaitPodsReady(ctx, "ingester", 12)
			spec := tdbSpec("ingester")
			spec.TopologyKey = kwokenv.ZoneKey
			spec.MaxDisruptedDomains = maxDisruptedDomains
			f.CreateTDB(ctx, "ingesters", spec)
			// One per zone; one zone at a time allows 1 together.
			allowed := int32(3)
			if maxDisruptedDomains != nil {
				allowed = *maxDisruptedDomains
			}
			f.waitTDB(ctx, "ingesters", tdbWant{Expected: 12, Healthy: 12, Allowed: allowed, Domains: fixture.Zones})

			w := f.watch("ingester", f.statefulSetsExpected("ingester"))
			nodes := f.AllNodes()
			Expect(nodes).To(HaveLen(12))
			By(fmt.Sprintf("starting %d kubectl drain processes at once", len(nodes)))
			ch := startDrains(ctx, nodes, 5*time.Minute)
			time.Sleep(3 * time.Second)
			By("adding 2 nodes per zone while the drains run")
			f.AddNodes(ctx, 2)
			start := time.Now()
			refusals := expectDrained(collect(ch, len(nodes), 6*time.Minute))
			GinkgoWriter.Printf("all %d drains done %s after the new nodes came; %d refusals (429) retried\n", len(nodes), time.Since(start).Round(time.Second), refusals)
			f.WaitPodsReady(ctx, "ingester", 12, nodes...)
			f.waitTDB(ctx, "ingesters", tdbWant{Expected: 12, Healthy: 12, Allowed: allowed, Domains: fixture.Zones})

			rep := w.Stop()
			maxZones := -1
			if maxDisruptedDomains != nil {
				maxZones = int(*maxDisruptedDomains)
			}
			expectHeld(rep, 1, maxZones, -1)
			for _, z := range fixture.Zones {
				Expect(rep.MaxZone[z]).To(Equal(1), "zone %s was never disrupted: %s", z, rep)
			}
			Expect(refusals).To(BeNumerically(">=", 3), "evictions beyond the budget should have been refused (429)")
		},
		Entry("maxUnavailable 1 per zone: never more than 1 pod unavailable in a zone", SpecTimeout(8*time.Minute), "drainall", nil),
		Entry("maxUnavailable 1 per zone and maxDisruptedDomains 1: also never more than 1 zone disrupted at a time", SpecTimeout(8*time.Minute), "drainall-mdd", ptr.To[int32](1)),
	)

	It("a TDB (1 per zone) and a policy/v1 PDB (2 overall) over the same pods: both hold during a concurrent drain, and the drains complete",
		SpecTimeout(6*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "pdb", 2)
			f.zonedWeb(ctx, nil)
			f.CreatePDB(ctx, "web", "web", 2)
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 3, Domains: fixture.Zones})
			f.WaitPDB(ctx, "web", 9, 9, 2)

			orig := f.AllNodes()
			f.AddNodes(ctx, 1)
			w := f.watch("web", f.statefulSetsExpected("web"))
			By(fmt.Sprintf("draining the %d original nodes at once", len(orig)))
			results := collect(startDrains(ctx, orig, 4*time.Minute), len(orig), 5*time.Minute)
			expectDrained(results)
			tdbRefusals, pdbRefusals := 0, 0
			for _, r := range results {
				for _, line := range strings.Split(r.Output, "\n") {
					switch {
					case !strings.Contains(line, "will retry after"):
					case strings.Contains(line, "topology disruption budget"):
						tdbRefusals++
					case strings.Contains(line, "disruption budget"):
						pdbRefusals++
					}
				}
			}
			GinkgoWriter.Printf("refusals retried by kubectl drain: %d by the TDB, %d by the PDB\n", tdbRefusals, pdbRefusals)
			f.WaitPodsReady(ctx, "web", 9, orig...)
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 3, Domains: fixture.Zones})
			f.WaitPDB(ctx, "web", 9, 9, 2)

			rep := w.Stop()
			expectHeld(rep, 1, -1, 2)
			Expect(tdbRefusals+pdbRefusals).To(BeNumerically(">=", 1), "6 concurrent drains should have met a budget")
		})

	It("kubectl drain --dry-run=server consumes no budget: the TDB status is unchanged and the allowance is still there afterwards",
		SpecTimeout(4*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "dryrun", 2)
			f.zonedWeb(ctx, nil)
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 3, Domains: fixture.Zones})
			// Let the status settle, then take it as the reference.
			time.Sleep(2 * time.Second)
			before := f.getTDB(ctx, "web")
			node, pods := f.busiestNode(ctx, "web", "zone-a")
			Expect(len(pods)).To(BeNumerically(">=", 2), "a node with 2 pods of zone-a: a spent allowance would refuse the second")
			uids := map[string]types.UID{}
			for _, p := range f.Pods(ctx, "web") {
				uids[p.Name] = p.UID
			}
			w := f.watch("web", f.statefulSetsExpected("web"))

			By("kubectl drain --dry-run=server of a zone-a node with " + fmt.Sprint(len(pods)) + " pods (zone-a allows 1)")
			r := drain(ctx, node, time.Minute, "--dry-run=server")
			Expect(r.Err).NotTo(HaveOccurred(), "%s", r)
			Expect(r.Refusals()).To(Equal(0), "a dry run was refused: was an earlier dry run charged? %s", r)
			for _, p := range pods {
				Expect(r.Output).To(ContainSubstring("evicting pod %s/%s (server dry run)", f.NS, p), "%s", r)
			}

			By("the budget's status does not move: same resourceVersion, no record, same allowances")
			Consistently(ctx, func(g Gomega) {
				now := f.getTDB(ctx, "web")
				g.Expect(now.Status.DisruptedPods).To(BeEmpty(), "a dry run was recorded: %s", fmtTDB(now))
				g.Expect(now.Status.Domains).To(Equal(before.Status.Domains), fmtTDB(now))
				g.Expect(now.ResourceVersion).To(Equal(before.ResourceVersion), "status rewritten: before %s, now %s", fmtTDB(before), fmtTDB(now))
			}).Should(Succeed())
			var n corev1.Node
			Expect(k8s.Get(ctx, client.ObjectKey{Name: node}, &n)).To(Succeed())
			Expect(n.Spec.Unschedulable).To(BeFalse(), "a server dry run cordoned the node")
			for _, p := range f.Pods(ctx, "web") {
				Expect(kwokenv.PodReady(&p)).To(BeTrue(), "pod %s", p.Name)
				Expect(p.UID).To(Equal(uids[p.Name]), "pod %s was replaced", p.Name)
			}
			rep := w.Stop()
			expectHeld(rep, 0, 0, 0)

			By("a real eviction still gets zone-a's allowance, and spends it")
			Expect(f.Evict(ctx, pods[0])).To(Succeed())
			// The dry runs above were decided, not skipped: now that zone-a
			// has no allowance, the same kind of dry run (dryRun in the
			// Eviction body, as kubectl sends it) is refused.
			err := cs.PolicyV1().Evictions(f.NS).Evict(ctx, &policyv1.Eviction{
				ObjectMeta:    metav1.ObjectMeta{Namespace: f.NS, Name: pods[1]},
				DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}},
			})
			Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "a dry-run eviction in zone-a with no allowance: want 429, got %v", err)
			err = f.Evict(ctx, pods[1])
			Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "the second zone-a eviction: want 429, got %v", err)
			f.WaitPodsReady(ctx, "web", 9)
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 3, Domains: fixture.Zones})
		})
})
