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
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// The objects of these tests come from the shared builders, with this
// package's defaults so that a table row only states what makes it special:
// a pod is in namespace "ns", labelled app=web, Running, not Ready and has
// no controller; a budget is ns/web selecting app=web.

const (
	zoneKey = builders.ZoneKey
	testNS  = "ns"
)

// t0 is the time of every computation unless a test says otherwise.
var t0 = time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC)

// at returns t0 shifted by d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// pod returns a Running, not Ready (no Ready condition), unscheduled pod
// ns/name labelled app=web, whose UID is "uid-<name>".
func pod(name string) *builders.PodWrapper {
	return builders.Pod(name).Namespace(testNS).UID(types.UID("uid-" + name)).
		Labels(map[string]string{"app": "web"}).Running()
}

// replicaSet is a reference to the ReplicaSet rs-<uid>, for a pod's
// controllerRef.
func replicaSet(uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-" + string(uid), UID: uid}
}

// pods builds every pod.
func pods(ws ...*builders.PodWrapper) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.Obj())
	}
	return out
}

// readyPods returns n Ready pods named prefix-0.. on node, owned by owner.
func readyPods(prefix, node string, owner types.UID, n int) []*builders.PodWrapper {
	out := make([]*builders.PodWrapper, 0, n)
	for i := range n {
		out = append(out, pod(prefix+"-"+itoa(i)).OnNode(node).Ready().ControlledBy(replicaSet(owner)))
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

// unevenZones returns nine Ready pods of controller ctrl over threeZones:
// a-0..a-3 in zone-a (two on n1, two on n2), b-0..b-2 in zone-b (n3), c-0
// and c-1 in zone-c (n4).
func unevenZones(ctrl types.UID) []*builders.PodWrapper {
	on := func(name, node string) *builders.PodWrapper {
		return pod(name).OnNode(node).Ready().ControlledBy(replicaSet(ctrl))
	}
	return []*builders.PodWrapper{
		on("a-0", "n1"), on("a-1", "n1"), on("a-2", "n2"), on("a-3", "n2"),
		on("b-0", "n3"), on("b-1", "n3"), on("b-2", "n3"),
		on("c-0", "n4"), on("c-1", "n4"),
	}
}

// node is builders.Node, short for the tables.
func node(name string) *builders.NodeWrapper { return builders.Node(name) }

// nodeLookup returns the Input.Nodes function over the given nodes.
func nodeLookup(ws ...*builders.NodeWrapper) func(string) *corev1.Node {
	m := make(map[string]*corev1.Node, len(ws))
	for _, w := range ws {
		n := w.Obj()
		m[n.Name] = n
	}
	return func(name string) *corev1.Node { return m[name] }
}

// threeZones: n1 and n2 in zone-a, n3 in zone-b, n4 in zone-c.
func threeZones() []*builders.NodeWrapper {
	return []*builders.NodeWrapper{
		node("n1").Zone("zone-a"), node("n2").Zone("zone-a"),
		node("n3").Zone("zone-b"), node("n4").Zone("zone-c"),
	}
}

// tdb returns budget ns/name selecting app=web, with generation 1 and a
// status observed at generation 1, and no allowance field set.
func tdb(name string) *builders.BudgetWrapper {
	return builders.Budget(name).Namespace(testNS).MatchLabels(map[string]string{"app": "web"}).
		Generation(1).ObservedGeneration(1)
}

// disruptionAllowed is the DisruptionAllowed condition of a budget
// observed at generation 1, set an hour before t0.
func disruptionAllowed(status metav1.ConditionStatus, reason, msg string) metav1.Condition {
	return metav1.Condition{
		Type: policyv1alpha1.ConditionDisruptionAllowed, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: 1, LastTransitionTime: metav1.NewTime(at(-time.Hour)),
	}
}

// intOrPct parses "3" as an integer and "30%" as a percentage.
func intOrPct(s string) intstr.IntOrString { return intstr.Parse(s) }

// record is an eviction record of pod name (UID "uid-<name>") in domain,
// granted at t, whose pod's controller is ctrl.
func record(name, domain string, ctrl types.UID, t time.Time) policyv1alpha1.DisruptedPod {
	return policyv1alpha1.DisruptedPod{
		Name: name, UID: types.UID("uid-" + name), Domain: domain, ControllerUID: ctrl, Time: metav1.NewTime(t),
	}
}

// owners builds Input.Owners from owner values keyed by their own UID.
func owners(os ...Owner) map[types.UID]Owner {
	m := make(map[types.UID]Owner, len(os))
	for _, o := range os {
		m[o.UID] = o
	}
	return m
}

// owner is a ReplicaSet-like controller with the given scale.
func owner(uid types.UID, replicas int32) Owner {
	return Owner{UID: uid, Kind: "ReplicaSet", Name: "rs-" + string(uid), Replicas: replicas}
}

// row is one expected status row.
func row(name string, expected, healthy, desired, allowed int32) policyv1alpha1.DomainStatus {
	return policyv1alpha1.DomainStatus{
		Name: name, ExpectedPods: expected, CurrentHealthy: healthy, DesiredHealthy: desired, DisruptionsAllowed: allowed,
	}
}

// world is the input of one Compute call, built from builders.
type world struct {
	tdb    *builders.BudgetWrapper
	nodes  []*builders.NodeWrapper
	pods   []*builders.PodWrapper
	owners []Owner
	// ownerMap, when set, is Input.Owners as is (controllerRef UIDs that
	// resolve to another UID, as ReplicaSets resolve to their Deployment).
	ownerMap map[types.UID]Owner
	now      time.Time
}

func (w world) input() Input {
	now := w.now
	if now.IsZero() {
		now = t0
	}
	os := w.ownerMap
	if os == nil {
		os = owners(w.owners...)
	}
	return Input{
		Budget:        w.tdb.Obj(),
		Pods:          pods(w.pods...),
		Nodes:         nodeLookup(w.nodes...),
		Owners:        os,
		Now:           now,
		RecordTimeout: testRecordTimeout,
	}
}

// testRecordTimeout is the record timeout of the table tests, whose records
// are minutes old: policy/v1's DeletionTimeout, the default before grants
// were confirmed early.
const testRecordTimeout = 2 * time.Minute

// summary is what a user reads in status after a Compute, plus the
// problems the controller reports.
type summary struct {
	Domains                                    []policyv1alpha1.DomainStatus
	ExpectedPods, CurrentHealthy, AllowedTotal int32
	DisruptedPods                              []string
	ExpiredRecords                             []string
	DomainIssues                               []DomainIssue
	NoScale, UnmanagedPods                     []string
	Blocked                                    string
}

func summarize(r Result) summary {
	s := summary{
		Domains:      r.Domains,
		ExpectedPods: r.ExpectedPods, CurrentHealthy: r.CurrentHealthy, AllowedTotal: r.DisruptionsAllowed,
		DomainIssues: r.DomainIssues, NoScale: r.NoScale, UnmanagedPods: r.UnmanagedPods,
	}
	if len(s.Domains) == 0 {
		s.Domains = nil
	}
	for _, d := range r.DisruptedPods {
		s.DisruptedPods = append(s.DisruptedPods, d.Name+"@"+d.Domain)
	}
	for _, e := range r.ExpiredRecords {
		s.ExpiredRecords = append(s.ExpiredRecords, e.Pod)
	}
	s.Blocked, _ = r.Blocked()
	return s
}

// withRows is a summary of the given rows with their totals.
func withRows(rows ...policyv1alpha1.DomainStatus) summary {
	s := summary{Domains: rows}
	for _, r := range rows {
		s.ExpectedPods += r.ExpectedPods
		s.CurrentHealthy += r.CurrentHealthy
		s.AllowedTotal += r.DisruptionsAllowed
	}
	return s
}

// together sets the evictions allowed together, when maxDisruptedDomains
// makes it less than the rows' sum (AllowedTogether).
func (s summary) together(n int32) summary {
	s.AllowedTotal = n
	return s
}

// statusFrom turns a Result into the status the controller would write at
// the budget's generation, for eviction tests.
func statusFrom(b *policyv1alpha1.TopologyDisruptionBudget, r Result) policyv1alpha1.TopologyDisruptionBudgetStatus {
	st := policyv1alpha1.TopologyDisruptionBudgetStatus{
		ObservedGeneration: b.Generation,
		ExpectedPods:       r.ExpectedPods,
		CurrentHealthy:     r.CurrentHealthy,
		DisruptionsAllowed: r.DisruptionsAllowed,
		DomainCount:        int32(len(r.Domains)),
		Domains:            append([]policyv1alpha1.DomainStatus(nil), r.Domains...),
		DisruptedPods:      append([]policyv1alpha1.DisruptedPod(nil), r.DisruptedPods...),
	}
	reason, msg := r.Blocked()
	cond := metav1.Condition{
		Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionTrue,
		Reason: policyv1alpha1.ReasonSufficientPods, Message: "ok", ObservedGeneration: b.Generation,
		LastTransitionTime: metav1.NewTime(t0),
	}
	switch {
	case reason != "":
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, reason, msg
	case r.DisruptionsAllowed == 0:
		cond.Status, cond.Reason = metav1.ConditionFalse, policyv1alpha1.ReasonInsufficientPods
	}
	st.Conditions = []metav1.Condition{cond}
	return st
}

func ptrTo[T any](v T) *T { return &v }

// names are the pod names of records rs, for failure messages.
func names(rs []policyv1alpha1.DisruptedPod) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	return out
}
