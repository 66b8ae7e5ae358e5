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
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ZoneKey is the topology key of the local cluster.
const ZoneKey = "topology.kubernetes.io/zone"

// Watcher samples the pods of a workload and measures, independently of the
// operator, how many are unavailable in each zone: the zone's expected pods
// minus its Ready, not-deleting pods. It records the worst it sees.
type Watcher struct {
	Client   client.Client
	NS       string
	Selector labels.Selector
	// Expected gives each zone's expected pods (e.g. the replicas of the
	// zone's StatefulSet).
	Expected func(ctx context.Context) (map[string]int, error)
	Interval time.Duration

	mu                sync.Mutex
	maxUnavailable    map[string]int
	maxDisruptedZones int
	samples           int
	errs              int
	last              map[string]int
}

// Run samples until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	interval := w.Interval
	if interval == 0 {
		interval = 100 * time.Millisecond
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		w.sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (w *Watcher) sample(ctx context.Context) {
	unavailable, err := w.Unavailable(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.errs++
		return
	}
	if w.maxUnavailable == nil {
		w.maxUnavailable = map[string]int{}
	}
	disrupted := 0
	for z, u := range unavailable {
		if u > w.maxUnavailable[z] {
			w.maxUnavailable[z] = u
		}
		if u > 0 {
			disrupted++
		}
	}
	w.maxDisruptedZones = max(w.maxDisruptedZones, disrupted)
	w.samples++
	w.last = unavailable
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
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || !podReady(&p) {
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

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Report is what a Watcher saw.
type Report struct {
	MaxUnavailable    map[string]int
	MaxDisruptedZones int
	Samples, Errors   int
}

// Report returns the worst the watcher has seen so far.
func (w *Watcher) Report() Report {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := map[string]int{}
	for z, u := range w.maxUnavailable {
		m[z] = u
	}
	return Report{MaxUnavailable: m, MaxDisruptedZones: w.maxDisruptedZones, Samples: w.samples, Errors: w.errs}
}

// String formats the report, zones sorted.
func (r Report) String() string {
	zones := make([]string, 0, len(r.MaxUnavailable))
	for z := range r.MaxUnavailable {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	s := ""
	for _, z := range zones {
		s += fmt.Sprintf("%s=%d ", z, r.MaxUnavailable[z])
	}
	return fmt.Sprintf("max unavailable per zone: %smax zones disrupted at once: %d (%d samples)", s, r.MaxDisruptedZones, r.Samples)
}
