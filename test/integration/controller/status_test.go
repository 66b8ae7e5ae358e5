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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/controllers"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

// row is a domain's numbers as a user reads them in status.
type row struct {
	Name                                string
	Expected, Healthy, Desired, Allowed int32
}

func rowsOf(t *policyv1alpha1.TopologyDisruptionBudget) []row {
	var out []row
	for _, d := range t.Status.Domains {
		out = append(out, row{d.Name, d.ExpectedPods, d.CurrentHealthy, d.DesiredHealthy, d.DisruptionsAllowed})
	}
	return out
}

// zoned is a three-zone world: two nodes per zone and one StatefulSet per
// zone with three Ready pods on its zone's nodes.
type zoned struct {
	ns    string
	nodes map[string][]string // zone -> node names
	sets  map[string]*appsv1.StatefulSet
	pods  map[string][]*corev1.Pod
}

var zones = []string{"zone-a", "zone-b", "zone-c"}

func newZoned(ns string) *zoned {
	w := &zoned{ns: ns, nodes: map[string][]string{}, sets: map[string]*appsv1.StatefulSet{}, pods: map[string][]*corev1.Pod{}}
	for _, z := range zones {
		for i := 0; i < 2; i++ {
			name := fmt.Sprintf("%s-%s-%d", ns, z, i)
			_, err := framework.Node(ctx, k8s, name, map[string]string{zoneKey: z})
			Expect(err).NotTo(HaveOccurred())
			w.nodes[z] = append(w.nodes[z], name)
		}
		labels := map[string]string{"app": "ingester", "zone": z}
		sts, err := framework.StatefulSet(ctx, k8s, ns, "ingester-"+z, 3, labels)
		Expect(err).NotTo(HaveOccurred())
		w.sets[z] = sts
		for i := 0; i < 3; i++ {
			p, err := framework.Pod(ctx, k8s, ns, framework.PodSpec{
				Name: fmt.Sprintf("ingester-%s-%d", z, i), Labels: labels,
				Node: w.nodes[z][i%2], Owner: sts, Ready: true,
			})
			Expect(err).NotTo(HaveOccurred())
			w.pods[z] = append(w.pods[z], p)
		}
	}
	return w
}

func newBudget(ns string, mutate func(*policyv1alpha1.TopologyDisruptionBudgetSpec)) *policyv1alpha1.TopologyDisruptionBudget {
	t := builders.Budget("ingesters").Namespace(ns).MatchLabels(map[string]string{"app": "ingester"}).TopologyKey(zoneKey).
		MaxUnavailable(intstr.FromInt32(1)).Obj()
	if mutate != nil {
		mutate(&t.Spec)
	}
	Expect(k8s.Create(ctx, t)).To(Succeed())
	return t
}

func get(t *policyv1alpha1.TopologyDisruptionBudget) func() *policyv1alpha1.TopologyDisruptionBudget {
	return func() *policyv1alpha1.TopologyDisruptionBudget {
		var out policyv1alpha1.TopologyDisruptionBudget
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(t), &out)).To(Succeed())
		return &out
	}
}

func haveRows(want ...row) OmegaMatcher {
	return WithTransform(rowsOf, Equal(want))
}

func condition(t *policyv1alpha1.TopologyDisruptionBudget) metav1.Condition {
	c := apimeta.FindStatusCondition(t.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed)
	if c == nil {
		return metav1.Condition{}
	}
	return *c
}

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

