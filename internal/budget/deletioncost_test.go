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
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

type scaleDownPodBuilder struct{ p ScaleDownPod }

// rsPod is a Ready pod of the ReplicaSet in domain, created at t0.
func rsPod(name, domain string) *scaleDownPodBuilder {
	return &scaleDownPodBuilder{p: ScaleDownPod{Name: name, Domain: domain, Ready: true, Created: t0}}
}

func (b *scaleDownPodBuilder) notReady() *scaleDownPodBuilder { b.p.Ready = false; return b }

func (b *scaleDownPodBuilder) deleting() *scaleDownPodBuilder { b.p.Deleting = true; return b }

func (b *scaleDownPodBuilder) createdAt(d time.Duration) *scaleDownPodBuilder {
	b.p.Created = at(d)
	return b
}

func scaleDownPods(bs ...*scaleDownPodBuilder) []ScaleDownPod {
	out := make([]ScaleDownPod, 0, len(bs))
	for _, b := range bs {
		out = append(out, b.p)
	}
	return out
}

// spreadOf returns, for each "domain=n", n Ready pods "<domain>-<j>", pod j
// created j minutes after t0 (the highest j is the newest).
func spreadOf(counts ...string) []*scaleDownPodBuilder {
	var out []*scaleDownPodBuilder
	for _, c := range counts {
		var d string
		var n int
		if _, err := fmt.Sscanf(c, "%s %d", &d, &n); err != nil {
			panic(err)
		}
		for j := range n {
			out = append(out, rsPod(fmt.Sprintf("%s-%d", d, j), d).createdAt(time.Duration(j)*time.Minute))
		}
	}
	return out
}

// spreadCosts is what spreadOf's pods of one domain cost above base: the
// newest, removed first, costs base-n.
func spreadCosts(into map[string]int32, domain string, n int, base int32) map[string]int32 {
	for j := range n {
		into[fmt.Sprintf("%s-%d", domain, j)] = base - int32(j+1)
	}
	return into
}

func costs(parts ...func(map[string]int32) map[string]int32) map[string]int32 {
	m := map[string]int32{}
	for _, p := range parts {
		m = p(m)
	}
	return m
}

func domainCosts(domain string, n int, base int32) func(map[string]int32) map[string]int32 {
	return func(m map[string]int32) map[string]int32 { return spreadCosts(m, domain, n, base) }
}

// spec is a zoned budget allowing one unavailable pod per domain, with a
// rollout of the given strategy and domain order ("" strategy: none set).
func spec(strategy policyv1alpha1.RolloutStrategyType, order ...string) *policyv1alpha1.TopologyDisruptionBudgetSpec {
	s := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")).Obj().Spec
	s.Rollout = &policyv1alpha1.RolloutSpec{Strategy: strategy, DomainOrder: order}
	return &s
}

// healthyRows are status rows of domains whose n pods are all healthy under
// maxUnavailable 1.
func healthyRows(counts map[string]int32) []policyv1alpha1.DomainStatus {
	var out []policyv1alpha1.DomainStatus
	for _, d := range sortedKeys(counts) {
		n := counts[d]
		out = append(out, row(d, n, n, n-1, 1))
	}
	return out
}

