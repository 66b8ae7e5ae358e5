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
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// The deletion-cost controller's unit tests: the situations of the
// integration suite (test/integration/controller/deletioncost_test.go), on
// a fake client, read as a user reads them: the pods' annotations.

// costWorld is one node per zone and the workloads and pods a case adds.
type costWorld struct {
	objects []client.Object
}

// replicaSet adds a ReplicaSet of pods labelled app, controlled by dep with
// the given revision when dep is set.
func (w *costWorld) replicaSet(name, app string, dep *appsv1.Deployment, revision int) *appsv1.ReplicaSet {
	b := builders.ReplicaSet(name).Namespace(fakeNS).PodLabels(map[string]string{"app": app})
	if dep != nil {
		b.Revision(revision).ControlledBy(builders.RefTo(dep))
	}
	rs := b.Obj()
	rs.UID = types.UID("uid-" + name)
	w.objects = append(w.objects, rs)
	return rs
}

func (w *costWorld) deployment(name, app string) *appsv1.Deployment {
	d := builders.Deployment(name).Namespace(fakeNS).PodLabels(map[string]string{"app": app}).Obj()
	d.UID = types.UID("uid-" + name)
	w.objects = append(w.objects, d)
	return d
}

// pods adds, per zone, n Ready pods of rs named <rs>-<zone>-<i>.
func (w *costWorld) pods(rs *appsv1.ReplicaSet, perZone map[string]int) {
	for _, z := range fakeZones {
		for i := range perZone[z] {
			w.pod(rs, fmt.Sprintf("%s-%s-%d", rs.Name, z, i), z)
		}
	}
}

// pod adds a Ready pod of rs in zone; annotations come in key, value pairs.
func (w *costWorld) pod(rs *appsv1.ReplicaSet, name, zone string, annotations ...string) *corev1.Pod {
	b := builders.Pod(name).Namespace(fakeNS).UID(types.UID("uid-" + name)).Labels(rs.Spec.Template.Labels).
		ControlledBy(builders.RefTo(rs)).CreatedAt(fakeT0).OnNode(nodeName(zone, 0)).Running().Ready()
	for i := 0; i+1 < len(annotations); i += 2 {
		b.Annotation(annotations[i], annotations[i+1])
	}
	p := b.Obj()
	w.objects = append(w.objects, p)
	return p
}

// webWorld is a ReplicaSet "web" of pods labelled app=web: three in
// zone-a, two in zone-b, one in zone-c.
func webWorld(w *costWorld) *appsv1.ReplicaSet {
	rs := w.replicaSet("web", "web", nil, 0)
	w.pods(rs, map[string]int{"zone-a": 3, "zone-b": 2, "zone-c": 1})
	return rs
}

// costs reads every pod's deletion cost and marker as "<cost> <budget>",
// "<cost>" without a marker, "" without either.
func (c *fakeCluster) costs(t *testing.T) map[string]string {
	t.Helper()
	var pods corev1.PodList
	if err := c.List(context.Background(), &pods, client.InNamespace(fakeNS)); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = strings.TrimSpace(p.Annotations[budget.DeletionCostAnnotation] + " " + p.Annotations[budget.DeletionCostBudgetAnnotation])
	}
	return out
}

// marked are the annotations of a pod the budget "web" costed.
func marked(cost int32) []string {
	return []string{budget.DeletionCostAnnotation, fmt.Sprint(cost), budget.DeletionCostBudgetAnnotation, "web"}
}

// webSpread is what webWorld's pods carry for the budget "web": in each
// zone, by name, the first costs minus the zone's size, the last -1.
var webSpread = map[string]string{
	"web-zone-a-0": "-3 web", "web-zone-a-1": "-2 web", "web-zone-a-2": "-1 web",
	"web-zone-b-0": "-2 web", "web-zone-b-1": "-1 web", "web-zone-c-0": "-1 web",
}

// webReleased is webWorld's pods without a cost or a marker.
var webReleased = map[string]string{
	"web-zone-a-0": "", "web-zone-a-1": "", "web-zone-a-2": "", "web-zone-b-0": "", "web-zone-b-1": "", "web-zone-c-0": "",
}

