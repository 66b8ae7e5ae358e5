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
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// fuzzBytes reads a fuzz input one decision at a time; past its end every
// decision is 0, so any input, even empty, decodes to a world.
type fuzzBytes struct {
	b []byte
	i int
}

func (r *fuzzBytes) intn(n int) int {
	if n <= 0 {
		return 0
	}
	if r.i >= len(r.b) {
		return 0
	}
	v := r.b[r.i]
	r.i++
	return int(v) % n
}

// fuzzWorld is a small random world decoded from fuzz bytes: 1-4 zones, a
// few nodes (some without the zone label), 0-3 scale-bearing owners (two
// ReplicaSets may share one), pods Ready, not Ready, deleting, unscheduled,
// terminal, on unknown nodes, outside the namespace or selector, and some
// eviction records of existing, replaced and gone pods. Only values the API
// admits are generated.
func decodeWorld(data []byte) Input {
	r := &fuzzBytes{b: data}

	zones := 1 + r.intn(4)
	nNodes := 1 + r.intn(6)
	var nodes []*builders.NodeWrapper
	for i := range nNodes {
		n := node("n"+strconv.Itoa(i)).Label("rack", strconv.Itoa(r.intn(10)))
		if r.intn(8) != 0 {
			n.Zone("zone-" + strconv.Itoa(r.intn(zones)))
		}
		nodes = append(nodes, n)
	}

	b := tdb("web")
	zoned := r.intn(4) != 0
	if zoned {
		b.TopologyKey(zoneKey)
	}
	switch r.intn(8) {
	case 0:
		b.NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{expr(zoneKey, "NotIn", "zone-0")}})
	case 1:
		b.NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{expr("rack", "Gt", "4")}})
	case 2:
		b.NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{nameIs("NotIn", "n0", "n1")}})
	case 3:
		b.NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{})
	}
	switch r.intn(4) {
	case 0:
		b.MaxUnavailable(intstr.FromInt32(int32(r.intn(5))))
	case 1:
		b.MaxUnavailable(intstr.FromString(strconv.Itoa(r.intn(21)*5) + "%"))
	case 2:
		b.MinAvailable(intstr.FromInt32(int32(r.intn(6))))
	default:
		b.MinAvailable(intstr.FromString(strconv.Itoa(r.intn(101)) + "%"))
	}
	if m := r.intn(4); m > 0 && zoned {
		b.MaxDisruptedDomains(int32(m))
	}

	// Owners: controller k resolves to owner k, or to owner k-1 (two
	// ReplicaSets of one Deployment).
	nOwners := r.intn(4)
	ownerMap := map[types.UID]Owner{}
	var ctrls []types.UID
	for k := range nOwners {
		ctrl := types.UID("rs" + strconv.Itoa(k))
		o := owner(types.UID("o"+strconv.Itoa(k)), int32(r.intn(8)))
		if k > 0 && r.intn(4) == 0 {
			o = ownerMap[ctrls[k-1]]
		}
		ownerMap[ctrl] = o
		ctrls = append(ctrls, ctrl)
	}

	nPods := r.intn(20)
	var ps []*builders.PodWrapper
	for i := range nPods {
		p := pod("p" + strconv.Itoa(i))
		switch c := r.intn(nOwners + 3); {
		case c < nOwners:
			p.ControlledBy(replicaSet(ctrls[c]))
		case c == nOwners && r.intn(4) == 0:
			p.ControlledBy(replicaSet("rs-unknown"))
		}
		switch at := r.intn(nNodes + 3); {
		case at < nNodes:
			p.OnNode("n" + strconv.Itoa(at))
		case at == nNodes:
			p.Pending()
		case at == nNodes+1 && r.intn(3) == 0:
			p.OnNode("ghost")
		default:
			p.OnNode("n0")
		}
		if p.Obj().Status.Phase == corev1.PodRunning {
			switch r.intn(12) {
			case 0, 1:
				p.NotReady()
			case 2:
				p.Ready().Deleting(t0)
			case 3:
				p.Phase(corev1.PodSucceeded)
			case 4:
				p.Phase(corev1.PodFailed)
			case 5:
				p.Ready().Phase(corev1.PodUnknown)
			default:
				p.Ready()
			}
		}
		switch r.intn(24) {
		case 0:
			p.Namespace("other")
		case 1:
			p.Labels(map[string]string{"app": "db"})
		}
		ps = append(ps, p)
	}

	var recs []policyv1alpha1.DisruptedPod
	seen := map[string]bool{}
	for range r.intn(6) {
		var rec policyv1alpha1.DisruptedPod
		n := r.intn(nPods + 3)
		name := "gone" + strconv.Itoa(n)
		if n < nPods {
			name = "p" + strconv.Itoa(n)
		}
		domain := AllDomain
		if zoned {
			domain = "zone-" + strconv.Itoa(r.intn(zones))
		}
		var ctrl types.UID
		if c := r.intn(nOwners + 1); c < nOwners {
			ctrl = ctrls[c]
		}
		rec = record(name, domain, ctrl, at(-time.Duration(r.intn(240))*time.Second))
		if r.intn(4) == 0 {
			rec.UID = "uid-old"
		}
		if !seen[rec.Name] {
			seen[rec.Name] = true
			recs = append(recs, rec)
		}
	}
	// Read last, so that the worlds above decode as before: partitions
	// (domains from the pods, their StatefulSets' missing pods placed by
	// name) and a readiness delay.
	if r.intn(4) == 0 {
		partitionWorld(r, b, ps, recs, ownerMap)
	}
	if r.intn(3) == 0 {
		b.MinReadySeconds(int32(r.intn(20)))
		for _, p := range ps {
			if isReady(p.Obj()) {
				p.ReadySince(at(-time.Duration(r.intn(30)) * time.Second))
			}
		}
	}
	b.DisruptedPods(recs...)

	return Input{Budget: b.Obj(), Pods: pods(ps...), Nodes: nodeLookup(nodes...), Owners: ownerMap, Now: t0}
}

