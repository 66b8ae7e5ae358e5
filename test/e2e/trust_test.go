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
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// setPodReady sets a running pod's Ready condition, as a failing readiness
// probe does (the local cluster starts pods and leaves their conditions be).
func (f *pool) setPodReady(ctx context.Context, name string, ready bool) {
	status := corev1.ConditionTrue
	if !ready {
		status = corev1.ConditionFalse
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []map[string]any{
		{"type": string(corev1.PodReady), "status": string(status), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)},
		{"type": string(corev1.ContainersReady), "status": string(status), "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)},
	}}})
	Expect(err).NotTo(HaveOccurred())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: name}}
	Expect(k8s.Status().Patch(ctx, pod, client.RawPatch(types.StrategicMergePatchType, patch))).To(Succeed())
}

// editTDB changes the budget's spec on its newest version, as kubectl edit
// does.
func (f *pool) editTDB(ctx context.Context, name string, edit func(*policyv1alpha1.TopologyDisruptionBudgetSpec)) {
	Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		tdb := f.getTDB(ctx, name)
		edit(&tdb.Spec)
		return k8s.Update(ctx, tdb)
	})).To(Succeed())
}

// mirrorsOf lists the budget's mirrored PodDisruptionBudgets by domain.
func (f *pool) mirrorsOf(ctx context.Context, name string) map[string]policyv1.PodDisruptionBudget {
	var list policyv1.PodDisruptionBudgetList
	Expect(k8s.List(ctx, &list, client.InNamespace(f.NS), client.MatchingLabels{budget.MirrorBudgetLabel: name})).To(Succeed())
	out := map[string]policyv1.PodDisruptionBudget{}
	for _, p := range list.Items {
		out[p.Labels[budget.DomainLabel]] = p
	}
	return out
}

// pdbOverlaps watches a namespace's pods and PodDisruptionBudgets on its own
// connection and records, at every event, each pod more than one
// PodDisruptionBudget selects.
type pdbOverlaps struct {
	mu         sync.Mutex
	seen       []string
	events     int
	stop       context.CancelFunc
	pods, pdbs cache.Store
}

func (f *pool) watchPDBOverlaps(ctx context.Context) *pdbOverlaps {
	wctx, cancel := context.WithCancel(ctx)
	fac := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(f.NS))
	w := &pdbOverlaps{stop: cancel}
	podInf, pdbInf := fac.Core().V1().Pods().Informer(), fac.Policy().V1().PodDisruptionBudgets().Informer()
	w.pods, w.pdbs = podInf.GetStore(), pdbInf.GetStore()
	h := cache.ResourceEventHandlerFuncs{AddFunc: func(any) { w.check() }, UpdateFunc: func(any, any) { w.check() }, DeleteFunc: func(any) { w.check() }}
	_, err := podInf.AddEventHandler(h)
	Expect(err).NotTo(HaveOccurred())
	_, err = pdbInf.AddEventHandler(h)
	Expect(err).NotTo(HaveOccurred())
	fac.Start(wctx.Done())
	fac.WaitForCacheSync(wctx.Done())
	return w
}

