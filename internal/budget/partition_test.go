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
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// ingesterRegex is the peer's partition expression on a Mimir-like layout.
const ingesterRegex = `ingester-zone-[a-z]-([0-9]+)`

// ingesters builds the pods of three StatefulSets ingester-zone-{a,b,c} of
// n replicas each: pod ingester-zone-<z>-<i> on node n-<z>, Ready an hour
// before t0, unless skip names it (gone) or mod changes it.
func ingesters(n int, skip map[string]bool, mod func(name string, w *builders.PodWrapper) *builders.PodWrapper) ([]*builders.PodWrapper, []Owner) {
	var pods []*builders.PodWrapper
	var os []Owner
	for _, z := range []string{"a", "b", "c"} {
		sts := Owner{UID: types.UID("sts-" + z), Kind: "StatefulSet", Name: "ingester-zone-" + z, Replicas: int32(n), OrdinalStart: new(int32)}
		os = append(os, sts)
		for i := range n {
			name := fmt.Sprintf("ingester-zone-%s-%d", z, i)
			if skip[name] {
				continue
			}
			w := pod(name).OnNode("n-"+z).ReadySince(at(-time.Hour)).
				Label(appsv1.PodIndexLabel, itoa(i)).
				ControlledBy(metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID})
			if mod != nil {
				w = mod(name, w)
			}
			pods = append(pods, w)
		}
	}
	return pods, os
}

func zoneNodes() []*builders.NodeWrapper {
	return []*builders.NodeWrapper{node("n-a").Zone("zone-a"), node("n-b").Zone("zone-b"), node("n-c").Zone("zone-c")}
}

// Per partition, what holds per zone: rows per partition wherever the
// replicas run, missing StatefulSet pods in their own partition by name,
// Pending replacements in theirs, maxDisruptedDomains over partitions, and
// a pod without a partition blocking the budget.
func TestPartitions(t *testing.T) {
	byName := func() *builders.BudgetWrapper {
		return tdb("ingesters").PartitionByName(ingesterRegex).MaxUnavailable(intOrPct("1"))
	}
	byIndex := func() *builders.BudgetWrapper {
		return tdb("ingesters").Partition(policyv1alpha1.PartitionSource{Label: appsv1.PodIndexLabel}).MaxUnavailable(intOrPct("1"))
	}
	gone := func(names ...string) map[string]bool {
		m := map[string]bool{}
		for _, n := range names {
			m[n] = true
		}
		return m
	}
	tests := []struct {
		name   string
		budget *builders.BudgetWrapper
		skip   map[string]bool
		mod    func(string, *builders.PodWrapper) *builders.PodWrapper
		want   summary
	}{
		{name: "every replica Ready: one allowance per partition", budget: byName(),
			want: withRows(row("0", 3, 3, 2, 1), row("1", 3, 3, 2, 1), row("2", 3, 3, 2, 1))},
		{name: "a replica deleted without a record: only its partition waits", budget: byName(), skip: gone("ingester-zone-b-1"),
			want: withRows(row("0", 3, 3, 2, 1), row("1", 3, 2, 2, 0), row("2", 3, 3, 2, 1))},
		{name: "the same by the StatefulSet's pod-index label", budget: byIndex(), skip: gone("ingester-zone-b-1"),
			want: withRows(row("0", 3, 3, 2, 1), row("1", 3, 2, 2, 0), row("2", 3, 3, 2, 1))},
		{name: "a Pending replacement with no node counts in its partition", budget: byName(),
			mod: func(n string, w *builders.PodWrapper) *builders.PodWrapper {
				if n == "ingester-zone-c-2" {
					return w.Pending()
				}
				return w
			},
			want: withRows(row("0", 3, 3, 2, 1), row("1", 3, 3, 2, 1), row("2", 3, 2, 2, 0))},
		{name: "maxDisruptedDomains 1: a degraded partition holds the others", budget: byName().MaxDisruptedDomains(1), skip: gone("ingester-zone-a-0"),
			want: withRows(row("0", 3, 2, 2, 0), row("1", 3, 3, 2, 0), row("2", 3, 3, 2, 0))},
		{name: "a pod whose name does not match blocks the budget", budget: tdb("ingesters").PartitionByName(`ingester-zone-[a-b]-([0-9]+)`).MaxUnavailable(intOrPct("1")),
			// zone-c's replicas have no partition: counted nowhere, and
			// nothing is allowed until they do.
			want: summary{Domains: []policyv1alpha1.DomainStatus{row("0", 2, 2, 1, 0), row("1", 2, 2, 1, 0), row("2", 2, 2, 1, 0)},
				ExpectedPods: 6, CurrentHealthy: 6, Blocked: policyv1alpha1.ReasonDomainError}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pods, os := ingesters(3, tc.skip, tc.mod)
			got := summarize(Compute(world{tdb: tc.budget, nodes: zoneNodes(), pods: pods, owners: os}.input()))
			got.DomainIssues = nil
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Compute (-want +got):\n%s", diff)
			}
		})
	}
}

