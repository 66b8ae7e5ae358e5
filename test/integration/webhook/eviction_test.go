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
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

var zones = []string{"zone-a", "zone-b", "zone-c"}

// evict calls the real Eviction API (policy/v1) for a pod.
func evict(p *corev1.Pod) error {
	return cs.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
	})
}

// evictDryRunQuery sends ?dryRun=All (AdmissionRequest.dryRun is true).
func evictDryRunQuery(p *corev1.Pod) error {
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "policy/v1", "kind": "Eviction",
		"metadata": map[string]any{"name": p.Name, "namespace": p.Namespace},
	})
	return cs.CoreV1().RESTClient().Post().Namespace(p.Namespace).Resource("pods").Name(p.Name).
		SubResource("eviction").Param("dryRun", "All").SetHeader("Content-Type", "application/json").
		Body(body).Do(ctx).Error()
}

// evictDryRunBody sends deleteOptions.dryRun [All] in the body only, as
// kubectl drain --dry-run=server does (AdmissionRequest.dryRun is false).
func evictDryRunBody(p *corev1.Pod) error {
	return cs.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{
		ObjectMeta:    metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
		DeleteOptions: &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}},
	})
}

func newNamespace() string {
	ns, err := framework.Namespace(ctx, k8s)
	Expect(err).NotTo(HaveOccurred())
	return ns
}

func newWorld(ns string, podsPerZone int) *framework.World {
	w, err := framework.NewWorld(ctx, k8s, ns, "ingester", zones, 1, podsPerZone)
	Expect(err).NotTo(HaveOccurred())
	return w
}

func newBudget(ns, name string, mutate func(*policyv1alpha1.TopologyDisruptionBudgetSpec)) *policyv1alpha1.TopologyDisruptionBudget {
	t := builders.Budget(name).Namespace(ns).MatchLabels(map[string]string{"app": "ingester"}).TopologyKey(framework.ZoneKey).
		MaxUnavailable(intstr.FromInt32(1)).Obj()
	if mutate != nil {
		mutate(&t.Spec)
	}
	Expect(k8s.Create(ctx, t)).To(Succeed())
	return t
}

func get(t *policyv1alpha1.TopologyDisruptionBudget) *policyv1alpha1.TopologyDisruptionBudget {
	var out policyv1alpha1.TopologyDisruptionBudget
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(t), &out)).To(Succeed())
	return &out
}

// allowedByZone is the status allowance of each zone, in zone order.
func allowedByZone(t *policyv1alpha1.TopologyDisruptionBudget) func() []int32 {
	return func() []int32 {
		var out []int32
		for _, d := range get(t).Status.Domains {
			out = append(out, d.DisruptionsAllowed)
		}
		return out
	}
}

func records(t *policyv1alpha1.TopologyDisruptionBudget) []string {
	var out []string
	for _, r := range get(t).Status.DisruptedPods {
		out = append(out, r.Name+"@"+r.Domain)
	}
	return out
}

func beTooManyRequests() OmegaMatcher {
	return WithTransform(apierrors.IsTooManyRequests, BeTrue())
}

// replace simulates what the StatefulSet controller and kubelet do after an
// eviction in a cluster without them: the evicted pod goes, and a Ready
// replacement with the same name is scheduled in the same zone.
func replace(w *framework.World, zone string, i int) {
	old := w.Pods[zone][i]
	Expect(client.IgnoreNotFound(k8s.Delete(ctx, old, client.GracePeriodSeconds(0)))).To(Succeed())
	Eventually(func() bool {
		return apierrors.IsNotFound(k8s.Get(ctx, client.ObjectKeyFromObject(old), &corev1.Pod{}))
	}).Should(BeTrue())
	p, err := framework.Pod(ctx, k8s, w.NS, framework.PodSpec{
		Name: old.Name, Labels: old.Labels, Node: old.Spec.NodeName, Owner: w.Sets[zone], Ready: true,
	})
	Expect(err).NotTo(HaveOccurred())
	w.Pods[zone][i] = p
}

