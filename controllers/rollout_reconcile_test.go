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
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// The rollout driver's unit tests: the integration suite's world
// (test/integration/webhook/rollout_test.go), an OnDelete StatefulSet "db"
// of two pods per zone, reconciled once on a fake client. The fake client
// grants every eviction by deleting the pod; no webhook writes records.

const (
	oldRevision = "db-rev-1"
	newRevision = "db-rev-2"
)

// rolloutWorld returns one node per zone and the StatefulSet db, OnDelete,
// handed over to the budget db, its controller caught up on newRevision;
// its six pods, db-<i> in zone i%3, run oldRevision and are Ready.
func rolloutWorld() (*appsv1.StatefulSet, []client.Object) {
	labels := map[string]string{"app": "ingester"}
	sts := builders.StatefulSet("db").Namespace(fakeNS).Replicas(6).PodLabels(labels).OnDelete().
		Annotation(policyv1alpha1.RolloutBudgetAnnotation, "db").Obj()
	sts.UID, sts.Generation = "uid-db", 1
	sts.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1, Replicas: 6, CurrentRevision: oldRevision, UpdateRevision: newRevision}
	objs := zoneNodes(1)
	for i := range 6 {
		name := fmt.Sprintf("db-%d", i)
		objs = append(objs, builders.Pod(name).Namespace(fakeNS).UID(types.UID("uid-"+name)).Labels(labels).
			Label(appsv1.ControllerRevisionHashLabelKey, oldRevision).ControlledBy(builders.RefTo(sts)).
			OnNode(nodeName(fakeZones[i%3], 0)).Running().Ready().Obj())
	}
	return sts, objs
}

// dbBudget is the budget db over the world's pods, its status current
// for its spec: each zone may lose one pod.
func dbBudget(strategy policyv1alpha1.RolloutStrategyType) *policyv1alpha1.TopologyDisruptionBudget {
	row := func(zone string) policyv1alpha1.DomainStatus {
		return policyv1alpha1.DomainStatus{Name: zone, ExpectedPods: 2, CurrentHealthy: 2, DesiredHealthy: 1, DisruptionsAllowed: 1}
	}
	return created(zonedBudget("db", "ingester").Rollout(policyv1alpha1.RolloutSpec{Strategy: strategy}).
		ObservedGeneration(1).StatusDomains(row("zone-a"), row("zone-b"), row("zone-c")).Obj())
}

// dbRow is the StatefulSet's row in status.rollout.workloads.
func dbRow(strategy, revision, drivenBy string, updated int32) policyv1alpha1.RolloutWorkloadStatus {
	return policyv1alpha1.RolloutWorkloadStatus{
		Kind: "StatefulSet", Name: "db", UpdateStrategy: strategy, UpdateRevision: revision, DrivenBy: drivenBy,
		UpdatedPods: updated, TotalPods: 6, NextScaleDownPod: "db-5", NextScaleDownDomain: "zone-c",
	}
}

func domainRow(zone string, phase policyv1alpha1.RolloutPhase, updated int32, progress bool) policyv1alpha1.RolloutDomainStatus {
	d := policyv1alpha1.RolloutDomainStatus{Name: zone, Phase: phase, UpdatedPods: updated, TotalPods: 2}
	if progress {
		d.LastProgressTime = &metav1.Time{Time: fakeT0}
	}
	return d
}

// cond is a condition as the tests check it: its message contains Message.
type cond struct {
	Type    string
	Status  metav1.ConditionStatus
	Reason  string
	Message string
}

// rolloutConds are the two rollout conditions, with one reason and message.
func rolloutConds(progressing, complete metav1.ConditionStatus, reason, msg string) []cond {
	return []cond{
		{policyv1alpha1.ConditionRolloutProgressing, progressing, reason, msg},
		{policyv1alpha1.ConditionRolloutComplete, complete, reason, msg},
	}
}

