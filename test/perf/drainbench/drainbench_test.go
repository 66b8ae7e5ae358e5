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

// Package drainbench measures, side by side in one run on a local kwok
// cluster with the real control plane (hack/cluster), how long it takes to
// drain every node of a 24-pod, 3-zone workload onto fresh nodes under:
//
//	a  a policy/v1 PodDisruptionBudget, maxUnavailable 1 over all 24 pods
//	b  a TopologyDisruptionBudget, maxUnavailable 1 per zone
//	c  a TopologyDisruptionBudget, maxUnavailable 100% per zone and
//	   maxDisruptedDomains 1 (one whole zone at a time)
//	d  no budget at all (the floor, for reference)
//
// The operator runs as a local process for every case (its webhook sees
// every eviction, so its latency is included uniformly). Each case gets its
// own namespace and its own nodes (4 per zone, labelled with the case and
// pinned by node affinity), one StatefulSet of 8 per zone (Parallel, spread
// over hostnames). Once the pods are Ready and the budget is computed, 4 fresh
// nodes per zone are added, then every old node is drained at once (one
// `kubectl drain` process per node). The wall time runs from the start of the
// drains until every drain has finished and all 24 pods are Ready again. An
// independent kwokenv.Watcher measurement (Watcher.Unavailable, sampled every
// 100 ms) gives the maximum unavailable pods per zone and overall, and the
// maximum number of zones disrupted at once.
//
// It prints a table, the speed-ups a/b and a/c against their targets (2.5x
// and 6x; a miss is printed, not fatal), and exits non-zero if a budget was
// exceeded (a: more than 1 unavailable overall; b: more than 1 in a zone; c:
// more than 1 zone disrupted at once), a drain failed, or kubectl reported an
// eviction error that was not a 429. The cluster is torn down at the end
// unless -keep.
package drainbench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

const (
	perZone      = 8
	nodesPerZone = 4
	nodePrefix   = "bench"
	// caseLabel pins a case's pods to its own nodes.
	caseLabel   = "bench.tdb.dev/case"
	app         = "ingester"
	budgetName  = "ingesters"
	webhookPort = 29443
	metricsPort = 28080
	probePort   = 28081
)

var zones = []string{"zone-a", "zone-b", "zone-c"}

// benchCase is one budget configuration.
type benchCase struct {
	id, title string
	// pdb: a policy/v1 PDB; tdb: a TopologyDisruptionBudget spec; neither:
	// no budget.
	pdb *policyv1.PodDisruptionBudgetSpec
	tdb *policyv1alpha1.TopologyDisruptionBudgetSpec
	// wantAllowed is the budget's disruptionsAllowed once computed.
	wantAllowed int32
	// check names the budget's bound and says whether the run exceeded it.
	bound    string
	exceeded func(r *result) bool
	// mirrorOf names the case this one repeats with mirrored PDBs.
	mirrorOf string
}

func selector() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
}

