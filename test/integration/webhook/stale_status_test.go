//go:build integration

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

package webhook_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/evictionwebhook"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

// Every replica protects against a status written before a pod of the
// domain turned not Ready: two webhook replicas, neither running the status
// controller (as the replicas that are not the leader), each checking the
// grants the written status makes on its own cache.
var _ = Describe("Evictions on every replica while the status is behind", Serial, func() {
	It("grants no eviction in a zone whose pod turned not Ready after the status allowed one, on any replica", func() {
		second, err := framework.StartManagerWith(cfg, framework.ManagerOptions{
			Clock: clock.RealClock{}, RecordTimeout: recordTimeout, NoController: true,
			Webhook: withFreePort(framework.WebhookOptions(env)),
		})
		Expect(err).NotTo(HaveOccurred())
		defer func() { Expect(second.Stop()).To(Succeed()) }()
		handlers := []*evictionwebhook.EvictionHandler{webhookMgr.Handler, second.Handler}

		for rep := range 3 {
			pods, podZones := storm(handlers...)
			// The status allows one per zone. Stop the status controller
			// (its write would close the window this test holds open), then
			// a pod of zone-a and one of zone-b turn not Ready: the status
			// still says one allowed in each.
			stopController()
			notReady := map[string]*corev1.Pod{}
			for i, z := range podZones {
				if z != "zone-c" {
					notReady[z] = pods[i] // the zone's last pod of the storm
				}
			}
			for _, p := range notReady {
				Expect(framework.SetReady(ctx, k8s, p, false)).To(Succeed())
			}
			for _, h := range handlers {
				for _, p := range notReady {
					Eventually(func() bool {
						var got corev1.Pod
						if err := h.Cache.Get(ctx, client.ObjectKeyFromObject(p), &got); err != nil {
							return false
						}
						return !budget.IsHealthy(&got)
					}).Should(BeTrue(), "replica caches see the pod not Ready")
				}
			}

			allowed := map[string]int{}
			mu := make(chan struct{}, 1)
			evictAtOnceEach(pods, func(i int) {
				if pods[i] == notReady[podZones[i]] {
					return // the not-Ready pod itself is not in this storm
				}
				resp := handlers[i%2].Handle(ctx, evictionRequest(pods[i], false))
				if resp.Allowed {
					mu <- struct{}{}
					allowed[podZones[i]]++
					<-mu
				} else {
					Expect(resp.Result.Code).To(BeEquivalentTo(429), "refused with 429: %s", resp.Result.Message)
				}
			})
			GinkgoWriter.Printf("round %d: evictions granted by zone with a pod not Ready in zone-a and zone-b: %v\n", rep, allowed)
			// zone-a and zone-b already have their one unavailable pod:
			// a grant there would make two. zone-c allows its one.
			Expect(allowed).To(Equal(map[string]int{"zone-c": 1}), "over budget: a zone with a not-Ready pod had an eviction granted")
			startController()
		}
	})
})

// evictAtOnceEach releases one goroutine per pod at the same moment, each
// running evictOne.
func evictAtOnceEach(pods []*corev1.Pod, evictOne func(i int)) {
	done := make(chan struct{}, len(pods))
	start := make(chan struct{})
	for i := range pods {
		go func() {
			defer func() { done <- struct{}{} }()
			defer GinkgoRecover()
			<-start
			evictOne(i)
		}()
	}
	close(start)
	for range pods {
		<-done
	}
}