var _ = Describe("Evictions through the real Eviction API", func() {
	var (
		ns string
		w  *framework.World
	)
	BeforeEach(func() {
		ns = newNamespace()
		w = newWorld(ns, 3)
	})

	It("allows within the budget, records the eviction, and refuses the next one in the zone with 429 and the numbers", func() {
		tdb := newBudget(ns, "ingesters", nil)
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))

		Expect(evict(w.Pods["zone-a"][0])).To(Succeed())
		got := get(tdb)
		Expect(records(tdb)).To(Equal([]string{"ingester-zone-a-0@zone-a"}))
		Expect(got.Status.Domains[0].DisruptionsAllowed).To(BeZero())
		Expect(got.Status.DisruptedPods[0].UID).To(Equal(w.Pods["zone-a"][0].UID))
		Expect(got.Status.DisruptedPods[0].ControllerUID).To(Equal(w.Sets["zone-a"].UID))

		err := evict(w.Pods["zone-a"][1])
		Expect(err).To(beTooManyRequests())
		Expect(err.Error()).To(ContainSubstring(fmt.Sprintf(
			"topology disruption budget %s/ingesters: domain zone-a (topology.kubernetes.io/zone) has 2 healthy pods, needs 2; 0 disruptions allowed", ns)))

		By("refusals are reported as one aggregated event, not one per retry")
		Expect(evict(w.Pods["zone-a"][1])).To(beTooManyRequests())
		Expect(evict(w.Pods["zone-a"][2])).To(beTooManyRequests())
		Eventually(func() int { return refusalEvents(ns, "ingesters") }).Should(Equal(1))
		Consistently(func() int { return refusalEvents(ns, "ingesters") }, time.Second, 200*time.Millisecond).Should(Equal(1))

		By("zone-b is independent of zone-a")
		Expect(evict(w.Pods["zone-b"][0])).To(Succeed())
		Expect(evict(w.Pods["zone-b"][1])).To(beTooManyRequests())
		Expect(records(tdb)).To(ConsistOf("ingester-zone-a-0@zone-a", "ingester-zone-b-0@zone-b"))
	})

	It("keeps a second zone waiting under maxDisruptedDomains 1 until the first recovers", func() {
		tdb := newBudget(ns, "ingesters", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) { s.MaxDisruptedDomains = ptr.To[int32](1) })
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
		Expect(evict(w.Pods["zone-a"][0])).To(Succeed())
		err := evict(w.Pods["zone-b"][0])
		Expect(err).To(beTooManyRequests())
		Expect(err.Error()).To(ContainSubstring("1 other domain(s) are disrupted (zone-a) and maxDisruptedDomains is 1"))

		replace(w, "zone-a", 0)
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
		Expect(records(tdb)).To(BeEmpty())
		Expect(evict(w.Pods["zone-b"][0])).To(Succeed())
	})

	It("decides dry-run evictions in both forms but records nothing", func() {
		tdb := newBudget(ns, "ingesters", nil)
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
		before := get(tdb)

		Expect(evictDryRunQuery(w.Pods["zone-a"][0])).To(Succeed())
		Expect(evictDryRunBody(w.Pods["zone-a"][0])).To(Succeed())
		Expect(evictDryRunBody(w.Pods["zone-a"][1])).To(Succeed())
		Consistently(func() string { return get(tdb).ResourceVersion }, 2*time.Second, 200*time.Millisecond).Should(Equal(before.ResourceVersion))

		By("a real eviction still gets the allowance the dry runs did not spend")
		Expect(evict(w.Pods["zone-a"][0])).To(Succeed())
		By("and a dry run is refused when the real one would be")
		Expect(evictDryRunQuery(w.Pods["zone-a"][1])).To(beTooManyRequests())
		Expect(evictDryRunBody(w.Pods["zone-a"][1])).To(beTooManyRequests())
	})

	It("follows unhealthyPodEvictionPolicy for a pod that is not Ready", func() {
		strict := newBudget(ns, "strict", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxUnavailable = ptr.To(intstr.FromInt32(0))
			s.Selector = policyv1alpha1.SetAsLabelSelector(map[string]string{"zone": "zone-a"})
		})
		lenient := newBudget(ns, "lenient", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxUnavailable = ptr.To(intstr.FromInt32(0))
			s.Selector = policyv1alpha1.SetAsLabelSelector(map[string]string{"zone": "zone-b"})
			s.UnhealthyPodEvictionPolicy = policyv1alpha1.AlwaysAllow
		})
		Expect(framework.SetReady(ctx, k8s, w.Pods["zone-a"][2], false)).To(Succeed())
		Expect(framework.SetReady(ctx, k8s, w.Pods["zone-b"][2], false)).To(Succeed())
		Eventually(func() []int32 {
			return []int32{get(strict).Status.CurrentHealthy, get(lenient).Status.CurrentHealthy}
		}).Should(Equal([]int32{2, 2}))

		By("IfHealthyBudget: the zone is below its desired 3 healthy, so the unready pod stays")
		Expect(evict(w.Pods["zone-a"][2])).To(beTooManyRequests())
		By("AlwaysAllow: the unready pod may go, and nothing is charged; the eviction is recorded, so the pod cannot count again should it turn Ready before it goes")
		before := get(lenient).Status.Domains
		Expect(evict(w.Pods["zone-b"][2])).To(Succeed())
		Expect(records(lenient)).To(Equal([]string{w.Pods["zone-b"][2].Name + "@zone-b"}))
		Expect(get(lenient).Status.Domains).To(Equal(before))
	})

	It("charges every covering budget or none: a second budget's refusal leaves the first uncharged", func() {
		first := newBudget(ns, "a-per-zone", nil)
		second := newBudget(ns, "b-global", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey = ""
			s.MaxUnavailable = ptr.To(intstr.FromInt32(0))
		})
		Eventually(allowedByZone(first)).Should(Equal([]int32{1, 1, 1}))
		Eventually(allowedByZone(second)).Should(Equal([]int32{0}))
		rv := get(first).ResourceVersion
		err := evict(w.Pods["zone-a"][0])
		Expect(err).To(beTooManyRequests())
		Expect(err.Error()).To(ContainSubstring(ns + "/b-global"))
		Expect(records(first)).To(BeEmpty())
		Expect(get(first).ResourceVersion).To(Equal(rv))
		Expect(get(first).Status.DisruptionsAllowed).To(Equal(int32(3)))

		By("when both allow, both are charged")
		cur := get(second)
		cur.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		Expect(k8s.Update(ctx, cur)).To(Succeed())
		Eventually(allowedByZone(second)).Should(Equal([]int32{1}))
		Expect(evict(w.Pods["zone-a"][0])).To(Succeed())
		Expect(records(first)).To(Equal([]string{"ingester-zone-a-0@zone-a"}))
		Expect(records(second)).To(Equal([]string{"ingester-zone-a-0@all"}))
	})

	It("refuses without a charge what a policy/v1 PDB would refuse after it", func() {
		tdb := newBudget(ns, "ingesters", nil)
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
		pdb := &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "ingesters-pdb", Namespace: ns},
			Spec: policyv1.PodDisruptionBudgetSpec{
				Selector:     &metav1.LabelSelector{MatchLabels: map[string]string{"app": "ingester"}},
				MinAvailable: ptr.To(intstr.FromInt32(9)),
			},
		}
		Expect(k8s.Create(ctx, pdb)).To(Succeed())
		// envtest runs no disruption controller: give the PDB the status
		// kube-controller-manager would, which allows nothing.
		pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, ExpectedPods: 9, CurrentHealthy: 9, DesiredHealthy: 9}
		Expect(k8s.Status().Update(ctx, pdb)).To(Succeed())
		rv := get(tdb).ResourceVersion

		// Dry runs (never recorded) wait for the webhook's cache to show the
		// PDB's status.
		Eventually(func() string {
			err := evictDryRunQuery(w.Pods["zone-a"][0])
			if err == nil {
				return "allowed"
			}
			return err.Error()
		}).Should(ContainSubstring("PodDisruptionBudget ingesters-pdb"))
		err := evict(w.Pods["zone-a"][0])
		Expect(err).To(beTooManyRequests())
		Expect(err.Error()).To(And(ContainSubstring("PodDisruptionBudget ingesters-pdb"), ContainSubstring("not charged")))
		Expect(records(tdb)).To(BeEmpty())
		Expect(get(tdb).ResourceVersion).To(Equal(rv))
		Expect(allowedByZone(tdb)()).To(Equal([]int32{1, 1, 1}))
	})

	It("drops, after the record timeout and a live read of its pod, a record of an eviction that never happened", func() {
		tdb := newBudget(ns, "ingesters", nil)
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
		// A grant that a later admission step refused: the record is in
		// status, the pod keeps running.
		victim := w.Pods["zone-a"][0]
		Eventually(func() error {
			cur := get(tdb)
			cur.Status.DisruptedPods = append(cur.Status.DisruptedPods, policyv1alpha1.DisruptedPod{
				Name: victim.Name, UID: victim.UID, Domain: "zone-a", Time: metav1.Now()})
			return k8s.Status().Update(ctx, cur)
		}).Should(Succeed())
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{0, 1, 1}))
		By("the record's pod keeps running: after the record timeout it is dropped")
		Eventually(allowedByZone(tdb), recordTimeout+10*time.Second).Should(Equal([]int32{1, 1, 1}))
		Expect(records(tdb)).To(BeEmpty())
	})

	It("passes pods no budget covers, and pods in the operator's own namespace", func() {
		newBudget(ns, "others", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.Selector = policyv1alpha1.SetAsLabelSelector(map[string]string{"app": "other"})
			s.MaxUnavailable = ptr.To(intstr.FromInt32(0))
		})
		Expect(evict(w.Pods["zone-a"][0])).To(Succeed())

		Expect(client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: framework.ExemptNamespace}}))).To(Succeed())
		own, err := framework.NewWorld(ctx, k8s, framework.ExemptNamespace, "ingester", []string{"zone-a"}, 1, 2)
		Expect(err).NotTo(HaveOccurred())
		newBudget(framework.ExemptNamespace, "operator", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.MaxUnavailable = ptr.To(intstr.FromInt32(0))
		})
		Expect(evict(own.Pods["zone-a"][0])).To(Succeed())
	})
})