func cases() []benchCase {
	out := []benchCase{
		{
			id: "a", title: "PDB maxUnavailable 1 (all pods)",
			pdb:         &policyv1.PodDisruptionBudgetSpec{Selector: selector(), MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			wantAllowed: 1,
			bound:       "overall <= 1",
			exceeded:    func(r *result) bool { return r.maxOverall > 1 },
		},
		{
			id: "b", title: "TDB maxUnavailable 1 per zone",
			tdb: &policyv1alpha1.TopologyDisruptionBudgetSpec{Selector: policyv1alpha1.SetAsLabelSelector(selector().MatchLabels), TopologyKey: kwokenv.ZoneKey,
				MaxUnavailable: ptr.To(intstr.FromInt32(1))},
			wantAllowed: 3,
			bound:       "each zone <= 1",
			exceeded: func(r *result) bool {
				for _, u := range r.maxPerZone {
					if u > 1 {
						return true
					}
				}
				return false
			},
		},
		{
			id: "c", title: "TDB 100% per zone, maxDisruptedDomains 1",
			tdb: &policyv1alpha1.TopologyDisruptionBudgetSpec{Selector: policyv1alpha1.SetAsLabelSelector(selector().MatchLabels), TopologyKey: kwokenv.ZoneKey,
				MaxUnavailable: ptr.To(intstr.FromString("100%")), MaxDisruptedDomains: ptr.To[int32](1)},
			// One zone at a time: a zone's pods, not the sum over zones.
			wantAllowed: perZone,
			bound:       "zones disrupted <= 1",
			exceeded:    func(r *result) bool { return r.maxZones > 1 },
		},
		{
			id: "d", title: "no budget (baseline)",
			bound:    "-",
			exceeded: func(*result) bool { return false },
		},
	}
	// The TDB cases again with mirrored PDBs: drains no slower, and the
	// mirrors' writes per eviction.
	out = append(out, mirroredCase(out[1], "e"), mirroredCase(out[2], "f"))
	return out
}

// mirroredCase is bc with mirrorPodDisruptionBudgets: PerDomain.
func mirroredCase(bc benchCase, id string) benchCase {
	m := bc
	m.id, m.title = id, bc.title+", mirrored PDBs"
	m.tdb = bc.tdb.DeepCopy()
	m.tdb.MirrorPodDisruptionBudgets = policyv1alpha1.MirrorPerDomain
	m.mirrorOf = bc.id
	return m
}

// result is what one case measured.
type result struct {
	c benchCase
	// wall: start of the drains until every drain finished and all pods are
	// Ready; drains: until the last drain finished.
	wall, drains time.Duration
	maxPerZone   map[string]int
	maxOverall   int
	maxZones     int
	samples      int
	sampleErrs   int
	refusals     int
	refusalKinds map[string]int
	non429       []string
	evictions    int
	failed       []string
	notOnFresh   int
	webhook      webhookStats
	operatorOK   bool
	// reopen is the reopen probe (cases a, b, c).
	reopen *reopenResult
	err    error
}

func (r *result) exceeded() bool { return r.err == nil && r.c.exceeded(r) }

// The bench's flags, after go test's -args (make bench-drain BENCH_ARGS=...).
var (
	keep         = flag.Bool("keep", false, "Keep the cluster at the end instead of tearing it down.")
	clusterName  = flag.String("cluster", "tdb-bench", "Name of the local cluster.")
	drainTimeout = flag.Duration("drain-timeout", 8*time.Minute, "kubectl drain --timeout of every drain.")
	only         = flag.String("cases", "abcdef", "Cases to run, in order (subset of abcdef).")
	verbose      = flag.Bool("v", false, "Print the unavailability timeline of each case (every refusal is in the drain logs).")
)

// TestDrainBench runs the bench and fails when a budget was exceeded, a
// drain failed or kubectl reported an eviction error that was not a 429.
func TestDrainBench(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, *clusterName, *keep, *drainTimeout, *only, *verbose)
	if err != nil {
		t.Fatalf("drainbench: %v", err)
	}
	if code != 0 {
		t.Fatalf("drainbench: exit code %d (see the report above)", code)
	}
}

func run(ctx context.Context, name string, keep bool, drainTimeout time.Duration, only string, verbose bool) (int, error) {
	var selected []benchCase
	for _, bc := range cases() {
		if strings.Contains(only, bc.id) {
			selected = append(selected, bc)
		}
	}
	if len(selected) == 0 {
		return 2, fmt.Errorf("-cases %q selects no case (want letters of abcdef)", only)
	}
	start := time.Now()
	// No default nodes: every case adds its own, so cases never share one.
	b, err := kwokenv.StartBench(name, "drainbench-", "POD_READY_DELAY=2s",
		[]string{"ZONES=3", "NODES_PER_ZONE=0", "POD_READY_DELAY=2s"},
		kwokenv.OperatorOptions{WebhookPort: webhookPort, MetricsPort: metricsPort, ProbePort: probePort})
	if err != nil {
		return 1, err
	}
	defer b.Close(keep)
	c, k8s, logDir, op := b.Cluster, b.Client, b.LogDir, b.Operator

	var results []*result
	for _, bc := range selected {
		if ctx.Err() != nil {
			return 1, ctx.Err()
		}
		fmt.Printf("\n>> case %s: %s\n", bc.id, bc.title)
		r := runCase(ctx, c, k8s, op, bc, drainTimeout, filepath.Join(logDir, "case-"+bc.id), verbose)
		results = append(results, r)
		if r.err != nil {
			fmt.Printf("   case %s did not complete: %v\n", bc.id, r.err)
		} else {
			fmt.Printf("   done in %s (drains %s): max unavailable %s, overall %d, zones at once %d; %d refusals (429), %d non-429, %d drain(s) failed\n",
				r.wall.Round(10*time.Millisecond), r.drains.Round(10*time.Millisecond), kwokenv.ZoneList(r.maxPerZone), r.maxOverall, r.maxZones,
				r.refusals, len(r.non429), len(r.failed))
		}
	}

	code := report(results)
	fmt.Printf("\ntotal %s; drain output, timelines and the operator log: %s\n", time.Since(start).Round(time.Second), logDir)
	return code, nil
}

