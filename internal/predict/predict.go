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

// Package predict answers, from a snapshot of the cluster, what evictions
// would get now: one pod alone, a set of pods all at once, and an order in
// which to drain nodes. It decides with the eviction webhook's own verdict
// (internal/budget: Place, then Decide for the pod under all its budgets),
// so that kubectl-tdb and the webhook cannot disagree on a snapshot; it
// adds only the hints. It reads
// nothing from the API server: internal/plugin gathers the snapshot.
package predict

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// Kinds of budgets in verdicts.
const (
	KindTDB = "TopologyDisruptionBudget"
	KindPDB = "PodDisruptionBudget"
)

// ReasonPDB is the reason of a pod that only a policy/v1 PDB refuses.
const ReasonPDB = budget.DecisionPodDisruptionBudget

// BudgetRef is one budget covering a pod, with the numbers of the pod's
// domain (the whole PDB for a PodDisruptionBudget).
type BudgetRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Domain is the pod's domain under a TDB ("" for a PDB).
	Domain   string `json:"domain,omitempty"`
	Healthy  int32  `json:"healthy"`
	Desired  int32  `json:"desired"`
	Expected int32  `json:"expected"`
	Allowed  int32  `json:"allowed"`
	// NotEnforced says the webhook does not decide this budget's pods
	// (condition reason NotEnforced): it is shown, and refuses nothing.
	NotEnforced bool `json:"notEnforced,omitempty"`
	// Enforcement is the reason of the budget's Enforced condition when the
	// webhook may let some of its evictions through unchecked:
	// PartiallyEnforced (some callers' evictions skip it) or FailsOpen
	// (evictions pass while no operator replica answers). A warning: the
	// verdicts are the webhook's when it is asked.
	Enforcement string `json:"enforcement,omitempty"`
}

// Block is one budget refusing an eviction, in the webhook's (or core's)
// words, with what would change its answer.
type Block struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Domain    string `json:"domain,omitempty"`
	Message   string `json:"message"`
	// Pod is the refused pod ("namespace/name"), in answers about several.
	Pod string `json:"pod,omitempty"`
	// Reason is the decision's reason (budget.Reason).
	Reason string `json:"reason,omitempty"`
	// Hint says what would let the eviction through.
	Hint string `json:"hint,omitempty"`
}

// Verdict is the answer one eviction of a pod would get now.
type Verdict struct {
	Allowed bool
	// Reason is the first refusing budget's reason (budgets in name order,
	// TDBs before PDBs, as the webhook decides them), or why it is allowed.
	Reason budget.Reason
	// Blocks lists every budget that refuses it.
	Blocks []Block
	// Budgets lists every budget covering the pod.
	Budgets []BudgetRef
	// charges are the TDB statuses an allowed eviction leads to, and
	// pdbCharged whether it spends a PDB allowance (see Snapshot.apply).
	charges    map[string]*policyv1alpha1.TopologyDisruptionBudgetStatus
	pdbCharged string
}

// Snapshot is what the decision reads: the budgets of the pods' namespaces
// and the nodes. Apply and Clone make it a simulation: an allowed eviction
// applied spends its allowances as the webhook and core would record them.
type Snapshot struct {
	// Nodes by name; a pod's node missing here is gone.
	Nodes map[string]*corev1.Node
	tdbs  map[string]*tdbEntry // by namespace/name
	pdbs  map[string]*policyv1.PodDisruptionBudget
	// byNS lists the budgets' keys per namespace, sorted by name.
	tdbsByNS, pdbsByNS map[string][]string
	// Now is the decision's time.
	Now time.Time
}

type tdbEntry struct {
	tdb *policyv1alpha1.TopologyDisruptionBudget
	cv  *budget.Coverage
}

