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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

// blockedSince reads each domain's status.domains[].blockedSince ("" when
// unset) as a user reads it.
func blockedSince(t *policyv1alpha1.TopologyDisruptionBudget) func() map[string]string {
	return func() map[string]string {
		out := map[string]string{}
		for _, d := range get(t).Status.Domains {
			out[d.Name] = ""
			if d.BlockedSince != nil {
				out[d.Name] = d.BlockedSince.UTC().Format(time.RFC3339)
			}
		}
		return out
	}
}

// blockedSeries is what /metrics says of the budget's blocked domains:
// tdb_domain_blocked_since_seconds by domain.
func blockedSeries(ns, name string) func() map[string]float64 {
	return func() map[string]float64 {
		families, err := metrics.Registry.Gather()
		Expect(err).NotTo(HaveOccurred())
		out := map[string]float64{}
		for _, f := range families {
			if f.GetName() != "tdb_domain_blocked_since_seconds" {
				continue
			}
			for _, m := range f.GetMetric() {
				l := map[string]string{}
				for _, p := range m.GetLabel() {
					l[p.GetName()] = p.GetValue()
				}
				if l["namespace"] == ns && l["tdb"] == name {
					out[l["domain"]] = m.GetGauge().GetValue()
				}
			}
		}
		return out
	}
}

// podRefusals counts the EvictionRefused events on a pod.
func podRefusals(ns, pod string) func() int {
	return func() int {
		var evs eventsv1.EventList
		Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
		n := 0
		for _, e := range evs.Items {
			if e.Regarding.Kind == "Pod" && e.Regarding.Name == pod && e.Reason == policyv1alpha1.EventReasonEvictionRefused {
				n++
			}
		}
		return n
	}
}

var _ = Describe("Blocked domains", func() {
	var (
		ns string
		w  *framework.World
	)
	BeforeEach(func() {
		ns = newNamespace()
		w = newWorld(ns, 3)
	})

	It("records since when a domain refuses evictions, on the budget, in a metric and on the refused pod, until it allows one again", func() {
		tdb := newBudget(ns, "ingesters", nil)
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
		Expect(evict(w.Pods["zone-a"][0])).To(Succeed())
		Expect(blockedSince(tdb)()).To(Equal(map[string]string{"zone-a": "", "zone-b": "", "zone-c": ""}),
			"a domain that used its allowance is not blocked until an eviction is refused")

		refusedAt := time.Now().Truncate(time.Second)
		Expect(evict(w.Pods["zone-a"][1])).To(beTooManyRequests())
		Eventually(func() string { return blockedSince(tdb)()["zone-a"] }).ShouldNot(BeEmpty())
		since := get(tdb).Status.Domains[0].BlockedSince.Time
		Expect(since).To(BeTemporally("~", refusedAt, 2*time.Second))
		Expect(blockedSince(tdb)()).To(HaveKeyWithValue("zone-b", ""))
		Eventually(blockedSeries(ns, "ingesters")).Should(Equal(map[string]float64{"zone-a": float64(since.Unix())}))

		By("the refused pod says why, once however often the drain retries")
		Eventually(podRefusals(ns, w.Pods["zone-a"][1].Name)).Should(Equal(1))
		Expect(evict(w.Pods["zone-a"][1])).To(beTooManyRequests())
		Expect(evict(w.Pods["zone-a"][1])).To(beTooManyRequests())
		Consistently(podRefusals(ns, w.Pods["zone-a"][1].Name), time.Second, 200*time.Millisecond).Should(Equal(1))
		Expect(get(tdb).Status.Domains[0].BlockedSince.Time).To(Equal(since), "later refusals keep the first time")

		By("the domain recovers: the mark and its series go")
		replace(w, "zone-a", 0)
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
		Eventually(blockedSince(tdb)).Should(Equal(map[string]string{"zone-a": "", "zone-b": "", "zone-c": ""}))
		Eventually(blockedSeries(ns, "ingesters")).Should(BeEmpty())
	})
})
