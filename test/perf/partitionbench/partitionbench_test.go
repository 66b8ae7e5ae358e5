//go:build perf

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

// Package partitionbench measures, side by side in one run on a local kwok
// cluster with the real control plane (hack/cluster), how long it takes to
// drain a Mimir-like partitioned layout onto fresh nodes: three
// StatefulSets ingester-zone-{a,b,c} of -partitions replicas each (pod
// ingester-zone-a-5 is partition 5's replica in zone-a), each pinned to its
// zone and spread over -nodes-per-zone nodes of it, under
//
//	a  a partition budget: partition.podNameRegex
//	   "ingester-zone-[a-z]-([0-9]+)", maxUnavailable 1
//	b  one zone at a time: topologyKey zone, maxUnavailable 100%,
//	   maxDisruptedDomains 1
//	c  one policy/v1 PodDisruptionBudget, maxUnavailable 1 over all
//	d  a again with minReadySeconds (-min-ready, 10 s)
//
// Each case has its own namespace and nodes. Every old node is cordoned,
// then all are drained at once by one process with the drain library (a
// refused eviction retried after -retry, kubectl's 5 s) while as many fresh
// nodes are added. The wall time runs from the cordons until every drain has
// ended and every replica is up again. An independent watcher
// (kwokenv.PartitionWatcher: an informer on the pods, nothing the operator
// computes) checks every pod event: a replica is down when its pod is
// missing, not Running and Ready, or being deleted, the same in every case
// (pods turn Ready -ready-delay after they are bound). It prints a table
// and the ratios a/b, a/c and d/a with their targets (a miss is printed,
// not fatal), and fails on a violation (a, d: two replicas of a partition
// down at once; b: two zones degraded; c: two replicas down in all), a
// failed drain or an eviction error other than a 429.
package partitionbench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

const (
	budgetName = "ingesters"
	nodePrefix = "parts"
	// caseLabel pins a case's pods to its own nodes.
	caseLabel   = "bench.tdb.dev/case"
	webhookPort = 20243
	metricsPort = 19080
	probePort   = 19081
)

var zones = []string{"zone-a", "zone-b", "zone-c"}

// The bench's flags, after go test's -args (make bench-partitions BENCH_ARGS=...).
var (
	partitions   = flag.Int("partitions", 30, "Partitions: replicas of each zone's StatefulSet.")
	nodesPerZone = flag.Int("nodes-per-zone", 5, "Old nodes per zone (and as many fresh ones).")
	readyDelay   = flag.Duration("ready-delay", 2*time.Second, "How long a bound pod takes to turn Ready (every case alike).")
	minReady     = flag.Int("min-ready", 10, "minReadySeconds of case d.")
	retry        = flag.Duration("retry", 5*time.Second, "Wait before retrying a refused eviction (kubectl drain's is 5 s).")
	drainTimeout = flag.Duration("drain-timeout", 20*time.Minute, "Timeout of every drain.")
	only         = flag.String("cases", "abcd", "Cases to run, in order (subset of abcd).")
	rounds       = flag.Int("rounds", 1, "Run cases a, b and d this many times, interleaved, and compare their median wall times (case c, minutes long, runs once).")
	clusterName  = flag.String("cluster", "tdb-partitions", "Name of the local cluster.")
	keep         = flag.Bool("keep", false, "Keep the cluster at the end instead of tearing it down.")
	verbose      = flag.Bool("v", false, "Print each case's timeline (down, zones degraded, worst partition).")
)

// benchCase is one budget over the layout.
type benchCase struct {
	id, title string
	// run names one run of the case: its id, then a2, a3... in later
	// rounds (-rounds); its nodes and namespace are its own.
	run string
	tdb *policyv1alpha1.TopologyDisruptionBudgetSpec
	pdb bool
	// allowed is the budget's disruptionsAllowed with every replica
	// healthy.
	allowed int32
	bounds  kwokenv.PartitionBounds
	bound   string
}