// runCase deploys the case's workload and budget on its own nodes, adds the
// fresh nodes, drains the old ones at once and measures.
func runCase(ctx context.Context, c *kwokenv.Cluster, k8s client.Client, op *kwokenv.Operator, bc benchCase, drainTimeout time.Duration, dir string, verbose bool) *result {
	r := &result{c: bc, maxPerZone: map[string]int{}, refusalKinds: map[string]int{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.err = err
		return r
	}
	ns := "bench-" + bc.id
	nodeLabels := map[string]string{caseLabel: bc.id}

	old, err := addNodes(ctx, c, nodeLabels)
	if err != nil {
		r.err = fmt.Errorf("adding the old nodes: %w", err)
		return r
	}
	if err := deploy(ctx, k8s, ns, bc); err != nil {
		r.err = err
		return r
	}
	w := &kwokenv.Watcher{Client: k8s, NS: ns, Selector: labels.SelectorFromSet(labels.Set{"app": app}),
		Expected: func(context.Context) (map[string]int, error) {
			return map[string]int{"zone-a": perZone, "zone-b": perZone, "zone-c": perZone}, nil
		}}
	if err := waitReady(ctx, k8s, w, ns, bc); err != nil {
		r.err = err
		return r
	}
	spread, err := podsPerNode(ctx, k8s, ns)
	if err != nil {
		r.err = err
		return r
	}
	fmt.Printf("   24 pods Ready on %d old nodes (pods per node: %s); budget computed\n", len(old), spread)

	fresh, err := addNodes(ctx, c, nodeLabels)
	if err != nil {
		r.err = fmt.Errorf("adding the fresh nodes: %w", err)
		return r
	}
	fmt.Printf("   %d fresh nodes added; draining the %d old nodes at once\n", len(fresh), len(old))

	before, _ := scrapeWebhook()
	// The sampler: Watcher.Unavailable every 100 ms, from just before the
	// drains until the end of the case.
	drainStart := time.Now()
	sampler := kwokenv.StartSampler(w.Unavailable, 100*time.Millisecond, nil)

	drainCtx, cancelDrains := context.WithTimeout(ctx, drainTimeout+time.Minute)
	defer cancelDrains()
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	drainErrs := make([]error, len(old))
	for i, node := range old {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := &drainOutput{start: drainStart, node: node}
			drainErrs[i] = drain(drainCtx, c, node, drainTimeout, out)
			_ = os.WriteFile(filepath.Join(dir, "drain-"+node+".log"), []byte(out.log.String()), 0o644)
			mu.Lock()
			defer mu.Unlock()
			r.refusals += out.refusals
			for k, v := range out.kinds {
				r.refusalKinds[k] += v
			}
			r.non429 = append(r.non429, out.non429...)
			r.evictions += out.evicted
		}()
	}
	wg.Wait()
	r.drains = time.Since(drainStart)
	for i, err := range drainErrs {
		if err != nil {
			r.failed = append(r.failed, fmt.Sprintf("%s: %v", old[i], err))
		}
	}

	// Then until all 24 pods are Ready again (on any node).
	deadline := time.Now().Add(3 * time.Minute)
	for {
		u, err := w.Unavailable(ctx)
		if err == nil && kwokenv.Sum(u) == 0 {
			r.wall = time.Since(drainStart)
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.wall = time.Since(drainStart)
			r.err = errors.Join(fmt.Errorf("the pods were not all Ready again 3m after the drains ended (unavailable %v)", u), err)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// One more sample at the end, then stop.
	time.Sleep(200 * time.Millisecond)
	rep := sampler.Stop()
	r.samples, r.sampleErrs, r.maxPerZone = rep.Samples, rep.Errors, rep.MaxZone
	r.maxOverall, r.maxZones = rep.MaxTotal, rep.MaxDisruptedZones
	_ = os.WriteFile(filepath.Join(dir, "timeline.txt"), []byte(rep.Timeline), 0o644)
	if verbose {
		fmt.Printf("   unavailability timeline (t, unavailable per zone):\n%s", kwokenv.Indent(rep.Timeline, "     "))
	}

	after, err := scrapeWebhook()
	if err == nil {
		r.webhook = after.minus(before)
	}
	r.operatorOK = op.Ready()
	if r.notOnFresh, err = podsNotOn(ctx, k8s, ns, fresh); err != nil && r.err == nil {
		r.err = err
	}
	if r.err == nil && strings.Contains("abc", bc.id) {
		fmt.Printf("   reopen probe: %d evictions, each followed by dry-run evictions of another pod every 5 ms\n", reopenTrials)
		r.reopen = measureReopen(ctx, c.Kubeconfig, bc, ns, func() error { return waitReady(ctx, k8s, w, ns, bc) })
		if r.reopen.err != nil {
			r.err = fmt.Errorf("reopen probe: %w", r.reopen.err)
		}
	}
	for _, f := range r.failed {
		fmt.Printf("   drain failed: %s\n", f)
	}
	for _, l := range r.non429 {
		fmt.Printf("   non-429 eviction error: %s\n", l)
	}
	if r.notOnFresh > 0 {
		fmt.Printf("   warning: %d pod(s) are not on the fresh nodes\n", r.notOnFresh)
	}
	if !r.operatorOK {
		fmt.Println("   warning: the operator's readiness probe does not answer OK")
	}
	return r
}

// addNodes adds nodesPerZone nodes in every zone (zones in parallel: the
// numbering only collides within a zone) with the case's label.
func addNodes(ctx context.Context, c *kwokenv.Cluster, nodeLabels map[string]string) ([]string, error) {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		all  []string
		errs []error
	)
	for _, z := range zones {
		wg.Add(1)
		go func() {
			defer wg.Done()
			names, err := c.AddNodesWithPrefix(ctx, nodePrefix, z, nodesPerZone, nodeLabels)
			mu.Lock()
			defer mu.Unlock()
			all = append(all, names...)
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	sort.Strings(all)
	return all, errors.Join(errs...)
}

// deploy creates the namespace, one StatefulSet of 8 per zone pinned to the
// case's nodes, and the case's budget.
func deploy(ctx context.Context, k8s client.Client, ns string, bc benchCase) error {
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return fmt.Errorf("creating namespace %s (a fresh cluster is expected): %w", ns, err)
	}
	for _, z := range zones {
		if err := k8s.Create(ctx, statefulSet(ns, z, bc.id)); err != nil {
			return err
		}
	}
	switch {
	case bc.pdb != nil:
		return k8s.Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: budgetName}, Spec: *bc.pdb})
	case bc.tdb != nil:
		return k8s.Create(ctx, builders.Budget(budgetName).Namespace(ns).Spec(*bc.tdb).Obj())
	}
	return nil
}