func TestRolloutReconcile(t *testing.T) {
	tests := []struct {
		name       string
		sts        func(*appsv1.StatefulSet)
		tdb        func(*policyv1alpha1.TopologyDisruptionBudget)
		strategy   policyv1alpha1.RolloutStrategyType
		operatorNS string
		// rollout is the status.rollout written (nil: none); the
		// workloads' messages are checked apart, to contain message.
		rollout    *policyv1alpha1.RolloutStatus
		message    string
		conditions []cond
		evicted    []string
		events     []string
		requeue    time.Duration
		writes     int32
	}{
		{
			name: "a RollingUpdate StatefulSet: no workload to drive, the rollout is complete",
			sts: func(s *appsv1.StatefulSet) {
				s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{}
				s.Status.UpdateRevision = oldRevision
			},
			rollout:    &policyv1alpha1.RolloutStatus{Workloads: []policyv1alpha1.RolloutWorkloadStatus{dbRow("RollingUpdate", oldRevision, "", 6)}},
			conditions: rolloutConds(metav1.ConditionFalse, metav1.ConditionTrue, policyv1alpha1.ReasonNoDrivenWorkloads, "no covered StatefulSet or DaemonSet uses updateStrategy OnDelete"),
			writes:     1,
		},
		{
			name: "an OnDelete StatefulSet not handed over: nothing evicted, the status says how to hand it over",
			sts:  func(s *appsv1.StatefulSet) { delete(s.Annotations, policyv1alpha1.RolloutBudgetAnnotation) },
			rollout: &policyv1alpha1.RolloutStatus{
				Workloads: []policyv1alpha1.RolloutWorkloadStatus{dbRow("OnDelete", newRevision, "", 0)},
			},
			message:    "names no budget in its policy.tdb.dev/rollout-budget annotation; to let budget db update it: kubectl annotate statefulset db policy.tdb.dev/rollout-budget=db --overwrite",
			conditions: rolloutConds(metav1.ConditionFalse, metav1.ConditionFalse, policyv1alpha1.ReasonWorkloadNotHandedOver, "StatefulSet db"),
			writes:     1,
		},
		{
			name: "every driven pod at the update revision: complete, nothing evicted",
			sts:  func(s *appsv1.StatefulSet) { s.Status.UpdateRevision = oldRevision },
			rollout: &policyv1alpha1.RolloutStatus{
				Domains: []policyv1alpha1.RolloutDomainStatus{
					domainRow("zone-a", policyv1alpha1.RolloutPhaseComplete, 2, false),
					domainRow("zone-b", policyv1alpha1.RolloutPhaseComplete, 2, false),
					domainRow("zone-c", policyv1alpha1.RolloutPhaseComplete, 2, false),
				},
				Workloads: []policyv1alpha1.RolloutWorkloadStatus{dbRow("OnDelete", oldRevision, "db", 6)},
			},
			conditions: rolloutConds(metav1.ConditionFalse, metav1.ConditionTrue, policyv1alpha1.ReasonRolloutComplete, "every driven pod runs its workload's update revision"),
			writes:     1,
		},
		{
			name: "a new revision, DomainByDomain in domainOrder: the first listed zone's first pod is evicted",
			tdb:  func(tdb *policyv1alpha1.TopologyDisruptionBudget) { tdb.Spec.Rollout.DomainOrder = []string{"zone-b"} },
			rollout: &policyv1alpha1.RolloutStatus{
				CurrentDomain: "zone-b",
				Domains: []policyv1alpha1.RolloutDomainStatus{
					domainRow("zone-b", policyv1alpha1.RolloutPhaseProgressing, 0, true),
					domainRow("zone-a", policyv1alpha1.RolloutPhasePending, 0, false),
					domainRow("zone-c", policyv1alpha1.RolloutPhasePending, 0, false),
				},
				Workloads: []policyv1alpha1.RolloutWorkloadStatus{dbRow("OnDelete", newRevision, "db", 0)},
			},
			conditions: rolloutConds(metav1.ConditionTrue, metav1.ConditionFalse, policyv1alpha1.ReasonRolloutUpdating, "updating (DomainByDomain): zone-b 0/2 updated and Ready"),
			evicted:    []string{"db-1"},
			events:     []string{policyv1alpha1.EventReasonRolloutDomainStarted},
			// The eviction counts until the budget's status shows it.
			requeue: 2 * time.Second,
			writes:  1,
		},
		{
			name:     "a new revision, AllDomains: one pod per zone is evicted at once",
			strategy: policyv1alpha1.AllDomains,
			rollout: &policyv1alpha1.RolloutStatus{
				Domains: []policyv1alpha1.RolloutDomainStatus{
					domainRow("zone-a", policyv1alpha1.RolloutPhaseProgressing, 0, true),
					domainRow("zone-b", policyv1alpha1.RolloutPhaseProgressing, 0, true),
					domainRow("zone-c", policyv1alpha1.RolloutPhaseProgressing, 0, true),
				},
				Workloads: []policyv1alpha1.RolloutWorkloadStatus{dbRow("OnDelete", newRevision, "db", 0)},
			},
			conditions: rolloutConds(metav1.ConditionTrue, metav1.ConditionFalse, policyv1alpha1.ReasonRolloutUpdating, "updating (AllDomains): zone-a 0/2, zone-b 0/2, zone-c 0/2 updated and Ready"),
			evicted:    []string{"db-0", "db-1", "db-2"},
			events: []string{policyv1alpha1.EventReasonRolloutDomainStarted, policyv1alpha1.EventReasonRolloutDomainStarted,
				policyv1alpha1.EventReasonRolloutDomainStarted},
			requeue: 2 * time.Second,
			writes:  1,
		},
		{
			name:     "AllDomains with a zone whose allowance another workload spent: the other zones' pods are evicted",
			strategy: policyv1alpha1.AllDomains,
			tdb: func(tdb *policyv1alpha1.TopologyDisruptionBudget) {
				tdb.Status.Domains[0].CurrentHealthy, tdb.Status.Domains[0].DisruptionsAllowed = 1, 0
			},
			rollout: &policyv1alpha1.RolloutStatus{
				Domains: []policyv1alpha1.RolloutDomainStatus{
					domainRow("zone-a", policyv1alpha1.RolloutPhaseProgressing, 0, true),
					domainRow("zone-b", policyv1alpha1.RolloutPhaseProgressing, 0, true),
					domainRow("zone-c", policyv1alpha1.RolloutPhaseProgressing, 0, true),
				},
				Workloads: []policyv1alpha1.RolloutWorkloadStatus{dbRow("OnDelete", newRevision, "db", 0)},
			},
			conditions: rolloutConds(metav1.ConditionTrue, metav1.ConditionFalse, policyv1alpha1.ReasonRolloutUpdating, "updating (AllDomains)"),
			evicted:    []string{"db-1", "db-2"},
			events: []string{policyv1alpha1.EventReasonRolloutDomainStarted, policyv1alpha1.EventReasonRolloutDomainStarted,
				policyv1alpha1.EventReasonRolloutDomainStarted},
			requeue: 2 * time.Second,
			writes:  1,
		},
		{
			name: "paused: nothing evicted",
			tdb:  func(tdb *policyv1alpha1.TopologyDisruptionBudget) { tdb.Spec.Rollout.Paused = true },
			rollout: &policyv1alpha1.RolloutStatus{
				CurrentDomain: "zone-a",
				Domains: []policyv1alpha1.RolloutDomainStatus{
					domainRow("zone-a", policyv1alpha1.RolloutPhasePaused, 0, false),
					domainRow("zone-b", policyv1alpha1.RolloutPhasePending, 0, false),
					domainRow("zone-c", policyv1alpha1.RolloutPhasePending, 0, false),
				},
				Workloads: []policyv1alpha1.RolloutWorkloadStatus{dbRow("OnDelete", newRevision, "db", 0)},
			},
			conditions: rolloutConds(metav1.ConditionFalse, metav1.ConditionFalse, policyv1alpha1.ReasonRolloutPaused, "spec.rollout.paused is true"),
			writes:     1,
		},
		{
			name:       "the operator's own namespace: not enforced, nothing evicted",
			operatorNS: fakeNS,
			conditions: rolloutConds(metav1.ConditionFalse, metav1.ConditionFalse, policyv1alpha1.ReasonNotEnforced, "namespace "+fakeNS),
			writes:     1,
		},
		{
			name: "a status computed for an older spec: nothing evicted or written until the status controller catches up",
			tdb:  func(tdb *policyv1alpha1.TopologyDisruptionBudget) { tdb.Generation = 2 },
		},
		{
			name: "spec.rollout removed: the rollout status and conditions are cleared",
			tdb: func(tdb *policyv1alpha1.TopologyDisruptionBudget) {
				tdb.Spec.Rollout = nil
				tdb.Status.Rollout = &policyv1alpha1.RolloutStatus{CurrentDomain: "zone-a"}
				for _, c := range rolloutConds(metav1.ConditionTrue, metav1.ConditionFalse, policyv1alpha1.ReasonRolloutUpdating, "updating") {
					tdb.Status.Conditions = append(tdb.Status.Conditions, metav1.Condition{
						Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, LastTransitionTime: metav1.NewTime(fakeT0),
					})
				}
			},
			writes: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sts, objs := rolloutWorld()
			if tc.sts != nil {
				tc.sts(sts)
			}
			strategy := tc.strategy
			if strategy == "" {
				strategy = policyv1alpha1.DomainByDomain
			}
			tdb := dbBudget(strategy)
			if tc.tdb != nil {
				tc.tdb(tdb)
			}
			c := newFakeCluster(t, append(objs, sts, tdb)...)
			before := c.podNames(t)
			rec := events.NewFakeRecorder(10)
			r := &RolloutReconciler{
				Client: c, APIReader: c, Recorder: rec, Clock: clocktesting.NewFakeClock(fakeT0),
				OperatorNamespace: tc.operatorNS, Versions: &budgetstatus.Versions{}, Snapshots: &snapshot.Gatherer{Cache: c},
			}

			res := reconcileBudget(t, r, tdb.Name)

			got := c.budgetNamed(t, tdb.Name)
			var messages []string
			if ro := got.Status.Rollout; ro != nil {
				for i := range ro.Workloads {
					messages = append(messages, ro.Workloads[i].Message)
				}
			}
			if diff := cmp.Diff(tc.rollout, got.Status.Rollout,
				cmpopts.IgnoreFields(policyv1alpha1.RolloutWorkloadStatus{}, "Message")); diff != "" {
				t.Errorf("status.rollout (-want +got):\n%s", diff)
			}
			if tc.message != "" && (len(messages) != 1 || !strings.Contains(messages[0], tc.message)) {
				t.Errorf("workload messages %q, want one containing %q", messages, tc.message)
			}
			checkRolloutConditions(t, got, tc.conditions)
			evicted := slices.DeleteFunc(before, func(name string) bool { return slices.Contains(c.podNames(t), name) })
			if diff := cmp.Diff(tc.evicted, evicted, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("evicted pods (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.events, eventReasons(rec)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if res.RequeueAfter != tc.requeue {
				t.Errorf("RequeueAfter = %v, want %v", res.RequeueAfter, tc.requeue)
			}
			if n := c.statusWrites.Load(); n != tc.writes {
				t.Errorf("%d status writes, want %d", n, tc.writes)
			}
		})
	}
}

