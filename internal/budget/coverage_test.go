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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

func expr(key string, op policyv1alpha1.NodeSelectorOperator, values ...string) policyv1alpha1.NodeSelectorRequirement {
	return policyv1alpha1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func nameIs(op policyv1alpha1.NodeSelectorOperator, names ...string) policyv1alpha1.NodeFieldSelectorRequirement {
	return policyv1alpha1.NodeFieldSelectorRequirement{Key: "metadata.name", Operator: op, Values: names}
}

// TestDomainOf: which pods a budget covers and in which domain, as the
// webhook asks it for one pod.
func TestDomainOf(t *testing.T) {
	nodes := nodeLookup(node("n1").Zone("zone-a"), node("n2").Zone("zone-b"), node("bare"))
	notC := policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{expr(zoneKey, "NotIn", "zone-b")}}
	type result struct {
		Covered bool
		Domain  string
		Err     string
	}
	tests := []struct {
		name   string
		budget *builders.BudgetWrapper
		pod    *builders.PodWrapper
		want   result
	}{
		{name: "covered pod in its zone", budget: tdb("web").TopologyKey(zoneKey), pod: pod("a").OnNode("n1"),
			want: result{Covered: true, Domain: "zone-a"}},
		{name: "other namespace", budget: tdb("web").TopologyKey(zoneKey), pod: pod("a").Namespace("other").OnNode("n1"),
			want: result{}},
		{name: "selector does not match", budget: tdb("web").TopologyKey(zoneKey), pod: pod("a").Labels(map[string]string{"app": "db"}).OnNode("n1"),
			want: result{}},
		{name: "no topologyKey: the single domain", budget: tdb("web"), pod: pod("a").OnNode("n2"),
			want: result{Covered: true, Domain: AllDomain}},
		{name: "no topologyKey: an unscheduled pod is in the single domain", budget: tdb("web"), pod: pod("a").Pending(),
			want: result{Covered: true, Domain: AllDomain}},
		{name: "no topologyKey: an unknown node does not matter", budget: tdb("web"), pod: pod("a").OnNode("ghost"),
			want: result{Covered: true, Domain: AllDomain}},
		{name: "unscheduled pod is covered without a domain", budget: tdb("web").TopologyKey(zoneKey), pod: pod("a").Pending(),
			want: result{Covered: true}},
		{name: "node outside nodeSelectorTerm", budget: tdb("web").TopologyKey(zoneKey).NodeSelectorTerm(notC), pod: pod("a").OnNode("n2"),
			want: result{}},
		{name: "node inside nodeSelectorTerm", budget: tdb("web").TopologyKey(zoneKey).NodeSelectorTerm(notC), pod: pod("a").OnNode("n1"),
			want: result{Covered: true, Domain: "zone-a"}},
		{name: "nodeSelectorTerm without topologyKey", budget: tdb("web").NodeSelectorTerm(notC), pod: pod("a").OnNode("n1"),
			want: result{Covered: true, Domain: AllDomain}},
		{name: "nodeSelectorTerm without topologyKey, unscheduled pod", budget: tdb("web").NodeSelectorTerm(notC), pod: pod("a").Pending(),
			want: result{Covered: true}},
		{name: "node without the topology label", budget: tdb("web").TopologyKey(zoneKey), pod: pod("a").OnNode("bare"),
			want: result{Covered: true, Err: `pod ns/a on node "bare": node has no label topology.kubernetes.io/zone`}},
		{name: "unknown node: the pod runs nowhere and its domain is unknown", budget: tdb("web").TopologyKey(zoneKey), pod: pod("a").OnNode("ghost"),
			want: result{Covered: true, Err: "pod ns/a: " + ErrNodeGone.Error()}},
		{name: "unknown node under nodeSelectorTerm without topologyKey: the one domain", budget: tdb("web").NodeSelectorTerm(notC), pod: pod("a").OnNode("ghost"),
			want: result{Covered: true, Domain: AllDomain}},
		{name: "matchFields: node not listed", pod: pod("a").OnNode("n2"),
			budget: tdb("web").TopologyKey(zoneKey).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{nameIs("In", "n1", "n9")}}),
			want:   result{}},
		{name: "matchFields: node listed", pod: pod("a").OnNode("n1"),
			budget: tdb("web").TopologyKey(zoneKey).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{nameIs("In", "n1", "n9")}}),
			want:   result{Covered: true, Domain: "zone-a"}},
		{name: "invalid spec", budget: tdb("web").Selector(nil), pod: pod("a").OnNode("n1"),
			want: result{Err: "spec.selector is required"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got result
			var err error
			got.Covered, got.Domain, err = DomainOf(tc.budget.Obj(), tc.pod.Obj(), nodes)
			if err != nil {
				got.Err = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DomainOf() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeNodeSelectorTerm scopes a zoned budget with every operator of
// a NodeSelectorTerm. Each node runs one Ready pod of its own controller
// (scale 1), so a covered node adds one expected and one healthy pod to its
// zone:
//
//	n1 zone-a rack=1 disk=ssd
//	n2 zone-a rack=4
//	n3 zone-b rack=5 disk=hdd
//	n4 zone-c rack=9
func TestComputeNodeSelectorTerm(t *testing.T) {
	nodes := []*builders.NodeWrapper{
		node("n1").Zone("zone-a").Label("rack", "1").Label("disk", "ssd"),
		node("n2").Zone("zone-a").Label("rack", "4"),
		node("n3").Zone("zone-b").Label("rack", "5").Label("disk", "hdd"),
		node("n4").Zone("zone-c").Label("rack", "9"),
	}
	var ps []*builders.PodWrapper
	var os []Owner
	for _, n := range []string{"n1", "n2", "n3", "n4"} {
		uid := types.UID("rs-" + n)
		ps = append(ps, pod("p-"+n).OnNode(n).Ready().ControlledBy(replicaSet(uid)))
		os = append(os, owner(uid, 1))
	}
	a2, a1 := row("zone-a", 2, 2, 1, 1), row("zone-a", 1, 1, 0, 1)
	b1, c1 := row("zone-b", 1, 1, 0, 1), row("zone-c", 1, 1, 0, 1)
	term := func(es ...policyv1alpha1.NodeSelectorRequirement) *policyv1alpha1.NodeSelectorTerm {
		return &policyv1alpha1.NodeSelectorTerm{MatchExpressions: es}
	}
	tests := []struct {
		name        string
		term        *policyv1alpha1.NodeSelectorTerm
		topologyKey string
		want        summary
	}{
		{name: "no term covers every node", topologyKey: zoneKey, want: withRows(a2, b1, c1)},
		{name: "empty term matches every node", term: &policyv1alpha1.NodeSelectorTerm{}, topologyKey: zoneKey,
			want: withRows(a2, b1, c1)},
		{name: "In", term: term(expr(zoneKey, "In", "zone-a", "zone-b")), topologyKey: zoneKey, want: withRows(a2, b1)},
		{name: "NotIn", term: term(expr(zoneKey, "NotIn", "zone-c")), topologyKey: zoneKey, want: withRows(a2, b1)},
		{name: "Exists", term: term(expr("disk", "Exists")), topologyKey: zoneKey, want: withRows(a1, b1)},
		{name: "DoesNotExist", term: term(expr("disk", "DoesNotExist")), topologyKey: zoneKey, want: withRows(a1, c1)},
		{name: "Gt", term: term(expr("rack", "Gt", "4")), topologyKey: zoneKey, want: withRows(b1, c1)},
		{name: "Lt", term: term(expr("rack", "Lt", "5")), topologyKey: zoneKey, want: withRows(a2)},
		{name: "matchFields metadata.name In",
			term:        &policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{nameIs("In", "n1", "n3")}},
			topologyKey: zoneKey, want: withRows(a1, b1)},
		{name: "matchFields metadata.name In, one name",
			term:        &policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{nameIs("In", "n2")}},
			topologyKey: zoneKey, want: withRows(a1)},
		{name: "matchFields metadata.name NotIn",
			term:        &policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{nameIs("NotIn", "n1")}},
			topologyKey: zoneKey, want: withRows(a1, b1, c1)},
		{name: "matchFields metadata.name NotIn, two names",
			term:        &policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{nameIs("NotIn", "n1", "n4")}},
			topologyKey: zoneKey, want: withRows(a1, b1)},
		{name: "two matchFields requirements are ANDed",
			term: &policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{
				nameIs("In", "n1", "n2", "n3"), nameIs("NotIn", "n2")}},
			topologyKey: zoneKey, want: withRows(a1, b1)},
		{name: "matchFields without topologyKey",
			term: &policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{nameIs("In", "n1", "n4")}},
			want: withRows(row(AllDomain, 2, 2, 1, 1))},
		{name: "expressions are ANDed", term: term(expr(zoneKey, "In", "zone-a", "zone-b"), expr("rack", "Gt", "2")),
			topologyKey: zoneKey, want: withRows(a1, b1)},
		{name: "expressions and fields are ANDed",
			term: &policyv1alpha1.NodeSelectorTerm{
				MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{expr("disk", "Exists")},
				MatchFields:      []policyv1alpha1.NodeFieldSelectorRequirement{nameIs("NotIn", "n3")},
			},
			topologyKey: zoneKey, want: withRows(a1)},
		{name: "term matching no node", term: term(expr(zoneKey, "In", "zone-x")), topologyKey: zoneKey, want: withRows()},
		{name: "term without topologyKey: one domain of the covered pods",
			term: term(expr(zoneKey, "NotIn", "zone-c")), want: withRows(row(AllDomain, 3, 3, 2, 1))},
		{name: "term matching no node without topologyKey: the single domain expects nothing",
			term: term(expr(zoneKey, "In", "zone-x")), want: withRows(row(AllDomain, 0, 0, 0, 0))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tdb("web").TopologyKey(tc.topologyKey).MaxUnavailable(intOrPct("1"))
			if tc.term != nil {
				b.NodeSelectorTerm(*tc.term)
			}
			w := world{tdb: b, nodes: nodes, pods: ps, owners: os}
			if diff := cmp.Diff(tc.want, summarize(Compute(w.input()))); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeIgnoresPods: pods of another namespace, pods the selector does
// not pick and terminal pods are not covered; they neither count nor raise
// issues, even on a node without the topology label.
func TestComputeIgnoresPods(t *testing.T) {
	const rs = types.UID("rs")
	covered := readyPods("w", "n1", rs, 3)
	tests := []struct {
		name     string
		selector *policyv1alpha1.LabelSelector
		pods     []*builders.PodWrapper
		want     summary
	}{
		{name: "only covered pods", pods: covered, want: withRows(row("zone-a", 3, 3, 2, 1))},
		{name: "pods in another namespace, of another app, terminal",
			pods: append(append([]*builders.PodWrapper{}, covered...),
				pod("other-ns").Namespace("other").OnNode("n3").Ready().ControlledBy(replicaSet(rs)),
				pod("other-app").Labels(map[string]string{"app": "db"}).OnNode("n3").Ready().ControlledBy(replicaSet(rs)),
				pod("done").OnNode("n3").Ready().ControlledBy(replicaSet(rs)).Phase(corev1.PodSucceeded),
				pod("failed").OnNode("n3").ControlledBy(replicaSet(rs)).Phase(corev1.PodFailed),
				pod("terminal-on-bare-node").OnNode("bare").Phase(corev1.PodFailed),
				pod("other-ns-on-bare-node").Namespace("other").OnNode("bare").Ready(),
			),
			want: withRows(row("zone-a", 3, 3, 2, 1))},
		{name: "a terminal pod leaves its controller one pod short",
			pods: []*builders.PodWrapper{covered[0], covered[1], pod("w-2").OnNode("n1").ControlledBy(replicaSet(rs)).Phase(corev1.PodFailed)},
			want: withRows(row("zone-a", 3, 2, 2, 0))},
		{name: "matchExpressions selector",
			selector: &policyv1alpha1.LabelSelector{MatchExpressions: []policyv1alpha1.LabelSelectorRequirement{
				{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}},
				{Key: "track", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"canary"}},
			}},
			pods: append(append([]*builders.PodWrapper{}, covered...),
				pod("canary").Labels(map[string]string{"app": "web", "track": "canary"}).OnNode("n3").Ready().ControlledBy(replicaSet("rs-canary"))),
			want: withRows(row("zone-a", 3, 3, 2, 1))},
		{name: "empty selector covers every pod of the namespace",
			selector: &policyv1alpha1.LabelSelector{},
			pods: append(append([]*builders.PodWrapper{}, covered...),
				pod("db-0").Labels(map[string]string{"app": "db"}).OnNode("n3").Ready(),
				pod("other-ns").Namespace("other").OnNode("n3").Ready()),
			want: func() summary {
				s := withRows(row("zone-a", 3, 3, 2, 1), row("zone-b", 1, 1, 0, 1))
				s.UnmanagedPods = []string{"db-0"}
				return s
			}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1"))
			if tc.selector != nil {
				b.Selector(tc.selector)
			}
			w := world{tdb: b, nodes: append(threeZones(), node("bare")), pods: tc.pods, owners: []Owner{owner(rs, 3)}}
			if diff := cmp.Diff(tc.want, summarize(Compute(w.input()))); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeDomainIssues: a covered pod whose domain cannot be told (its
// node lacks the topology label or is unknown) is reported, and while there
// is one no domain allows anything.
func TestComputeDomainIssues(t *testing.T) {
	const rsA, rsX = types.UID("rs-a"), types.UID("rs-x")
	noLabel := DomainIssue{Pod: "x-0", Node: "bare", Reason: "node has no label " + zoneKey}
	zonedPods := func(xNode string, x *builders.PodWrapper) []*builders.PodWrapper {
		ps := append(readyPods("a", "n1", rsA, 2), readyPods("b", "n3", "rs-b", 2)...)
		if x == nil {
			x = pod("x-0").OnNode(xNode).Ready().ControlledBy(replicaSet(rsX))
		}
		return append(ps, x)
	}
	blocked := func(issues []DomainIssue, rows ...policyv1alpha1.DomainStatus) summary {
		s := withRows(rows...)
		s.DomainIssues = issues
		s.Blocked = policyv1alpha1.ReasonDomainError
		return s
	}
	notC := policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{expr(zoneKey, "In", "zone-a", "zone-b")}}
	tests := []struct {
		name   string
		budget *builders.BudgetWrapper
		pods   []*builders.PodWrapper
		want   summary
	}{
		{name: "node without the topology label", budget: tdb("web").TopologyKey(zoneKey), pods: zonedPods("bare", nil),
			want: blocked([]DomainIssue{noLabel}, row("zone-a", 2, 2, 1, 0), row("zone-b", 2, 2, 1, 0))},
		// A pod whose node is gone (or never seen) runs nowhere: it is no
		// domain error (that would refuse every eviction of the budget);
		// its controller misses it, here in every domain since nothing
		// tells where it was.
		{name: "unknown node: its pod is gone, missing in every domain", budget: tdb("web").TopologyKey(zoneKey), pods: zonedPods("ghost", nil),
			want: withRows(row("zone-a", 3, 2, 2, 0), row("zone-b", 3, 2, 2, 0))},
		{name: "not-Ready and deleting pods on a bare node are issues too", budget: tdb("web").TopologyKey(zoneKey),
			pods: append(zonedPods("", pod("x-0").OnNode("bare").NotReady().ControlledBy(replicaSet(rsX))),
				pod("x-1").OnNode("bare").Ready().Deleting(t0).ControlledBy(replicaSet(rsX))),
			want: blocked([]DomainIssue{noLabel, {Pod: "x-1", Node: "bare", Reason: noLabel.Reason}},
				row("zone-a", 2, 2, 1, 0), row("zone-b", 2, 2, 1, 0))},
		{name: "unknown node under a nodeSelectorTerm without topologyKey: its pod is missing from the one domain", budget: tdb("web").NodeSelectorTerm(notC),
			pods: zonedPods("ghost", nil),
			want: withRows(row(AllDomain, 5, 4, 4, 0))},
		{name: "a bare node outside nodeSelectorTerm is no issue", budget: tdb("web").TopologyKey(zoneKey).NodeSelectorTerm(notC),
			pods: zonedPods("bare", nil),
			want: withRows(row("zone-a", 2, 2, 1, 1), row("zone-b", 2, 2, 1, 1))},
		{name: "an unknown node without topologyKey nor term is no issue (policy/v1 does not look at nodes)",
			budget: tdb("web"), pods: zonedPods("ghost", nil),
			want: withRows(row(AllDomain, 5, 5, 4, 1))},
		{name: "an unscheduled pod is no issue", budget: tdb("web").TopologyKey(zoneKey),
			pods: zonedPods("", pod("x-0").Pending().ControlledBy(replicaSet(rsX))),
			// rs-x has no scheduled pod: its missing pod counts in every domain.
			want: withRows(row("zone-a", 3, 2, 2, 0), row("zone-b", 3, 2, 2, 0))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tc.budget.MaxUnavailable(intOrPct("1")), nodes: append(threeZones(), node("bare")), pods: tc.pods,
				owners: []Owner{owner(rsA, 2), owner("rs-b", 2), owner(rsX, 1)}}
			got := Compute(w.input())
			if diff := cmp.Diff(tc.want, summarize(got)); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
			if len(tc.want.DomainIssues) > 0 {
				i := tc.want.DomainIssues[0]
				_, msg := got.Blocked()
				if !strings.Contains(msg, "pod "+i.Pod+` on node "`+i.Node+`": `+i.Reason) {
					t.Errorf("Blocked() message %q does not name pod %s, node %s and %q", msg, i.Pod, i.Node, i.Reason)
				}
			}
		})
	}
}

