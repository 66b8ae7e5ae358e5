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
	"context"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// The workload kinds whose scale the operator reads, each described once:
// how to make one, its pod template's labels and its scale. Every consumer
// (owner resolution, event mapping, the list of a budget's controllers)
// reads them here, as the disruption controller's finders do for core.

// workloadKind is a workload controller kind the operator caches.
type workloadKind struct {
	group, kind string
	newObject   func() client.Object
	newList     func() client.ObjectList
	// template returns the labels of the pods the controller creates.
	template func(client.Object) labels.Set
	// scale returns how many pods the controller wants (nil: the API's
	// default, 1).
	scale func(client.Object) *int32
	// strip drops, in the cache, what no controller reads (see cache.go).
	strip func(client.Object)
}

var workloadKinds = []workloadKind{
	{group: appsv1.GroupName, kind: "ReplicaSet",
		newObject: func() client.Object { return &appsv1.ReplicaSet{} },
		newList:   func() client.ObjectList { return &appsv1.ReplicaSetList{} },
		template:  func(o client.Object) labels.Set { return o.(*appsv1.ReplicaSet).Spec.Template.Labels },
		scale:     func(o client.Object) *int32 { return o.(*appsv1.ReplicaSet).Spec.Replicas },
		strip: func(o client.Object) {
			w := o.(*appsv1.ReplicaSet)
			stripMeta(&w.ObjectMeta, []string{ReplicaSetRevision})
			w.Spec.Template = stripTemplate(w.Spec.Template)
			w.Status = appsv1.ReplicaSetStatus{}
		}},
	{group: appsv1.GroupName, kind: "StatefulSet",
		newObject: func() client.Object { return &appsv1.StatefulSet{} },
		newList:   func() client.ObjectList { return &appsv1.StatefulSetList{} },
		template:  func(o client.Object) labels.Set { return o.(*appsv1.StatefulSet).Spec.Template.Labels },
		scale:     func(o client.Object) *int32 { return o.(*appsv1.StatefulSet).Spec.Replicas },
		strip: func(o client.Object) {
			w := o.(*appsv1.StatefulSet)
			// The owner's consent names the budget that may update it.
			stripMeta(&w.ObjectMeta, []string{policyv1alpha1.RolloutBudgetAnnotation})
			w.Spec.Template = stripTemplate(w.Spec.Template)
			w.Spec.VolumeClaimTemplates = nil
			w.Status = appsv1.StatefulSetStatus{
				ObservedGeneration: w.Status.ObservedGeneration,
				UpdateRevision:     w.Status.UpdateRevision, CurrentRevision: w.Status.CurrentRevision,
			}
		}},
	{group: appsv1.GroupName, kind: "Deployment",
		newObject: func() client.Object { return &appsv1.Deployment{} },
		newList:   func() client.ObjectList { return &appsv1.DeploymentList{} },
		template:  func(o client.Object) labels.Set { return o.(*appsv1.Deployment).Spec.Template.Labels },
		scale:     func(o client.Object) *int32 { return o.(*appsv1.Deployment).Spec.Replicas },
		strip: func(o client.Object) {
			w := o.(*appsv1.Deployment)
			stripMeta(&w.ObjectMeta, nil)
			w.Spec.Template = stripTemplate(w.Spec.Template)
			w.Status = appsv1.DeploymentStatus{}
		}},
	{group: appsv1.GroupName, kind: "DaemonSet",
		newObject: func() client.Object { return &appsv1.DaemonSet{} },
		newList:   func() client.ObjectList { return &appsv1.DaemonSetList{} },
		template:  func(o client.Object) labels.Set { return o.(*appsv1.DaemonSet).Spec.Template.Labels },
		// A DaemonSet's scale is the number of nodes that should run it.
		scale: func(o client.Object) *int32 { return &o.(*appsv1.DaemonSet).Status.DesiredNumberScheduled },
		strip: func(o client.Object) {
			w := o.(*appsv1.DaemonSet)
			// The template generation annotation tells which pods are
			// outdated; the owner's consent names the budget that may
			// update it.
			stripMeta(&w.ObjectMeta, []string{DaemonSetTemplateGeneration, policyv1alpha1.RolloutBudgetAnnotation})
			w.Spec.Template = stripTemplate(w.Spec.Template)
			w.Status = appsv1.DaemonSetStatus{
				ObservedGeneration:     w.Status.ObservedGeneration,
				DesiredNumberScheduled: w.Status.DesiredNumberScheduled,
			}
		}},
	{group: corev1.GroupName, kind: "ReplicationController",
		newObject: func() client.Object { return &corev1.ReplicationController{} },
		newList:   func() client.ObjectList { return &corev1.ReplicationControllerList{} },
		template: func(o client.Object) labels.Set {
			if t := o.(*corev1.ReplicationController).Spec.Template; t != nil {
				return t.Labels
			}
			return nil
		},
		scale: func(o client.Object) *int32 { return o.(*corev1.ReplicationController).Spec.Replicas },
		strip: func(o client.Object) {
			w := o.(*corev1.ReplicationController)
			stripMeta(&w.ObjectMeta, nil)
			if w.Spec.Template != nil {
				t := stripTemplate(*w.Spec.Template)
				w.Spec.Template = &t
			}
			w.Status = corev1.ReplicationControllerStatus{}
		}},
}

