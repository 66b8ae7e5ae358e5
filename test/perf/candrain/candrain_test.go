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

// Package candrain measures `kubectl tdb can-drain` on a large local kwok
// cluster with the real control plane (hack/cluster): by default 1,000
// nodes in 3 zones and 10,000 pods (perfenv.PlanScale: 100 StatefulSets and
// Deployments over 10 namespaces, spread over the zones, and a DaemonSet),
// every workload under a TopologyDisruptionBudget (maxUnavailable 1 per
// zone, 10% per zone, or minAvailable 90% per zone with maxDisruptedDomains
// 1) or, one in ten, a policy/v1 PodDisruptionBudget. The operator runs as a
// local process (webhook 19743, metrics 18580, probes 18581), so that the
// budgets have a real status.
//
// Once every pod is Running and Ready and every budget has a status for its
// generation, it runs
//
//	kubectl-tdb can-drain <DRAIN_NODES nodes> --ignore-daemonsets -o json
//
// (the binary built from this tree) once cold (empty discovery cache), then
// RUNS times, timing each process, and counts the API requests of each run
// from the kube-apiserver's apiserver_request_total (before and after, by
// verb and resource; leases, the nodes' heartbeats, and events are left
// out, and what the cluster does meanwhile without the plugin, once it has
// settled, is measured and subtracted).
// A run on a tenth of the nodes shows whether the requests grow with the
// pods, and a run with -v=6 lists the plugin's own requests.
//
// It fails when the median wall time is 2 s or more (MAX_SECONDS), when a
// run needed more than 150 API requests (MAX_REQUESTS: the reads must be
// list calls, not one call per pod), when the plugin errs (exit status 2),
// or when the pods it reports are not the pods a drain would evict.
//
// Environment: NODES (1000), PODS (10000, the DaemonSet's included),
// DRAIN_NODES (100, or a tenth of a smaller cluster), RUNS (5), MAX_SECONDS (2), MAX_REQUESTS (150), OUT (a
// file for the results as JSON), PLUGIN (a kubectl-tdb binary to use instead
// of building one), KEEP=1 (leave the cluster up), REUSE=1 (populate the
// existing cluster tdb-candrain instead of a fresh one: what exists is
// kept), POPULATE_ONLY=1 (stop after populating; implies KEEP).
package candrain

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/tdb-operator/tdb-operator/test/kwokenv"
	"github.com/tdb-operator/tdb-operator/test/perf/perfenv"
)

const (
	clusterName = "tdb-candrain"
	webhookPort = 19743
	metricsPort = 18580
	probePort   = 18581
)

// config is the bench's environment.
type config struct {
	Nodes                     int     `json:"nodes"`
	Pods                      int     `json:"pods"`
	DrainNodes                int     `json:"drainNodes"`
	Runs                      int     `json:"runs"`
	MaxSeconds                float64 `json:"maxSeconds"`
	MaxRequests               int     `json:"maxRequests"`
	out, plugin               string
	keep, reuse, populateOnly bool
}

func loadConfig() (config, error) {
	c := config{Nodes: 1000, Pods: 10000, DrainNodes: 100, Runs: 5, MaxSeconds: 2, MaxRequests: 150,
		out: os.Getenv("OUT"), plugin: os.Getenv("PLUGIN"),
		keep: os.Getenv("KEEP") == "1", reuse: os.Getenv("REUSE") == "1", populateOnly: os.Getenv("POPULATE_ONLY") == "1"}
	for name, dst := range map[string]*int{"NODES": &c.Nodes, "PODS": &c.Pods, "DRAIN_NODES": &c.DrainNodes, "RUNS": &c.Runs, "MAX_REQUESTS": &c.MaxRequests} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return c, fmt.Errorf("%s=%q: want a positive number", name, v)
			}
			*dst = n
		}
	}
	if v := os.Getenv("MAX_SECONDS"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return c, fmt.Errorf("MAX_SECONDS=%q: want a positive number", v)
		}
		c.MaxSeconds = f
	}
	if os.Getenv("DRAIN_NODES") == "" {
		// A tenth of a smaller cluster.
		c.DrainNodes = min(c.DrainNodes, max(1, c.Nodes/10))
	}
	if c.Nodes < perfenv.ScaleZones || c.DrainNodes > c.Nodes {
		return c, fmt.Errorf("NODES=%d, DRAIN_NODES=%d: want at least %d nodes and no more drained than there are", c.Nodes, c.DrainNodes, perfenv.ScaleZones)
	}
	if c.populateOnly {
		c.keep = true
	}
	return c, nil
}

