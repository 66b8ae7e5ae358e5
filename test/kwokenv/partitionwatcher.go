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
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
)

// PartitionBounds are what a budget promises of a PartitionLayout, as a
// PartitionWatcher checks them; a negative bound is not checked.
type PartitionBounds struct {
	// PerPartition bounds the replicas of one partition down at once.
	PerPartition int
	// Zones bounds the zones degraded (a replica down) at once.
	Zones int
	// Total bounds the replicas down at once in the whole layout.
	Total int
}

// PartitionReport is what a PartitionWatcher saw.
type PartitionReport struct {
	// MaxPartitionDown is the most replicas of one partition down at once;
	// MaxZonesDegraded the most zones with a replica down at once; MaxDown
	// the most replicas down at once in all.
	MaxPartitionDown, MaxZonesDegraded, MaxDown int
	// Violations counts the times a bound was exceeded (an episode counts
	// once, until every bound holds again); Evidence describes the first
	// 20.
	Violations int
	Evidence   []string
	// Events counts the pod events checked.
	Events int
	// Deleted are the UIDs of the layout's pods deleted while watching, in
	// the order seen.
	Deleted []types.UID
	// Timeline has a line per change: the time since the watcher was
	// armed, the replicas down, the zones degraded and the worst partition.
	Timeline string
}

// String formats the report on one line, with the evidence after it.
func (r PartitionReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "max replicas of one partition down %d; max zones degraded %d; max replicas down %d; %d violation(s); %d events, %d pods deleted",
		r.MaxPartitionDown, r.MaxZonesDegraded, r.MaxDown, r.Violations, r.Events, len(r.Deleted))
	for _, e := range r.Evidence {
		b.WriteString("\n    " + e)
	}
	return b.String()
}

// PartitionWatcher checks a PartitionLayout at every pod event, from an
// informer of its own, independently of the operator (it reads no budget):
// a replica is down when its pod is missing, or is not Running and Ready,
// or is being deleted (PodReady). Every case of a comparison is measured
// this one way, whatever its budget.
type PartitionWatcher struct {
	l      PartitionLayout
	b      PartitionBounds
	names  [][]string // [zone][partition] pod name
	cancel context.CancelFunc

	mu        sync.Mutex
	armed     bool
	start     time.Time
	up        map[string]bool
	seenGone  map[types.UID]bool
	violating bool
	lastLine  string
	timeline  strings.Builder
	rep       PartitionReport
}

// WatchPartitions starts watching l's pods and returns once its informer
// has synced; from then on every event is checked against b. Stop ends it.
func WatchPartitions(ctx context.Context, cs kubernetes.Interface, l PartitionLayout, b PartitionBounds) (*PartitionWatcher, error) {
	w := &PartitionWatcher{l: l, b: b, up: map[string]bool{}, seenGone: map[types.UID]bool{}}
	for _, z := range l.Zones {
		row := make([]string, l.Partitions)
		for p := range row {
			row[p] = l.PodName(z, p)
		}
		w.names = append(w.names, row)
	}
	ctx, w.cancel = context.WithCancel(ctx)
	selector := labels.SelectorFromSet(l.Labels()).String()
	f := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(l.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	inf := f.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { w.observe(o, false) },
		UpdateFunc: func(_, o any) { w.observe(o, false) },
		DeleteFunc: func(o any) { w.observe(o, true) },
	}); err != nil {
		w.cancel()
		return nil, err
	}
	f.Start(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		w.cancel()
		return nil, fmt.Errorf("the pod informer of %s did not sync", l.Namespace)
	}
	w.mu.Lock()
	w.armed, w.start = true, time.Now()
	w.check()
	w.mu.Unlock()
	return w, nil
}