// checkRolloutConditions checks the rollout conditions are exactly want,
// set at the fake clock's time for the budget's generation, and that the
// status controller's condition is left alone.
func checkRolloutConditions(t *testing.T, tdb *policyv1alpha1.TopologyDisruptionBudget, want []cond) {
	t.Helper()
	var got []cond
	for _, c := range tdb.Status.Conditions {
		switch c.Type {
		case policyv1alpha1.ConditionRolloutProgressing, policyv1alpha1.ConditionRolloutComplete:
		default:
			continue
		}
		got = append(got, cond{c.Type, c.Status, c.Reason, c.Message})
		if !c.LastTransitionTime.Time.Equal(fakeT0) || c.ObservedGeneration != tdb.Generation {
			t.Errorf("condition %s at %v for generation %d, want %v and %d", c.Type, c.LastTransitionTime, c.ObservedGeneration, fakeT0, tdb.Generation)
		}
	}
	for i := range min(len(got), len(want)) {
		if strings.Contains(got[i].Message, want[i].Message) {
			got[i].Message = want[i].Message
		}
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("rollout conditions (-want +got, messages contain the wanted ones):\n%s", diff)
	}
	if apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed) != nil {
		t.Errorf("the rollout driver wrote the status controller's %s condition", policyv1alpha1.ConditionDisruptionAllowed)
	}
}

