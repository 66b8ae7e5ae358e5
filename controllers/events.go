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

// Event mapping and predicates shared by the controllers: which budgets an
// object's change concerns, and which changes matter.

import (
	"context"
	"reflect"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/snapshot"
)

// matchingBudgets adds to into the budgets of a namespace whose selector
// matches set and, when keep is given, for which keep is true.
func matchingBudgets(ctx context.Context, g *snapshot.Gatherer, ns string, set labels.Set, into map[types.NamespacedName]struct{}, keep func(*policyv1alpha1.TopologyDisruptionBudget) bool) {
	var tdbs policyv1alpha1.TopologyDisruptionBudgetList
	if err := g.Cache.List(ctx, &tdbs, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "listing budgets to map an event", "namespace", ns)
		return
	}
	for i := range tdbs.Items {
		t := &tdbs.Items[i]
		if keep != nil && !keep(t) {
			continue
		}
		if cov := g.Coverage(t); cov.SelectorErr() != nil || cov.MightSelect(ns, set) {
			// A budget with a bad selector is reconciled too: it must say so.
			into[types.NamespacedName{Namespace: t.Namespace, Name: t.Name}] = struct{}{}
		}
	}
}

func toRequests(set map[types.NamespacedName]struct{}) []reconcile.Request {
	out := make([]reconcile.Request, 0, len(set))
	for k := range set {
		out = append(out, reconcile.Request{NamespacedName: k})
	}
	return out
}

// budgetsOfNodePods maps a node to budgets through the pods on it. Pods of
// one workload share namespace and labels, so each such set is mapped once,
// by byLabels; extra, if not nil, names a budget from one pod (e.g. its
// marker annotation), "" for none.
func budgetsOfNodePods(ctx context.Context, c client.Reader, node string,
	byLabels func(ctx context.Context, ns string, l labels.Set, set map[types.NamespacedName]struct{}),
	extra func(*corev1.Pod) string,
) []reconcile.Request {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.MatchingFields{snapshot.NodeNameIndex: node}, client.UnsafeDisableDeepCopy); err != nil {
		log.FromContext(ctx).Error(err, "listing pods of a node", "node", node)
		return nil
	}
	set := map[types.NamespacedName]struct{}{}
	seen := map[string]struct{}{}
	for i := range pods.Items {
		p := &pods.Items[i]
		key := p.Namespace + "\x00" + labels.Set(p.Labels).String()
		if _, ok := seen[key]; !ok {
			seen[key] = struct{}{}
			byLabels(ctx, p.Namespace, p.Labels, set)
		}
		if extra != nil {
			if name := extra(p); name != "" {
				set[types.NamespacedName{Namespace: p.Namespace, Name: name}] = struct{}{}
			}
		}
	}
	return toRequests(set)
}

func createOrDelete() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return true },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}

// podChanged passes pod updates that can change a budget: labels, node,
// phase, readiness, deletion and owners.
type podChanged struct{ predicate.Funcs }

func (podChanged) Update(e event.UpdateEvent) bool {
	o, ok1 := e.ObjectOld.(*corev1.Pod)
	n, ok2 := e.ObjectNew.(*corev1.Pod)
	if !ok1 || !ok2 {
		return true
	}
	return !reflect.DeepEqual(o.Labels, n.Labels) ||
		o.Spec.NodeName != n.Spec.NodeName ||
		o.Status.Phase != n.Status.Phase ||
		readyOf(o) != readyOf(n) ||
		(o.DeletionTimestamp == nil) != (n.DeletionTimestamp == nil) ||
		!reflect.DeepEqual(o.OwnerReferences, n.OwnerReferences)
}

func readyOf(p *corev1.Pod) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status
		}
	}
	return corev1.ConditionUnknown
}

// workloadChanged passes workload updates that change the scale or the
// template labels.
type workloadChanged struct{ predicate.Funcs }

func (workloadChanged) Update(e event.UpdateEvent) bool {
	return !reflect.DeepEqual(snapshot.ReplicasOf(e.ObjectOld), snapshot.ReplicasOf(e.ObjectNew)) ||
		!reflect.DeepEqual(snapshot.TemplateLabels(e.ObjectOld), snapshot.TemplateLabels(e.ObjectNew)) ||
		!reflect.DeepEqual(e.ObjectOld.GetOwnerReferences(), e.ObjectNew.GetOwnerReferences())
}