// partitionWorld turns a decoded world into one whose domains come from the
// pods: a label "part" (0-2, some pods without it), or the last digit of
// the name (0-2; pods whose name ends otherwise have none) with every
// owner a StatefulSet named "p", whose missing pods p-0.. are placed by
// name. The records name partitions.
func partitionWorld(r *fuzzBytes, b *builders.BudgetWrapper, ps []*builders.PodWrapper, recs []policyv1alpha1.DisruptedPod, owners map[types.UID]Owner) {
	spec := b.Obj().Spec
	spec.TopologyKey, spec.NodeSelectorTerm = "", nil
	b.Spec(spec)
	if r.intn(2) == 0 {
		b.Partition(policyv1alpha1.PartitionSource{Label: "part"})
		for _, p := range ps {
			if v := r.intn(4); v < 3 {
				p.Label("part", strconv.Itoa(v))
			}
		}
	} else {
		b.PartitionByName(`p-?[0-9]*([0-2])`)
		for k, o := range owners {
			o.Kind, o.Name, o.OrdinalStart = "StatefulSet", "p", new(int32)
			owners[k] = o
		}
	}
	for i := range recs {
		recs[i].Domain = strconv.Itoa(r.intn(3))
	}
}

// describe prints a decoded world for a failure report.
func describe(in Input) string {
	var desc strings.Builder
	fmt.Fprintf(&desc, "spec %+v\nmaxUnavailable %v minAvailable %v maxDisruptedDomains %v term %+v\nowners %v\nrecords %+v\n",
		in.Budget.Spec, in.Budget.Spec.MaxUnavailable, in.Budget.Spec.MinAvailable, derefInt32(in.Budget.Spec.MaxDisruptedDomains),
		in.Budget.Spec.NodeSelectorTerm, in.Owners, in.Budget.Status.DisruptedPods)
	for _, p := range in.Pods {
		ctrl := ""
		if ref := p.OwnerReferences; len(ref) > 0 {
			ctrl = string(ref[0].UID)
		}
		fmt.Fprintf(&desc, "pod %s/%s uid=%s node=%q phase=%s ready=%v deleting=%v ctrl=%s\n", p.Namespace, p.Name, p.UID,
			p.Spec.NodeName, p.Status.Phase, isReady(p), p.DeletionTimestamp != nil, ctrl)
	}
	for i := range 6 { // decodeWorld names its nodes n0..n5
		if n := in.Nodes("n" + strconv.Itoa(i)); n != nil {
			fmt.Fprintf(&desc, "node %s %v\n", n.Name, n.Labels)
		}
	}
	return desc.String()
}