// TestComputeNodeRelabelled: the same pods with different node labels; the
// counts follow the nodes' zones.
func TestComputeNodeRelabelled(t *testing.T) {
	const sts = types.UID("sts")
	ps := append(append(append(readyPods("p1", "n1", sts, 2), readyPods("p2", "n2", sts, 2)...),
		readyPods("p3", "n3", sts, 2)...), readyPods("p4", "n4", sts, 2)...)
	tests := []struct {
		name  string
		nodes []*builders.NodeWrapper
		want  summary
	}{
		{name: "as built", nodes: threeZones(),
			want: withRows(row("zone-a", 4, 4, 3, 1), row("zone-b", 2, 2, 1, 1), row("zone-c", 2, 2, 1, 1))},
		{name: "n2 moved to zone-b",
			nodes: []*builders.NodeWrapper{node("n1").Zone("zone-a"), node("n2").Zone("zone-b"), node("n3").Zone("zone-b"), node("n4").Zone("zone-c")},
			want:  withRows(row("zone-a", 2, 2, 1, 1), row("zone-b", 4, 4, 3, 1), row("zone-c", 2, 2, 1, 1))},
		{name: "n4 moved to zone-a: zone-c is gone",
			nodes: []*builders.NodeWrapper{node("n1").Zone("zone-a"), node("n2").Zone("zone-a"), node("n3").Zone("zone-b"), node("n4").Zone("zone-a")},
			want:  withRows(row("zone-a", 6, 6, 5, 1), row("zone-b", 2, 2, 1, 1))},
		{name: "n3 moved to a new zone-d",
			nodes: []*builders.NodeWrapper{node("n1").Zone("zone-a"), node("n2").Zone("zone-a"), node("n3").Zone("zone-d"), node("n4").Zone("zone-c")},
			want:  withRows(row("zone-a", 4, 4, 3, 1), row("zone-c", 2, 2, 1, 1), row("zone-d", 2, 2, 1, 1))},
		{name: "n3 lost its zone label",
			nodes: []*builders.NodeWrapper{node("n1").Zone("zone-a"), node("n2").Zone("zone-a"), node("n3"), node("n4").Zone("zone-c")},
			want: func() summary {
				s := withRows(row("zone-a", 4, 4, 3, 0), row("zone-c", 2, 2, 1, 0))
				s.DomainIssues = []DomainIssue{
					{Pod: "p3-0", Node: "n3", Reason: "node has no label " + zoneKey},
					{Pod: "p3-1", Node: "n3", Reason: "node has no label " + zoneKey},
				}
				s.Blocked = policyv1alpha1.ReasonDomainError
				return s
			}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")), nodes: tc.nodes, pods: ps, owners: []Owner{owner(sts, 8)}}
			if diff := cmp.Diff(tc.want, summarize(Compute(w.input()))); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeInvalidSpec: a spec that cannot be evaluated yields no rows,
// nothing allowed and a SyncFailed reason that names the field.
func TestComputeInvalidSpec(t *testing.T) {
	tests := []struct {
		name    string
		budget  *builders.BudgetWrapper
		wantErr string
	}{
		{name: "no selector", budget: tdb("web").TopologyKey(zoneKey).Selector(nil), wantErr: "spec.selector is required"},
		{name: "bad selector operator",
			budget: tdb("web").TopologyKey(zoneKey).Selector(&policyv1alpha1.LabelSelector{MatchExpressions: []policyv1alpha1.LabelSelectorRequirement{
				{Key: "app", Operator: "Gt", Values: []string{"1"}}}}),
			wantErr: "parsing spec.selector: "},
		{name: "Gt with a value that is not an integer",
			budget:  tdb("web").TopologyKey(zoneKey).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{expr("rack", "Gt", "x")}}),
			wantErr: "parsing spec.nodeSelectorTerm: "},
		{name: "matchFields on another field",
			budget: tdb("web").TopologyKey(zoneKey).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{
				{Key: "metadata.uid", Operator: "In", Values: []string{"x"}}}}),
			wantErr: `parsing spec.nodeSelectorTerm.matchFields[0]: key "metadata.uid" is not supported, only metadata.name`},
		{name: "matchFields with Exists",
			budget: tdb("web").TopologyKey(zoneKey).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{
				nameIs("In", "n1"), {Key: "metadata.name", Operator: "Exists"}}}),
			wantErr: `parsing spec.nodeSelectorTerm.matchFields[1]: operator "Exists" is not supported, only In and NotIn`},
		{name: "matchFields without values",
			budget: tdb("web").TopologyKey(zoneKey).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{
				nameIs("In")}}),
			wantErr: `parsing spec.nodeSelectorTerm.matchFields[0]: values must not be empty`},
		{name: "In without values",
			budget:  tdb("web").TopologyKey(zoneKey).NodeSelectorTerm(policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{expr(zoneKey, "In")}}),
			wantErr: "parsing spec.nodeSelectorTerm: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tc.budget.MaxUnavailable(intOrPct("1")), nodes: threeZones(), pods: readyPods("w", "n1", "rs", 3),
				owners: []Owner{owner("rs", 3)}}
			got := Compute(w.input())
			if got.Err == nil || !strings.HasPrefix(got.Err.Error(), tc.wantErr) {
				t.Fatalf("Compute().Err = %v, want an error starting with %q", got.Err, tc.wantErr)
			}
			if diff := cmp.Diff(summary{Blocked: policyv1alpha1.ReasonSyncFailed}, summarize(got)); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestComputeWithoutNodes: without a node lookup every node is unknown, so a