// observe records one pod event and, once armed, checks the layout.
func (w *PartitionWatcher) observe(o any, gone bool) {
	if t, ok := o.(toolscache.DeletedFinalStateUnknown); ok {
		o = t.Obj
	}
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.up[pod.Name] = !gone && PodReady(pod)
	if !w.armed {
		return
	}
	if (gone || pod.DeletionTimestamp != nil) && !w.seenGone[pod.UID] {
		w.seenGone[pod.UID] = true
		w.rep.Deleted = append(w.rep.Deleted, pod.UID)
	}
	w.rep.Events++
	w.check()
}

// check measures the layout now, raises the maxima and counts a violation
// when a bound is newly exceeded. Called with mu held.
func (w *PartitionWatcher) check() {
	at := time.Since(w.start)
	total, zones, worst, worstAt := 0, 0, 0, -1
	perPartition := make([]int, w.l.Partitions)
	for zi := range w.names {
		degraded := false
		for p, name := range w.names[zi] {
			if !w.up[name] {
				perPartition[p]++
				total++
				degraded = true
			}
		}
		if degraded {
			zones++
		}
	}
	for p, n := range perPartition {
		if n > worst {
			worst, worstAt = n, p
		}
	}
	w.rep.MaxPartitionDown = max(w.rep.MaxPartitionDown, worst)
	w.rep.MaxZonesDegraded = max(w.rep.MaxZonesDegraded, zones)
	w.rep.MaxDown = max(w.rep.MaxDown, total)
	if line := fmt.Sprintf("down=%d zones=%d worst-partition=%d", total, zones, worst); line != w.lastLine {
		fmt.Fprintf(&w.timeline, "%7.2fs  %s\n", at.Seconds(), line)
		w.lastLine = line
	}
	var exceeded []string
	if w.b.PerPartition >= 0 && worst > w.b.PerPartition {
		exceeded = append(exceeded, fmt.Sprintf("partition %d has %d replicas down (%s), bound %d", worstAt, worst, w.downOf(worstAt), w.b.PerPartition))
	}
	if w.b.Zones >= 0 && zones > w.b.Zones {
		exceeded = append(exceeded, fmt.Sprintf("%d zones degraded, bound %d", zones, w.b.Zones))
	}
	if w.b.Total >= 0 && total > w.b.Total {
		exceeded = append(exceeded, fmt.Sprintf("%d replicas down, bound %d", total, w.b.Total))
	}
	if len(exceeded) > 0 && !w.violating {
		w.rep.Violations++
		if len(w.rep.Evidence) < 20 {
			w.rep.Evidence = append(w.rep.Evidence, fmt.Sprintf("t+%.2fs: %s", at.Seconds(), strings.Join(exceeded, "; ")))
		}
	}
	w.violating = len(exceeded) > 0
}

// downOf names partition p's replicas that are down, by zone letter.
func (w *PartitionWatcher) downOf(p int) string {
	var zs []string
	for zi, z := range w.l.Zones {
		if !w.up[w.names[zi][p]] {
			zs = append(zs, zoneLetter(z))
		}
	}
	return "zones " + strings.Join(zs, ",")
}

// Down is how many of the layout's replicas are down now.
func (w *PartitionWatcher) Down() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for zi := range w.names {
		for _, name := range w.names[zi] {
			if !w.up[name] {
				n++
			}
		}
	}
	return n
}

// WaitAllUp waits until no replica is down, at most within.
func (w *PartitionWatcher) WaitAllUp(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		n := w.Down()
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d replica(s) of %s still down after %s", n, w.l.App, within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Report is what the watcher has seen so far.
func (w *PartitionWatcher) Report() PartitionReport {
	w.mu.Lock()
	defer w.mu.Unlock()
	rep := w.rep
	rep.Evidence = append([]string(nil), w.rep.Evidence...)
	rep.Deleted = append([]types.UID(nil), w.rep.Deleted...)
	rep.Timeline = w.timeline.String()
	return rep
}

// Stop stops the informer and returns the report.
func (w *PartitionWatcher) Stop() PartitionReport {
	w.cancel()
	return w.Report()
}