// NewSnapshot builds a snapshot. The objects are not modified; simulated
// evictions work on copies.
func NewSnapshot(nodes []corev1.Node, tdbs []policyv1alpha1.TopologyDisruptionBudget, pdbs []policyv1.PodDisruptionBudget, now time.Time) *Snapshot {
	s := &Snapshot{
		Nodes: make(map[string]*corev1.Node, len(nodes)),
		tdbs:  make(map[string]*tdbEntry, len(tdbs)), pdbs: make(map[string]*policyv1.PodDisruptionBudget, len(pdbs)),
		tdbsByNS: map[string][]string{}, pdbsByNS: map[string][]string{},
		Now: now,
	}
	for i := range nodes {
		s.Nodes[nodes[i].Name] = &nodes[i]
	}
	for i := range tdbs {
		t := &tdbs[i]
		k := t.Namespace + "/" + t.Name
		s.tdbs[k] = &tdbEntry{tdb: t, cv: budget.ParseCoverage(t)}
		s.tdbsByNS[t.Namespace] = append(s.tdbsByNS[t.Namespace], k)
	}
	for i := range pdbs {
		p := &pdbs[i]
		k := p.Namespace + "/" + p.Name
		s.pdbs[k] = p
		s.pdbsByNS[p.Namespace] = append(s.pdbsByNS[p.Namespace], k)
	}
	for _, m := range []map[string][]string{s.tdbsByNS, s.pdbsByNS} {
		for _, keys := range m {
			sort.Strings(keys)
		}
	}
	return s
}

// Clone returns a snapshot whose simulated evictions do not change s.
// Budgets are copied on write, so a clone is cheap.
func (s *Snapshot) Clone() *Snapshot {
	c := *s
	c.tdbs = make(map[string]*tdbEntry, len(s.tdbs))
	for k, v := range s.tdbs {
		c.tdbs[k] = v
	}
	c.pdbs = make(map[string]*policyv1.PodDisruptionBudget, len(s.pdbs))
	for k, v := range s.pdbs {
		c.pdbs[k] = v
	}
	return &c
}

// TDB returns a budget of the snapshot as simulated so far.
func (s *Snapshot) TDB(namespace, name string) *policyv1alpha1.TopologyDisruptionBudget {
	if e := s.tdbs[namespace+"/"+name]; e != nil {
		return e.tdb
	}
	return nil
}

// TDBs returns the snapshot's budgets as simulated so far, sorted by
// namespace and name.
func (s *Snapshot) TDBs() []*policyv1alpha1.TopologyDisruptionBudget {
	keys := make([]string, 0, len(s.tdbs))
	for k := range s.tdbs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*policyv1alpha1.TopologyDisruptionBudget, len(keys))
	for i, k := range keys {
		out[i] = s.tdbs[k].tdb
	}
	return out
}

func (s *Snapshot) node(name string) *corev1.Node { return s.Nodes[name] }

func noGoneNodes(string) (map[string]string, bool) { return nil, false }

// Decide is the answer one eviction of pod would get now, from every
// TopologyDisruptionBudget (as the webhook decides) and PodDisruptionBudget
// (as the API server decides) covering it. The webhook stops at the first
// refusal; Decide lists them all.
func (s *Snapshot) Decide(pod *corev1.Pod) Verdict {
	v := Verdict{charges: map[string]*policyv1alpha1.TopologyDisruptionBudgetStatus{}}
	q := budget.PodEviction{Pod: pod, Now: s.Now, All: true}
	var keys []string
	notEnforced := false
	for _, k := range s.tdbsByNS[pod.Namespace] {
		e := s.tdbs[k]
		place, err := e.cv.Place(e.tdb, pod, s.node, noGoneNodes)
		if !place.Covered {
			continue
		}
		ref := tdbRef(e.tdb, place.Domain)
		v.Budgets = append(v.Budgets, ref)
		if ref.NotEnforced {
			// The webhook is never asked: shown, refusing nothing.
			notEnforced = true
			continue
		}
		keys = append(keys, k)
		q.Covering = append(q.Covering, budget.Covering{Budget: e.tdb, Domain: place.Domain, NodeGone: place.NodeGone, PlaceErr: err})
	}
	for _, k := range s.pdbsByNS[pod.Namespace] {
		p := s.pdbs[k]
		q.PDBs = append(q.PDBs, *p)
		if sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector); err == nil && sel.Matches(labels.Set(pod.Labels)) {
			v.Budgets = append(v.Budgets, BudgetRef{Kind: KindPDB, Namespace: p.Namespace, Name: p.Name,
				Healthy: p.Status.CurrentHealthy, Desired: p.Status.DesiredHealthy, Expected: p.Status.ExpectedPods, Allowed: p.Status.DisruptionsAllowed})
		}
	}
	bv := budget.Decide(q)
	v.Allowed, v.Reason = bv.Allowed, bv.Reason
	if v.Allowed && v.Reason == budget.DecisionNotCovered && notEnforced {
		v.Reason = budget.DecisionNotEnforced
	}
	for _, r := range bv.Refusals {
		v.Blocks = append(v.Blocks, s.block(pod, q, r))
	}
	for i, d := range bv.Decisions {
		if d.Status != nil {
			v.charges[keys[i]] = d.Status
		}
	}
	if bv.PDBCharged {
		v.pdbCharged = pod.Namespace + "/" + bv.PDB
	}
	return v
}

