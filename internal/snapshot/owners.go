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

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// ownerResolver finds the scale-bearing controller behind a controllerRef,
// the way the policy/v1 disruption controller does: a ReplicaSet owned by a
// Deployment counts as the Deployment; ReplicaSets, StatefulSets and
// ReplicationControllers are read from the cache; any other kind is read
// through its scale subresource. Unlike policy/v1, a DaemonSet is supported:
// its scale is status.desiredNumberScheduled.
type ownerResolver struct {
	reader client.Reader
	// scales reads scale subresources (a live call: custom kinds are not
	// cached).
	scales client.Client
}

// Owners resolves the controllerRefs of a budget's pods (and records) to
// their scale-bearing owners (see ownerResolver): custom kinds through
// g.Scales, the others from the cache.
func (g *Gatherer) Owners(ctx context.Context, namespace string, refs map[types.UID]metav1.OwnerReference) (Resolution, error) {
	r := ownerResolver{reader: g.Cache, scales: g.Scales}
	return r.resolve(ctx, namespace, refs)
}

// Resolution is what resolving a set of controllerRefs found.
type Resolution struct {
	// Owners are the scale-bearing owners by controllerRef UID.
	Owners map[types.UID]budget.Owner
	// Custom is true when a scale was read from a custom kind, which the
	// operator does not watch: the budget is recomputed periodically.
	Custom bool
}

// resolve resolves every distinct controllerRef in refs. A ref that does not
// resolve is simply absent from the map: the budget then reports the pod as
// having no scale and allows nothing.
func (r *ownerResolver) resolve(ctx context.Context, namespace string, refs map[types.UID]metav1.OwnerReference) (Resolution, error) {
	res := Resolution{Owners: make(map[types.UID]budget.Owner, len(refs))}
	for uid, ref := range refs {
		o, custom, err := r.resolveOne(ctx, namespace, ref)
		if err != nil {
			return res, fmt.Errorf("resolving %s %s/%s: %w", ref.Kind, namespace, ref.Name, err)
		}
		res.Custom = res.Custom || custom
		if o != nil {
			res.Owners[uid] = *o
		}
	}
	return res, nil
}

func (r *ownerResolver) resolveOne(ctx context.Context, ns string, ref metav1.OwnerReference) (*budget.Owner, bool, error) {
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, false, nil
	}
	k := kindNamed(gv.Group, ref.Kind)
	if k == nil {
		return r.resolveScale(ctx, ns, gv.WithKind(ref.Kind), ref)
	}
	obj := k.newObject()
	if found, err := r.get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, ref.UID, obj); !found || err != nil {
		return nil, false, err
	}
	if under, ok := CountedUnder(obj); ok {
		if pk := kindNamed(appsv1.GroupName, under.Kind); pk != nil {
			parent := pk.newObject()
			found, err := r.get(ctx, client.ObjectKey{Namespace: ns, Name: under.Name}, under.UID, parent)
			if err != nil {
				return nil, false, err
			}
			if found {
				return ownerOf(parent, pk.kind, pk.scale(parent)), false, nil
			}
		}
	}
	return ownerOf(obj, k.kind, k.scale(obj)), false, nil
}

// resolveScale reads a custom controller's scale subresource.
func (r *ownerResolver) resolveScale(ctx context.Context, ns string, gvk schema.GroupVersionKind, ref metav1.OwnerReference) (*budget.Owner, bool, error) {
	if r.scales == nil {
		return nil, true, nil
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace(ns)
	obj.SetName(ref.Name)
	// The scale is read as unstructured: the client that reads an
	// unstructured parent can only decode an unstructured subresource.
	scale := &unstructured.Unstructured{}
	scale.SetGroupVersionKind(autoscalingv1.SchemeGroupVersion.WithKind("Scale"))
	if err := r.scales.SubResource("scale").Get(ctx, obj, scale); err != nil {
		// A kind without a scale subresource, or gone: no scale, the budget
		// says so. Other errors are retried.
		if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) || apimeta.IsNoMatchError(err) {
			return nil, true, nil
		}
		return nil, true, err
	}
	if uid := scale.GetUID(); uid != "" && uid != ref.UID {
		return nil, true, nil
	}
	replicas, found, err := unstructured.NestedInt64(scale.Object, "spec", "replicas")
	if err != nil || !found {
		return nil, true, nil
	}
	return &budget.Owner{UID: ref.UID, Kind: ref.Kind, Name: ref.Name, Replicas: int32(replicas)}, true, nil
}

func (r *ownerResolver) get(ctx context.Context, key client.ObjectKey, uid types.UID, obj client.Object) (bool, error) {
	if err := r.reader.Get(ctx, key, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, err
	}
	// A controller recreated under the same name is not the pod's owner.
	return obj.GetUID() == uid, nil
}

// ownerOf is the scale-bearing controller obj, of the given kind and
// scale. An apps/v1 StatefulSet also says where its pods' ordinals start.
func ownerOf(obj client.Object, kind string, replicas *int32) *budget.Owner {
	n := int32(1) // the API default when replicas is unset
	if replicas != nil {
		n = *replicas
	}
	o := &budget.Owner{UID: obj.GetUID(), Kind: kind, Name: obj.GetName(), Replicas: n}
	if sts, ok := obj.(*appsv1.StatefulSet); ok {
		start := int32(0)
		if sts.Spec.Ordinals != nil {
			start = sts.Spec.Ordinals.Start
		}
		o.OrdinalStart = &start
	}
	return o
}