func cases(l kwokenv.PartitionLayout) []benchCase {
	byPartition, byZone, warm := l.ByPartition(1, 0), l.ByZone(1), l.ByPartition(1, int32(*minReady))
	p := int32(l.Partitions)
	return []benchCase{
		{id: "a", title: "partition budget, maxUnavailable 1", tdb: &byPartition, allowed: p,
			bounds: kwokenv.PartitionBounds{PerPartition: 1, Zones: -1, Total: -1}, bound: "1 per partition"},
		{id: "b", title: "one zone at a time (100%, maxDisruptedDomains 1)", tdb: &byZone, allowed: p,
			bounds: kwokenv.PartitionBounds{PerPartition: -1, Zones: 1, Total: -1}, bound: "1 zone"},
		{id: "c", title: "one PDB, maxUnavailable 1 over all", pdb: true, allowed: 1,
			bounds: kwokenv.PartitionBounds{PerPartition: -1, Zones: -1, Total: 1}, bound: "1 in all"},
		{id: "d", title: fmt.Sprintf("a + minReadySeconds %d", *minReady), tdb: &warm, allowed: p,
			bounds: kwokenv.PartitionBounds{PerPartition: 1, Zones: -1, Total: -1}, bound: "1 per partition"},
	}
}

// result is what one case measured.
type result struct {
	c     benchCase
	wall  time.Duration
	drain *drainOutcome
	rep   kwokenv.PartitionReport
	err   error
}

func (r *result) failed() bool {
	return r.err != nil || r.rep.Violations > 0 || len(r.drain.errs) > 0
}

// env is what every case runs against.
type env struct {
	cluster *kwokenv.Cluster
	k8s     client.Client
	cs      kubernetes.Interface
	logDir  string
}

// TestPartitionBench runs the bench and fails on a violation, a failed
// drain or an eviction error that was not a 429.
func TestPartitionBench(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		t.Fatalf("partitionbench: %v", err)
	}
}

func run(ctx context.Context) error {
	start := time.Now()
	b, err := kwokenv.StartBench(*clusterName, "partitionbench-",
		fmt.Sprintf("3 zones x %d partitions, %d old and %d fresh nodes per zone and case, pods Ready %s after they are bound", *partitions, *nodesPerZone, *nodesPerZone, *readyDelay),
		[]string{"ZONES=3", "NODES_PER_ZONE=0", "POD_READY_DELAY=" + readyDelay.String()},
		kwokenv.OperatorOptions{WebhookPort: webhookPort, MetricsPort: metricsPort, ProbePort: probePort})
	if err != nil {
		return err
	}
	defer b.Close(*keep)
	cs, err := kwokenv.NewClientset(b.Cluster.Kubeconfig)
	if err != nil {
		return err
	}
	e := &env{cluster: b.Cluster, k8s: b.Client, cs: cs, logDir: b.LogDir}

	var results []*result
	for round := 1; round <= max(*rounds, 1); round++ {
		for _, bc := range cases(layout("")) {
			if !strings.Contains(*only, bc.id) || (round > 1 && bc.id == "c") {
				continue
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// Each round runs on its own nodes and namespace.
			bc.run = bc.id
			if round > 1 {
				bc.run = fmt.Sprintf("%s%d", bc.id, round)
			}
			fmt.Printf("\n>> case %s: %s\n", bc.run, bc.title)
			r := e.runCase(ctx, bc)
			results = append(results, r)
			if r.err != nil {
				fmt.Printf("   case %s did not complete: %v\n", bc.run, r.err)
				continue
			}
			fmt.Printf("   done in %s: %d evictions, %d refusals (429) retried; watcher: %s\n",
				r.wall.Round(10*time.Millisecond), r.drain.evicted, r.drain.refusals, r.rep)
			if *verbose {
				fmt.Print(kwokenv.Indent(r.rep.Timeline, "     "))
			}
		}
	}
	failed := report(results)
	fmt.Printf("\ntotal %s; drain logs, timelines and the operator log: %s\n", time.Since(start).Round(time.Second), b.LogDir)
	if failed {
		return errors.New("a case failed or a budget was exceeded (see the table)")
	}
	return nil
}

// layout is the bench's layout in namespace ns, pinned to a case's nodes.
func layout(ns string) kwokenv.PartitionLayout {
	return kwokenv.PartitionLayout{Namespace: ns, App: "ingester", Zones: zones, Partitions: *partitions,
		NodeLabel: [2]string{caseLabel, strings.TrimPrefix(ns, "parts-")}, ReadyDelay: readyDelay.String()}
}

// runCase deploys the layout and the case's budget on nodes of its own,
// drains them all at once while fresh nodes arrive, and measures.
func (e *env) runCase(ctx context.Context, bc benchCase) *result {
	r := &result{c: bc, drain: &drainOutcome{}}
	l := layout("parts-" + bc.run)
	old, err := e.addNodes(ctx, bc.run)
	if err == nil {
		err = e.deploy(ctx, l, bc)
	}
	if err == nil {
		err = e.waitSettled(ctx, l, bc)
	}
	if err != nil {
		r.err = err
		return r
	}
	w, err := kwokenv.WatchPartitions(ctx, e.cs, l, bc.bounds)
	if err != nil {
		r.err = err
		return r
	}
	defer w.Stop()
	fmt.Printf("   %d pods Ready on %d nodes, budget computed; draining them all while %d fresh nodes arrive\n", l.Replicas(), len(old), len(old))

	start := time.Now()
	var wg sync.WaitGroup
	var freshErr error
	wg.Go(func() { _, freshErr = e.addNodes(ctx, bc.run) })
	r.drain = drainAll(ctx, e.cs, old, *drainTimeout, *retry, start)
	wg.Wait()
	if err := errors.Join(freshErr, w.WaitAllUp(ctx, 5*time.Minute)); err != nil {
		r.err = err
	}
	r.wall = time.Since(start)
	r.rep = w.Stop()
	dir := filepath.Join(e.logDir, "case-"+bc.run)
	if err := os.MkdirAll(dir, 0o755); err == nil {
		_ = os.WriteFile(filepath.Join(dir, "timeline.txt"), []byte(r.rep.Timeline), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "drains.log"), []byte(r.drain.log.String()), 0o644)
	}
	for _, s := range r.drain.errs {
		fmt.Printf("   drain error: %s\n", s)
	}
	// The case's pods go, so that the next case has the machine to itself.
	_ = e.k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: l.Namespace}})
	return r
}

