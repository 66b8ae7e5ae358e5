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

package snapshot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// The cache keeps exactly what the budget logic and the event mapping read;
// everything else is dropped to keep memory small.
func TestStripPodKeepsWhatBudgetsRead(t *testing.T) {
	now := metav1.Now()
	pod := builders.Pod("ingester-0").Namespace("mimir").UID("u1").Labels(map[string]string{"app": "ingester"}).
		Annotation("controller.kubernetes.io/pod-deletion-cost", "10").Annotation("policy.tdb.dev/deletion-cost-budget", "ingesters").
		Annotation("big", "x").ControlledBy(metav1.OwnerReference{Kind: "StatefulSet", Name: "ingester", UID: "s1"}).Deleting(now.Time).
		Container("c", "img").OnNode("n1").Running().IPs("10.0.0.7", "fd00::7").Obj()
	// What the builders leave out: fields of the API server, the scheduler
	// and the kubelet.
	pod.ResourceVersion, pod.ManagedFields = "7", []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	pod.Spec.SchedulerName = "default-scheduler"
	pod.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	pod.Status.Conditions = []corev1.PodCondition{
		{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
		{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now, Message: "m"},
	}
	pod.Status.ContainerStatuses, pod.Status.HostIP = []corev1.ContainerStatus{{Name: "c"}}, "192.168.0.1"
	got, err := stripPod(pod.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "ingester-0", Namespace: "mimir", UID: "u1", ResourceVersion: "7",
			Labels:            map[string]string{"app": "ingester"},
			Annotations:       map[string]string{"controller.kubernetes.io/pod-deletion-cost": "10", "policy.tdb.dev/deletion-cost-budget": "ingesters"},
			OwnerReferences:   pod.OwnerReferences,
			DeletionTimestamp: &now,
		},
		Spec: corev1.PodSpec{NodeName: "n1", SchedulerName: "default-scheduler"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now},
		}, PodIPs: pod.Status.PodIPs},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stripPod (-want +got):\n%s", diff)
	}
	// A pod in the host network has its node's address: not kept, so the
	// webhook never takes a node's address (the API server's, often) for a
	// pod's.
	host := pod.DeepCopy()
	host.Spec.HostNetwork = true
	got, _ = stripPod(host)
	if ips := got.(*corev1.Pod).Status.PodIPs; ips != nil {
		t.Errorf("host-network pod kept addresses %v", ips)
	}
}

// A node keeps its name and labels, which place pods in domains; its
// status (images, conditions, addresses), managed fields, annotations and
// taints, which nothing reads, are dropped.
func TestStripNodeKeepsLabels(t *testing.T) {
	node := builders.Node("n1").Zone("a").Unschedulable().Obj()
	node.Annotations, node.Spec.PodCIDR = map[string]string{"x": "y"}, "10.0.0.0/24"
	node.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}
	node.Spec.Taints = []corev1.Taint{{Key: "k", Effect: corev1.TaintEffectNoSchedule}}
	node.Status.Images = []corev1.ContainerImage{{Names: []string{"img"}}}
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.0.1"}}
	got, _ := stripNode(node.DeepCopy())
	want := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"topology.kubernetes.io/zone": "a"}},
		Spec:       corev1.NodeSpec{Unschedulable: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stripNode (-want +got):\n%s", diff)
	}
}

func TestStripWorkloadKeepsScaleAndTemplateLabels(t *testing.T) {
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "s1"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}, Annotations: map[string]string{"a": "b"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}},
			},
			UpdateStrategy:       appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{}},
		},
		Status: appsv1.StatefulSetStatus{Replicas: 3, UpdateRevision: "r2", CurrentRevision: "r1"},
	}
	got, _ := stripWorkload(sts.DeepCopy())
	want := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns", UID: "s1"},
		Spec: appsv1.StatefulSetSpec{
			Replicas:       ptr.To[int32](3),
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}},
			Template:       corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "x"}}},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
		},
		Status: appsv1.StatefulSetStatus{UpdateRevision: "r2", CurrentRevision: "r1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stripWorkload (-want +got):\n%s", diff)
	}
}

// The deletion-cost controller tells a Deployment's newest ReplicaSet by its
// revision annotation.
func TestStripWorkloadKeepsReplicaSetRevision(t *testing.T) {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-7d4", Namespace: "ns", UID: "r1",
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "3", "deployment.kubernetes.io/desired-replicas": "4"},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](4),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c"}}},
			},
		},
		Status: appsv1.ReplicaSetStatus{Replicas: 4},
	}
	got, _ := stripWorkload(rs.DeepCopy())
	want := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-7d4", Namespace: "ns", UID: "r1",
			Annotations: map[string]string{"deployment.kubernetes.io/revision": "3"},
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](4),
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stripWorkload (-want +got):\n%s", diff)
	}
}

// The rollout controller drives an OnDelete StatefulSet or DaemonSet only
// with its owner's consent: the annotation naming the budget survives the
// cache; other annotations do not.
func TestStripWorkloadKeepsTheRolloutConsent(t *testing.T) {
	consent := map[string]string{policyv1alpha1.RolloutBudgetAnnotation: "ingesters", "other": "x"}
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "s", Annotations: consent}}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "d", Annotations: consent}}
	for _, obj := range []client.Object{sts, ds} {
		got, _ := stripWorkload(obj.DeepCopyObject())
		ann := got.(client.Object).GetAnnotations()
		if ann[policyv1alpha1.RolloutBudgetAnnotation] != "ingesters" || ann["other"] != "" {
			t.Errorf("%T annotations after the cache: %v; want only the consent", obj, ann)
		}
	}
}
