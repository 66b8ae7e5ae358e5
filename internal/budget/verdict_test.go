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
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// One verdict for a pod under all its budgets: the order in which the
// webhook answers and kubectl-tdb predicts.
func TestDecide(t *testing.T) {
	// zone-a keeps 3 of 4 Ready pods: one allowance; zone-b none.
	spare := func(name string) *policyv1alpha1.TopologyDisruptionBudget {
		return tdb(name).TopologyKey(zoneKey).StatusDomains(row("zone-a", 4, 4, 3, 1), row("zone-b", 3, 2, 2, 0)).Obj()
	}
	full := func(name string) *policyv1alpha1.TopologyDisruptionBudget {
		return tdb(name).TopologyKey(zoneKey).StatusDomains(row("zone-a", 4, 3, 3, 0)).Obj()
	}
	inA := func(b *policyv1alpha1.TopologyDisruptionBudget) Covering {
		return Covering{Budget: b, Domain: "zone-a"}
	}
	unplaced := func(b *policyv1alpha1.TopologyDisruptionBudget) Covering {
		return Covering{Budget: b, PlaceErr: fmt.Errorf("node n9: %w", ErrNoDomainLabel)}
	}
	pdb := func(name string, allowed int32) policyv1.PodDisruptionBudget {
		return policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: name, Generation: 1},
			Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
			Status:     policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, DisruptionsAllowed: allowed, CurrentHealthy: 3, DesiredHealthy: 3 - allowed},
		}
	}
	ready := pod("a-0").OnNode("n1").Ready().Obj()
	notReady := pod("a-0").OnNode("n1").NotReady().Obj()
	boundPending := pod("a-0").Pending().OnNode("n1").Obj()
	done := pod("a-0").OnNode("n1").Phase(corev1.PodSucceeded).Obj()

	// want is what a user reads of a verdict: allowed or not, the reason,
	// who refuses (budget index, -1 a PDB) with what code, every refusal
	// listed, which budgets are charged, and the PDB core spends.
	type want struct {
		Allowed    bool
		Reason     Reason
		By         int
		Code       int32
		Listed     []Reason
		Charged    []bool
		PDB        string
		PDBCharged bool
	}
	read := func(v Verdict) want {
		w := want{Allowed: v.Allowed, Reason: v.Reason, By: v.Answer.Budget, Code: v.Answer.Code, PDB: v.PDB, PDBCharged: v.PDBCharged}
		for _, r := range v.Refusals {
			w.Listed = append(w.Listed, r.Decision.Reason)
		}
		for _, d := range v.Decisions {
			w.Charged = append(w.Charged, d.Status != nil)
		}
		return w
	}
	tests := []struct {
		name     string
		pod      *corev1.Pod
		covering []Covering
		pdbs     []policyv1.PodDisruptionBudget
		all      bool
		want     want
	}{
		{"a terminal pod passes whatever refuses", done, []Covering{inA(full("a")), unplaced(spare("b"))}, []policyv1.PodDisruptionBudget{pdb("p", 0)}, true,
			want{Allowed: true, Reason: DecisionPodNotRunning}},
		{"a Pending pod on a node is recorded by its budgets, not asked of its PDBs", boundPending, []Covering{inA(full("a"))}, []policyv1.PodDisruptionBudget{pdb("p", 0)}, false,
			want{Allowed: true, Reason: DecisionPodNotRunning, Charged: []bool{true}}},
		{"a Pending pod on a node a budget cannot place is refused", boundPending, []Covering{unplaced(spare("a"))}, nil, false,
			want{Reason: DecisionBlocked, Code: http.StatusTooManyRequests, Listed: []Reason{DecisionBlocked}}},
		{"no budget covers it", ready, nil, nil, false,
			want{Allowed: true, Reason: DecisionNotCovered}},
		{"no TDB, a PDB with none to spare", ready, nil, []policyv1.PodDisruptionBudget{pdb("p", 0)}, false,
			want{Reason: DecisionPodDisruptionBudget, By: -1, Code: http.StatusTooManyRequests, Listed: []Reason{DecisionPodDisruptionBudget}, PDB: "p"}},
		{"every budget allows: each charged, the PDB spent", ready, []Covering{inA(spare("a")), inA(spare("b"))}, []policyv1.PodDisruptionBudget{pdb("p", 1)}, false,
			want{Allowed: true, Reason: DecisionCharged, Charged: []bool{true, true}, PDB: "p", PDBCharged: true}},
		{"a placement refusal answers before a budget that refuses first", ready, []Covering{inA(full("a")), unplaced(spare("b"))}, nil, false,
			want{Reason: DecisionBlocked, By: 1, Code: http.StatusTooManyRequests, Listed: []Reason{DecisionBlocked}}},
		{"all refusals are listed in budget order, the placement one answering", ready, []Covering{inA(full("a")), unplaced(spare("b"))}, []policyv1.PodDisruptionBudget{pdb("p", 0)}, true,
			want{Reason: DecisionBlocked, By: 1, Code: http.StatusTooManyRequests,
				Listed: []Reason{DecisionInsufficientPods, DecisionBlocked, DecisionPodDisruptionBudget}, PDB: "p"}},
		{"the first budget to refuse answers", ready, []Covering{inA(spare("a")), inA(full("b")), inA(full("c"))}, nil, false,
			want{Reason: DecisionInsufficientPods, By: 1, Code: http.StatusTooManyRequests, Listed: []Reason{DecisionInsufficientPods}}},
		{"the budgets allow, a PDB refuses: nothing charged", ready, []Covering{inA(spare("a"))}, []policyv1.PodDisruptionBudget{pdb("p", 0)}, false,
			want{Reason: DecisionPodDisruptionBudget, By: -1, Code: http.StatusTooManyRequests, Listed: []Reason{DecisionPodDisruptionBudget}, PDB: "p"}},
		{"two PDBs: core's 500", ready, []Covering{inA(spare("a"))}, []policyv1.PodDisruptionBudget{pdb("p", 1), pdb("q", 1)}, false,
			want{Reason: DecisionPodDisruptionBudget, By: -1, Code: http.StatusInternalServerError, Listed: []Reason{DecisionPodDisruptionBudget}}},
		{"a not-Ready pod passes a healthy PDB without spending it", notReady, []Covering{inA(full("a"))}, []policyv1.PodDisruptionBudget{pdb("p", 0)}, false,
			want{Allowed: true, Reason: DecisionUnhealthyPod, Charged: []bool{true}, PDB: "p"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Decide(PodEviction{Pod: tc.pod, Covering: tc.covering, PDBs: tc.pdbs, Now: t0, All: tc.all})
			if diff := cmp.Diff(tc.want, read(v)); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

// A PDB's refusal names the budgets that would have allowed the eviction
// and says none is charged; alone it is core's message as is.
func TestDecidePDBMessage(t *testing.T) {
	b := tdb("a").TopologyKey(zoneKey).StatusDomains(row("zone-a", 4, 4, 3, 1)).Obj()
	p := policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNS, Name: "p", Generation: 1},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, CurrentHealthy: 3, DesiredHealthy: 3},
	}
	q := PodEviction{Pod: pod("a-0").OnNode("n1").Ready().Obj(), Covering: []Covering{{Budget: b, Domain: "zone-a"}},
		PDBs: []policyv1.PodDisruptionBudget{p}, Now: t0}
	v := Decide(q)
	core := "the PodDisruptionBudget p needs 3 healthy pods and has 3 currently; 0 disruptions allowed"
	if got, want := v.Answer.Decision.Message, core+" (topology disruption budget ns/a would allow it, and is not charged)"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if v.Answer.PDB.Message != core || v.Answer.PDB.PDB != "p" {
		t.Errorf("core's verdict = %+v, want PDB p saying %q", v.Answer.PDB, core)
	}
	q.Covering = nil
	if got := Decide(q).Answer.Decision.Message; got != core {
		t.Errorf("without a TDB, message = %q, want core's %q", got, core)
	}
}