// minReadySeconds: a replica Ready for less than the delay is not healthy
// yet, the status is computed again when it becomes so, and the webhook
// decides its eviction as a not-Ready pod's.
func TestMinReadySeconds(t *testing.T) {
	b := tdb("ingesters").PartitionByName(ingesterRegex).MaxUnavailable(intOrPct("1")).MinReadySeconds(10)
	recovered := func(n string, w *builders.PodWrapper) *builders.PodWrapper {
		if n == "ingester-zone-a-1" {
			return w.ReadySince(at(-4 * time.Second))
		}
		return w
	}
	pods, os := ingesters(3, nil, recovered)
	in := world{tdb: b, nodes: zoneNodes(), pods: pods, owners: os}.input()
	res := Compute(in)
	warming := row("1", 3, 2, 2, 0)
	warming.WarmingUp = 1
	if diff := cmp.Diff(withRows(row("0", 3, 3, 2, 1), warming, row("2", 3, 3, 2, 1)), summarize(res)); diff != "" {
		t.Errorf("4 s after recovering (-want +got):\n%s", diff)
	}
	if res.AvailableAt == nil || !res.AvailableAt.Equal(at(6*time.Second)) {
		t.Errorf("AvailableAt = %v, want %v (when ingester-zone-a-1 has been Ready 10 s)", res.AvailableAt, at(6*time.Second))
	}
	in.Now = at(6 * time.Second)
	if diff := cmp.Diff(withRows(row("0", 3, 3, 2, 1), row("1", 3, 3, 2, 1), row("2", 3, 3, 2, 1)), summarize(Compute(in))); diff != "" {
		t.Errorf("10 s after recovering (-want +got):\n%s", diff)
	}

	judged := b.Obj()
	judged.Status = statusFrom(judged, res)
	warm := byNamePod(in, "ingester-zone-a-1")
	healthy := byNamePod(in, "ingester-zone-b-1")
	if d := DecideEviction(judged, EvictionRequest{Pod: healthy, Domain: "1", Now: t0}); d.Allowed || !strings.Contains(d.Message, "partition 1 has 2 healthy pods, needs 2") {
		t.Errorf("a healthy replica of partition 1 while another recovers: allowed %v (%s), want refused naming the partition: %q", d.Allowed, d.Reason, d.Message)
	}
	// The recovering replica is Ready: its eviction needs an allowance, as
	// core's PDBs decide it.
	if d := DecideEviction(judged, EvictionRequest{Pod: warm, Domain: "1", Now: t0}); d.Allowed {
		t.Errorf("the recovering replica with no allowance in its partition: allowed (%s), want refused", d.Reason)
	}
	// Its mirror keeps the 2 healthy pods and the one warming up, which
	// core counts healthy: core allows what the budget allows, nothing
	// more.
	for _, m := range MirrorDomains(&judged.Spec, &judged.Status) {
		if want := map[string]int32{"0": 2, "1": 3, "2": 2}[m.Domain]; m.MinAvailable != want {
			t.Errorf("mirror of partition %s: minAvailable %d, want %d", m.Domain, m.MinAvailable, want)
		}
	}
	d := DecideEviction(judged, EvictionRequest{Pod: byNamePod(in, "ingester-zone-a-0"), Domain: "0", Now: t0})
	if !d.Allowed || d.Reason != DecisionCharged || findDomain(d.Status.Domains, "0").CurrentHealthy != 2 {
		t.Errorf("an available replica of partition 0: %+v, want charged with healthy 3 -> 2", d)
	}
}

func byNamePod(in Input, name string) *corev1.Pod {
	for _, p := range in.Pods {
		if p.Name == name {
			return p
		}
	}
	panic("no pod " + name)
}