func derefInt32(p *int32) any {
	if p == nil {
		return nil
	}
	return *p
}

// refDesired is desiredHealthy written out from the API's definition, for
// the values decodeWorld generates.
func refDesired(spec *policyv1alpha1.TopologyDisruptionBudgetSpec, expected int32) int32 {
	resolve := func(v *intstr.IntOrString) int32 {
		if v.Type == intstr.Int {
			return v.IntVal
		}
		pct, _ := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
		return (int32(pct)*expected + 99) / 100
	}
	if spec.MaxUnavailable != nil {
		return max(0, expected-resolve(spec.MaxUnavailable))
	}
	return resolve(spec.MinAvailable)
}

// checkResult asserts the invariants of one Compute result.
func checkResult(t *testing.T, in Input, res Result) {
	t.Helper()
	spec := &in.Budget.Spec
	reason, _ := res.Blocked()
	var sumE, sumH, sumA int32
	disrupted := 0
	for _, d := range res.Domains {
		if d.CurrentHealthy < d.ExpectedPods {
			disrupted++
		}
	}
	for i, d := range res.Domains {
		// (5) domains sorted by name and unique.
		if i > 0 && res.Domains[i-1].Name >= d.Name {
			t.Errorf("domains not sorted and unique: %q then %q", res.Domains[i-1].Name, d.Name)
		}
		// (1) nothing negative.
		if d.ExpectedPods < 0 || d.CurrentHealthy < 0 || d.DesiredHealthy < 0 || d.DisruptionsAllowed < 0 {
			t.Errorf("domain %s has a negative number: %+v", d.Name, d)
		}
		// (2) the allowance is exactly the budget's formula, never more.
		if want := refDesired(spec, d.ExpectedPods); d.DesiredHealthy != want {
			t.Errorf("domain %s: desiredHealthy = %d, want %d for %d expected", d.Name, d.DesiredHealthy, want, d.ExpectedPods)
		}
		want := int32(0)
		if d.ExpectedPods > 0 && d.CurrentHealthy > d.DesiredHealthy {
			want = d.CurrentHealthy - d.DesiredHealthy
		}
		others := disrupted
		if d.CurrentHealthy < d.ExpectedPods {
			others--
		}
		if reason != "" || (spec.MaxDisruptedDomains != nil && int32(others) >= *spec.MaxDisruptedDomains) {
			want = 0
		}
		if d.DisruptionsAllowed != want {
			t.Errorf("domain %s: disruptionsAllowed = %d, want %d (%+v, blocked %q, %d other domains disrupted)",
				d.Name, d.DisruptionsAllowed, want, d, reason, others)
		}
		if d.DisruptionsAllowed > 0 {
			if d.DisruptionsAllowed > d.CurrentHealthy-d.DesiredHealthy {
				t.Errorf("domain %s allows %d > currentHealthy - desiredHealthy", d.Name, d.DisruptionsAllowed)
			}
			if mu := spec.MaxUnavailable; mu != nil && mu.Type == intstr.Int &&
				d.DisruptionsAllowed > mu.IntVal-(d.ExpectedPods-d.CurrentHealthy) {
				t.Errorf("domain %s allows %d with %d unavailable of maxUnavailable %d", d.Name, d.DisruptionsAllowed,
					d.ExpectedPods-d.CurrentHealthy, mu.IntVal)
			}
		}
		sumE += d.ExpectedPods
		sumH += d.CurrentHealthy
		sumA += d.DisruptionsAllowed
	}
	// (4) totals are the sums; the allowance is what could be granted
	// together, no more than the sum, and the sum without
	// maxDisruptedDomains.
	together := AllowedTogether(spec, res.Domains)
	if spec.MaxDisruptedDomains == nil && together != sumA {
		t.Errorf("without maxDisruptedDomains, allowed together %d, sum of domains %d", together, sumA)
	}
	if sumE != res.ExpectedPods || sumH != res.CurrentHealthy || together != res.DisruptionsAllowed || together > sumA {
		t.Errorf("totals %d/%d/%d, sums of domains %d/%d/%d, together %d", res.ExpectedPods, res.CurrentHealthy, res.DisruptionsAllowed, sumE, sumH, sumA, together)
	}
	// Records kept are input records, sorted, unique, and none expired.
	inRecs := map[string]policyv1alpha1.DisruptedPod{}
	for _, r := range in.Budget.Status.DisruptedPods {
		inRecs[r.Name] = r
	}
	expired := map[string]bool{}
	for _, e := range res.ExpiredRecords {
		expired[e.Pod] = true
	}
	for i, r := range res.DisruptedPods {
		if i > 0 && res.DisruptedPods[i-1].Name >= r.Name {
			t.Errorf("records not sorted and unique: %q then %q", res.DisruptedPods[i-1].Name, r.Name)
		}
		if diff := cmp.Diff(inRecs[r.Name], r); diff != "" {
			t.Errorf("kept record %s differs from the input (-input +kept):\n%s", r.Name, diff)
		}
		if expired[r.Name] {
			t.Errorf("record %s both kept and expired", r.Name)
		}
	}
}

