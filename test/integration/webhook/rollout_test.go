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
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

const (
	oldRevision = "db-rev-1"
	newRevision = "db-rev-2"
)

// rolloutWorld is one OnDelete StatefulSet "db" of two pods per zone,
// labelled app=ingester. No StatefulSet controller runs in envtest: the test
// plays it, replacing each pod the operator evicted (the API server leaves
// it terminating, since no kubelet confirms the deletion) with a pod of the
// new revision.
type rolloutWorld struct {
	ns, app string
	sts     *appsv1.StatefulSet
	nodes   map[string]string

	mu        sync.Mutex
	zoneOf    map[string]string
	seen      map[string]time.Time // when a pod was first seen terminating
	evictions []string             // zones, in eviction order
	// maxUnavailable is the most pods of one zone seen unavailable
	// (terminating, missing or not Ready) at once; maxZones the most zones
	// with an unavailable pod at once.
	maxUnavailable, maxZones int
	// readyReplacements: replacements become Ready (else they never do).
	readyReplacements bool
}

// newRolloutWorld makes the world in a new namespace; the StatefulSet hands
// its updates over to the budget rolloutBudget (its
// policy.tdb.dev/rollout-budget annotation), none for "".
func newRolloutWorld(rolloutBudget string) *rolloutWorld {
	return newRolloutWorldIn(newNamespace(), "ingester", "db", rolloutBudget)
}

// newRolloutWorldIn makes the world in namespace ns: a StatefulSet sts of
// pods labelled app.
func newRolloutWorldIn(ns, app, sts, rolloutBudget string) *rolloutWorld {
	w := &rolloutWorld{
		ns: ns, app: app, nodes: map[string]string{}, zoneOf: map[string]string{}, seen: map[string]time.Time{},
		readyReplacements: true,
	}
	for _, z := range zones {
		name := w.ns + "-" + sts + "-" + z
		_, err := framework.Node(ctx, k8s, name, map[string]string{framework.ZoneKey: z})
		Expect(err).NotTo(HaveOccurred())
		w.nodes[z] = name
	}
	b := builders.StatefulSet(sts).Namespace(w.ns).Replicas(6).PodLabels(map[string]string{"app": app}).OnDelete()
	if rolloutBudget != "" {
		b.Annotation(policyv1alpha1.RolloutBudgetAnnotation, rolloutBudget)
	}
	set := b.Obj()
	Expect(k8s.Create(ctx, set)).To(Succeed())
	w.sts = set
	w.setRevision(oldRevision)
	for i := range 6 {
		z := zones[i%3]
		w.zoneOf[fmt.Sprintf("%s-%d", sts, i)] = z
		w.createPod(fmt.Sprintf("%s-%d", sts, i), oldRevision, true)
	}
	return w
}

// handOver sets (or, for "", removes) the StatefulSet's
// policy.tdb.dev/rollout-budget annotation, as its owner would with
// kubectl annotate.
func (w *rolloutWorld) handOver(rolloutBudget string) {
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(w.sts), w.sts)).To(Succeed())
	patch := client.MergeFrom(w.sts.DeepCopy())
	if w.sts.Annotations == nil {
		w.sts.Annotations = map[string]string{}
	}
	w.sts.Annotations[policyv1alpha1.RolloutBudgetAnnotation] = rolloutBudget
	if rolloutBudget == "" {
		delete(w.sts.Annotations, policyv1alpha1.RolloutBudgetAnnotation)
	}
	Expect(k8s.Patch(ctx, w.sts, patch)).To(Succeed())
}

// setRevision publishes the update revision as the StatefulSet controller
// would after a template change.
func (w *rolloutWorld) setRevision(rev string) {
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(w.sts), w.sts)).To(Succeed())
	w.sts.Status = appsv1.StatefulSetStatus{
		ObservedGeneration: w.sts.Generation, Replicas: 6,
		CurrentRevision: oldRevision, UpdateRevision: rev,
	}
	Expect(k8s.Status().Update(ctx, w.sts)).To(Succeed())
}

