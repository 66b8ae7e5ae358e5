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
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// The operator caches every pod, node and workload controller of the
// cluster. To keep memory small at tens of thousands of pods, the cache keeps
// only what the budget logic reads: identity, labels, owners, the node, the
// phase, readiness and deletion.

// CacheOptions returns the manager cache options with the transforms below.
func CacheOptions() cache.Options {
	return cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}:                              {Transform: stripPod},
			&corev1.Node{}:                             {Transform: stripNode},
			&appsv1.ReplicaSet{}:                       {Transform: stripWorkload},
			&appsv1.Deployment{}:                       {Transform: stripWorkload},
			&appsv1.StatefulSet{}:                      {Transform: stripWorkload},
			&appsv1.DaemonSet{}:                        {Transform: stripWorkload},
			&corev1.ReplicationController{}:            {Transform: stripWorkload},
			&policyv1alpha1.TopologyDisruptionBudget{}: {Transform: expandBudget},
		},
	}
}

// keptAnnotations are the pod annotations the operator reads: the deletion
// cost, and the marker of the budget that manages it.
var keptAnnotations = []string{budget.DeletionCostAnnotation, budget.DeletionCostBudgetAnnotation}

// ReplicaSetRevision tells a Deployment's newest ReplicaSet from its old
// ones, which the deletion-cost controller orders differently.
const ReplicaSetRevision = "deployment.kubernetes.io/revision"

func stripMeta(m *metav1.ObjectMeta, keepAnnotations []string) {
	m.ManagedFields = nil
	var ann map[string]string
	for _, k := range keepAnnotations {
		if v, ok := m.Annotations[k]; ok {
			if ann == nil {
				ann = map[string]string{}
			}
			ann[k] = v
		}
	}
	m.Annotations = ann
}

var _ toolscache.TransformFunc = stripPod

// expandBudget gives the cached budget every row of its status
// (budget.ExpandStatus): everything the operator decides reads the rows, and
// expanding once here spares every reader. A status that cannot be expanded
// is cached as stored: the domains it does not list refuse evictions as not
// in the status yet, until the status controller writes a new one.
func expandBudget(obj any) (any, error) {
	tdb, ok := obj.(*policyv1alpha1.TopologyDisruptionBudget)
	if !ok {
		return obj, nil
	}
	if err := budget.ExpandStatus(&tdb.Status); err != nil {
		log.Log.WithName("cache").Error(err, "cannot expand the status of a TopologyDisruptionBudget", "namespace", tdb.Namespace, "name", tdb.Name)
	}
	return tdb, nil
}

func stripPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	stripMeta(&pod.ObjectMeta, keptAnnotations)
	// The webhook tells a pod's address from the API server's by them
	// (webhook.PodIPIndex); pods in the host network share their node's.
	var ips []corev1.PodIP
	if !pod.Spec.HostNetwork {
		ips = pod.Status.PodIPs
	}
	pod.Spec = corev1.PodSpec{NodeName: pod.Spec.NodeName, SchedulerName: pod.Spec.SchedulerName}
	var ready []corev1.PodCondition
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			ready = append(ready, corev1.PodCondition{Type: c.Type, Status: c.Status, LastTransitionTime: c.LastTransitionTime})
		}
	}
	pod.Status = corev1.PodStatus{Phase: pod.Status.Phase, Conditions: ready, PodIPs: ips}
	return pod, nil
}

func stripNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	stripMeta(&node.ObjectMeta, nil)
	node.Spec = corev1.NodeSpec{Unschedulable: node.Spec.Unschedulable}
	node.Status = corev1.NodeStatus{}
	return node, nil
}

// DaemonSetTemplateGeneration is the DaemonSet annotation holding its
// template generation; the DaemonSet controller labels every pod it creates
// with it (pod-template-generation).
const DaemonSetTemplateGeneration = appsv1.DeprecatedTemplateGeneration

// stripWorkload keeps a workload controller's replicas, its pod template's
// labels (to map scale changes to budgets), its update strategy, for a
// ReplicaSet its Deployment revision and, for a StatefulSet or DaemonSet,
// the budget it hands its updates over to.
func stripWorkload(obj any) (any, error) {
	if o, ok := obj.(client.Object); ok {
		if k := kindOf(o); k != nil {
			k.strip(o)
		}
	}
	return obj, nil
}

func stripTemplate(t corev1.PodTemplateSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: t.Labels}}
}
