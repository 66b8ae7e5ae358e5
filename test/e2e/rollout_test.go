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
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// The rollout driver (design section 5): OnDelete StatefulSets and
// DaemonSets covered by a budget with spec.rollout are updated by the
// operator's evictions, domain by domain or in all domains at once. The
// real StatefulSet and DaemonSet controllers create the replacements; a pod
// watch records when each pod left and when its replacement became Ready,
// and the watcher checks each zone's budget every 100 ms.
//
// The StatefulSet specs use three StatefulSets, one pinned to each zone,
// rather than one StatefulSet spread over the zones: each zone's expected
// pods (8) are then fixed by construction, so the watcher's measure does not
// depend on how the operator attributes missing pods, and an evicted pod's
// replacement always comes back in its zone. (With one StatefulSet and a
// maxSkew-1 spread, a replacement may land in another zone when two zones
// have pods missing at once, as under AllDomains, and "8 per zone" stops
// being what the budget protects.) It is also the layout zone-aware stateful
// systems use (ingester-zone-a/b/c), and it makes one budget drive three
// workloads. A single workload spanning the zones is covered by the
// DaemonSet spec.

const (
	// revisionAnnotation is the pod template annotation the specs change to
	// make a new revision.
	revisionAnnotation = "e2e.tdb.dev/revision"
	// revisionLabel carries a StatefulSet's or DaemonSet's pod revision.
	revisionLabel = appsv1.ControllerRevisionHashLabelKey
)

