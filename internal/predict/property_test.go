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

package predict_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/predict"
)

// randomCluster is a cluster with budgets and the nodes to drain.
type randomCluster struct {
	nodes []corev1.Node
	pods  []*corev1.Pod
	tdbs  []policyv1alpha1.TopologyDisruptionBudget
	pdbs  []policyv1.PodDisruptionBudget
	drain []string
	desc  []string
}

func (c *randomCluster) String() string { return strings.Join(c.desc, "; ") }

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// newRandomCluster builds 1-3 zones of 1-4 nodes (sometimes a node without
// the zone label), one or two apps of 2-12 pods spread over the nodes (mostly
// Ready; some not Ready, Pending or deleting; sometimes a pod missing), and
// per app sometimes a TDB (per zone or not, integer or percentage,
// maxDisruptedDomains, AlwaysAllow) and sometimes one or two PDBs.
func newRandomCluster(r *rand.Rand) *randomCluster {
	c := &randomCluster{}
	zones := []string{"a", "b", "c"}[:1+r.IntN(3)]
	c.nodes = zonedNodes(1+r.IntN(4), zones...)
	if r.IntN(25) == 0 {
		c.nodes = append(c.nodes, *zoneNode("x", 1).Labels(nil).Obj())
		c.desc = append(c.desc, "node zone-x-1 without the zone label")
	}
	apps := []string{"web", "api"}[:1+r.IntN(2)]
	missing := map[types.UID]int32{}
	for _, app := range apps {
		offset := r.IntN(len(c.nodes))
		for i := range 2 + r.IntN(11) {
			// Mostly spread over the nodes, as a scheduler would.
			node := c.nodes[(offset+i)%len(c.nodes)].Name
			if r.IntN(4) == 0 {
				node = c.nodes[r.IntN(len(c.nodes))].Name
			}
			w := appPod(app, fmt.Sprintf("%s-%d", app, i), node)
			state := "Ready"
			switch r.IntN(40) {
			case 0:
				w, state = w.Pending(), "Pending"
			case 1:
				w, state = w.Deleting(now), "deleting"
			case 2, 3, 4:
				w, state = w.NotReady(), "not Ready"
			}
			c.pods = append(c.pods, w.Obj())
			c.desc = append(c.desc, fmt.Sprintf("%s-%d %s on %s", app, i, state, node))
		}
		if r.IntN(10) == 0 {
			missing[replicaSet(app).UID] = 1
			c.desc = append(c.desc, app+" misses a pod")
		}
	}
	owners := ownersOf(c.pods, missing)
	for _, app := range apps {
		if r.IntN(5) > 0 {
			w := tdb(app, app)
			d := app + " TDB"
			zoned := r.IntN(6) > 0
			if !zoned {
				w, d = w.TopologyKey(""), d+" without topologyKey"
			}
			if r.IntN(3) > 0 {
				v := pick(r, "0", "1", "1", "2", "2", "34%", "50%", "100%", "100%")
				w, d = w.MaxUnavailable(intstr.Parse(v)), d+" maxUnavailable "+v
			} else {
				v := pick(r, "1", "50%")
				w, d = w.MinAvailable(intstr.Parse(v)), d+" minAvailable "+v
			}
			if zoned && r.IntN(3) == 0 {
				n := int32(1 + r.IntN(2))
				w, d = w.MaxDisruptedDomains(n), d+fmt.Sprintf(" maxDisruptedDomains %d", n)
			}
			if r.IntN(3) == 0 {
				w, d = w.UnhealthyPodEvictionPolicy(policyv1alpha1.AlwaysAllow), d+" AlwaysAllow"
			}
			c.tdbs = append(c.tdbs, computedWith(w, c.nodes, c.pods, missing, ""))
			c.desc = append(c.desc, d)
		}
		for i := range pick(r, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2) {
			amount := pick[pdbAmount](r, "maxUnavailable=1", "maxUnavailable=2", "maxUnavailable=3", "maxUnavailable=50%", "minAvailable=1", "minAvailable=50%")
			policy := pick[policyv1.UnhealthyPodEvictionPolicyType](r, "", policyv1.IfHealthyBudget, policyv1.AlwaysAllow)
			name := fmt.Sprintf("%s-pdb-%d", app, i)
			c.pdbs = append(c.pdbs, pdbWith(name, app, amount, policy, c.pods, owners))
			c.desc = append(c.desc, fmt.Sprintf("PDB %s %s %s", name, amount, policy))
		}
	}
	for _, n := range c.nodes {
		if r.IntN(10) < 7 {
			c.drain = append(c.drain, n.Name)
		}
	}
	if len(c.drain) == 0 {
		c.drain = []string{c.nodes[0].Name}
	}
	c.desc = append(c.desc, fmt.Sprintf("drain %v", c.drain))
	return c
}