var _ = Describe("Budget status over three zones", func() {
	var (
		ns string
		w  *zoned
	)
	BeforeEach(func() {
		var err error
		ns, err = framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		w = newZoned(ns)
	})

	It("reports per-zone numbers, the totals, the condition and the observed generation", func() {
		tdb := newBudget(ns, nil)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		got := get(tdb)()
		Expect(got.Status.ExpectedPods).To(Equal(int32(9)))
		Expect(got.Status.CurrentHealthy).To(Equal(int32(9)))
		Expect(got.Status.DisruptionsAllowed).To(Equal(int32(3)))
		Expect(got.Status.DomainCount).To(Equal(int32(3)))
		Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		c := condition(got)
		Expect(c.Status).To(Equal(metav1.ConditionTrue))
		Expect(c.Reason).To(Equal(policyv1alpha1.ReasonSufficientPods))
	})

	It("updates when a pod becomes unready, and again when it recovers", func() {
		tdb := newBudget(ns, nil)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		Expect(framework.SetReady(ctx, k8s, w.pods["zone-a"][0], false)).To(Succeed())
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 2, 2, 0}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		Expect(get(tdb)().Status.DisruptionsAllowed).To(Equal(int32(2)))
		Expect(framework.SetReady(ctx, k8s, w.pods["zone-a"][0], true)).To(Succeed())
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
	})

	It("moves pods with their node when the node's zone label changes", func() {
		tdb := newBudget(ns, nil)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		// Node zone-b-0 carries ingester-zone-b-0 and -2; relabelled into
		// zone-c, the zone-b StatefulSet is spread over two zones and each
		// zone expects the pods scheduled there.
		var n corev1.Node
		Expect(k8s.Get(ctx, client.ObjectKey{Name: w.nodes["zone-b"][0]}, &n)).To(Succeed())
		n.Labels[zoneKey] = "zone-c"
		Expect(k8s.Update(ctx, &n)).To(Succeed())
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 1, 1, 0, 1}, row{"zone-c", 5, 5, 4, 1}))
	})

	It("counts missing pods when the owner's scale grows, in the owner's only zone", func() {
		tdb := newBudget(ns, nil)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		sts := w.sets["zone-c"]
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
		sts.Spec.Replicas = ptr.To[int32](4)
		Expect(k8s.Update(ctx, sts)).To(Succeed())
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 4, 3, 3, 0}))
	})

	It("recomputes for a spec change and records the new generation", func() {
		tdb := newBudget(ns, nil)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		cur := get(tdb)()
		cur.Spec.MaxUnavailable = nil
		cur.Spec.MinAvailable = ptr.To(intstr.FromString("50%"))
		Expect(k8s.Update(ctx, cur)).To(Succeed())
		// 50% of 3 rounded up is 2 healthy pods per zone.
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		Eventually(func() int64 { return get(tdb)().Status.ObservedGeneration }).Should(Equal(cur.Generation))
		cur = get(tdb)()
		cur.Spec.MinAvailable = ptr.To(intstr.FromInt32(3))
		Expect(k8s.Update(ctx, cur)).To(Succeed())
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 3, 0}, row{"zone-b", 3, 3, 3, 0}, row{"zone-c", 3, 3, 3, 0}))
		got := get(tdb)()
		Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		Expect(condition(got).Reason).To(Equal(policyv1alpha1.ReasonInsufficientPods))
	})

	It("limits the other zones with maxDisruptedDomains", func() {
		tdb := newBudget(ns, func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) { s.MaxDisruptedDomains = ptr.To[int32](1) })
		Expect(framework.SetReady(ctx, k8s, w.pods["zone-b"][1], false)).To(Succeed())
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 0}, row{"zone-b", 3, 2, 2, 0}, row{"zone-c", 3, 3, 2, 0}))
	})

	It("fails closed with DomainError and an event when a covered node has no zone label", func() {
		tdb := newBudget(ns, nil)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		var n corev1.Node
		Expect(k8s.Get(ctx, client.ObjectKey{Name: w.nodes["zone-a"][1]}, &n)).To(Succeed())
		delete(n.Labels, zoneKey)
		Expect(k8s.Update(ctx, &n)).To(Succeed())
		Eventually(func() string { return condition(get(tdb)()).Reason }).Should(Equal(policyv1alpha1.ReasonDomainError))
		got := get(tdb)()
		Expect(got.Status.DisruptionsAllowed).To(BeZero())
		for _, d := range got.Status.Domains {
			Expect(d.DisruptionsAllowed).To(BeZero(), "domain %s", d.Name)
		}
		Expect(condition(got).Message).To(ContainSubstring(w.nodes["zone-a"][1]))
		Eventually(func() []string { return eventReasons(ns, tdb.Name) }).Should(ContainElement(policyv1alpha1.EventReasonDomainError))
	})

	It("fails closed with SyncFailed and a NoScale event when a pod's controller has no readable scale", func() {
		tdb := newBudget(ns, nil)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		// A pod whose controller is a kind the API server does not serve.
		p := builders.Pod("widget-0").Namespace(ns).Label("app", "ingester").
			ControlledBy(metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Widget", Name: "w", UID: "w-uid"}).
			OnNode(w.nodes["zone-b"][0]).Container(builders.ContainerName, builders.Image).Obj()
		Expect(k8s.Create(ctx, p)).To(Succeed())
		Expect(framework.SetReady(ctx, k8s, p, true)).To(Succeed())
		Eventually(func() string { return condition(get(tdb)()).Reason }).Should(Equal(policyv1alpha1.ReasonSyncFailed))
		got := get(tdb)()
		Expect(got.Status.DisruptionsAllowed).To(BeZero())
		Expect(condition(got).Message).To(ContainSubstring("widget-0"))
		Eventually(func() []string { return eventReasons(ns, tdb.Name) }).Should(ContainElement(policyv1alpha1.EventReasonNoScale))
	})

	It("still counts a StatefulSet whose pods are all gone, against every zone", func() {
		tdb := newBudget(ns, nil)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		for _, p := range w.pods["zone-a"] {
			Expect(k8s.Delete(ctx, p, client.GracePeriodSeconds(0))).To(Succeed())
		}
		// Nothing tells which zone zone-a's StatefulSet will come back in:
		// its 3 missing pods count against every zone, which therefore
		// cannot spare a pod.
		Eventually(get(tdb)).Should(haveRows(row{"zone-b", 6, 3, 5, 0}, row{"zone-c", 6, 3, 5, 0}))
	})

	It("does not write the status when nothing that matters changed", func() {
		tdb := newBudget(ns, nil)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		// Let the controller settle, then touch pods in ways a budget ignores.
		time.Sleep(time.Second)
		rv := get(tdb)().ResourceVersion
		for _, p := range w.pods["zone-a"] {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
			p.Annotations = map[string]string{"touched": "yes"}
			Expect(k8s.Update(ctx, p)).To(Succeed())
		}
		Consistently(func() string { return get(tdb)().ResourceVersion }, 3*time.Second, 200*time.Millisecond).Should(Equal(rv))
	})

	It("keeps a record's pod unhealthy until the record expires, then reports the phantom", func() {
		tdb := newBudget(ns, nil)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		// What the eviction webhook writes when it grants an eviction; here
		// no pod is deleted afterwards, as when a PDB refuses the eviction.
		p := w.pods["zone-a"][2]
		Eventually(func() error {
			cur := get(tdb)()
			cur.Status.DisruptedPods = append(cur.Status.DisruptedPods, policyv1alpha1.DisruptedPod{
				Name: p.Name, UID: p.UID, Domain: "zone-a", ControllerUID: w.sets["zone-a"].UID, Time: metav1.Now(),
			})
			return k8s.Status().Update(ctx, cur)
		}).Should(Succeed())
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 2, 2, 0}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		Expect(get(tdb)().Status.DisruptedPods).To(HaveLen(1))
		Eventually(get(tdb), recordTimeout+10*time.Second).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		Expect(get(tdb)().Status.DisruptedPods).To(BeEmpty())
		Eventually(func() []string { return eventReasons(ns, tdb.Name) }).Should(ContainElement(policyv1alpha1.EventReasonRecordExpired))
	})

	It("keeps a gone pod's missing replacement in the pod's zone while the record stands", func() {
		// A spread Deployment-like owner: one ReplicaSet with pods in all zones.
		labels := map[string]string{"app": "spread"}
		rs := builders.ReplicaSet("spread").Namespace(ns).Replicas(6).PodLabels(labels).Obj()
		Expect(k8s.Create(ctx, rs)).To(Succeed())
		var pods []*corev1.Pod
		for i, z := range []string{"zone-a", "zone-a", "zone-b", "zone-b", "zone-c", "zone-c"} {
			p, err := framework.Pod(ctx, k8s, ns, framework.PodSpec{Name: fmt.Sprintf("spread-%d", i), Labels: labels, Node: w.nodes[z][0], Owner: rs, Ready: true})
			Expect(err).NotTo(HaveOccurred())
			pods = append(pods, p)
		}
		tdb := newBudget(ns, func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = policyv1alpha1.SetAsLabelSelector(labels)
		})
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 2, 2, 1, 1}, row{"zone-b", 2, 2, 1, 1}, row{"zone-c", 2, 2, 1, 1}))
		// Record an eviction of spread-0 (zone-a), then the pod goes.
		Eventually(func() error {
			cur := get(tdb)()
			cur.Status.DisruptedPods = []policyv1alpha1.DisruptedPod{{
				Name: pods[0].Name, UID: pods[0].UID, Domain: "zone-a", ControllerUID: rs.UID, Time: metav1.Now(),
			}}
			return k8s.Status().Update(ctx, cur)
		}).Should(Succeed())
		Expect(k8s.Delete(ctx, pods[0], client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func() error { return k8s.Get(ctx, client.ObjectKeyFromObject(pods[0]), &corev1.Pod{}) }).Should(MatchError(ContainSubstring("not found")))
		// Only zone-a is short; zone-b and zone-c keep their allowance.
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 2, 1, 1, 0}, row{"zone-b", 2, 2, 1, 1}, row{"zone-c", 2, 2, 1, 1}))
		Consistently(get(tdb), recordTimeout+2*time.Second, time.Second).Should(haveRows(
			row{"zone-a", 2, 1, 1, 0}, row{"zone-b", 2, 2, 1, 1}, row{"zone-c", 2, 2, 1, 1}))
		// The replacement is scheduled in zone-b: the record is done.
		_, err := framework.Pod(ctx, k8s, ns, framework.PodSpec{Name: "spread-6", Labels: labels, Node: w.nodes["zone-b"][1], Owner: rs, Ready: false})
		Expect(err).NotTo(HaveOccurred())
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 1, 1, 0, 1}, row{"zone-b", 3, 2, 2, 0}, row{"zone-c", 2, 2, 1, 1}))
		Expect(get(tdb)().Status.DisruptedPods).To(BeEmpty())
	})
})

