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
	"strconv"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

// The deletion-cost controller as a user sees it: annotations on pods. No
// ReplicaSet controller runs in envtest, so the specs scale a ReplicaSet the
// way it would: set spec.replicas and delete (or create) the pod it picks.

const (
	costKey   = "controller.kubernetes.io/pod-deletion-cost"
	markerKey = "policy.tdb.dev/deletion-cost-budget"
)

// costWorld is one node per zone of a namespace.
type costWorld struct {
	ns    string
	nodes map[string]string // zone -> node
	zones map[string]string // node -> zone
}

func newCostWorld(ns string) *costWorld {
	w := &costWorld{ns: ns, nodes: map[string]string{}, zones: map[string]string{}}
	for _, z := range zones {
		name := ns + "-" + z
		_, err := framework.Node(ctx, k8s, name, map[string]string{zoneKey: z, "pool": "default"})
		Expect(err).NotTo(HaveOccurred())
		w.nodes[z], w.zones[name] = name, z
	}
	return w
}

// replicaSet creates a ReplicaSet of pods labelled app, owned by dep (with
// the given revision) when dep is set.
func (w *costWorld) replicaSet(name, app string, replicas int32, dep *appsv1.Deployment, revision int) *appsv1.ReplicaSet {
	b := builders.ReplicaSet(name).Namespace(w.ns).Replicas(replicas).PodLabels(map[string]string{"app": app})
	if dep != nil {
		b.Revision(revision).ControlledBy(builders.RefTo(dep))
	}
	rs := b.Obj()
	Expect(k8s.Create(ctx, rs)).To(Succeed())
	return rs
}

func (w *costWorld) deployment(name, app string, replicas int32) *appsv1.Deployment {
	d := builders.Deployment(name).Namespace(w.ns).Replicas(replicas).PodLabels(map[string]string{"app": app}).Obj()
	Expect(k8s.Create(ctx, d)).To(Succeed())
	return d
}

// pods creates, for each zone, count pods of rs named <rs>-<zone>-<i>.
func (w *costWorld) pods(rs *appsv1.ReplicaSet, ready bool, perZone map[string]int) []*corev1.Pod {
	var out []*corev1.Pod
	for _, z := range zones {
		for i := 0; i < perZone[z]; i++ {
			out = append(out, w.pod(rs, fmt.Sprintf("%s-%s-%d", rs.Name, z, i), z, ready))
		}
	}
	return out
}

func (w *costWorld) pod(rs *appsv1.ReplicaSet, name, zone string, ready bool) *corev1.Pod {
	p, err := framework.Pod(ctx, k8s, w.ns, framework.PodSpec{
		Name: name, Labels: rs.Spec.Template.Labels, Node: w.nodes[zone], Owner: rs, Ready: ready,
	})
	Expect(err).NotTo(HaveOccurred())
	return p
}

// podCost is one pod as a user reads it with kubectl.
type podCost struct {
	Name, Zone, Marker string
	Cost               int32
	HasCost            bool
	ResourceVersion    string
}

// costsOf reads the pods of the namespace whose app label is app, by name.
func (w *costWorld) costsOf(app string) map[string]podCost {
	var pods corev1.PodList
	Expect(k8s.List(ctx, &pods, client.InNamespace(w.ns), client.MatchingLabels{"app": app})).To(Succeed())
	out := map[string]podCost{}
	for _, p := range pods.Items {
		pc := podCost{Name: p.Name, Zone: w.zones[p.Spec.NodeName], Marker: p.Annotations[markerKey], ResourceVersion: p.ResourceVersion}
		if v, ok := p.Annotations[costKey]; ok {
			c, err := strconv.ParseInt(v, 10, 32)
			Expect(err).NotTo(HaveOccurred())
			pc.Cost, pc.HasCost = int32(c), true
		}
		out[p.Name] = pc
	}
	return out
}

// costsByZone returns each zone's costs, sorted; pods without a cost or
// without the budget's marker are left out.
func costsByZone(pods map[string]podCost, tdb string) map[string][]int32 {
	out := map[string][]int32{}
	for _, p := range pods {
		if p.HasCost && p.Marker == tdb {
			out[p.Zone] = append(out[p.Zone], p.Cost)
		}
	}
	for _, cs := range out {
		sort.Slice(cs, func(i, j int) bool { return cs[i] < cs[j] })
	}
	return out
}

