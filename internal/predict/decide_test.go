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
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/predict"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// verdict is what a user reads of a predict.Verdict.
type verdict struct {
	Allowed bool
	Reason  budget.Reason
	Blocks  []string
	Budgets []string
}

func readVerdict(v predict.Verdict) verdict {
	return verdict{Allowed: v.Allowed, Reason: v.Reason, Blocks: blockStrings(v.Blocks), Budgets: budgetStrings(v.Budgets)}
}

// decideCase is one pod decided in a cluster: budgets are computed from the
// nodes and pods, then edit (if set) changes them.
type decideCase struct {
	name  string
	nodes []corev1.Node
	pods  []*builders.PodWrapper
	tdbs  []*builders.BudgetWrapper
	pdbs  func(pods []*corev1.Pod) []policyv1.PodDisruptionBudget
	edit  func(t *policyv1alpha1.TopologyDisruptionBudget)
	pod   string
	want  verdict
	// hint and message must appear in the first block's hint and message.
	hint, message string
}

// snapshot builds the case's snapshot and returns it with its pods.
func (c decideCase) snapshot() (*predict.Snapshot, []*corev1.Pod) {
	pods := podObjs(c.pods...)
	var tdbs []policyv1alpha1.TopologyDisruptionBudget
	for _, w := range c.tdbs {
		t := computed(w, c.nodes, pods)
		if c.edit != nil {
			c.edit(&t)
		}
		tdbs = append(tdbs, t)
	}
	var pdbs []policyv1.PodDisruptionBudget
	if c.pdbs != nil {
		pdbs = c.pdbs(pods)
	}
	return snapshot(c.nodes, tdbs, pdbs), pods
}

// with returns ws with the pods named in changes changed (in place: the
// wrappers are not copied).
func with(ws []*builders.PodWrapper, changes map[string]func(*builders.PodWrapper) *builders.PodWrapper) []*builders.PodWrapper {
	out := make([]*builders.PodWrapper, len(ws))
	for i, w := range ws {
		out[i] = w
		if f := changes[w.Obj().Name]; f != nil {
			out[i] = f(w)
		}
	}
	return out
}

func notReady(w *builders.PodWrapper) *builders.PodWrapper { return w.NotReady() }

// pdbsOf returns a pdbs function building each PDB over the pods.
func pdbsOf(fs ...func([]*corev1.Pod) policyv1.PodDisruptionBudget) func([]*corev1.Pod) []policyv1.PodDisruptionBudget {
	return func(pods []*corev1.Pod) []policyv1.PodDisruptionBudget {
		out := make([]policyv1.PodDisruptionBudget, 0, len(fs))
		for _, f := range fs {
			out = append(out, f(pods))
		}
		return out
	}
}

// webPDB is PodDisruptionBudget name over the web pods.
func webPDB(name string, amount pdbAmount, policy policyv1.UnhealthyPodEvictionPolicyType) func([]*corev1.Pod) policyv1.PodDisruptionBudget {
	return func(pods []*corev1.Pod) policyv1.PodDisruptionBudget { return pdb(name, "web", amount, policy, pods) }
}

func runDecideCases(t *testing.T, cases []decideCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap, pods := tc.snapshot()
			v := snap.Decide(byName(pods, tc.pod))
			if diff := cmp.Diff(tc.want, readVerdict(v)); diff != "" {
				t.Errorf("Decide(%s) (-want +got):\n%s", tc.pod, diff)
			}
			if tc.hint == "" && tc.message == "" {
				return
			}
			if len(v.Blocks) == 0 {
				t.Fatalf("Decide(%s): no block to read a hint or message from", tc.pod)
			}
			if !strings.Contains(v.Blocks[0].Hint, tc.hint) {
				t.Errorf("Decide(%s): hint %q does not say %q", tc.pod, v.Blocks[0].Hint, tc.hint)
			}
			if !strings.Contains(v.Blocks[0].Message, tc.message) {
				t.Errorf("Decide(%s): message %q does not say %q", tc.pod, v.Blocks[0].Message, tc.message)
			}
		})
	}
}