func TestDeletionCosts(t *testing.T) {
	even := healthyRows(map[string]int32{"zone-a": 3, "zone-b": 2, "zone-c": 1})
	cases := []struct {
		name string
		in   ScaleDownInput
		want map[string]int32
	}{
		{
			name: "spread: the newest pod of the largest domain costs least",
			in: ScaleDownInput{
				Spec: spec(policyv1alpha1.DomainByDomain), Domains: even,
				Pods: scaleDownPods(spreadOf("zone-a 3", "zone-b 2", "zone-c 1")...),
			},
			want: map[string]int32{
				"zone-a-2": -3, "zone-a-1": -2, "zone-a-0": -1,
				"zone-b-1": -2, "zone-b-0": -1,
				"zone-c-0": -1,
			},
		},
		{
			name: "within a domain: not Ready first, then newest, then by name",
			in: ScaleDownInput{
				Spec: spec(policyv1alpha1.DomainByDomain), Domains: healthyRows(map[string]int32{"zone-a": 4}),
				Pods: scaleDownPods(
					rsPod("old", "zone-a").createdAt(-time.Hour),
					rsPod("new-b", "zone-a"),
					rsPod("new-a", "zone-a"),
					rsPod("oldest-unready", "zone-a").createdAt(-2*time.Hour).notReady(),
				),
			},
			want: map[string]int32{"oldest-unready": -4, "new-a": -3, "new-b": -2, "old": -1},
		},
		{
			name: "a domain without allowance ranks after every domain with one, even when largest",
			in: ScaleDownInput{
				Spec: spec(policyv1alpha1.DomainByDomain),
				// zone-a also holds another owner's pod that is not Ready.
				Domains: []policyv1alpha1.DomainStatus{
					row("zone-a", 11, 10, 10, 0), row("zone-b", 8, 8, 7, 1), row("zone-c", 6, 6, 5, 1),
				},
				Pods: scaleDownPods(spreadOf("zone-a 10", "zone-b 8", "zone-c 6")...),
			},
			want: costs(domainCosts("zone-a", 10, ZeroAllowanceOffset), domainCosts("zone-b", 8, 0), domainCosts("zone-c", 6, 0)),
		},
		{
			name: "no domain with allowance: the spread alone, as if all had one",
			in: ScaleDownInput{
				Spec: spec(policyv1alpha1.DomainByDomain),
				// A missing pod of the owner counts against every domain.
				Domains: []policyv1alpha1.DomainStatus{
					row("zone-a", 4, 3, 3, 0), row("zone-b", 3, 2, 2, 0),
				},
				Pods: scaleDownPods(spreadOf("zone-a 3", "zone-b 2")...),
			},
			want: costs(domainCosts("zone-a", 3, 0), domainCosts("zone-b", 2, 0)),
		},
		{
			name: "a domain short only of this ReplicaSet's not-Ready pod keeps its rank",
			in: ScaleDownInput{
				Spec: spec(policyv1alpha1.DomainByDomain),
				Domains: []policyv1alpha1.DomainStatus{
					row("zone-a", 2, 2, 1, 1), row("zone-b", 3, 2, 2, 0),
				},
				Pods: scaleDownPods(append(spreadOf("zone-a 2", "zone-b 2"),
					rsPod("zone-b-new", "zone-b").createdAt(time.Hour).notReady())...),
			},
			want: costs(domainCosts("zone-a", 2, 0), domainCosts("zone-b", 2, 0),
				func(m map[string]int32) map[string]int32 { m["zone-b-new"] = -3; return m }),
		},
		{
			name: "a domain short only of the pod this ReplicaSet is deleting keeps its rank; that pod gets no cost",
			in: ScaleDownInput{
				Spec: spec(policyv1alpha1.DomainByDomain),
				// The last scale-down's pod still terminates in zone-a.
				Domains: []policyv1alpha1.DomainStatus{
					row("zone-a", 4, 3, 3, 0), row("zone-b", 2, 2, 1, 1),
				},
				Pods: scaleDownPods(append(spreadOf("zone-a 3", "zone-b 2"),
					rsPod("zone-a-leaving", "zone-a").createdAt(time.Hour).deleting())...),
			},
			want: costs(domainCosts("zone-a", 3, 0), domainCosts("zone-b", 2, 0)),
		},
		{
			name: "a domain short of another owner's deleting pod ranks last",
			in: ScaleDownInput{
				Spec: spec(policyv1alpha1.DomainByDomain),
				Domains: []policyv1alpha1.DomainStatus{
					row("zone-a", 4, 3, 3, 0), row("zone-b", 2, 2, 1, 1),
				},
				Pods: scaleDownPods(spreadOf("zone-a 3", "zone-b 2")...),
			},
			want: costs(domainCosts("zone-a", 3, ZeroAllowanceOffset), domainCosts("zone-b", 2, 0)),
		},
		{
			name: "minAvailable: the not-Ready pod's removal does not restore the allowance",
			in: ScaleDownInput{
				Spec: func() *policyv1alpha1.TopologyDisruptionBudgetSpec {
					s := spec(policyv1alpha1.DomainByDomain)
					v := intOrPct("2")
					s.MaxUnavailable, s.MinAvailable = nil, &v
					return s
				}(),
				Domains: []policyv1alpha1.DomainStatus{
					row("zone-a", 3, 3, 2, 1), row("zone-b", 3, 2, 2, 0),
				},
				Pods: scaleDownPods(append(spreadOf("zone-a 3", "zone-b 2"),
					rsPod("zone-b-new", "zone-b").createdAt(time.Hour).notReady())...),
			},
			want: costs(domainCosts("zone-a", 3, 0), domainCosts("zone-b", 2, ZeroAllowanceOffset),
				func(m map[string]int32) map[string]int32 { m["zone-b-new"] = ZeroAllowanceOffset - 3; return m }),
		},
		{
			name: "a domain without a status row allows nothing",
			in: ScaleDownInput{
				Spec:    spec(policyv1alpha1.DomainByDomain),
				Domains: healthyRows(map[string]int32{"zone-a": 2}),
				Pods:    scaleDownPods(spreadOf("zone-a 2", "zone-new 3")...),
			},
			want: costs(domainCosts("zone-a", 2, 0), domainCosts("zone-new", 3, ZeroAllowanceOffset)),
		},
		{
			name: "old ReplicaSet, DomainByDomain: listed domains first, then by name, over the budget's domains",
			in: ScaleDownInput{
				Spec:         spec(policyv1alpha1.DomainByDomain, "zone-c"),
				Domains:      healthyRows(map[string]int32{"zone-a": 3, "zone-b": 3, "zone-c": 3}),
				Pods:         scaleDownPods(spreadOf("zone-a 2", "zone-b 3")...),
				OldInRollout: true,
			},
			// Order zone-c, zone-a, zone-b: zone-c has no old pod left, so
			// zone-a's leave first.
			want: costs(domainCosts("zone-a", 2, DomainBand), domainCosts("zone-b", 3, 2*DomainBand)),
		},
		{
			name: "old ReplicaSet, no strategy set: the default DomainByDomain",
			in: ScaleDownInput{
				Spec:         spec(""),
				Domains:      healthyRows(map[string]int32{"zone-a": 1, "zone-b": 3}),
				Pods:         scaleDownPods(spreadOf("zone-a 1", "zone-b 3")...),
				OldInRollout: true,
			},
			want: costs(domainCosts("zone-a", 1, 0), domainCosts("zone-b", 3, DomainBand)),
		},
		{
			name: "old ReplicaSet, AllDomains: the spread",
			in: ScaleDownInput{
				Spec:         spec(policyv1alpha1.AllDomains, "zone-b"),
				Domains:      healthyRows(map[string]int32{"zone-a": 3, "zone-b": 2}),
				Pods:         scaleDownPods(spreadOf("zone-a 3", "zone-b 2")...),
				OldInRollout: true,
			},
			want: costs(domainCosts("zone-a", 3, 0), domainCosts("zone-b", 2, 0)),
		},
		{
			name: "new ReplicaSet during a DomainByDomain rollout: the spread",
			in: ScaleDownInput{
				Spec:    spec(policyv1alpha1.DomainByDomain, "zone-b"),
				Domains: healthyRows(map[string]int32{"zone-a": 3, "zone-b": 2}),
				Pods:    scaleDownPods(spreadOf("zone-a 3", "zone-b 2")...),
			},
			want: costs(domainCosts("zone-a", 3, 0), domainCosts("zone-b", 2, 0)),
		},
		{
			name: "old ReplicaSet: the domain order wins over a domain without allowance",
			in: ScaleDownInput{
				Spec: spec(policyv1alpha1.DomainByDomain),
				Domains: []policyv1alpha1.DomainStatus{
					row("zone-a", 3, 2, 2, 0), row("zone-b", 2, 2, 1, 1), row("zone-c", 2, 2, 1, 1),
				},
				Pods:         scaleDownPods(spreadOf("zone-a 2", "zone-b 2", "zone-c 2")...),
				OldInRollout: true,
			},
			want: costs(domainCosts("zone-a", 2, 0), domainCosts("zone-b", 2, DomainBand),
				domainCosts("zone-c", 2, 2*DomainBand)),
		},
		{
			name: "old ReplicaSet: the Deployment's new pod starting in the current domain keeps the domain first",
			in: ScaleDownInput{
				Spec: spec(policyv1alpha1.DomainByDomain),
				// zone-a holds a surge pod of the new ReplicaSet, not Ready yet.
				Domains: []policyv1alpha1.DomainStatus{
					row("zone-a", 3, 2, 2, 0), row("zone-b", 2, 2, 1, 1),
				},
				Pods:         scaleDownPods(spreadOf("zone-a 2", "zone-b 2")...),
				OldInRollout: true,
				Siblings:     scaleDownPods(rsPod("new-0", "zone-a").notReady()),
			},
			want: costs(domainCosts("zone-a", 2, 0), domainCosts("zone-b", 2, DomainBand)),
		},
		{
			name: "pods without a domain get no cost and are not counted",
			in: ScaleDownInput{
				Spec:    spec(policyv1alpha1.DomainByDomain),
				Domains: healthyRows(map[string]int32{"zone-a": 2}),
				Pods:    scaleDownPods(append(spreadOf("zone-a 2"), rsPod("pending", ""))...),
			},
			want: costs(domainCosts("zone-a", 2, 0)),
		},
		{
			name: "no pods",
			in:   ScaleDownInput{Spec: spec(policyv1alpha1.DomainByDomain)},
			want: map[string]int32{},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := DeletionCosts(tc.in)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DeletionCosts (-want +got):\n%s", diff)
			}
		})
	}
}