func (w *rolloutWorld) createPod(name, rev string, ready bool) {
	_, err := framework.Pod(ctx, k8s, w.ns, framework.PodSpec{
		Name: name, Node: w.nodes[w.zoneOf[name]], Owner: w.sts, Ready: ready,
		Labels: map[string]string{"app": w.app, appsv1.ControllerRevisionHashLabelKey: rev},
	})
	Expect(err).NotTo(HaveOccurred())
}

// step replaces the pods terminating for half a second (the time a kubelet
// takes to stop them) with pods of the new revision, makes replacements
// Ready half a second after they were created (when they can start), and
// records what it saw.
func (w *rolloutWorld) step() {
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(w.ns), client.MatchingLabels{"app": w.app})).To(Succeed())
	unavailable := map[string]int{}
	present := map[string]int{}
	var gone []corev1.Pod
	w.mu.Lock()
	started := w.readyReplacements
	w.mu.Unlock()
	for i := range pods.Items {
		p := &pods.Items[i]
		zone := w.zoneOf[p.Name]
		present[zone]++
		if p.DeletionTimestamp == nil {
			if !podReady(p) {
				unavailable[zone]++
				if started && p.Labels[appsv1.ControllerRevisionHashLabelKey] == newRevision &&
					time.Since(p.CreationTimestamp.Time) >= 500*time.Millisecond {
					Expect(framework.SetReady(ctx, k8s, p, true)).To(Succeed())
				}
			}
			continue
		}
		unavailable[zone]++
		key := string(p.UID)
		if _, ok := w.seen[key]; !ok {
			w.seen[key] = time.Now()
		}
		if time.Since(w.seen[key]) >= 500*time.Millisecond {
			gone = append(gone, *p)
		}
	}
	for _, z := range zones {
		unavailable[z] += 2 - present[z] // evicted, not recreated yet
		if unavailable[z] == 0 {
			delete(unavailable, z)
		}
	}
	w.mu.Lock()
	for _, n := range unavailable {
		w.maxUnavailable = max(w.maxUnavailable, n)
	}
	w.maxZones = max(w.maxZones, len(unavailable))
	w.mu.Unlock()
	for i := range gone {
		p := &gone[i]
		w.mu.Lock()
		w.evictions = append(w.evictions, w.zoneOf[p.Name])
		w.mu.Unlock()
		Expect(client.IgnoreNotFound(k8s.Delete(ctx, p, client.GracePeriodSeconds(0)))).To(Succeed())
		Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(p), &corev1.Pod{}) }).ShouldNot(Succeed())
		w.createPod(p.Name, newRevision, false)
	}
}

// run plays the StatefulSet controller until stop is closed.
func (w *rolloutWorld) run(stop <-chan struct{}) {
	defer GinkgoRecover()
	for {
		select {
		case <-stop:
			return
		case <-time.After(100 * time.Millisecond):
			w.step()
		}
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (w *rolloutWorld) evicted() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.evictions...)
}

// startReplacements makes the replacements start after all (the image was
// fixed): the next steps make them Ready.
func (w *rolloutWorld) startReplacements() {
	w.mu.Lock()
	w.readyReplacements = true
	w.mu.Unlock()
}

// maxima are the most unavailable pods seen in one zone, and the most zones
// with an unavailable pod, at once.
func (w *rolloutWorld) maxima() (perZone, zonesAtOnce int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.maxUnavailable, w.maxZones
}

func (w *rolloutWorld) podsAt(rev string) int {
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(w.ns), client.MatchingLabels{"app": w.app})).To(Succeed())
	n := 0
	for _, p := range pods.Items {
		if p.Labels[appsv1.ControllerRevisionHashLabelKey] == rev && p.DeletionTimestamp == nil {
			n++
		}
	}
	return n
}