// FuzzCompute checks the invariants of Compute and of the eviction ledger
// over random small worlds:
//
//  1. no number is negative;
//  2. each domain's allowance is exactly max(0, currentHealthy -
//     desiredHealthy) (0 when nothing is expected, when the budget is
//     blocked, or when maxDisruptedDomains other domains are disrupted),
//     with desiredHealthy from the API's definition, so it never exceeds
//     currentHealthy - desiredHealthy nor, for an integer maxUnavailable k,
//     k - (expected - healthy);
//  3. one more missing pod (one owner's scale + 1) never lowers a domain's
//     expected pods and never raises a domain's allowance nor the total,
//     except in a domain that expected nothing (see checkMoreMissing);
//  4. totals are the sums of the domains;
//  5. domains are sorted by name and unique;
//  6. Compute never panics;
//  7. evicting every pod in turn through DecideEviction, writing back each
//     status, charges no domain more than its allowance, and leaves a
//     ledger equal to what Compute gives over the records.
func FuzzCompute(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{2, 3, 0, 1, 1, 1, 2, 1, 3, 1, 4, 1, 1, 9, 0, 1, 1, 3, 9, 0, 3, 0, 5, 0, 1, 0, 0, 0, 2, 3, 5},
		{3, 5, 1, 0, 1, 1, 1, 2, 2, 3, 3, 0, 0, 1, 5, 7, 2, 1, 0, 3, 3, 2, 4, 12, 0, 0, 6, 1, 1, 6, 2, 3, 0, 6, 2, 8, 0, 1, 7, 9},
		{1, 2, 0, 0, 0, 0, 5, 0, 1, 4, 1, 1, 2, 2, 3, 4, 8, 0, 0, 0, 1, 0, 0, 1, 0, 0, 2, 0, 0, 2, 2, 0, 1, 1, 30, 0, 0},
		{3, 3, 7, 0, 7, 1, 7, 2, 7, 3, 2, 7, 1, 10, 1, 2, 5, 1, 3, 0, 2, 18, 1, 0, 4, 0, 2, 1, 7, 0, 0, 3, 1, 2, 0, 9, 9, 9},
		[]byte("a world from ascii bytes with many pods and records to decode"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in := decodeWorld(data)
		res := Compute(in)
		checkResult(t, in, res)
		if t.Failed() {
			t.Logf("world:\n%s", describe(in))
			return
		}

		// (3) one more missing pod never raises an allowance.
		seen := map[types.UID]bool{}
		for _, o := range in.Owners {
			if seen[o.UID] {
				continue
			}
			seen[o.UID] = true
			raised := in
			raised.Owners = map[types.UID]Owner{}
			for ctrl, o2 := range in.Owners {
				if o2.UID == o.UID {
					o2.Replicas++
				}
				raised.Owners[ctrl] = o2
			}
			more := Compute(raised)
			checkResult(t, raised, more)
			checkMoreMissing(t, o, res, more)
		}

		// (7) the ledger.
		checkLedger(t, in, res)

		// (8) the spec changed since the records of gone pods were
		// charged.
		checkRecordsOfAnotherSpec(t, in)
		if t.Failed() {
			t.Logf("world:\n%s", describe(in))
		}
	})
}

