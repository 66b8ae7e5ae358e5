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

package builders

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

var t0 = time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC)

// The constructors set what their godoc says and nothing else.
func TestDefaults(t *testing.T) {
	template := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: ContainerName, Image: Image}}}}
	tests := []struct {
		name      string
		got, want any
	}{
		{"Pod", Pod("a-0").Obj(), &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a-0"}}},
		{"Node", Node("n1").Obj(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{}}}},
		{"Budget", Budget("web").Obj(), &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "web"}}},
		{"StatefulSet", StatefulSet("web").Obj(), &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.StatefulSetSpec{Template: template}}},
		{"Deployment", Deployment("web").Obj(), &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DeploymentSpec{Template: template}}},
		{"ReplicaSet", ReplicaSet("web").Obj(), &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.ReplicaSetSpec{Template: template}}},
		{"DaemonSet", DaemonSet("web").Obj(), &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: appsv1.DaemonSetSpec{Template: template}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestPod(t *testing.T) {
	labels := map[string]string{"app": "web"}
	rs := ReplicaSet("web-1").Namespace("ns").Obj()
	rs.UID = "rs-uid"
	got := Pod("web-1-a").Namespace("ns").UID("uid").Labels(labels).Label("zone", "a").Annotation("k", "v").
		CreatedAt(t0).ControlledBy(RefTo(rs)).ReferencedBy(metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "cm", Controller: ptr.To(true)}).
		Container(ContainerName, Image).OnNode("n1").Running().ReadySince(t0).Deleting(t0.Add(time.Minute)).IPs("10.0.0.1", "fd00::1").Obj()
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-1-a", Namespace: "ns", UID: "uid", Labels: map[string]string{"app": "web", "zone": "a"},
			Annotations: map[string]string{"k": "v"}, CreationTimestamp: metav1.NewTime(t0),
			DeletionTimestamp: ptr.To(metav1.NewTime(t0.Add(time.Minute))),
			OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-uid", Controller: ptr.To(true)},
				{APIVersion: "v1", Kind: "ConfigMap", Name: "cm", UID: "cm"},
			},
		},
		Spec: corev1.PodSpec{NodeName: "n1", Containers: []corev1.Container{{Name: ContainerName, Image: Image}}},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(t0)}},
			PodIP:      "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}, {IP: "fd00::1"}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pod (-want +got):\n%s", diff)
	}
	if labels["zone"] != "" {
		t.Errorf("Label changed the map given to Labels: %v", labels)
	}
}

func TestPodReadiness(t *testing.T) {
	ready := func(s corev1.ConditionStatus) []corev1.PodCondition {
		return []corev1.PodCondition{{Type: corev1.PodReady, Status: s}}
	}
	tests := []struct {
		name string
		got  *corev1.Pod
		want corev1.PodStatus
	}{
		{"Ready leaves the phase", Pod("a").Ready().Obj(), corev1.PodStatus{Conditions: ready(corev1.ConditionTrue)}},
		{"NotReady replaces Ready", Pod("a").Running().Ready().NotReady().Obj(),
			corev1.PodStatus{Phase: corev1.PodRunning, Conditions: ready(corev1.ConditionFalse)}},
		{"NotReadySince", Pod("a").NotReadySince(t0).Obj(), corev1.PodStatus{Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(t0)}}}},
		{"Pending unschedules and clears the conditions", Pod("a").OnNode("n1").Ready().Pending().Obj(),
			corev1.PodStatus{Phase: corev1.PodPending}},
		{"Phase", Pod("a").Phase(corev1.PodFailed).Obj(), corev1.PodStatus{Phase: corev1.PodFailed}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got.Status); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if tc.got.Spec.NodeName != "" && tc.want.Phase == corev1.PodPending {
				t.Errorf("a Pending pod is on node %q", tc.got.Spec.NodeName)
			}
		})
	}
}

// Obj returns a copy: a wrapper kept as a base does not change the objects
// it built.
func TestObjIsACopy(t *testing.T) {
	w := Pod("a").Label("app", "web")
	first := w.Obj()
	w.Label("app", "db").OnNode("n1")
	if first.Labels["app"] != "web" || first.Spec.NodeName != "" {
		t.Errorf("Obj() = %+v, changed by the wrapper afterwards", first)
	}
}

func TestNode(t *testing.T) {
	got := Node("n1").Labels(nil).Zone("zone-a").Label("rack", "1").Unschedulable().Obj()
	want := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{ZoneKey: "zone-a", "rack": "1"}},
		Spec:       corev1.NodeSpec{Unschedulable: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("node (-want +got):\n%s", diff)
	}
}