var _ = Describe("Rollouts driven by the operator (OnDelete StatefulSets and DaemonSets)", func() {
	It("DomainByDomain, domainOrder [zone-b, zone-a, zone-c], maxUnavailable 1: zones are updated strictly in that order, 1 pod at a time per zone, and the rollout completes",
		SpecTimeout(8*time.Minute), func(ctx SpecContext) {
			order := []string{"zone-b", "zone-a", "zone-c"}
			r := startStatefulSetRollout(ctx, "roll-dbd", 1, policyv1alpha1.RolloutSpec{
				Strategy: policyv1alpha1.DomainByDomain, DomainOrder: order,
			})
			r.change(ctx, map[string]*string{revisionAnnotation: ptr.To("2")})
			r.waitComplete(ctx, order, 5*time.Minute)

			rep := r.w.Stop()
			p := r.progress()
			report := timeline(p, order, r.changedAt)
			AddReportEntry("DomainByDomain StatefulSet rollout", report+"\n    watcher: "+rep.String())
			GinkgoWriter.Println("timeline:", report)
			expectHeld(rep, 1, 1, 1)
			expectZonesInOrder(p, order, r.perZone, report)
			r.expectEvents(ctx, order)
		})

	It("DomainByDomain, domainOrder [zone-b, zone-c, zone-a]: the three StatefulSets changed one after the other in another order (zone-a, zone-c, zone-b), 2 s apart, as kubectl apply of several files, a Helm upgrade or a GitOps sync does, are still updated strictly in domainOrder",
		SpecTimeout(8*time.Minute), func(ctx SpecContext) {
			order := []string{"zone-b", "zone-c", "zone-a"}
			r := startStatefulSetRollout(ctx, "roll-staggered", 1, policyv1alpha1.RolloutSpec{
				Strategy: policyv1alpha1.DomainByDomain, DomainOrder: order,
			})
			r.changeOneByOne(ctx, []string{"web-zone-a", "web-zone-c", "web-zone-b"}, 2*time.Second,
				map[string]*string{revisionAnnotation: ptr.To("2")})
			r.waitComplete(ctx, order, 5*time.Minute)

			rep := r.w.Stop()
			p := r.progress()
			report := timeline(p, order, r.changedAt)
			AddReportEntry("DomainByDomain rollout of StatefulSets changed 2 s apart", report+"\n    watcher: "+rep.String())
			GinkgoWriter.Println("timeline:", report)
			expectHeld(rep, 1, 1, 1)
			if left := leavings(r.hist.Events(), r.app, r.changedSeq, r.outdated); len(left) > 0 {
				Expect(left[0].Seq).To(BeNumerically(">", r.lastChangedSeq),
					"pod %s of %s left at t+%.1fs, before the last StatefulSet was changed: %s", left[0].Name, left[0].Zone,
					left[0].At.Sub(r.changedAt).Seconds(), report)
			}
			expectZonesInOrder(p, order, r.perZone, report)
		})

	It("StatefulSets that do not name the budget in policy.tdb.dev/rollout-budget are not updated: no pod is evicted and the budget says how to hand them over; once their owner does, they are updated in domainOrder",
		SpecTimeout(8*time.Minute), func(ctx SpecContext) {
			order := []string{"zone-c", "zone-b", "zone-a"}
			r := startStatefulSets(ctx, "roll-consent", 1, policyv1alpha1.RolloutSpec{
				Strategy: policyv1alpha1.DomainByDomain, DomainOrder: order,
			}, false)
			r.change(ctx, map[string]*string{revisionAnnotation: ptr.To("2")})

			By("for 20 s, no outdated pod leaves")
			Consistently(ctx, func(g Gomega) {
				for _, e := range leavings(r.hist.Events(), r.app, r.changedSeq, r.outdated) {
					g.Expect(e.Name).To(BeEmpty(), "pod %s of %s left at t+%.1fs although its StatefulSet was not handed over",
						e.Name, e.Zone, e.At.Sub(r.changedAt).Seconds())
				}
			}).WithTimeout(20 * time.Second).WithPolling(500 * time.Millisecond).Should(Succeed())

			By("the budget reports the workloads not driven, why, and how to hand them over")
			Eventually(ctx, func(g Gomega) {
				tdb := r.f.getTDB(ctx, r.tdb)
				g.Expect(tdb.Status.Rollout).NotTo(BeNil(), fmtRollout(tdb))
				g.Expect(tdb.Status.Rollout.Workloads).To(HaveLen(3), fmtRollout(tdb))
				for _, w := range tdb.Status.Rollout.Workloads {
					g.Expect(w.DrivenBy).To(BeEmpty(), fmtRollout(tdb))
					g.Expect(w.Message).To(ContainSubstring(fmt.Sprintf("kubectl annotate statefulset %s %s=%s",
						w.Name, policyv1alpha1.RolloutBudgetAnnotation, r.tdb)), fmtRollout(tdb))
				}
				c := meta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionRolloutProgressing)
				g.Expect(c).NotTo(BeNil(), fmtRollout(tdb))
				g.Expect([]string{string(c.Status), c.Reason}).To(Equal([]string{"False", policyv1alpha1.ReasonWorkloadNotHandedOver}), fmtRollout(tdb))
			}).WithTimeout(30 * time.Second).Should(Succeed())

			By("the owner annotates the StatefulSets: the rollout starts and completes in domainOrder")
			r.handOver(ctx)
			r.waitComplete(ctx, order, 5*time.Minute)
			rep := r.w.Stop()
			p := r.progress()
			report := timeline(p, order, r.changedAt)
			AddReportEntry("StatefulSets handed over after their change", report+"\n    watcher: "+rep.String())
			expectHeld(rep, 1, 1, 1)
			expectZonesInOrder(p, order, r.perZone, report)
		})

	It("AllDomains, maxUnavailable 2: the zones are updated in parallel, never more than 2 pods unavailable in a zone, and the rollout completes",
		SpecTimeout(8*time.Minute), func(ctx SpecContext) {
			r := startStatefulSetRollout(ctx, "roll-all", 2, policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.AllDomains})
			r.change(ctx, map[string]*string{revisionAnnotation: ptr.To("2")})
			r.waitComplete(ctx, fixture.Zones, 5*time.Minute)

			rep := r.w.Stop()
			p := r.progress()
			report := timeline(p, fixture.Zones, r.changedAt)
			AddReportEntry("AllDomains StatefulSet rollout", report+"\n    watcher: "+rep.String())
			GinkgoWriter.Println("timeline:", report)
			expectHeld(rep, 2, -1, -1)
			// In parallel: every zone lost its first outdated pod before any
			// zone was done (the zones' update intervals all overlap).
			lastStart, firstDone := 0, 0
			for _, z := range fixture.Zones {
				zp := p[z]
				Expect(zp).NotTo(BeNil(), "zone %s was not updated: %s", z, report)
				Expect(zp.Replaced).To(Equal(r.perZone), "outdated pods replaced in %s: %s", z, report)
				Expect(zp.Done).NotTo(BeZero(), "zone %s never had all its pods updated and Ready: %s", z, report)
				lastStart = max(lastStart, zp.FirstLeave)
				if firstDone == 0 || zp.Done < firstDone {
					firstDone = zp.Done
				}
			}
			Expect(lastStart).To(BeNumerically("<", firstDone), "a zone started only after another was done (not in parallel): %s", report)
			r.expectEvents(ctx, fixture.Zones)
		})

	It("pause and resume: paused stops evictions after the pods in flight (phase and condition Paused); unpaused, the rollout completes in order",
		SpecTimeout(8*time.Minute), func(ctx SpecContext) {
			r := startStatefulSetRollout(ctx, "roll-pause", 1, policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain})
			r.change(ctx, map[string]*string{revisionAnnotation: ptr.To("2")})

			By("pausing once the first domain (zone-a) has an updated, Ready pod")
			Eventually(ctx, func(g Gomega) {
				tdb := r.f.getTDB(ctx, r.tdb)
				d := rolloutDomain(tdb, "zone-a")
				g.Expect(d).NotTo(BeNil(), fmtRollout(tdb))
				g.Expect(d.UpdatedPods).To(BeNumerically(">=", 1), fmtRollout(tdb))
			}).WithTimeout(2 * time.Minute).WithPolling(100 * time.Millisecond).Should(Succeed())
			r.setPaused(ctx, true)

			By("the status says Paused: condition RolloutProgressing False/Paused, zone-a phase Paused")
			Eventually(ctx, func(g Gomega) {
				tdb := r.f.getTDB(ctx, r.tdb)
				c := meta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionRolloutProgressing)
				g.Expect(c).NotTo(BeNil(), fmtRollout(tdb))
				g.Expect([]string{string(c.Status), c.Reason}).To(Equal([]string{"False", policyv1alpha1.ReasonRolloutPaused}), fmtRollout(tdb))
				d := rolloutDomain(tdb, "zone-a")
				g.Expect(d).NotTo(BeNil(), fmtRollout(tdb))
				g.Expect(d.Phase).To(Equal(policyv1alpha1.RolloutPhasePaused), fmtRollout(tdb))
			}).WithTimeout(30 * time.Second).Should(Succeed())
			// Any pod already going away when the status says Paused is in
			// flight; every other outdated pod must stay.
			staying := map[types.UID]string{}
			for _, p := range r.f.Pods(ctx, r.app) {
				if p.DeletionTimestamp == nil && r.outdated(p.Labels[revisionLabel]) {
					staying[p.UID] = p.Name
				}
			}
			pausedSeq := r.hist.Seq()
			GinkgoWriter.Printf("paused with %d outdated pods left\n", len(staying))
			Expect(len(staying)).To(BeNumerically(">=", 2*r.perZone), "zone-b and zone-c must still be outdated")

			By("for 10 s, no outdated pod is evicted, and the pods in flight become Ready")
			Consistently(ctx, func(g Gomega) {
				alive := map[types.UID]bool{}
				for _, p := range r.f.Pods(ctx, r.app) {
					if p.DeletionTimestamp == nil {
						alive[p.UID] = true
					}
				}
				for uid, name := range staying {
					g.Expect(alive[uid]).To(BeTrue(), "outdated pod %s was evicted while the rollout was paused", name)
				}
				tdb := r.f.getTDB(ctx, r.tdb)
				c := meta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionRolloutProgressing)
				g.Expect(c).NotTo(BeNil())
				g.Expect(c.Reason).To(Equal(policyv1alpha1.ReasonRolloutPaused), fmtRollout(tdb))
			}).WithTimeout(10 * time.Second).Should(Succeed())
			for _, e := range leavings(r.hist.Events(), r.app, pausedSeq, r.outdated) {
				_, wasStaying := staying[e.UID]
				Expect(wasStaying).To(BeFalse(), "outdated pod %s left %s after the pause", e.Name, e.At.Sub(r.changedAt))
			}
			Eventually(ctx, func(g Gomega) {
				ready := r.f.readyPodsPerZone(ctx, r.app)
				g.Expect(ready["zone-a"]).To(Equal(r.perZone), "the pods in flight in zone-a did not become Ready")
				tdb := r.f.getTDB(ctx, r.tdb)
				d := rolloutDomain(tdb, "zone-a")
				g.Expect(d).NotTo(BeNil())
				g.Expect(d.UpdatedPods).To(Equal(int32(r.updatedReady(ctx)["zone-a"])), fmtRollout(tdb))
				g.Expect(d.Phase).To(Equal(policyv1alpha1.RolloutPhasePaused), fmtRollout(tdb))
			}).WithTimeout(30 * time.Second).Should(Succeed())
			updatedA := r.updatedReady(ctx)["zone-a"]
			GinkgoWriter.Printf("zone-a paused at %d/%d updated\n", updatedA, r.perZone)

			By("resuming: the rollout completes, zone by zone")
			r.setPaused(ctx, false)
			r.waitComplete(ctx, fixture.Zones, 5*time.Minute)
			rep := r.w.Stop()
			p := r.progress()
			report := timeline(p, fixture.Zones, r.changedAt)
			AddReportEntry("paused and resumed StatefulSet rollout", fmt.Sprintf("zone-a paused at %d/%d", updatedA, r.perZone)+report+"\n    watcher: "+rep.String())
			expectHeld(rep, 1, 1, 1)
			expectZonesInOrder(p, fixture.Zones, r.perZone, report)
		})

	It("stall: a new revision whose pods never become Ready stops the rollout in the first domain (Stalled, ProgressDeadlineExceeded naming domain and pod, RolloutStalled event); a fixed revision resumes it to completion",
		SpecTimeout(8*time.Minute), func(ctx SpecContext) {
			const deadline = 15
			r := startStatefulSetRollout(ctx, "roll-stall", 1, policyv1alpha1.RolloutSpec{
				Strategy: policyv1alpha1.DomainByDomain, ProgressDeadlineSeconds: ptr.To[int32](deadline),
			})
			By("a bad revision: its pods stay Pending for an hour")
			r.change(ctx, map[string]*string{revisionAnnotation: ptr.To("2-bad"), readyDelayAnnotation: ptr.To("1h")})

			By(fmt.Sprintf("after %d s without progress: zone-a Stalled, RolloutProgressing False/ProgressDeadlineExceeded naming zone-a and the stuck pod", deadline))
			var stuck string
			var stalledMsg string
			Eventually(ctx, func(g Gomega) {
				stuck = ""
				for _, p := range r.f.Pods(ctx, r.app) {
					if p.Labels["zone"] == "zone-a" && !r.outdated(p.Labels[revisionLabel]) && p.DeletionTimestamp == nil {
						g.Expect(kwokenv.PodReady(&p)).To(BeFalse(), "pod %s of the bad revision became Ready", p.Name)
						stuck = p.Name
					}
				}
				g.Expect(stuck).NotTo(BeEmpty(), "no pod of the bad revision in zone-a yet")
				tdb := r.f.getTDB(ctx, r.tdb)
				d := rolloutDomain(tdb, "zone-a")
				g.Expect(d).NotTo(BeNil(), fmtRollout(tdb))
				g.Expect(d.Phase).To(Equal(policyv1alpha1.RolloutPhaseStalled), fmtRollout(tdb))
				c := meta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionRolloutProgressing)
				g.Expect(c).NotTo(BeNil(), fmtRollout(tdb))
				g.Expect([]string{string(c.Status), c.Reason}).To(Equal([]string{"False", policyv1alpha1.ReasonProgressDeadlineExceeded}), fmtRollout(tdb))
				g.Expect(c.Message).To(And(ContainSubstring("zone-a"), ContainSubstring(stuck)), fmtRollout(tdb))
				stalledMsg = c.Message
			}).WithTimeout(time.Duration(deadline)*time.Second + 90*time.Second).Should(Succeed())
			GinkgoWriter.Printf("stalled %s after the change: %s\n", time.Since(r.changedAt).Round(100*time.Millisecond), stalledMsg)
			Eventually(ctx, func(g Gomega) {
				evs := r.f.tdbEvents(ctx, r.tdb, policyv1alpha1.EventReasonRolloutStalled)
				g.Expect(evs).NotTo(BeEmpty(), "no %s event", policyv1alpha1.EventReasonRolloutStalled)
				g.Expect(evs[0].Note).To(ContainSubstring("zone-a"))
			}).WithTimeout(30 * time.Second).Should(Succeed())

			By("it does not move on: for 5 s more, only the one zone-a pod was replaced and zone-b, zone-c wait (Pending)")
			Consistently(ctx, func(g Gomega) {
				tdb := r.f.getTDB(ctx, r.tdb)
				for _, z := range []string{"zone-b", "zone-c"} {
					d := rolloutDomain(tdb, z)
					g.Expect(d).NotTo(BeNil(), fmtRollout(tdb))
					g.Expect(d.Phase).To(Equal(policyv1alpha1.RolloutPhasePending), fmtRollout(tdb))
				}
				g.Expect(rolloutDomain(tdb, "zone-a").Phase).To(Equal(policyv1alpha1.RolloutPhaseStalled), fmtRollout(tdb))
			}).WithTimeout(5 * time.Second).Should(Succeed())
			p := r.progress()
			stallReport := timeline(p, fixture.Zones, r.changedAt)
			GinkgoWriter.Println("while stalled:", stallReport)
			Expect(p["zone-a"]).NotTo(BeNil(), stallReport)
			Expect(p["zone-a"].Replaced).To(Equal(1), "zone-a: %s", stallReport)
			for _, z := range []string{"zone-b", "zone-c"} {
				if zp := p[z]; zp != nil {
					Expect(zp.Replaced).To(BeZero(), "a pod of %s was evicted while zone-a was stalled: %s", z, stallReport)
				}
			}

			By("a fixed revision (no start-up delay): the rollout resumes, replaces the stuck pod and completes in order")
			// A new revision rather than a return to the first one: every
			// pod, the stuck one included, must then be replaced, as when a
			// bad image is fixed by a newer one.
			var stuckUID types.UID
			for _, p := range r.f.Pods(ctx, r.app) {
				if p.Name == stuck {
					stuckUID = p.UID
				}
			}
			r.change(ctx, map[string]*string{revisionAnnotation: ptr.To("3"), readyDelayAnnotation: nil})
			By(fmt.Sprintf("the stuck pod %s (outdated now, not Ready) is replaced first, and nothing outside zone-a is touched", stuck))
			Eventually(ctx, func(g Gomega) {
				for _, p := range r.f.Pods(ctx, r.app) {
					g.Expect(p.UID).NotTo(Equal(stuckUID), "the stuck pod %s was not evicted; since the fix:%s\n    %s",
						stuck, timeline(r.progress(), fixture.Zones, r.changedAt), fmtRollout(r.f.getTDB(ctx, r.tdb)))
				}
			}).WithTimeout(time.Minute).Should(Succeed())
			for _, e := range leavings(r.hist.Events(), r.app, r.changedSeq, r.outdated) {
				Expect(e.Zone).To(Equal("zone-a"), "pod %s of %s was evicted after the fix while zone-a was not done; since the fix:%s",
					e.Name, e.Zone, timeline(r.progress(), fixture.Zones, r.changedAt))
			}
			r.waitComplete(ctx, fixture.Zones, 5*time.Minute)
			rep := r.w.Stop()
			p = r.progress()
			report := timeline(p, fixture.Zones, r.changedAt)
			AddReportEntry("stalled, then fixed StatefulSet rollout", "stalled: "+stalledMsg+report+"\n    watcher: "+rep.String())
			expectHeld(rep, 1, 1, 1)
			expectZonesInOrder(p, fixture.Zones, r.perZone, report)
		})

	It("DaemonSet with OnDelete on 12 nodes (4 per zone), maxUnavailable 1, DomainByDomain with domainOrder [zone-c]: zones updated in the order zone-c, zone-a, zone-b, and it completes",
		SpecTimeout(8*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "roll-ds", 4)
			pods := kwokenv.Pods{Namespace: f.NS, App: "agent", NodeLabel: [2]string{fixture.PoolLabel, f.Name}}
			Expect(k8s.Create(ctx, kwokenv.OnDeleteDaemonSet(pods, "agent", "agent"))).To(Succeed())
			f.WaitPodsReady(ctx, "agent", 12)
			order := []string{"zone-c", "zone-a", "zone-b"}
			r := &rolloutRun{f: f, app: "agent", tdb: "agent", perZone: 4, workloads: []client.Object{&appsv1.DaemonSet{}}, names: []string{"agent"}, handedOver: true}
			r.createTDB(ctx, 1, policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain, DomainOrder: []string{"zone-c"}})
			r.change(ctx, map[string]*string{revisionAnnotation: ptr.To("2")})
			r.waitComplete(ctx, order, 5*time.Minute)

			rep := r.w.Stop()
			p := r.progress()
			report := timeline(p, order, r.changedAt)
			AddReportEntry("DomainByDomain DaemonSet rollout", report+"\n    watcher: "+rep.String())
			expectHeld(rep, 1, 1, 1)
			expectZonesInOrder(p, order, r.perZone, report)
			r.expectEvents(ctx, order)
		})
})