// checkRecordsOfAnotherSpec marks every record as charged under another
// spec (topologyKey or nodeSelectorTerm changed since) and checks that they
// open no row and raise no allowance: the result is never looser than the
// same world without them (a record of a running pod still keeps it from
// counting healthy, stricter; one of a pod being deleted or gone explains
// nothing the pod itself would not).
func checkRecordsOfAnotherSpec(t *testing.T, in Input) {
	t.Helper()
	if len(in.Budget.Status.DisruptedPods) == 0 {
		return
	}
	stale, without := in, in
	stale.Budget, without.Budget = in.Budget.DeepCopy(), in.Budget.DeepCopy()
	without.Budget.Status.DisruptedPods = nil
	for i := range stale.Budget.Status.DisruptedPods {
		stale.Budget.Status.DisruptedPods[i].DomainSpec = "another spec"
	}
	got, want := Compute(stale), Compute(without)
	checkResult(t, stale, got)
	rows := func(r Result) map[string]policyv1alpha1.DomainStatus {
		m := map[string]policyv1alpha1.DomainStatus{}
		for _, d := range r.Domains {
			m[d.Name] = d
		}
		return m
	}
	g, w := rows(got), rows(want)
	for name, d := range g {
		wd, ok := w[name]
		if !ok {
			t.Errorf("a record of another spec opened row %s: %+v", name, d)
			continue
		}
		// As in invariant 3, a domain that expected nothing allows nothing,
		// and once a missing pod counts there (the record's controller,
		// known by the record alone, misses a pod of unknown place) its
		// numbers decide: that is the budget's formula, not a record's
		// domain loosening it.
		if d.DisruptionsAllowed > wd.DisruptionsAllowed && wd.ExpectedPods > 0 {
			t.Errorf("domain %s allows %d with records of another spec, %d without them", name, d.DisruptionsAllowed, wd.DisruptionsAllowed)
		}
	}
	if got.DisruptionsAllowed > want.DisruptionsAllowed && !expectedNothing(w) {
		t.Errorf("%d allowed with records of another spec, %d without them", got.DisruptionsAllowed, want.DisruptionsAllowed)
	}
}

// expectedNothing says whether some domain expects no pod (see invariant
// 3's exception).
func expectedNothing(rows map[string]policyv1alpha1.DomainStatus) bool {
	for _, d := range rows {
		if d.ExpectedPods == 0 {
			return true
		}
	}
	return false
}

// checkMoreMissing compares a result with the result after owner o's scale
// grew by one. Expected pods only grow; allowances only shrink, except in a
// domain that expected nothing before, where policy/v1's rule "nothing
// expected, nothing allowed" held the allowance at 0 (a scale-down leaves
// pods of a controller whose scale is already 0).
func checkMoreMissing(t *testing.T, o Owner, before, after Result) {
	t.Helper()
	rows := map[string]policyv1alpha1.DomainStatus{}
	for _, d := range after.Domains {
		rows[d.Name] = d
	}
	exempt := int32(0)
	for _, b := range before.Domains {
		a, ok := rows[b.Name]
		if !ok {
			t.Errorf("owner %s scale %d -> %d: domain %s disappeared", o.UID, o.Replicas, o.Replicas+1, b.Name)
			continue
		}
		delete(rows, b.Name)
		if a.ExpectedPods < b.ExpectedPods {
			t.Errorf("owner %s scale %d -> %d: domain %s expects %d, was %d", o.UID, o.Replicas, o.Replicas+1, b.Name, a.ExpectedPods, b.ExpectedPods)
		}
		if b.ExpectedPods == 0 {
			exempt += a.DisruptionsAllowed
			continue
		}
		if a.DisruptionsAllowed > b.DisruptionsAllowed {
			t.Errorf("owner %s scale %d -> %d: domain %s allows %d, was %d (%+v -> %+v)",
				o.UID, o.Replicas, o.Replicas+1, b.Name, a.DisruptionsAllowed, b.DisruptionsAllowed, b, a)
		}
	}
	for name, a := range rows {
		if a.DisruptionsAllowed != 0 {
			t.Errorf("owner %s scale %d -> %d: new domain %s allows %d", o.UID, o.Replicas, o.Replicas+1, name, a.DisruptionsAllowed)
		}
	}
	if after.DisruptionsAllowed > before.DisruptionsAllowed+exempt {
		t.Errorf("owner %s scale %d -> %d: total allowed %d, was %d", o.UID, o.Replicas, o.Replicas+1, after.DisruptionsAllowed, before.DisruptionsAllowed)
	}
}

