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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// TestTogether: whether a set of pods can be evicted at once (a drain sends
// the evictions concurrently), while each alone may be.
func TestTogether(t *testing.T) {
	six := zonedNodes(2, "a", "b", "c")
	nine := zonedNodes(3, "a", "b", "c")
	tests := []struct {
		name  string
		nodes []corev1.Node
		pods  func() []*builders.PodWrapper
		tdbs  []*builders.BudgetWrapper
		pdbs  func([]*corev1.Pod) []policyv1.PodDisruptionBudget
		evict []string
		// alone says each pod of evict is allowed on its own.
		alone bool
		// blocks are the refusals of the evictions together (none: ok).
		blocks []string
	}{
		{name: "two pods of zone-a under maxUnavailable 1: each alone, not together",
			nodes: six, pods: func() []*builders.PodWrapper { return onePodPerNode(six) }, tdbs: []*builders.BudgetWrapper{webTDB("1")},
			evict: []string{"web-zone-a-1", "web-zone-a-2"}, alone: true,
			blocks: []string{"shop/web-zone-a-2: TDB shop/web zone-a InsufficientPods"}},
		{name: "one pod in each of three zones under maxUnavailable 1: together",
			nodes: six, pods: func() []*builders.PodWrapper { return onePodPerNode(six) }, tdbs: []*builders.BudgetWrapper{webTDB("1")},
			evict: []string{"web-zone-a-1", "web-zone-b-1", "web-zone-c-2"}, alone: true},
		{name: "maxDisruptedDomains 1, pods in zone-a and zone-b: each alone, not together",
			nodes: nine, pods: func() []*builders.PodWrapper { return onePodPerNode(nine) },
			tdbs:  []*builders.BudgetWrapper{webTDB("1").MaxDisruptedDomains(1)},
			evict: []string{"web-zone-b-1", "web-zone-a-1"}, alone: true,
			blocks: []string{"shop/web-zone-b-1: TDB shop/web zone-b MaxDisruptedDomains"}},
		{name: "maxDisruptedDomains 1, two pods of zone-a under maxUnavailable 2: together",
			nodes: nine, pods: func() []*builders.PodWrapper { return onePodPerNode(nine) },
			tdbs:  []*builders.BudgetWrapper{webTDB("2").MaxDisruptedDomains(1)},
			evict: []string{"web-zone-a-1", "web-zone-a-2"}, alone: true},
		{name: "maxDisruptedDomains 2, pods in three zones: the third zone is refused",
			nodes: nine, pods: func() []*builders.PodWrapper { return onePodPerNode(nine) },
			tdbs:  []*builders.BudgetWrapper{webTDB("1").MaxDisruptedDomains(2)},
			evict: []string{"web-zone-a-1", "web-zone-b-1", "web-zone-c-1"}, alone: true,
			blocks: []string{"shop/web-zone-c-1: TDB shop/web zone-c MaxDisruptedDomains"}},
		{name: "PDB maxUnavailable 1 over two pods: each alone, not together",
			nodes: six, pods: func() []*builders.PodWrapper { return onePodPerNode(six) },
			pdbs:  pdbsOf(webPDB("web", "maxUnavailable=1", "")),
			evict: []string{"web-zone-a-1", "web-zone-b-1"}, alone: true,
			blocks: []string{"shop/web-zone-b-1: PDB shop/web PodDisruptionBudget"}},
		{name: "PDB maxUnavailable 2 over two pods: together",
			nodes: six, pods: func() []*builders.PodWrapper { return onePodPerNode(six) },
			pdbs:  pdbsOf(webPDB("web", "maxUnavailable=2", "")),
			evict: []string{"web-zone-a-1", "web-zone-b-1"}, alone: true},
		{name: "TDB and PDB both allowing one each, two zones: the PDB refuses the second",
			nodes: six, pods: func() []*builders.PodWrapper { return onePodPerNode(six) }, tdbs: []*builders.BudgetWrapper{webTDB("1")},
			pdbs:  pdbsOf(webPDB("web", "maxUnavailable=1", "")),
			evict: []string{"web-zone-a-1", "web-zone-b-1"}, alone: true,
			blocks: []string{"shop/web-zone-b-1: PDB shop/web PodDisruptionBudget"}},
		{name: "a Ready and a not-Ready pod of zone-a: the Ready pod goes first and takes the allowance",
			// maxUnavailable 100%: zone-a keeps no pod, and allows its one
			// Ready pod; the not-Ready pod then needs an allowance too
			// (desiredHealthy 0). In name order web-zone-a-1 (not Ready)
			// would take it; the hardest order is the Ready pod first.
			nodes: six, pods: func() []*builders.PodWrapper {
				return with(onePodPerNode(six), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-a-1": notReady})
			},
			tdbs:  []*builders.BudgetWrapper{webTDB("100%")},
			evict: []string{"web-zone-a-1", "web-zone-a-2"}, alone: true,
			blocks: []string{"shop/web-zone-a-1: TDB shop/web zone-a InsufficientPods"}},
		{name: "a Ready and a not-Ready pod of zone-a under AlwaysAllow: together, the not-Ready pod uncharged",
			nodes: six, pods: func() []*builders.PodWrapper {
				return with(onePodPerNode(six), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-a-1": notReady})
			},
			tdbs:  []*builders.BudgetWrapper{webTDB("100%").UnhealthyPodEvictionPolicy(policyv1alpha1.AlwaysAllow)},
			evict: []string{"web-zone-a-1", "web-zone-a-2"}, alone: true},
		{name: "a not-Ready pod passes uncharged while zone-a keeps its healthy pods: together with a Ready pod",
			nodes: nine, pods: func() []*builders.PodWrapper {
				return with(onePodPerNode(nine), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-a-1": notReady})
			},
			tdbs:  []*builders.BudgetWrapper{webTDB("2")},
			evict: []string{"web-zone-a-1", "web-zone-a-2"}, alone: true},
		{name: "PDB maxUnavailable 100%, a Ready and a not-Ready pod: the not-Ready pod needs the spent allowance",
			nodes: six, pods: func() []*builders.PodWrapper {
				return with(onePodPerNode(six), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-a-1": notReady})
			},
			pdbs:  pdbsOf(webPDB("web", "maxUnavailable=100%", "")),
			evict: []string{"web-zone-a-1", "web-zone-a-2", "web-zone-b-1", "web-zone-b-2", "web-zone-c-1", "web-zone-c-2"}, alone: true,
			blocks: []string{"shop/web-zone-a-1: PDB shop/web PodDisruptionBudget"}},
		{name: "PDB maxUnavailable 100% AlwaysAllow, a Ready and a not-Ready pod: together",
			nodes: six, pods: func() []*builders.PodWrapper {
				return with(onePodPerNode(six), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-a-1": notReady})
			},
			pdbs:  pdbsOf(webPDB("web", "maxUnavailable=100%", policyv1.AlwaysAllow)),
			evict: []string{"web-zone-a-1", "web-zone-a-2", "web-zone-b-1", "web-zone-b-2", "web-zone-c-1", "web-zone-c-2"}, alone: true},
		{name: "a Pending pod adds nothing",
			// The Pending pod is missing in every zone: zone-a expects 3.
			nodes: six, pods: func() []*builders.PodWrapper { return append(onePodPerNode(six), webPod("web-new", "").Pending()) },
			tdbs: []*builders.BudgetWrapper{webTDB("2")}, pdbs: pdbsOf(webPDB("web", "maxUnavailable=2", "")),
			evict: []string{"web-new", "web-zone-a-1"}, alone: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := decideCase{nodes: tc.nodes, pods: tc.pods(), tdbs: tc.tdbs, pdbs: tc.pdbs}
			snap, pods := c.snapshot()
			var evict []*corev1.Pod
			for _, n := range tc.evict {
				p := byName(pods, n)
				evict = append(evict, p)
				if v := snap.Decide(p); v.Allowed != tc.alone {
					t.Errorf("Decide(%s) alone: allowed %v, want %v (%v)", n, v.Allowed, tc.alone, blockStrings(v.Blocks))
				}
			}
			ok, blocks, _ := snap.Together(evict)
			if ok != (len(tc.blocks) == 0) {
				t.Errorf("Together(%v) ok = %v, want %v", tc.evict, ok, len(tc.blocks) == 0)
			}
			if diff := cmp.Diff(tc.blocks, blockStrings(blocks)); diff != "" {
				t.Errorf("Together(%v) blocks (-want +got):\n%s", tc.evict, diff)
			}
		})
	}
}

// zoneRow is the status row of domain in t.
func zoneRow(t *policyv1alpha1.TopologyDisruptionBudget, domain string) policyv1alpha1.DomainStatus {
	for _, d := range t.Status.Domains {
		if d.Name == domain {
			return d
		}
	}
	return policyv1alpha1.DomainStatus{}
}

// TestApply: an allowed eviction applied to the snapshot spends what the
// webhook and the API server would record; a refused one changes nothing.
func TestApply(t *testing.T) {
	six := zonedNodes(2, "a", "b", "c")
	pods := podObjs(onePodPerNode(six)...)
	tdbs := []policyv1alpha1.TopologyDisruptionBudget{computed(webTDB("1"), six, pods)}
	pdbs := []policyv1.PodDisruptionBudget{pdb("web", "web", "maxUnavailable=2", "", pods)}
	snap := snapshot(six, tdbs, pdbs)

	first := snap.Decide(byName(pods, "web-zone-a-1"))
	if !first.Allowed || first.Reason != budget.DecisionCharged {
		t.Fatalf("Decide(web-zone-a-1) = %+v, want charged", readVerdict(first))
	}
	snap.Apply(first)
	after := snap.TDB(ns, "web")
	if got, want := zoneRow(after, "zone-a"), (policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 2, CurrentHealthy: 1, DesiredHealthy: 1}); !cmp.Equal(got, want) {
		t.Errorf("zone-a after the eviction (-want +got):\n%s", cmp.Diff(want, got))
	}
	if len(after.Status.DisruptedPods) != 1 || after.Status.DisruptedPods[0].Name != "web-zone-a-1" {
		t.Errorf("records after the eviction = %v, want web-zone-a-1's", after.Status.DisruptedPods)
	}

	second := snap.Decide(byName(pods, "web-zone-a-2"))
	if diff := cmp.Diff([]string{"TDB shop/web zone-a InsufficientPods"}, blockStrings(second.Blocks)); diff != "" {
		t.Errorf("Decide(web-zone-a-2) after zone-a's eviction, blocks (-want +got):\n%s", diff)
	}
	snap.Apply(second) // refused: nothing changes
	if diff := cmp.Diff(after, snap.TDB(ns, "web")); diff != "" {
		t.Errorf("Apply of a refused verdict changed the budget (-before +after):\n%s", diff)
	}

	// The PDB allowed 2: zone-a's eviction spent one, zone-b's the other.
	snap.Apply(snap.Decide(byName(pods, "web-zone-b-1")))
	third := snap.Decide(byName(pods, "web-zone-c-1"))
	if diff := cmp.Diff([]string{"PDB shop/web PodDisruptionBudget"}, blockStrings(third.Blocks)); diff != "" {
		t.Errorf("Decide(web-zone-c-1) after two evictions, blocks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"TDB web zone-c 2/2 keeps 1 allows 1", "PDB web 6/6 keeps 4 allows 0"}, budgetStrings(third.Budgets)); diff != "" {
		t.Errorf("Decide(web-zone-c-1) after two evictions, budgets (-want +got):\n%s", diff)
	}
}

// TestCloneIsolation: evictions simulated on a clone, or by Together, leave
// the snapshot and the objects it was built from as they were.
func TestCloneIsolation(t *testing.T) {
	six := zonedNodes(2, "a", "b", "c")
	pods := podObjs(onePodPerNode(six)...)
	tdbs := []policyv1alpha1.TopologyDisruptionBudget{computed(webTDB("1"), six, pods)}
	pdbs := []policyv1.PodDisruptionBudget{pdb("web", "web", "maxUnavailable=1", "", pods)}
	origTDB, origPDB := tdbs[0].DeepCopy(), pdbs[0].DeepCopy()
	snap := snapshot(six, tdbs, pdbs)

	clone := snap.Clone()
	clone.Apply(clone.Decide(byName(pods, "web-zone-a-1")))
	if v := clone.Decide(byName(pods, "web-zone-b-1")); v.Allowed {
		t.Fatalf("the clone still allows web-zone-b-1 after spending the PDB's one allowance")
	}
	for _, p := range []string{"web-zone-a-2", "web-zone-b-1"} {
		if v := snap.Decide(byName(pods, p)); !v.Allowed {
			t.Errorf("the original refuses %s after an eviction simulated on its clone: %v", p, blockStrings(v.Blocks))
		}
	}
	ok, _, after := snap.Together([]*corev1.Pod{byName(pods, "web-zone-a-1"), byName(pods, "web-zone-c-1")})
	if ok {
		t.Errorf("Together(web-zone-a-1, web-zone-c-1) ok under a PDB allowing one")
	}
	if got := zoneRow(after.TDB(ns, "web"), "zone-a").DisruptionsAllowed; got != 0 {
		t.Errorf("the snapshot Together returns: zone-a allows %d, want 0 (spent)", got)
	}
	if diff := cmp.Diff(origTDB, snap.TDB(ns, "web")); diff != "" {
		t.Errorf("the original's budget changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(*origTDB, tdbs[0]); diff != "" {
		t.Errorf("the budget NewSnapshot was given changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(*origPDB, pdbs[0]); diff != "" {
		t.Errorf("the PDB NewSnapshot was given changed (-before +after):\n%s", diff)
	}
	if !cmp.Equal(snap.TDBs()[0], snap.TDB(ns, "web")) {
		t.Errorf("TDBs() and TDB() disagree")
	}
}
