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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ZoneKey is the well-known zone label of nodes, the topology key of most
// test budgets.
const ZoneKey = corev1.LabelTopologyZone

// NodeWrapper builds a Node.
type NodeWrapper struct{ node corev1.Node }

// Node returns a wrapper of a schedulable node named name with an empty,
// non-nil label map.
func Node(name string) *NodeWrapper {
	return &NodeWrapper{node: corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}}
}

// Obj returns a copy of the node built so far.
func (w *NodeWrapper) Obj() *corev1.Node { return w.node.DeepCopy() }

// Labels replaces the node's labels with a copy of labels (an empty map for
// nil).
func (w *NodeWrapper) Labels(labels map[string]string) *NodeWrapper {
	w.node.Labels = maps.Clone(labels)
	if w.node.Labels == nil {
		w.node.Labels = map[string]string{}
	}
	return w
}

// Label adds the label key=value.
func (w *NodeWrapper) Label(key, value string) *NodeWrapper {
	w.node.Labels = withEntry(w.node.Labels, key, value)
	return w
}

// Zone puts the node in zone: the label ZoneKey=zone.
func (w *NodeWrapper) Zone(zone string) *NodeWrapper { return w.Label(ZoneKey, zone) }

// Unschedulable cordons the node (spec.unschedulable).
func (w *NodeWrapper) Unschedulable() *NodeWrapper { w.node.Spec.Unschedulable = true; return w }