// TestCanDrainBench runs the bench; see the package comment.
func TestCanDrainBench(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	failures, err := run(ctx, cfg)
	if err != nil {
		t.Fatalf("candrain: %v", err)
	}
	for _, f := range failures {
		t.Error(f)
	}
}

// report is what OUT receives.
type report struct {
	Config     config     `json:"config"`
	Commit     string     `json:"commit"`
	Population population `json:"population"`
	CanDrain   *measured  `json:"canDrain,omitempty"`
	Small      *measured  `json:"smallSet,omitempty"`
	// PluginRequests are the requests the plugin logged with -v=6, by verb
	// and resource (GET: one object, LIST: a collection).
	PluginRequests map[string]int `json:"pluginRequestsV6,omitempty"`
	Failures       []string       `json:"failures"`
}

type population struct {
	Nodes         int     `json:"nodes"`
	Pods          int     `json:"pods"`
	Workloads     int     `json:"workloads"`
	TDBs          int     `json:"tdbs"`
	PDBs          int     `json:"pdbs"`
	ClusterUpSec  float64 `json:"clusterUpSeconds"`
	PodsReadySec  float64 `json:"podsReadySeconds"`
	PodsPerSec    float64 `json:"podsPerSecond"`
	BudgetsSec    float64 `json:"budgetsObservedSeconds"`
	TotalSec      float64 `json:"totalSeconds"`
	BudgetPods    int     `json:"budgetExpectedPods"`
	BudgetHealthy int     `json:"budgetHealthyPods"`
}

// measured is a set of runs on the same nodes.
type measured struct {
	Nodes        int      `json:"nodes"`
	ExpectedPods int      `json:"expectedPods"`
	Cold         *oneRun  `json:"cold,omitempty"`
	Runs         []oneRun `json:"runs"`
	P50Sec       float64  `json:"p50Seconds"`
	MaxSec       float64  `json:"maxSeconds"`
	// MaxRequests is the most requests of a run (background subtracted).
	MaxRequests int `json:"maxRequests"`
}

type oneRun struct {
	WallSec   float64 `json:"wallSeconds"`
	UserSec   float64 `json:"userSeconds"`
	SysSec    float64 `json:"sysSeconds"`
	MaxRSSMiB float64 `json:"maxRSSMiB"`
	Exit      int     `json:"exit"`
	Pods      int     `json:"pods"`
	Allowed   bool    `json:"allowedTogether"`
	DrainErrs int     `json:"drainErrors"`
	OutBytes  int     `json:"outputBytes"`
	// Requests are the kube-apiserver's requests during the run by verb
	// and resource, background subtracted; Total their sum.
	Requests map[string]int `json:"requests"`
	Total    int            `json:"totalRequests"`
	stderr   string
}

