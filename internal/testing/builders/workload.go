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
	"fmt"
	"maps"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Workload is one of the apps/v1 kinds whose pods a budget covers.
type Workload interface {
	appsv1.StatefulSet | appsv1.Deployment | appsv1.ReplicaSet | appsv1.DaemonSet
}

// WorkloadWrapper builds a workload of kind T. StatefulSet, Deployment,
// ReplicaSet and DaemonSet make one; what the kinds share (metadata,
// replicas, selector, pod template) is set the same way for all.
//
// A new workload has its name and a pod template of one container,
// ContainerName running Image, and nothing else: no namespace, replicas (the
// API server defaults them to 1), selector or pod labels (PodLabels sets
// both, which the API server requires), and no update strategy (the API
// server defaults it to RollingUpdate).
type WorkloadWrapper[T Workload] struct{ obj T }

// StatefulSet returns a wrapper of a new StatefulSet named name.
func StatefulSet(name string) *WorkloadWrapper[appsv1.StatefulSet] {
	return newWorkload[appsv1.StatefulSet](name)
}

// Deployment returns a wrapper of a new Deployment named name.
func Deployment(name string) *WorkloadWrapper[appsv1.Deployment] {
	return newWorkload[appsv1.Deployment](name)
}

// ReplicaSet returns a wrapper of a new ReplicaSet named name.
func ReplicaSet(name string) *WorkloadWrapper[appsv1.ReplicaSet] {
	return newWorkload[appsv1.ReplicaSet](name)
}

// DaemonSet returns a wrapper of a new DaemonSet named name.
func DaemonSet(name string) *WorkloadWrapper[appsv1.DaemonSet] {
	return newWorkload[appsv1.DaemonSet](name)
}

// newWorkload is a new workload named name (see WorkloadWrapper).
func newWorkload[T Workload](name string) *WorkloadWrapper[T] {
	w := &WorkloadWrapper[T]{}
	p := w.parts()
	p.meta.Name = name
	p.template.Spec.Containers = []corev1.Container{{Name: ContainerName, Image: Image}}
	return w
}

// workloadParts points into the fields every workload kind has.
type workloadParts struct {
	meta     *metav1.ObjectMeta
	replicas **int32 // nil for a DaemonSet, which has none
	selector **metav1.LabelSelector
	template *corev1.PodTemplateSpec
}

func (w *WorkloadWrapper[T]) parts() workloadParts {
	switch o := any(&w.obj).(type) {
	case *appsv1.StatefulSet:
		return workloadParts{&o.ObjectMeta, &o.Spec.Replicas, &o.Spec.Selector, &o.Spec.Template}
	case *appsv1.Deployment:
		return workloadParts{&o.ObjectMeta, &o.Spec.Replicas, &o.Spec.Selector, &o.Spec.Template}
	case *appsv1.ReplicaSet:
		return workloadParts{&o.ObjectMeta, &o.Spec.Replicas, &o.Spec.Selector, &o.Spec.Template}
	case *appsv1.DaemonSet:
		return workloadParts{&o.ObjectMeta, nil, &o.Spec.Selector, &o.Spec.Template}
	}
	panic(fmt.Sprintf("builders: %T is not a workload kind", w.obj)) // unreachable: Workload lists the kinds
}

// Obj returns a copy of the workload built so far.
func (w *WorkloadWrapper[T]) Obj() *T {
	switch o := any(&w.obj).(type) {
	case *appsv1.StatefulSet:
		return any(o.DeepCopy()).(*T)
	case *appsv1.Deployment:
		return any(o.DeepCopy()).(*T)
	case *appsv1.ReplicaSet:
		return any(o.DeepCopy()).(*T)
	case *appsv1.DaemonSet:
		return any(o.DeepCopy()).(*T)
	}
	panic(fmt.Sprintf("builders: %T is not a workload kind", w.obj)) // unreachable: Workload lists the kinds
}

// Namespace puts the workload in namespace ns.
func (w *WorkloadWrapper[T]) Namespace(ns string) *WorkloadWrapper[T] {
	w.parts().meta.Namespace = ns
	return w
}

// Replicas sets spec.replicas. A DaemonSet has none: the call panics, as
// it is a mistake in the test.
func (w *WorkloadWrapper[T]) Replicas(n int32) *WorkloadWrapper[T] {
	p := w.parts()
	if p.replicas == nil {
		panic(fmt.Sprintf("builders: a %T has no replicas", w.obj))
	}
	*p.replicas = ptr.To(n)
	return w
}

// PodLabels sets the workload's selector to match labels and its pod
// template's labels to a copy of labels.
func (w *WorkloadWrapper[T]) PodLabels(labels map[string]string) *WorkloadWrapper[T] {
	p := w.parts()
	*p.selector = &metav1.LabelSelector{MatchLabels: maps.Clone(labels)}
	p.template.Labels = maps.Clone(labels)
	return w
}

// Annotation adds the annotation key=value to the workload (not to its pod
// template).
func (w *WorkloadWrapper[T]) Annotation(key, value string) *WorkloadWrapper[T] {
	m := w.parts().meta
	m.Annotations = withEntry(m.Annotations, key, value)
	return w
}

// Revision sets the deployment.kubernetes.io/revision annotation, which the
// Deployment controller puts on the ReplicaSets of a Deployment.
func (w *WorkloadWrapper[T]) Revision(n int) *WorkloadWrapper[T] {
	return w.Annotation("deployment.kubernetes.io/revision", strconv.Itoa(n))
}

// ControlledBy adds ref as the workload's controllerRef (controller: true),
// as a Deployment controls its ReplicaSets.
func (w *WorkloadWrapper[T]) ControlledBy(ref metav1.OwnerReference) *WorkloadWrapper[T] {
	ref.Controller = ptr.To(true)
	m := w.parts().meta
	m.OwnerReferences = append(m.OwnerReferences, ref)
	return w
}