func (w *pdbOverlaps) check() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events++
	for _, o := range w.pods.List() {
		pod := o.(*corev1.Pod)
		var by []string
		for _, x := range w.pdbs.List() {
			p := x.(*policyv1.PodDisruptionBudget)
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

func (w *pdbOverlaps) Stop() (seen []string, events int) {
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen, w.events
}

var _ = Describe("Trust: mirrors and spec changes agree with the budget", func() {
	It("a not-Ready pod of a zone that must wait under maxDisruptedDomains drains with mirrored PDBs, as it does without them",
		SpecTimeout(6*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "mirrorsick", 3)
			f.zonedWeb(ctx, func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) {
				s.MaxDisruptedDomains = ptr.To(int32(1))
				s.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
			})
			f.waitTDB(ctx, "web", tdbWant{Expected: 9, Healthy: 9, Allowed: 1, Domains: fixture.Zones})
			Eventually(ctx, func() int { return len(f.mirrorsOf(ctx, "web")) }).Should(Equal(3))

			By("a pod of zone-b and a pod of zone-c turn not Ready")
			sick := map[string]corev1.Pod{}
			for _, p := range f.Pods(ctx, "web") {
				if z := p.Labels["zone"]; (z == "zone-b" || z == "zone-c") && sick[z].Name == "" {
					sick[z] = p
				}
			}
			for _, p := range sick {
				f.setPodReady(ctx, p.Name, false)
			}
			Eventually(ctx, func(g Gomega) {
				tdb := f.getTDB(ctx, "web")
				g.Expect(tdb.Status.CurrentHealthy).To(Equal(int32(7)), "%s", fmtTDB(tdb))
				m := f.mirrorsOf(ctx, "web")["zone-c"]
				// The disruption controller has counted the mirror's pods:
				// zone-c waits and keeps its 2 healthy pods.
				g.Expect(m.Spec.MinAvailable.IntValue()).To(Equal(2), "zone-c mirror %+v", m.Spec)
				g.Expect(m.Status.ObservedGeneration).To(Equal(m.Generation))
				g.Expect(m.Status.CurrentHealthy).To(Equal(int32(2)))
			}).Should(Succeed())

			By("kubectl drain of the node of the not-Ready zone-c pod finishes")
			node := sick["zone-c"].Spec.NodeName
			Expect(f.PodsByNode(ctx, "web")[node]).To(Equal([]string{sick["zone-c"].Name}), "the node holds only the not-Ready pod")
			expectDrained(collect(startDrains(ctx, []string{node}, 60*time.Second), 1, 90*time.Second))

			By("a healthy pod of zone-c is still refused, by the budget and by its mirror")
			for _, p := range f.Pods(ctx, "web") {
				if p.Labels["zone"] == "zone-c" && kwokenv.PodReady(&p) {
					err := f.Evict(ctx, p.Name)
					Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "evicting healthy %s of a waiting zone: %v", p.Name, err)
					break
				}
			}
		})

	for _, mirrored := range []bool{false, true} {
		It(fmt.Sprintf("topologyKey removed, then changed to hostname, while a ResourceQuota keeps a replacement out (mirrors %v): a second eviction is refused, no row of the old key remains, no pod is under two PDBs", mirrored),
			SpecTimeout(8*time.Minute), func(ctx SpecContext) {
				name := "speckey"
				if mirrored {
					name = "speckeym"
				}
				f := newFixture(ctx, name, 2)
				Expect(k8s.Create(ctx, f.deployment("web", 6))).To(Succeed())
				f.WaitPodsReady(ctx, "web", 6)
				spec := tdbSpec("web")
				spec.TopologyKey = kwokenv.ZoneKey
				if mirrored {
					spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
				}
				f.CreateTDB(ctx, "web", spec)
				f.waitTDB(ctx, "web", tdbWant{Expected: 6, Healthy: 6, Allowed: 3, Domains: fixture.Zones})
				var overlaps *pdbOverlaps
				if mirrored {
					Eventually(ctx, func() int { return len(f.mirrorsOf(ctx, "web")) }).Should(Equal(3))
					overlaps = f.watchPDBOverlaps(ctx)
				}

				By("a ResourceQuota of 5 pods: no replacement can be created")
				Expect(k8s.Create(ctx, &corev1.ResourceQuota{
					ObjectMeta: metav1.ObjectMeta{Namespace: f.NS, Name: "pods"},
					Spec:       corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("5")}},
				})).To(Succeed())
				Eventually(ctx, func(g Gomega) {
					var q corev1.ResourceQuota
					g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: "pods"}, &q)).To(Succeed())
					g.Expect(q.Status.Hard).To(HaveKey(corev1.ResourcePods), "the quota controller has seen it")
				}).Should(Succeed())

				By("one zone-a pod evicted: allowed, and gone")
				var first string
				for _, p := range f.Pods(ctx, "web") {
					if z, err := zoneOfNodes(ctx); err == nil && z[p.Spec.NodeName] == "zone-a" {
						first = p.Name
						break
					}
				}
				Expect(first).NotTo(BeEmpty())
				Expect(f.Evict(ctx, first)).To(Succeed())
				Eventually(ctx, func() int { return len(f.Pods(ctx, "web")) }).Should(Equal(5), "the replacement is kept out by the quota")
				Consistently(ctx, func() int { return len(f.Pods(ctx, "web")) }, 3*time.Second).Should(Equal(5))

				secondRefused := func(what string) {
					tdb := f.getTDB(ctx, "web")
					for _, d := range tdb.Status.Domains {
						Expect(d.Name).NotTo(HavePrefix("zone-"), "%s: a row of the old key remains: %s", what, fmtTDB(tdb))
					}
					Expect(tdb.Status.DisruptionsAllowed).To(BeZero(), "%s: %s", what, fmtTDB(tdb))
					for _, p := range f.Pods(ctx, "web") {
						err := f.Evict(ctx, p.Name)
						Expect(apierrors.IsTooManyRequests(err)).To(BeTrue(), "%s: evicting %s with 1 of 6 already down under maxUnavailable 1: %v; %s",
							what, p.Name, err, fmtTDB(f.getTDB(ctx, "web")))
					}
				}
				By("topologyKey removed: one row, all, and every second eviction refused")
				f.editTDB(ctx, "web", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) { s.TopologyKey = "" })
				Eventually(ctx, func(g Gomega) {
					tdb := f.getTDB(ctx, "web")
					g.Expect(tdb.Status.ObservedGeneration).To(Equal(tdb.Generation))
					var names []string
					for _, d := range tdb.Status.Domains {
						names = append(names, d.Name)
					}
					g.Expect(names).To(Equal([]string{budget.AllDomain}), "%s", fmtTDB(tdb))
				}).Should(Succeed())
				secondRefused("key removed")

				By("topologyKey kubernetes.io/hostname: one row per node, no zone row, every second eviction refused")
				f.editTDB(ctx, "web", func(s *policyv1alpha1.TopologyDisruptionBudgetSpec) { s.TopologyKey = corev1.LabelHostname })
				Eventually(ctx, func(g Gomega) {
					tdb := f.getTDB(ctx, "web")
					g.Expect(tdb.Status.ObservedGeneration).To(Equal(tdb.Generation))
					g.Expect(tdb.Status.Domains).NotTo(BeEmpty())
					for _, d := range tdb.Status.Domains {
						g.Expect(d.Name).To(HavePrefix(name), "%s", fmtTDB(tdb))
					}
				}).Should(Succeed())
				secondRefused("key changed to hostname")

				if mirrored {
					Eventually(ctx, func(g Gomega) {
						ms := f.mirrorsOf(ctx, "web")
						for d := range ms {
							g.Expect(d).To(HavePrefix(name), "mirror of domain %q", d)
						}
					}).Should(Succeed())
					seen, events := overlaps.Stop()
					GinkgoWriter.Printf("PDB overlap watcher: %d events\n", events)
					Expect(seen).To(BeEmpty(), "pods under two PodDisruptionBudgets at some moment")
				}
			})
	}
})