func run(ctx context.Context, cfg config) ([]string, error) {
	start := time.Now()
	rep := &report{Config: cfg, Commit: perfenv.Commit()}
	logDir, err := os.MkdirTemp("", "candrain-")
	if err != nil {
		return nil, err
	}
	plugin := cfg.plugin
	if plugin == "" && !cfg.populateOnly {
		fmt.Println(">> building kubectl-tdb from ./cmd/kubectl-tdb")
		if plugin, err = buildPlugin(logDir); err != nil {
			return nil, err
		}
	}

	fmt.Printf(">> local cluster %s: %d nodes in %d zones (real kube-apiserver, controller-manager, scheduler %s; POD_READY_DELAY=0)\n", clusterName, cfg.Nodes, perfenv.ScaleZones, kwokenv.KubeVersion())
	t0 := time.Now()
	c, err := perfenv.UpScale(ctx, clusterName, cfg.Nodes, cfg.reuse)
	if err != nil {
		return nil, err
	}
	rep.Population.ClusterUpSec = time.Since(t0).Seconds()
	defer func() {
		if cfg.keep {
			fmt.Printf("\nthe cluster is still up: export KUBECONFIG=%s\ntear it down with: make cluster-down CLUSTER_NAME=%s\n", c.Kubeconfig, clusterName)
			return
		}
		fmt.Println(">> tearing the cluster down")
		if err := c.Down(); err != nil {
			fmt.Fprintln(os.Stderr, "tearing the cluster down:", err)
		}
	}()
	fmt.Printf("   cluster up in %s\n", time.Since(t0).Round(time.Second))
	if _, err := kwokenv.BuildManager(); err != nil {
		return nil, err
	}
	op, err := kwokenv.StartOperator(c, kwokenv.OperatorOptions{WebhookPort: webhookPort, MetricsPort: metricsPort, ProbePort: probePort,
		LogPath: filepath.Join(logDir, "operator.log")})
	if err != nil {
		return nil, err
	}
	defer op.Stop()
	fmt.Printf("   operator running (webhook 127.0.0.1:%d, metrics :%d, probes :%d); logs in %s\n", webhookPort, metricsPort, probePort, logDir)
	k8s, err := kwokenv.NewClient(c.Kubeconfig)
	if err != nil {
		return nil, err
	}

	scale, err := populate(ctx, k8s, cfg, &rep.Population)
	if err != nil {
		return nil, err
	}
	if cfg.populateOnly {
		return nil, writeOut(cfg.out, rep)
	}

	var nodes corev1.NodeList
	if err := k8s.List(ctx, &nodes); err != nil {
		return nil, err
	}
	expected, err := evictablePerNode(ctx, k8s)
	if err != nil {
		return nil, err
	}
	cs, err := clientset(c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	b := &bench{plugin: plugin, kubeconfig: c.Kubeconfig, cacheDir: filepath.Join(logDir, "kube-cache"), cs: cs, logDir: logDir}
	if err := b.measureBackground(ctx); err != nil {
		return nil, err
	}

	drain := perfenv.NodesSpread(nodes.Items, cfg.DrainNodes)
	fmt.Printf("\n>> can-drain on %d of %d nodes (%d pods a drain would evict; DaemonSet pods ignored)\n", len(drain), len(nodes.Items), sumOf(expected, drain))
	big, err := b.measure(ctx, drain, sumOf(expected, drain), cfg.Runs, true)
	if err != nil {
		return nil, err
	}
	rep.CanDrain = big
	smallNodes := perfenv.NodesSpread(nodes.Items, max(1, cfg.DrainNodes/10))
	fmt.Printf("\n>> can-drain on %d nodes (%d pods), to see what grows with the pods\n", len(smallNodes), sumOf(expected, smallNodes))
	if rep.Small, err = b.measure(ctx, smallNodes, sumOf(expected, smallNodes), max(1, cfg.Runs/2), false); err != nil {
		return nil, err
	}
	rep.PluginRequests = b.verboseRequests(ctx, drain)

	rep.Failures = verdict(cfg, rep)
	summary(cfg, rep, scale)
	fmt.Printf("\ntotal %s; plugin output and the operator log: %s\n", time.Since(start).Round(time.Second), logDir)
	return rep.Failures, writeOut(cfg.out, rep)
}

// populate creates the workloads, waits for their pods, then the budgets
// and their status.
func populate(ctx context.Context, k8s client.Client, cfg config, pop *population) (*perfenv.Scale, error) {
	scale, err := perfenv.PlanScale(perfenv.ScaleSpec{Prefix: "candrain", Pods: cfg.Pods, Nodes: cfg.Nodes, DaemonSet: true, PDBEvery: 10})
	if err != nil {
		return nil, err
	}
	pop.Nodes, pop.Pods, pop.Workloads, pop.TDBs, pop.PDBs = cfg.Nodes, scale.Pods(), len(scale.Workloads), len(scale.TDBs), len(scale.PDBs)
	fmt.Printf(">> population: %s", kwokenv.Indent(scale.Describe(), "   ")[3:])
	t0 := time.Now()
	if err := scale.CreateWorkloads(ctx, k8s); err != nil {
		return nil, err
	}
	took, err := scale.WaitReady(ctx, k8s, 60*time.Minute, os.Stdout)
	if err != nil {
		return nil, err
	}
	if cfg.reuse {
		fmt.Println("   (REUSE=1: what existed was kept; the times below are not a population's)")
	}
	pop.PodsReadySec = time.Since(t0).Seconds()
	pop.PodsPerSec = float64(scale.Pods()) / took.Seconds()
	fmt.Printf("   %d pods Running and Ready in %s (%.0f pods/s)\n", scale.Pods(), time.Since(t0).Round(time.Second), pop.PodsPerSec)
	t1 := time.Now()
	if err := scale.CreateBudgets(ctx, k8s); err != nil {
		return nil, err
	}
	if pop.BudgetPods, pop.BudgetHealthy, err = scale.WaitBudgetsObserved(ctx, k8s, 15*time.Minute); err != nil {
		return nil, err
	}
	pop.BudgetsSec = time.Since(t1).Seconds()
	pop.TotalSec = time.Since(t0).Seconds()
	fmt.Printf("   %d TDBs and %d PDBs with a status for their generation in %s (their pods: %d expected, %d healthy); population %s\n",
		len(scale.TDBs), len(scale.PDBs), time.Since(t1).Round(time.Second), pop.BudgetPods, pop.BudgetHealthy, time.Since(t0).Round(time.Second))
	return scale, nil
}

func buildPlugin(dir string) (string, error) {
	bin := filepath.Join(dir, "kubectl-tdb")
	if _, err := os.Stat(filepath.Join(kwokenv.Root(), "cmd", "kubectl-tdb")); err != nil {
		return "", fmt.Errorf("no plugin to measure: %w", err)
	}
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/kubectl-tdb")
	cmd.Dir = kwokenv.Root()
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building kubectl-tdb: %w", err)
	}
	return bin, nil
}