// Place reads the partition from the pod, scheduled or not; a pod without
// one is refused, saying why.
func TestPlacePartition(t *testing.T) {
	b := tdb("ingesters").PartitionByName(ingesterRegex).MaxUnavailable(intOrPct("1")).Obj()
	nodes := nodeLookup(zoneNodes()...)
	p, err := Place(b, pod("ingester-zone-b-7").Pending().Obj(), nodes, nil)
	if err != nil || !p.Covered || p.Domain != "7" || p.NodeGone {
		t.Errorf("unscheduled ingester-zone-b-7: %+v, %v; want covered in 7", p, err)
	}
	p, err = Place(b, pod("ingester-zone-b-7").OnNode("n-gone").Ready().Obj(), nodes, nil)
	if err != nil || p.Domain != "7" || !p.NodeGone {
		t.Errorf("ingester-zone-b-7 on a gone node: %+v, %v; want in 7, node gone", p, err)
	}
	if _, err := Place(tdb("dots").PartitionByName(`ingester-(.*)`).MaxUnavailable(intOrPct("1")).Obj(),
		pod("ingester--x").OnNode("n-a").Ready().Obj(), nodes, nil); !errors.Is(err, ErrNoPartition) {
		t.Errorf("a capture that is not a label value (%q): err %v, want ErrNoPartition", "-x", err)
	}
	_, err = Place(b, pod("querier-1").OnNode("n-a").Ready().Obj(), nodes, nil)
	if !errors.Is(err, ErrNoPartition) {
		t.Fatalf("querier-1: err %v, want ErrNoPartition", err)
	}
	if d := RefusePlacement(b, err); d.Allowed || !strings.Contains(d.Message, "partition") {
		t.Errorf("RefusePlacement = %+v, want a refusal naming the partition", d)
	}
	for _, bad := range []policyv1alpha1.PartitionSource{
		{PodNameRegex: `ingester-(`}, {PodNameRegex: `ingester-zone-[a-z]-[0-9]+`}, {Label: "x", PodNameRegex: "y"},
		{PodNameRegex: `a)|(b`}, // would escape the anchors once wrapped
	} {
		b := tdb("bad").Partition(bad).MaxUnavailable(intOrPct("1")).Obj()
		if err := ParseCoverage(b).Err(); err == nil {
			t.Errorf("partition %+v: parsed, want an error", bad)
		}
	}
}

// While every partition waits for a replica to have been Ready long
// enough, the condition says so.
func TestConditionNamesThePodsWarmingUp(t *testing.T) {
	b := tdb("ingesters").PartitionByName(ingesterRegex).MaxUnavailable(intOrPct("1")).MinReadySeconds(10)
	zoneARecovering := func(n string, w *builders.PodWrapper) *builders.PodWrapper {
		if strings.HasPrefix(n, "ingester-zone-a-") {
			return w.ReadySince(at(-4 * time.Second))
		}
		return w
	}
	pods, os := ingesters(3, nil, zoneARecovering)
	in := world{tdb: b, nodes: zoneNodes(), pods: pods, owners: os}.input()
	c := DisruptionCondition(&in.Budget.Spec, Compute(in).Domains, "", "", 1, t0)
	if c.Status != metav1.ConditionFalse || c.Reason != policyv1alpha1.ReasonInsufficientPods ||
		!strings.Contains(c.Message, "3 Ready pod(s) count once Ready for minReadySeconds") {
		t.Errorf("condition = %s %s %q, want False InsufficientPods naming the 3 pods warming up", c.Status, c.Reason, c.Message)
	}
}

// A StatefulSet whose ordinals start at 3 (spec.ordinals.start) has pods
// -3, -4, -5: once -4 is evicted and gone, its partition still misses it,
// and another replica of partition 4 is refused. Only an apps/v1
// StatefulSet's ordinals are known; a controller of the same kind name
// without them follows the other rules, which count the missing pod in
// every partition.
func TestMissingPodOfAStatefulSetWhoseOrdinalsStartLater(t *testing.T) {
	b := tdb("ingesters").PartitionByName(ingesterRegex).MaxUnavailable(intOrPct("1"))
	for _, known := range []bool{true, false} {
		pods, os := ingesters(6, map[string]bool{
			"ingester-zone-a-0": true, "ingester-zone-a-1": true, "ingester-zone-a-2": true, "ingester-zone-a-4": true,
			"ingester-zone-b-0": true, "ingester-zone-b-1": true, "ingester-zone-b-2": true,
			"ingester-zone-c-0": true, "ingester-zone-c-1": true, "ingester-zone-c-2": true,
		}, nil)
		for i := range os {
			os[i].Replicas = 3
			start := int32(3)
			os[i].OrdinalStart = &start
			if !known {
				os[i].OrdinalStart = nil
			}
		}
		in := world{tdb: b.DisruptedPods(record("ingester-zone-a-4", "4", "sts-a", at(-time.Minute))), nodes: zoneNodes(), pods: pods, owners: os}.input()
		res := Compute(in)
		judged := in.Budget.DeepCopy()
		judged.Status = statusFrom(judged, res)
		row := findDomain(res.Domains, "4")
		if row == nil || row.ExpectedPods != 3 || row.DisruptionsAllowed != 0 {
			t.Errorf("ordinals known %v: partition 4 = %+v, want 3 expected (zone-a-4 missing), 0 allowed", known, row)
		}
		if d := DecideEviction(judged, EvictionRequest{Pod: byNamePod(in, "ingester-zone-b-4"), Domain: "4", Now: t0}); d.Allowed {
			t.Errorf("ordinals known %v: a second replica of partition 4 allowed (%s) while zone-a-4 is missing", known, d.Reason)
		}
	}
}
