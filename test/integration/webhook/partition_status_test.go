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

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

var _ = Describe("A budget over many partitions", func() {
	// ingester-zone-{a,b,c}-{0..29}: partition i has one replica per zone.
	It("stores only the partitions not at full health, and decides the evictions of every partition", func() {
		ns := newNamespace()
		w := newWorld(ns, 30)
		tdb := newBudget(ns, "partitions", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey = ""
			s.Partition = &policyv1alpha1.PartitionSource{PodNameRegex: `ingester-zone-[a-z]-([0-9]+)`}
		})
		group := func(count int32, allowed int32, ranges ...string) policyv1alpha1.DomainGroup {
			return policyv1alpha1.DomainGroup{Count: count, ExpectedPods: 3, DesiredHealthy: 2, DisruptionsAllowed: allowed, Ranges: ranges}
		}
		stored := func() policyv1alpha1.TopologyDisruptionBudgetStatus { return get(tdb).Status }
		Eventually(func() []policyv1alpha1.DomainGroup { return stored().HealthyDomains }).Should(Equal([]policyv1alpha1.DomainGroup{group(30, 1, "0-29")}))
		st := stored()
		Expect(st.Domains).To(BeEmpty(), "no partition is listed while all are at full health")
		Expect(st.DomainCount).To(Equal(int32(30)))
		Expect(st.DisruptionsAllowed).To(Equal(int32(30)))

		// One replica of partition 7 goes: the webhook reads partition 7's
		// row from the cache's expanded status, charges it, and stores it
		// listed.
		Expect(evict(w.Pods["zone-a"][7])).To(Succeed())
		st = stored()
		Expect(st.Domains).To(HaveLen(1))
		Expect(st.Domains[0]).To(MatchFields7())
		Expect(st.HealthyDomains).To(Equal([]policyv1alpha1.DomainGroup{group(29, 1, "0-6", "8-29")}))
		Expect(records(tdb)).To(ConsistOf("ingester-zone-a-7@7"))

		// A second replica of partition 7 is refused; any other partition
		// may lose one.
		Expect(evict(w.Pods["zone-b"][7])).To(beTooManyRequests())
		Expect(evict(w.Pods["zone-b"][8])).To(Succeed())
		Expect(evict(w.Pods["zone-c"][29])).To(Succeed())
		Expect(evict(w.Pods["zone-c"][8])).To(beTooManyRequests())
		Eventually(func() []string {
			var names []string
			for _, d := range stored().Domains {
				names = append(names, d.Name)
			}
			return names
		}).Should(Equal([]string{"29", "7", "8"}))
		Eventually(func() []policyv1alpha1.DomainGroup { return stored().HealthyDomains }).Should(Equal([]policyv1alpha1.DomainGroup{group(27, 1, "0-6", "9-28")}))
		Expect(stored().DisruptedDomains).To(Equal(int32(3)))
		b, err := json.Marshal(stored())
		Expect(err).NotTo(HaveOccurred())
		Expect(len(b)).To(BeNumerically("<", 2500), "the stored status of 30 partitions, 3 degraded: %s", b)
	})
})

// MatchFields7 is partition 7 with one replica evicted: 2 of 3 healthy,
// none allowed.
func MatchFields7() OmegaMatcher {
	return And(
		HaveField("Name", "7"), HaveField("ExpectedPods", int32(3)), HaveField("CurrentHealthy", int32(2)),
		HaveField("DesiredHealthy", int32(2)), HaveField("DisruptionsAllowed", int32(0)))
}