// evictablePerNode counts, per node, the pods `kubectl drain
// --ignore-daemonsets` would evict: every pod but those of a DaemonSet
// (every pod here has a controller, and none is a mirror pod).
func evictablePerNode(ctx context.Context, k8s client.Client) (map[string]int, error) {
	out := map[string]int{}
	cont := ""
	for {
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.Limit(500), client.Continue(cont)); err != nil {
			return nil, err
		}
		for _, p := range pods.Items {
			if controllerKind(&p) == "DaemonSet" || p.Spec.NodeName == "" {
				continue
			}
			out[p.Spec.NodeName]++
		}
		if cont = pods.Continue; cont == "" {
			return out, nil
		}
	}
}

func controllerKind(p *corev1.Pod) string {
	for _, r := range p.OwnerReferences {
		if r.Controller != nil && *r.Controller {
			return r.Kind
		}
	}
	return ""
}

func sumOf(m map[string]int, keys []string) int {
	n := 0
	for _, k := range keys {
		n += m[k]
	}
	return n
}

func clientset(kubeconfig string) (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// bench runs the plugin and counts the API server's requests.
type bench struct {
	plugin, kubeconfig, cacheDir, logDir string
	cs                                   kubernetes.Interface
	// background is the rate of requests per second the cluster makes
	// without the plugin, by key.
	background map[string]float64
	runs       int
}

// requestCounts reads apiserver_request_total by "VERB resource" (group
// and subresource included; "VERB -" for non-resource paths), without the
// leases (the nodes' heartbeats and leader elections) and the events (the
// control plane's, which it sends long after a burst of pods: the plugin
// writes none).
func (b *bench) requestCounts(ctx context.Context) (map[string]float64, error) {
	raw, err := b.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	err = kwokenv.EachSeries(bytes.NewReader(raw), func(series string, v float64) {
		if !strings.HasPrefix(series, "apiserver_request_total{") {
			return
		}
		res := kwokenv.MetricLabel(series, "resource")
		if res == "leases" || res == "events" {
			return
		}
		if res == "" {
			res = "-"
		}
		if g := kwokenv.MetricLabel(series, "group"); g != "" {
			res += "." + g
		}
		if sub := kwokenv.MetricLabel(series, "subresource"); sub != "" {
			res += "/" + sub
		}
		out[kwokenv.MetricLabel(series, "verb")+" "+res] += v
	})
	return out, err
}

// measureBackground waits until the cluster is at rest (fewer than
// settledRate requests a second, leases and events left out, over a 10 s
// window; at most 5 minutes) and keeps the requests it still makes on its
// own, to subtract them from the plugin's.
func (b *bench) measureBackground(ctx context.Context) error {
	const (
		window      = 10 * time.Second
		settledRate = 2.0
	)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		before, err := b.requestCounts(ctx)
		if err != nil {
			return err
		}
		t0 := time.Now()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(window):
		}
		after, err := b.requestCounts(ctx)
		if err != nil {
			return err
		}
		d := time.Since(t0).Seconds()
		b.background = map[string]float64{}
		var parts []string
		total := 0.0
		for k, v := range after {
			if n := v - before[k]; n > 0 {
				b.background[k] = n / d
				total += n / d
				parts = append(parts, fmt.Sprintf("%s %.1f/s", k, n/d))
			}
		}
		sort.Strings(parts)
		if total < settledRate || time.Now().After(deadline) {
			fmt.Printf("   background requests without the plugin (leases and events left out, over %s): %s\n", window, orNone(strings.Join(parts, ", ")))
			return nil
		}
		fmt.Printf("   waiting for the cluster to settle: %.1f requests/s (%s)\n", total, shorten(strings.Join(parts, ", "), 200))
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// drainCheck is the part of the plugin's JSON output the bench reads.
type drainCheck struct {
	Kind            string   `json:"kind"`
	Nodes           []string `json:"nodes"`
	AllowedTogether bool     `json:"allowedTogether"`
	DrainErrors     []string `json:"drainErrors"`
	Pods            []struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Node      string `json:"node"`
	} `json:"pods"`
}