// block is one refusal as kubectl-tdb shows it, with its hint.
func (s *Snapshot) block(pod *corev1.Pod, q budget.PodEviction, r budget.Refusal) Block {
	if r.Budget >= 0 {
		c := q.Covering[r.Budget]
		return Block{Kind: KindTDB, Namespace: c.Budget.Namespace, Name: c.Budget.Name, Domain: c.Domain,
			Message: r.Decision.Message, Reason: string(r.Decision.Reason), Hint: tdbHint(c.Budget, c.Domain, r.Decision.Reason, pod)}
	}
	b := Block{Kind: KindPDB, Namespace: pod.Namespace, Name: r.PDB.PDB, Message: r.PDB.Message, Reason: string(ReasonPDB)}
	if r.PDB.PDB != "" {
		b.Hint = pdbHint(s.pdbs[pod.Namespace+"/"+r.PDB.PDB], r.PDB.Code, pod)
		return b
	}
	var names []string
	for _, p := range q.PDBs {
		if sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector); err == nil && sel.Matches(labels.Set(pod.Labels)) {
			names = append(names, p.Name)
		}
	}
	b.Name = joinNames(names)
	b.Hint = "remove all but one of these PodDisruptionBudgets: the eviction API refuses a pod covered by several"
	return b
}

// Apply records an allowed eviction in the snapshot, as the webhook records
// its charges and the API server decrements the PDB it checked: later
// decisions on s see the allowances it spent. A refused verdict changes
// nothing.
func (s *Snapshot) Apply(v Verdict) {
	if !v.Allowed {
		return
	}
	for k, st := range v.charges {
		e := *s.tdbs[k]
		t := e.tdb.DeepCopy()
		t.Status = *st
		e.tdb = t
		s.tdbs[k] = &e
	}
	if v.pdbCharged != "" {
		// As the API server's checkAndDecrement: the allowance goes down,
		// currentHealthy waits for the disruption controller.
		p := s.pdbs[v.pdbCharged].DeepCopy()
		p.Status.DisruptionsAllowed--
		s.pdbs[v.pdbCharged] = p
	}
}

func tdbRef(t *policyv1alpha1.TopologyDisruptionBudget, domain string) BudgetRef {
	ref := BudgetRef{Kind: KindTDB, Namespace: t.Namespace, Name: t.Name, Domain: domain}
	for _, d := range t.Status.Domains {
		if d.Name == domain {
			ref.Healthy, ref.Desired, ref.Expected, ref.Allowed = d.CurrentHealthy, d.DesiredHealthy, d.ExpectedPods, d.DisruptionsAllowed
		}
	}
	if c := apimeta.FindStatusCondition(t.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed); c != nil && c.Reason == policyv1alpha1.ReasonNotEnforced {
		ref.NotEnforced = true
	}
	ref.Enforcement, _ = EnforcementWarning(t)
	return ref
}

// EnforcementWarning is the reason and message of t's Enforced condition
// when the webhook decides t's evictions but may let some through
// unchecked (PartiallyEnforced, FailsOpen); "" otherwise. NotEnforced is
// the DisruptionAllowed condition's reason, shown as such.
func EnforcementWarning(t *policyv1alpha1.TopologyDisruptionBudget) (reason, message string) {
	c := apimeta.FindStatusCondition(t.Status.Conditions, policyv1alpha1.ConditionEnforced)
	if c == nil || c.Status != metav1.ConditionFalse {
		return "", ""
	}
	switch c.Reason {
	case policyv1alpha1.ReasonPartiallyEnforced, policyv1alpha1.ReasonFailsOpen:
		return c.Reason, c.Message
	}
	return "", ""
}

