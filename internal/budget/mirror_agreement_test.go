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

package budget

import (
	"math/rand"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// mirrorsAsCoreSeesThem labels each covered pod with its domain and returns
// the budget's mirrors (MirrorDomains) with the status the disruption
// controller would give them: an integer minAvailable is the desired count,
// the pods the mirror selects are the expected ones, and its healthy pods
// are those Ready and not being deleted (no eviction of core's own pending).
func mirrorsAsCoreSeesThem(in Input, st *policyv1alpha1.TopologyDisruptionBudgetStatus) ([]*corev1.Pod, []policyv1.PodDisruptionBudget) {
	tdb := in.Budget
	var labelled []*corev1.Pod
	for _, p := range in.Pods {
		q := p.DeepCopy()
		delete(q.Labels, DomainLabel)
		if pl, err := Place(tdb, p, in.Nodes, nil); err == nil && pl.Covered && pl.Domain != "" && !pl.NodeGone {
			q.Labels = labels.Merge(q.Labels, labels.Set{DomainLabel: pl.Domain})
		}
		labelled = append(labelled, q)
	}
	var pdbs []policyv1.PodDisruptionBudget
	for _, m := range MirrorDomains(&tdb.Spec, st) {
		sel := tdb.Spec.Selector.AsMeta()
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: DomainLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{m.Domain}})
		minAvailable := intstr.FromInt32(m.MinAvailable)
		pdb := policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: tdb.Namespace, Name: MirrorName(tdb.Name, m.Domain), Generation: 1},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: sel, MinAvailable: &minAvailable},
		}
		if p := tdb.Spec.UnhealthyPodEvictionPolicy; p != "" {
			policy := policyv1.UnhealthyPodEvictionPolicyType(p)
			pdb.Spec.UnhealthyPodEvictionPolicy = &policy
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			panic(err)
		}
		healthy := int32(0)
		for _, p := range labelled {
			if p.Namespace == tdb.Namespace && s.Matches(labels.Set(p.Labels)) && !isTerminal(p) && IsHealthy(p) {
				healthy++
			}
		}
		pdb.Status = policyv1.PodDisruptionBudgetStatus{
			ObservedGeneration: 1,
			DesiredHealthy:     m.MinAvailable,
			CurrentHealthy:     healthy,
			DisruptionsAllowed: max(0, healthy-m.MinAvailable),
		}
		pdbs = append(pdbs, pdb)
	}
	return labelled, pdbs
}

// checkMirrorsAgree asserts that core, deciding from the mirrors, lets go
// every pod the budget lets go.
func checkMirrorsAgree(t *testing.T, in Input) (allowedByBudget int) {
	t.Helper()
	res := Compute(in)
	st := statusFrom(in.Budget, res)
	judged := in.Budget.DeepCopy()
	judged.Status = st
	labelled, pdbs := mirrorsAsCoreSeesThem(in, &st)
	for _, p := range labelled {
		pl, err := Place(judged, p, in.Nodes, nil)
		if !pl.Covered || CanIgnoreBudget(p) {
			// Core lets a pod it may ignore go whatever its PDBs say.
			continue
		}
		q := PodEviction{Pod: p, Covering: []Covering{{Budget: judged, Domain: pl.Domain, NodeGone: pl.NodeGone, PlaceErr: err}}, Now: in.Now}
		alone := Decide(q)
		if !alone.Allowed || alone.Reason == DecisionAlreadyRecorded {
			// A renewed grant (the pod's earlier eviction was granted and
			// then refused after the webhook) rests on the charge already
			// made, which the mirrors cannot see: core decides it afresh.
			continue
		}
		allowedByBudget++
		q.PDBs = pdbs
		if v := Decide(q); !v.Allowed {
			t.Errorf("pod %s (domain %q, Ready %v): the budget allows it (%s) but the verdict with its mirrors refuses it: %s\nrows %+v\nmirrors %+v\nworld:\n%s",
				p.Name, pl.Domain, isReady(p), alone.Reason, v.Answer.Decision.Message, st.Domains, mirrorSummary(pdbs), describe(in))
			return allowedByBudget
		}
	}
	return allowedByBudget
}