// runOnce runs can-drain on nodes once and counts its requests.
func (b *bench) runOnce(ctx context.Context, nodes []string, extra ...string) (oneRun, []byte, error) {
	var r oneRun
	before, err := b.requestCounts(ctx)
	if err != nil {
		return r, nil, err
	}
	args := append(append([]string{"can-drain"}, nodes...), "--ignore-daemonsets", "-o", "json", "--kubeconfig", b.kubeconfig)
	args = append(args, extra...)
	cmd := exec.CommandContext(ctx, b.plugin, args...)
	// Its own discovery cache, empty for the first run (cold).
	cmd.Env = append(os.Environ(), "KUBECACHEDIR="+b.cacheDir, "KUBECONFIG="+b.kubeconfig)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err = cmd.Run()
	wall := time.Since(t0)
	// Requests still being counted by the API server when the process
	// exits (the metrics are updated after the response is written).
	time.Sleep(200 * time.Millisecond)
	after, cerr := b.requestCounts(ctx)
	if cerr != nil {
		return r, nil, cerr
	}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		r.Exit = exitErr.ExitCode()
	default:
		return r, nil, err
	}
	r.WallSec, r.stderr, r.OutBytes = wall.Seconds(), stderr.String(), stdout.Len()
	if ps := cmd.ProcessState; ps != nil {
		r.UserSec, r.SysSec = ps.UserTime().Seconds(), ps.SystemTime().Seconds()
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			r.MaxRSSMiB = float64(ru.Maxrss) / 1024
		}
	}
	window := wall.Seconds() + 0.4 // the scrapes around the run
	r.Requests = map[string]int{}
	for k, v := range after {
		// (The scrapes of /metrics are not counted.)
		n := v - before[k] - b.background[k]*window
		if n >= 0.5 {
			r.Requests[k] = int(n + 0.5)
			r.Total += r.Requests[k]
		}
	}
	b.runs++
	_ = os.WriteFile(filepath.Join(b.logDir, fmt.Sprintf("run-%02d.json", b.runs)), stdout.Bytes(), 0o644)
	_ = os.WriteFile(filepath.Join(b.logDir, fmt.Sprintf("run-%02d.stderr", b.runs)), stderr.Bytes(), 0o644)
	if r.Exit == 0 || r.Exit == 1 {
		var dc drainCheck
		if err := json.Unmarshal(stdout.Bytes(), &dc); err != nil {
			return r, stdout.Bytes(), fmt.Errorf("can-drain exited %d without JSON on stdout (%w); stderr: %s", r.Exit, err, shorten(r.stderr, 400))
		}
		if dc.Kind != "DrainCheck" {
			return r, stdout.Bytes(), fmt.Errorf("can-drain answered kind %q, want DrainCheck", dc.Kind)
		}
		r.Pods, r.Allowed, r.DrainErrs = len(dc.Pods), dc.AllowedTogether, len(dc.DrainErrors)
	}
	return r, stdout.Bytes(), nil
}

