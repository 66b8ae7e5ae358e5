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

package kwokenv

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// Pods describes the pods of a test workload on the local cluster.
type Pods struct {
	// Namespace and App name the workload; its pods carry app=App.
	Namespace, App string
	// Labels are added to the pods' labels and, with app, form the
	// workload's selector.
	Labels map[string]string
	// Annotations go on the pod template.
	Annotations map[string]string
	// NodeLabel, when its key is set, is a node label the pods require
	// (a test pins its workload to the nodes it added).
	NodeLabel [2]string
	// Zone, when set, is the only zone the pods may run in.
	Zone string
	// ZoneSpread, when set, spreads the pods over zones with maxSkew 1 and
	// this action: DoNotSchedule keeps the zones within one pod of each
	// other, ScheduleAnyway only prefers that (so cordoning the nodes of
	// some zones can fill the others unevenly). The pods are always spread
	// over hostnames, softly.
	ZoneSpread corev1.UnsatisfiableConstraintAction
}

// selectorLabels are the workload's selector: app plus Labels.
func (p Pods) selectorLabels() map[string]string {
	out := map[string]string{"app": p.App}
	for k, v := range p.Labels {
		out[k] = v
	}
	return out
}

// Template is the pod template of the workload: one container, the node
// requirements and spread constraints Pods asks for.
func (p Pods) Template() corev1.PodTemplateSpec {
	return withPods(builders.ReplicaSet(""), p).Obj().Spec.Template
}

// withPods puts w in p's namespace with p's selector labels on it, its
// selector and its pods, and gives its pods one container, p's annotations,
// node requirements and spread constraints.
func withPods[T builders.Workload](w *builders.WorkloadWrapper[T], p Pods) *builders.WorkloadWrapper[T] {
	lbls := p.selectorLabels()
	annotations := map[string]string{}
	for k, v := range p.Annotations {
		annotations[k] = v
	}
	w.Namespace(p.Namespace).Labels(lbls).PodLabels(lbls).PodAnnotations(annotations).
		Containers(corev1.Container{Name: p.App, Image: p.App + ":e2e"}).
		Spread(corev1.LabelHostname, corev1.ScheduleAnyway)
	if p.ZoneSpread != "" {
		w.Spread(ZoneKey, p.ZoneSpread)
	}
	if p.NodeLabel[0] != "" {
		w.RequireNodeLabel(p.NodeLabel[0], p.NodeLabel[1])
	}
	if p.Zone != "" {
		w.RequireNodeLabel(ZoneKey, p.Zone)
	}
	return w
}

// OnDeleteStatefulSet is a StatefulSet of the pods with Parallel pod
// management and the OnDelete update strategy: a template change creates a
// new revision, and nothing but a deletion (here: the operator's evictions)
// replaces a pod. rolloutBudget, when set, is the budget its
// policy.tdb.dev/rollout-budget annotation hands its updates to.
func OnDeleteStatefulSet(p Pods, name string, replicas int32, rolloutBudget string) *appsv1.StatefulSet {
	w := withPods(builders.StatefulSet(name), p).Replicas(replicas).ParallelPodManagement().OnDelete()
	return handOver(w, rolloutBudget).Obj()
}

// OnDeleteDaemonSet is a DaemonSet of the pods with the OnDelete update
// strategy; rolloutBudget as for OnDeleteStatefulSet.
func OnDeleteDaemonSet(p Pods, name, rolloutBudget string) *appsv1.DaemonSet {
	return handOver(withPods(builders.DaemonSet(name), p).OnDelete(), rolloutBudget).Obj()
}

// handOver puts on w the annotation that lets budget update an OnDelete
// workload; none for "".
func handOver[T builders.Workload](w *builders.WorkloadWrapper[T], budget string) *builders.WorkloadWrapper[T] {
	if budget == "" {
		return w
	}
	return w.Annotation(policyv1alpha1.RolloutBudgetAnnotation, budget)
}

// RollingDeployment is a Deployment of the pods with a RollingUpdate
// strategy of maxSurge and maxUnavailable pods.
func RollingDeployment(p Pods, name string, replicas, maxSurge, maxUnavailable int32) *appsv1.Deployment {
	return withPods(builders.Deployment(name), p).Replicas(replicas).
		RollingUpdate(intstr.FromInt32(maxSurge), intstr.FromInt32(maxUnavailable)).Obj()
}
