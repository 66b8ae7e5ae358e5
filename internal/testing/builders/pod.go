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
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// ContainerName and Image are the container of the pods and pod templates
// the tests create on an API server, which requires one. The image is never
// pulled: no kubelet runs (envtest), or kwok fakes it.
const (
	ContainerName = "c"
	Image         = "registry.invalid/app:1"
)

// PodWrapper builds a Pod.
type PodWrapper struct{ pod corev1.Pod }

// Pod returns a wrapper of a pod named name and nothing else: no namespace,
// labels, node, container, phase or conditions.
func Pod(name string) *PodWrapper {
	return &PodWrapper{pod: corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}}
}

// Obj returns a copy of the pod built so far.
func (w *PodWrapper) Obj() *corev1.Pod { return w.pod.DeepCopy() }

// Namespace puts the pod in namespace ns.
func (w *PodWrapper) Namespace(ns string) *PodWrapper { w.pod.Namespace = ns; return w }

// UID sets the pod's UID, which the API server assigns to the pods it
// creates.
func (w *PodWrapper) UID(uid types.UID) *PodWrapper { w.pod.UID = uid; return w }

// Labels replaces the pod's labels with a copy of labels.
func (w *PodWrapper) Labels(labels map[string]string) *PodWrapper {
	w.pod.Labels = maps.Clone(labels)
	return w
}

// Label adds the label key=value.
func (w *PodWrapper) Label(key, value string) *PodWrapper {
	w.pod.Labels = withEntry(w.pod.Labels, key, value)
	return w
}

// Annotation adds the annotation key=value.
func (w *PodWrapper) Annotation(key, value string) *PodWrapper {
	w.pod.Annotations = withEntry(w.pod.Annotations, key, value)
	return w
}

// CreatedAt sets the pod's creationTimestamp, which the API server sets on
// create.
func (w *PodWrapper) CreatedAt(t time.Time) *PodWrapper {
	w.pod.CreationTimestamp = metav1.NewTime(t)
	return w
}

// ControlledBy adds ref as the pod's controllerRef (controller: true).
func (w *PodWrapper) ControlledBy(ref metav1.OwnerReference) *PodWrapper {
	ref.Controller = ptr.To(true)
	w.pod.OwnerReferences = append(w.pod.OwnerReferences, ref)
	return w
}

// ReferencedBy adds ref as an ownerReference that is not a controllerRef.
func (w *PodWrapper) ReferencedBy(ref metav1.OwnerReference) *PodWrapper {
	ref.Controller = nil
	w.pod.OwnerReferences = append(w.pod.OwnerReferences, ref)
	return w
}

// Container adds a container running image.
func (w *PodWrapper) Container(name, image string) *PodWrapper {
	w.pod.Spec.Containers = append(w.pod.Spec.Containers, corev1.Container{Name: name, Image: image})
	return w
}

// OnNode binds the pod to node.
func (w *PodWrapper) OnNode(node string) *PodWrapper { w.pod.Spec.NodeName = node; return w }

// HostNetwork puts the pod in its node's network namespace
// (spec.hostNetwork): its addresses are the node's.
func (w *PodWrapper) HostNetwork() *PodWrapper { w.pod.Spec.HostNetwork = true; return w }

// Phase sets the pod's phase.
func (w *PodWrapper) Phase(p corev1.PodPhase) *PodWrapper { w.pod.Status.Phase = p; return w }

// Running sets the pod's phase to Running.
func (w *PodWrapper) Running() *PodWrapper { return w.Phase(corev1.PodRunning) }

// Pending makes the pod Pending and unscheduled: no node, no conditions.
func (w *PodWrapper) Pending() *PodWrapper {
	w.pod.Spec.NodeName = ""
	w.pod.Status.Conditions = nil
	return w.Phase(corev1.PodPending)
}

// Ready sets the pod's conditions to Ready=True alone, without a transition
// time. The phase is left as it is.
func (w *PodWrapper) Ready() *PodWrapper { return w.readyIs(corev1.ConditionTrue, time.Time{}) }

// NotReady sets the pod's conditions to Ready=False alone, without a
// transition time. The phase is left as it is.
func (w *PodWrapper) NotReady() *PodWrapper { return w.readyIs(corev1.ConditionFalse, time.Time{}) }

// ReadySince is Ready with the condition's lastTransitionTime at t.
func (w *PodWrapper) ReadySince(t time.Time) *PodWrapper {
	return w.readyIs(corev1.ConditionTrue, t)
}

// NotReadySince is NotReady with the condition's lastTransitionTime at t.
func (w *PodWrapper) NotReadySince(t time.Time) *PodWrapper {
	return w.readyIs(corev1.ConditionFalse, t)
}

func (w *PodWrapper) readyIs(s corev1.ConditionStatus, since time.Time) *PodWrapper {
	c := corev1.PodCondition{Type: corev1.PodReady, Status: s}
	if !since.IsZero() {
		c.LastTransitionTime = metav1.NewTime(since)
	}
	w.pod.Status.Conditions = []corev1.PodCondition{c}
	return w
}

// Deleting marks the pod as being deleted since t (deletionTimestamp).
func (w *PodWrapper) Deleting(t time.Time) *PodWrapper {
	ts := metav1.NewTime(t)
	w.pod.DeletionTimestamp = &ts
	return w
}

// IPs sets the pod's addresses: status.podIPs, and status.podIP to the
// first.
func (w *PodWrapper) IPs(ips ...string) *PodWrapper {
	w.pod.Status.PodIP, w.pod.Status.PodIPs = "", nil
	for _, ip := range ips {
		w.pod.Status.PodIPs = append(w.pod.Status.PodIPs, corev1.PodIP{IP: ip})
	}
	if len(ips) > 0 {
		w.pod.Status.PodIP = ips[0]
	}
	return w
}

// withEntry returns m (made when nil) with key=value.
func withEntry(m map[string]string, key, value string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	return m
}
