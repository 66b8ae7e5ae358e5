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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
)

var _ = Describe("Operator crash", func() {
	It("SIGKILLed in the middle of a concurrent drain: while it is down evictions fail with a clear error instead of hanging; after a restart the re-run drains complete, and the budget held throughout",
		SpecTimeout(7*time.Minute), func(ctx SpecContext) {
			// Whatever happens here, the next specs need an operator.
			DeferCleanup(func() {
				if op == nil {
					startOperator()
				}
			})
			f := newFixture(ctx, "restart", 2)
			f.zonedWeb(ctx, nil)
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 3, Domains: fixture.Zones})
			orig := f.AllNodes()
			f.AddNodes(ctx, 1)
			w := f.watch("web", f.statefulSetsExpected("web"))

			By(fmt.Sprintf("draining the %d original nodes at once", len(orig)))
			ch := startDrains(ctx, orig, 3*time.Minute)
			Eventually(ctx, func() int {
				return len(f.getTDB(ctx, "web").Status.DisruptedPods)
			}).WithTimeout(30*time.Second).WithPolling(50*time.Millisecond).Should(BeNumerically(">=", 1), "no eviction was granted")

			// Kill it while some drains sleep between 429 retries.
			time.Sleep(1500 * time.Millisecond)
			By("SIGKILLing the operator")
			op.Kill()
			op = nil
			killed := time.Now()

			By("an eviction while it is down fails with 'failed calling webhook' (failurePolicy Fail)")
			pod := f.Pods(ctx, "web")[0]
			err := f.Evict(ctx, pod.Name)
			Expect(err).To(HaveOccurred(), "pod %s was evicted while the webhook was down", pod.Name)
			Expect(err.Error()).To(ContainSubstring("failed calling webhook"))
			var code int32
			if st, ok := err.(apierrors.APIStatus); ok {
				code = st.Status().Code
			}
			GinkgoWriter.Printf("eviction while the operator is down: HTTP %d %s: %v\n", code, apierrors.ReasonForError(err), err)

			By("every kubectl drain ends (none hangs); those with pods left fail naming the webhook")
			results := collect(ch, len(orig), 90*time.Second)
			failed := 0
			for _, r := range results {
				if r.Err != nil {
					failed++
					Expect(r.Output).To(ContainSubstring("failed calling webhook"), "%s", r)
				}
			}
			GinkgoWriter.Printf("%d of %d drains failed while the operator was down; the last ended %s after the kill\n",
				failed, len(orig), time.Since(killed).Round(100*time.Millisecond))
			Expect(failed).To(BeNumerically(">=", 1), "every drain finished before the kill: nothing was tested")
			Expect(w.Report().MaxZone).To(HaveEach(BeNumerically("<=", 1)), "budget exceeded before the restart")

			By("restarting the operator on the same ports and re-running the drains")
			startOperator()
			expectDrained(collect(startDrains(ctx, orig, 3*time.Minute), len(orig), 4*time.Minute))
			f.WaitPodsReady(ctx, "web", 9, orig...)
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 3, Domains: fixture.Zones})

			rep := w.Stop()
			expectHeld(rep, 1, -1, -1)
		})
})
