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
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// The deletion-cost controller (design section 5): the ReplicaSet
// controller removes the pods with the lowest
// controller.kubernetes.io/pod-deletion-cost first, and the operator keeps
// that annotation on the pods a budget with spec.rollout covers, so that
// scale-downs keep the zones even and Deployment rollouts take old pods
// zone by zone. The real Deployment and ReplicaSet controllers do the rest.

const (
	deletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"
	// deletionCostMarker names the budget that set a pod's deletion cost.
	deletionCostMarker = "policy.tdb.dev/deletion-cost-budget"
)

var _ = Describe("Scale-down and Deployment rollout order (pod-deletion-cost)", func() {
	It("a Deployment spread 12/8/4 over the zones and scaled from 24 to 12 ends 4/4/4 with the operator; the same scale-down of a Deployment without a budget is reported for comparison",
		SpecTimeout(8*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "scaledown", 2)
			// Two Deployments, created and scaled alike; only "spread" is
			// covered by a budget. Their zone spread is soft (ScheduleAnyway)
			// so that cordoning the other zones' nodes can fill the zones
			// unevenly, 12/8/4: an even 8/8/8 start would let the
			// ReplicaSet controller's own choice look balanced by chance,
			// and an uneven one shows which zones a scale-down takes from.
			apps := []string{"spread", "alone"}
			for _, app := range apps {
				pods := kwokenv.Pods{Namespace: f.NS, App: app, NodeLabel: [2]string{fixture.PoolLabel, f.Name}, ZoneSpread: corev1.ScheduleAnyway}
				Expect(k8s.Create(ctx, kwokenv.RollingDeployment(pods, app, 0, 3, 0))).To(Succeed())
			}
			By("filling the zones unevenly: 12 pods in zone-a, 8 in zone-b, 4 in zone-c (the other zones' nodes cordoned)")
			total := 0
			for _, step := range []struct {
				zone string
				pods int
			}{{"zone-a", 12}, {"zone-b", 8}, {"zone-c", 4}} {
				f.cordonAllBut(ctx, step.zone)
				total += step.pods
				for _, app := range apps {
					f.scaleDeployment(ctx, app, int32(total))
				}
				for _, app := range apps {
					f.WaitPodsReady(ctx, app, total)
				}
			}
			f.cordonAllBut(ctx, "")
			for _, app := range apps {
				Expect(f.readyPodsPerZone(ctx, app)).To(Equal(map[string]int{"zone-a": 12, "zone-b": 8, "zone-c": 4}), "pods of %s per zone", app)
			}

			spec := tdbSpec("spread")
			spec.TopologyKey = kwokenv.ZoneKey
			spec.Rollout = &policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain}
			f.CreateTDB(ctx, "spread", spec)
			f.waitTDB(ctx, "spread", tdbWant{Expected: 24, Healthy: 24, Allowed: 3, Domains: fixture.Zones})
			costs := f.waitDeletionCosts(ctx, "spread", "spread", 24)
			GinkgoWriter.Println("deletion costs before the scale-down:", costs)
			for _, p := range f.Pods(ctx, "alone") {
				Expect(p.Annotations).NotTo(HaveKey(deletionCostAnnotation), "pod %s is not covered by a budget", p.Name)
				Expect(p.Annotations).NotTo(HaveKey(deletionCostMarker), "pod %s is not covered by a budget", p.Name)
			}

			w := f.watchWith(f.notReadyScheduled("spread"))
			By("scaling both Deployments from 24 to 12 at once")
			for _, app := range apps {
				f.scaleDeployment(ctx, app, 12)
			}
			for _, app := range apps {
				f.WaitPodsReady(ctx, app, 12)
			}
			withTDB, alone := f.readyPodsPerZone(ctx, "spread"), f.readyPodsPerZone(ctx, "alone")
			summary := fmt.Sprintf("24 -> 12 from zone-a=12 zone-b=8 zone-c=4: with the operator %s; ReplicaSet controller alone %s",
				fmtZoneCounts(withTDB), fmtZoneCounts(alone))
			AddReportEntry("scale-down zone counts", summary)
			GinkgoWriter.Println(summary)
			Expect(withTDB).To(Equal(map[string]int{"zone-a": 4, "zone-b": 4, "zone-c": 4}), "zones of the covered Deployment after the scale-down; %s", summary)
			By("and the zones stay so")
			Consistently(ctx, func(g Gomega) {
				g.Expect(f.readyPodsPerZone(ctx, "spread")).To(Equal(withTDB))
				g.Expect(f.Pods(ctx, "spread")).To(HaveLen(12))
			}).Should(Succeed())
			expectHeld(w.Stop(), 1, -1, -1)
		})

	It("a Deployment rollout (24 pods, maxSurge 3, maxUnavailable 0) under DomainByDomain with domainOrder [zone-b, zone-a, zone-c] removes old pods zone by zone",
		SpecTimeout(8*time.Minute), func(ctx SpecContext) {
			const maxSurge = 3
			order := []string{"zone-b", "zone-a", "zone-c"}
			f := newFixture(ctx, "deployroll", 2)
			pods := kwokenv.Pods{Namespace: f.NS, App: "web", NodeLabel: [2]string{fixture.PoolLabel, f.Name}, ZoneSpread: corev1.DoNotSchedule}
			Expect(k8s.Create(ctx, kwokenv.RollingDeployment(pods, "web", 24, maxSurge, 0))).To(Succeed())
			f.WaitPodsReady(ctx, "web", 24)
			Expect(f.readyPodsPerZone(ctx, "web")).To(Equal(map[string]int{"zone-a": 8, "zone-b": 8, "zone-c": 8}))
			spec := tdbSpec("web")
			spec.TopologyKey = kwokenv.ZoneKey
			spec.Rollout = &policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain, DomainOrder: order}
			f.CreateTDB(ctx, "web", spec)
			f.waitTDB(ctx, "web", tdbWant{Expected: 24, Healthy: 24, Allowed: 3, Domains: fixture.Zones})
			f.waitDeletionCosts(ctx, "web", "web", 24)

			hist := f.recordPods(ctx, appsv1.DefaultDeploymentUniqueLabelKey)
			old := f.revisions(ctx, "web", appsv1.DefaultDeploymentUniqueLabelKey)
			// Scale-downs of the old ReplicaSet are not evictions: a zone
			// can lose up to maxSurge Ready pods at once, when the surge
			// pods that allowed it were created in other zones.
			w := f.watch("web", fixture.FixedExpected(8))
			from := hist.Seq()
			start := time.Now()
			By("changing the Deployment's pod template")
			var d appsv1.Deployment
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: "web"}, &d)).To(Succeed())
			patch := client.MergeFrom(d.DeepCopy())
			d.Spec.Template.Annotations = map[string]string{revisionAnnotation: "2"}
			Expect(k8s.Patch(ctx, &d, patch)).To(Succeed())
			Eventually(ctx, func(g Gomega) {
				var d appsv1.Deployment
				g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: "web"}, &d)).To(Succeed())
				st := d.Status
				g.Expect(st.ObservedGeneration).To(Equal(d.Generation))
				g.Expect([]int32{st.Replicas, st.UpdatedReplicas, st.AvailableReplicas}).To(Equal([]int32{24, 24, 24}), "replicas/updated/available")
				for _, p := range f.Pods(ctx, "web") {
					g.Expect(old.has(p.Labels[appsv1.DefaultDeploymentUniqueLabelKey])).To(BeFalse(), "old pod %s is left", p.Name)
				}
			}).WithTimeout(5 * time.Minute).Should(Succeed())
			f.WaitPodsReady(ctx, "web", 24)
			GinkgoWriter.Printf("Deployment rollout done in %s\n", time.Since(start).Round(100*time.Millisecond))
			rep := w.Stop()

			// The old pods' deletions, grouped into the old ReplicaSet's
			// scale-downs: the ReplicaSet controller deletes one scale-down's
			// pods in parallel, within milliseconds, so their order inside
			// a batch means nothing, while successive scale-downs are at
			// least a pod start-up (2 s) apart. Deletions less than 1 s apart
			// form one batch (two scale-downs merged by this rule only make
			// the assertion weaker).
			//
			// The assertion: ranking zones by domainOrder, every deletion of
			// a batch ranks at or after every deletion of all earlier
			// batches (no zone is returned to once a later zone was
			// started), and a batch spans at most two adjacent zones (the
			// last pods of one zone and the first of the next, which a
			// scale-down by up to maxSurge pods makes unavoidable).
			left := leavings(hist.Events(), "web", from, old.has)
			rank := map[string]int{}
			for i, z := range order {
				rank[z] = i
			}
			var batches [][]podEvent
			for i, e := range left {
				if i == 0 || e.At.Sub(left[i-1].At) >= time.Second {
					batches = append(batches, nil)
				}
				batches[len(batches)-1] = append(batches[len(batches)-1], e)
			}
			// Each batch is shown with its pods' deletion costs and, for
			// evidence, the lowest cost the old pods that stayed had in each
			// zone when the batch started.
			var seq, detail []string
			for i, b := range batches {
				sort.SliceStable(b, func(i, j int) bool { return rank[b[i].Zone] < rank[b[j].Zone] })
				var zs, ds []string
				for _, e := range b {
					zs = append(zs, e.Zone)
					ds = append(ds, fmt.Sprintf("%s(%s cost %s)", e.Zone, e.Name, e.Cost))
				}
				seq = append(seq, strings.Join(zs, " "))
				detail = append(detail, fmt.Sprintf("batch %d t+%.1fs: %s; cheapest old pod staying: %s",
					i+1, b[0].At.Sub(start).Seconds(), strings.Join(ds, " "), fmtCheapest(b[0].CheapestLeft)))
			}
			report := fmt.Sprintf("old pods left in %d batches: %s\n    %s\n    watcher (8 minus Ready per zone): %s",
				len(batches), strings.Join(seq, " | "), strings.Join(detail, "\n    "), rep)
			AddReportEntry("Deployment rollout, DomainByDomain [zone-b, zone-a, zone-c]", report)
			GinkgoWriter.Println(report)

			perZone := map[string]int{}
			for _, e := range left {
				perZone[e.Zone]++
			}
			Expect(perZone).To(Equal(map[string]int{"zone-a": 8, "zone-b": 8, "zone-c": 8}), "old pods deleted per zone; %s", report)
			highest := -1
			for i, b := range batches {
				lo, hi := len(order), -1
				for _, e := range b {
					lo, hi = min(lo, rank[e.Zone]), max(hi, rank[e.Zone])
				}
				Expect(lo).To(BeNumerically(">=", highest), "batch %d (%s) returns to a zone earlier in the order than one already started; %s", i+1, seq[i], report)
				Expect(hi-lo).To(BeNumerically("<=", 1), "batch %d (%s) spans non-adjacent zones; %s", i+1, seq[i], report)
				highest = max(highest, hi)
			}
			expectHeld(rep, maxSurge, -1, -1)
		})
})

