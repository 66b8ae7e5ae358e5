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
	"encoding/json"
	"fmt"
	"net"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/evictionwebhook"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

const (
	concurrentClients = 64
	repetitions       = 20
)

// storm prepares a fresh world of 22 pods per zone and a budget of one pod
// per zone, and returns 64 distinct pods to evict at once with their zones.
func storm(handlers ...*evictionwebhook.EvictionHandler) ([]*corev1.Pod, []string) {
	ns := newNamespace()
	w := newWorld(ns, 22)
	tdb := newBudget(ns, "ingesters", nil)
	Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
	// Handlers called directly decide from their own caches: wait until
	// each has seen the computed budget and the pods, as a replica that has
	// been running for a while has.
	for _, h := range handlers {
		Eventually(func() []int32 {
			var t policyv1alpha1.TopologyDisruptionBudget
			if err := h.Cache.Get(ctx, client.ObjectKeyFromObject(tdb), &t); err != nil {
				return nil
			}
			var out []int32
			for _, d := range t.Status.Domains {
				out = append(out, d.DisruptionsAllowed)
			}
			return out
		}).Should(Equal([]int32{1, 1, 1}))
		Eventually(func() error {
			last := w.Pods["zone-c"][len(w.Pods["zone-c"])-1]
			return h.Cache.Get(ctx, client.ObjectKeyFromObject(last), &corev1.Pod{})
		}).Should(Succeed())
	}
	var pods []*corev1.Pod
	var podZones []string
	for i := 0; len(pods) < concurrentClients; i++ {
		z := zones[i%3]
		pods = append(pods, w.Pods[z][i/3])
		podZones = append(podZones, z)
	}
	return pods, podZones
}

// tally checks that exactly one eviction per zone was allowed and every other
// one refused with 429.
func tally(podZones []string, allowed []bool, refusedWith429 []bool) {
	perZone := map[string]int{}
	for i, ok := range allowed {
		if ok {
			perZone[podZones[i]]++
		} else {
			Expect(refusedWith429[i]).To(BeTrue(), "eviction %d was neither allowed nor refused with 429", i)
		}
	}
	Expect(perZone).To(Equal(map[string]int{"zone-a": 1, "zone-b": 1, "zone-c": 1}))
}

// evictAtOnce releases one goroutine per pod at the same moment, each
// evicting its pod with evictOne, and then checks exactly one eviction per
// zone was allowed and every other one refused with 429.
func evictAtOnce(pods []*corev1.Pod, podZones []string, evictOne func(i int) (allowed, refusedWith429 bool)) {
	allowed := make([]bool, len(pods))
	refused := make([]bool, len(pods))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer GinkgoRecover()
			<-start
			allowed[i], refused[i] = evictOne(i)
		}()
	}
	close(start)
	wg.Wait()
	tally(podZones, allowed, refused)
}

var _ = Describe("Concurrent evictions", func() {
	It("allows exactly one eviction per zone when 64 clients evict at once, 20 times over", func() {
		for rep := 0; rep < repetitions; rep++ {
			pods, podZones := storm()
			evictAtOnce(pods, podZones, func(i int) (bool, bool) {
				err := evict(pods[i])
				return err == nil, apierrors.IsTooManyRequests(err)
			})
		}
	})

	It("allows exactly one eviction per zone when two webhook replicas decide at once, 20 times over", func() {
		second, err := framework.StartManagerWith(cfg, framework.ManagerOptions{
			Clock: clock.RealClock{}, RecordTimeout: recordTimeout, NoController: true,
			Webhook: withFreePort(framework.WebhookOptions(env)),
		})
		Expect(err).NotTo(HaveOccurred())
		defer func() { Expect(second.Stop()).To(Succeed()) }()
		handlers := []*evictionwebhook.EvictionHandler{webhookMgr.Handler, second.Handler}

		for rep := 0; rep < repetitions; rep++ {
			pods, podZones := storm(handlers...)
			evictAtOnce(pods, podZones, func(i int) (bool, bool) {
				resp := handlers[i%2].Handle(ctx, evictionRequest(pods[i], false))
				return resp.Allowed, !resp.Allowed && resp.Result != nil && resp.Result.Code == 429
			})
		}
	})
})

// evictionRequest is the AdmissionRequest the API server sends for an
// Eviction of pod.
func evictionRequest(pod *corev1.Pod, dryRun bool) admission.Request {
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "policy/v1", "kind": "Eviction",
		"metadata": map[string]any{"name": pod.Name, "namespace": pod.Namespace},
	})
	Expect(err).NotTo(HaveOccurred())
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID:         types.UID(fmt.Sprintf("req-%s", pod.UID)),
		Kind:        metav1.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"},
		Resource:    metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		SubResource: "eviction",
		Name:        pod.Name,
		Namespace:   pod.Namespace,
		Operation:   admissionv1.Create,
		Object:      runtime.RawExtension{Raw: raw},
		DryRun:      ptr.To(dryRun),
	}}
}

func withFreePort(o *webhookOptions) *webhookOptions {
	l, err := net.Listen("tcp", net.JoinHostPort(o.Host, "0"))
	Expect(err).NotTo(HaveOccurred())
	o.Port = l.Addr().(*net.TCPAddr).Port
	Expect(l.Close()).To(Succeed())
	return o
}
