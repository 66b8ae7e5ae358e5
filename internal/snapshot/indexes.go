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
	"sync"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const (
	// UIDIndex indexes workload controllers by UID, to find the controller
	// of an eviction record whose pods are all gone.
	UIDIndex = "metadata.uid"
	// NodeNameIndex indexes pods by node, to map a node's relabelling to
	// the budgets covering its pods.
	NodeNameIndex = "spec.nodeName"
	// LabelIndex indexes pods by label, one key per label, its name and
	// value joined by "=" (labelIndexKey): a budget's snapshot reads the
	// pods bearing one label its selector requires instead of scanning its
	// namespace.
	LabelIndex = "metadata.labels"
)

// registeredIndexes records the cache indexes registered per manager: the
// controllers needing one register it in their SetupWithManager, whichever
// comes first, and the cache refuses a second registration.
var registeredIndexes sync.Map

type indexKey struct {
	indexer client.FieldIndexer
	kind    string
	field   string
}

// indexField registers an index of the manager's cache once.
func indexField(mgr ctrl.Manager, obj client.Object, field string, extract client.IndexerFunc) error {
	key := indexKey{indexer: mgr.GetFieldIndexer(), kind: fmt.Sprintf("%T", obj), field: field}
	if _, done := registeredIndexes.LoadOrStore(key, struct{}{}); done {
		return nil
	}
	if err := mgr.GetFieldIndexer().IndexField(context.Background(), obj, field, extract); err != nil {
		registeredIndexes.Delete(key)
		return fmt.Errorf("indexing %T by %s: %w", obj, field, err)
	}
	return nil
}

// IndexWorkloadsByUID indexes every workload kind by UID (UIDIndex).
func IndexWorkloadsByUID(mgr ctrl.Manager) error {
	for _, w := range workloadKinds {
		if err := indexField(mgr, w.newObject(), UIDIndex, func(o client.Object) []string {
			return []string{string(o.GetUID())}
		}); err != nil {
			return err
		}
	}
	return nil
}

// IndexPodsByNode indexes pods by node (NodeNameIndex).
func IndexPodsByNode(mgr ctrl.Manager) error {
	return indexField(mgr, &corev1.Pod{}, NodeNameIndex, func(o client.Object) []string {
		if n := o.(*corev1.Pod).Spec.NodeName; n != "" {
			return []string{n}
		}
		return nil
	})
}

// IndexPodsByLabel indexes pods by label (LabelIndex) and has g's snapshots
// list a budget's pods through that index. g.Cache must read mgr's cache: a
// reader without the index would fail every snapshot.
func IndexPodsByLabel(mgr ctrl.Manager, g *Gatherer) error {
	if err := indexField(mgr, &corev1.Pod{}, LabelIndex, podLabelKeys); err != nil {
		return err
	}
	g.podsByLabel = true
	return nil
}

// podLabelKeys are a pod's keys in LabelIndex.
func podLabelKeys(o client.Object) []string {
	l := o.GetLabels()
	if len(l) == 0 {
		return nil
	}
	keys := make([]string, 0, len(l))
	for k, v := range l {
		keys = append(keys, labelIndexKey(k, v))
	}
	return keys
}

// labelIndexKey is the key in LabelIndex of the label k=v. Neither a label
// name nor a value may hold "=", so a key names one label.
func labelIndexKey(k, v string) string { return k + "=" + v }