// lowest returns the names of the k lowest-cost pods, ties broken by name
// in the given direction, as the ReplicaSet controller breaks them by
// criteria the costs do not see.
func lowest(c map[string]int32, k int, reverseTies bool) []string {
	names := make([]string, 0, len(c))
	for n := range c {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if c[names[i]] != c[names[j]] {
			return c[names[i]] < c[names[j]]
		}
		return (names[i] < names[j]) != reverseTies
	})
	return names[:k]
}

// Removing the k lowest-cost pods, for any k and any tie-break, takes pods
// only from the domains holding the most pods, so the spread ends even.
func TestDeletionCostsKeepTheSpreadForAnyScaleDown(t *testing.T) {
	pods := scaleDownPods(spreadOf("zone-a 10", "zone-b 8", "zone-c 6")...)
	domainOf := map[string]string{}
	for _, p := range pods {
		domainOf[p.Name] = p.Domain
	}
	c := DeletionCosts(ScaleDownInput{
		Spec:    spec(policyv1alpha1.DomainByDomain),
		Domains: healthyRows(map[string]int32{"zone-a": 10, "zone-b": 8, "zone-c": 6}),
		Pods:    pods,
	})
	for _, reverse := range []bool{false, true} {
		for k := 0; k <= len(pods); k++ {
			left := map[string]int{"zone-a": 10, "zone-b": 8, "zone-c": 6}
			lost := map[string]bool{}
			for _, n := range lowest(c, k, reverse) {
				left[domainOf[n]]--
				lost[domainOf[n]] = true
			}
			most, least := 0, len(pods)
			for _, n := range left {
				most, least = max(most, n), min(least, n)
			}
			for d := range lost {
				if left[d] < most-1 {
					t.Errorf("removing %d pods (reverse ties %v) left %v: %s lost pods below the others", k, reverse, left, d)
				}
			}
			if k >= 6 && most-least > 1 {
				t.Errorf("removing %d pods (reverse ties %v) left an uneven spread %v", k, reverse, left)
			}
		}
	}
}