// TestDecideTopologyBudgets: one eviction against the TopologyDisruptionBudgets
// covering the pod, as the eviction webhook decides it.
func TestDecideTopologyBudgets(t *testing.T) {
	six := zonedNodes(2, "a", "b", "c")
	nine := zonedNodes(3, "a", "b", "c")
	bare := append(zonedNodes(2, "a", "b", "c"), *builders.Node("bare-1").Obj())
	onBare := append(onePodPerNode(six), webPod("web-bare-1", "bare-1"))
	syncFailed := func(t *policyv1alpha1.TopologyDisruptionBudget) {
		t.Status = *budget.FailClosedStatus(t, errors.New("reading the scale of ReplicaSet web: forbidden"), now)
	}
	runDecideCases(t, []decideCase{
		{name: "a pod no budget covers is allowed: NotCovered",
			nodes: six, pods: append(onePodPerNode(six), appPod("cache", "cache-1", "zone-a-1")),
			tdbs: []*builders.BudgetWrapper{webTDB("1")}, pod: "cache-1",
			want: verdict{Allowed: true, Reason: budget.DecisionNotCovered}},
		{name: "maxUnavailable 1 per zone, zone-a whole: charged",
			nodes: six, pods: onePodPerNode(six), tdbs: []*builders.BudgetWrapper{webTDB("1")}, pod: "web-zone-a-1",
			want: verdict{Allowed: true, Reason: budget.DecisionCharged, Budgets: []string{"TDB web zone-a 2/2 keeps 1 allows 1"}}},
		{name: "zone-a already down a pod: InsufficientPods, zone-a needs one more Ready pod",
			nodes: six, pods: with(onePodPerNode(six), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-a-2": notReady}),
			tdbs: []*builders.BudgetWrapper{webTDB("1")}, pod: "web-zone-a-1",
			want: verdict{Reason: budget.DecisionInsufficientPods,
				Blocks:  []string{"TDB shop/web zone-a InsufficientPods"},
				Budgets: []string{"TDB web zone-a 1/2 keeps 1 allows 0"}},
			hint: "zone-a needs 1 more Ready pod(s) (1 healthy, keeps 1)", message: "domain zone-a (topology.kubernetes.io/zone) has 1 healthy pods, needs 1"},
		{name: "zone-a's other pod Ready for 4 s of minReadySeconds 10: the hint says it counts soon",
			nodes: six, pods: with(onePodPerNode(six), map[string]func(*builders.PodWrapper) *builders.PodWrapper{
				"web-zone-a-2": func(w *builders.PodWrapper) *builders.PodWrapper { return w.ReadySince(now.Add(-4 * time.Second)) }}),
			tdbs: []*builders.BudgetWrapper{webTDB("1").MinReadySeconds(10)}, pod: "web-zone-a-1",
			want: verdict{Reason: budget.DecisionInsufficientPods,
				Blocks:  []string{"TDB shop/web zone-a InsufficientPods"},
				Budgets: []string{"TDB web zone-a 1/2 keeps 1 allows 0"}},
			hint: "1 Ready pod(s) there count once Ready for minReadySeconds"},
		{name: "a zone in a namespace-wide budget: the hint names the budget, not a zone",
			nodes: six, pods: with(onePodPerNode(six), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-a-2": notReady}),
			tdbs: []*builders.BudgetWrapper{webTDB("1").TopologyKey("")}, pod: "web-zone-a-1",
			want: verdict{Reason: budget.DecisionInsufficientPods,
				Blocks:  []string{"TDB shop/web all InsufficientPods"},
				Budgets: []string{"TDB web all 5/6 keeps 5 allows 0"}},
			hint: "the budget needs 1 more Ready pod(s) (5 healthy, keeps 5)"},
		{name: "maxDisruptedDomains 1 while zone-b is disrupted: refused, waiting for zone-b",
			nodes: nine, pods: with(onePodPerNode(nine), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-b-1": notReady}),
			tdbs: []*builders.BudgetWrapper{webTDB("1").MaxDisruptedDomains(1)}, pod: "web-zone-a-1",
			want: verdict{Reason: budget.DecisionMaxDisruptedDomains,
				Blocks:  []string{"TDB shop/web zone-a MaxDisruptedDomains"},
				Budgets: []string{"TDB web zone-a 3/3 keeps 2 allows 0"}},
			hint: "waiting for zone-b to recover", message: "1 other domain(s) are disrupted (zone-b)"},
		{name: "maxDisruptedDomains 1: the disrupted zone itself may go on",
			nodes: nine, pods: with(onePodPerNode(nine), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-b-1": notReady}),
			tdbs: []*builders.BudgetWrapper{webTDB("2").MaxDisruptedDomains(1)}, pod: "web-zone-b-2",
			want: verdict{Allowed: true, Reason: budget.DecisionCharged, Budgets: []string{"TDB web zone-b 2/3 keeps 1 allows 1"}}},
		{name: "status behind the spec (observedGeneration 1 < generation 2): StaleStatus",
			nodes: six, pods: onePodPerNode(six), tdbs: []*builders.BudgetWrapper{webTDB("1")},
			edit: func(t *policyv1alpha1.TopologyDisruptionBudget) { t.Generation = 2 }, pod: "web-zone-a-1",
			want: verdict{Reason: budget.DecisionStaleStatus,
				Blocks:  []string{"TDB shop/web zone-a StaleStatus"},
				Budgets: []string{"TDB web zone-a 2/2 keeps 1 allows 1"}},
			hint: "retry in a moment", message: "observedGeneration 1 < generation 2"},
		{name: "SyncFailed budget: Blocked, whatever its zones allowed",
			nodes: six, pods: onePodPerNode(six), tdbs: []*builders.BudgetWrapper{webTDB("1")}, edit: syncFailed, pod: "web-zone-a-1",
			want: verdict{Reason: budget.DecisionBlocked,
				Blocks:  []string{"TDB shop/web zone-a Blocked"},
				Budgets: []string{"TDB web zone-a 2/2 keeps 1 allows 0"}},
			hint: "until its SyncFailed condition clears: reading the scale of ReplicaSet web: forbidden"},
		{name: "a pod on a node without the zone label: Blocked, label the node",
			nodes: bare, pods: onBare, tdbs: []*builders.BudgetWrapper{webTDB("1")}, pod: "web-bare-1",
			want: verdict{Reason: budget.DecisionBlocked,
				Blocks:  []string{"TDB shop/web Blocked"},
				Budgets: []string{"TDB web 0/0 keeps 0 allows 0"}},
			message: "label the node with topology.kubernetes.io/zone"},
		{name: "a node without the zone label blocks the whole budget (DomainError)",
			nodes: bare, pods: onBare, tdbs: []*builders.BudgetWrapper{webTDB("1")}, pod: "web-zone-a-1",
			want: verdict{Reason: budget.DecisionBlocked,
				Blocks:  []string{"TDB shop/web zone-a Blocked"},
				Budgets: []string{"TDB web zone-a 2/2 keeps 1 allows 0"}},
			hint: "until its DomainError condition clears", message: "label the node"},
		{name: "a nodeSelectorTerm that leaves out the pod's node: NotCovered",
			nodes: nodeObjs(zoneNode("a", 1).Label("pool", "spot"), zoneNode("a", 2).Label("pool", "on-demand")),
			pods:  []*builders.PodWrapper{webPod("web-zone-a-1", "zone-a-1").NotReady(), webPod("web-zone-a-2", "zone-a-2")},
			tdbs: []*builders.BudgetWrapper{tdb("web", "web").MinAvailable(intstr.FromInt32(1)).
				NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
					{Key: "pool", Operator: "In", Values: []string{"spot"}}}})},
			pod:  "web-zone-a-2",
			want: verdict{Allowed: true, Reason: budget.DecisionNotCovered}},
		{name: "the same nodeSelectorTerm decides the pod on the node it covers",
			nodes: nodeObjs(zoneNode("a", 1).Label("pool", "spot"), zoneNode("a", 2).Label("pool", "on-demand")),
			pods:  []*builders.PodWrapper{webPod("web-zone-a-1", "zone-a-1").NotReady(), webPod("web-zone-a-2", "zone-a-2")},
			tdbs: []*builders.BudgetWrapper{tdb("web", "web").MinAvailable(intstr.FromInt32(1)).
				NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
					{Key: "pool", Operator: "In", Values: []string{"spot"}}}})},
			pod: "web-zone-a-1",
			want: verdict{Reason: budget.DecisionInsufficientPods,
				Blocks:  []string{"TDB shop/web zone-a InsufficientPods"},
				Budgets: []string{"TDB web zone-a 0/1 keeps 1 allows 0"}}},
	})
}