// apiVersion is the kind's group/version, as owner references spell it.
func (k *workloadKind) apiVersion() string {
	if k.group == corev1.GroupName {
		return "v1"
	}
	return k.group + "/v1"
}

// kindNamed returns the registry's entry for a group and kind, or nil.
func kindNamed(group, kind string) *workloadKind {
	for i := range workloadKinds {
		if workloadKinds[i].group == group && workloadKinds[i].kind == kind {
			return &workloadKinds[i]
		}
	}
	return nil
}

// kindOf returns the registry's entry for a cached workload, or nil.
func kindOf(obj client.Object) *workloadKind {
	switch obj.(type) {
	case *appsv1.ReplicaSet:
		return kindNamed(appsv1.GroupName, "ReplicaSet")
	case *appsv1.StatefulSet:
		return kindNamed(appsv1.GroupName, "StatefulSet")
	case *appsv1.Deployment:
		return kindNamed(appsv1.GroupName, "Deployment")
	case *appsv1.DaemonSet:
		return kindNamed(appsv1.GroupName, "DaemonSet")
	case *corev1.ReplicationController:
		return kindNamed(corev1.GroupName, "ReplicationController")
	}
	return nil
}

// TemplateLabels returns the labels of the pods a workload creates.
func TemplateLabels(obj client.Object) labels.Set {
	if k := kindOf(obj); k != nil {
		return k.template(obj)
	}
	return nil
}

// ReplicasOf returns a workload's scale (nil: unset).
func ReplicasOf(obj client.Object) *int32 {
	if k := kindOf(obj); k != nil {
		return k.scale(obj)
	}
	return nil
}

// CountedUnder returns the controller that a workload's pods count under
// instead of the workload itself: a ReplicaSet that a Deployment controls
// counts as the Deployment, whose scale is the one its user sets. It is the
// only such rule.
func CountedUnder(obj client.Object) (metav1.OwnerReference, bool) {
	if _, ok := obj.(*appsv1.ReplicaSet); !ok {
		return metav1.OwnerReference{}, false
	}
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil || ref.Kind != "Deployment" {
		return metav1.OwnerReference{}, false
	}
	return *ref, true
}

// ControllerByUID finds a cached workload controller of the namespace by
// UID, of any registered kind (through UIDIndex): the controller of an
// eviction record whose pods are all gone.
func (g *Gatherer) ControllerByUID(ctx context.Context, ns string, uid types.UID) (metav1.OwnerReference, bool, error) {
	c := g.Cache
	for _, w := range workloadKinds {
		list := w.newList()
		if err := c.List(ctx, list, client.InNamespace(ns), client.MatchingFields{UIDIndex: string(uid)}); err != nil {
			return metav1.OwnerReference{}, false, fmt.Errorf("looking up controller %s of an eviction record: %w", uid, err)
		}
		if apimeta.LenList(list) > 0 {
			return metav1.OwnerReference{APIVersion: w.apiVersion(), Kind: w.kind, UID: uid, Name: firstName(list)}, true, nil
		}
	}
	return metav1.OwnerReference{}, false, nil
}

func firstName(list client.ObjectList) string {
	name := ""
	_ = apimeta.EachListItem(list, func(o runtime.Object) error {
		if m, err := apimeta.Accessor(o); err == nil && name == "" {
			name = m.GetName()
		}
		return nil
	})
	return name
}

// WorkloadObjects returns an empty object of each registered workload kind,
// for the controllers that watch them all.
func WorkloadObjects() []client.Object {
	out := make([]client.Object, len(workloadKinds))
	for i, w := range workloadKinds {
		out[i] = w.newObject()
	}
	return out
}

// Controllers lists the cached workload controllers of the namespace whose
// pod template the selector matches, whether or not any of their pods
// exists. A ReplicaSet owned by a Deployment is counted as the Deployment.
func (g *Gatherer) Controllers(ctx context.Context, ns string, sel labels.Selector) ([]budget.Owner, error) {
	var out []budget.Owner
	for _, w := range workloadKinds {
		list := w.newList()
		if err := g.Cache.List(ctx, list, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("listing %ss: %w", w.kind, err)
		}
		err := apimeta.EachListItem(list, func(o runtime.Object) error {
			obj, ok := o.(client.Object)
			if !ok {
				return nil
			}
			if _, under := CountedUnder(obj); under {
				return nil // counted as its Deployment, listed too
			}
			if !sel.Matches(w.template(obj)) {
				return nil
			}
			out = append(out, *ownerOf(obj, w.kind, w.scale(obj)))
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
