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

package controllers

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// A budget with nodeSelectorTerm must not take policy.tdb.dev/domain off
// the pods it selects outside its term when another (older) budget covers
// them and wrote it: the older one would write it back. Neither sees a
// conflict (the younger checks only its covered pods; the older ignores
// younger mirrors): the label would flip forever, and each time it is back
// the pod is under both budgets' mirrors.
func TestATermBudgetLeavesAnotherBudgetsDomainLabel(t *testing.T) {
	var objs []client.Object
	for _, z := range fakeZones {
		objs = append(objs,
			builders.Node(nodeName(z, 0)).Zone(z).Label("rack", "r-"+z).Label("pool", "gpu").Obj(),
			builders.Node(nodeName(z, 1)).Zone(z).Label("rack", "r-"+z).Label("pool", "cpu").Obj(),
			// covered by the term budget only
			builders.Pod("gpu-"+z).Namespace(fakeNS).UID(types.UID("uid-gpu-"+z)).Labels(map[string]string{"role": "w"}).
				OnNode(nodeName(z, 0)).Running().Ready().Obj(),
			// selected by both; outside the term
			builders.Pod("cpu-"+z).Namespace(fakeNS).UID(types.UID("uid-cpu-"+z)).Labels(map[string]string{"role": "w", "app": "ingester"}).
				OnNode(nodeName(z, 1)).Running().Ready().Obj(),
		)
	}
	older := created(builders.Budget("a-rack").Namespace(fakeNS).MatchLabels(map[string]string{"app": "ingester"}).
		TopologyKey("rack").MinAvailable(intOne()).Generation(1).Obj())
	older.CreationTimestamp = metav1.NewTime(fakeT0.Add(-2 * time.Hour))
	older.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
	younger := created(builders.Budget("b-gpu").Namespace(fakeNS).MatchLabels(map[string]string{"role": "w"}).
		TopologyKey("rack").MinAvailable(intOne()).Generation(1).
		NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{
			{Key: "pool", Operator: "In", Values: []string{"gpu"}}}}).Obj())
	younger.CreationTimestamp = metav1.NewTime(fakeT0.Add(-1 * time.Hour))
	younger.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
	c := newFakeCluster(t, append(objs, older, younger)...)
	versions := &budgetstatus.Versions{}
	status := newBudgetReconciler(c, events.NewFakeRecorder(100), clocktesting.NewFakeClock(fakeT0))
	status.Versions = versions
	mirror := newMirrorReconciler(c, versions)
	reconcileBudget(t, status, older.Name)
	reconcileBudget(t, status, younger.Name)

	var perRound []int32
	maxCover := 0
	for range 4 {
		before := c.podPatches.Load()
		reconcileBudget(t, mirror, older.Name)
		maxCover = max(maxCover, len(pdbsSelecting(t, c, "cpu-zone-a")))
		reconcileBudget(t, mirror, younger.Name)
		perRound = append(perRound, c.podPatches.Load()-before)
	}
	if perRound[len(perRound)-1] != 0 || maxCover > 1 {
		t.Errorf("label patches per round %v (want them to settle); pod cpu-zone-a under up to %d PDBs", perRound, maxCover)
	}
}

// Two budgets over the same pods whose keys both map to the operator's
// policy.tdb.dev/domain label (a rack-keyed and a hostname-keyed budget)
// must not fight over the label forever, as they did when the younger
// checked for conflicts with the pod relabelled with its own value, which
// the older's mirrors do not select, and the older ignored the younger's
// mirrors. The younger yields with PDBConflict.
func TestTwoOperatorLabelledBudgetsSettleTheDomainLabel(t *testing.T) {
	w := newIngesterWorld()
	for name, n := range w.nodes {
		n.Labels["kubernetes.io/hostname"] = name
		n.Labels["rack"] = "rack-" + n.Labels[builders.ZoneKey]
	}
	rack := created(builders.Budget("a-rack").Namespace(fakeNS).MatchLabels(map[string]string{"app": "ingester"}).
		TopologyKey("rack").MaxUnavailable(intOne()).Generation(1).Obj())
	rack.CreationTimestamp = metav1.NewTime(fakeT0.Add(-2 * time.Hour))
	rack.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
	host := created(builders.Budget("b-host").Namespace(fakeNS).MatchLabels(map[string]string{"app": "ingester"}).
		TopologyKey("kubernetes.io/hostname").MinAvailable(intOne()).Generation(1).Obj())
	host.CreationTimestamp = metav1.NewTime(fakeT0.Add(-1 * time.Hour))
	host.Spec.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
	c := newFakeCluster(t, append(w.objects(), rack, host)...)
	versions := &budgetstatus.Versions{}
	status := newBudgetReconciler(c, events.NewFakeRecorder(100), clocktesting.NewFakeClock(fakeT0))
	status.Versions = versions
	mirror := newMirrorReconciler(c, versions)
	reconcileBudget(t, status, rack.Name)
	reconcileBudget(t, status, host.Name)

	// Each pass of one is the pod events that bring the other back.
	var perRound []int32
	for range 4 {
		before := c.podPatches.Load()
		reconcileBudget(t, mirror, rack.Name)
		reconcileBudget(t, mirror, host.Name)
		perRound = append(perRound, c.podPatches.Load()-before)
	}
	if perRound[len(perRound)-1] != 0 {
		t.Errorf("pod label patches per round of the two budgets' passes: %v; want them to settle (one budget yielding with PDBConflict)", perRound)
	}
	tdb := c.budgetNamed(t, host.Name)
	if cnd := apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionMirrored); cnd == nil || cnd.Reason != policyv1alpha1.ReasonPDBConflict {
		t.Errorf("younger budget's Mirrored condition = %+v, want PDBConflict", cnd)
	}
}

// pdbsSelecting lists the PDBs of fakeNS whose selector matches the pod's
// labels as they are now, as core's eviction handler reads them.
func pdbsSelecting(t *testing.T, c client.Client, podName string) []string {
	t.Helper()
	ctx := context.Background()
	var pod corev1.Pod
	if err := c.Get(ctx, client.ObjectKey{Namespace: fakeNS, Name: podName}, &pod); err != nil {
		t.Fatal(err)
	}
	var pdbs policyv1.PodDisruptionBudgetList
	if err := c.List(ctx, &pdbs, client.InNamespace(fakeNS)); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range pdbs.Items {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err == nil && sel.Matches(labels.Set(pod.Labels)) {
			out = append(out, p.Name)
		}
	}
	return out
}