// checkLedger evicts every pod in turn against the status of res, writing
// back each decision's status, as the webhook does.
func checkLedger(t *testing.T, in Input, res Result) {
	t.Helper()
	b := in.Budget.DeepCopy()
	b.Status = statusFrom(b, res)
	allowed := map[string]int32{}
	for _, d := range res.Domains {
		allowed[d.Name] = d.DisruptionsAllowed
	}
	charged := map[string]int32{}
	replaced, chargedUnhealthy := false, false
	for i, p := range in.Pods {
		place, err := Place(b, p, in.Nodes, nil)
		if !place.Covered || err != nil {
			continue
		}
		domain, gone := place.Domain, place.NodeGone
		for _, r := range b.Status.DisruptedPods {
			if r.Name == p.Name && r.UID != p.UID {
				replaced = true
			}
		}
		d := DecideEviction(b, EvictionRequest{Pod: p, Domain: domain, Now: in.Now, NodeGone: gone})
		if d.Allowed && d.Reason == DecisionCharged {
			minReady := time.Duration(b.Spec.MinReadySeconds) * time.Second
			chargedUnhealthy = chargedUnhealthy || !IsAvailable(p, minReady, in.Now) || gone
			charged[domain]++
			if charged[domain] > allowed[domain] {
				t.Errorf("eviction %d of %s: domain %s charged %d times, allowed %d", i, p.Name, domain, charged[domain], allowed[domain])
			}
		}
		if d.Status != nil {
			b.Status = *d.Status
		}
		for _, r := range b.Status.Domains {
			if r.CurrentHealthy < 0 || r.DisruptionsAllowed < 0 {
				t.Errorf("eviction %d of %s: ledger row %+v negative", i, p.Name, r)
			}
		}
	}
	if replaced {
		// A charge replaced the record of an earlier pod of the same name,
		// which may have explained a missing pod: the ledger is then more
		// conservative than a recomputation, not equal to it.
		return
	}
	again := in
	again.Budget = b
	recomputed := Compute(again)
	ledger := b.Status.Domains
	if chargedUnhealthy {
		// As in policy/v1, evicting a not-Ready pod under IfHealthyBudget
		// with desiredHealthy 0 takes an allowance, but the pod was never
		// healthy (nor is one whose node is gone, nor a Ready one within
		// minReadySeconds, which needs an allowance as core's PDBs decide
		// it): the recomputation gives that allowance back. The ledger
		// may allow less than the recomputation, never more.
		ledger = append([]policyv1alpha1.DomainStatus(nil), ledger...)
		for i := range ledger {
			if j := findDomain(recomputed.Domains, ledger[i].Name); j != nil && ledger[i].DisruptionsAllowed <= j.DisruptionsAllowed {
				ledger[i].DisruptionsAllowed = j.DisruptionsAllowed
			}
		}
	}
	if diff := cmp.Diff(recomputed.Domains, ledger, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("ledger differs from Compute over its records (-compute +ledger):\n%s", diff)
	}
	if recomputed.CurrentHealthy != b.Status.CurrentHealthy {
		t.Errorf("ledger currentHealthy %d, Compute over its records %d", b.Status.CurrentHealthy, recomputed.CurrentHealthy)
	}
	if !chargedUnhealthy && recomputed.DisruptionsAllowed != b.Status.DisruptionsAllowed {
		t.Errorf("ledger disruptionsAllowed %d, Compute over its records %d", b.Status.DisruptionsAllowed, recomputed.DisruptionsAllowed)
	}
}