var _ = Describe("Plain-PDB parity without topologyKey", func() {
	// The expected numbers below follow the policy/v1 rules as documented:
	// with maxUnavailable or a percentage, expectedPods is the sum of the
	// owners' scales; with an integer minAvailable it is the number of
	// pods; percentages round up; disruptionsAllowed = healthy - desired,
	// never below 0. Each comment gives the arithmetic.
	var (
		ns string
		w  *zoned
	)
	BeforeEach(func() {
		var err error
		ns, err = framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		w = newZoned(ns)
		// 9 pods, 8 Ready; zone-c's StatefulSet scaled to 4 with no 4th pod.
		Expect(framework.SetReady(ctx, k8s, w.pods["zone-a"][0], false)).To(Succeed())
		sts := w.sets["zone-c"]
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(sts), sts)).To(Succeed())
		sts.Spec.Replicas = ptr.To[int32](4)
		Expect(k8s.Update(ctx, sts)).To(Succeed())
	})

	DescribeTable("reports the numbers policy/v1 defines for the same pods",
		func(mutate func(*policyv1alpha1.TopologyDisruptionBudgetSpec), want row) {
			tdb := newBudget(ns, func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
				s.TopologyKey = ""
				s.MaxUnavailable, s.MinAvailable = nil, nil
				mutate(s)
			})
			Eventually(get(tdb)).Should(haveRows(want))
			got := get(tdb)()
			Expect([]int32{got.Status.ExpectedPods, got.Status.CurrentHealthy, got.Status.DisruptionsAllowed}).
				To(Equal([]int32{want.Expected, want.Healthy, want.Allowed}))
		},
		// expected = 3+3+4 = 10, healthy 8, desired 10-1 = 9, allowed 0
		Entry("maxUnavailable 1", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}, row{"all", 10, 8, 9, 0}),
		// maxUnavailable = ceil(0.3*10) = 3, desired 7, allowed 1
		Entry("maxUnavailable 30%", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxUnavailable = ptr.To(intstr.FromString("30%"))
		}, row{"all", 10, 8, 7, 1}),
		// expected = number of pods = 9, desired 6, allowed 2
		Entry("minAvailable 6", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MinAvailable = ptr.To(intstr.FromInt32(6))
		}, row{"all", 9, 8, 6, 2}),
		// desired = ceil(0.75*10) = 8, allowed 0
		Entry("minAvailable 75%", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MinAvailable = ptr.To(intstr.FromString("75%"))
		}, row{"all", 10, 8, 8, 0}),
		// desired = ceil(0.55*10) = 6, allowed 2
		Entry("minAvailable 55%", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MinAvailable = ptr.To(intstr.FromString("55%"))
		}, row{"all", 10, 8, 6, 2}),
	)
})