// rolloutRun is one rollout of app's OnDelete workloads under the budget
// tdb, with the pod history and the watcher that judge it.
type rolloutRun struct {
	f        *pool
	app, tdb string
	perZone  int
	// workloads are empty objects of the workloads' kind, names their names.
	workloads []client.Object
	names     []string
	// handedOver: the workloads name the budget in their
	// policy.tdb.dev/rollout-budget annotation.
	handedOver bool

	// old holds the revisions outdated by the last change.
	old       revisionSet
	hist      *podHistory
	w         *sampler
	changedAt time.Time
	// changedSeq is the history's position when the last change was made,
	// lastChangedSeq when its last workload was changed.
	changedSeq, lastChangedSeq int
}

// startStatefulSetRollout makes a spec's fixture (2 nodes per zone), three
// OnDelete StatefulSets of 8 pods (one per zone) that hand their updates
// over to the budget (policy.tdb.dev/rollout-budget), and a budget over them
// with maxUnavailable per zone and rollout, and waits until the operator
// reports the rollout complete (nothing to do yet).
func startStatefulSetRollout(ctx context.Context, name string, maxUnavailable int32, rollout policyv1alpha1.RolloutSpec) *rolloutRun {
	return startStatefulSets(ctx, name, maxUnavailable, rollout, true)
}

