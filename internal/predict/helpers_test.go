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
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/predict"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// The tests build clusters from the shared builders: pods of an app ("web",
// "api", "cache") in namespace "shop", each app owned by its own
// ReplicaSet; nodes named zone-a-1, zone-a-2, ... in zones zone-a, zone-b,
// zone-c. Budget statuses are never written by hand unless a test says so:
// they are what the status controller computes from the pods
// (budget.Compute, budget.StatusFor), and PodDisruptionBudget statuses what
// the disruption controller computes (pdbStatus).

const (
	ns      = "shop"
	zoneKey = builders.ZoneKey
)

// now is the time of every snapshot.
var now = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// replicaSet is the controller of app's pods.
func replicaSet(app string) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: app, UID: types.UID("rs-" + app)}
}

// appPod is a Running, Ready pod shop/name of app on node.
func appPod(app, name, node string) *builders.PodWrapper {
	return builders.Pod(name).Namespace(ns).UID(types.UID("uid-"+name)).Label("app", app).
		ControlledBy(replicaSet(app)).OnNode(node).Running().Ready()
}

// webPod is a Running, Ready pod of app web.
func webPod(name, node string) *builders.PodWrapper { return appPod("web", name, node) }

// zoneNode is node zone-<z>-<i> in zone-<z>.
func zoneNode(z string, i int) *builders.NodeWrapper {
	return builders.Node(fmt.Sprintf("zone-%s-%d", z, i)).Zone("zone-" + z)
}

// zonedNodes is perZone nodes in each zone, named zone-<z>-1 onwards.
func zonedNodes(perZone int, zones ...string) []corev1.Node {
	var out []corev1.Node
	for _, z := range zones {
		for i := 1; i <= perZone; i++ {
			out = append(out, *zoneNode(z, i).Obj())
		}
	}
	return out
}

// onePodPerNode is one Ready web pod on every node, named web-<node>.
func onePodPerNode(nodes []corev1.Node) []*builders.PodWrapper {
	out := make([]*builders.PodWrapper, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, webPod("web-"+n.Name, n.Name))
	}
	return out
}

// nodeObjs builds nodes.
func nodeObjs(ws ...*builders.NodeWrapper) []corev1.Node {
	out := make([]corev1.Node, 0, len(ws))
	for _, w := range ws {
		out = append(out, *w.Obj())
	}
	return out
}

// podObjs builds pods.
func podObjs(ws ...*builders.PodWrapper) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.Obj())
	}
	return out
}

// byName finds a pod.
func byName(pods []*corev1.Pod, name string) *corev1.Pod {
	for _, p := range pods {
		if p.Name == name {
			return p
		}
	}
	panic("no pod " + name)
}

// tdb is budget shop/name over app's pods, per zone, at generation 1.
func tdb(name, app string) *builders.BudgetWrapper {
	return builders.Budget(name).Namespace(ns).MatchLabels(map[string]string{"app": app}).
		TopologyKey(zoneKey).Generation(1)
}

// webTDB is tdb("web", "web") with maxUnavailable v ("1", "50%").
func webTDB(v string) *builders.BudgetWrapper {
	return tdb("web", "web").MaxUnavailable(intstr.Parse(v))
}

// ownersOf is every controller of pods, scaled to its number of pods plus
// missing[uid].
func ownersOf(pods []*corev1.Pod, missing map[types.UID]int32) map[types.UID]budget.Owner {
	out := map[types.UID]budget.Owner{}
	for _, p := range pods {
		ref := metav1.GetControllerOf(p)
		if ref == nil {
			continue
		}
		o := out[ref.UID]
		o.UID, o.Kind, o.Name = ref.UID, ref.Kind, ref.Name
		o.Replicas++
		out[ref.UID] = o
	}
	for uid, n := range missing {
		o := out[uid]
		o.UID, o.Kind, o.Replicas = uid, "ReplicaSet", o.Replicas+n
		out[uid] = o
	}
	return out
}

func lookup(nodes []corev1.Node) func(string) *corev1.Node {
	m := make(map[string]*corev1.Node, len(nodes))
	for i := range nodes {
		m[nodes[i].Name] = &nodes[i]
	}
	return func(name string) *corev1.Node { return m[name] }
}

// computed is the budget w with the status the status controller computes
// from the pods and nodes (every controller scaled to its pods).
func computed(w *builders.BudgetWrapper, nodes []corev1.Node, pods []*corev1.Pod) policyv1alpha1.TopologyDisruptionBudget {
	return computedWith(w, nodes, pods, nil, "")
}

// computedWith is computed with controllers missing pods and, when
// notEnforced is set, the budget not enforced for that reason.
func computedWith(w *builders.BudgetWrapper, nodes []corev1.Node, pods []*corev1.Pod, missing map[types.UID]int32, notEnforced string) policyv1alpha1.TopologyDisruptionBudget {
	t := w.Obj()
	res := budget.Compute(budget.Input{Budget: t, Pods: pods, Nodes: lookup(nodes), Owners: ownersOf(pods, missing), Now: now})
	t.Status = *budget.StatusFor(t, &res, now, notEnforced)
	return *t
}

// pdbAmount is a PDB's minAvailable or maxUnavailable: "maxUnavailable=1",
// "minAvailable=50%".
type pdbAmount string

