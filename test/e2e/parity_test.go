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
	"context"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// counts are the numbers a policy/v1 PDB and a TDB both report.
type counts struct{ Expected, Healthy, Allowed int32 }

func (c counts) String() string {
	return fmt.Sprintf("expected=%d healthy=%d allowed=%d", c.Expected, c.Healthy, c.Allowed)
}

// expectParity waits until the TDB and the PDB (whose status the real
// disruption controller computes) both report want, in the same poll.
func (f *pool) expectParity(ctx context.Context, step string, want counts) {
	By(fmt.Sprintf("%s: TDB and PDB both report %s", step, want))
	var tc, pc counts
	Eventually(ctx, func(g Gomega) {
		tdb := f.getTDB(ctx, "web")
		pdb := f.getPDB(ctx, "web")
		g.Expect(tdb.Status.ObservedGeneration).To(Equal(tdb.Generation))
		g.Expect(pdb.Status.ObservedGeneration).To(Equal(pdb.Generation))
		tc = counts{tdb.Status.ExpectedPods, tdb.Status.CurrentHealthy, tdb.Status.DisruptionsAllowed}
		pc = counts{pdb.Status.ExpectedPods, pdb.Status.CurrentHealthy, pdb.Status.DisruptionsAllowed}
		g.Expect(tc).To(Equal(pc), "TDB %s vs PDB %s (%s)", tc, pc, fmtTDB(tdb))
		g.Expect(tc).To(Equal(want), "TDB %s", fmtTDB(tdb))
	}).WithTimeout(time.Minute).WithPolling(100*time.Millisecond).Should(Succeed(), "last seen: TDB %s, PDB %s", tc, pc)
	GinkgoWriter.Printf("parity at %q: TDB %s, PDB %s\n", step, tc, pc)
}

var _ = Describe("Parity with policy/v1", func() {
	It("a TDB without topologyKey and a PDB with the same selector and maxUnavailable 1 report the same expectedPods, currentHealthy and disruptionsAllowed through creation, scale up, scale down, a drain and pods becoming Ready",
		SpecTimeout(6*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "parity", 2)
			f.CreateTDB(ctx, "web", tdbSpec("web"))
			f.CreatePDB(ctx, "web", "web", 1)
			f.expectParity(ctx, "no pods yet", counts{0, 0, 0})

			// Pods take 8 s to become Ready, so each step's not-Ready
			// state lasts long enough to be compared.
			slow := map[string]string{readyDelayAnnotation: "8s"}
			f.createStatefulSets(ctx, "web", 2, slow)
			f.expectParity(ctx, "3 StatefulSets of 2 created, pods not Ready yet", counts{6, 0, 0})
			f.expectParity(ctx, "pods Ready", counts{6, 6, 1})

			f.scaleStatefulSet(ctx, "web-zone-a", 4)
			f.expectParity(ctx, "zone-a scaled up to 4, new pods not Ready", counts{8, 6, 0})
			f.expectParity(ctx, "new pods Ready", counts{8, 8, 1})

			f.scaleStatefulSet(ctx, "web-zone-a", 1)
			f.expectParity(ctx, "zone-a scaled down to 1", counts{5, 5, 1})
			f.WaitPodsReady(ctx, "web", 5)

			node, pods := f.busiestNode(ctx, "web", "zone-b")
			w := f.watch("web", f.statefulSetsExpected("web"))
			By(fmt.Sprintf("draining %s (%d pod(s))", node, len(pods)))
			ch := startDrains(ctx, []string{node}, 2*time.Minute)
			f.expectParity(ctx, "drain: a pod evicted, its replacement not Ready", counts{5, 4, 0})
			expectDrained(collect(ch, 1, 3*time.Minute))
			f.WaitPodsReady(ctx, "web", 5, node)
			f.expectParity(ctx, "drained, replacements Ready", counts{5, 5, 1})
			tdb := f.getTDB(ctx, "web")
			Expect(tdb.Status.DisruptedPods).To(BeEmpty(), fmtTDB(tdb))

			rep := w.Stop()
			expectHeld(rep, 1, 1, 1)
		})
})