// startStatefulSets is startStatefulSetRollout; without handOver the
// StatefulSets do not name the budget, and it waits until the budget says
// so instead.
func startStatefulSets(ctx context.Context, name string, maxUnavailable int32, rollout policyv1alpha1.RolloutSpec, handOver bool) *rolloutRun {
	f := newFixture(ctx, name, 2)
	r := &rolloutRun{f: f, app: "web", tdb: "web", perZone: 8, handedOver: handOver}
	consent := ""
	if handOver {
		consent = r.tdb
	}
	for _, z := range fixture.Zones {
		pods := kwokenv.Pods{Namespace: f.NS, App: r.app, Labels: map[string]string{"zone": z}, NodeLabel: [2]string{fixture.PoolLabel, f.Name}, Zone: z}
		sts := kwokenv.OnDeleteStatefulSet(pods, r.app+"-"+z, int32(r.perZone), consent)
		Expect(k8s.Create(ctx, sts)).To(Succeed())
		r.workloads = append(r.workloads, &appsv1.StatefulSet{})
		r.names = append(r.names, sts.Name)
	}
	f.WaitPodsReady(ctx, r.app, 3*r.perZone)
	r.createTDB(ctx, maxUnavailable, rollout)
	return r
}

// createTDB creates the budget (topologyKey zone) and waits until its
// status counts every pod and, with every workload listed, reports the
// rollout (complete, for workloads handed over).
func (r *rolloutRun) createTDB(ctx context.Context, maxUnavailable int32, rollout policyv1alpha1.RolloutSpec) {
	spec := tdbSpec(r.app)
	spec.TopologyKey = kwokenv.ZoneKey
	spec.MaxUnavailable = ptr.To(intstr.FromInt32(maxUnavailable))
	spec.Rollout = &rollout
	r.f.CreateTDB(ctx, r.tdb, spec)
	n := int32(3 * r.perZone)
	allowed := 3 * min(maxUnavailable, int32(r.perZone))
	r.f.waitTDB(ctx, r.tdb, tdbWant{Expected: n, Healthy: n, Allowed: allowed, Domains: fixture.Zones})
	By("before any change the operator lists the workloads and reports the rollout complete")
	Eventually(ctx, func(g Gomega) {
		tdb := r.f.getTDB(ctx, r.tdb)
		g.Expect(tdb.Status.Rollout).NotTo(BeNil(), fmtRollout(tdb))
		var names []string
		for _, w := range tdb.Status.Rollout.Workloads {
			names = append(names, w.Name)
			g.Expect(w.UpdateStrategy).To(Equal("OnDelete"), fmtRollout(tdb))
		}
		g.Expect(names).To(ConsistOf(r.names), fmtRollout(tdb))
		c := meta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionRolloutComplete)
		g.Expect(c).NotTo(BeNil(), fmtRollout(tdb))
		if r.handedOver {
			g.Expect(c.Status).To(Equal(metav1.ConditionTrue), fmtRollout(tdb))
		}
	}).WithTimeout(time.Minute).Should(Succeed())
	r.hist = r.f.recordPods(ctx, revisionLabel)
	r.w = r.f.watch(r.app, fixture.FixedExpected(r.perZone))
}