func TestWorkloads(t *testing.T) {
	labels := map[string]string{"app": "web"}
	template := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: ContainerName, Image: Image}}},
	}
	selector := &metav1.LabelSelector{MatchLabels: labels}
	dep := Deployment("web").Namespace("ns").Replicas(3).PodLabels(labels).
		RollingUpdate(intstr.FromInt32(1), intstr.FromString("25%")).Obj()
	dep.UID = "dep-uid"
	tests := []struct {
		name      string
		got, want any
	}{
		{"StatefulSet", StatefulSet("web").Namespace("ns").Replicas(6).PodLabels(labels).OnDelete().Annotation("k", "v").Obj(),
			&appsv1.StatefulSet{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: map[string]string{"k": "v"}},
				Spec: appsv1.StatefulSetSpec{Replicas: ptr.To(int32(6)), Selector: selector, Template: template,
					UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}},
			}},
		{"Deployment", dep, &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "dep-uid"},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(3)), Selector: selector, Template: template,
				Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxSurge: ptr.To(intstr.FromInt32(1)), MaxUnavailable: ptr.To(intstr.FromString("25%"))}}},
		}},
		{"ReplicaSet of a Deployment", ReplicaSet("web-2").Namespace("ns").Replicas(3).PodLabels(labels).Revision(2).ControlledBy(RefTo(dep)).Obj(),
			&appsv1.ReplicaSet{
				ObjectMeta: metav1.ObjectMeta{Name: "web-2", Namespace: "ns", Annotations: map[string]string{"deployment.kubernetes.io/revision": "2"},
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "dep-uid", Controller: ptr.To(true)}}},
				Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(3)), Selector: selector, Template: template},
			}},
		{"DaemonSet", DaemonSet("agent").PodLabels(labels).OnDelete().Obj(), &appsv1.DaemonSet{
			ObjectMeta: metav1.ObjectMeta{Name: "agent"},
			Spec: appsv1.DaemonSetSpec{Selector: selector, Template: template,
				UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A strategy or field the kind does not have is a mistake in the test.
func TestWorkloadMisusePanics(t *testing.T) {
	for name, build := range map[string]func(){
		"Replicas of a DaemonSet":          func() { DaemonSet("a").Replicas(1) },
		"OnDelete of a Deployment":         func() { Deployment("a").OnDelete() },
		"RollingUpdate of a StatefulSet":   func() { StatefulSet("a").RollingUpdate(intstr.FromInt32(1), intstr.FromInt32(0)) },
		"RefTo a TopologyDisruptionBudget": func() { RefTo(Budget("web").Obj()) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			build()
		})
	}
}

func TestBudget(t *testing.T) {
	row := func(name string, expected, healthy, allowed int32) policyv1alpha1.DomainStatus {
		return policyv1alpha1.DomainStatus{Name: name, ExpectedPods: expected, CurrentHealthy: healthy, DisruptionsAllowed: allowed}
	}
	term := policyv1alpha1.NodeSelectorTerm{MatchExpressions: []policyv1alpha1.NodeSelectorRequirement{{Key: ZoneKey, Operator: "NotIn", Values: []string{"zone-c"}}}}
	record := policyv1alpha1.DisruptedPod{Name: "a-0", Domain: "zone-a", Time: metav1.NewTime(t0)}
	cond := metav1.Condition{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionTrue}
	got := Budget("web").Namespace("ns").MatchLabels(map[string]string{"app": "web"}).TopologyKey(ZoneKey).
		MaxUnavailable(intstr.FromInt32(1)).MinAvailable(intstr.FromString("50%")).MaxDisruptedDomains(1).NodeSelectorTerm(term).
		UnhealthyPodEvictionPolicy(policyv1alpha1.AlwaysAllow).Rollout(policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain}).
		Generation(2).ObservedGeneration(1).DisruptedPods(record).StatusDomains(row("zone-a", 3, 2, 0), row("zone-b", 3, 3, 1)).Conditions(cond).Obj()
	want := &policyv1alpha1.TopologyDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 2},
		Spec: policyv1alpha1.TopologyDisruptionBudgetSpec{
			Selector:    &policyv1alpha1.LabelSelector{MatchLabels: map[string]policyv1alpha1.LabelValue{"app": "web"}},
			TopologyKey: ZoneKey, MaxUnavailable: ptr.To(intstr.FromInt32(1)), MinAvailable: ptr.To(intstr.FromString("50%")),
			MaxDisruptedDomains: ptr.To(int32(1)), NodeSelectorTerm: &term, UnhealthyPodEvictionPolicy: policyv1alpha1.AlwaysAllow,
			Rollout: &policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain},
		},
		Status: policyv1alpha1.TopologyDisruptionBudgetStatus{
			ObservedGeneration: 1, ExpectedPods: 6, CurrentHealthy: 5, DisruptionsAllowed: 1, DisruptedDomains: 1, DomainCount: 2,
			Domains:       []policyv1alpha1.DomainStatus{row("zone-a", 3, 2, 0), row("zone-b", 3, 3, 1)},
			DisruptedPods: []policyv1alpha1.DisruptedPod{record}, Conditions: []metav1.Condition{cond},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("budget (-want +got):\n%s", diff)
	}
}

