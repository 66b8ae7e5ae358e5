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

package plugin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/kubectl/pkg/drain"

	"github.com/tdb-operator/tdb-operator/internal/predict"
)

// drainFlags are kubectl drain's pod filters, with its names and defaults.
type drainFlags struct {
	nodeSelector       string
	podSelector        string
	ignoreDaemonSets   bool
	deleteEmptyDirData bool
	force              bool
	skipWaitTimeout    int
}

func (f *drainFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVarP(&f.nodeSelector, "selector", "l", "", "Nodes by label selector (besides the nodes named).")
	fl.StringVar(&f.podSelector, "pod-selector", "", "As kubectl drain: only pods matching this label selector.")
	fl.BoolVar(&f.ignoreDaemonSets, "ignore-daemonsets", false, "As kubectl drain: ignore DaemonSet-managed pods.")
	fl.BoolVar(&f.deleteEmptyDirData, "delete-emptydir-data", false, "As kubectl drain: go on with pods using emptyDir.")
	fl.BoolVar(&f.force, "force", false, "As kubectl drain: go on with pods not managed by a controller.")
	fl.IntVar(&f.skipWaitTimeout, "skip-wait-for-delete-timeout", 0, "As kubectl drain: skip pods deleting for longer than this many seconds.")
}

// drainSet is what kubectl drain would evict from nodes.
type drainSet struct {
	// nodes are the nodes, sorted by name.
	nodes []string
	// pods per node, each sorted by namespace and name.
	pods map[string][]*corev1.Pod
	// errors are the pods that would stop kubectl drain before it evicts
	// anything (as drain says them), per node.
	errors []string
	// warnings drain would print (pods it skips or deletes without a
	// controller).
	warnings []string
	snap     *predict.Snapshot
}

func (d *drainSet) all() []*corev1.Pod {
	var out []*corev1.Pod
	for _, n := range d.nodes {
		out = append(out, d.pods[n]...)
	}
	return out
}

// gatherDrain reads the nodes (named, or by selector), the pods kubectl
// drain would evict from them (with the drain library, one list per
// node), and the budgets of those pods' namespaces.
func (o *options) gatherDrain(ctx context.Context, c *clients, names []string, f drainFlags) (*drainSet, error) {
	if err := f.check(names); err != nil {
		return nil, err
	}
	all, err := c.nodes(ctx, "")
	if err != nil {
		return nil, err
	}
	nodes, err := drainedNodes(all, names, f.nodeSelector)
	if err != nil {
		return nil, err
	}
	ds := &drainSet{nodes: nodes, pods: map[string][]*corev1.Pod{}}
	if err := ds.listPods(ctx, newDSClient(c.kube), f); err != nil {
		return nil, err
	}
	tdbs, pdbs, err := c.budgets(ctx, namespacesOf(ds.all()))
	if err != nil {
		return nil, err
	}
	ds.snap = predict.NewSnapshot(all, tdbs, pdbs, o.now())
	return ds, nil
}

// check refuses a drain of no node and selectors that do not parse.
func (f *drainFlags) check(names []string) error {
	if len(names) == 0 && f.nodeSelector == "" {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("name at least one node, or select nodes with --selector")}
	}
	if _, err := labels.Parse(f.podSelector); err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("--pod-selector: %w", err)}
	}
	if _, err := labels.Parse(f.nodeSelector); err != nil {
		return &ExitError{Code: ExitFailed, Err: fmt.Errorf("--selector: %w", err)}
	}
	return nil
}

// drainedNodes are the nodes named and those nodeSelector (already
// checked) matches, sorted. A named node that does not exist fails, and so
// does a selector that matches none when no node is named.
func drainedNodes(all []corev1.Node, names []string, nodeSelector string) ([]string, error) {
	byName := map[string]bool{}
	for _, n := range all {
		byName[n.Name] = true
	}
	want := map[string]bool{}
	var missing []string
	for _, n := range names {
		if !byName[n] {
			missing = append(missing, n)
		}
		want[n] = true
	}
	if len(missing) > 0 {
		return nil, &ExitError{Code: ExitFailed, Err: fmt.Errorf("node(s) not found: %s", strings.Join(missing, ", "))}
	}
	if nodeSelector != "" {
		sel, _ := labels.Parse(nodeSelector)
		matched := 0
		for _, n := range all {
			if sel.Matches(labels.Set(n.Labels)) {
				want[n.Name] = true
				matched++
			}
		}
		if matched == 0 && len(names) == 0 {
			return nil, &ExitError{Code: ExitFailed, Err: fmt.Errorf("no node matches --selector %q", nodeSelector)}
		}
	}
	nodes := make([]string, 0, len(want))
	for n := range want {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	return nodes, nil
}

// listPods lists, with the drain library, the pods kubectl drain would
// evict from each node, sixteen nodes at a time. A node whose pods cannot
// be listed fails the whole (the first such error is returned); the pods
// that would stop kubectl drain, and its warnings, are kept per node.
func (d *drainSet) listPods(ctx context.Context, kube *dsClient, f drainFlags) error {
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
	)
	sem := make(chan struct{}, 16)
	for _, n := range d.nodes {
		wg.Add(1)
		go func(node string) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			h := &drain.Helper{
				Ctx: ctx, Client: kube, Force: f.force, GracePeriodSeconds: -1,
				IgnoreAllDaemonSets: f.ignoreDaemonSets, DeleteEmptyDirData: f.deleteEmptyDirData,
				PodSelector: f.podSelector, SkipWaitForDeleteTimeoutSeconds: f.skipWaitTimeout,
				ChunkSize: 500, Out: io.Discard, ErrOut: io.Discard,
			}
			list, errs := h.GetPodsForDeletion(node)
			mu.Lock()
			defer mu.Unlock()
			if list == nil {
				if firstErr == nil && len(errs) > 0 {
					firstErr = explain(errs[0], "list", "pods", "node "+node)
				}
				return
			}
			d.addNode(node, list, errs)
		}(n)
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	sort.Strings(d.errors)
	sort.Strings(d.warnings)
	return nil
}

// addNode keeps one node's drain list: its pods, sorted by namespace and
// name, and what drain would say of them.
func (d *drainSet) addNode(node string, list *drain.PodDeleteList, errs []error) {
	for _, e := range errs {
		d.errors = append(d.errors, fmt.Sprintf("node %s: %v", node, e))
	}
	if w := list.Warnings(); w != "" {
		d.warnings = append(d.warnings, fmt.Sprintf("node %s: %s", node, w))
	}
	pods := list.Pods()
	out := make([]*corev1.Pod, len(pods))
	for i := range pods {
		out[i] = &pods[i]
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	d.pods[node] = out
}