// outdated tells whether a pod revision was outdated by the last change.
func (r *rolloutRun) outdated(rev string) bool { return r.old.has(rev) }

// change sets (or, for nil values, removes) pod template annotations of
// every workload: a new revision to roll out.
func (r *rolloutRun) change(ctx context.Context, annotations map[string]*string) {
	r.changeOneByOne(ctx, r.names, 0, annotations)
}

// changeOneByOne changes the pod template of the workloads named, in that
// order, gap apart, as kubectl apply of several files, a Helm upgrade or a
// GitOps sync does.
func (r *rolloutRun) changeOneByOne(ctx context.Context, names []string, gap time.Duration, annotations map[string]*string) {
	r.old = r.f.revisions(ctx, r.app, revisionLabel)
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{"annotations": annotations}}}})
	Expect(err).NotTo(HaveOccurred())
	r.changedSeq = r.hist.Seq()
	r.changedAt = time.Now()
	for i, name := range names {
		if i > 0 && gap > 0 {
			select {
			case <-ctx.Done():
				Fail("interrupted between two workload changes")
			case <-time.After(gap):
			}
		}
		k := indexOf(r.names, name)
		Expect(k).To(BeNumerically(">=", 0), "no workload %s", name)
		obj := r.workloads[k].DeepCopyObject().(client.Object)
		obj.SetNamespace(r.f.NS)
		obj.SetName(name)
		Expect(k8s.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
		GinkgoWriter.Printf("t+%.1fs: changed the pod template of %s\n", time.Since(r.changedAt).Seconds(), name)
	}
	r.lastChangedSeq = r.hist.Seq()
	GinkgoWriter.Printf("changed the pod template of %v (outdated revisions %s)\n", names, r.old)
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// handOver annotates every workload with policy.tdb.dev/rollout-budget, as
// their owner would with kubectl annotate.
func (r *rolloutRun) handOver(ctx context.Context) {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		policyv1alpha1.RolloutBudgetAnnotation: r.tdb,
	}}})
	Expect(err).NotTo(HaveOccurred())
	for i, w := range r.workloads {
		obj := w.DeepCopyObject().(client.Object)
		obj.SetNamespace(r.f.NS)
		obj.SetName(r.names[i])
		Expect(k8s.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch))).To(Succeed())
	}
	r.handedOver = true
	GinkgoWriter.Printf("handed %v over to budget %s\n", r.names, r.tdb)
}