// scaleDeployment sets a Deployment's replicas.
func (f *pool) scaleDeployment(ctx context.Context, name string, replicas int32) {
	var d appsv1.Deployment
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: name}, &d)).To(Succeed())
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = ptr.To(replicas)
	Expect(k8s.Patch(ctx, &d, patch)).To(Succeed())
}

// cordonAllBut marks the spec's nodes outside zone unschedulable and those
// in zone schedulable; zone "" makes them all schedulable.
func (f *pool) cordonAllBut(ctx context.Context, zone string) {
	for z, nodes := range f.NodesByZone() {
		cordon := zone != "" && z != zone
		for _, n := range nodes {
			patch := []byte(fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, cordon))
			Expect(k8s.Patch(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
		}
	}
}

// waitDeletionCosts waits until each of app's n pods carries a deletion cost
// set by the budget tdb, unchanged for 2 s, and returns the costs by zone,
// lowest (removed first) first.
func (f *pool) waitDeletionCosts(ctx context.Context, app, tdb string, n int) string {
	By("waiting for the operator to set a deletion cost on every covered pod")
	read := func(g Gomega) map[string]string {
		costs := map[string]string{}
		pods := f.Pods(ctx, app)
		g.Expect(pods).To(HaveLen(n))
		for _, p := range pods {
			g.Expect(p.Annotations).To(HaveKeyWithValue(deletionCostMarker, tdb), "pod %s has no deletion cost of budget %s", p.Name, tdb)
			c, ok := p.Annotations[deletionCostAnnotation]
			g.Expect(ok).To(BeTrue(), "pod %s has no %s", p.Name, deletionCostAnnotation)
			_, err := strconv.ParseInt(c, 10, 32)
			g.Expect(err).NotTo(HaveOccurred(), "pod %s: %s=%q", p.Name, deletionCostAnnotation, c)
			costs[p.Name] = c
		}
		return costs
	}
	var settled map[string]string
	Eventually(ctx, func(g Gomega) { settled = read(g) }).WithTimeout(time.Minute).Should(Succeed())
	Consistently(ctx, func(g Gomega) {
		g.Expect(read(g)).To(Equal(settled), "deletion costs still changing")
	}).WithTimeout(2 * time.Second).Should(Succeed())

	byZone := map[string][]int{}
	for _, p := range f.Pods(ctx, app) {
		c, _ := strconv.Atoi(settled[p.Name])
		z := f.zoneOfNode(p.Spec.NodeName)
		byZone[z] = append(byZone[z], c)
	}
	var b strings.Builder
	for _, z := range fixture.Zones {
		sort.Ints(byZone[z])
		fmt.Fprintf(&b, "\n    %s: %v", z, byZone[z])
	}
	return b.String()
}

// fmtZoneCounts prints pod counts per zone, zones in order.
func fmtZoneCounts(m map[string]int) string {
	parts := make([]string, 0, len(fixture.Zones))
	for _, z := range fixture.Zones {
		parts = append(parts, fmt.Sprintf("%s=%d", z, m[z]))
	}
	return strings.Join(parts, " ")
}

// fmtCheapest prints the lowest deletion cost per zone, "-" for a zone
// without pods.
func fmtCheapest(m map[string]int) string {
	parts := make([]string, 0, len(fixture.Zones))
	for _, z := range fixture.Zones {
		c := "-"
		if v, ok := m[z]; ok {
			c = strconv.Itoa(v)
		}
		parts = append(parts, z+"="+c)
	}
	return strings.Join(parts, " ")
}