// Recheck sees each decision before it is combined, and only until the
// answer is known: a budget after the first refusal is not decided.
func TestDecideRecheck(t *testing.T) {
	full := tdb("a").TopologyKey(zoneKey).StatusDomains(row("zone-a", 4, 3, 3, 0)).Obj()
	spare := tdb("b").TopologyKey(zoneKey).StatusDomains(row("zone-a", 4, 4, 3, 1)).Obj()
	ready := pod("a-0").OnNode("n1").Ready().Obj()
	var asked []int
	lift := func(i int, d Decision) Decision {
		asked = append(asked, i)
		if !d.Allowed {
			return Decision{Allowed: true, Reason: DecisionCharged, Status: &policyv1alpha1.TopologyDisruptionBudgetStatus{}}
		}
		return d
	}
	v := Decide(PodEviction{Pod: ready, Covering: []Covering{{Budget: full, Domain: "zone-a"}, {Budget: spare, Domain: "zone-a"}}, Now: t0, Recheck: lift})
	if !v.Allowed || !cmp.Equal(asked, []int{0, 1}) {
		t.Errorf("lifted refusal: allowed %v, rechecked %v; want allowed, [0 1]", v.Allowed, asked)
	}
	asked = nil
	keep := func(i int, d Decision) Decision { asked = append(asked, i); return d }
	v = Decide(PodEviction{Pod: ready, Covering: []Covering{{Budget: full, Domain: "zone-a"}, {Budget: spare, Domain: "zone-a"}}, Now: t0, Recheck: keep})
	if v.Allowed || !cmp.Equal(asked, []int{0}) || !strings.Contains(v.Answer.Decision.Message, "ns/a") {
		t.Errorf("kept refusal: allowed %v, rechecked %v, message %q; want refused by ns/a, only [0] asked", v.Allowed, asked, v.Answer.Decision.Message)
	}
}