// setPaused sets spec.rollout.paused.
func (r *rolloutRun) setPaused(ctx context.Context, paused bool) {
	tdb := r.f.getTDB(ctx, r.tdb)
	patch := client.MergeFrom(tdb.DeepCopy())
	tdb.Spec.Rollout.Paused = paused
	Expect(k8s.Patch(ctx, tdb, patch)).To(Succeed())
}

// updatedReady counts, per zone, app's Ready pods at a revision newer than
// the last change's outdated ones.
func (r *rolloutRun) updatedReady(ctx context.Context) map[string]int {
	out := map[string]int{}
	for _, p := range r.f.Pods(ctx, r.app) {
		if kwokenv.PodReady(&p) && !r.outdated(p.Labels[revisionLabel]) {
			out[r.f.zoneOfNode(p.Spec.NodeName)]++
		}
	}
	return out
}

// waitComplete waits until every pod is updated and Ready and the budget
// says so: RolloutComplete True and RolloutProgressing False, both with
// reason AllPodsUpdated, and every domain, listed in order, Complete with
// all its pods updated.
func (r *rolloutRun) waitComplete(ctx context.Context, order []string, timeout time.Duration) {
	By(fmt.Sprintf("waiting for the rollout to complete (domains in the order %v)", order))
	Eventually(ctx, func(g Gomega) {
		per := r.updatedReady(ctx)
		for _, z := range fixture.Zones {
			g.Expect(per[z]).To(Equal(r.perZone), "updated, Ready pods in %s; since the change:%s", z, timeline(r.progress(), fixture.Zones, r.changedAt))
		}
		g.Expect(r.f.Pods(ctx, r.app)).To(HaveLen(3*r.perZone), "pods of %s", r.app)
		tdb := r.f.getTDB(ctx, r.tdb)
		for _, typ := range []string{policyv1alpha1.ConditionRolloutComplete, policyv1alpha1.ConditionRolloutProgressing} {
			c := meta.FindStatusCondition(tdb.Status.Conditions, typ)
			g.Expect(c).NotTo(BeNil(), fmtRollout(tdb))
			want := metav1.ConditionFalse
			if typ == policyv1alpha1.ConditionRolloutComplete {
				want = metav1.ConditionTrue
			}
			g.Expect([]string{string(c.Status), c.Reason}).To(Equal([]string{string(want), policyv1alpha1.ReasonRolloutComplete}), fmtRollout(tdb))
		}
		g.Expect(tdb.Status.Rollout).NotTo(BeNil())
		var names []string
		for _, d := range tdb.Status.Rollout.Domains {
			names = append(names, d.Name)
			g.Expect([]any{d.Phase, d.UpdatedPods, d.TotalPods}).To(Equal([]any{policyv1alpha1.RolloutPhaseComplete, int32(r.perZone), int32(r.perZone)}), fmtRollout(tdb))
		}
		g.Expect(names).To(Equal(order), "status.rollout.domains order: %s", fmtRollout(tdb))
		for _, w := range tdb.Status.Rollout.Workloads {
			g.Expect(w.UpdatedPods).To(Equal(w.TotalPods), fmtRollout(tdb))
		}
	}).WithTimeout(timeout).WithPolling(500 * time.Millisecond).Should(Succeed())
	GinkgoWriter.Printf("rollout complete %s after the change: %s\n", time.Since(r.changedAt).Round(100*time.Millisecond), fmtRollout(r.f.getTDB(ctx, r.tdb)))
}

// progress is the rollout's per-zone progress since the last change.
func (r *rolloutRun) progress() map[string]*zoneProgress {
	return progress(r.hist.Events(), r.app, r.changedSeq, r.outdated, r.perZone)
}

// expectEvents asserts the operator announced each domain, naming it, and
// the end of the rollout.
func (r *rolloutRun) expectEvents(ctx context.Context, order []string) {
	Eventually(ctx, func(g Gomega) {
		var notes []string
		for _, e := range r.f.tdbEvents(ctx, r.tdb, policyv1alpha1.EventReasonRolloutDomainStarted) {
			notes = append(notes, e.Note)
		}
		for _, z := range order {
			g.Expect(notes).To(ContainElement(ContainSubstring(z)), "no %s event names %s", policyv1alpha1.EventReasonRolloutDomainStarted, z)
		}
		g.Expect(r.f.tdbEvents(ctx, r.tdb, policyv1alpha1.EventReasonRolloutComplete)).NotTo(BeEmpty(), "no %s event", policyv1alpha1.EventReasonRolloutComplete)
	}).WithTimeout(30 * time.Second).Should(Succeed())
}

// expectZonesInOrder asserts zones were updated strictly one after the
// other: every zone had all its outdated pods replaced, and no outdated pod
// of a zone started to leave before every pod of the zone before it was
// updated and Ready.
func expectZonesInOrder(p map[string]*zoneProgress, order []string, perZone int, report string) {
	for i, z := range order {
		zp := p[z]
		Expect(zp).NotTo(BeNil(), "zone %s was not updated: %s", z, report)
		Expect(zp.Replaced).To(Equal(perZone), "outdated pods replaced in %s: %s", z, report)
		Expect(zp.Done).NotTo(BeZero(), "zone %s never had all its pods updated and Ready: %s", z, report)
		if i > 0 {
			prev := p[order[i-1]]
			Expect(zp.FirstLeave).To(BeNumerically(">", prev.Done),
				"an outdated pod of %s left before %s was done: %s", z, order[i-1], report)
		}
	}
}

