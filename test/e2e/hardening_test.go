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
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// holdFinalizer keeps a pod whose node is gone from being removed by pod
// garbage collection, as a finalizer of a real workload can.
const holdFinalizer = "e2e.tdb.dev/hold"

var _ = Describe("Budgets never freeze what they do not protect", func() {
	It("a node deleted under its pods (autoscaler scale-down) is no domain error: the pods there count as gone in their zone and kubectl drain goes on in the other zones",
		SpecTimeout(6*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "nodegone", 2)
			f.zonedWeb(ctx, nil)
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 3, Domains: zones})

			gone, pods := f.busiestNode(ctx, "web", "zone-a")
			By("holding zone-a's pods on " + gone + " with a finalizer, then deleting the node object")
			for _, name := range pods {
				var p corev1.Pod
				Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &p)).To(Succeed())
				p.Finalizers = append(p.Finalizers, holdFinalizer)
				Expect(k8s.Update(ctx, &p)).To(Succeed())
			}
			DeferCleanup(func(ctx SpecContext) {
				for _, name := range pods {
					var p corev1.Pod
					if err := k8s.Get(ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &p); err != nil {
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

	// The local cluster's own start-up of pods (hack/cluster/stages): at
	// 3,000 nodes kwok found StatefulSet replacements carrying their
	// predecessor's pod IP, and merging its own into it made every status
	// patch invalid: the pods stayed Pending for ever and every drain
	// waiting on them with them.
	It("the local cluster starts a bound pod that already carries a pod IP: it runs with one IP, as a replacement must for a drain to go on",
		SpecTimeout(2*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "podip", 1)
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "stale-ip", Namespace: f.ns, Annotations: map[string]string{"tdb.dev/ready-delay": "5s"}},
				Spec:       corev1.PodSpec{NodeName: f.nodes["zone-a"][0], Containers: []corev1.Container{{Name: "c", Image: "example"}}},
			}
			Expect(k8s.Create(ctx, p)).To(Succeed())
			p.Status.PodIP, p.Status.PodIPs = "10.99.0.1", []corev1.PodIP{{IP: "10.99.0.1"}}
			Expect(k8s.Status().Update(ctx, p)).To(Succeed())
			Eventually(ctx, func(g Gomega) {
				g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
				g.Expect(p.Status.Phase).To(Equal(corev1.PodRunning))
				g.Expect(p.Status.PodIPs).To(HaveLen(1))
				g.Expect(p.Status.PodIP).To(Equal(p.Status.PodIPs[0].IP))
			}).WithTimeout(time.Minute).Should(Succeed())
		})

	// kwok deletes by name, with no UID precondition. Its pod-remove Stage
	// used to match the pod again once its own zero-grace delete had
	// shortened the grace period, and the second delete it queued met the
	// StatefulSet's replacement when it landed late: a Ready replacement
	// went without an eviction, a disruption no budget can refuse (1,755 of
	// them in one make bench-scale run at 1,000 nodes).
	It("the local cluster removes only the pods being deleted: evicting a StatefulSet's pods five times over removes each evicted pod and never a replacement",
		SpecTimeout(5*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "kwokdel", 2)
			f.createStatefulSets(ctx, "kd", 8, nil)
			f.waitPodsReady(ctx, "kd", 24)

			w, err := cs.CoreV1().Pods(f.ns).Watch(ctx, metav1.ListOptions{LabelSelector: "app=kd"})
			Expect(err).NotTo(HaveOccurred())
			defer w.Stop()
			var mu sync.Mutex
			evicted, removed := map[types.UID]bool{}, map[types.UID]string{}
			go func() {
				for ev := range w.ResultChan() {
					if p, ok := ev.Object.(*corev1.Pod); ok && ev.Type == watch.Deleted {
						mu.Lock()
						removed[p.UID] = p.Name
						mu.Unlock()
					}
				}
			}()

			for range 5 {
				pods := f.pods(ctx, "kd")
				Expect(pods).To(HaveLen(24))
				var wg sync.WaitGroup
				for i := range pods {
					p := pods[i]
					mu.Lock()
					evicted[p.UID] = true
					mu.Unlock()
					wg.Add(1)
					go func() {
						defer wg.Done()
						defer GinkgoRecover()
						// Pinned to the pod's UID: this spec evicts the pods
						// it listed and nothing else.
						Expect(cs.PolicyV1().Evictions(f.ns).Evict(ctx, &policyv1.Eviction{
							ObjectMeta:    metav1.ObjectMeta{Namespace: f.ns, Name: p.Name},
							DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}},
						})).To(Succeed())
					}()
				}
				wg.Wait()
				Eventually(ctx, func(g Gomega) {
					pods := f.pods(ctx, "kd")
					g.Expect(pods).To(HaveLen(24))
					for i := range pods {
						// A failed g.Expect ends this function: never hold
						// mu across one.
						mu.Lock()
						old := evicted[pods[i].UID]
						mu.Unlock()
						g.Expect(old).To(BeFalse(), "pod %s not replaced yet", pods[i].Name)
						g.Expect(isReady(&pods[i])).To(BeTrue(), "pod %s not Ready", pods[i].Name)
					}
				}).WithTimeout(2 * time.Minute).Should(Succeed())
			}
			// A stray delete comes late, if at all: give it the time.
			time.Sleep(5 * time.Second)
			mu.Lock()
			defer mu.Unlock()
			var strays []string
			for uid, name := range removed {
				if !evicted[uid] {
					strays = append(strays, name)
				}
			}
			Expect(strays).To(BeEmpty(), "replacements removed without an eviction")
			Expect(removed).To(HaveLen(120), "evicted pods removed")
		})

	It("a pod that a policy/v1 PDB protects is refused without a charge: with maxDisruptedDomains 1 its zone does not hold the other zones' drains",
		SpecTimeout(6*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "pdbhold", 2)
			f.zonedWeb(ctx, func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) { s.MaxDisruptedDomains = ptr.To(int32(1)) })
			// One per zone, one zone at a time: 1 together.
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 1, Domains: zones})
			By("a PDB that lets no zone-a pod go")
			Expect(k8s.Create(ctx, &policyv1.PodDisruptionBudget{
				ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "zone-a-frozen"},
				Spec: policyv1.PodDisruptionBudgetSpec{
					Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web", "zone": "zone-a"}},
					MaxUnavailable: ptr.To(intstr.FromInt32(0)),
				},
			})).To(Succeed())
			f.waitPDB(ctx, "zone-a-frozen", 3, 3, 0)

			var zoneA string
			for _, p := range f.pods(ctx, "web") {
				if p.Labels["zone"] == "zone-a" {
					zoneA = p.Name
					break
				}
			}
			By("an eviction of a zone-a pod is refused, naming the PDB, and charges nothing")
			err := f.evict(ctx, zoneA)
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