// measure runs can-drain on nodes runs times (after a cold run when cold).
func (b *bench) measure(ctx context.Context, nodes []string, expectedPods, runs int, cold bool) (*measured, error) {
	m := &measured{Nodes: len(nodes), ExpectedPods: expectedPods}
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "   run\twall\tuser\tsys\tmaxRSS\texit\tpods\ttogether\tdrainErrors\trequests\tJSON")
	row := func(name string, r oneRun) {
		_, _ = fmt.Fprintf(tw, "   %s\t%.2fs\t%.2fs\t%.2fs\t%.0fMiB\t%d\t%d\t%v\t%d\t%d\t%dKiB\n", name, r.WallSec, r.UserSec, r.SysSec, r.MaxRSSMiB, r.Exit, r.Pods, r.Allowed, r.DrainErrs, r.Total, r.OutBytes/1024)
	}
	total := runs
	if cold {
		_ = os.RemoveAll(b.cacheDir)
		total++
	}
	for i := range total {
		r, _, err := b.runOnce(ctx, nodes)
		if err != nil {
			_ = tw.Flush()
			return m, err
		}
		if r.Exit != 0 && r.Exit != 1 {
			_ = tw.Flush()
			return m, fmt.Errorf("can-drain exited %d: %s", r.Exit, shorten(r.stderr, 800))
		}
		if cold && i == 0 {
			m.Cold = &r
			row("cold", r)
			continue
		}
		m.Runs = append(m.Runs, r)
		m.MaxRequests = max(m.MaxRequests, r.Total)
		row(strconv.Itoa(len(m.Runs)), r)
	}
	_ = tw.Flush()
	walls := make([]float64, 0, len(m.Runs))
	for _, r := range m.Runs {
		walls = append(walls, r.WallSec)
	}
	sort.Float64s(walls)
	m.P50Sec, m.MaxSec = walls[len(walls)/2], walls[len(walls)-1]
	if len(walls)%2 == 0 {
		m.P50Sec = (walls[len(walls)/2-1] + walls[len(walls)/2]) / 2
	}
	last := m.Runs[len(m.Runs)-1]
	fmt.Printf("   p50 %.2fs, max %.2fs; requests of the last run: %s\n", m.P50Sec, m.MaxSec, requestList(last.Requests))
	if m.Cold != nil {
		fmt.Printf("   cold run (empty discovery cache): %s\n", requestList(m.Cold.Requests))
	}
	return m, nil
}

func requestList(m map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool {
		if l[i].v != l[j].v {
			return l[i].v > l[j].v
		}
		return l[i].k < l[j].k
	})
	parts := make([]string, 0, len(l))
	for _, e := range l {
		parts = append(parts, fmt.Sprintf("%s %d", e.k, e.v))
	}
	return orNone(strings.Join(parts, ", "))
}

// The request lines client-go logs at -v=6, in both of its formats:
// `"Response" verb="GET" url="https://..." status="200 OK"` and
// `GET https://... 200 OK in 3 milliseconds`.
var (
	v6Structured = regexp.MustCompile(`verb="([A-Z]+)" url="([^"]+)"`)
	v6Plain      = regexp.MustCompile(`\] (GET|POST|PUT|PATCH|DELETE) (https?://\S+) \d{3}`)
)

// verboseRequests runs can-drain once more with -v=6 and classifies the
// requests it logs: "GET <resource>" for one object, "LIST <resource>" for
// a collection. Nil when the plugin logs none (no -v flag).
func (b *bench) verboseRequests(ctx context.Context, nodes []string) map[string]int {
	_, _, err := b.runOnce(ctx, nodes, "-v=6")
	stderr, _ := os.ReadFile(filepath.Join(b.logDir, fmt.Sprintf("run-%02d.stderr", b.runs)))
	out := map[string]int{}
	for _, l := range strings.Split(string(stderr), "\n") {
		var verb, url string
		if m := v6Structured.FindStringSubmatch(l); m != nil && strings.Contains(l, "Response") {
			verb, url = m[1], m[2]
		} else if m := v6Plain.FindStringSubmatch(l); m != nil {
			verb, url = m[1], m[2]
		} else {
			continue
		}
		out[classify(verb, url)]++
	}
	if len(out) == 0 {
		why := strings.SplitN(strings.TrimSpace(string(stderr)), "\n", 2)[0]
		if err != nil {
			why = err.Error()
		}
		fmt.Printf("\n   -v=6: no request logged (%s)\n", orNone(why))
		return nil
	}
	fmt.Printf("\n>> the plugin's own requests (-v=6, %d nodes): %s\n", len(nodes), requestList(out))
	return out
}