// DomainCount overrides the count StatusDomains derives; UID and
// HostNetwork set what they name.
func TestOverridesAndIdentity(t *testing.T) {
	rowA := policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 3, DisruptionsAllowed: 1}
	gotBudget := Budget("web").UID("u1").StatusDomains(rowA).DomainCount(0).Obj()
	wantBudget := &policyv1alpha1.TopologyDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "u1"},
		Status: policyv1alpha1.TopologyDisruptionBudgetStatus{
			ExpectedPods: 3, CurrentHealthy: 3, DisruptionsAllowed: 1, Domains: []policyv1alpha1.DomainStatus{rowA},
		},
	}
	if diff := cmp.Diff(wantBudget, gotBudget); diff != "" {
		t.Errorf("budget (-want +got):\n%s", diff)
	}
	wantPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: corev1.PodSpec{HostNetwork: true}}
	if diff := cmp.Diff(wantPod, Pod("a").HostNetwork().Obj()); diff != "" {
		t.Errorf("pod (-want +got):\n%s", diff)
	}
}

func TestWorkloadPodTemplate(t *testing.T) {
	labels := map[string]string{"app": "web"}
	got := StatefulSet("web").Labels(labels).PodLabels(labels).PodAnnotations(map[string]string{"k": "v"}).
		Containers(corev1.Container{Name: "web", Image: "web:1"}).ParallelPodManagement().
		RequireNodeLabel("pool", "p").RequireNodeLabel(ZoneKey, "zone-a").
		Spread(corev1.LabelHostname, corev1.ScheduleAnyway).Obj()
	want := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels},
		Spec: appsv1.StatefulSetSpec{
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"k": "v"}},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "web", Image: "web:1"}},
					Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
						NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
							{Key: "pool", Operator: corev1.NodeSelectorOpIn, Values: []string{"p"}},
							{Key: ZoneKey, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-a"}},
						}}},
					}}},
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
						MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway,
						LabelSelector: &metav1.LabelSelector{MatchLabels: labels},
					}},
				},
			},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for name, build := range map[string]func(){
		"ParallelPodManagement of a Deployment": func() { Deployment("a").ParallelPodManagement() },
		"Spread before PodLabels":               func() { Deployment("a").Spread(ZoneKey, corev1.DoNotSchedule) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			build()
		})
	}
}

func TestBudgetSpec(t *testing.T) {
	spec := policyv1alpha1.TopologyDisruptionBudgetSpec{TopologyKey: ZoneKey, MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	got := Budget("web").Namespace("ns").Spec(spec).MaxDisruptedDomains(1).Obj()
	spec.MaxUnavailable.IntVal = 2
	want := &policyv1alpha1.TopologyDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: policyv1alpha1.TopologyDisruptionBudgetSpec{TopologyKey: ZoneKey, MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			MaxDisruptedDomains: ptr.To(int32(1))},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStatefulSetOnly(t *testing.T) {
	claim := corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}}
	got := StatefulSet("web").UpdateStrategy(appsv1.RollingUpdateStatefulSetStrategyType).VolumeClaimTemplates(claim).Obj()
	want := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.StatefulSetSpec{
			UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template:             corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: ContainerName, Image: Image}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{claim},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for name, build := range map[string]func(){
		"UpdateStrategy of a DaemonSet":        func() { DaemonSet("a").UpdateStrategy(appsv1.OnDeleteStatefulSetStrategyType) },
		"VolumeClaimTemplates of a Deployment": func() { Deployment("a").VolumeClaimTemplates(claim) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			build()
		})
	}
}
