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

package controller_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	eventsv1 "k8s.io/api/events/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

var _ = Describe("Budget status per partition", func() {
	var (
		ns string
		w  *zoned
	)
	BeforeEach(func() {
		var err error
		ns, err = framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		// ingester-zone-{a,b,c}, pods ingester-zone-<z>-{0,1,2}: partition
		// i has one replica in each zone.
		w = newZoned(ns)
	})
	partitioned := func(minReady int32) func(*policyv1alpha1.TopologyDisruptionBudgetSpec) {
		return func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey = ""
			s.Partition = &policyv1alpha1.PartitionSource{PodNameRegex: `ingester-zone-[a-z]-([0-9]+)`}
			s.MinReadySeconds = minReady
		}
	}

	It("reports one row per partition, and a replica deleted without an eviction holds its partition only", func() {
		tdb := newBudget(ns, partitioned(0))
		Eventually(get(tdb)).Should(haveRows(row{"0", 3, 3, 2, 1}, row{"1", 3, 3, 2, 1}, row{"2", 3, 3, 2, 1}))
		Expect(k8s.Delete(ctx, w.pods["zone-b"][1])).To(Succeed())
		Eventually(get(tdb)).Should(haveRows(row{"0", 3, 3, 2, 1}, row{"1", 3, 2, 2, 0}, row{"2", 3, 3, 2, 1}))
		Expect(condition(get(tdb)()).Reason).To(Equal(policyv1alpha1.ReasonSufficientPods))
	})

	It("counts a recovered replica healthy once Ready for minReadySeconds, with no event to say so", func() {
		tdb := newBudget(ns, partitioned(4))
		Eventually(get(tdb)).Should(haveRows(row{"0", 3, 3, 2, 1}, row{"1", 3, 3, 2, 1}, row{"2", 3, 3, 2, 1}))
		p := w.pods["zone-a"][0]
		Expect(framework.SetReady(ctx, k8s, p, false)).To(Succeed())
		Eventually(get(tdb)).Should(haveRows(row{"0", 3, 2, 2, 0}, row{"1", 3, 3, 2, 1}, row{"2", 3, 3, 2, 1}))
		Expect(framework.SetReady(ctx, k8s, p, true)).To(Succeed())
		readyAt := time.Now()
		Eventually(func() int32 { return get(tdb)().Status.Domains[0].WarmingUp }).Should(Equal(int32(1)),
			"partition 0 reports its replica warming up")
		Expect(rowsOf(get(tdb)())[0]).To(Equal(row{"0", 3, 2, 2, 0}))
		Eventually(get(tdb), 10*time.Second, 200*time.Millisecond).Should(haveRows(row{"0", 3, 3, 2, 1}, row{"1", 3, 3, 2, 1}, row{"2", 3, 3, 2, 1}))
		Expect(time.Since(readyAt)).To(BeNumerically(">=", 4*time.Second-500*time.Millisecond),
			"healthy again only after minReadySeconds (the Ready transition is stamped to the second)")
		Expect(get(tdb)().Status.Domains[0].WarmingUp).To(BeZero())
	})

	It("fails closed with DomainError when a covered pod has no partition", func() {
		tdb := newBudget(ns, func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			partitioned(0)(s)
			s.Partition = &policyv1alpha1.PartitionSource{Label: "partition"}
		})
		Eventually(func() string { return condition(get(tdb)()).Reason }).Should(Equal(policyv1alpha1.ReasonDomainError))
		Expect(condition(get(tdb)()).Message).To(ContainSubstring("no label partition"))
		Expect(get(tdb)().Status.DisruptionsAllowed).To(BeZero())
		Eventually(func() []string {
			var evs eventsv1.EventList
			Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
			var notes []string
			for _, e := range evs.Items {
				if e.Regarding.Name == tdb.Name && e.Reason == policyv1alpha1.EventReasonDomainError {
					notes = append(notes, e.Note)
				}
			}
			return notes
		}).Should(ContainElement(ContainSubstring("have no partition")), "the DomainError event names the partition, not a node label")
	})
})