// A nodeSelectorTerm the CRD admits but the operator cannot evaluate
// (matchFields operator Exists): the rollout pass runs (no pod placed,
// status written) and returns no error, rather than failing every pass.
func TestRolloutPassRunsWithAnUnevaluableNodeTerm(t *testing.T) {
	sts, objs := rolloutWorld()
	tdb := dbBudget(policyv1alpha1.AllDomains)
	tdb.Spec.NodeSelectorTerm = &policyv1alpha1.NodeSelectorTerm{MatchFields: []policyv1alpha1.NodeFieldSelectorRequirement{
		{Key: "metadata.name", Operator: "Exists", Values: []string{"x"}}}}
	c := newFakeCluster(t, append(objs, sts, tdb)...)
	r := &RolloutReconciler{
		Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10), Clock: clocktesting.NewFakeClock(fakeT0),
		Versions: &budgetstatus.Versions{}, Snapshots: snapshotsFor(c),
	}
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: fakeNS, Name: tdb.Name}})
	got := c.budgetNamed(t, tdb.Name)
	t.Logf("err=%v statusWrites=%d rollout=%+v", err, c.statusWrites.Load(), got.Status.Rollout)
	for _, cd := range got.Status.Conditions {
		t.Logf("cond %s=%s %s: %s", cd.Type, cd.Status, cd.Reason, cd.Message)
	}
	if err != nil {
		t.Errorf("Reconcile: %v (behaviour change)", err)
	}
}

