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
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// readyDelayAnnotation overrides the cluster's pod start-up delay for one
// pod (hack/cluster/stages/pod-running.yaml).
const readyDelayAnnotation = "tdb.dev/ready-delay"

// ---------------------------------------------------------------------------
// a spec's namespace and nodes

// pool is a spec's fixture.Pool (namespace e2e-<name>) and the watchers it
// started, stopped before the pool is removed.
type pool struct {
	*fixture.Pool
	samplers []*sampler
}

// newFixture makes the spec's namespace and nodesPerZone fresh nodes in each
// zone, and registers their removal.
func newFixture(ctx context.Context, name string, nodesPerZone int) *pool {
	f := &pool{Pool: fixture.NewPool(ctx, suiteEnv(), name, "e2e-"+name, nodesPerZone)}
	// Registered after the pool's removal, so it runs first.
	DeferCleanup(f.stopWatchers)
	return f
}

// stopWatchers stops the spec's watchers.
func (f *pool) stopWatchers() {
	for _, s := range f.samplers {
		s.Stop()
	}
}

// ---------------------------------------------------------------------------
// workloads

// statefulSet is one zone's StatefulSet of app: Parallel pod management,
// pinned to the zone and to the spec's nodes, spread over hostnames.
func (f *pool) statefulSet(app, zone string, replicas int32, annotations map[string]string) *appsv1.StatefulSet {
	lbls := map[string]string{"app": app, "zone": zone}
	return onPool(f, builders.StatefulSet(app+"-"+zone), app, lbls, zone).Labels(lbls).
		Replicas(replicas).ParallelPodManagement().PodAnnotations(annotations).Obj()
}

// onPool puts w in the spec's namespace with pods labelled lbls, running
// one container of app, pinned to the spec's nodes (and to zone unless
// empty) and spread over hostnames (and zones when zone is empty).
func onPool[T builders.Workload](f *pool, w *builders.WorkloadWrapper[T], app string, lbls map[string]string, zone string) *builders.WorkloadWrapper[T] {
	w.Namespace(f.NS).PodLabels(lbls).Containers(corev1.Container{Name: app, Image: app + ":e2e"}).
		RequireNodeLabel(fixture.PoolLabel, f.Name).Spread(corev1.LabelHostname, corev1.ScheduleAnyway)
	if zone != "" {
		return w.RequireNodeLabel(kwokenv.ZoneKey, zone)
	}
	return w.Spread(kwokenv.ZoneKey, corev1.DoNotSchedule)
}

// createStatefulSets creates one StatefulSet of app per zone.
func (f *pool) createStatefulSets(ctx context.Context, app string, perZone int32, annotations map[string]string) {
	for _, z := range fixture.Zones {
		Expect(k8s.Create(ctx, f.statefulSet(app, z, perZone, annotations))).To(Succeed())
	}
}

// deployment is a Deployment of app spread evenly over the zones and the
// spec's nodes.
func (f *pool) deployment(app string, replicas int32) *appsv1.Deployment {
	return onPool(f, builders.Deployment(app), app, map[string]string{"app": app}, "").Replicas(replicas).Obj()
}

// scaleStatefulSet sets a StatefulSet's replicas.
func (f *pool) scaleStatefulSet(ctx context.Context, name string, replicas int32) {
	var sts appsv1.StatefulSet
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: name}, &sts)).To(Succeed())
	patch := client.MergeFrom(sts.DeepCopy())
	sts.Spec.Replicas = ptr.To(replicas)
	Expect(k8s.Patch(ctx, &sts, patch)).To(Succeed())
}

// busiestNode is the node of zone (among the spec's) holding most of app's pods.
func (f *pool) busiestNode(ctx context.Context, app, zone string) (string, []string) {
	byNode := f.PodsByNode(ctx, app)
	best := ""
	for _, n := range f.ZoneNodes(zone) {
		if best == "" || len(byNode[n]) > len(byNode[best]) {
			best = n
		}
	}
	Expect(byNode[best]).NotTo(BeEmpty(), "no pod of %s in %s", app, zone)
	return best, byNode[best]
}

// ---------------------------------------------------------------------------
// budgets

func tdbSpec(app string) policyv1alpha1.TopologyDisruptionBudgetSpec {
	return policyv1alpha1.TopologyDisruptionBudgetSpec{
		Selector:       policyv1alpha1.SetAsLabelSelector(map[string]string{"app": app}),
		MaxUnavailable: ptr.To(intstr.FromInt32(1)),
	}
}