// rolloutDomain is the budget's rollout status of one domain, nil if absent.
func rolloutDomain(tdb *policyv1alpha1.TopologyDisruptionBudget, name string) *policyv1alpha1.RolloutDomainStatus {
	if tdb.Status.Rollout == nil {
		return nil
	}
	for i := range tdb.Status.Rollout.Domains {
		if tdb.Status.Rollout.Domains[i].Name == name {
			return &tdb.Status.Rollout.Domains[i]
		}
	}
	return nil
}

// fmtRollout is a budget's status and its rollout on one line.
func fmtRollout(tdb *policyv1alpha1.TopologyDisruptionBudget) string {
	var b strings.Builder
	b.WriteString(fmtTDB(tdb))
	if ro := tdb.Status.Rollout; ro != nil {
		fmt.Fprintf(&b, " rollout: current=%q domains=[", ro.CurrentDomain)
		for i, d := range ro.Domains {
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%s:%s,%d/%d", d.Name, d.Phase, d.UpdatedPods, d.TotalPods)
		}
		b.WriteString("] workloads=[")
		for i, w := range ro.Workloads {
			if i > 0 {
				b.WriteString(" ")
			}
			fmt.Fprintf(&b, "%s/%s:%s,rev=%s,%d/%d,by=%q", w.Kind, w.Name, w.UpdateStrategy, w.UpdateRevision, w.UpdatedPods, w.TotalPods, w.DrivenBy)
		}
		b.WriteString("]")
	} else {
		b.WriteString(" rollout: none")
	}
	for _, typ := range []string{policyv1alpha1.ConditionRolloutProgressing, policyv1alpha1.ConditionRolloutComplete} {
		if c := meta.FindStatusCondition(tdb.Status.Conditions, typ); c != nil {
			fmt.Fprintf(&b, " %s=%s/%s %q", c.Type, c.Status, c.Reason, c.Message)
		}
	}
	return b.String()
}

// tdbEvents lists the events with reason about the budget name, oldest
// first.
func (f *pool) tdbEvents(ctx context.Context, name, reason string) []eventsv1.Event {
	list, err := cs.EventsV1().Events(f.NS).List(ctx, metav1.ListOptions{})
	Expect(err).NotTo(HaveOccurred())
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "TopologyDisruptionBudget" && e.Regarding.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp) })
	return out
}

// ---------------------------------------------------------------------------
// pod history
// podEventKind is what happened to a pod in a podHistory.
type podEventKind string

const (
	podCreated podEventKind = "created"
	podReady   podEventKind = "ready"
	// podLeaving: the pod got a deletionTimestamp (or vanished without one
	// being seen).
	podLeaving podEventKind = "leaving"
)

// podEvent is one step of a pod, as one watch saw it.
type podEvent struct {
	// Seq orders the events: a single watch delivers a namespace's pod
	// changes in the order the API server stored them, so Seq is their
	// true order (At, the local time the watch delivered them, is for
	// reports).
	Seq  int
	At   time.Time
	Kind podEventKind
	UID  types.UID
	Name string
	App  string
	// Zone is the zone of the pod's node, "" while it is not scheduled.
	Zone string
	// Revision is the value of the history's revision label on the pod.
	Revision string
	// Cost is the pod's pod-deletion-cost annotation ("" without one).
	Cost string
	// CheapestLeft, on a leaving event, is the lowest deletion cost, per
	// zone, among the other pods of the same app and revision that are not
	// going away: what the ReplicaSet controller could have taken instead.
	CheapestLeft map[string]int
}

// podHistory records, from one informer on a namespace's pods, when each
// pod appeared, became Ready and started to go away.
type podHistory struct {
	revisionLabel string
	zoneOf        func(node string) string
	start         time.Time

	mu     sync.Mutex
	events []podEvent
	seen   map[types.UID]map[podEventKind]bool
	// live is the latest version of each pod not deleted yet.
	live map[types.UID]*corev1.Pod
	stop chan struct{}
	once sync.Once
}

// recordPods starts recording the pods of the spec's namespace; the pods'
// revisions are read from revisionLabel. It stops with the spec.
func (f *pool) recordPods(ctx context.Context, revisionLabel string) *podHistory {
	h := &podHistory{
		revisionLabel: revisionLabel, zoneOf: f.zoneOfNode, start: time.Now(),
		seen: map[types.UID]map[podEventKind]bool{}, live: map[types.UID]*corev1.Pod{}, stop: make(chan struct{}),
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(f.NS))
	inf := factory.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { h.observe(o, false) },
		UpdateFunc: func(_, o any) { h.observe(o, false) },
		DeleteFunc: func(o any) {
			if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = d.Obj
			}
			h.observe(o, true)
		},
	})
	Expect(err).NotTo(HaveOccurred())
	factory.Start(h.stop)
	DeferCleanup(h.Stop)
	Expect(cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)).To(BeTrue(), "the pod informer did not sync")
	return h
}

// Stop ends the recording.
func (h *podHistory) Stop() { h.once.Do(func() { close(h.stop) }) }

func (h *podHistory) observe(o any, deleted bool) {
	p, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	kinds := h.seen[p.UID]
	if kinds == nil {
		kinds = map[podEventKind]bool{}
		h.seen[p.UID] = kinds
	}
	add := func(k podEventKind) {
		if kinds[k] {
			return
		}
		kinds[k] = true
		zone := ""
		if p.Spec.NodeName != "" {
			zone = h.zoneOf(p.Spec.NodeName)
		}
		e := podEvent{
			Seq: len(h.events) + 1, At: time.Now(), Kind: k, UID: p.UID, Name: p.Name,
			App: p.Labels["app"], Zone: zone, Revision: p.Labels[h.revisionLabel],
			Cost: p.Annotations[deletionCostAnnotation],
		}
		if k == podLeaving {
			e.CheapestLeft = h.cheapestLeft(p)
		}
		h.events = append(h.events, e)
	}
	if deleted {
		delete(h.live, p.UID)
	} else {
		h.live[p.UID] = p
	}
	add(podCreated)
	if kwokenv.PodReady(p) {
		add(podReady)
	}
	if deleted || p.DeletionTimestamp != nil {
		add(podLeaving)
	}
}

