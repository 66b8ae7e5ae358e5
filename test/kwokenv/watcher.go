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
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// ZoneKey is the topology key of the local cluster.
const ZoneKey = builders.ZoneKey

// Watcher measures, independently of the operator, how many pods of a
// workload are unavailable in each zone: the zone's expected pods minus its
// Ready, not-deleting pods (Unavailable; a Sampler records the worst).
type Watcher struct {
	Client   client.Client
	NS       string
	Selector labels.Selector
	// Expected gives each zone's expected pods (e.g. the replicas of the
	// zone's StatefulSet).
	Expected func(ctx context.Context) (map[string]int, error)
}

// Unavailable measures each zone's unavailable pods now.
func (w *Watcher) Unavailable(ctx context.Context) (map[string]int, error) {
	expected, err := w.Expected(ctx)
	if err != nil {
		return nil, err
	}
	var nodes corev1.NodeList
	if err := w.Client.List(ctx, &nodes); err != nil {
		return nil, err
	}
	zoneOf := map[string]string{}
	for _, n := range nodes.Items {
		zoneOf[n.Name] = n.Labels[ZoneKey]
	}
	var pods corev1.PodList
	if err := w.Client.List(ctx, &pods, client.InNamespace(w.NS), client.MatchingLabelsSelector{Selector: w.Selector}); err != nil {
		return nil, err
	}
	ready := map[string]int{}
	for _, p := range pods.Items {
		if !PodReady(&p) {
			continue
		}
		ready[zoneOf[p.Spec.NodeName]]++
	}
	out := map[string]int{}
	for z, e := range expected {
		out[z] = max(0, e-ready[z])
	}
	return out, nil
}

// PodReady tells whether a pod counts as available: Running, not being
// deleted, and Ready.
func PodReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
