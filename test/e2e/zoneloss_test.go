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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
)

var _ = Describe("A whole zone lost", func() {
	It("does not freeze drains in the other zones, which proceed within their own budgets (a global PDB would refuse them)",
		SpecTimeout(6*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "zoneloss", 2)
			f.zonedWeb(ctx, nil)
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 3, Domains: fixture.Zones})

			By("losing zone-c: every pod there becomes unready")
			// kwok keeps its fake nodes Ready, so the loss is made where a
			// budget sees it: the zone's pods stop being Ready.
			for _, p := range f.Pods(ctx, "web") {
				if p.Labels["zone"] != "zone-c" {
					continue
				}
				p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.Now()}}
				Expect(k8s.Status().Update(ctx, &p)).To(Succeed())
			}
			Eventually(ctx, func() []int32 {
				var out []int32
				for _, d := range f.getTDB(ctx, "web").Status.Domains {
					out = append(out, d.CurrentHealthy, d.DisruptionsAllowed)
				}
				return out
			}).WithTimeout(time.Minute).Should(Equal([]int32{3, 1, 3, 1, 0, 0}))

			w := f.watch("web", f.statefulSetsExpected("web"))
			var nodes []string
			for _, z := range []string{"zone-a", "zone-b"} {
				n, _ := f.busiestNode(ctx, "web", z)
				nodes = append(nodes, n)
			}
			By("draining a node in zone-a and one in zone-b, at once, while zone-c is down")
			expectDrained(collect(startDrains(ctx, nodes, 3*time.Minute), len(nodes), 4*time.Minute))
			rep := w.Stop()
			Expect(rep.Samples).To(BeNumerically(">=", 20), "%s", rep)
			Expect(rep.MaxZone["zone-a"]).To(BeNumerically("<=", 1), "zone-a exceeded its budget: %s", rep)
			Expect(rep.MaxZone["zone-b"]).To(BeNumerically("<=", 1), "zone-b exceeded its budget: %s", rep)

			By("a zone-c pod still cannot be evicted")
			for _, p := range f.Pods(ctx, "web") {
				if p.Labels["zone"] == "zone-c" && p.DeletionTimestamp == nil {
					err := f.Evict(ctx, p.Name)
					Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "evicting %s: %v", p.Name, err)
					break
				}
			}

			By("for contrast, a global policy/v1 PDB maxUnavailable 1 over the same pods allows nothing anywhere")
			f.CreatePDB(ctx, "global", "web", 1)
			f.WaitPDB(ctx, "global", 9, 6, 0)
		})
})