// ranked returns the pods by cost, ties broken by name, reversed if asked.
func ranked(pods map[string]podCost, reverseTies bool) []podCost {
	out := make([]podCost, 0, len(pods))
	for _, p := range pods {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Cost != out[j].Cost {
			return out[i].Cost < out[j].Cost
		}
		return (out[i].Name < out[j].Name) != reverseTies
	})
	return out
}

// seq returns from, from+1, ..., to.
func seq(from, to int32) []int32 {
	var out []int32
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return out
}

// costPatches reads tdb_deletion_cost_patches_total of a budget from the
// manager's metrics registry.
func costPatches(ns, name string) float64 {
	mfs, err := metrics.Registry.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, mf := range mfs {
		if mf.GetName() != "tdb_deletion_cost_patches_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["namespace"] == ns && got["tdb"] == name {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// orderingBudget creates budget name selecting app, one unavailable pod per
// zone, with spec.rollout.
func orderingBudget(ns, name, app string, mutate func(*policyv1alpha1.TopologyDisruptionBudgetSpec)) *policyv1alpha1.TopologyDisruptionBudget {
	t := builders.Budget(name).Namespace(ns).MatchLabels(map[string]string{"app": app}).TopologyKey(zoneKey).
		MaxUnavailable(intstr.FromInt32(1)).Rollout(policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain}).Obj()
	if mutate != nil {
		mutate(&t.Spec)
	}
	Expect(k8s.Create(ctx, t)).To(Succeed())
	return t
}

// settled waits until the budget's patch count holds still for a second,
// and returns it.
func settled(ns, name string) float64 {
	last := -1.0
	Eventually(func() bool {
		v := costPatches(ns, name)
		same := v == last
		last = v
		return same
	}).WithPolling(time.Second).Should(BeTrue())
	return last
}

// annotationsOf reads a pod's deletion-cost annotations.
func annotationsOf(ns, name string) func() map[string]string {
	return func() map[string]string {
		var p corev1.Pod
		Expect(k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, &p)).To(Succeed())
		out := map[string]string{}
		for _, k := range []string{costKey, markerKey} {
			if v, ok := p.Annotations[k]; ok {
				out[k] = v
			}
		}
		return out
	}
}