// OnDelete sets the OnDelete update strategy: a new revision replaces a
// pod only when the pod is deleted. Only a StatefulSet and a DaemonSet have
// it; for another kind the call panics, as it is a mistake in the test.
func (w *WorkloadWrapper[T]) OnDelete() *WorkloadWrapper[T] {
	switch o := any(&w.obj).(type) {
	case *appsv1.StatefulSet:
		o.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	case *appsv1.DaemonSet:
		o.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	default:
		panic(fmt.Sprintf("builders: a %T has no OnDelete update strategy", w.obj))
	}
	return w
}

// RollingUpdate sets the RollingUpdate strategy of a Deployment or a
// DaemonSet with maxSurge and maxUnavailable (integers or percentages).
// For another kind the call panics, as it is a mistake in the test.
func (w *WorkloadWrapper[T]) RollingUpdate(maxSurge, maxUnavailable intstr.IntOrString) *WorkloadWrapper[T] {
	switch o := any(&w.obj).(type) {
	case *appsv1.Deployment:
		o.Spec.Strategy = appsv1.DeploymentStrategy{
			Type:          appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &maxSurge, MaxUnavailable: &maxUnavailable},
		}
	case *appsv1.DaemonSet:
		o.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{
			Type:          appsv1.RollingUpdateDaemonSetStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxSurge: &maxSurge, MaxUnavailable: &maxUnavailable},
		}
	default:
		panic(fmt.Sprintf("builders: RollingUpdate builds a Deployment or a DaemonSet, not a %T", w.obj))
	}
	return w
}

// Labels replaces the workload's own labels (not its pod template's) with a
// copy of labels.
func (w *WorkloadWrapper[T]) Labels(labels map[string]string) *WorkloadWrapper[T] {
	w.parts().meta.Labels = maps.Clone(labels)
	return w
}

// PodAnnotations replaces the pod template's annotations with a copy of
// annotations (nil stays nil, empty stays empty).
func (w *WorkloadWrapper[T]) PodAnnotations(annotations map[string]string) *WorkloadWrapper[T] {
	w.parts().template.Annotations = maps.Clone(annotations)
	return w
}

// Containers replaces the pod template's containers, the one ContainerName
// running Image of a new workload, with containers.
func (w *WorkloadWrapper[T]) Containers(containers ...corev1.Container) *WorkloadWrapper[T] {
	w.parts().template.Spec.Containers = containers
	return w
}

// RequireNodeLabel adds to the pod template's required node affinity (one
// node selector term, made on the first call) the requirement that the
// node's label key be value.
func (w *WorkloadWrapper[T]) RequireNodeLabel(key, value string) *WorkloadWrapper[T] {
	spec := &w.parts().template.Spec
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &corev1.NodeAffinity{}
	}
	na := spec.Affinity.NodeAffinity
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{}}}
	}
	term := &na.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0]
	term.MatchExpressions = append(term.MatchExpressions, corev1.NodeSelectorRequirement{
		Key: key, Operator: corev1.NodeSelectorOpIn, Values: []string{value},
	})
	return w
}

// Spread adds to the pod template a topology spread constraint over the
// node label key with maxSkew 1 and the action when, counting the pods
// with the template's labels as they are now: call it after PodLabels, or
// the call panics, as it is a mistake in the test.
func (w *WorkloadWrapper[T]) Spread(key string, when corev1.UnsatisfiableConstraintAction) *WorkloadWrapper[T] {
	t := w.parts().template
	if t.Labels == nil {
		panic("builders: Spread before PodLabels")
	}
	t.Spec.TopologySpreadConstraints = append(t.Spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
		MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: when,
		LabelSelector: &metav1.LabelSelector{MatchLabels: maps.Clone(t.Labels)},
	})
	return w
}

// ParallelPodManagement sets a StatefulSet's Parallel pod management: its
// pods are created and deleted all at once, not one by one. Only a
// StatefulSet has it; for another kind the call panics, as it is a mistake
// in the test.
func (w *WorkloadWrapper[T]) ParallelPodManagement() *WorkloadWrapper[T] {
	o, ok := any(&w.obj).(*appsv1.StatefulSet)
	if !ok {
		panic(fmt.Sprintf("builders: a %T has no pod management policy", w.obj))
	}
	o.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	return w
}

// UpdateStrategy sets a StatefulSet's update strategy to type t alone,
// without rollingUpdate parameters: the API server's defaults. Only a
// StatefulSet takes a StatefulSetUpdateStrategyType; for another kind the
// call panics, as it is a mistake in the test.
func (w *WorkloadWrapper[T]) UpdateStrategy(t appsv1.StatefulSetUpdateStrategyType) *WorkloadWrapper[T] {
	o, ok := any(&w.obj).(*appsv1.StatefulSet)
	if !ok {
		panic(fmt.Sprintf("builders: a %T has no StatefulSet update strategy", w.obj))
	}
	o.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: t}
	return w
}

// VolumeClaimTemplates replaces a StatefulSet's volume claim templates, the
// claims each pod gets one of, with claims. Only a StatefulSet has them;
// for another kind the call panics, as it is a mistake in the test.
func (w *WorkloadWrapper[T]) VolumeClaimTemplates(claims ...corev1.PersistentVolumeClaim) *WorkloadWrapper[T] {
	o, ok := any(&w.obj).(*appsv1.StatefulSet)
	if !ok {
		panic(fmt.Sprintf("builders: a %T has no volume claim templates", w.obj))
	}
	o.Spec.VolumeClaimTemplates = claims
	return w
}
