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
)

// Small builders for the tests of this package. Defaults describe the common
// case so that a table row only states what makes it special: a pod is in
// namespace "ns", labelled app=web, Running, not Ready and has no controller;
// a budget is ns/web selecting app=web.

const (
	zoneKey = "topology.kubernetes.io/zone"
	testNS  = "ns"
)

// t0 is the time of every computation unless a test says otherwise.
var t0 = time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC)

// at returns t0 shifted by d.
func at(d time.Duration) time.Time { return t0.Add(d) }

type podBuilder struct{ p corev1.Pod }

// pod returns a Running, not Ready, unscheduled pod ns/name labelled
// app=web, whose UID is "uid-<name>".
func pod(name string) *podBuilder {
	return &podBuilder{p: corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: testNS,
			UID:       types.UID("uid-" + name),
			Labels:    map[string]string{"app": "web"},
		},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}}
}

func (b *podBuilder) in(ns string) *podBuilder { b.p.Namespace = ns; return b }

// labels replaces the pod's labels with the given key/value pairs.
func (b *podBuilder) labels(kv ...string) *podBuilder {
	b.p.Labels = map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		b.p.Labels[kv[i]] = kv[i+1]
	}
	return b
}

func (b *podBuilder) onNode(n string) *podBuilder { b.p.Spec.NodeName = n; return b }

func (b *podBuilder) uid(u types.UID) *podBuilder { b.p.UID = u; return b }

func (b *podBuilder) ready() *podBuilder { return b.readyIs(corev1.ConditionTrue) }

func (b *podBuilder) notReady() *podBuilder { return b.readyIs(corev1.ConditionFalse) }

func (b *podBuilder) readyIs(s corev1.ConditionStatus) *podBuilder {
	b.p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: s}}
	return b
}

func (b *podBuilder) phase(p corev1.PodPhase) *podBuilder { b.p.Status.Phase = p; return b }

// pending makes the pod Pending and unscheduled.
func (b *podBuilder) pending() *podBuilder {
	b.p.Spec.NodeName = ""
	b.p.Status.Conditions = nil
	return b.phase(corev1.PodPending)
}

// deleting marks the pod as being deleted since t0.
func (b *podBuilder) deleting() *podBuilder {
	ts := metav1.NewTime(t0)
	b.p.DeletionTimestamp = &ts
	return b
}

// ownedBy gives the pod a controllerRef to a ReplicaSet with the given UID.
func (b *podBuilder) ownedBy(uid types.UID) *podBuilder {
	b.p.OwnerReferences = append(b.p.OwnerReferences, metav1.OwnerReference{
		APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs-" + string(uid), UID: uid,
		Controller: ptrTo(true),
	})
	return b
}

// referencedBy adds an ownerReference that is not a controllerRef.
func (b *podBuilder) referencedBy(uid types.UID) *podBuilder {
	b.p.OwnerReferences = append(b.p.OwnerReferences, metav1.OwnerReference{
		APIVersion: "v1", Kind: "ConfigMap", Name: "cm-" + string(uid), UID: uid,
	})
	return b
}

func (b *podBuilder) obj() *corev1.Pod { p := b.p.DeepCopy(); return p }

// pods builds every pod builder.
func pods(bs ...*podBuilder) []*corev1.Pod {
	out := make([]*corev1.Pod, 0, len(bs))
	for _, b := range bs {
		out = append(out, b.obj())
	}
	return out
}

