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

package predict

import (
	"sort"

	corev1 "k8s.io/api/core/v1"

	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// Together says whether every pod could be evicted at once, without waiting
// for any pod to turn Ready: the evictions are simulated one after the
// other on a clone of s, each spending what the webhook and the API server
// would record. A drain sends them concurrently, in no set order, so the
// simulation takes the order that is hardest on the budgets: Ready pods
// first, then the not-Ready pods, which pass without a charge only while
// their domain (or PDB) still has its healthy pods. Blocks lists the pods
// refused along the way (their Pod set); the snapshot returned holds the
// allowances left.
func (s *Snapshot) Together(pods []*corev1.Pod) (ok bool, blocks []Block, after *Snapshot) {
	after = s.Clone()
	ok = true
	for _, pod := range evictionOrder(pods) {
		v := after.Decide(pod)
		if !v.Allowed {
			ok = false
			// The hints of the simulated state would count the set's own
			// evictions as in flight: say what to do instead.
			alone := s.Decide(pod).Allowed
			for _, b := range v.Blocks {
				b.Pod = pod.Namespace + "/" + pod.Name
				if alone {
					b.Hint = hintAllowedAlone
				}
				blocks = append(blocks, b)
			}
			continue
		}
		after.Apply(v)
	}
	return ok, blocks, after
}

// hintAllowedAlone is the hint of a pod refused only because the other pods
// of the set spent the allowance first.
const hintAllowedAlone = "allowed alone: the other pods of this set spend the allowance first; drain them in separate waves (kubectl tdb plan)"

// evictionOrder puts the Ready pods first, then the pods that may pass
// without a charge, each group by namespace and name.
func evictionOrder(pods []*corev1.Pod) []*corev1.Pod {
	out := append([]*corev1.Pod(nil), pods...)
	free := func(p *corev1.Pod) bool { return budget.CanIgnoreBudget(p) || !budget.IsHealthy(p) }
	sort.SliceStable(out, func(i, j int) bool {
		fi, fj := free(out[i]), free(out[j])
		if fi != fj {
			return fj
		}
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// NodePods is a node to drain with the pods a drain would evict from it.
type NodePods struct {
	Node string
	Pods []*corev1.Pod
}

// Wave is a set of nodes to drain at once.
type Wave struct {
	Nodes []string `json:"nodes"`
	// Pods is how many pods the wave evicts.
	Pods int `json:"pods"`
	// BoundBy lists the budgets that kept the next node out of the wave
	// (empty when no node was kept out).
	BoundBy []Block `json:"boundBy,omitempty"`
}

// BlockedNode is a node that cannot be drained now, even alone.
type BlockedNode struct {
	Node      string  `json:"node"`
	BlockedBy []Block `json:"blockedBy"`
}

// Plan is an order in which to drain nodes.
type Plan struct {
	Waves   []Wave        `json:"waves"`
	Blocked []BlockedNode `json:"blocked,omitempty"`
}

// PlanDrain orders nodes into waves that can each be drained at once with
// no eviction refused, assuming that before each wave the pods the previous
// waves evicted are Ready again elsewhere, so that every wave starts from
// the allowances of s (the budgets as they are now).
//
// The packing is greedy first-fit: nodes are taken in order (by the value
// of zoneKey when set, then by name, so that a zone's nodes are tried
// together) and each joins the first wave whose pods, with its own, are
// still allowed together (Together); a node that fits no wave opens a new
// one, and a node whose pods are refused even alone is Blocked. A node
// therefore never needs a wave of its own unless it fits nowhere else, so
// the plan never has more waves than draining the drainable nodes one at a
// time. It is not always the fewest waves (packing is NP-hard in general):
// first-fit can place a node in an early wave that a later, larger node
// would have used better.
func (s *Snapshot) PlanDrain(nodes []NodePods, zoneKey string) Plan {
	order := append([]NodePods(nil), nodes...)
	zone := func(n string) string {
		if node := s.Nodes[n]; node != nil && zoneKey != "" {
			return node.Labels[zoneKey]
		}
		return ""
	}
	sort.SliceStable(order, func(i, j int) bool {
		zi, zj := zone(order[i].Node), zone(order[j].Node)
		if zi != zj {
			return zi < zj
		}
		return order[i].Node < order[j].Node
	})
	type open struct {
		wave Wave
		pods []*corev1.Pod
	}
	var waves []*open
	var plan Plan
	for _, n := range order {
		if ok, blocks, _ := s.Together(n.Pods); !ok {
			for i := range blocks {
				if blocks[i].Hint == hintAllowedAlone {
					blocks[i].Hint = "the node's own pods need more than the budget allows at once: kubectl drain still drains it, its evictions refused until the first replacements are Ready"
				}
			}
			plan.Blocked = append(plan.Blocked, BlockedNode{Node: n.Node, BlockedBy: blocks})
			continue
		}
		placed := false
		for _, w := range waves {
			pods := append(append([]*corev1.Pod(nil), w.pods...), n.Pods...)
			ok, blocks, _ := s.Together(pods)
			if !ok {
				if w.wave.BoundBy == nil {
					w.wave.BoundBy = budgetsOf(blocks)
				}
				continue
			}
			w.pods = pods
			w.wave.Nodes = append(w.wave.Nodes, n.Node)
			w.wave.Pods = len(pods)
			placed = true
			break
		}
		if !placed {
			waves = append(waves, &open{wave: Wave{Nodes: []string{n.Node}, Pods: len(n.Pods)}, pods: n.Pods})
		}
	}
	plan.Waves = make([]Wave, len(waves))
	for i, w := range waves {
		plan.Waves[i] = w.wave
	}
	return plan
}

// budgetsOf lists the distinct budgets of blocks, without pods.
func budgetsOf(blocks []Block) []Block {
	seen := map[Block]bool{}
	out := []Block{}
	for _, b := range blocks {
		k := Block{Kind: b.Kind, Namespace: b.Namespace, Name: b.Name, Domain: b.Domain}
		if !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out
}