// nodeFailing is the fake cluster whose cache fails to read one node with
// an error other than not found.
type nodeFailing struct {
	*fakeCluster
	node string
}

func (c nodeFailing) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*corev1.Node); ok && key.Name == c.node {
		return errors.New("cache: timed out")
	}
	return c.fakeCluster.Get(ctx, key, obj, opts...)
}

// The rollout controller does not swallow node read errors: a pass on
// which a node read fails must not decide.
func TestRolloutPassFailsOnANodeReadError(t *testing.T) {
	sts, objs := rolloutWorld()
	tdb := dbBudget(policyv1alpha1.AllDomains)
	fc := newFakeCluster(t, append(objs, sts, tdb)...)
	c := nodeFailing{fakeCluster: fc, node: nodeName("zone-b", 0)}
	before := fc.podNames(t)
	r := &RolloutReconciler{
		Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10), Clock: clocktesting.NewFakeClock(fakeT0),
		Versions: &budgetstatus.Versions{}, Snapshots: &snapshot.Gatherer{Cache: c},
	}
	_, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: fakeNS, Name: tdb.Name}})
	evicted := slices.DeleteFunc(before, func(n string) bool { return slices.Contains(fc.podNames(t), n) })
	if err == nil {
		t.Errorf("Reconcile returned no error on a node read error; evicted %v", evicted)
	}
	if len(evicted) != 0 {
		t.Errorf("evicted %v on a pass whose node reads failed", evicted)
	}
}
