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

	"github.com/tdb-operator/tdb-operator/internal/predict"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// waveView is what a user reads of a wave.
type waveView struct {
	Nodes   []string
	Pods    int
	BoundBy []string
}

// planView is what a user reads of a plan.
type planView struct {
	Waves   []waveView
	Blocked map[string][]string
}

func readPlan(p predict.Plan) planView {
	var out planView
	if p.Waves != nil {
		// JSON "waves": [] rather than null.
		out.Waves = []waveView{}
	}
	for _, w := range p.Waves {
		out.Waves = append(out.Waves, waveView{Nodes: w.Nodes, Pods: w.Pods, BoundBy: blockStrings(w.BoundBy)})
	}
	for _, b := range p.Blocked {
		if out.Blocked == nil {
			out.Blocked = map[string][]string{}
		}
		out.Blocked[b.Node] = blockStrings(b.BlockedBy)
	}
	return out
}

// TestPlanDrain: waves of nodes that can each be drained at once.
func TestPlanDrain(t *testing.T) {
	twelve := zonedNodes(4, "a", "b", "c")
	six := zonedNodes(2, "a", "b", "c")
	others := nodeObjs(builders.Node("spare-1"), builders.Node("spare-2"), builders.Node("spare-3"), builders.Node("spare-4"), builders.Node("spare-5"))
	tests := []struct {
		name  string
		nodes []corev1.Node
		pods  []*builders.PodWrapper
		tdbs  []*builders.BudgetWrapper
		pdbs  func([]*corev1.Pod) []policyv1.PodDisruptionBudget
		drain []string
		want  planView
	}{
		{name: "12 nodes in 3 zones, maxUnavailable 1 per zone: 4 waves of one node per zone",
			nodes: twelve, pods: onePodPerNode(twelve), tdbs: []*builders.BudgetWrapper{webTDB("1")}, drain: nodeNames(twelve),
			want: planView{Waves: []waveView{
				{Nodes: []string{"zone-a-1", "zone-b-1", "zone-c-1"}, Pods: 3, BoundBy: []string{"TDB shop/web zone-a"}},
				{Nodes: []string{"zone-a-2", "zone-b-2", "zone-c-2"}, Pods: 3, BoundBy: []string{"TDB shop/web zone-a"}},
				{Nodes: []string{"zone-a-3", "zone-b-3", "zone-c-3"}, Pods: 3, BoundBy: []string{"TDB shop/web zone-a"}},
				{Nodes: []string{"zone-a-4", "zone-b-4", "zone-c-4"}, Pods: 3},
			}}},
		{name: "maxUnavailable 100% and maxDisruptedDomains 1: one zone per wave",
			nodes: twelve, pods: onePodPerNode(twelve), tdbs: []*builders.BudgetWrapper{webTDB("100%").MaxDisruptedDomains(1)},
			drain: nodeNames(twelve),
			want: planView{Waves: []waveView{
				{Nodes: []string{"zone-a-1", "zone-a-2", "zone-a-3", "zone-a-4"}, Pods: 4, BoundBy: []string{"TDB shop/web zone-b"}},
				{Nodes: []string{"zone-b-1", "zone-b-2", "zone-b-3", "zone-b-4"}, Pods: 4, BoundBy: []string{"TDB shop/web zone-c"}},
				{Nodes: []string{"zone-c-1", "zone-c-2", "zone-c-3", "zone-c-4"}, Pods: 4},
			}}},
		{name: "PDB maxUnavailable 2 over pods on 6 nodes: 3 waves of 2",
			nodes: six, pods: onePodPerNode(six), pdbs: pdbsOf(webPDB("web", "maxUnavailable=2", "")), drain: nodeNames(six),
			want: planView{Waves: []waveView{
				{Nodes: []string{"zone-a-1", "zone-a-2"}, Pods: 2, BoundBy: []string{"PDB shop/web"}},
				{Nodes: []string{"zone-b-1", "zone-b-2"}, Pods: 2, BoundBy: []string{"PDB shop/web"}},
				{Nodes: []string{"zone-c-1", "zone-c-2"}, Pods: 2},
			}}},
		{name: "a node whose pod is refused even alone is blocked, in no wave",
			// zone-c keeps 1 of its 2 pods and has 1 Ready: its Ready pod
			// cannot go; its not-Ready pod goes uncharged.
			nodes: six, pods: with(onePodPerNode(six), map[string]func(*builders.PodWrapper) *builders.PodWrapper{"web-zone-c-2": notReady}),
			tdbs: []*builders.BudgetWrapper{webTDB("1")}, drain: nodeNames(six),
			want: planView{
				Waves: []waveView{
					{Nodes: []string{"zone-a-1", "zone-b-1", "zone-c-2"}, Pods: 3, BoundBy: []string{"TDB shop/web zone-a"}},
					{Nodes: []string{"zone-a-2", "zone-b-2"}, Pods: 2},
				},
				Blocked: map[string][]string{"zone-c-1": {"shop/web-zone-c-1: TDB shop/web zone-c InsufficientPods"}},
			}},
		{name: "nodes without covered pods all fit one wave",
			nodes: append(append([]corev1.Node(nil), six...), others...),
			pods: append(onePodPerNode(six),
				appPod("cache", "cache-1", "spare-1"), appPod("cache", "cache-2", "spare-2"), appPod("cache", "cache-3", "spare-3")),
			tdbs: []*builders.BudgetWrapper{webTDB("0")}, pdbs: pdbsOf(webPDB("web", "minAvailable=100%", "")),
			drain: []string{"spare-5", "spare-4", "spare-3", "spare-2", "spare-1"},
			want: planView{Waves: []waveView{
				{Nodes: []string{"spare-1", "spare-2", "spare-3", "spare-4", "spare-5"}, Pods: 3},
			}}},
		{name: "no node to drain: no wave",
			nodes: six, pods: onePodPerNode(six), tdbs: []*builders.BudgetWrapper{webTDB("1")},
			want: planView{Waves: []waveView{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := decideCase{nodes: tc.nodes, pods: tc.pods, tdbs: tc.tdbs, pdbs: tc.pdbs}
			snap, pods := c.snapshot()
			got := readPlan(snap.PlanDrain(nodePods(pods, tc.drain...), zoneKey))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PlanDrain(%v) (-want +got):\n%s", tc.drain, diff)
			}
		})
	}
}