// pdb is PodDisruptionBudget shop/name over app's pods, with the status the
// disruption controller computes from pods (controllers scaled to their
// pods), under unhealthyPodEvictionPolicy policy ("" for none).
func pdb(name, app string, amount pdbAmount, policy policyv1.UnhealthyPodEvictionPolicyType, pods []*corev1.Pod) policyv1.PodDisruptionBudget {
	return pdbWith(name, app, amount, policy, pods, ownersOf(pods, nil))
}

// pdbWith is pdb with the controllers' scales given.
func pdbWith(name, app string, amount pdbAmount, policy policyv1.UnhealthyPodEvictionPolicyType, pods []*corev1.Pod, owners map[types.UID]budget.Owner) policyv1.PodDisruptionBudget {
	p := policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Generation: 1},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}},
	}
	field, value, _ := strings.Cut(string(amount), "=")
	v := intstr.Parse(value)
	switch field {
	case "maxUnavailable":
		p.Spec.MaxUnavailable = &v
	case "minAvailable":
		p.Spec.MinAvailable = &v
	default:
		panic("bad amount " + amount)
	}
	if policy != "" {
		p.Spec.UnhealthyPodEvictionPolicy = &policy
	}
	pdbStatus(&p, pods, owners)
	return p
}

// pdbStatus sets p's status as the disruption controller computes it:
// expected pods from the controllers' scale (for maxUnavailable and a
// percentage minAvailable) or the pods (an integer minAvailable), healthy
// the Ready pods not being deleted, and disruptionsAllowed their
// difference with the desired healthy pods, 0 when no pod is expected.
func pdbStatus(p *policyv1.PodDisruptionBudget, pods []*corev1.Pod, owners map[types.UID]budget.Owner) {
	sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
	if err != nil {
		panic(err)
	}
	var podCount, healthy int32
	controllers := map[types.UID]bool{}
	for _, pod := range pods {
		if pod.Namespace != p.Namespace || !sel.Matches(labels.Set(pod.Labels)) ||
			pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		podCount++
		if ref := metav1.GetControllerOf(pod); ref != nil {
			controllers[ref.UID] = true
		}
		if budget.IsHealthy(pod) {
			healthy++
		}
	}
	var scale int32
	for uid := range controllers {
		scale += owners[uid].Replicas
	}
	var expected, desired int32
	switch {
	case p.Spec.MaxUnavailable != nil:
		expected = scale
		n, _ := intstr.GetScaledValueFromIntOrPercent(p.Spec.MaxUnavailable, int(expected), true)
		desired = max(expected-int32(n), 0)
	case p.Spec.MinAvailable.Type == intstr.Int:
		expected = podCount
		desired = p.Spec.MinAvailable.IntVal
	default:
		expected = scale
		n, _ := intstr.GetScaledValueFromIntOrPercent(p.Spec.MinAvailable, int(expected), true)
		desired = int32(n)
	}
	allowed := healthy - desired
	if expected <= 0 || allowed < 0 {
		allowed = 0
	}
	p.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: p.Generation, CurrentHealthy: healthy, DesiredHealthy: desired,
		ExpectedPods: expected, DisruptionsAllowed: allowed,
	}
}

// snapshot is the snapshot of nodes and budgets at now.
func snapshot(nodes []corev1.Node, tdbs []policyv1alpha1.TopologyDisruptionBudget, pdbs []policyv1.PodDisruptionBudget) *predict.Snapshot {
	return predict.NewSnapshot(nodes, tdbs, pdbs, now)
}

// short names a budget kind in expectations.
func short(kind string) string {
	switch kind {
	case predict.KindTDB:
		return "TDB"
	case predict.KindPDB:
		return "PDB"
	}
	return kind
}

// blockStrings reads blocks as "[pod: ]TDB shop/web zone-a InsufficientPods".
func blockStrings(bs []predict.Block) []string {
	var out []string
	for _, b := range bs {
		s := fmt.Sprintf("%s %s/%s", short(b.Kind), b.Namespace, b.Name)
		if b.Domain != "" {
			s += " " + b.Domain
		}
		if b.Reason != "" {
			s += " " + b.Reason
		}
		if b.Pod != "" {
			s = b.Pod + ": " + s
		}
		out = append(out, s)
	}
	return out
}

// budgetStrings reads budget refs as "TDB web zone-a 3/3 keeps 2 allows 1".
func budgetStrings(rs []predict.BudgetRef) []string {
	var out []string
	for _, r := range rs {
		s := short(r.Kind) + " " + r.Name
		if r.Domain != "" {
			s += " " + r.Domain
		}
		s += fmt.Sprintf(" %d/%d keeps %d allows %d", r.Healthy, r.Expected, r.Desired, r.Allowed)
		if r.NotEnforced {
			s += " notEnforced"
		}
		out = append(out, s)
	}
	return out
}

// nodePods is the pods of each named node, as a drain would evict them.
func nodePods(pods []*corev1.Pod, names ...string) []predict.NodePods {
	out := make([]predict.NodePods, 0, len(names))
	for _, n := range names {
		np := predict.NodePods{Node: n}
		for _, p := range pods {
			if p.Spec.NodeName == n {
				np.Pods = append(np.Pods, p)
			}
		}
		out = append(out, np)
	}
	return out
}

// nodeNames is the names of nodes, sorted.
func nodeNames(nodes []corev1.Node) []string {
	out := make([]string, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	sort.Strings(out)
	return out
}