// evictionPath evicts pods one at a time as the eviction webhook
// (internal/evictionwebhook decide()) and then the API server's eviction
// handler would, recording what each writes: a second reading of the
// rules, independent of predict's.
type evictionPath struct {
	nodes func(string) *corev1.Node
	tdbs  []*policyv1alpha1.TopologyDisruptionBudget
	pdbs  []policyv1.PodDisruptionBudget
}

func newEvictionPath(c *randomCluster) *evictionPath {
	e := &evictionPath{nodes: lookup(c.nodes)}
	for i := range c.tdbs {
		e.tdbs = append(e.tdbs, c.tdbs[i].DeepCopy())
	}
	sort.Slice(e.tdbs, func(i, j int) bool { return e.tdbs[i].Name < e.tdbs[j].Name })
	for i := range c.pdbs {
		e.pdbs = append(e.pdbs, *c.pdbs[i].DeepCopy())
	}
	return e
}

// evict says whether the eviction of pod is let through, and records it.
func (e *evictionPath) evict(pod *corev1.Pod) bool {
	// Webhook: pods that are not running pass, as in core.
	if budget.CanIgnoreBudget(pod) {
		return true
	}
	type covering struct {
		tdb   *policyv1alpha1.TopologyDisruptionBudget
		place budget.Placement
		err   error
	}
	var cov []covering
	for _, t := range e.tdbs {
		p, err := budget.Place(t, pod, e.nodes, nil)
		if p.Covered {
			cov = append(cov, covering{t, p, err})
		}
	}
	for _, c := range cov {
		if c.err != nil {
			return false
		}
	}
	decisions := make([]budget.Decision, len(cov))
	for i, c := range cov {
		decisions[i] = budget.DecideEviction(c.tdb, budget.EvictionRequest{Pod: pod, Domain: c.place.Domain, Now: now, NodeGone: c.place.NodeGone})
		if !decisions[i].Allowed {
			return false
		}
	}
	if budget.CheckPodDisruptionBudgets(pod, e.pdbs).Refused {
		return false
	}
	for i, c := range cov {
		if decisions[i].Status != nil {
			c.tdb.Status = *decisions[i].Status
		}
	}
	// Core: the pod's one PDB allowed it; checkAndDecrement spends an
	// allowance unless a not-Ready pod passes under the PDB's policy.
	var mine []*policyv1.PodDisruptionBudget
	for i := range e.pdbs {
		if e.pdbs[i].Spec.Selector.MatchLabels["app"] == pod.Labels["app"] {
			mine = append(mine, &e.pdbs[i])
		}
	}
	if len(mine) == 1 {
		p := mine[0]
		passes := !podReady(pod) && ((p.Spec.UnhealthyPodEvictionPolicy != nil && *p.Spec.UnhealthyPodEvictionPolicy == policyv1.AlwaysAllow) ||
			(p.Status.CurrentHealthy >= p.Status.DesiredHealthy && p.Status.DesiredHealthy > 0))
		if !passes {
			p.Status.DisruptionsAllowed--
		}
	}
	return true
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TestPlanDrainProperties checks PlanDrain, Together and Decide on random
// clusters against each other and against evictionPath.
func TestPlanDrainProperties(t *testing.T) {
	const clusters = 200
	var multiWave, blocked, refusedAlone, notTogether int
	for seed := range uint64(clusters) {
		r := rand.New(rand.NewPCG(seed, 0x7db))
		c := newRandomCluster(r)
		snap := predict.NewSnapshot(c.nodes, c.tdbs, c.pdbs, now)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Errorf("seed %d: %s\ncluster: %s", seed, fmt.Sprintf(format, args...), c)
		}

		// Decide is what one eviction would get.
		for _, p := range c.pods {
			v := snap.Decide(p)
			if want := newEvictionPath(c).evict(p); v.Allowed != want {
				fail("Decide(%s) allowed %v, the webhook and the API server: %v (%v)", p.Name, v.Allowed, want, blockStrings(v.Blocks))
			}
			if !v.Allowed {
				refusedAlone++
			}
		}

		nps := nodePods(c.pods, c.drain...)
		podsOf := map[string][]*corev1.Pod{}
		for _, np := range nps {
			podsOf[np.Node] = np.Pods
		}
		plan := snap.PlanDrain(nps, zoneKey)
		if len(plan.Waves) > 1 {
			multiWave++
		}
		if len(plan.Blocked) > 0 {
			blocked++
		}

		// Every node appears exactly once, in a wave or blocked.
		seen := map[string]int{}
		for _, w := range plan.Waves {
			for _, n := range w.Nodes {
				seen[n]++
			}
		}
		for _, b := range plan.Blocked {
			seen[b.Node]++
			if len(b.BlockedBy) == 0 {
				fail("node %s blocked by nothing", b.Node)
			}
			if ok, _, _ := snap.Together(podsOf[b.Node]); ok {
				fail("node %s blocked, but its pods pass together", b.Node)
			}
		}
		for _, n := range c.drain {
			if seen[n] != 1 {
				fail("node %s appears %d times in the plan %+v", n, seen[n], readPlan(plan))
			}
		}
		if len(seen) != len(c.drain) {
			fail("the plan names nodes not drained: %+v", readPlan(plan))
		}

		// At most one wave per drainable node (one at a time), and each
		// drainable node passes alone.
		drainable := len(c.drain) - len(plan.Blocked)
		if len(plan.Waves) > drainable {
			fail("%d waves for %d drainable nodes", len(plan.Waves), drainable)
		}

		// Every wave passes together: by Together, and by the webhook and
		// the API server in any order.
		for i, w := range plan.Waves {
			var pods []*corev1.Pod
			for _, n := range w.Nodes {
				pods = append(pods, podsOf[n]...)
				if ok, blocks, _ := snap.Together(podsOf[n]); !ok {
					fail("node %s of wave %d refused alone: %v", n, i, blockStrings(blocks))
				}
			}
			if w.Pods != len(pods) {
				fail("wave %d says %d pods, its nodes have %d", i, w.Pods, len(pods))
			}
			if ok, blocks, _ := snap.Together(pods); !ok {
				fail("wave %d %v refused together: %v", i, w.Nodes, blockStrings(blocks))
			}
			for range 3 {
				r.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
				e := newEvictionPath(c)
				for _, p := range pods {
					if !e.evict(p) {
						fail("wave %d %v: the webhook or the API server refuses %s after %v", i, w.Nodes, p.Name, podNames(pods))
						break
					}
				}
			}
		}

		// All the drained pods together: Together agrees with the eviction
		// path taken Ready pods first (Together's order).
		var all []*corev1.Pod
		for _, np := range nps {
			all = append(all, np.Pods...)
		}
		ok, _, _ := snap.Together(all)
		if !ok {
			notTogether++
		}
		if want := evictAllReadyFirst(c, all); ok != want {
			fail("Together(every drained pod) ok = %v, the webhook and the API server (Ready pods first): %v", ok, want)
		}
	}
	t.Logf("%d clusters: %d with several waves, %d with a blocked node, %d not drainable at once, %d pods refused alone",
		clusters, multiWave, blocked, notTogether, refusedAlone)
	// The generator must reach the interesting cases, or the test proves
	// little.
	if multiWave < clusters/10 || blocked < clusters/20 || notTogether < clusters/10 || refusedAlone == 0 {
		t.Errorf("the random clusters miss cases: %d with several waves, %d with a blocked node, %d not drainable at once",
			multiWave, blocked, notTogether)
	}
}

// evictAllReadyFirst evicts pods on evictionPath, Ready pods first then the
// rest, each group by name, and says whether all were let through.
func evictAllReadyFirst(c *randomCluster, pods []*corev1.Pod) bool {
	ordered := append([]*corev1.Pod(nil), pods...)
	free := func(p *corev1.Pod) bool { return budget.CanIgnoreBudget(p) || !podReady(p) }
	sort.SliceStable(ordered, func(i, j int) bool {
		if fi, fj := free(ordered[i]), free(ordered[j]); fi != fj {
			return fj
		}
		return ordered[i].Name < ordered[j].Name
	})
	e := newEvictionPath(c)
	ok := true
	for _, p := range ordered {
		if !e.evict(p) {
			ok = false
		}
	}
	return ok
}

func podNames(pods []*corev1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}