func statefulSet(ns, zone, caseID string) *appsv1.StatefulSet {
	return builders.StatefulSet(app+"-"+zone).Namespace(ns).Replicas(perZone).ParallelPodManagement().
		PodLabels(map[string]string{"app": app, "zone": zone}).
		Containers(corev1.Container{Name: app, Image: "ingester:bench"}).
		RequireNodeLabel(kwokenv.ZoneKey, zone).RequireNodeLabel(caseLabel, caseID).
		Spread("kubernetes.io/hostname", corev1.ScheduleAnyway).Obj()
}

// waitReady waits until the 24 pods are Ready and the budget is computed
// for them.
func waitReady(ctx context.Context, k8s client.Client, w *kwokenv.Watcher, ns string, bc benchCase) error {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		u, err := w.Unavailable(ctx)
		podsOK := err == nil && kwokenv.Sum(u) == 0
		budgetOK, state := budgetComputed(ctx, k8s, ns, bc)
		if podsOK && budgetOK {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return errors.Join(fmt.Errorf("case %s: pods not Ready or budget not computed within 3m (unavailable %v; budget %s)", bc.id, u, state), err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func budgetComputed(ctx context.Context, k8s client.Client, ns string, bc benchCase) (bool, string) {
	key := client.ObjectKey{Namespace: ns, Name: budgetName}
	switch {
	case bc.pdb != nil:
		var p policyv1.PodDisruptionBudget
		if err := k8s.Get(ctx, key, &p); err != nil {
			return false, err.Error()
		}
		s := p.Status
		return s.ObservedGeneration >= p.Generation && s.ExpectedPods == 3*perZone && s.CurrentHealthy == 3*perZone && s.DisruptionsAllowed == bc.wantAllowed,
			fmt.Sprintf("expected %d healthy %d allowed %d", s.ExpectedPods, s.CurrentHealthy, s.DisruptionsAllowed)
	case bc.tdb != nil:
		var t policyv1alpha1.TopologyDisruptionBudget
		if err := k8s.Get(ctx, key, &t); err != nil {
			return false, err.Error()
		}
		s := t.Status
		ok := s.ObservedGeneration >= t.Generation && s.ExpectedPods == 3*perZone && s.CurrentHealthy == 3*perZone && s.DisruptionsAllowed == bc.wantAllowed
		state := fmt.Sprintf("expected %d healthy %d allowed %d (want %d)", s.ExpectedPods, s.CurrentHealthy, s.DisruptionsAllowed, bc.wantAllowed)
		if ok && bc.mirrorOf != "" {
			return mirrorsComputed(ctx, k8s, &t)
		}
		return ok, state
	}
	return true, "none"
}

// mirrorsComputed says whether the budget's mirrored PDBs exist, one per
// zone, and the disruption controller has counted their pods.
func mirrorsComputed(ctx context.Context, k8s client.Client, t *policyv1alpha1.TopologyDisruptionBudget) (bool, string) {
	c := apimeta.FindStatusCondition(t.Status.Conditions, policyv1alpha1.ConditionMirrored)
	if c == nil || c.Status != metav1.ConditionTrue {
		return false, fmt.Sprintf("not mirrored yet (%v)", c)
	}
	var pdbs policyv1.PodDisruptionBudgetList
	if err := k8s.List(ctx, &pdbs, client.InNamespace(t.Namespace), client.MatchingLabels{budget.MirrorBudgetLabel: t.Name}); err != nil {
		return false, err.Error()
	}
	counted := 0
	for _, p := range pdbs.Items {
		if p.Status.ObservedGeneration >= p.Generation && p.Status.ExpectedPods == perZone && p.Status.CurrentHealthy == perZone {
			counted++
		}
	}
	return counted == 3, fmt.Sprintf("%d mirrors, %d counted by the disruption controller", len(pdbs.Items), counted)
}

type drainOutput struct {
	start    time.Time
	node     string
	mu       sync.Mutex
	log      strings.Builder
	refusals int
	kinds    map[string]int
	non429   []string
	evicted  int
}

func (o *drainOutput) line(stream, l string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintf(&o.log, "%7.2fs %s %s\n", time.Since(o.start).Seconds(), stream, l)
	switch {
	case strings.Contains(l, "error when evicting") && strings.Contains(l, "from terminating namespace"):
		// Retried by kubectl, but a 403, not a 429.
		o.non429 = append(o.non429, o.node+": "+l)
	case strings.Contains(l, "will retry after"):
		// kubectl retries exactly the 429s (apierrors.IsTooManyRequests).
		o.refusals++
		if o.kinds == nil {
			o.kinds = map[string]int{}
		}
		o.kinds[refusalKind(l)]++
	case strings.Contains(l, "error when evicting"):
		o.non429 = append(o.non429, o.node+": "+l)
	case stream == "out" && strings.HasSuffix(l, " evicted"):
		o.evicted++
	}
}

// refusalKind classifies a 429 by its message.
func refusalKind(l string) string {
	switch {
	case strings.Contains(l, "violate the pod's disruption budget"):
		return "PDB"
	case strings.Contains(l, "maxDisruptedDomains is"):
		return "TDB:MaxDisruptedDomains"
	case strings.Contains(l, "healthy pods, needs"):
		return "TDB:InsufficientPods"
	case strings.Contains(l, "cannot decide the eviction"):
		return "TDB:Unavailable"
	case strings.Contains(l, "too many concurrent evictions"):
		return "TDB:Contended"
	case strings.Contains(l, "is not in the budget's status yet"):
		return "TDB:UnknownDomain"
	case strings.Contains(l, "status is being updated"):
		return "TDB:StaleStatus"
	case strings.Contains(l, "topology disruption budget"):
		return "TDB:other"
	}
	return "other"
}

// lineWriter calls f for every line written to it.
type lineWriter struct {
	f   func(string)
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			return len(p), nil
		}
		w.f(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
}

func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		w.f(string(w.buf))
		w.buf = nil
	}
}

// drain runs one kubectl drain of node to the end.
func drain(ctx context.Context, c *kwokenv.Cluster, node string, timeout time.Duration, out *drainOutput) error {
	cmd := c.Kubectl(ctx, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout="+timeout.String())
	stdout := &lineWriter{f: func(l string) { out.line("out", l) }}
	stderr := &lineWriter{f: func(l string) { out.line("err", l) }}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	err := cmd.Run()
	stdout.flush()
	stderr.flush()
	if err != nil {
		out.mu.Lock()
		defer out.mu.Unlock()
		var tail []string
		for _, l := range strings.Split(strings.TrimSpace(out.log.String()), "\n") {
			if strings.Contains(l, " err ") && !strings.Contains(l, "will retry after") {
				tail = append(tail, l)
			}
		}
		if len(tail) > 3 {
			tail = tail[len(tail)-3:]
		}
		return fmt.Errorf("%w: %s", err, strings.Join(tail, "; "))
	}
	return nil
}

func podsPerNode(ctx context.Context, k8s client.Client, ns string) (string, error) {
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return "", err
	}
	perNode := map[string]int{}
	for _, p := range pods.Items {
		perNode[p.Spec.NodeName]++
	}
	hist := map[int]int{}
	for _, n := range perNode {
		hist[n]++
	}
	var counts []int
	for n := range hist {
		counts = append(counts, n)
	}
	sort.Ints(counts)
	var parts []string
	for _, n := range counts {
		parts = append(parts, fmt.Sprintf("%d nodes x %d", hist[n], n))
	}
	return strings.Join(parts, ", "), nil
}

func podsNotOn(ctx context.Context, k8s client.Client, ns string, nodes []string) (int, error) {
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return 0, err
	}
	in := map[string]bool{}
	for _, n := range nodes {
		in[n] = true
	}
	n := 0
	for _, p := range pods.Items {
		if !in[p.Spec.NodeName] {
			n++
		}
	}
	return n, nil
}