// tdbHint says what would change a TDB's refusal.
func tdbHint(t *policyv1alpha1.TopologyDisruptionBudget, domain string, reason budget.Reason, pod *corev1.Pod) string {
	var row *policyv1alpha1.DomainStatus
	for i := range t.Status.Domains {
		if t.Status.Domains[i].Name == domain {
			row = &t.Status.Domains[i]
		}
	}
	inFlight := 0
	for _, r := range t.Status.DisruptedPods {
		if r.Domain == domain {
			inFlight++
		}
	}
	where := domain
	if t.Spec.TopologyKey == "" || where == "" {
		where = "the budget"
	}
	switch reason {
	case budget.DecisionInsufficientPods:
		if row == nil {
			break
		}
		need := readyNeeded(row.CurrentHealthy, row.DesiredHealthy, pod, t.Spec.UnhealthyPodEvictionPolicy != policyv1alpha1.AlwaysAllow)
		h := fmt.Sprintf("%s needs %d more Ready pod(s) (%d healthy, keeps %d)", where, need, row.CurrentHealthy, row.DesiredHealthy)
		if row.WarmingUp > 0 {
			h += fmt.Sprintf("; %d Ready pod(s) there count once Ready for minReadySeconds", row.WarmingUp)
		}
		if inFlight > 0 {
			h += fmt.Sprintf("; %d granted eviction(s) there are still being accounted for", inFlight)
		}
		return h
	case budget.DecisionMaxDisruptedDomains:
		var others []string
		for _, d := range t.Status.Domains {
			if d.Name != domain && d.CurrentHealthy < d.ExpectedPods {
				others = append(others, d.Name)
			}
		}
		return fmt.Sprintf("waiting for %s to recover (every expected pod Ready): maxDisruptedDomains is %d", joinNames(others), *t.Spec.MaxDisruptedDomains)
	case budget.DecisionStaleStatus, budget.DecisionUnknownDomain:
		return "the operator has not caught up with the budget or the pod yet: retry in a moment"
	case budget.DecisionTooManyRecords:
		return "wait for the granted evictions to be accounted for"
	case budget.DecisionNodeGone:
		return "the pod's node is gone: wait for the pod to be removed, or delete it"
	case budget.DecisionBlocked:
		if c := apimeta.FindStatusCondition(t.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed); c != nil && c.Status == metav1.ConditionFalse {
			return fmt.Sprintf("the budget allows nothing until its %s condition clears: %s", c.Reason, c.Message)
		}
		return "fix the budget's spec or the node's topology label (kubectl describe tdb)"
	}
	return ""
}

// pdbHint says what would change a PDB's refusal.
func pdbHint(p *policyv1.PodDisruptionBudget, code int32, pod *corev1.Pod) string {
	switch {
	case p == nil:
		return ""
	case code != http.StatusTooManyRequests:
		return "the PodDisruptionBudget's status is broken: see kubectl describe pdb"
	case p.Status.ObservedGeneration < p.Generation:
		return "the disruption controller has not processed the PodDisruptionBudget's spec yet: retry in a moment"
	}
	need := readyNeeded(p.Status.CurrentHealthy, p.Status.DesiredHealthy, pod, true)
	return fmt.Sprintf("PodDisruptionBudget %s needs %d more healthy pod(s) (%d healthy, keeps %d)", p.Name, need, p.Status.CurrentHealthy, p.Status.DesiredHealthy)
}

// readyNeeded is how many more Ready pods would let the pod's eviction
// through: one beyond desired for a Ready pod, which needs an allowance; as
// many as desired for a not-Ready pod under IfHealthyBudget, which passes
// without one while the budget keeps its healthy pods.
func readyNeeded(healthy, desired int32, pod *corev1.Pod, ifHealthy bool) int32 {
	if ifHealthy && !budget.IsHealthy(pod) && desired > 0 {
		return max(desired-healthy, 1)
	}
	return desired - healthy + 1
}

func joinNames(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	out := names[0]
	for _, n := range names[1:] {
		out += ", " + n
	}
	return out
}
