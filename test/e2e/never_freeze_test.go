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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
)

// holdFinalizer keeps a pod whose node is gone from being removed by pod
// garbage collection, as a finalizer of a real workload can.
const holdFinalizer = "e2e.tdb.dev/hold"

var _ = Describe("Budgets never freeze what they do not protect", func() {
	It("a node deleted under its pods (autoscaler scale-down) is no domain error: the pods there count as gone in their zone and kubectl drain goes on in the other zones",
		SpecTimeout(6*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "nodegone", 2)
			f.zonedWeb(ctx, nil)
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 3, Domains: fixture.Zones})

			gone, pods := f.busiestNode(ctx, "web", "zone-a")
			By("holding zone-a's pods on " + gone + " with a finalizer, then deleting the node object")
			for _, name := range pods {
				var p corev1.Pod
				Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: name}, &p)).To(Succeed())
				p.Finalizers = append(p.Finalizers, holdFinalizer)
				Expect(k8s.Update(ctx, &p)).To(Succeed())
			}
			DeferCleanup(func(ctx SpecContext) {
				for _, name := range pods {
					var p corev1.Pod
					if err := k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: name}, &p); err != nil {
						continue
					}
					p.Finalizers = nil
					Expect(client.IgnoreNotFound(k8s.Update(ctx, &p))).To(Succeed())
				}
			})
			Expect(k8s.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: gone}})).To(Succeed())

			By("the budget counts them gone in zone-a and keeps zone-b and zone-c open")
			Eventually(ctx, func(g Gomega) {
				tdb := f.getTDB(ctx, "web")
				c := conditionOf(tdb)
				g.Expect(c.Reason).NotTo(Equal(policyv1alpha1.ReasonDomainError), "%s", fmtTDB(tdb))
				var allowed []int32
				for _, d := range tdb.Status.Domains {
					allowed = append(allowed, d.DisruptionsAllowed)
				}
				g.Expect(allowed).To(Equal([]int32{0, 1, 1}), "%s", fmtTDB(tdb))
			}).WithTimeout(time.Minute).Should(Succeed())

			w := f.watch("web", f.statefulSetsExpected("web"))
			node, _ := f.busiestNode(ctx, "web", "zone-b")
			By("draining a zone-b node with kubectl drain")
			expectDrained(collect(startDrains(ctx, []string{node}, 2*time.Minute), 1, 3*time.Minute))
			rep := w.Stop()
			Expect(rep.MaxZone["zone-b"]).To(BeNumerically("<=", 1), "zone-b exceeded its budget: %s", rep)
		})

	It("a pod that a policy/v1 PDB protects is refused without a charge: with maxDisruptedDomains 1 its zone does not hold the other zones' drains",
		SpecTimeout(6*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "pdbhold", 2)
			f.zonedWeb(ctx, func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) { s.MaxDisruptedDomains = ptr.To(int32(1)) })
			// One per zone, one zone at a time: 1 together.
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 1, Domains: fixture.Zones})
			By("a PDB that lets no zone-a pod go")
			Expect(k8s.Create(ctx, &policyv1.PodDisruptionBudget{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "zone-a-frozen"},
				Spec: policyv1.PodDisruptionBudgetSpec{
					Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "zone": "zone-a"}},
					MaxUnavailable: ptr.To(intstr.FromInt32(0)),
				},
			})).To(Succeed())
			f.WaitPDB(ctx, "zone-a-frozen", 3, 3, 0)

			var zoneA string
			for _, p := range f.Pods(ctx, "web") {
				if p.Labels["zone"] == "zone-a" {
					zoneA = p.Name
					break
				}
			}
			By("an eviction of a zone-a pod is refused, naming the PDB, and charges nothing")
			err := f.Evict(ctx, zoneA)
			Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "evicting %s: %v", zoneA, err)
			Expect(err.Error()).To(ContainSubstring("zone-a-frozen"))
			tdb := f.getTDB(ctx, "web")
			Expect(tdb.Status.DisruptedPods).To(BeEmpty(), "%s", fmtTDB(tdb))

			By("kubectl drain of a zone-a node keeps being refused while a zone-b node drains at once")
			a, _ := f.busiestNode(ctx, "web", "zone-a")
			b, _ := f.busiestNode(ctx, "web", "zone-b")
			blocked := startDrains(ctx, []string{a}, 40*time.Second)
			start := time.Now()
			expectDrained(collect(startDrains(ctx, []string{b}, 90*time.Second), 1, 2*time.Minute))
			Expect(time.Since(start)).To(BeNumerically("<", 60*time.Second),
				"zone-b waited for a zone-a eviction that never happened")
			r := collect(blocked, 1, time.Minute)[0]
			Expect(r.Err).To(HaveOccurred(), "the PDB let a zone-a pod go: %s", r)
		})
})

func conditionOf(tdb *policyv1alpha1.TopologyDisruptionBudget) metav1.Condition {
	for _, c := range tdb.Status.Conditions {
		if c.Type == policyv1alpha1.ConditionDisruptionAllowed {
			return c
		}
	}
	return metav1.Condition{}
}
