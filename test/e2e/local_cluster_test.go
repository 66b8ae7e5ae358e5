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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// The local cluster (kwok, hack/cluster) stands for a real one in every
// spec: where its stages act unlike a real cluster, drains wait on pods
// that never come, or pods go without an eviction.
var _ = Describe("The local cluster", func() {
	// The local cluster's own start-up of pods (hack/cluster/stages): at
	// 3,000 nodes kwok found StatefulSet replacements carrying their
	// predecessor's pod IP, and merging its own into it made every status
	// patch invalid: the pods stayed Pending for ever and every drain
	// waiting on them with them.
	It("the local cluster starts a bound pod that already carries a pod IP: it runs with one IP, as a replacement must for a drain to go on",
		SpecTimeout(2*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "podip", 1)
			p := &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: "stale-ip", Namespace: f.NS, Annotations: map[string]string{"tdb.dev/ready-delay": "5s"}},
				Spec:       corev1.PodSpec{NodeName: f.ZoneNodes("zone-a")[0], Containers: []corev1.Container{{Name: "c", Image: "example"}}},
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
			f.WaitPodsReady(ctx, "kd", 24)

			w, err := cs.CoreV1().Pods(f.NS).Watch(ctx, metav1.ListOptions{LabelSelector: "app=kd"})
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
				pods := f.Pods(ctx, "kd")
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
						Expect(cs.PolicyV1().Evictions(f.NS).Evict(ctx, &policyv1.Eviction{
							ObjectMeta:    metav1.ObjectMeta{Namespace: f.NS, Name: p.Name},
							DeleteOptions: &metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}},
						})).To(Succeed())
					}()
				}
				wg.Wait()
				Eventually(ctx, func(g Gomega) {
					pods := f.Pods(ctx, "kd")
					g.Expect(pods).To(HaveLen(24))
					for i := range pods {
						// A failed g.Expect ends this function: never hold
						// mu across one.
						mu.Lock()
						old := evicted[pods[i].UID]
						mu.Unlock()
						g.Expect(old).To(BeFalse(), "pod %s not replaced yet", pods[i].Name)
						g.Expect(kwokenv.PodReady(&pods[i])).To(BeTrue(), "pod %s not Ready", pods[i].Name)
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
})
