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
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

// overlapWatcher watches a namespace's pods and PodDisruptionBudgets on its
// own connection and, at every event, records each pod selected by more
// than one PodDisruptionBudget (the eviction API answers 500 for such a
// pod).
type overlapWatcher struct {
	mu       sync.Mutex
	seen     []string
	events   int
	stop     context.CancelFunc
	pods     cache.Store
	pdbs     cache.Store
	allPDBs  map[string]bool
	maxPDBs  int
	checking bool
}

func watchOverlaps(ns string) *overlapWatcher {
	cs, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	wctx, cancel := context.WithCancel(ctx)
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	w := &overlapWatcher{stop: cancel, allPDBs: map[string]bool{}}
	podInf := f.Core().V1().Pods().Informer()
	pdbInf := f.Policy().V1().PodDisruptionBudgets().Informer()
	w.pods, w.pdbs = podInf.GetStore(), pdbInf.GetStore()
	h := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { w.check() },
		UpdateFunc: func(any, any) { w.check() },
		DeleteFunc: func(any) { w.check() },
	}
	_, err = podInf.AddEventHandler(h)
	Expect(err).NotTo(HaveOccurred())
	_, err = pdbInf.AddEventHandler(h)
	Expect(err).NotTo(HaveOccurred())
	f.Start(wctx.Done())
	f.WaitForCacheSync(wctx.Done())
	w.mu.Lock()
	w.checking = true
	w.mu.Unlock()
	w.check()
	return w
}

func (w *overlapWatcher) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.checking {
		return
	}
	w.events++
	var pdbs []*policyv1.PodDisruptionBudget
	for _, o := range w.pdbs.List() {
		p := o.(*policyv1.PodDisruptionBudget)
		pdbs = append(pdbs, p)
		w.allPDBs[p.Name] = true
	}
	w.maxPDBs = max(w.maxPDBs, len(pdbs))
	for _, o := range w.pods.List() {
		pod := o.(*corev1.Pod)
		var by []string
		for _, p := range pdbs {
			sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
			if err == nil && p.Spec.Selector != nil && sel.Matches(labels.Set(pod.Labels)) {
				by = append(by, p.Name)
			}
		}
		if len(by) > 1 {
			sort.Strings(by)
			w.seen = append(w.seen, fmt.Sprintf("pod %s under %s", pod.Name, strings.Join(by, " and ")))
		}
	}
}

// overlaps stops the watcher and returns what it saw.
func (w *overlapWatcher) overlaps() (seen []string, events int, pdbs []string) {
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	for n := range w.allPDBs {
		pdbs = append(pdbs, n)
	}
	sort.Strings(pdbs)
	return w.seen, w.events, pdbs
}

