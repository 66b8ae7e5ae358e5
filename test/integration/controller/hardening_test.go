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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/controllers"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

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