// A scale event changes only the costs of the pods it adds or removes, when
// the pod removed is the lowest-cost one (the one the ReplicaSet controller
// picks at equal readiness).
func TestDeletionCostsAreStableAcrossScaleEvents(t *testing.T) {
	in := ScaleDownInput{
		Spec:    spec(policyv1alpha1.DomainByDomain),
		Domains: healthyRows(map[string]int32{"zone-a": 10, "zone-b": 8, "zone-c": 6}),
		Pods:    scaleDownPods(spreadOf("zone-a 10", "zone-b 8", "zone-c 6")...),
	}
	before := DeletionCosts(in)
	changed := func(after map[string]int32) []string {
		var out []string
		for n, c := range after {
			if b, ok := before[n]; !ok || b != c {
				out = append(out, n)
			}
		}
		sort.Strings(out)
		return out
	}

	// Scale down by one: zone-a's newest pod, the lowest cost, leaves.
	victim := lowest(before, 1, false)[0]
	if victim != "zone-a-9" {
		t.Fatalf("lowest-cost pod = %s, want zone-a-9", victim)
	}
	down := in
	down.Pods = nil
	for _, p := range in.Pods {
		if p.Name != victim {
			down.Pods = append(down.Pods, p)
		}
	}
	down.Domains = healthyRows(map[string]int32{"zone-a": 9, "zone-b": 8, "zone-c": 6})
	if diff := cmp.Diff([]string(nil), changed(DeletionCosts(down))); diff != "" {
		t.Errorf("pods patched after removing %s (-want +got):\n%s", victim, diff)
	}

	// Scale up by one: a new pod lands in zone-c, not Ready yet.
	up := in
	up.Pods = append(append([]ScaleDownPod(nil), in.Pods...), rsPod("zone-c-new", "zone-c").createdAt(time.Hour).notReady().p)
	up.Domains = []policyv1alpha1.DomainStatus{row("zone-a", 10, 10, 9, 1), row("zone-b", 8, 8, 7, 1), row("zone-c", 7, 6, 6, 0)}
	if diff := cmp.Diff([]string{"zone-c-new"}, changed(DeletionCosts(up))); diff != "" {
		t.Errorf("pods patched after adding a pod (-want +got):\n%s", diff)
	}
	// ...and becomes Ready.
	up.Pods[len(up.Pods)-1].Ready = true
	up.Domains = healthyRows(map[string]int32{"zone-a": 10, "zone-b": 8, "zone-c": 7})
	if diff := cmp.Diff([]string{"zone-c-new"}, changed(DeletionCosts(up))); diff != "" {
		t.Errorf("pods patched after the new pod became Ready (-want +got):\n%s", diff)
	}
}