// webhookStats are the operator's eviction decisions over one case, from its
// metrics.
type webhookStats struct {
	decisions map[string]float64
	// mirrorWrites counts the mirror controller's writes by operation.
	mirrorWrites map[string]float64
	// latency by decision (allowed, refused, error).
	latency map[string]*histogram
}

type histogram struct {
	count, seconds float64
	// buckets: cumulative counts by upper bound.
	buckets map[float64]float64
}

func (s webhookStats) minus(o webhookStats) webhookStats {
	out := webhookStats{decisions: map[string]float64{}, latency: map[string]*histogram{}, mirrorWrites: map[string]float64{}}
	for k, v := range s.decisions {
		if d := v - o.decisions[k]; d != 0 {
			out.decisions[k] = d
		}
	}
	for k, v := range s.mirrorWrites {
		if d := v - o.mirrorWrites[k]; d != 0 {
			out.mirrorWrites[k] = d
		}
	}
	for k, h := range s.latency {
		prev := o.latency[k]
		if prev == nil {
			prev = &histogram{}
		}
		d := &histogram{count: h.count - prev.count, seconds: h.seconds - prev.seconds, buckets: map[float64]float64{}}
		for le, v := range h.buckets {
			d.buckets[le] = v - prev.buckets[le]
		}
		if d.count > 0 {
			out.latency[k] = d
		}
	}
	return out
}