var _ = Describe("Evictions while the status is being updated", Ordered, func() {
	It("refuses while observedGeneration is behind the spec", func() {
		ns := newNamespace()
		w := newWorld(ns, 3)
		tdb := newBudget(ns, "ingesters", nil)
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
		stopController()
		defer startController()
		cur := get(tdb)
		cur.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(2))
		Expect(k8s.Update(ctx, cur)).To(Succeed())
		Eventually(func() int64 { return get(tdb).Generation }).Should(BeNumerically(">", get(tdb).Status.ObservedGeneration))
		err := evict(w.Pods["zone-a"][0])
		Expect(err).To(beTooManyRequests())
		Expect(err.Error()).To(ContainSubstring("status is being updated for the new spec"))
	})

	It("honours a record across a restart of every operator process", func() {
		ns := newNamespace()
		w := newWorld(ns, 3)
		tdb := newBudget(ns, "ingesters", nil)
		Eventually(allowedByZone(tdb)).Should(Equal([]int32{1, 1, 1}))
		// Stop the controller first so that its next pass cannot run
		// between the eviction and the restart.
		stopController()
		Expect(evict(w.Pods["zone-a"][0])).To(Succeed())
		stopWebhook()
		startWebhook()
		startController()
		Expect(records(tdb)).To(Equal([]string{"ingester-zone-a-0@zone-a"}))
		Expect(evict(w.Pods["zone-a"][1])).To(beTooManyRequests())
		Consistently(allowedByZone(tdb), 2*time.Second, 200*time.Millisecond).Should(Equal([]int32{0, 1, 1}))
		Expect(evict(w.Pods["zone-a"][2])).To(beTooManyRequests())
	})
})

// refusalEvents counts EvictionRefused events on a budget.
func refusalEvents(ns, name string) int {
	var evs eventsv1.EventList
	Expect(k8s.List(ctx, &evs, client.InNamespace(ns))).To(Succeed())
	n := 0
	for _, e := range evs.Items {
		if e.Regarding.Name == name && e.Reason == policyv1alpha1.EventReasonEvictionRefused {
			n++
		}
	}
	return n
}