var _ = Describe("Mirrors while the budget's spec changes", Serial, func() {
	It("never puts a pod under two PodDisruptionBudgets: key removed and restored, a term added and removed, the mode switched", func() {
		ns, err := framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		newZoned(ns)
		tdb := newBudget(ns, func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			mirrored(s)
			s.MaxDisruptedDomains = ptr.To(int32(1))
		})
		Eventually(mirrorsOf(tdb)).Should(HaveLen(3))
		w := watchOverlaps(ns)

		domainsOf := func() []string {
			var out []string
			for _, m := range mirrorsOf(tdb)() {
				out = append(out, m.Domain)
			}
			return out
		}
		change := func(what string, edit func(*policyv1alpha1.TopologyDisruptionBudgetSpec), domains []string, key string) {
			By(what)
			Expect(framework.Modify(ctx, k8s, tdb, func() { edit(&tdb.Spec) })).To(Succeed())
			Eventually(domainsOf).Should(Equal(domains))
			Eventually(func() []string {
				var keys []string
				for _, m := range mirrorsOf(tdb)() {
					keys = append(keys, m.DomainKey)
				}
				return keys
			}).Should(HaveEach(key))
			Eventually(mirroredCondition(tdb)).Should(HaveField("Reason", policyv1alpha1.ReasonMirrored))
		}
		change("topologyKey removed: one mirror, the selector alone", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey = ""
			s.MaxDisruptedDomains = nil
		}, []string{""}, "")
		Expect(selectedBy(ns, budget.MirrorName("ingesters", budget.AllDomain))).To(HaveLen(9))
		change("topologyKey back: one mirror per zone", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey = zoneKey
		}, []string{"zone-a", "zone-b", "zone-c"}, zoneKey)
		change("a nodeSelectorTerm without zone-c: the operator's domain label", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.NodeSelectorTerm = &policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
				{Key: zoneKey, Operator: "NotIn", Values: []string{"zone-c"}}}}
		}, []string{"zone-a", "zone-b"}, budget.DomainLabel)
		change("the term alone, no key: the domain all", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey = ""
		}, []string{budget.AllDomain}, budget.DomainLabel)
		change("key back, term removed", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
			s.TopologyKey = zoneKey
			s.NodeSelectorTerm = nil
		}, []string{"zone-a", "zone-b", "zone-c"}, zoneKey)
		By("mirroring off, then on")
		Expect(framework.Modify(ctx, k8s, tdb, func() { tdb.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorNone })).To(Succeed())
		Eventually(mirrorsOf(tdb)).Should(BeEmpty())
		change("mirroring on", mirrored, []string{"zone-a", "zone-b", "zone-c"}, zoneKey)

		seen, events, pdbs := w.overlaps()
		GinkgoWriter.Printf("overlap watcher: %d events, PodDisruptionBudgets seen: %v\n", events, pdbs)
		Expect(pdbs).To(ContainElement(budget.MirrorName("ingesters", budget.AllDomain)), "the watcher saw the changes")
		Expect(seen).To(BeEmpty(), "pods under two PodDisruptionBudgets at some moment")
	})

	It("lets an older mirrored budget over the same pods mirror only once the younger one's mirrors are gone", func() {
		ns, err := framework.Namespace(ctx, k8s)
		Expect(err).NotTo(HaveOccurred())
		newZoned(ns)
		w := watchOverlaps(ns)
		// Created first, and first by name too (creation times are kept to
		// the second): the older one.
		older := newBudget(ns, mirrored)
		Eventually(mirrorsOf(older)).Should(HaveLen(3))
		younger := builders.Budget("z-younger").Namespace(ns).MatchLabels(map[string]string{"app": "ingester"}).TopologyKey(zoneKey).
			MaxUnavailable(intstr.FromInt32(2)).Obj()
		mirrored(&younger.Spec)
		Expect(k8s.Create(ctx, younger)).To(Succeed())
		Eventually(mirroredCondition(younger)).Should(HaveField("Reason", policyv1alpha1.ReasonPDBConflict))
		Consistently(mirrorsOf(younger), 2*time.Second).Should(BeEmpty())
		Expect(mirrorsOf(older)()).To(HaveLen(3))

		By("the older budget's mirroring off: the younger one mirrors")
		Expect(framework.Modify(ctx, k8s, older, func() { older.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorNone })).To(Succeed())
		Eventually(mirrorsOf(younger)).Should(HaveLen(3))
		Expect(mirrorsOf(older)()).To(BeEmpty())

		By("back on: the younger yields, and the older mirrors once the younger's mirrors are gone")
		Expect(framework.Modify(ctx, k8s, older, func() { mirrored(&older.Spec) })).To(Succeed())
		Eventually(mirrorsOf(younger)).Should(BeEmpty())
		Eventually(mirrorsOf(older)).Should(HaveLen(3))
		Eventually(mirroredCondition(younger)).Should(HaveField("Reason", policyv1alpha1.ReasonPDBConflict))

		seen, events, _ := w.overlaps()
		GinkgoWriter.Printf("overlap watcher: %d events\n", events)
		Expect(seen).To(BeEmpty(), "pods under two PodDisruptionBudgets at some moment")
	})
})