// zoned budget is blocked, and a budget without topology is not affected.
func TestComputeWithoutNodes(t *testing.T) {
	const rs = types.UID("rs")
	tests := []struct {
		name   string
		budget *builders.BudgetWrapper
		want   summary
	}{
		// Pods on nodes no one knows run nowhere: no domain has a pod, so
		// no row exists and nothing is allowed.
		{name: "zoned", budget: tdb("web").TopologyKey(zoneKey), want: summary{}},
		{name: "no topologyKey", budget: tdb("web"), want: withRows(row(AllDomain, 2, 2, 1, 1))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := world{tdb: tc.budget.MaxUnavailable(intOrPct("1")), pods: readyPods("w", "n1", rs, 2), owners: []Owner{owner(rs, 2)}}.input()
			in.Nodes = nil
			if diff := cmp.Diff(tc.want, summarize(Compute(in))); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
}

// A pod whose node object is gone runs nowhere: it is no domain error (which
// would refuse every eviction of the budget), it counts as gone in the domain
// it was in, and drains of the other domains go on.
func TestPodOnADeletedNode(t *testing.T) {
	const sts = types.UID("sts")
	three := func(gone *builders.PodWrapper) []*builders.PodWrapper {
		return []*builders.PodWrapper{
			pod("s-0").OnNode("n1").Ready().ControlledBy(replicaSet(sts)), pod("s-1").OnNode("n3").Ready().ControlledBy(replicaSet(sts)),
			pod("s-2").OnNode("n4").Ready().ControlledBy(replicaSet(sts)), gone,
		}
	}
	// s-3 was on n2 (zone-a), a node that is gone.
	onGone := func() *builders.PodWrapper { return pod("s-3").OnNode("n2").Ready().ControlledBy(replicaSet(sts)) }
	nodes := []*builders.NodeWrapper{node("n1").Zone("zone-a"), node("n3").Zone("zone-b"), node("n4").Zone("zone-c")}
	goneNodes := func(name string) (map[string]string, bool) {
		if name == "n2" {
			return map[string]string{zoneKey: "zone-a"}, true
		}
		return nil, false
	}
	tests := []struct {
		name   string
		pod    *builders.PodWrapper
		gone   func(string) (map[string]string, bool)
		budget *builders.BudgetWrapper
		want   summary
	}{
		{name: "the deleted node's last labels place it", pod: onGone(), gone: goneNodes, budget: tdb("web"),
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 1, 1, 0, 1), row("zone-c", 1, 1, 0, 1))},
		{name: "its eviction record places it", pod: onGone(), budget: tdb("web").DisruptedPods(record("s-3", "zone-a", sts, at(-time.Second))),
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 1, 1, 0, 1), row("zone-c", 1, 1, 0, 1)).withRecords("s-3@zone-a")},
		{name: "its topology label (PodTopologyLabels) places it", pod: onGone().Labels(map[string]string{"app": "web", zoneKey: "zone-a"}), budget: tdb("web"),
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 1, 1, 0, 1), row("zone-c", 1, 1, 0, 1))},
		{name: "nothing known: missing in every domain, still no domain error", pod: onGone(), budget: tdb("web"),
			want: withRows(row("zone-a", 2, 1, 1, 0), row("zone-b", 2, 1, 1, 0), row("zone-c", 2, 1, 1, 0))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := world{tdb: tc.budget.TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)), nodes: nodes, pods: three(tc.pod), owners: []Owner{owner(sts, 4)}}
			in := w.input()
			in.GoneNodes = tc.gone
			if diff := cmp.Diff(tc.want, summarize(Compute(in))); diff != "" {
				t.Errorf("Compute() (-want +got):\n%s", diff)
			}
		})
	}
	// A node that exists without the label is still a domain error.
	w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)), nodes: append(nodes, node("n2")), pods: three(onGone()), owners: []Owner{owner(sts, 4)}}
	res := Compute(w.input())
	if reason, _ := res.Blocked(); reason != policyv1alpha1.ReasonDomainError {
		t.Errorf("an existing node without the label: blocked %q, want DomainError", reason)
	}
	// The webhook's view: the domain of the pod, or ErrNodeGone.
	b := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).Obj()
	if covered, d, err := Locate(b, onGone().Obj(), nodeLookup(nodes...), goneNodes); !covered || d != "zone-a" || err != nil {
		t.Errorf("Locate(last labels) = %v, %q, %v; want covered in zone-a", covered, d, err)
	}
	if covered, d, err := Locate(b, onGone().Obj(), nodeLookup(nodes...), nil); !covered || d != "" || err == nil {
		t.Errorf("Locate(nothing known) = %v, %q, %v; want covered with ErrNodeGone", covered, d, err)
	}
}