// zonedWeb deploys "web" (a StatefulSet of 3 per zone), waits for its 9
// pods to be Ready and creates the budget "web" over them with topologyKey
// zone, its spec adjusted by mutate (nil: as tdbSpec gives it).
func (f *pool) zonedWeb(ctx context.Context, mutate func(*policyv1alpha1.TopologyDisruptionBudgetSpec)) {
	f.createStatefulSets(ctx, "web", 3, nil)
	f.WaitPodsReady(ctx, "web", 9)
	spec := tdbSpec("web")
	spec.TopologyKey = kwokenv.ZoneKey
	if mutate != nil {
		mutate(&spec)
	}
	f.CreateTDB(ctx, "web", spec)
}

func (f *pool) getTDB(ctx context.Context, name string) *policyv1alpha1.TopologyDisruptionBudget {
	var tdb policyv1alpha1.TopologyDisruptionBudget
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: name}, &tdb)).To(Succeed())
	return &tdb
}

// tdbWant is what a budget's status should show.
type tdbWant struct {
	Expected, Healthy, Allowed int32
	// Domains, when set, are the domains' names in status order.
	Domains []string
}

// waitTDB waits until the budget's status is current and shows want, with
// no eviction record left.
func (f *pool) waitTDB(ctx context.Context, name string, want tdbWant) *policyv1alpha1.TopologyDisruptionBudget {
	var last *policyv1alpha1.TopologyDisruptionBudget
	Eventually(ctx, func(g Gomega) {
		var tdb policyv1alpha1.TopologyDisruptionBudget
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: name}, &tdb)).To(Succeed())
		last = &tdb
		st := tdb.Status
		g.Expect(st.ObservedGeneration).To(Equal(tdb.Generation), "observedGeneration; %s", fmtTDB(&tdb))
		g.Expect([]int32{st.ExpectedPods, st.CurrentHealthy, st.DisruptionsAllowed}).
			To(Equal([]int32{want.Expected, want.Healthy, want.Allowed}), "expected/healthy/allowed; %s", fmtTDB(&tdb))
		g.Expect(st.DisruptedPods).To(BeEmpty(), "eviction records; %s", fmtTDB(&tdb))
		if want.Domains != nil {
			var names []string
			for _, d := range st.Domains {
				names = append(names, d.Name)
			}
			g.Expect(names).To(Equal(want.Domains), "domains; %s", fmtTDB(&tdb))
		}
	}).WithTimeout(2 * time.Minute).Should(Succeed())
	return last
}

// fmtTDB is a budget's status on one line, for failure messages and logs.
func fmtTDB(tdb *policyv1alpha1.TopologyDisruptionBudget) string {
	st := tdb.Status
	var b strings.Builder
	fmt.Fprintf(&b, "%s/%s gen=%d observed=%d rv=%s expected=%d healthy=%d allowed=%d domains=[",
		tdb.Namespace, tdb.Name, tdb.Generation, st.ObservedGeneration, tdb.ResourceVersion, st.ExpectedPods, st.CurrentHealthy, st.DisruptionsAllowed)
	for i, d := range st.Domains {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s:%d/%d,desired=%d,allowed=%d", d.Name, d.CurrentHealthy, d.ExpectedPods, d.DesiredHealthy, d.DisruptionsAllowed)
	}
	b.WriteString("] records=[")
	for i, r := range st.DisruptedPods {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s@%s", r.Name, r.Domain)
	}
	b.WriteString("]")
	if c := meta.FindStatusCondition(st.Conditions, policyv1alpha1.ConditionDisruptionAllowed); c != nil {
		fmt.Fprintf(&b, " %s=%s/%s", c.Type, c.Status, c.Reason)
	}
	return b.String()
}

func (f *pool) getPDB(ctx context.Context, name string) *policyv1.PodDisruptionBudget {
	var pdb policyv1.PodDisruptionBudget
	Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: name}, &pdb)).To(Succeed())
	return &pdb
}

// ---------------------------------------------------------------------------
// kubectl drain

type drainResult struct {
	Node    string
	Output  string
	Err     error
	Elapsed time.Duration
}

// Refusals counts the evictions kubectl drain was refused with 429 and
// retried (it retries nothing else).
func (r drainResult) Refusals() int { return strings.Count(r.Output, "will retry after") }

func (r drainResult) String() string {
	status := "ok"
	if r.Err != nil {
		status = r.Err.Error()
	}
	return fmt.Sprintf("drain %s: %s after %s, %d refusal(s) retried\n%s", r.Node, status, r.Elapsed.Round(100*time.Millisecond), r.Refusals(), fixture.Quoted(r.Output))
}

// drain runs `kubectl drain NODE` with a global timeout and extra flags.
func drain(ctx context.Context, node string, timeout time.Duration, extra ...string) drainResult {
	args := append([]string{"drain", node, "--ignore-daemonsets", "--delete-emptydir-data",
		"--timeout=" + timeout.String()}, extra...)
	start := time.Now()
	out, err := cluster.Kubectl(ctx, args...).CombinedOutput()
	r := drainResult{Node: node, Output: string(out), Err: err, Elapsed: time.Since(start)}
	GinkgoWriter.Println(r.String())
	return r
}