// readyPods returns n Ready pods named prefix-0.. on node, owned by owner.
func readyPods(prefix, node string, owner types.UID, n int) []*podBuilder {
	out := make([]*podBuilder, 0, n)
	for i := range n {
		out = append(out, pod(prefix+"-"+itoa(i)).onNode(node).ready().ownedBy(owner))
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

type nodeBuilder struct{ n corev1.Node }

func node(name string) *nodeBuilder {
	return &nodeBuilder{n: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}}
}

func (b *nodeBuilder) zone(z string) *nodeBuilder { return b.label(zoneKey, z) }

func (b *nodeBuilder) label(k, v string) *nodeBuilder { b.n.Labels[k] = v; return b }

func (b *nodeBuilder) obj() *corev1.Node { return b.n.DeepCopy() }

// nodeLookup returns the Input.Nodes function over the given nodes.
func nodeLookup(bs ...*nodeBuilder) func(string) *corev1.Node {
	m := make(map[string]*corev1.Node, len(bs))
	for _, b := range bs {
		m[b.n.Name] = b.obj()
	}
	return func(name string) *corev1.Node { return m[name] }
}

// threeZones: n1 and n2 in zone-a, n3 in zone-b, n4 in zone-c.
func threeZones() []*nodeBuilder {
	return []*nodeBuilder{
		node("n1").zone("zone-a"), node("n2").zone("zone-a"),
		node("n3").zone("zone-b"), node("n4").zone("zone-c"),
	}
}

type tdbBuilder struct {
	t policyv1alpha1.TopologyDisruptionBudget
}

// tdb returns budget ns/name selecting app=web, with generation 1 and a
// status observed at generation 1, and no allowance field set.
func tdb(name string) *tdbBuilder {
	return &tdbBuilder{t: policyv1alpha1.TopologyDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNS, Generation: 1},
		Spec: policyv1alpha1.TopologyDisruptionBudgetSpec{
			Selector: policyv1alpha1.SetAsLabelSelector(map[string]string{"app": "web"}),
		},
		Status: policyv1alpha1.TopologyDisruptionBudgetStatus{ObservedGeneration: 1},
	}}
}

func (b *tdbBuilder) selector(s *policyv1alpha1.LabelSelector) *tdbBuilder {
	b.t.Spec.Selector = s
	return b
}

func (b *tdbBuilder) topologyKey(k string) *tdbBuilder { b.t.Spec.TopologyKey = k; return b }

func (b *tdbBuilder) zoned() *tdbBuilder { return b.topologyKey(zoneKey) }

func (b *tdbBuilder) maxUnavailable(v intstr.IntOrString) *tdbBuilder {
	b.t.Spec.MaxUnavailable, b.t.Spec.MinAvailable = &v, nil
	return b
}

func (b *tdbBuilder) minAvailable(v intstr.IntOrString) *tdbBuilder {
	b.t.Spec.MinAvailable, b.t.Spec.MaxUnavailable = &v, nil
	return b
}

func (b *tdbBuilder) maxDisruptedDomains(n int32) *tdbBuilder {
	b.t.Spec.MaxDisruptedDomains = &n
	return b
}

func (b *tdbBuilder) term(t policyv1alpha1.NodeSelectorTerm) *tdbBuilder {
	b.t.Spec.NodeSelectorTerm = &t
	return b
}

func (b *tdbBuilder) unhealthyPolicy(p policyv1alpha1.UnhealthyPodEvictionPolicyType) *tdbBuilder {
	b.t.Spec.UnhealthyPodEvictionPolicy = p
	return b
}

func (b *tdbBuilder) records(rs ...policyv1alpha1.DisruptedPod) *tdbBuilder {
	b.t.Status.DisruptedPods = rs
	return b
}

func (b *tdbBuilder) generation(gen, observed int64) *tdbBuilder {
	b.t.Generation, b.t.Status.ObservedGeneration = gen, observed
	return b
}

// status sets the status rows (with totals summed) for eviction tests.
func (b *tdbBuilder) status(rows ...policyv1alpha1.DomainStatus) *tdbBuilder {
	st := &b.t.Status
	st.Domains = rows
	st.ExpectedPods, st.CurrentHealthy, st.DisruptionsAllowed = 0, 0, 0
	for _, r := range rows {
		st.ExpectedPods += r.ExpectedPods
		st.CurrentHealthy += r.CurrentHealthy
		st.DisruptionsAllowed += r.DisruptionsAllowed
	}
	st.DomainCount = int32(len(rows))
	return b
}

func (b *tdbBuilder) condition(status metav1.ConditionStatus, reason, msg string) *tdbBuilder {
	b.t.Status.Conditions = []metav1.Condition{{
		Type: policyv1alpha1.ConditionDisruptionAllowed, Status: status, Reason: reason, Message: msg,
		ObservedGeneration: b.t.Status.ObservedGeneration, LastTransitionTime: metav1.NewTime(at(-time.Hour)),
	}}
	return b
}

func (b *tdbBuilder) obj() *policyv1alpha1.TopologyDisruptionBudget { return b.t.DeepCopy() }

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
	tdb    *tdbBuilder
	nodes  []*nodeBuilder
	pods   []*podBuilder
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
		Budget:        w.tdb.obj(),
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