// String gives the mean and a p99 upper bound per decision.
func (s webhookStats) String() string {
	keys := make([]string, 0, len(s.latency))
	for k := range s.latency {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		h := s.latency[k]
		parts = append(parts, fmt.Sprintf("%s n=%d mean %s p99 %s", k, int(h.count),
			time.Duration(h.seconds/h.count*float64(time.Second)).Round(10*time.Microsecond), h.p99()))
	}
	if len(parts) == 0 {
		return "no decisions"
	}
	return strings.Join(parts, "; ")
}

func (h *histogram) p99() string {
	var les []float64
	for le := range h.buckets {
		les = append(les, le)
	}
	sort.Float64s(les)
	for _, le := range les {
		if math.IsInf(le, 1) {
			break
		}
		if h.buckets[le] >= 0.99*h.count {
			return "<=" + time.Duration(le*float64(time.Second)).String()
		}
	}
	return ">10s"
}

// scrapeWebhook reads the decision counters and latency histogram (summed
// over decisions) from the operator's metrics endpoint.
func scrapeWebhook() (webhookStats, error) {
	s := webhookStats{decisions: map[string]float64{}, latency: map[string]*histogram{}, mirrorWrites: map[string]float64{}}
	hist := func(series string) *histogram {
		k := kwokenv.MetricLabel(series, "decision")
		if s.latency[k] == nil {
			s.latency[k] = &histogram{buckets: map[float64]float64{}}
		}
		return s.latency[k]
	}
	err := kwokenv.ScrapeMetrics(metricsPort, func(series string, v float64) {
		switch {
		case strings.HasPrefix(series, "tdb_mirror_writes_total{"):
			s.mirrorWrites[kwokenv.MetricLabel(series, "operation")] += v
		case strings.HasPrefix(series, "tdb_eviction_decisions_total{"):
			s.decisions[kwokenv.MetricLabel(series, "decision")+"/"+kwokenv.MetricLabel(series, "reason")] += v
		case strings.HasPrefix(series, "tdb_eviction_decision_duration_seconds_count{"):
			hist(series).count += v
		case strings.HasPrefix(series, "tdb_eviction_decision_duration_seconds_sum{"):
			hist(series).seconds += v
		case strings.HasPrefix(series, "tdb_eviction_decision_duration_seconds_bucket{"):
			if f, err := strconv.ParseFloat(kwokenv.MetricLabel(series, "le"), 64); err == nil {
				hist(series).buckets[f] += v
			}
		}
	})
	return s, err
}