func TestDeletionCostPatch(t *testing.T) {
	str := func(s string) *string { return &s }
	cost := func(c int32) *int32 { return &c }
	cases := []struct {
		name        string
		annotations map[string]string
		want        *int32
		patch       map[string]*string
	}{
		{
			name:  "unannotated pod: cost and marker set",
			want:  cost(-3),
			patch: map[string]*string{DeletionCostAnnotation: str("-3"), DeletionCostBudgetAnnotation: str("web")},
		},
		{
			name:        "own pod at the wanted cost: nothing",
			annotations: map[string]string{DeletionCostAnnotation: "-3", DeletionCostBudgetAnnotation: "web"},
			want:        cost(-3),
		},
		{
			name:        "own pod at another cost: the cost alone",
			annotations: map[string]string{DeletionCostAnnotation: "-2", DeletionCostBudgetAnnotation: "web"},
			want:        cost(100000),
			patch:       map[string]*string{DeletionCostAnnotation: str("100000")},
		},
		{
			name:        "own pod whose cost was removed: set again",
			annotations: map[string]string{DeletionCostBudgetAnnotation: "web"},
			want:        cost(-1),
			patch:       map[string]*string{DeletionCostAnnotation: str("-1")},
		},
		{
			name:        "own pod no longer covered: both removed",
			annotations: map[string]string{DeletionCostAnnotation: "-2", DeletionCostBudgetAnnotation: "web", "other": "x"},
			patch:       map[string]*string{DeletionCostAnnotation: nil, DeletionCostBudgetAnnotation: nil},
		},
		{
			name:        "someone else's cost on a covered pod: untouched",
			annotations: map[string]string{DeletionCostAnnotation: "500"},
			want:        cost(-1),
		},
		{
			name:        "someone else's cost on an uncovered pod: untouched",
			annotations: map[string]string{DeletionCostAnnotation: "500"},
		},
		{
			name:        "a pod another budget orders: untouched",
			annotations: map[string]string{DeletionCostAnnotation: "-1", DeletionCostBudgetAnnotation: "other"},
			want:        cost(-4),
		},
		{
			name:        "a pod another budget orders, not covered here: untouched",
			annotations: map[string]string{DeletionCostAnnotation: "-1", DeletionCostBudgetAnnotation: "other"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := DeletionCostPatch(tc.annotations, "web", tc.want)
			if diff := cmp.Diff(tc.patch, got); diff != "" {
				t.Errorf("DeletionCostPatch (-want +got):\n%s", diff)
			}
		})
	}
}