func rolloutCondition(t *policyv1alpha1.TopologyDisruptionBudget, typ string) func() metav1.Condition {
	return func() metav1.Condition {
		if c := apimeta.FindStatusCondition(get(t).Status.Conditions, typ); c != nil {
			return *c
		}
		return metav1.Condition{}
	}
}

func phases(t *policyv1alpha1.TopologyDisruptionBudget) func() []string {
	return func() []string {
		var out []string
		if r := get(t).Status.Rollout; r != nil {
			for _, d := range r.Domains {
				out = append(out, fmt.Sprintf("%s %s %d/%d", d.Name, d.Phase, d.UpdatedPods, d.TotalPods))
			}
		}
		return out
	}
}

func withRollout(strategy policyv1alpha1.RolloutStrategyType, mutate func(*policyv1alpha1.RolloutSpec)) func(*policyv1alpha1.TopologyDisruptionBudgetSpec) {
	return func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
		s.Rollout = &policyv1alpha1.RolloutSpec{Strategy: strategy}
		if mutate != nil {
			mutate(s.Rollout)
		}
	}
}

var _ = Describe("Rollouts of OnDelete StatefulSets driven through the Eviction API", func() {
	It("updates domain by domain in domainOrder, one pod per zone at a time, and reports completion", func() {
		w := newRolloutWorld("db")
		tdb := newBudget(w.ns, "db", withRollout(policyv1alpha1.DomainByDomain, func(r *policyv1alpha1.RolloutSpec) {
			r.DomainOrder = []string{"zone-b", "zone-c"}
		}))
		Eventually(rolloutCondition(tdb, policyv1alpha1.ConditionRolloutComplete)).Should(HaveField("Status", metav1.ConditionTrue))
		Consistently(w.evicted, "1s").Should(BeEmpty(), "nothing is outdated yet")

		stop := make(chan struct{})
		defer close(stop)
		go w.run(stop)
		w.setRevision(newRevision)

		Eventually(func() int { return w.podsAt(newRevision) }, "60s").Should(Equal(6))
		Eventually(rolloutCondition(tdb, policyv1alpha1.ConditionRolloutComplete)).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", policyv1alpha1.ReasonRolloutComplete)))
		Expect(w.evicted()).To(Equal([]string{"zone-b", "zone-b", "zone-c", "zone-c", "zone-a", "zone-a"}))
		perZone, zonesAtOnce := w.maxima()
		Expect(perZone).To(Equal(1), "maxUnavailable 1 per zone")
		Expect(zonesAtOnce).To(Equal(1), "DomainByDomain disrupts one zone at a time")
		Expect(phases(tdb)()).To(Equal([]string{"zone-b Complete 2/2", "zone-c Complete 2/2", "zone-a Complete 2/2"}))
		ro := get(tdb).Status.Rollout
		Expect(ro.Workloads).To(ConsistOf(And(
			HaveField("Kind", "StatefulSet"), HaveField("Name", "db"), HaveField("UpdateStrategy", "OnDelete"),
			HaveField("UpdateRevision", newRevision), HaveField("UpdatedPods", int32(6)), HaveField("TotalPods", int32(6)),
			HaveField("NextScaleDownPod", "db-5"), HaveField("NextScaleDownDomain", "zone-c"))))
		Expect(eventReasons(w.ns, "db")).To(ContainElements(
			policyv1alpha1.EventReasonRolloutDomainStarted, policyv1alpha1.EventReasonRolloutComplete))
	})

	It("updates every domain at once under AllDomains, each within its budget", func() {
		w := newRolloutWorld("db")
		tdb := newBudget(w.ns, "db", withRollout(policyv1alpha1.AllDomains, nil))
		Eventually(rolloutCondition(tdb, policyv1alpha1.ConditionRolloutComplete)).Should(HaveField("Status", metav1.ConditionTrue))
		stop := make(chan struct{})
		defer close(stop)
		go w.run(stop)
		w.setRevision(newRevision)

		Eventually(func() int { return w.podsAt(newRevision) }, "60s").Should(Equal(6))
		Eventually(rolloutCondition(tdb, policyv1alpha1.ConditionRolloutComplete)).Should(HaveField("Status", metav1.ConditionTrue))
		perZone, zonesAtOnce := w.maxima()
		Expect(perZone).To(Equal(1), "maxUnavailable 1 per zone")
		Expect(zonesAtOnce).To(Equal(3), "AllDomains works in every zone at once")
		Expect(w.evicted()).To(ConsistOf("zone-a", "zone-a", "zone-b", "zone-b", "zone-c", "zone-c"))
	})

	It("lets only the budget the workload names drive it, of two budgets with rollout that cover it, not the older one", func() {
		w := newRolloutWorld("second")
		first := newBudget(w.ns, "first", withRollout(policyv1alpha1.AllDomains, nil))
		Eventually(func() string {
			if ro := get(first).Status.Rollout; ro != nil && len(ro.Workloads) == 1 {
				return ro.Workloads[0].Name
			}
			return ""
		}).Should(Equal("db"))
		second := newBudget(w.ns, "second", withRollout(policyv1alpha1.DomainByDomain, nil))
		for _, t := range []*policyv1alpha1.TopologyDisruptionBudget{first, second} {
			Eventually(func() string {
				if ro := get(t).Status.Rollout; ro != nil && len(ro.Workloads) == 1 {
					return ro.Workloads[0].DrivenBy
				}
				return ""
			}).Should(Equal("second"), "drivenBy in the status of %s", t.Name)
		}
		Eventually(rolloutCondition(first, policyv1alpha1.ConditionRolloutComplete)).Should(
			HaveField("Reason", policyv1alpha1.ReasonNoDrivenWorkloads))

		stop := make(chan struct{})
		defer close(stop)
		go w.run(stop)
		w.setRevision(newRevision)
		Eventually(func() int { return w.podsAt(newRevision) }, "60s").Should(Equal(6))
		Eventually(rolloutCondition(second, policyv1alpha1.ConditionRolloutComplete)).Should(HaveField("Status", metav1.ConditionTrue))
		_, zonesAtOnce := w.maxima()
		Expect(zonesAtOnce).To(Equal(1), "only the DomainByDomain budget the workload names drives; AllDomains would disrupt every zone")
		Expect(w.evicted()).To(Equal([]string{"zone-a", "zone-a", "zone-b", "zone-b", "zone-c", "zone-c"}))
	})

	It("updates no workload that does not hand its updates over to the budget, says how to, and updates it once it does", func() {
		w := newRolloutWorld("")
		tdb := newBudget(w.ns, "db", withRollout(policyv1alpha1.DomainByDomain, nil))
		notHandedOver := func(why string) {
			GinkgoHelper()
			Eventually(func(g Gomega) {
				ro := get(tdb).Status.Rollout
				g.Expect(ro).NotTo(BeNil())
				g.Expect(ro.Workloads).To(ConsistOf(And(
					HaveField("Name", "db"), HaveField("UpdateStrategy", "OnDelete"), HaveField("DrivenBy", ""),
					HaveField("Message", And(ContainSubstring(why),
						ContainSubstring("kubectl annotate statefulset db policy.tdb.dev/rollout-budget=db"))))))
				for _, typ := range []string{policyv1alpha1.ConditionRolloutProgressing, policyv1alpha1.ConditionRolloutComplete} {
					g.Expect(rolloutCondition(tdb, typ)()).To(And(
						HaveField("Status", metav1.ConditionFalse), HaveField("Reason", policyv1alpha1.ReasonWorkloadNotHandedOver),
						HaveField("Message", ContainSubstring("StatefulSet db"))))
				}
			}).Should(Succeed())
		}
		stop := make(chan struct{})
		defer close(stop)
		go w.run(stop)
		w.setRevision(newRevision)

		By("without the annotation")
		Consistently(w.evicted, "3s").Should(BeEmpty(), "the workload's owner did not hand it over")
		notHandedOver("names no budget")

		By("naming a budget that does not exist")
		w.handOver("nobody")
		notHandedOver("names budget nobody, which does not exist")
		Consistently(w.evicted, "2s").Should(BeEmpty())

		By("naming another budget, which has no spec.rollout")
		newBudget(w.ns, "other", nil)
		w.handOver("other")
		notHandedOver("names budget other, which has no spec.rollout")
		Consistently(w.evicted, "2s").Should(BeEmpty())

		By("naming this budget: the rollout starts")
		w.handOver("db")
		Eventually(func() int { return w.podsAt(newRevision) }, "60s").Should(Equal(6))
		Eventually(rolloutCondition(tdb, policyv1alpha1.ConditionRolloutComplete)).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", policyv1alpha1.ReasonRolloutComplete)))
		Expect(w.evicted()).To(Equal([]string{"zone-a", "zone-a", "zone-b", "zone-b", "zone-c", "zone-c"}))
		Expect(get(tdb).Status.Rollout.Workloads).To(ConsistOf(And(HaveField("DrivenBy", "db"), HaveField("Message", ""))))
	})

	It("drives no rollout for a budget in the operator's own namespace, where the webhook lets every eviction pass", func() {
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: framework.ExemptNamespace}}))).To(Succeed())
		w := newRolloutWorldIn(framework.ExemptNamespace, "own-db", "own-db", "own")
		tdb := newBudget(w.ns, "own", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			withRollout(policyv1alpha1.DomainByDomain, nil)(s)
			s.Selector = policyv1alpha1.SetAsLabelSelector(map[string]string{"app": w.app})
		})
		DeferCleanup(func() {
			// The namespace is shared with other specs: leave nothing of
			// this one behind.
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, tdb))).To(Succeed())
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, w.sts))).To(Succeed())
			Expect(k8s.DeleteAllOf(ctx, &corev1.Pod{}, client.InNamespace(w.ns), client.MatchingLabels{"app": w.app},
				client.GracePeriodSeconds(0))).To(Succeed())
		})
		stop := make(chan struct{})
		defer close(stop)
		go w.run(stop)
		w.setRevision(newRevision)

		Consistently(w.evicted, "5s").Should(BeEmpty(), "no eviction in the operator's namespace: the webhook would let every one pass")
		Expect(w.podsAt(oldRevision)).To(Equal(6))
		for _, typ := range []string{policyv1alpha1.ConditionRolloutProgressing, policyv1alpha1.ConditionRolloutComplete} {
			Eventually(rolloutCondition(tdb, typ)).Should(And(
				HaveField("Status", metav1.ConditionFalse), HaveField("Reason", policyv1alpha1.ReasonNotEnforced),
				HaveField("Message", ContainSubstring(framework.ExemptNamespace))))
		}
	})

	It("evicts nothing while paused and resumes where it stopped", func() {
		w := newRolloutWorld("db")
		tdb := newBudget(w.ns, "db", withRollout(policyv1alpha1.DomainByDomain, func(r *policyv1alpha1.RolloutSpec) { r.Paused = true }))
		stop := make(chan struct{})
		defer close(stop)
		go w.run(stop)
		w.setRevision(newRevision)

		Eventually(rolloutCondition(tdb, policyv1alpha1.ConditionRolloutProgressing)).Should(HaveField("Reason", policyv1alpha1.ReasonRolloutPaused))
		Expect(phases(tdb)()).To(Equal([]string{"zone-a Paused 0/2", "zone-b Pending 0/2", "zone-c Pending 0/2"}))
		Consistently(w.evicted, "3s").Should(BeEmpty())

		t := get(tdb)
		t.Spec.Rollout.Paused = false
		Expect(k8s.Update(ctx, t)).To(Succeed())
		Eventually(func() int { return w.podsAt(newRevision) }, "60s").Should(Equal(6))
		Eventually(rolloutCondition(tdb, policyv1alpha1.ConditionRolloutComplete)).Should(HaveField("Status", metav1.ConditionTrue))
		Expect(w.evicted()).To(Equal([]string{"zone-a", "zone-a", "zone-b", "zone-b", "zone-c", "zone-c"}))
	})

	It("picks up a spec change mid-rollout: DomainByDomain switched to AllDomains", func() {
		w := newRolloutWorld("db")
		w.readyReplacements = false // holds zone-a until the switch
		tdb := newBudget(w.ns, "db", withRollout(policyv1alpha1.DomainByDomain, nil))
		stop := make(chan struct{})
		defer close(stop)
		go w.run(stop)
		w.setRevision(newRevision)
		Eventually(phases(tdb)).Should(Equal([]string{"zone-a Progressing 0/2", "zone-b Pending 0/2", "zone-c Pending 0/2"}))
		Eventually(w.evicted).Should(Equal([]string{"zone-a"}))
		Consistently(w.evicted, "2s").Should(Equal([]string{"zone-a"}))

		t := get(tdb)
		t.Spec.Rollout.Strategy = policyv1alpha1.AllDomains
		Expect(k8s.Update(ctx, t)).To(Succeed())
		// zone-a's replacement is still not Ready: AllDomains goes on in the
		// other zones, each within its own budget.
		Eventually(func() []string { return w.evicted() }).Should(ConsistOf("zone-a", "zone-b", "zone-c"))
		w.startReplacements()
		Eventually(func() int { return w.podsAt(newRevision) }, "60s").Should(Equal(6))
		Eventually(rolloutCondition(tdb, policyv1alpha1.ConditionRolloutComplete)).Should(HaveField("Status", metav1.ConditionTrue))
		perZone, _ := w.maxima()
		Expect(perZone).To(Equal(1), "maxUnavailable 1 per zone")
	})

	It("stops in a domain that does not recover within the deadline, says why, and goes on once it recovers", func() {
		w := newRolloutWorld("db")
		w.readyReplacements = false // the new revision does not start
		tdb := newBudget(w.ns, "db", withRollout(policyv1alpha1.DomainByDomain, func(r *policyv1alpha1.RolloutSpec) {
			r.ProgressDeadlineSeconds = ptr.To[int32](3)
		}))
		stop := make(chan struct{})
		defer close(stop)
		go w.run(stop)
		w.setRevision(newRevision)

		Eventually(rolloutCondition(tdb, policyv1alpha1.ConditionRolloutProgressing), "15s").Should(And(
			HaveField("Status", metav1.ConditionFalse),
			HaveField("Reason", policyv1alpha1.ReasonProgressDeadlineExceeded),
			HaveField("Message", And(ContainSubstring("domain zone-a"), ContainSubstring("db-0")))))
		Expect(phases(tdb)()).To(Equal([]string{"zone-a Stalled 0/2", "zone-b Pending 0/2", "zone-c Pending 0/2"}))
		Consistently(w.evicted, "3s").Should(Equal([]string{"zone-a"}), "a stalled rollout evicts nothing more")
		Eventually(func() []string { return eventReasons(w.ns, "db") }).Should(ContainElement(policyv1alpha1.EventReasonRolloutStalled))

		// The replacement starts after all (the image was fixed): the
		// rollout goes on by itself.
		w.startReplacements()
		Eventually(func() int { return w.podsAt(newRevision) }, "60s").Should(Equal(6))
		Eventually(rolloutCondition(tdb, policyv1alpha1.ConditionRolloutComplete)).Should(HaveField("Status", metav1.ConditionTrue))
	})
})

// eventReasons lists the reasons of the events regarding a budget.
func eventReasons(ns, name string) []string {
	var evs eventsv1.EventList
	Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
	var out []string
	for _, e := range evs.Items {
		if e.Regarding.Name == name {
			out = append(out, e.Reason)
		}
	}
	return out
}