// addNodes adds nodesPerZone nodes in every zone, the zones in parallel,
// labelled with the case.
func (e *env) addNodes(ctx context.Context, caseID string) ([]string, error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		all  []string
		errs []error
	)
	for _, z := range zones {
		wg.Go(func() {
			names, err := e.cluster.AddNodesWithPrefix(ctx, nodePrefix, z, *nodesPerZone, map[string]string{caseLabel: caseID})
			mu.Lock()
			defer mu.Unlock()
			all = append(all, names...)
			errs = append(errs, err)
		})
	}
	wg.Wait()
	sort.Strings(all)
	return all, errors.Join(errs...)
}

// deploy creates the case's namespace, the layout and the budget.
func (e *env) deploy(ctx context.Context, l kwokenv.PartitionLayout, bc benchCase) error {
	if err := e.k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: l.Namespace}}); err != nil {
		return fmt.Errorf("creating namespace %s (a fresh cluster is expected): %w", l.Namespace, err)
	}
	// Pods are refused until the namespace's default ServiceAccount exists.
	if err := poll(ctx, time.Minute, func() (bool, string) {
		err := e.k8s.Get(ctx, client.ObjectKey{Namespace: l.Namespace, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err)
	}); err != nil {
		return err
	}
	for _, s := range l.StatefulSets() {
		if err := e.k8s.Create(ctx, s); err != nil {
			return err
		}
	}
	if bc.pdb {
		return e.k8s.Create(ctx, l.OnePDB(budgetName))
	}
	return e.k8s.Create(ctx, builders.Budget(budgetName).Namespace(l.Namespace).Spec(*bc.tdb).Obj())
}

