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
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

// reopenDelay is the leader's --reopen-write-delay in these specs: long
// enough that a status written before it is due was not written by its
// timer.
const reopenDelay = 6 * time.Second

var _ = Describe("With --reopen-write-delay", Ordered, func() {
	var leader *framework.Manager
	BeforeAll(func() {
		// One process, as the elected leader of an install: the status
		// controller with the delay, and the webhook the API server calls.
		stopController()
		stopWebhook()
		var err error
		leader, err = framework.StartManagerWith(cfg, framework.ManagerOptions{
			Clock: clock.RealClock{}, RecordTimeout: recordTimeout, Webhook: framework.WebhookOptions(env),
			ReopenWriteDelay: reopenDelay,
		})
		Expect(err).NotTo(HaveOccurred())
	})
	AfterAll(func() {
		Expect(leader.Stop()).To(Succeed())
		startWebhook()
		startController()
	})

	It("holds a reopen until a grant carries it, grants on the held status at once, and writes a stricter status at once", func() {
		ns := newNamespace()
		w := newWorld(ns, 3)
		tdb := newBudget(ns, "ingesters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) { s.MaxDisruptedDomains = ptr.To[int32](1) })
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))

		Expect(evict(w.Pods["zone-a"][0])).To(Succeed())
		Expect(records(tdb)).To(Equal([]string{"ingester-zone-a-0@zone-a"}))

		By("the replacement turns Ready: the written status stays the stricter one")
		replace(w, "zone-a", 0)
		Consistently(records, reopenDelay/3, 200*time.Millisecond).WithArguments(tdb).Should(Equal([]string{"ingester-zone-a-0@zone-a"}))
		Expect(get(tdb).Status.Domains[0].DisruptionsAllowed).To(BeZero())

		By("the leader's webhook grants on the recomputed status, and its write carries the reopen")
		Expect(evict(w.Pods["zone-b"][0])).To(Succeed(), "the written status refuses (zone-a disrupted, maxDisruptedDomains 1); the pods allow")
		got := get(tdb)
		Expect(records(tdb)).To(Equal([]string{"ingester-zone-b-0@zone-b"}), "the grant's write dropped zone-a's record")
		Expect(got.Status.Domains[0].CurrentHealthy).To(BeEquivalentTo(3), "the grant's write has zone-a's replacement")

		By("a stricter status is written at once: a pod of zone-c turns not Ready")
		Expect(evict(w.Pods["zone-c"][0])).To(beTooManyRequests())
		Expect(framework.SetReady(ctx, k8s, w.Pods["zone-c"][1], false)).To(Succeed())
		Eventually(func() int32 { return get(tdb).Status.Domains[2].CurrentHealthy }, reopenDelay/2).Should(BeEquivalentTo(2))

		By("with no grant to carry it, a reopen is written when the delay is due")
		Expect(framework.SetReady(ctx, k8s, w.Pods["zone-c"][1], true)).To(Succeed())
		replace(w, "zone-b", 0)
		Consistently(func() int32 { return get(tdb).Status.Domains[2].CurrentHealthy }, reopenDelay/2, 200*time.Millisecond).Should(BeEquivalentTo(2))
		Eventually(records, 3*reopenDelay).WithArguments(tdb).Should(BeEmpty())
		Expect(allowedByZone(tdb)()).To(Equal([]int32{1, 1, 1}))
	})
})