// A budget whose selector does not parse (stored before the CRD refused
// such selectors) blocks only the pods it could select.
func TestBrokenSelectorCoversOnlyWhatItMightSelect(t *testing.T) {
	broken := func(sel *policyv1alpha1.LabelSelector) *policyv1alpha1.TopologyDisruptionBudget {
		return tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).Selector(sel).Obj()
	}
	spaceValue := &policyv1alpha1.LabelSelector{MatchLabels: map[string]policyv1alpha1.LabelValue{"app": "web", "tier": "a b"}}
	badExpr := &policyv1alpha1.LabelSelector{MatchLabels: map[string]policyv1alpha1.LabelValue{"app": "web"},
		MatchExpressions: []policyv1alpha1.LabelSelectorRequirement{{Key: "bad key", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	tests := []struct {
		name        string
		tdb         *policyv1alpha1.TopologyDisruptionBudget
		pod         *builders.PodWrapper
		wantCovered bool
	}{
		{"another app is not touched", broken(spaceValue), pod("x").Labels(map[string]string{"app": "db"}).OnNode("n1"), false},
		{"a pod without the label is not touched", broken(badExpr), pod("x").Labels(map[string]string{"app": "db"}).OnNode("n1"), false},
		{"a pod the readable part selects is refused", broken(badExpr), pod("x").Labels(map[string]string{"app": "web"}).OnNode("n1"), true},
		{"another namespace is never touched", broken(badExpr), pod("x").Namespace("other").Labels(map[string]string{"app": "web"}).OnNode("n1"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			covered, _, err := DomainOf(tc.tdb, tc.pod.Obj(), nodeLookup(threeZones()...))
			if covered != tc.wantCovered {
				t.Errorf("covered = %v, want %v (err %v)", covered, tc.wantCovered, err)
			}
			if covered && err == nil {
				t.Errorf("covered by a broken budget without an error")
			}
		})
	}
	// The budget itself says SyncFailed, naming the field.
	w := world{tdb: tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).Selector(spaceValue), nodes: threeZones()}
	res := Compute(w.input())
	reason, msg := res.Blocked()
	if reason != policyv1alpha1.ReasonSyncFailed || !contains(msg, "spec.selector") {
		t.Errorf("Blocked() = %q, %q; want SyncFailed naming spec.selector", reason, msg)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