func mirrorSummary(pdbs []policyv1.PodDisruptionBudget) []string {
	var out []string
	for _, p := range pdbs {
		out = append(out, p.Name+": minAvailable "+p.Spec.MinAvailable.String()+" healthy "+itoa(int(p.Status.CurrentHealthy)))
	}
	return out
}

// A mirrored PodDisruptionBudget never refuses what the budget allows: over
// random worlds (the budget fuzzer's), both eviction policies, any
// maxDisruptedDomains, domains waiting or not, every pod the budget lets go
// core lets go over the mirrors too.
func TestMirrorsNeverRefuseWhatTheBudgetAllows(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	allowed, unhealthyAllowed := 0, 0
	for i := range 5000 {
		data := make([]byte, 8+rng.Intn(120))
		rng.Read(data)
		in := decodeWorld(data)
		if i%2 == 1 {
			in.Budget.Spec.UnhealthyPodEvictionPolicy = policyv1alpha1.AlwaysAllow
		}
		// Half the worlds are zone-keyed with maxDisruptedDomains 1, where
		// domains wait most.
		if i%4 >= 2 && in.Budget.Spec.TopologyKey != "" {
			in.Budget.Spec.MaxDisruptedDomains = ptrTo(int32(1))
		}
		n := checkMirrorsAgree(t, in)
		allowed += n
		if n > 0 {
			for _, p := range in.Pods {
				if !isReady(p) {
					unhealthyAllowed++
					break
				}
			}
		}
		if t.Failed() {
			return
		}
	}
	// The property must have been exercised, not vacuously true.
	if allowed < 1000 || unhealthyAllowed < 100 {
		t.Fatalf("only %d allowed evictions (%d worlds with a not-Ready pod) checked", allowed, unhealthyAllowed)
	}
}

// FuzzMirrorAgreement is the same property under the fuzzer.
func FuzzMirrorAgreement(f *testing.F) {
	f.Add([]byte{}, false, true)
	f.Add([]byte{3, 5, 1, 0, 1, 1, 1, 2, 2, 3, 3, 0, 0, 1, 5, 7, 2, 1, 0, 3, 3, 2, 4, 12, 0, 0, 6, 1, 1}, true, true)
	f.Fuzz(func(t *testing.T, data []byte, alwaysAllow, oneDomain bool) {
		in := decodeWorld(data)
		if alwaysAllow {
			in.Budget.Spec.UnhealthyPodEvictionPolicy = policyv1alpha1.AlwaysAllow
		}
		if oneDomain && in.Budget.Spec.TopologyKey != "" {
			in.Budget.Spec.MaxDisruptedDomains = ptrTo(int32(1))
		}
		checkMirrorsAgree(t, in)
	})
}

// The reported case: 3 zones of 3 pods, maxUnavailable 1, maxDisruptedDomains
// 1, a not-Ready pod in zone-b and one in zone-c. The budget lets the
// zone-c one go (its domain is at its desired count); so must its mirror.
func TestWaitingMirrorLetsANotReadyPodGo(t *testing.T) {
	nodes := threeZones()
	var ps []*corev1.Pod
	for zone, node := range map[string]string{"a": "n1", "b": "n3", "c": "n4"} {
		for i := range 3 {
			p := pod("web-" + zone + itoa(i)).OnNode(node).ControlledBy(replicaSet("rs"))
			if i == 0 && zone != "a" {
				p.NotReady()
			} else {
				p.Ready()
			}
			ps = append(ps, p.Obj())
		}
	}
	b := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).MaxDisruptedDomains(1).Obj()
	in := Input{Budget: b, Pods: ps, Nodes: nodeLookup(nodes...), Owners: owners(owner("rs", 9)), Now: t0}
	if n := checkMirrorsAgree(t, in); n != 2 {
		t.Errorf("the budget allowed %d evictions, want the 2 not-Ready pods'", n)
	}
}