// cheapestLeft is the lowest deletion cost per zone among the live pods of
// p's app and revision other than p that are not going away.
func (h *podHistory) cheapestLeft(p *corev1.Pod) map[string]int {
	out := map[string]int{}
	for uid, o := range h.live {
		if uid == p.UID || o.DeletionTimestamp != nil || o.Spec.NodeName == "" ||
			o.Labels["app"] != p.Labels["app"] || o.Labels[h.revisionLabel] != p.Labels[h.revisionLabel] {
			continue
		}
		c, err := strconv.Atoi(o.Annotations[deletionCostAnnotation])
		if err != nil {
			continue
		}
		z := h.zoneOf(o.Spec.NodeName)
		if cur, ok := out[z]; !ok || c < cur {
			out[z] = c
		}
	}
	return out
}

// Events is a copy of what was recorded so far.
func (h *podHistory) Events() []podEvent {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]podEvent(nil), h.events...)
}

// Seq is the sequence number of the last event recorded so far.
func (h *podHistory) Seq() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.events)
}

// zoneOfNode is the zone of one of the spec's nodes, "" for any other.
func (f *pool) zoneOfNode(node string) string {
	for z, nodes := range f.NodesByZone() {
		for _, n := range nodes {
			if n == node {
				return z
			}
		}
	}
	return ""
}

// zoneProgress is how one zone went through a rollout, in podHistory terms.
type zoneProgress struct {
	Zone string
	// FirstLeave is the Seq of the first outdated pod of the zone to start
	// going away (0: none did); Replaced counts them.
	FirstLeave int
	Replaced   int
	// Done is the Seq at which the zone first held want updated, Ready pods
	// that are not going away (0: never).
	Done                 int
	FirstLeaveAt, DoneAt time.Time
	// LongestGap is the longest time between two successive outdated pods
	// of the zone starting to leave (a pod start-up, 2 s, plus the
	// operator's reaction).
	LongestGap  time.Duration
	lastLeaveAt time.Time
}

// progress replays app's events after seq `from` and tells, per zone, when
// its outdated pods started to leave and when it was fully updated. A pod
// is outdated when outdated(its revision) holds.
func progress(events []podEvent, app string, from int, outdated func(string) bool, want int) map[string]*zoneProgress {
	type state struct {
		zone, rev      string
		ready, leaving bool
	}
	pods := map[types.UID]*state{}
	out := map[string]*zoneProgress{}
	get := func(z string) *zoneProgress {
		if out[z] == nil {
			out[z] = &zoneProgress{Zone: z}
		}
		return out[z]
	}
	for _, e := range events {
		if e.App != app {
			continue
		}
		s := pods[e.UID]
		if s == nil {
			s = &state{}
			pods[e.UID] = s
		}
		s.rev = e.Revision
		if e.Zone != "" {
			s.zone = e.Zone
		}
		switch e.Kind {
		case podReady:
			s.ready = true
		case podLeaving:
			s.leaving = true
		}
		if e.Seq <= from || s.zone == "" {
			continue
		}
		zp := get(s.zone)
		if e.Kind == podLeaving && outdated(s.rev) {
			zp.Replaced++
			if zp.FirstLeave == 0 {
				zp.FirstLeave, zp.FirstLeaveAt = e.Seq, e.At
			} else {
				zp.LongestGap = max(zp.LongestGap, e.At.Sub(zp.lastLeaveAt))
			}
			zp.lastLeaveAt = e.At
		}
		if zp.Done == 0 {
			n := 0
			for _, p := range pods {
				if p.zone == s.zone && p.ready && !p.leaving && !outdated(p.rev) {
					n++
				}
			}
			if n >= want {
				zp.Done, zp.DoneAt = e.Seq, e.At
			}
		}
	}
	return out
}

// timeline describes per-zone progress relative to t0, zones in order.
func timeline(p map[string]*zoneProgress, order []string, t0 time.Time) string {
	var b strings.Builder
	for _, z := range order {
		zp := p[z]
		if zp == nil {
			fmt.Fprintf(&b, "\n    %s: nothing happened", z)
			continue
		}
		at := func(seq int, t time.Time) string {
			if seq == 0 {
				return "never"
			}
			return fmt.Sprintf("#%d t+%.1fs", seq, t.Sub(t0).Seconds())
		}
		fmt.Fprintf(&b, "\n    %s: first outdated pod leaves %s, %d replaced (longest gap between two %.1fs), all updated and Ready %s",
			z, at(zp.FirstLeave, zp.FirstLeaveAt), zp.Replaced, zp.LongestGap.Seconds(), at(zp.Done, zp.DoneAt))
	}
	return b.String()
}

// leavings lists the outdated pods of app that started to leave after seq
// `from`, in order.
func leavings(events []podEvent, app string, from int, outdated func(string) bool) []podEvent {
	var out []podEvent
	for _, e := range events {
		if e.Seq > from && e.App == app && e.Kind == podLeaving && outdated(e.Revision) {
			out = append(out, e)
		}
	}
	return out
}

// revisionSet is a set of revision label values.
type revisionSet map[string]bool

func (s revisionSet) has(rev string) bool { return s[rev] }

func (s revisionSet) String() string {
	out := make([]string, 0, len(s))
	for r := range s {
		out = append(out, r)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// revisions is the set of values of label on app's pods now.
func (f *pool) revisions(ctx context.Context, app, label string) revisionSet {
	out := revisionSet{}
	for _, p := range f.Pods(ctx, app) {
		out[p.Labels[label]] = true
	}
	return out
}