// classify names a request by verb and resource: GET of one object, LIST
// of a collection.
func classify(verb, rawURL string) string {
	path := rawURL
	if i := strings.Index(path, "://"); i >= 0 {
		path = path[i+3:]
		if j := strings.IndexByte(path, '/'); j >= 0 {
			path = path[j:]
		} else {
			path = "/"
		}
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	seg := strings.Split(strings.Trim(path, "/"), "/")
	group := ""
	switch {
	case len(seg) >= 2 && seg[0] == "api":
		seg = seg[2:]
	case len(seg) >= 3 && seg[0] == "apis":
		group, seg = "."+seg[1], seg[3:]
	default:
		return verb + " " + path
	}
	if len(seg) >= 3 && seg[0] == "namespaces" {
		seg = seg[2:]
	}
	if len(seg) == 0 {
		return verb + " " + path
	}
	res := seg[0] + group
	if len(seg) >= 3 {
		res += "/" + seg[2]
	}
	if verb == "GET" && len(seg) == 1 {
		verb = "LIST"
	}
	return verb + " " + res
}

// verdict lists what fails the bench.
func verdict(cfg config, rep *report) []string {
	var f []string
	m := rep.CanDrain
	if m.P50Sec >= cfg.MaxSeconds {
		f = append(f, fmt.Sprintf("can-drain on %d nodes took %.2fs (median of %d runs), want under %gs", m.Nodes, m.P50Sec, len(m.Runs), cfg.MaxSeconds))
	}
	if m.MaxRequests > cfg.MaxRequests {
		f = append(f, fmt.Sprintf("can-drain on %d nodes made %d API requests in a run, want at most %d (list calls, not a call per pod): %s",
			m.Nodes, m.MaxRequests, cfg.MaxRequests, requestList(m.Runs[len(m.Runs)-1].Requests)))
	}
	for _, s := range []*measured{rep.CanDrain, rep.Small} {
		for i, r := range s.Runs {
			if r.Pods != s.ExpectedPods {
				f = append(f, fmt.Sprintf("run %d on %d nodes reported %d pods, a drain would evict %d", i+1, s.Nodes, r.Pods, s.ExpectedPods))
				break
			}
		}
	}
	return f
}

func summary(cfg config, rep *report, scale *perfenv.Scale) {
	big, small := rep.CanDrain, rep.Small
	fmt.Printf("\n== can-drain, %d of %d nodes, %d pods in the cluster (%d workloads, %d TDBs, %d PDBs)\n", big.Nodes, cfg.Nodes, scale.Pods(), len(scale.Workloads), len(scale.TDBs), len(scale.PDBs))
	fmt.Printf("   wall time p50 %.2fs, max %.2fs over %d runs (limit: p50 under %gs)\n", big.P50Sec, big.MaxSec, len(big.Runs), cfg.MaxSeconds)
	fmt.Printf("   pods %d; API requests per run at most %d (limit %d)\n", big.ExpectedPods, big.MaxRequests, cfg.MaxRequests)
	fmt.Printf("   on %d nodes: %d pods, at most %d requests -> %d nodes: %d pods, %d requests\n",
		small.Nodes, small.ExpectedPods, small.MaxRequests, big.Nodes, big.ExpectedPods, big.MaxRequests)
	if small.MaxRequests > 0 && big.ExpectedPods > small.ExpectedPods {
		fmt.Printf("   requests grew %.1fx for %.1fx the pods (%.1fx the nodes)\n", float64(big.MaxRequests)/float64(small.MaxRequests),
			float64(big.ExpectedPods)/float64(small.ExpectedPods), float64(big.Nodes)/float64(small.Nodes))
	}
	for k, v := range rep.PluginRequests {
		if strings.HasPrefix(k, "GET ") && v >= 10 {
			fmt.Printf("   per-object reads: %d x %s (-v=6)\n", v, k)
		}
	}
	fmt.Printf("   population: cluster up %.0fs, %d pods Ready in %.0fs (%.0f pods/s), budgets observed in %.0fs\n",
		rep.Population.ClusterUpSec, rep.Population.Pods, rep.Population.PodsReadySec, rep.Population.PodsPerSec, rep.Population.BudgetsSec)
	if len(rep.Failures) == 0 {
		fmt.Println("   PASS")
	}
	for _, f := range rep.Failures {
		fmt.Println("   FAIL:", f)
	}
}

func writeOut(path string, rep *report) error {
	if path == "" {
		return nil
	}
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

func shorten(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