// startDrains starts one kubectl drain process per node at once; the
// results arrive on the channel, in completion order.
func startDrains(ctx context.Context, nodes []string, timeout time.Duration) <-chan drainResult {
	ch := make(chan drainResult, len(nodes))
	for _, n := range nodes {
		go func() { ch <- drain(ctx, n, timeout) }()
	}
	return ch
}

// collect waits for n results, at most within.
func collect(ch <-chan drainResult, n int, within time.Duration) []drainResult {
	var out []drainResult
	deadline := time.After(within)
	for len(out) < n {
		select {
		case r := <-ch:
			out = append(out, r)
		case <-deadline:
			Fail(fmt.Sprintf("only %d of %d kubectl drain processes ended within %s", len(out), n, within))
		}
	}
	return out
}

// expectDrained asserts every drain succeeded.
func expectDrained(results []drainResult) (refusals int) {
	for _, r := range results {
		Expect(r.Err).NotTo(HaveOccurred(), "%s", r)
		refusals += r.Refusals()
	}
	return refusals
}

// ---------------------------------------------------------------------------
// the watcher

// sampler takes an independent measurement of each zone's unavailable pods
// (by default a kwokenv.Watcher's: the zone's expected pods minus its Ready,
// not-deleting pods) every 100 ms and keeps
// the worst per zone, the most zones disrupted at once and the largest sum
// over zones, with the samples that set each new worst as evidence.
type sampler struct {
	*kwokenv.Sampler
	printOnce sync.Once
}

type watchReport = kwokenv.SampleReport

// watch starts sampling app's pods; expected gives each zone's expected pods.
func (f *pool) watch(app string, expected func(ctx context.Context) (map[string]int, error)) *sampler {
	w := &kwokenv.Watcher{Client: k8s, NS: f.NS, Selector: labels.SelectorFromSet(labels.Set{"app": app}), Expected: expected}
	return f.watchWith(w.Unavailable)
}

// watchWith starts sampling with another measurement of each zone's
// unavailable pods.
func (f *pool) watchWith(measure func(ctx context.Context) (map[string]int, error)) *sampler {
	s := &sampler{Sampler: kwokenv.StartSampler(measure, 100*time.Millisecond, nil)}
	f.samplers = append(f.samplers, s)
	return s
}

// Stop stops sampling and returns the report (also printed).
func (s *sampler) Stop() watchReport {
	rep := s.Sampler.Stop()
	s.printOnce.Do(func() { GinkgoWriter.Println("watcher:", rep.String()) })
	return rep
}

// expectHeld asserts the watcher saw enough samples and never more than
// perZone unavailable in a zone; maxZones and maxTotal are checked when >= 0.
func expectHeld(rep watchReport, perZone, maxZones, maxTotal int) {
	Expect(rep.Samples).To(BeNumerically(">=", 20), "the watcher took too few samples: %s", rep)
	Expect(rep.Errors).To(BeNumerically("<=", rep.Samples/10), "the watcher failed too often: %s", rep)
	for z, n := range rep.MaxZone {
		Expect(n).To(BeNumerically("<=", perZone), "zone %s exceeded its budget: %s", z, rep)
	}
	if maxZones >= 0 {
		Expect(rep.MaxDisruptedZones).To(BeNumerically("<=", maxZones), "too many zones disrupted at once: %s", rep)
	}
	if maxTotal >= 0 {
		Expect(rep.MaxTotal).To(BeNumerically("<=", maxTotal), "too many pods unavailable in total: %s", rep)
	}
}

// statefulSetsExpected: each zone expects the replicas of app's StatefulSet
// there (read live).
func (f *pool) statefulSetsExpected(app string) func(ctx context.Context) (map[string]int, error) {
	return func(ctx context.Context) (map[string]int, error) {
		var list appsv1.StatefulSetList
		if err := k8s.List(ctx, &list, client.InNamespace(f.NS), client.MatchingLabels{"app": app}); err != nil {
			return nil, err
		}
		out := map[string]int{}
		for _, s := range list.Items {
			out[s.Labels["zone"]] += int(ptr.Deref(s.Spec.Replicas, 1))
		}
		return out, nil
	}
}

// zoneOfNodes maps node name -> zone.
func zoneOfNodes(ctx context.Context) (map[string]string, error) {
	var nodes corev1.NodeList
	if err := k8s.List(ctx, &nodes); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, n := range nodes.Items {
		out[n.Name] = n.Labels[kwokenv.ZoneKey]
	}
	return out, nil
}