// TestDecideNotRunningPods: Pending, terminal and deleting pods pass, as in
// core, even when every budget would refuse them.
func TestDecideNotRunningPods(t *testing.T) {
	six := zonedNodes(2, "a", "b", "c")
	// The wrappers are changed in place: each case builds its own.
	zoneADown := func() []*builders.PodWrapper {
		return with(onePodPerNode(six), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-a-2": notReady})
	}
	refusing := webPDB("web", "maxUnavailable=1", "")
	runDecideCases(t, []decideCase{
		{name: "a Pending pod: PodNotRunning, though zone-a and the PDB refuse",
			nodes: six, pods: append(zoneADown(), webPod("web-new", "").Pending()),
			tdbs: []*builders.BudgetWrapper{webTDB("1")}, pdbs: pdbsOf(refusing), pod: "web-new",
			want: verdict{Allowed: true, Reason: budget.DecisionPodNotRunning,
				Budgets: []string{"TDB web 0/0 keeps 0 allows 0", "PDB web 5/7 keeps 6 allows 0"}}},
		{name: "a deleting pod: PodNotRunning, though zone-a and the PDB refuse",
			nodes: six, pods: with(zoneADown(), map[string]func(*builders.PodWrapper) *builders.PodWrapper{
				"web-zone-a-1": func(w *builders.PodWrapper) *builders.PodWrapper { return w.Deleting(now) }}),
			tdbs: []*builders.BudgetWrapper{webTDB("1")}, pdbs: pdbsOf(refusing), pod: "web-zone-a-1",
			want: verdict{Allowed: true, Reason: budget.DecisionPodNotRunning,
				Budgets: []string{"TDB web zone-a 0/2 keeps 1 allows 0", "PDB web 4/6 keeps 5 allows 0"}}},
		{name: "a Succeeded pod: PodNotRunning",
			nodes: six, pods: with(zoneADown(), map[string]func(*builders.PodWrapper) *builders.PodWrapper{
				"web-zone-a-2": func(w *builders.PodWrapper) *builders.PodWrapper { return w.Phase(corev1.PodSucceeded) }}),
			tdbs: []*builders.BudgetWrapper{webTDB("1")}, pdbs: pdbsOf(refusing), pod: "web-zone-a-2",
			want: verdict{Allowed: true, Reason: budget.DecisionPodNotRunning,
				Budgets: []string{"TDB web zone-a 1/2 keeps 1 allows 0", "PDB web 5/6 keeps 5 allows 0"}}},
	})
}

// TestDecidePodDisruptionBudgets: the API server's own check of policy/v1
// PodDisruptionBudgets, after the webhook's.
func TestDecidePodDisruptionBudgets(t *testing.T) {
	six := zonedNodes(2, "a", "b", "c")
	down := func(names ...string) []*builders.PodWrapper {
		changes := map[string]func(*builders.PodWrapper) *builders.PodWrapper{}
		for _, n := range names {
			changes[n] = notReady
		}
		return with(onePodPerNode(six), changes)
	}
	runDecideCases(t, []decideCase{
		{name: "the PDB refuses while the TDB allows: PodDisruptionBudget",
			nodes: six, pods: down("web-zone-b-2"), tdbs: []*builders.BudgetWrapper{webTDB("1")},
			pdbs: pdbsOf(webPDB("web", "maxUnavailable=1", "")), pod: "web-zone-a-1",
			want: verdict{Reason: predict.ReasonPDB,
				Blocks:  []string{"PDB shop/web PodDisruptionBudget"},
				Budgets: []string{"TDB web zone-a 2/2 keeps 1 allows 1", "PDB web 5/6 keeps 5 allows 0"}},
			hint:    "PodDisruptionBudget web needs 1 more healthy pod(s) (5 healthy, keeps 5)",
			message: "the PodDisruptionBudget web needs 5 healthy pods and has 5 currently"},
		{name: "both refuse: two blocks, the TDB's reason",
			nodes: six, pods: down("web-zone-a-2"), tdbs: []*builders.BudgetWrapper{webTDB("1")},
			pdbs: pdbsOf(webPDB("web", "maxUnavailable=1", "")), pod: "web-zone-a-1",
			want: verdict{Reason: budget.DecisionInsufficientPods,
				Blocks:  []string{"TDB shop/web zone-a InsufficientPods", "PDB shop/web PodDisruptionBudget"},
				Budgets: []string{"TDB web zone-a 1/2 keeps 1 allows 0", "PDB web 5/6 keeps 5 allows 0"}}},
		{name: "a PDB alone allowing: NotCovered",
			nodes: six, pods: onePodPerNode(six), pdbs: pdbsOf(webPDB("web", "maxUnavailable=1", "")), pod: "web-zone-a-1",
			want: verdict{Allowed: true, Reason: budget.DecisionNotCovered, Budgets: []string{"PDB web 6/6 keeps 5 allows 1"}}},
		{name: "two PDBs over one pod: refused as the API server's 500, both named",
			nodes: six, pods: onePodPerNode(six), tdbs: []*builders.BudgetWrapper{webTDB("1")},
			pdbs: pdbsOf(webPDB("web-a", "maxUnavailable=1", ""), webPDB("web-b", "minAvailable=1", "")), pod: "web-zone-a-1",
			want: verdict{Reason: predict.ReasonPDB,
				Blocks:  []string{"PDB shop/web-a, web-b PodDisruptionBudget"},
				Budgets: []string{"TDB web zone-a 2/2 keeps 1 allows 1", "PDB web-a 6/6 keeps 5 allows 1", "PDB web-b 6/6 keeps 1 allows 5"}},
			hint: "remove all but one", message: "more than one PodDisruptionBudget"},
		{name: "a PDB of another app is not the pod's",
			nodes: six, pods: append(onePodPerNode(six), appPod("cache", "cache-1", "zone-a-1").NotReady()),
			pdbs: pdbsOf(func(pods []*corev1.Pod) policyv1.PodDisruptionBudget {
				return pdb("cache", "cache", "minAvailable=1", "", pods)
			}), pod: "web-zone-a-1",
			want: verdict{Allowed: true, Reason: budget.DecisionNotCovered}},
	})
}

// TestDecideNotReadyPods: a running pod that is not Ready passes without a
// charge while its domain (or PDB) keeps its healthy pods
// (IfHealthyBudget), or always (AlwaysAllow).
func TestDecideNotReadyPods(t *testing.T) {
	nine := zonedNodes(3, "a", "b", "c")
	six := zonedNodes(2, "a", "b", "c")
	down := func(nodes []corev1.Node, names ...string) []*builders.PodWrapper {
		changes := map[string]func(*builders.PodWrapper) *builders.PodWrapper{}
		for _, n := range names {
			changes[n] = notReady
		}
		return with(onePodPerNode(nodes), changes)
	}
	runDecideCases(t, []decideCase{
		{name: "TDB IfHealthyBudget, zone-a keeps its healthy pods: UnhealthyPod",
			nodes: nine, pods: down(nine, "web-zone-a-3"), tdbs: []*builders.BudgetWrapper{webTDB("1")}, pod: "web-zone-a-3",
			want: verdict{Allowed: true, Reason: budget.DecisionUnhealthyPod, Budgets: []string{"TDB web zone-a 2/3 keeps 2 allows 0"}}},
		{name: "TDB IfHealthyBudget, zone-a below its budget: InsufficientPods",
			nodes: nine, pods: down(nine, "web-zone-a-2", "web-zone-a-3"), tdbs: []*builders.BudgetWrapper{webTDB("1")}, pod: "web-zone-a-3",
			want: verdict{Reason: budget.DecisionInsufficientPods,
				Blocks:  []string{"TDB shop/web zone-a InsufficientPods"},
				Budgets: []string{"TDB web zone-a 1/3 keeps 2 allows 0"}}},
		{name: "TDB AlwaysAllow, zone-a below its budget: UnhealthyPod",
			nodes: nine, pods: down(nine, "web-zone-a-2", "web-zone-a-3"),
			tdbs: []*builders.BudgetWrapper{webTDB("1").UnhealthyPodEvictionPolicy(policyv1alpha1.AlwaysAllow)}, pod: "web-zone-a-3",
			want: verdict{Allowed: true, Reason: budget.DecisionUnhealthyPod, Budgets: []string{"TDB web zone-a 1/3 keeps 2 allows 0"}}},
		{name: "PDB IfHealthyBudget below its budget: refused",
			nodes: six, pods: down(six, "web-zone-a-2", "web-zone-b-2"),
			pdbs: pdbsOf(webPDB("web", "maxUnavailable=1", policyv1.IfHealthyBudget)), pod: "web-zone-a-2",
			want: verdict{Reason: predict.ReasonPDB,
				Blocks:  []string{"PDB shop/web PodDisruptionBudget"},
				Budgets: []string{"PDB web 4/6 keeps 5 allows 0"}}},
		{name: "PDB without a policy below its budget: refused as IfHealthyBudget",
			nodes: six, pods: down(six, "web-zone-a-2", "web-zone-b-2"),
			pdbs: pdbsOf(webPDB("web", "maxUnavailable=1", "")), pod: "web-zone-a-2",
			want: verdict{Reason: predict.ReasonPDB,
				Blocks:  []string{"PDB shop/web PodDisruptionBudget"},
				Budgets: []string{"PDB web 4/6 keeps 5 allows 0"}}},
		{name: "PDB AlwaysAllow below its budget: allowed",
			nodes: six, pods: down(six, "web-zone-a-2", "web-zone-b-2"),
			pdbs: pdbsOf(webPDB("web", "maxUnavailable=1", policyv1.AlwaysAllow)), pod: "web-zone-a-2",
			want: verdict{Allowed: true, Reason: budget.DecisionNotCovered, Budgets: []string{"PDB web 4/6 keeps 5 allows 0"}}},
		{name: "PDB IfHealthyBudget keeping its healthy pods: allowed",
			nodes: six, pods: down(six, "web-zone-a-2"),
			pdbs: pdbsOf(webPDB("web", "maxUnavailable=1", policyv1.IfHealthyBudget)), pod: "web-zone-a-2",
			want: verdict{Allowed: true, Reason: budget.DecisionNotCovered, Budgets: []string{"PDB web 5/6 keeps 5 allows 0"}}},
		{name: "TDB AlwaysAllow passes, the PDB IfHealthyBudget still refuses",
			nodes: nine, pods: down(nine, "web-zone-a-2", "web-zone-a-3"),
			tdbs: []*builders.BudgetWrapper{webTDB("1").UnhealthyPodEvictionPolicy(policyv1alpha1.AlwaysAllow)},
			pdbs: pdbsOf(webPDB("web", "maxUnavailable=1", "")), pod: "web-zone-a-3",
			want: verdict{Reason: predict.ReasonPDB,
				Blocks:  []string{"PDB shop/web PodDisruptionBudget"},
				Budgets: []string{"TDB web zone-a 1/3 keeps 2 allows 0", "PDB web 7/9 keeps 8 allows 0"}}},
	})
}

// TestDecideNotEnforcedBudget: a budget the webhook does not enforce (in
// the operator's own namespace) is listed and refuses nothing, though its
// numbers would.
func TestDecideNotEnforcedBudget(t *testing.T) {
	six := zonedNodes(2, "a", "b", "c")
	pods := podObjs(with(onePodPerNode(six), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-a-2": notReady})...)
	b := computedWith(webTDB("1"), six, pods, nil, "the operator's own namespace is not enforced")
	v := snapshot(six, []policyv1alpha1.TopologyDisruptionBudget{b}, nil).Decide(byName(pods, "web-zone-a-1"))
	got := readVerdict(v)
	if !got.Allowed || got.Blocks != nil {
		t.Errorf("Decide(web-zone-a-1) under a NotEnforced budget = %+v, want allowed without blocks", got)
	}
	if diff := cmp.Diff([]string{"TDB web zone-a 1/2 keeps 1 allows 0 notEnforced"}, got.Budgets); diff != "" {
		t.Errorf("Budgets (-want +got):\n%s", diff)
	}
	// The pod is covered (Budgets lists the budget): the reason is that the
	// budget is not enforced (budget.DecisionNotEnforced, "the budget is in
	// the operator's own namespace, whose evictions the webhook does not
	// decide"), not that no budget covers it.
	if got.Reason != budget.DecisionNotEnforced {
		t.Errorf("Reason = %s, want %s: Budgets lists a covering budget", got.Reason, budget.DecisionNotEnforced)
	}
}

// TestDecideEnforcementWarning: a budget whose webhook may let some
// evictions through unchecked (Enforced False, PartiallyEnforced or
// FailsOpen) is decided as the webhook decides it when asked, and listed
// with the warning; the NotEnforced budget stays as it was.
func TestDecideEnforcementWarning(t *testing.T) {
	six := zonedNodes(2, "a", "b", "c")
	pods := podObjs(with(onePodPerNode(six), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-a-2": notReady})...)
	for _, reason := range []string{policyv1alpha1.ReasonPartiallyEnforced, policyv1alpha1.ReasonFailsOpen} {
		b := computed(webTDB("1"), six, pods)
		withEnforced(metav1.ConditionFalse, reason, "a message")(&b)
		v := snapshot(six, []policyv1alpha1.TopologyDisruptionBudget{b}, nil).Decide(byName(pods, "web-zone-a-1"))
		if v.Allowed || v.Reason != budget.DecisionInsufficientPods {
			t.Errorf("%s: Decide(web-zone-a-1) = allowed %v, %s; want refused, %s (the webhook decides it when asked)", reason, v.Allowed, v.Reason, budget.DecisionInsufficientPods)
		}
		if len(v.Budgets) != 1 || v.Budgets[0].Enforcement != reason || v.Budgets[0].NotEnforced {
			t.Errorf("%s: Budgets = %+v, want the budget with enforcement %s", reason, v.Budgets, reason)
		}
	}
	b := computedWith(webTDB("1"), six, pods, nil, "not enforced")
	withEnforced(metav1.ConditionFalse, policyv1alpha1.ReasonNotEnforced, "not enforced")(&b)
	v := snapshot(six, []policyv1alpha1.TopologyDisruptionBudget{b}, nil).Decide(byName(pods, "web-zone-a-1"))
	if len(v.Budgets) != 1 || !v.Budgets[0].NotEnforced || v.Budgets[0].Enforcement != "" {
		t.Errorf("NotEnforced: Budgets = %+v, want notEnforced and no other warning", v.Budgets)
	}
}

// TestDecideReasonIsTheWebhooks: Verdict.Reason is the webhook's reason.
// The webhook refuses a pod that any covering budget cannot place (a node
// without that budget's topologyKey label) before it decides any budget
// (evictionwebhook decide(): the placeErr loop runs before DecideEviction),
// so that refusal is its answer even when a budget earlier in name order
// would refuse for want of pods.
func TestDecideReasonIsTheWebhooks(t *testing.T) {
	nodes := nodeObjs(zoneNode("a", 1).Label("rack", "r1"), zoneNode("a", 2))
	pods := podObjs(webPod("web-1", "zone-a-1").NotReady(), webPod("web-2", "zone-a-2"))
	zones := computed(tdb("a-zones", "web").MaxUnavailable(intstr.FromInt32(1)), nodes, pods)
	racks := computed(tdb("b-racks", "web").TopologyKey("rack").MaxUnavailable(intstr.FromInt32(1)), nodes, pods)
	v := snapshot(nodes, []policyv1alpha1.TopologyDisruptionBudget{zones, racks}, nil).Decide(byName(pods, "web-2"))
	got := readVerdict(v)
	if got.Allowed {
		t.Fatalf("Decide(web-2) allowed, want refused: %+v", got)
	}
	if diff := cmp.Diff([]string{"TDB shop/a-zones zone-a InsufficientPods", "TDB shop/b-racks Blocked"}, got.Blocks); diff != "" {
		t.Errorf("Blocks (-want +got):\n%s", diff)
	}
	if got.Reason != budget.DecisionBlocked {
		t.Errorf("Reason = %s, want %s: the webhook answers b-racks' placement refusal first", got.Reason, budget.DecisionBlocked)
	}
}

var needsRE = regexp.MustCompile(`needs (\d+) more`)

// TestDecideHintCountsTheReadyPodsNeeded: a refusal for want of pods says
// how many more Ready pods would let the eviction through. The number is
// checked against the decision itself: it is the fewest of the other pods
// that, turned Ready (budgets recomputed), let the eviction through. A
// not-Ready pod under IfHealthyBudget passes uncharged once its domain (or
// PDB) has desiredHealthy Ready pods, one fewer than a Ready pod needs.
func TestDecideHintCountsTheReadyPodsNeeded(t *testing.T) {
	nodes := zonedNodes(4, "a")
	tests := []struct {
		name string
		// notReady are the not-Ready pods, others the pods that may turn
		// Ready, in that order; pod is evicted.
		notReady, others []string
		pod              string
		tdb              *builders.BudgetWrapper
		pdb              pdbAmount
	}{
		{name: "TDB, a Ready pod",
			notReady: []string{"web-zone-a-2", "web-zone-a-3"}, others: []string{"web-zone-a-2", "web-zone-a-3"},
			pod: "web-zone-a-1", tdb: webTDB("1")},
		{name: "TDB, a not-Ready pod under IfHealthyBudget",
			notReady: []string{"web-zone-a-2", "web-zone-a-3", "web-zone-a-4"}, others: []string{"web-zone-a-2", "web-zone-a-3"},
			pod: "web-zone-a-4", tdb: webTDB("1")},
		{name: "PDB, a Ready pod",
			notReady: []string{"web-zone-a-2", "web-zone-a-3"}, others: []string{"web-zone-a-2", "web-zone-a-3"},
			pod: "web-zone-a-1", pdb: "maxUnavailable=1"},
		{name: "PDB, a not-Ready pod under IfHealthyBudget",
			notReady: []string{"web-zone-a-2", "web-zone-a-3", "web-zone-a-4"}, others: []string{"web-zone-a-2", "web-zone-a-3"},
			pod: "web-zone-a-4", pdb: "maxUnavailable=1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			decide := func(ready int) predict.Verdict {
				changes := map[string]func(*builders.PodWrapper) *builders.PodWrapper{}
				for _, n := range tc.notReady {
					changes[n] = notReady
				}
				for _, n := range tc.others[:ready] {
					delete(changes, n)
				}
				pods := podObjs(with(onePodPerNode(nodes), changes)...)
				var tdbs []policyv1alpha1.TopologyDisruptionBudget
				var pdbs []policyv1.PodDisruptionBudget
				if tc.tdb != nil {
					tdbs = append(tdbs, computed(tc.tdb, nodes, pods))
				}
				if tc.pdb != "" {
					pdbs = append(pdbs, pdb("web", "web", tc.pdb, "", pods))
				}
				return snapshot(nodes, tdbs, pdbs).Decide(byName(pods, tc.pod))
			}
			v := decide(0)
			if v.Allowed || len(v.Blocks) != 1 {
				t.Fatalf("Decide(%s) = %+v, want one refusal", tc.pod, readVerdict(v))
			}
			m := needsRE.FindStringSubmatch(v.Blocks[0].Hint)
			if m == nil {
				t.Fatalf("hint %q does not say how many pods are needed", v.Blocks[0].Hint)
			}
			need, _ := strconv.Atoi(m[1])
			enough := -1
			for k := 1; k <= len(tc.others) && enough < 0; k++ {
				if decide(k).Allowed {
					enough = k
				}
			}
			if enough < 0 {
				t.Fatalf("no number of the pods %v turning Ready lets %s go: fix the test", tc.others, tc.pod)
			}
			if need != enough {
				t.Errorf("hint %q: %d more Ready pod(s), but %d let the eviction through (and %d do not)",
					v.Blocks[0].Hint, need, enough, enough-1)
			}
		})
	}
}
