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
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
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

// What a budget's author can make the operator write on pods
// (docs/install.md, What a budget author can make the operator do): the
// domain label on the pods the budget covers, its removal from pods the
// budget selects outside its nodeSelectorTerm when the value is one of the
// budget's domains, and nothing on any other pod, in its namespace or
// another.
var _ = Describe("The pods a mirrored budget labels", Serial, func() {
	It("labels only the pods it covers, unlabels only the pods it selects, and never a pod of another namespace", func() {
		ns, err := framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		other, err := framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		// Racks r1 and r2 in pool db, and a node of rack r1 in another pool,
		// which the budget's term leaves out.
		node := map[string]string{}
		for _, n := range []struct{ name, rack, pool string }{{"r1", "r1", "db"}, {"r2", "r2", "db"}, {"r1-other", "r1", "other"}} {
			node[n.name] = ns + "-" + n.name
			_, err := framework.Node(ctx, k8s, node[n.name], map[string]string{"rack": n.rack, "pool": n.pool})
			Expect(err).NotTo(HaveOccurred())
		}
		sts, err := framework.StatefulSet(ctx, k8s, ns, "db", 4, map[string]string{"app": "db"})
		Expect(err).NotTo(HaveOccurred())
		withDomain := func(value string, labels map[string]string) map[string]string {
			labels[budget.DomainLabel] = value
			return labels
		}
		type podAt struct {
			ns, name, node string
			labels         map[string]string
			owner          client.Object
		}
		pods := []podAt{
			// Covered: labelled with their rack.
			{ns, "db-0", node["r1"], map[string]string{"app": "db"}, sts},
			{ns, "db-1", node["r2"], map[string]string{"app": "db"}, sts},
			// Selected, outside the term: a value of the budget's domains
			// is taken off, another value stays.
			{ns, "db-2", node["r1-other"], withDomain("r1", map[string]string{"app": "db"}), sts},
			{ns, "db-3", node["r1-other"], withDomain("rack-9", map[string]string{"app": "db"}), sts},
			// Not selected, in the budget's namespace, on covered nodes:
			// left as they are, a value of the budget's domains included.
			{ns, "web-0", node["r1"], withDomain("r1", map[string]string{"app": "web"}), nil},
			{ns, "web-1", node["r2"], map[string]string{"app": "web"}, nil},
			// The budget's labels, in another namespace: left as they are.
			{other, "db-0", node["r1"], map[string]string{"app": "db"}, nil},
			{other, "db-1", node["r1-other"], withDomain("r2", map[string]string{"app": "db"}), nil},
		}
		for _, p := range pods {
			_, err := framework.Pod(ctx, k8s, p.ns, framework.PodSpec{Name: p.name, Labels: p.labels, Node: p.node, Owner: p.owner, Ready: true})
			Expect(err).NotTo(HaveOccurred())
		}
		labelWrites := func() float64 { return testutil.ToFloat64(operatormetrics.MirrorWrites.WithLabelValues("label")) }
		before := labelWrites()

		tdb := builders.Budget("db").Namespace(ns).MatchLabels(map[string]string{"app": "db"}).TopologyKey("rack").
			MaxUnavailable(intstr.FromInt32(1)).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
			{Key: "pool", Operator: "In", Values: []string{"db"}}}}).Obj()
		mirrored(&tdb.Spec)
		Expect(k8s.Create(ctx, tdb)).To(Succeed())
		key, operatorOwned := budget.MirrorDomainKey(&tdb.Spec)
		Expect([]any{key, operatorOwned}).To(Equal([]any{budget.DomainLabel, true}), "a custom topologyKey: the operator's own label")
		Eventually(mirroredCondition(tdb)).Should(And(
			HaveField("Status", metav1.ConditionTrue), HaveField("Reason", policyv1alpha1.ReasonMirrored)))
		Expect(mirrorsOf(tdb)()).To(HaveLen(2), "racks r1 and r2")

		domainLabels := func() map[string]string {
			out := map[string]string{}
			for _, p := range pods {
				var got corev1.Pod
				Expect(k8s.Get(ctx, client.ObjectKey{Namespace: p.ns, Name: p.name}, &got)).To(Succeed())
				id := p.name
				if p.ns == other {
					id = "other/" + p.name
				}
				if v, ok := got.Labels[budget.DomainLabel]; ok {
					out[id] = v
				}
			}
			return out
		}
		want := map[string]string{
			"db-0":       "r1",     // covered: labelled
			"db-1":       "r2",     // covered: labelled
			"db-3":       "rack-9", // selected, outside the term, not a domain of the budget: kept
			"web-0":      "r1",     // not selected: kept, though a domain of the budget
			"other/db-1": "r2",     // another namespace: kept
			// db-2 (selected, outside the term, a domain of the budget):
			// taken off. web-1 and other/db-0: never labelled.
		}
		Eventually(domainLabels).Should(Equal(want))
		Consistently(domainLabels, 3*time.Second).Should(Equal(want))
		Expect(selectedBy(ns, budget.MirrorName("db", "r1"))).To(Equal([]string{"db-0"}),
			"web-0 carries r1 but not the budget's selector; db-2 lost r1")
		Expect(selectedBy(ns, budget.MirrorName("db", "r2"))).To(Equal([]string{"db-1"}))
		Expect(labelWrites()-before).To(Equal(3.0), "db-0 and db-1 labelled, db-2 unlabelled: no other pod written")

		By("the budget's pass runs again (its spec changed): the other pods still untouched")
		Expect(framework.Modify(ctx, k8s, tdb, func() { tdb.Spec.MaxUnavailable = ptr.To(intstr.FromInt32(2)) })).To(Succeed())
		Eventually(func() int64 { return get(tdb)().Status.ObservedGeneration }).Should(Equal(get(tdb)().Generation))
		Consistently(domainLabels, 2*time.Second).Should(Equal(want))
		Expect(labelWrites() - before).To(Equal(3.0))
	})
})
