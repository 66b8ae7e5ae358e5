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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
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
	lbls := p.selectorLabels()
	var reqs []corev1.NodeSelectorRequirement
	if p.NodeLabel[0] != "" {
		reqs = append(reqs, corev1.NodeSelectorRequirement{Key: p.NodeLabel[0], Operator: corev1.NodeSelectorOpIn, Values: []string{p.NodeLabel[1]}})
	}
	if p.Zone != "" {
		reqs = append(reqs, corev1.NodeSelectorRequirement{Key: ZoneKey, Operator: corev1.NodeSelectorOpIn, Values: []string{p.Zone}})
	}
	spec := corev1.PodSpec{
		Containers: []corev1.Container{{Name: p.App, Image: p.App + ":e2e"}},
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: lbls},
		}},
	}
	if p.ZoneSpread != "" {
		spec.TopologySpreadConstraints = append(spec.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: ZoneKey, WhenUnsatisfiable: p.ZoneSpread,
			LabelSelector: &metav1.LabelSelector{MatchLabels: lbls},
		})
	}
	if len(reqs) > 0 {
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: reqs}},
			},
		}}
	}
	annotations := map[string]string{}
	for k, v := range p.Annotations {
		annotations[k] = v
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbls, Annotations: annotations}, Spec: spec}
}

// OnDeleteStatefulSet is a StatefulSet of the pods with Parallel pod
// management and the OnDelete update strategy: a template change creates a
// new revision, and nothing but a deletion (here: the operator's evictions)
// replaces a pod. rolloutBudget, when set, is the budget its
// policy.tdb.dev/rollout-budget annotation hands its updates to.
func OnDeleteStatefulSet(p Pods, name string, replicas int32, rolloutBudget string) *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: name, Labels: p.selectorLabels(), Annotations: handOver(rolloutBudget)},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To(replicas),
			PodManagementPolicy: appsv1.ParallelPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
			Selector:            &metav1.LabelSelector{MatchLabels: p.selectorLabels()},
			Template:            p.Template(),
		},
	}
}

// OnDeleteDaemonSet is a DaemonSet of the pods with the OnDelete update
// strategy; rolloutBudget as for OnDeleteStatefulSet.
func OnDeleteDaemonSet(p Pods, name, rolloutBudget string) *appsv1.DaemonSet {
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: name, Labels: p.selectorLabels(), Annotations: handOver(rolloutBudget)},
		Spec: appsv1.DaemonSetSpec{
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			Selector:       &metav1.LabelSelector{MatchLabels: p.selectorLabels()},
			Template:       p.Template(),
		},
	}
}

// handOver is the annotation that lets budget update an OnDelete workload;
// none for "".
func handOver(budget string) map[string]string {
	if budget == "" {
		return nil
	}
	return map[string]string{policyv1alpha1.RolloutBudgetAnnotation: budget}
}

// RollingDeployment is a Deployment of the pods with a RollingUpdate
// strategy of maxSurge and maxUnavailable pods.
func RollingDeployment(p Pods, name string, replicas, maxSurge, maxUnavailable int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: p.Namespace, Name: name, Labels: p.selectorLabels()},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: p.selectorLabels()},
			Strategy: appsv1.DeploymentStrategy{
				Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{
					MaxSurge:       ptr.To(intstr.FromInt32(maxSurge)),
					MaxUnavailable: ptr.To(intstr.FromInt32(maxUnavailable)),
				},
			},
			Template: p.Template(),
		},
	}
}