// report prints the table, the ratios and the verdicts, and returns the exit
// code.
func report(results []*result) int {
	fmt.Println("\n== results")
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "CASE\tBUDGET\tWALL\tDRAINS\tMAX UNAVAIL a/b/c\tOVERALL\tZONES\tREFUSALS(429)\tNON-429\tDRAIN FAILED\tEVICTED\tBOUND\tEXCEEDED")
	byID := map[string]*result{}
	code := 0
	for _, r := range results {
		byID[r.c.id] = r
		if r.err != nil {
			_, _ = fmt.Fprintf(tw, "%s\t%s\terror: %v\n", r.c.id, r.c.title, r.err)
			code = 1
			continue
		}
		exceeded := "no"
		if r.c.bound == "-" {
			exceeded = "-"
		}
		if r.exceeded() {
			exceeded = "YES"
			code = 1
		}
		if len(r.failed) > 0 || len(r.non429) > 0 {
			code = 1
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%.1fs\t%.1fs\t%d/%d/%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n",
			r.c.id, r.c.title, r.wall.Seconds(), r.drains.Seconds(),
			r.maxPerZone["zone-a"], r.maxPerZone["zone-b"], r.maxPerZone["zone-c"], r.maxOverall, r.maxZones,
			r.refusals, len(r.non429), len(r.failed), r.evictions, r.c.bound, exceeded)
	}
	_ = tw.Flush()

	fmt.Println("\nrefusals by kind, webhook decisions (operator metrics) and watcher samples:")
	for _, r := range results {
		if r.err != nil {
			continue
		}
		fmt.Printf("  %s: kubectl refusals: %s\n     webhook decisions: %s\n     webhook latency: %s\n     watcher: %d samples, %d errors\n",
			r.c.id, kinds(r.refusalKinds), kindsF(r.webhook.decisions), r.webhook, r.samples, r.sampleErrs)
	}

	fmt.Println()
	ratio := func(num, den, target string, want float64) {
		a, b := byID[num], byID[den]
		if a == nil || b == nil || a.err != nil || b.err != nil || b.wall <= 0 {
			fmt.Printf("%s/%s: n/a\n", num, den)
			return
		}
		got := a.wall.Seconds() / b.wall.Seconds()
		verdict := "MET"
		if got < want {
			verdict = "MISS"
		}
		fmt.Printf("%s/%s = %.1fs / %.1fs = %.2fx (target >= %s): %s\n", num, den, a.wall.Seconds(), b.wall.Seconds(), got, target, verdict)
	}
	ratio("a", "b", "2.5x", 2.5)
	ratio("a", "c", "6x", 6)

	// Reopen: from the replacement Ready to the next eviction allowed.
	fmt.Println("\nreopen (replacement Ready -> next eviction allowed; dry runs every 5 ms):")
	for _, r := range results {
		if r.reopen == nil || r.reopen.err != nil || len(r.reopen.times) == 0 {
			continue
		}
		fmt.Printf("  %s: median %s, p90 %s, max %s; first try refused in %d of %d\n", r.c.id,
			r.reopen.quantile(.5).Round(time.Millisecond), r.reopen.quantile(.9).Round(time.Millisecond),
			r.reopen.quantile(1).Round(time.Millisecond), r.reopen.firstTryRefused, len(r.reopen.times))
	}
	if a := byID["a"]; a != nil && a.reopen != nil && len(a.reopen.times) > 0 {
		for _, id := range []string{"b", "c"} {
			r := byID[id]
			if r == nil || r.reopen == nil || len(r.reopen.times) == 0 {
				continue
			}
			core, got := a.reopen.quantile(.5), r.reopen.quantile(.5)
			if core <= 0 {
				// Core's PDB reopens before this client's watch shows the
				// pod Ready: no ratio; the difference and the first tries
				// refused say how far behind the TDB is.
				fmt.Printf("  %s vs a: median %s later than core's (%s, at or before the watch); first try refused %d vs %d of %d\n", id,
					(got - core).Round(time.Millisecond), core.Round(time.Millisecond), r.reopen.firstTryRefused, a.reopen.firstTryRefused, len(r.reopen.times))
				continue
			}
			verdict := "MET"
			if float64(got) > 1.5*float64(core) {
				verdict = "MISS"
			}
			fmt.Printf("  %s/a median = %s / %s = %.2fx (target <= 1.5x): %s\n", id, got.Round(time.Millisecond), core.Round(time.Millisecond),
				float64(got)/float64(core), verdict)
		}
	}

	// Mirroring: no slower drains, and at most 0.5 PDB writes per eviction.
	for _, r := range results {
		base := byID[r.c.mirrorOf]
		if r.c.mirrorOf == "" || r.err != nil {
			continue
		}
		pdbWrites := r.webhook.mirrorWrites["create"] + r.webhook.mirrorWrites["update"] + r.webhook.mirrorWrites["delete"]
		perEviction := math.NaN()
		if r.evictions > 0 {
			perEviction = pdbWrites / float64(r.evictions)
		}
		verdict := "MET"
		if !(perEviction <= 0.5) {
			verdict = "MISS"
		}
		fmt.Printf("%s: mirrored PDB writes during the drains %.0f (%s), pods labelled %.0f, evictions %d: %.2f PDB writes per eviction (target <= 0.5): %s\n",
			r.c.id, pdbWrites, kindsF(r.webhook.mirrorWrites), r.webhook.mirrorWrites["label"], r.evictions, perEviction, verdict)
		if base != nil && base.err == nil && base.wall > 0 {
			got := r.wall.Seconds() / base.wall.Seconds()
			verdict := "MET"
			if got > 1.15 {
				verdict = "MISS"
			}
			fmt.Printf("%s/%s = %.1fs / %.1fs = %.2fx (mirroring on vs off; target <= 1.15x, no slower beyond noise): %s\n",
				r.c.id, base.c.id, r.wall.Seconds(), base.wall.Seconds(), got, verdict)
		}
	}

	fmt.Println()
	ok := true
	for _, r := range results {
		switch {
		case r.err != nil:
			ok = false
			fmt.Printf("case %s: ERROR: %v\n", r.c.id, r.err)
		case r.exceeded():
			ok = false
			fmt.Printf("case %s: BUDGET EXCEEDED (%s): max unavailable %s, overall %d, zones at once %d\n",
				r.c.id, r.c.bound, kwokenv.ZoneList(r.maxPerZone), r.maxOverall, r.maxZones)
		}
		if len(r.failed) > 0 {
			ok = false
			fmt.Printf("case %s: %d drain(s) FAILED\n", r.c.id, len(r.failed))
		}
		if len(r.non429) > 0 {
			ok = false
			fmt.Printf("case %s: %d NON-429 eviction error(s)\n", r.c.id, len(r.non429))
		}
	}
	if ok {
		fmt.Println("every budget held, every drain succeeded, every refusal was a 429")
	}
	return code
}

func kinds(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}

func kindsF(m map[string]float64) string {
	n := map[string]int{}
	for k, v := range m {
		n[k] = int(v)
	}
	return kinds(n)
}