var _ = Describe("Scale-down order through pod-deletion-cost", func() {
	var (
		ns string
		w  *costWorld
	)
	BeforeEach(func() {
		var err error
		ns, err = framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		w = newCostWorld(ns)
	})

	It("ranks the largest zone's pods first, so any scale-down evens out a 10/8/6 spread", func() {
		rs := w.replicaSet("web", "web", 24, nil, 0)
		w.pods(rs, true, map[string]int{"zone-a": 10, "zone-b": 8, "zone-c": 6})
		orderingBudget(ns, "web", "web", nil)

		Eventually(func() map[string][]int32 { return costsByZone(w.costsOf("web"), "web") }).Should(Equal(map[string][]int32{
			"zone-a": seq(-10, -1), "zone-b": seq(-8, -1), "zone-c": seq(-6, -1),
		}))
		pods := w.costsOf("web")
		for _, reverse := range []bool{false, true} {
			order := ranked(pods, reverse)
			Expect(order[0].Zone).To(Equal("zone-a"))
			Expect(order[1].Zone).To(Equal("zone-a"))
			left := map[string]int{"zone-a": 10, "zone-b": 8, "zone-c": 6}
			for k, p := range order {
				left[p.Zone]--
				most, least := 0, len(order)
				for _, n := range left {
					most, least = max(most, n), min(least, n)
				}
				// Pods leave the fullest zones only; from 6 removed on,
				// the zones are even within one pod.
				Expect(left[p.Zone]).To(BeNumerically(">=", most-1), "after removing %d pods: %v", k+1, left)
				if k+1 >= 6 {
					Expect(most-least).To(BeNumerically("<=", 1), "after removing %d pods: %v", k+1, left)
				}
			}
		}
	})

	It("never ranks first a zone without allowance while another zone has one", func() {
		rs := w.replicaSet("web", "web", 24, nil, 0)
		w.pods(rs, true, map[string]int{"zone-a": 10, "zone-b": 8, "zone-c": 6})
		// Another workload's pod in zone-a is down: zone-a allows nothing.
		other := w.replicaSet("other", "web-other", 1, nil, 0)
		down := w.pod(other, "other-zone-a-0", "zone-a", false)
		tdb := orderingBudget(ns, "web", "web", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = &policyv1alpha1.LabelSelector{MatchExpressions: []policyv1alpha1.LabelSelectorRequirement{{
				Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "web-other"},
			}}}
		})
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 11, 10, 10, 0}, row{"zone-b", 8, 8, 7, 1}, row{"zone-c", 6, 6, 5, 1}))

		Eventually(func() map[string][]int32 { return costsByZone(w.costsOf("web"), "web") }).Should(Equal(map[string][]int32{
			"zone-a": seq(100_000_000-10, 100_000_000-1), "zone-b": seq(-8, -1), "zone-c": seq(-6, -1),
		}))
		Expect(ranked(w.costsOf("web"), false)[0].Zone).To(Equal("zone-b"))

		// The pod recovers: zone-a is the largest zone again, and first.
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(down), down)).To(Succeed())
		Expect(framework.SetReady(ctx, k8s, down, true)).To(Succeed())
		Eventually(func() []int32 { return costsByZone(w.costsOf("web"), "web")["zone-a"] }).Should(Equal(seq(-10, -1)))
		Expect(ranked(w.costsOf("web"), false)[0].Zone).To(Equal("zone-a"))
	})

	It("makes a Deployment's old pods leave zone by zone in domain order during a DomainByDomain rollout", func() {
		dep := w.deployment("api", "api", 9)
		v1 := w.replicaSet("api-1", "api", 9, dep, 1)
		w.pods(v1, true, map[string]int{"zone-a": 3, "zone-b": 3, "zone-c": 3})
		orderingBudget(ns, "api", "api", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Rollout.DomainOrder = []string{"zone-b"}
		})
		// No rollout yet: the spread.
		Eventually(func() map[string][]int32 { return costsByZone(w.costsOf("api"), "api") }).Should(Equal(map[string][]int32{
			"zone-a": seq(-3, -1), "zone-b": seq(-3, -1), "zone-c": seq(-3, -1),
		}))

		// The Deployment rolls out: revision 2 surges one pod in zone-b,
		// not Ready yet, so zone-b allows nothing for the moment.
		tdb := &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"}}
		v2 := w.replicaSet("api-2", "api", 1, dep, 2)
		w.pod(v2, "api-2-zone-b-0", "zone-b", false)
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 3, 3, 2, 1}, row{"zone-b", 4, 3, 3, 0}, row{"zone-c", 3, 3, 2, 1}))

		// Old pods: zone-b (listed) first, then zone-a and zone-c by name.
		// The starting surge pod is the rollout's own: zone-b stays first.
		Eventually(func() map[string][]int32 {
			old := map[string]podCost{}
			for n, p := range w.costsOf("api") {
				if n != "api-2-zone-b-0" {
					old[n] = p
				}
			}
			return costsByZone(old, "api")
		}).Should(Equal(map[string][]int32{
			"zone-b": seq(-3, -1), "zone-a": seq(100_000-3, 100_000-1), "zone-c": seq(200_000-3, 200_000-1),
		}))
		Eventually(func() podCost { return w.costsOf("api")["api-2-zone-b-0"] }).Should(HaveField("Cost", int32(-1)))
		old := map[string]podCost{}
		for n, p := range w.costsOf("api") {
			if n != "api-2-zone-b-0" {
				old[n] = p
			}
		}
		order := ranked(old, false)
		for i, z := range []string{"zone-b", "zone-b", "zone-b", "zone-a"} {
			Expect(order[i].Zone).To(Equal(z), "old pod %d removed, %s", i, order[i].Name)
		}
	})

	It("patches only the pods whose cost changes when the ReplicaSet scales", func() {
		rs := w.replicaSet("web", "web", 24, nil, 0)
		w.pods(rs, true, map[string]int{"zone-a": 10, "zone-b": 8, "zone-c": 6})
		tdb := orderingBudget(ns, "web", "web", nil)
		Eventually(func() map[string][]int32 { return costsByZone(w.costsOf("web"), "web") }).Should(HaveLen(3))
		initial := settled(ns, "web")
		Expect(initial).To(Equal(24.0), "one patch per pod to start with")
		scaleTo := func(n int32) {
			Expect(k8s.Get(ctx, client.ObjectKeyFromObject(rs), rs)).To(Succeed())
			rs.Spec.Replicas = &n
			Expect(k8s.Update(ctx, rs)).To(Succeed())
		}
		// terminate deletes a pod as on a cluster: it terminates first (no
		// kubelet here to finish it) while the budget counts it unavailable,
		// then it is gone.
		terminate := func(name string, whileTerminating ...row) {
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			Expect(k8s.Delete(ctx, pod)).To(Succeed())
			Eventually(get(tdb)).Should(haveRows(whileTerminating...))
			Expect(k8s.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		}
		unchangedBut := func(before, after map[string]podCost, except ...string) {
			var changed []string
			for n, p := range after {
				if b, ok := before[n]; !ok || b.ResourceVersion != p.ResourceVersion {
					changed = append(changed, n)
				}
			}
			Expect(changed).To(ConsistOf(except))
		}

		By("scaling down by one: the ReplicaSet controller removes the lowest-cost pod")
		before := w.costsOf("web")
		victim := ranked(before, false)[0]
		Expect(victim.Zone).To(Equal("zone-a"))
		scaleTo(23)
		terminate(victim.Name, row{"zone-a", 10, 9, 9, 0}, row{"zone-b", 8, 8, 7, 1}, row{"zone-c", 6, 6, 5, 1})
		Eventually(func() map[string][]int32 { return costsByZone(w.costsOf("web"), "web") }).Should(Equal(map[string][]int32{
			"zone-a": seq(-9, -1), "zone-b": seq(-8, -1), "zone-c": seq(-6, -1),
		}))
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 9, 9, 8, 1}, row{"zone-b", 8, 8, 7, 1}, row{"zone-c", 6, 6, 5, 1}))
		afterDown := settled(ns, "web")
		GinkgoWriter.Printf("deletion-cost patches, scale-down 24->23 (lowest-cost pod removed): %v\n", afterDown-initial)
		Expect(afterDown - initial).To(BeZero())
		unchangedBut(before, w.costsOf("web"))

		By("scaling up by one: a new pod lands in zone-c, becomes Ready")
		before = w.costsOf("web")
		scaleTo(24)
		p := w.pod(rs, "web-zone-c-new", "zone-c", false)
		Expect(k8s.Get(ctx, client.ObjectKeyFromObject(p), p)).To(Succeed())
		Expect(framework.SetReady(ctx, k8s, p, true)).To(Succeed())
		Eventually(func() map[string][]int32 { return costsByZone(w.costsOf("web"), "web") }).Should(Equal(map[string][]int32{
			"zone-a": seq(-9, -1), "zone-b": seq(-8, -1), "zone-c": seq(-7, -1),
		}))
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 9, 9, 8, 1}, row{"zone-b", 8, 8, 7, 1}, row{"zone-c", 7, 7, 6, 1}))
		afterUp := settled(ns, "web")
		GinkgoWriter.Printf("deletion-cost patches, scale-up 23->24: %v\n", afterUp-afterDown)
		Expect(afterUp - afterDown).To(Equal(1.0))
		Expect(w.costsOf("web")["web-zone-c-new"].Cost).To(Equal(int32(-7)))
		unchangedBut(before, w.costsOf("web"), "web-zone-c-new")

		By("scaling down by one, removing a pod other than the lowest-cost one (zone-b's highest)")
		before = w.costsOf("web")
		var highestB podCost
		for _, p := range before {
			if p.Zone == "zone-b" && p.Cost == -1 {
				highestB = p
			}
		}
		scaleTo(23)
		terminate(highestB.Name, row{"zone-a", 9, 9, 8, 1}, row{"zone-b", 8, 7, 7, 0}, row{"zone-c", 7, 7, 6, 1})
		Eventually(func() []int32 { return costsByZone(w.costsOf("web"), "web")["zone-b"] }).Should(Equal(seq(-7, -1)))
		Eventually(get(tdb)).Should(haveRows(
			row{"zone-a", 9, 9, 8, 1}, row{"zone-b", 7, 7, 6, 1}, row{"zone-c", 7, 7, 6, 1}))
		afterOther := settled(ns, "web")
		GinkgoWriter.Printf("deletion-cost patches, scale-down 24->23 (highest-cost zone-b pod removed): %v\n", afterOther-afterUp)
		// Every other zone-b pod moves up one rank.
		Expect(afterOther - afterUp).To(Equal(7.0))
		var zoneB []string
		for n, p := range before {
			if p.Zone == "zone-b" && n != highestB.Name {
				zoneB = append(zoneB, n)
			}
		}
		unchangedBut(before, w.costsOf("web"), zoneB...)
	})

	It("releases pods that stop being covered, and only the pods it marked", func() {
		rs := w.replicaSet("web", "web", 3, nil, 0)
		pods := w.pods(rs, true, map[string]int{"zone-a": 1, "zone-b": 1, "zone-c": 1})
		// Someone else's costs: on a pod the budget does not select, and on
		// one it does.
		foreignRS := w.replicaSet("foreign", "foreign", 1, nil, 0)
		foreign := w.pod(foreignRS, "foreign-zone-a-0", "zone-a", true)
		mine := w.pod(rs, "web-zone-a-own", "zone-a", true)
		for p, v := range map[*corev1.Pod]string{foreign: "42", mine: "7"} {
			Expect(framework.Modify(ctx, k8s, p, func() { p.Annotations = map[string]string{costKey: v} })).To(Succeed())
		}
		tdb := orderingBudget(ns, "web", "web", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = &policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{{
				Key: "pool", Operator: "NotIn", Values: []string{"spot"},
			}}}
		})
		marked := func() []string {
			var out []string
			for n, p := range w.costsOf("web") {
				if p.Marker == "web" && p.HasCost {
					out = append(out, n)
				}
			}
			sort.Strings(out)
			return out
		}
		Eventually(marked).Should(Equal([]string{"web-zone-a-0", "web-zone-b-0", "web-zone-c-0"}))
		Expect(annotationsOf(ns, "web-zone-a-own")()).To(Equal(map[string]string{costKey: "7"}),
			"a cost set by someone else is not taken over")

		By("the pod's labels stop matching")
		Expect(framework.Modify(ctx, k8s, pods[0], func() { pods[0].Labels = map[string]string{"app": "retired"} })).To(Succeed())
		Eventually(annotationsOf(ns, "web-zone-a-0")).Should(BeEmpty())
		Expect(marked()).To(Equal([]string{"web-zone-b-0", "web-zone-c-0"}))

		By("the pod's node leaves nodeSelectorTerm")
		var n corev1.Node
		Expect(k8s.Get(ctx, client.ObjectKey{Name: w.nodes["zone-c"]}, &n)).To(Succeed())
		n.Labels["pool"] = "spot"
		Expect(k8s.Update(ctx, &n)).To(Succeed())
		Eventually(annotationsOf(ns, "web-zone-c-0")).Should(BeEmpty())
		Expect(marked()).To(Equal([]string{"web-zone-b-0"}))

		By("spec.rollout is removed, then set again")
		tdbNow := get(tdb)()
		Expect(framework.Modify(ctx, k8s, tdbNow, func() { tdbNow.Spec.Rollout = nil })).To(Succeed())
		Eventually(marked).Should(BeEmpty())
		Expect(framework.Modify(ctx, k8s, tdbNow, func() {
			tdbNow.Spec.Rollout = &policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.AllDomains}
		})).To(Succeed())
		Eventually(marked).Should(Equal([]string{"web-zone-b-0"}))

		By("the budget is deleted")
		Expect(k8s.Delete(ctx, tdbNow)).To(Succeed())
		Eventually(marked).Should(BeEmpty())
		Expect(annotationsOf(ns, "web-zone-b-0")()).To(BeEmpty())

		// Someone else's costs were never touched.
		Consistently(annotationsOf(ns, foreign.Name), time.Second, 200*time.Millisecond).Should(Equal(map[string]string{costKey: "42"}))
		Expect(annotationsOf(ns, "web-zone-a-own")()).To(Equal(map[string]string{costKey: "7"}))
	})
})

var _ = Describe("Scale-down order in the operator's own namespace", func() {
	It("sets no cost for a budget there (the webhook lets every eviction pass), and releases the pods it had marked", func() {
		ns := framework.ExemptNamespace
		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))).To(Succeed())
		w := newCostWorld(ns)
		rs := w.replicaSet("own-web", "own-web", 6, nil, 0)
		pods := w.pods(rs, true, map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2})
		// A cost an earlier operator version set for the budget.
		Expect(framework.Modify(ctx, k8s, pods[0], func() { pods[0].Annotations = map[string]string{costKey: "-2", markerKey: "own"} })).To(Succeed())
		tdb := orderingBudget(ns, "own", "own-web", nil)
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(k8s.Delete(ctx, tdb))).To(Succeed())
		})

		Eventually(annotationsOf(ns, pods[0].Name)).Should(BeEmpty(), "the budget's old cost is released")
		Consistently(func() map[string]podCost {
			out := map[string]podCost{}
			for n, p := range w.costsOf("own-web") {
				if p.HasCost || p.Marker != "" {
					out[n] = p
				}
			}
			return out
		}, 3*time.Second, 200*time.Millisecond).Should(BeEmpty(), "no pod of the operator's namespace gets a cost")
	})
})
