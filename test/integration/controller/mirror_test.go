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
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

// mirror is one mirrored PodDisruptionBudget as a user reads it with
// kubectl get pdb -o yaml.
type mirror struct {
	Name         string
	Domain       string // the value of the domain requirement of its selector
	DomainKey    string
	MinAvailable int32
	Policy       string
}

// mirrorsOf lists the PodDisruptionBudgets the budget owns.
func mirrorsOf(t *policyv1alpha1.TopologyDisruptionBudget) func() []mirror {
	return func() []mirror {
		var list policyv1.PodDisruptionBudgetList
		Expect(k8s.List(ctx, &list, client.InNamespace(t.Namespace),
			client.MatchingLabels{budget.MirrorBudgetLabel: t.Name})).To(Succeed())
		var out []mirror
		for _, p := range list.Items {
			m := mirror{Name: p.Name, MinAvailable: p.Spec.MinAvailable.IntVal}
			Expect(p.Spec.MaxUnavailable).To(BeNil(), "a mirror has minAvailable only")
			Expect(p.Spec.MinAvailable.Type).To(Equal(intstr.Int), "a mirror's minAvailable is an integer")
			ref := metav1.GetControllerOf(&p)
			Expect(ref).NotTo(BeNil())
			Expect(ref.Kind).To(Equal("TopologyDisruptionBudget"))
			Expect(ref.Name).To(Equal(t.Name))
			for _, e := range p.Spec.Selector.MatchExpressions {
				if e.Key == budget.DomainLabel || e.Key == corev1.LabelTopologyZone {
					m.DomainKey, m.Domain = e.Key, strings.Join(e.Values, ",")
				}
			}
			if p.Spec.UnhealthyPodEvictionPolicy != nil {
				m.Policy = string(*p.Spec.UnhealthyPodEvictionPolicy)
			}
			out = append(out, m)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out
	}
}

// minAvailableByDomain is the mirrors' minAvailable by domain.
func minAvailableByDomain(t *policyv1alpha1.TopologyDisruptionBudget) func() map[string]int32 {
	return func() map[string]int32 {
		out := map[string]int32{}
		for _, m := range mirrorsOf(t)() {
			out[m.Domain] = m.MinAvailable
		}
		return out
	}
}

func mirroredCondition(t *policyv1alpha1.TopologyDisruptionBudget) func() metav1.Condition {
	return func() metav1.Condition {
		c := apimeta.FindStatusCondition(get(t)().Status.Conditions, policyv1alpha1.ConditionMirrored)
		if c == nil {
			return metav1.Condition{}
		}
		return *c
	}
}

// selectedBy lists the names of the pods of ns the PodDisruptionBudget's
// selector matches, as the eviction API matches them.
func selectedBy(ns, pdb string) []string {
	var p policyv1.PodDisruptionBudget
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: pdb}, &p)).To(Succeed())
	sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
	Expect(err).NotTo(HaveOccurred())
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: sel})).To(Succeed())
	var out []string
	for _, x := range pods.Items {
		out = append(out, x.Name)
	}
	sort.Strings(out)
	return out
}

func mirrorWrites() float64 {
	var sum float64
	for _, op := range []string{"create", "update", "delete"} {
		sum += testutil.ToFloat64(operatormetrics.MirrorWrites.WithLabelValues(op))
	}
	return sum
}

// settledMirrorWrites waits until the mirror writes hold still for a
// second, and returns their count.
func settledMirrorWrites() float64 {
	last := -1.0
	Eventually(func() bool {
		v := mirrorWrites()
		same := v == last
		last = v
		return same
	}).WithPolling(time.Second).Should(BeTrue())
	return last
}

func mirrored(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
	s.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
}