func TestDeletionCostReconcile(t *testing.T) {
	// costedWorld is webWorld with every pod carrying its cost already.
	costedWorld := func(w *costWorld) {
		rs := w.replicaSet("web", "web", nil, 0)
		for name, cost := range webSpread {
			zone := strings.TrimPrefix(name[:len(name)-2], "web-") // web-<zone>-<i>
			w.pod(rs, name, zone, budget.DeletionCostAnnotation, strings.Fields(cost)[0], budget.DeletionCostBudgetAnnotation, "web")
		}
	}
	tests := []struct {
		name  string
		world func(*costWorld)
		// tdb changes the budget.
		tdb        func(*policyv1alpha1.TopologyDisruptionBudget)
		operatorNS string
		want       map[string]string
		patches    int32
	}{
		{
			name:    "the largest zone's pods rank first, so any scale-down evens the zones out",
			world:   func(w *costWorld) { webWorld(w) },
			want:    webSpread,
			patches: 6,
		},
		{
			name:  "a zone without allowance, while the others have one, ranks last",
			world: func(w *costWorld) { webWorld(w) },
			tdb: func(tdb *policyv1alpha1.TopologyDisruptionBudget) {
				// Another workload's pod in zone-a is down.
				tdb.Status.Domains = []policyv1alpha1.DomainStatus{
					{Name: "zone-a", ExpectedPods: 4, CurrentHealthy: 3, DesiredHealthy: 3},
					{Name: "zone-b", ExpectedPods: 2, CurrentHealthy: 2, DesiredHealthy: 1, DisruptionsAllowed: 1},
					{Name: "zone-c", ExpectedPods: 1, CurrentHealthy: 1, DisruptionsAllowed: 1},
				}
			},
			want: map[string]string{
				"web-zone-a-0": "99999997 web", "web-zone-a-1": "99999998 web", "web-zone-a-2": "99999999 web",
				"web-zone-b-0": "-2 web", "web-zone-b-1": "-1 web", "web-zone-c-0": "-1 web",
			},
			patches: 6,
		},
		{
			name: "a cost someone else set is never taken over, on a pod the budget covers or not",
			world: func(w *costWorld) {
				rs := webWorld(w)
				w.pod(rs, "web-zone-a-own", "zone-a", budget.DeletionCostAnnotation, "7")
				w.pod(w.replicaSet("foreign", "foreign", nil, 0), "foreign-0", "zone-a", budget.DeletionCostAnnotation, "42")
			},
			want: map[string]string{
				// web-zone-a-own counts in zone-a's spread.
				"web-zone-a-0": "-4 web", "web-zone-a-1": "-3 web", "web-zone-a-2": "-2 web", "web-zone-a-own": "7",
				"web-zone-b-0": "-2 web", "web-zone-b-1": "-1 web", "web-zone-c-0": "-1 web", "foreign-0": "42",
			},
			patches: 6,
		},
		{
			name: "a marked pod the selector no longer matches is released",
			world: func(w *costWorld) {
				webWorld(w)
				w.pod(w.replicaSet("retired", "retired", nil, 0), "retired-0", "zone-a", marked(-4)...)
			},
			want:    map[string]string{"retired-0": "", "web-zone-a-0": "-3 web", "web-zone-a-1": "-2 web", "web-zone-a-2": "-1 web", "web-zone-b-0": "-2 web", "web-zone-b-1": "-1 web", "web-zone-c-0": "-1 web"},
			patches: 7,
		},
		{
			name: "a pod whose ReplicaSet is not in the cache yet keeps its cost until it is",
			world: func(w *costWorld) {
				webWorld(w)
				late := builders.ReplicaSet("late").Namespace(fakeNS).PodLabels(map[string]string{"app": "web"}).Obj()
				late.UID = "uid-late"
				w.pod(late, "late-0", "zone-a", marked(-9)...)
			},
			want: map[string]string{
				"late-0": "-9 web", "web-zone-a-0": "-3 web", "web-zone-a-1": "-2 web", "web-zone-a-2": "-1 web",
				"web-zone-b-0": "-2 web", "web-zone-b-1": "-1 web", "web-zone-c-0": "-1 web",
			},
			patches: 6,
		},
		{
			name: "spec.rollout removed: a pod another budget marked is left to it",
			world: func(w *costWorld) {
				w.pod(w.replicaSet("web", "web", nil, 0), "web-zone-a-0", "zone-a",
					budget.DeletionCostAnnotation, "-1", budget.DeletionCostBudgetAnnotation, "other")
			},
			tdb:  func(tdb *policyv1alpha1.TopologyDisruptionBudget) { tdb.Spec.Rollout = nil },
			want: map[string]string{"web-zone-a-0": "-1 other"},
		},
		{
			name:       "the operator's own namespace: no cost, and the costs the budget set are released",
			world:      costedWorld,
			operatorNS: fakeNS,
			want:       webReleased,
			patches:    6,
		},
		{
			name: "a Deployment rolled out domain by domain: its old pods leave in domain order",
			world: func(w *costWorld) {
				dep := w.deployment("web", "web")
				w.pods(w.replicaSet("web-1", "web", dep, 1), map[string]int{"zone-a": 2, "zone-b": 2, "zone-c": 2})
				w.pod(w.replicaSet("web-2", "web", dep, 2), "web-2-zone-b-0", "zone-b")
			},
			tdb: func(tdb *policyv1alpha1.TopologyDisruptionBudget) { tdb.Spec.Rollout.DomainOrder = []string{"zone-b"} },
			want: map[string]string{
				// Old pods: zone-b (listed) first, then zone-a and zone-c
				// by name, a domain band apart; the new pod by the spread.
				"web-1-zone-b-0": "-2 web", "web-1-zone-b-1": "-1 web",
				"web-1-zone-a-0": "99998 web", "web-1-zone-a-1": "99999 web",
				"web-1-zone-c-0": "199998 web", "web-1-zone-c-1": "199999 web",
				"web-2-zone-b-0": "-1 web",
			},
			patches: 7,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &costWorld{objects: zoneNodes(1)}
			tc.world(w)
			tdb := created(zonedBudget("web", "web").Rollout(policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain}).Obj())
			if tc.tdb != nil {
				tc.tdb(tdb)
			}
			c := newFakeCluster(t, append(w.objects, tdb)...)
			r := &DeletionCostReconciler{Client: c, OperatorNamespace: tc.operatorNS, Snapshots: &snapshot.Gatherer{Cache: c}}

			if res := reconcileBudget(t, r, "web"); res.RequeueAfter != 0 {
				t.Errorf("RequeueAfter = %v, want none", res.RequeueAfter)
			}
			if diff := cmp.Diff(tc.want, c.costs(t)); diff != "" {
				t.Errorf("pods' deletion cost and marker (-want +got):\n%s", diff)
			}
			if n := c.podPatches.Load(); n != tc.patches {
				t.Errorf("%d pod patches, want %d (one per pod whose annotations change)", n, tc.patches)
			}
			// Settled: the next pass patches nothing.
			reconcileBudget(t, r, "web")
			if n := c.podPatches.Load(); n != tc.patches {
				t.Errorf("a second pass patched %d pods, want none", n-tc.patches)
			}
		})
	}
}