var _ = Describe("Budgets that stay live in a real cluster", func() {
	var ns string
	BeforeEach(func() {
		var err error
		ns, err = framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
	})

	It("counts a pod whose node was deleted as gone in its zone, not as a domain error, and the other zones keep their allowance", func() {
		w := newZoned(ns)
		tdb := newBudget(ns, nil)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		// zone-a's second node goes (autoscaler scale-down); its pod lingers
		// until pod garbage collection, which envtest does not run.
		Expect(k8s.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: w.nodes["zone-a"][1]}})).To(Succeed())
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 2, 2, 0}, row{"zone-b", 3, 3, 2, 1}, row{"zone-c", 3, 3, 2, 1}))
		Expect(condition(get(tdb)()).Reason).To(Equal(policyv1alpha1.ReasonSufficientPods))
	})

	It("keeps records bounded while a replica stays Pending: 50 evictions and replacements leave only the one in flight", func() {
		labels := map[string]string{"app": "web"}
		rs := builders.ReplicaSet("web").Namespace(ns).Replicas(4).PodLabels(labels).Obj()
		Expect(k8s.Create(ctx, rs)).To(Succeed())
		var nodes []string
		for _, z := range zones {
			name := fmt.Sprintf("%s-%s", ns, z)
			_, err := framework.Node(ctx, k8s, name, map[string]string{zoneKey: z})
			Expect(err).NotTo(HaveOccurred())
			nodes = append(nodes, name)
		}
		// The stuck replica: created first, never scheduled.
		stuck, err := framework.Pod(ctx, k8s, ns, framework.PodSpec{Name: "web-stuck", Labels: labels, Owner: rs})
		Expect(err).NotTo(HaveOccurred())
		stuck.Status.Phase = corev1.PodPending
		stuck.Status.Conditions = nil
		Expect(k8s.Status().Update(ctx, stuck)).To(Succeed())
		pods := make([]*corev1.Pod, 3)
		for i := range pods {
			pods[i], err = framework.Pod(ctx, k8s, ns, framework.PodSpec{Name: fmt.Sprintf("web-%d", i), Labels: labels, Node: nodes[i], Owner: rs, Ready: true})
			Expect(err).NotTo(HaveOccurred())
		}
		tdb := newBudget(ns, func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = policyv1alpha1.SetAsLabelSelector(labels)
		})
		// Every zone expects its pod and the stuck one.
		Eventually(get(tdb)).Should(haveRows(row{"zone-a", 2, 1, 1, 0}, row{"zone-b", 2, 1, 1, 0}, row{"zone-c", 2, 1, 1, 0}))
		time.Sleep(1100 * time.Millisecond) // grants come after the stuck pod, to the second

		records := func() int { return len(get(tdb)().Status.DisruptedPods) }
		for i := 0; i < 50; i++ {
			victim := pods[i%3]
			// The webhook's grant (this suite runs no webhook): a record.
			Eventually(func() error {
				cur := get(tdb)()
				cur.Status.DisruptedPods = append(cur.Status.DisruptedPods, policyv1alpha1.DisruptedPod{
					Name: victim.Name, UID: victim.UID, Domain: zones[i%3], ControllerUID: rs.UID, Time: metav1.Now()})
				return k8s.Status().Update(ctx, cur)
			}).Should(Succeed())
			Expect(k8s.Delete(ctx, victim, client.GracePeriodSeconds(0))).To(Succeed())
			Eventually(func() bool {
				return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(victim), &corev1.Pod{}))
			}).Should(BeTrue())
			// In flight: the record places the missing pod in its zone.
			Eventually(records).Should(Equal(1), "eviction %d in flight", i)
			repl, err := framework.Pod(ctx, k8s, ns, framework.PodSpec{Name: fmt.Sprintf("web-r%d", i), Labels: labels, Node: nodes[i%3], Owner: rs, Ready: true})
			Expect(err).NotTo(HaveOccurred())
			pods[i%3] = repl
			// Replaced: only the stuck replica is missing, and it predates
			// every record, so none is kept. Should one pass see the
			// deletion and the Ready replacement together (a busy API
			// server), the drop changes no number and rides the next
			// write, at the latest RecordDropDelay after the record was
			// first seen.
			Eventually(records).WithTimeout(controllers.RecordDropDelay+5*time.Second).Should(BeZero(), "eviction %d replaced", i)
		}
		// The last replacement turns Ready in a second write after its
		// creation: the status may show it not Ready for one pass.
		Eventually(get(tdb)).Should(haveRows(row{"zone-a", 2, 1, 1, 0}, row{"zone-b", 2, 1, 1, 0}, row{"zone-c", 2, 1, 1, 0}))
	})

	It("says NotEnforced for a budget in the operator's own namespace", func() {
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: framework.ExemptNamespace}}))).To(Succeed())
		labels := map[string]string{"app": "exempt-" + ns}
		_, err := framework.Pod(ctx, k8s, framework.ExemptNamespace, framework.PodSpec{Name: "bare-" + ns, Labels: labels, Node: "n-" + ns, Ready: true})
		Expect(err).NotTo(HaveOccurred())
		tdb := builders.Budget("exempt-" + ns).Namespace(framework.ExemptNamespace).MatchLabels(labels).MaxUnavailable(intstr.FromInt32(1)).Obj()
		Expect(k8s.Create(ctx, tdb)).To(Succeed())
		Eventually(func() metav1.Condition { return condition(get(tdb)()) }).Should(And(
			HaveField("Reason", policyv1alpha1.ReasonNotEnforced),
			HaveField("Status", metav1.ConditionFalse),
			HaveField("Message", ContainSubstring("not enforced"))))
	})
})