// Mirrors run in one namespace at a time: the write counts are global.
var _ = Describe("Mirrored PodDisruptionBudgets", Serial, func() {
	var ns string
	BeforeEach(func() {
		var err error
		ns, err = framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
	})

	It("keeps one PDB per zone, with the zone's desiredHealthy, and flips the waiting zones under maxDisruptedDomains", func() {
		w := newZoned(ns)
		tdb := newBudget(ns, func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			mirrored(s)
			s.MaxDisruptedDomains = ptr.To(int32(1))
			s.UnhealthyPodEvictionPolicy = policyv1alpha1.AlwaysAllow
		})
		Eventually(mirrorsOf(tdb)).Should(Equal([]mirror{
			{budget.MirrorName("ingesters", "zone-a"), "zone-a", corev1.LabelTopologyZone, 2, "AlwaysAllow"},
			{budget.MirrorName("ingesters", "zone-b"), "zone-b", corev1.LabelTopologyZone, 2, "AlwaysAllow"},
			{budget.MirrorName("ingesters", "zone-c"), "zone-c", corev1.LabelTopologyZone, 2, "AlwaysAllow"},
		}))
		Expect(budget.MirrorName("ingesters", "zone-a")).To(HavePrefix("ingesters-zone-a-"))
		Eventually(mirroredCondition(tdb)).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", policyv1alpha1.ReasonMirrored)))
		// The zone label, which the API server puts on pods bound by the
		// scheduler, is on every covered pod (these were created bound:
		// the operator wrote it), and each mirror selects its zone's pods.
		for _, z := range zones {
			Expect(selectedBy(ns, budget.MirrorName("ingesters", z))).To(Equal(
				[]string{"ingester-" + z + "-0", "ingester-" + z + "-1", "ingester-" + z + "-2"}))
		}
		before := settledMirrorWrites()

		By("a pod of zone-a not Ready: zone-b and zone-c must wait, their mirrors keep every pod")
		Expect(framework.SetReady(ctx, k8s, w.pods["zone-a"][0], false)).To(Succeed())
		Eventually(minAvailableByDomain(tdb)).Should(Equal(map[string]int32{"zone-a": 2, "zone-b": 3, "zone-c": 3}))
		waiting := settledMirrorWrites()
		GinkgoWriter.Printf("mirror writes, zone-a disrupted: %v\n", waiting-before)
		Expect(waiting-before).To(Equal(2.0), "one update per domain that starts waiting")

		By("a second pod of zone-a not Ready: no domain changes state, nothing is written")
		Expect(framework.SetReady(ctx, k8s, w.pods["zone-a"][1], false)).To(Succeed())
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 1, 2, 0}, row{"zone-b", 3, 3, 2, 0}, row{"zone-c", 3, 3, 2, 0}))
		Expect(settledMirrorWrites() - waiting).To(BeZero())

		By("zone-a healthy again: every mirror back to desiredHealthy")
		Expect(framework.SetReady(ctx, k8s, w.pods["zone-a"][0], true)).To(Succeed())
		Expect(framework.SetReady(ctx, k8s, w.pods["zone-a"][1], true)).To(Succeed())
		Eventually(minAvailableByDomain(tdb)).Should(Equal(map[string]int32{"zone-a": 2, "zone-b": 2, "zone-c": 2}))
		Expect(settledMirrorWrites() - waiting).To(Equal(2.0))

		By("a zone's StatefulSet scaled down to 0 and its pods gone: its mirror allows nothing to be lost (0 expected)")
		Expect(framework.Modify(ctx, k8s, w.sets["zone-c"], func() { w.sets["zone-c"].Spec.Replicas = ptr.To(int32(0)) })).To(Succeed())
		for _, p := range w.pods["zone-c"] {
			Expect(k8s.Delete(ctx, p, client.GracePeriodSeconds(0))).To(Succeed())
		}
		Eventually(minAvailableByDomain(tdb)).Should(Equal(map[string]int32{"zone-a": 2, "zone-b": 2}),
			"the domain left the status: its mirror is removed")

		By("mode back to None: the mirrors and the condition go")
		Expect(framework.Modify(ctx, k8s, tdb, func() { tdb.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorNone })).To(Succeed())
		Eventually(mirrorsOf(tdb)).Should(BeEmpty())
		Eventually(mirroredCondition(tdb)).Should(Equal(metav1.Condition{}))
	})

	It("drops from a mirror's status core's record of an eviction whose pod was replaced under the same name, and only that", func() {
		w := newZoned(ns)
		tdb := newBudget(ns, mirrored)
		Eventually(mirrorsOf(tdb)).Should(HaveLen(3))
		// As the eviction API records evictions: by pod name. The pod now
		// named ingester-zone-a-0 was created after the recorded eviction
		// (a replacement); ingester-zone-a-1 is still the evicted pod.
		replaced, evicted := w.pods["zone-a"][0], w.pods["zone-a"][1]
		var pdb policyv1.PodDisruptionBudget
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: budget.MirrorName("ingesters", "zone-a")}, &pdb)).To(Succeed())
		pdb.Status.DisruptedPods = map[string]metav1.Time{
			replaced.Name: metav1.NewTime(replaced.CreationTimestamp.Add(-time.Minute)),
			evicted.Name:  metav1.NewTime(evicted.CreationTimestamp.Add(time.Minute)),
		}
		Expect(k8s.Status().Update(ctx, &pdb)).To(Succeed())
		Eventually(func() []string {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&pdb), &pdb)).To(Succeed())
			var names []string
			for n := range pdb.Status.DisruptedPods {
				names = append(names, n)
			}
			return names
		}).Should(ConsistOf(evicted.Name))
		Consistently(func() int {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(&pdb), &pdb)).To(Succeed())
			return len(pdb.Status.DisruptedPods)
		}, 2*time.Second).Should(Equal(1))
	})

	It("labels covered pods with their rack for a rack-keyed budget, and honours nodeSelectorTerm", func() {
		// Two racks of nodes, one pool of them excluded by the term.
		for _, n := range []struct{ name, rack, pool string }{
			{"r1-a", "r1", "db"}, {"r2-a", "r2", "db"}, {"r1-x", "r1", "other"},
		} {
			_, err := framework.Node(ctx, k8s, ns+"-"+n.name, map[string]string{"rack": n.rack, "pool": n.pool})
			Expect(err).NotTo(HaveOccurred())
		}
		sts, err := framework.StatefulSet(ctx, k8s, ns, "db", 5, map[string]string{"app": "db"})
		Expect(err).NotTo(HaveOccurred())
		for i, node := range []string{"r1-a", "r1-a", "r2-a", "r2-a", "r1-x"} {
			_, err := framework.Pod(ctx, k8s, ns, framework.PodSpec{Name: fmt.Sprintf("db-%d", i), Labels: map[string]string{"app": "db"},
				Node: ns + "-" + node, Owner: sts, Ready: true})
			Expect(err).NotTo(HaveOccurred())
		}
		tdb := builders.Budget("db").Namespace(ns).MatchLabels(map[string]string{"app": "db"}).TopologyKey("rack").
			MaxUnavailable(intstr.FromInt32(1)).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
			{Key: "pool", Operator: "In", Values: []string{"db"}}}}).Obj()
		mirrored(&tdb.Spec)
		Expect(k8s.Create(ctx, tdb)).To(Succeed())
		Eventually(mirrorsOf(tdb)).Should(HaveLen(2))
		Expect(mirrorsOf(tdb)()[0].DomainKey).To(Equal(budget.DomainLabel))
		Eventually(func() []string { return selectedBy(ns, budget.MirrorName("db", "r1")) }).Should(Equal([]string{"db-0", "db-1"}),
			"db-4 runs in rack r1 outside the term: not selected")
		Expect(selectedBy(ns, budget.MirrorName("db", "r2"))).To(Equal([]string{"db-2", "db-3"}))
		var outside corev1.Pod
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-4"}, &outside)).To(Succeed())
		Expect(outside.Labels).NotTo(HaveKey(budget.DomainLabel))
		Eventually(get(tdb)).Should(haveRows(row{"r1", 2, 2, 1, 1}, row{"r2", 2, 2, 1, 1}))
		rows := rowsOf(get(tdb)())
		want := map[string]int32{}
		for _, r := range rows {
			want[r.Name] = r.Desired
		}
		Expect(minAvailableByDomain(tdb)()).To(Equal(want), "each mirror's minAvailable is its domain's desiredHealthy")

		By("someone deletes the domain label: the operator puts it back")
		var p corev1.Pod
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-0"}, &p)).To(Succeed())
		Expect(framework.Modify(ctx, k8s, &p, func() { delete(p.Labels, budget.DomainLabel) })).To(Succeed())
		Eventually(func() string {
			Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "db-0"}, &p)).To(Succeed())
			return p.Labels[budget.DomainLabel]
		}).Should(Equal("r1"))

		By("the budget deleted: its mirrors go")
		Expect(k8s.Delete(ctx, tdb)).To(Succeed())
		Eventually(mirrorsOf(tdb)).Should(BeEmpty())
	})

	It("mirrors a DaemonSet's pods and a bare pod by the pods they have", func() {
		for _, z := range zones {
			_, err := framework.Node(ctx, k8s, ns+"-"+z, map[string]string{zoneKey: z})
			Expect(err).NotTo(HaveOccurred())
		}
		ds := builders.DaemonSet("agent").Namespace(ns).PodLabels(map[string]string{"app": "agent"}).Obj()
		Expect(k8s.Create(ctx, ds)).To(Succeed())
		ds.Status.DesiredNumberScheduled = 3
		ds.Status.CurrentNumberScheduled = 3
		ds.Status.NumberReady = 3
		Expect(k8s.Status().Update(ctx, ds)).To(Succeed())
		for _, z := range zones {
			_, err := framework.Pod(ctx, k8s, ns, framework.PodSpec{Name: "agent-" + z, Labels: map[string]string{"app": "agent"},
				Node: ns + "-" + z, Owner: ds, Ready: true})
			Expect(err).NotTo(HaveOccurred())
		}
		_, err := framework.Pod(ctx, k8s, ns, framework.PodSpec{Name: "agent-bare", Labels: map[string]string{"app": "agent"},
			Node: ns + "-zone-a", Ready: true})
		Expect(err).NotTo(HaveOccurred())
		tdb := builders.Budget("agents").Namespace(ns).MatchLabels(map[string]string{"app": "agent"}).TopologyKey(zoneKey).
			MinAvailable(intstr.FromInt32(1)).Obj()
		mirrored(&tdb.Spec)
		Expect(k8s.Create(ctx, tdb)).To(Succeed())
		Eventually(minAvailableByDomain(tdb)).Should(Equal(map[string]int32{"zone-a": 1, "zone-b": 1, "zone-c": 1}))
		Expect(selectedBy(ns, budget.MirrorName("agents", "zone-a"))).To(Equal([]string{"agent-bare", "agent-zone-a"}))
		Expect(selectedBy(ns, budget.MirrorName("agents", "zone-b"))).To(Equal([]string{"agent-zone-b"}))
	})

	It("mirrors nothing while a covered pod is under a PDB it does not own, and says which", func() {
		newZoned(ns)
		user := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "user-pdb"},
			Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1)),
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"zone": "zone-b"}}},
		}
		Expect(k8s.Create(ctx, user)).To(Succeed())
		tdb := newBudget(ns, mirrored)
		Eventually(mirroredCondition(tdb)).Should(And(
			HaveField("Status", metav1.ConditionFalse), HaveField("Reason", policyv1alpha1.ReasonPDBConflict),
			HaveField("Message", ContainSubstring("pod ingester-zone-b-0 is selected by PodDisruptionBudget user-pdb"))))
		Consistently(mirrorsOf(tdb), 2*time.Second).Should(BeEmpty())
		Eventually(func() []string { return eventReasons(ns, "ingesters") }).Should(ContainElement(policyv1alpha1.EventReasonPDBConflict))

		By("the user's PDB deleted: the mirrors appear")
		Expect(k8s.Delete(ctx, user)).To(Succeed())
		Eventually(mirrorsOf(tdb)).Should(HaveLen(3))
		Eventually(mirroredCondition(tdb)).Should(HaveField("Status", metav1.ConditionTrue))

		By("a second mirrored budget over the same pods: the younger one yields, the older keeps its mirrors")
		second := builders.Budget("ingesters-too").Namespace(ns).MatchLabels(map[string]string{"app": "ingester"}).TopologyKey(zoneKey).
			MaxUnavailable(intstr.FromInt32(2)).Obj()
		mirrored(&second.Spec)
		Expect(k8s.Create(ctx, second)).To(Succeed())
		Eventually(mirroredCondition(second)).Should(HaveField("Reason", policyv1alpha1.ReasonPDBConflict))
		Consistently(mirrorsOf(second), 2*time.Second).Should(BeEmpty())
		Expect(mirrorsOf(tdb)()).To(HaveLen(3))
		Expect(mirroredCondition(tdb)()).To(HaveField("Status", metav1.ConditionTrue))
	})
})