// A budget's costs, as the user changes it: set, released when
// spec.rollout is removed, set again when it is back, released when the
// budget is deleted.
func TestDeletionCostReconcileFollowsSpecRollout(t *testing.T) {
	w := &costWorld{objects: zoneNodes(1)}
	webWorld(w)
	tdb := created(zonedBudget("web", "web").Rollout(policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain}).Obj())
	c := newFakeCluster(t, append(w.objects, tdb)...)
	r := &DeletionCostReconciler{Client: c, Snapshots: &snapshot.Gatherer{Cache: c}}
	ctx := context.Background()
	setRollout := func(ro *policyv1alpha1.RolloutSpec) {
		t.Helper()
		cur := c.budgetNamed(t, "web")
		cur.Spec.Rollout = ro
		cur.Generation++
		if err := c.Update(ctx, cur); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		name   string
		change func()
		want   map[string]string
	}{
		{"created", func() {}, webSpread},
		{"spec.rollout removed", func() { setRollout(nil) }, webReleased},
		{"spec.rollout set again", func() { setRollout(&policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.AllDomains}) }, webSpread},
		{"budget deleted", func() {
			if err := c.Delete(ctx, c.budgetNamed(t, "web")); err != nil {
				t.Fatal(err)
			}
		}, webReleased},
	}
	for _, s := range steps {
		s.change()
		reconcileBudget(t, r, "web")
		if diff := cmp.Diff(s.want, c.costs(t)); diff != "" {
			t.Errorf("%s: pods' deletion cost and marker (-want +got):\n%s", s.name, diff)
		}
	}
}

// Pods marked by a budget deleted while the operator was down are released
// at start-up through the pods' Create events (the initial list), which
// must reach the budget named.
func TestAMarkedPodsCreateEventReachesItsBudget(t *testing.T) {
	pod := builders.Pod("web-zone-a-0").Namespace(fakeNS).Label("app", "web").
		Annotation(budget.DeletionCostAnnotation, "-3").Annotation(budget.DeletionCostBudgetAnnotation, "gone").Obj()
	e := event.CreateEvent{Object: pod}
	if !(costInputsOfPodChanged{}).Create(e) {
		t.Error("old predicate: a marked pod's Create event is dropped")
	}
	if !(costAnnotationsChanged{}).Create(e) {
		t.Error("new predicate: a marked pod's Create event (start-up list) is dropped: nothing ever reconciles the deleted budget \"gone\", its marks stay")
	}
	// Reconciling the name would release it (what the old trigger did).
	c := newFakeCluster(t, pod)
	costs := &DeletionCostReconciler{Client: c, Snapshots: &snapshot.Gatherer{Cache: c}, Passes: NewStatusPasses()}
	reconcileBudget(t, costs, "gone")
	if got := c.costs(t)["web-zone-a-0"]; got != "" {
		t.Errorf("reconciling the gone budget leaves %q", got)
	}
}