// waitSettled waits until every replica is Ready and the budget counts
// them all healthy (after minReadySeconds for d) and allows bc.allowed.
func (e *env) waitSettled(ctx context.Context, l kwokenv.PartitionLayout, bc benchCase) error {
	want := int32(l.Replicas())
	return poll(ctx, 3*time.Minute, func() (bool, string) {
		var pods corev1.PodList
		if err := e.k8s.List(ctx, &pods, client.InNamespace(l.Namespace), client.MatchingLabels(l.Labels())); err != nil {
			return false, err.Error()
		}
		ready := 0
		for i := range pods.Items {
			if kwokenv.PodReady(&pods.Items[i]) {
				ready++
			}
		}
		key := client.ObjectKey{Namespace: l.Namespace, Name: budgetName}
		var expected, healthy, allowed int32
		current := false
		if bc.pdb {
			var p policyv1.PodDisruptionBudget
			if err := e.k8s.Get(ctx, key, &p); err != nil {
				return false, err.Error()
			}
			s := p.Status
			current, expected, healthy, allowed = s.ObservedGeneration == p.Generation, s.ExpectedPods, s.CurrentHealthy, s.DisruptionsAllowed
		} else {
			var t policyv1alpha1.TopologyDisruptionBudget
			if err := e.k8s.Get(ctx, key, &t); err != nil {
				return false, err.Error()
			}
			s := t.Status
			current = s.ObservedGeneration == t.Generation && len(s.DisruptedPods) == 0
			expected, healthy, allowed = s.ExpectedPods, s.CurrentHealthy, s.DisruptionsAllowed
		}
		state := fmt.Sprintf("%d of %d pods Ready; budget current %v, expected %d healthy %d allowed %d (want %d)", ready, want, current, expected, healthy, allowed, bc.allowed)
		return int32(ready) == want && current && expected == want && healthy == want && allowed == bc.allowed, state
	})
}

// poll calls f every 250 ms until it reports done, at most within.
func poll(ctx context.Context, within time.Duration, f func() (bool, string)) error {
	deadline := time.Now().Add(within)
	for {
		done, state := f()
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not done within %s: %s", within, state)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// report prints the table and the ratios and says whether a case failed.
func report(results []*result) bool {
	fmt.Printf("\n== results (3 zones x %d partitions, every node drained at once, retry %s, pods Ready %s after binding)\n", *partitions, *retry, *readyDelay)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "CASE\tBUDGET\tWALL\tMAX DOWN OF A PARTITION\tMAX ZONES DEGRADED\tMAX DOWN\tVIOLATIONS\tBOUND\tEVICTIONS\tREFUSALS(429)")
	walls := map[string][]float64{}
	failed := false
	for _, r := range results {
		failed = failed || r.failed()
		if r.err != nil {
			_, _ = fmt.Fprintf(tw, "%s\t%s\terror: %v\n", r.c.run, r.c.title, r.err)
			continue
		}
		walls[r.c.id] = append(walls[r.c.id], r.wall.Seconds())
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%.1fs\t%d\t%d\t%d\t%d\t%s\t%d\t%d\n", r.c.run, r.c.title, r.wall.Seconds(),
			r.rep.MaxPartitionDown, r.rep.MaxZonesDegraded, r.rep.MaxDown, r.rep.Violations, r.c.bound, r.drain.evicted, r.drain.refusals)
	}
	_ = tw.Flush()
	fmt.Println()
	for _, id := range []string{"a", "b", "d"} {
		if w := walls[id]; len(w) > 1 {
			sort.Float64s(w)
			fmt.Printf("case %s: median %.1fs of %d rounds %.1f\n", id, w[len(w)/2], len(w), w)
		}
	}
	// wall is a case's median wall time over its rounds.
	wall := func(id string) (float64, bool) {
		w := walls[id]
		if len(w) == 0 {
			return 0, false
		}
		sort.Float64s(w)
		return w[len(w)/2], true
	}
	a, okA := wall("a")
	if bw, ok := wall("b"); okA && ok {
		fmt.Printf("a/b = %.1fs / %.1fs = %.2f (target <= 1, no slower than one zone at a time: each node holds one zone's pods, so partitions of different zones can go together): %s\n",
			a, bw, a/bw, verdict(a <= bw))
	}
	if c, ok := wall("c"); okA && ok {
		fmt.Printf("a/c = %.1fs / %.1fs = %.3f, (a) %.1fx faster (target >= 3x): %s\n", a, c, a/c, c/a, verdict(c >= 3*a))
	}
	if d, ok := wall("d"); okA && ok {
		// With maxUnavailable 1, each partition's replicas go one after
		// the other: every one after the first waits for the one before
		// to have been Ready minReadySeconds.
		steps := len(zones) - 1
		limit := float64(steps * *minReady)
		fmt.Printf("d/a = %.1fs / %.1fs = %.2f: minReadySeconds %d added %.1fs over %d sequential steps per partition (target <= %.0fs, the delay per step): %s\n",
			d, a, d/a, *minReady, d-a, steps, limit, verdict(d-a <= limit))
	}
	return failed
}

func verdict(met bool) string {
	if met {
		return "MET"
	}
	return "MISSED"
}
