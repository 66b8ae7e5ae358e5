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

// Package scalebench measures the operator at scale against core's
// PodDisruptionBudgets, side by side on one fresh local kwok cluster with
// the real control plane (hack/cluster): by default 1,000 nodes in 3 zones
// and 10,000 pods in 100 workloads over 10 namespaces (perfenv.PlanScale:
// zone-pinned StatefulSets, spread StatefulSets, spread Deployments, and a
// DaemonSet), one budget per workload.
//
// Each round recycles a tenth of the nodes three times, once per system:
// with a TopologyDisruptionBudget per workload (maxUnavailable 1 per zone,
// 10% per zone, or minAvailable 90% per zone with maxDisruptedDomains 1, in
// turn), then with the closest policy/v1 PodDisruptionBudget per workload
// instead (perfenv.Scale.EquivalentPDBs), then with no budget at all: the
// floor, which the table shows the other two against (drain wall time and
// allowed eviction p99 as ratios to it). A system's turn adds RECYCLE new nodes,
// then one process drains RECYCLE old nodes at once with the drain library
// (k8s.io/kubectl/pkg/drain, the code kubectl drain runs, retrying a
// refused eviction after RETRY_DELAY as kubectl does), deletes them once
// drained and waits for every workload to be whole again.
//
// Meanwhile an independent watcher (watcher_test.go) checks every budget at
// every pod event, and measures the status lag: from a pod event that
// changes a domain's healthy pods to the first status of the budget that
// shows that count. The operator runs as a local process (webhook 20143,
// metrics 18980, probes 18981, pprof 18982); the bench samples its CPU, RSS,
// heap and goroutines every second, takes a CPU profile of the drain and a
// heap profile at its end, and counts the API server's requests by verb and
// resource, and who wrote the PodDisruptionBudgets' statuses (the API
// server's audit log; budgetwrites_test.go).
//
// It fails on any budget violation, on drain errors, and on each target it
// misses (targets_test.go; printed as MISSED; the JSON has them all).
//
// Environment: NODES (1000), PODS (10000, the DaemonSet's included),
// BUDGETS (PODS/100: workloads, one budget each), ROUNDS (1), RECYCLE (a tenth of
// NODES), RETRY_DELAY (5s), OUT (the results as JSON), PROFILE_DIR (where
// the profiles go; default the log directory), PROFILE_SECONDS (60),
// MANAGER (a manager binary to run instead of building this tree's), PPROF=0
// (for a manager without --pprof-bind-address), OPERATOR_ARGS (extra
// manager flags), KEEP=1 (leave the cluster up), REUSE=1 (populate the
// existing tdb-scale cluster), AUDIT_POLICY (hack/cluster/up.sh's; default
// test/perf/scalebench/audit-pdb-status.yaml, who wrote each PDB status;
// hack/cluster/audit-evictions.yaml logs that and who evicted or deleted
// which pod),
// REMOVER_WORKERS (RECYCLE, at least 8: the deletes in parallel of
// the pod remover that stands in for the kubelets). The control plane's logs are copied into the log directory before the
// cluster is torn down.
package scalebench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
	"github.com/tdb-operator/tdb-operator/test/perf/perfenv"
)

const (
	clusterName = "tdb-scale"
	prefix      = "scale"
	webhookPort = 20143
	metricsPort = 18980
	probePort   = 18981
	pprofPort   = 18982
)

var getOpts = metav1.GetOptions{}

// config is the bench's environment.
type config struct {
	Nodes          int     `json:"nodes"`
	Pods           int     `json:"pods"`
	Budgets        int     `json:"budgets"`
	Rounds         int     `json:"rounds"`
	Recycle        int     `json:"recycle"`
	RetryDelaySec  float64 `json:"retry_delay_s"`
	ProfileSeconds int     `json:"profile_seconds"`
	// RemoverWorkers: the pod remover's deletes in parallel (the kubelets'
	// stand-in).
	RemoverWorkers int    `json:"remover_workers"`
	OperatorArgs   string `json:"operator_args,omitempty"`
	Manager        string `json:"manager,omitempty"`
	out, profDir   string
	pprof          bool
	keep, reuse    bool
}

func loadConfig() (config, error) {
	c := config{Nodes: 1000, Pods: 10000, Budgets: 100, Rounds: 1, RetryDelaySec: 5, ProfileSeconds: 60,
		OperatorArgs: os.Getenv("OPERATOR_ARGS"), Manager: os.Getenv("MANAGER"),
		out: os.Getenv("OUT"), profDir: os.Getenv("PROFILE_DIR"), pprof: os.Getenv("PPROF") != "0",
		keep: os.Getenv("KEEP") == "1", reuse: os.Getenv("REUSE") == "1"}
	for name, dst := range map[string]*int{"NODES": &c.Nodes, "PODS": &c.Pods, "BUDGETS": &c.Budgets, "ROUNDS": &c.Rounds,
		"RECYCLE": &c.Recycle, "PROFILE_SECONDS": &c.ProfileSeconds, "REMOVER_WORKERS": &c.RemoverWorkers} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return c, fmt.Errorf("%s=%q: want a positive number", name, v)
			}
			*dst = n
		}
	}
	if v := os.Getenv("RETRY_DELAY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return c, fmt.Errorf("RETRY_DELAY=%q: want a duration such as 5s", v)
		}
		c.RetryDelaySec = d.Seconds()
	}
	if os.Getenv("BUDGETS") == "" {
		// A hundred pods a workload (90 without the DaemonSet's), whatever
		// the size: a smaller or larger run keeps the workloads' shape, and
		// "minAvailable: 90%" of a zone's pods still allows one (of fewer
		// than ten pods a zone it would allow none, and the drains wait
		// for ever).
		c.Budgets = max(3, c.Pods/100)
	}
	if c.Recycle == 0 {
		c.Recycle = max(perfenv.ScaleZones, c.Nodes/10)
	}
	if c.RemoverWorkers == 0 {
		// A kubelet for each node drained: 8 workers kept evicted pods
		// 9.5 s (median) before they went, at 1,000 nodes with 100
		// drained (docs/scale.md, The pod remover).
		c.RemoverWorkers = max(8, c.Recycle)
	}
	if c.Nodes < 3*perfenv.ScaleZones || c.Recycle*len(systems)*c.Rounds > c.Nodes {
		return c, fmt.Errorf("NODES=%d, RECYCLE=%d, ROUNDS=%d: want at least %d nodes, and %d×RECYCLE×ROUNDS old nodes to drain", c.Nodes, c.Recycle, c.Rounds, 3*perfenv.ScaleZones, len(systems))
	}
	return c, nil
}

// TestScaleBench runs the bench; see the package comment.
func TestScaleBench(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	cfg, err := loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	failures, err := run(ctx, cfg)
	if err != nil {
		t.Fatalf("scalebench: %v", err)
	}
	for _, f := range failures {
		t.Error(f)
	}
}

// report is what OUT receives.
type report struct {
	Config     config               `json:"config"`
	Commit     string               `json:"commit"`
	Population map[string]float64   `json:"population"`
	Systems    map[string]*system   `json:"systems"`
	Rounds     []map[string]*system `json:"rounds"`
	Failures   []string             `json:"failures"`
}

// system is one system's figures (pooled over the rounds in Systems).
type system struct {
	DrainWallS        float64     `json:"drain_wall_s"`
	NodeDrainP50S     float64     `json:"node_drain_p50_s"`
	NodesDrained      int         `json:"nodes_drained"`
	PodsEvicted       int         `json:"pods_evicted"`
	Allowed           int         `json:"allowed"`
	Refused           int         `json:"refused"`
	OtherAnswers      int         `json:"other_answers"`
	RefusedPerAllowed float64     `json:"refused_per_allowed"`
	AllowedP50MS      float64     `json:"allowed_p50_ms"`
	AllowedP99MS      float64     `json:"allowed_p99_ms"`
	AllowedMaxMS      float64     `json:"allowed_max_ms"`
	RefusedP50MS      float64     `json:"refused_p50_ms"`
	RefusedP99MS      float64     `json:"refused_p99_ms"`
	RefusedMaxMS      float64     `json:"refused_max_ms"`
	DrainErrors       []string    `json:"drain_errors,omitempty"`
	Violations        int         `json:"violations"`
	ViolationEvidence []violation `json:"violation_evidence,omitempty"`
	PodEventsChecked  int         `json:"pod_events_checked"`
	// DrainWallToFloor and AllowedP99ToFloor are a budgeted system's drain
	// wall time and allowed eviction p99 over the no-budget run's.
	DrainWallToFloor  float64 `json:"drain_wall_to_floor,omitempty"`
	AllowedP99ToFloor float64 `json:"allowed_p99_to_floor,omitempty"`
	// OverBudgetNotByEviction counts the times a workload went over budget
	// after an event other than an eviction (a replacement that landed
	// unready in another zone than the pod it replaced): not a decision of
	// either system.
	OverBudgetNotByEviction int `json:"over_budget_not_by_eviction"`
	// EvictionsOverBudgetAfterDecision counts the evictions whose zone was
	// over budget when the pod was deleted but within it at some moment
	// after the eviction call (when the budget decided): another pod became
	// unavailable in the zone meanwhile (a replacement landing unready).
	EvictionsOverBudgetAfterDecision int     `json:"evictions_over_budget_after_decision"`
	StatusLagP50MS                   float64 `json:"status_lag_p50_ms,omitempty"`
	StatusLagP99MS                   float64 `json:"status_lag_p99_ms,omitempty"`
	StatusLagMaxMS                   float64 `json:"status_lag_max_ms,omitempty"`
	StatusLagSamples                 int     `json:"status_lag_samples,omitempty"`
	StatusLagUnresolved              int     `json:"status_lag_unresolved,omitempty"`
	OperatorPeakHeapMiB              float64 `json:"operator_peak_heap_mib"`
	OperatorPeakRSSMiB               float64 `json:"operator_peak_rss_mib"`
	OperatorGoroutines               float64 `json:"operator_peak_goroutines"`
	OperatorCPUS                     float64 `json:"operator_cpu_s"`
	OperatorAvgCores                 float64 `json:"operator_avg_cores"`
	DecisionsPerSecPeak              float64 `json:"webhook_decisions_per_s_peak"`
	// StatusLagP99AllMS is the p99 over every change, each one never shown
	// counted at its age when the turn was tallied: a lower bound of the
	// true p99, which a turn that ends before its slowest statuses does
	// not shorten as leaving them out does (core's records of StatefulSet
	// pods expire 2 minutes after the eviction, often after a small
	// drain's end). The status lag target compares these.
	StatusLagP99AllMS float64 `json:"status_lag_p99_all_ms,omitempty"`
	// WritesPerAllowed: the system's budget status writes during the drain
	// per allowed eviction. Both are the API server's count
	// (apiserver_request_total: PUT, PATCH and apply of the status
	// subresource, whatever the answer): for the TDBs, the operator's (its
	// webhook's and its status controller's); for the PDBs, the eviction
	// handler's and the disruption controller's (the eviction handler
	// writes through the API server's loopback client, a request counted
	// there like the controller's: budgetwrites_test.go).
	WritesPerAllowed float64 `json:"writes_per_allowed_eviction"`
	// The operator's writes split: the webhook's (records of evictions)
	// and the status controller's (pods changing), per allowed eviction,
	// as the operator counts those it wrote (tdb_status_writes_total).
	WebhookWritesPerAllowed float64 `json:"webhook_writes_per_allowed_eviction,omitempty"`
	StatusWritesPerAllowed  float64 `json:"status_writes_per_allowed_eviction,omitempty"`
	// Core's writes split: the eviction handler's and the disruption
	// controller's, per allowed eviction, as the API server's audit log
	// names their senders (none without an audit log that logs them).
	EvictionHandlerWritesPerAllowed      float64 `json:"eviction_handler_writes_per_allowed_eviction,omitempty"`
	DisruptionControllerWritesPerAllowed float64 `json:"disruption_controller_writes_per_allowed_eviction,omitempty"`
	// The status controller's writes per allowed eviction by what each
	// changes most (budget.StatusChange: allowance, healthy, expected,
	// records, other).
	StatusChangesPerAllowed map[string]float64 `json:"status_changes_per_allowed_eviction,omitempty"`
	Decisions               map[string]float64 `json:"webhook_decisions,omitempty"`
	Writes                  map[string]float64 `json:"writes"`
	RequestsPerAllowed      map[string]float64 `json:"api_requests_per_allowed_eviction"`
	// The status controller's passes, and those that waited over a second
	// in its queue (workqueue_queue_duration_seconds): too few workers for
	// an API server this slow.
	StatusPasses             int `json:"status_passes,omitempty"`
	StatusPassesQueuedOver1s int `json:"status_passes_queued_over_1s,omitempty"`
	// The API server's mean latency of some requests
	// (apiserver_request_duration_seconds), in milliseconds.
	APIMeanMS map[string]float64 `json:"api_mean_latency_ms,omitempty"`
	// Machine: what the machine's CPUs did during each round's drain (the
	// cluster's components, the operator, this bench).
	Machine []MachineFigures `json:"machine,omitempty"`
	// PodRemoval*: how long an evicted pod waited for the pod remover (the
	// bench's stand-in for the kubelets, perfenv.PodRemover) once its cache
	// showed the deletion: from then to its delete answered.
	PodRemovalP50MS float64 `json:"pod_removal_p50_ms,omitempty"`
	PodRemovalP99MS float64 `json:"pod_removal_p99_ms,omitempty"`
	PodRemovalMaxMS float64 `json:"pod_removal_max_ms,omitempty"`
	PodRemovals     int     `json:"pod_removal_samples,omitempty"`
	CPUProfile      string  `json:"cpu_profile,omitempty"`
	HeapProfile     string  `json:"heap_profile,omitempty"`

	calls []evictionCall
	lags  []time.Duration
	// neverShown: the ages of the changes no status showed by the tally.
	neverShown []time.Duration
	// removals: from a pod's deletion seen to the pod remover's delete
	// answered, for each pod it deleted in the drain.
	removals []time.Duration
	walls    []float64
	nodes    []float64
}

type bench struct {
	cfg      config
	c        *kwokenv.Cluster
	op       *kwokenv.Operator
	k8s      client.Client
	cs       kubernetes.Interface
	scale    *perfenv.Scale
	logDir   string
	drained  map[string]bool
	original map[string]bool
	tdbCache cache.Cache
	remover  *perfenv.PodRemover
}

func run(ctx context.Context, cfg config) ([]string, error) {
	rep := &report{Config: cfg, Commit: perfenv.Commit(), Population: map[string]float64{}, Systems: map[string]*system{}}
	b := &bench{cfg: cfg, drained: map[string]bool{}, original: map[string]bool{}}
	var err error
	if b.logDir, err = os.MkdirTemp("", "scalebench-"); err != nil {
		return nil, err
	}
	if cfg.profDir == "" {
		cfg.profDir = b.logDir
	}
	// Made now: a missing PROFILE_DIR must not fail the run after its drain.
	if err := os.MkdirAll(cfg.profDir, 0o755); err != nil {
		return nil, fmt.Errorf("PROFILE_DIR: %w", err)
	}
	start := time.Now()
	fmt.Printf(">> local cluster %s: %d nodes in %d zones (real kube-apiserver, controller-manager, scheduler %s; POD_READY_DELAY=0)\n", clusterName, cfg.Nodes, perfenv.ScaleZones, kwokenv.KubeVersion())
	// Pods being deleted are removed by UID, as a kubelet does: kwok's
	// Stage deletes by name, and under this load its late deletes removed
	// StatefulSet replacements (hack/cluster/stages/pod-remove.yaml).
	settings := []string{perfenv.ExternalPodRemoval}
	if os.Getenv("AUDIT_POLICY") == "" {
		settings = append(settings, "AUDIT_POLICY="+filepath.Join(kwokenv.Root(), auditPolicy))
	}
	if b.c, err = perfenv.UpScale(ctx, clusterName, cfg.Nodes, cfg.reuse, settings...); err != nil {
		return nil, err
	}
	defer b.close()
	removerCtx, stopRemover := context.WithCancel(ctx)
	defer stopRemover()
	if b.remover, err = perfenv.StartPodRemover(removerCtx, b.c.Kubeconfig, cfg.RemoverWorkers); err != nil {
		return nil, err
	}
	rep.Population["cluster_up_s"] = time.Since(start).Seconds()
	fmt.Printf("   up in %.0fs\n", rep.Population["cluster_up_s"])
	if cfg.Manager == "" {
		if _, err := kwokenv.BuildManager(); err != nil {
			return nil, err
		}
	}
	args := strings.Fields(cfg.OperatorArgs)
	if cfg.pprof {
		args = append(args, fmt.Sprintf("--pprof-bind-address=127.0.0.1:%d", pprofPort))
	}
	if b.op, err = kwokenv.StartOperator(b.c, kwokenv.OperatorOptions{WebhookPort: webhookPort, MetricsPort: metricsPort, ProbePort: probePort,
		LogPath: filepath.Join(b.logDir, "operator.log"), Args: args, Binary: cfg.Manager}); err != nil {
		return nil, err
	}
	fmt.Printf("   operator running (pid %d, webhook 127.0.0.1:%d, metrics :%d, pprof :%d); logs in %s\n", b.op.Pid(), webhookPort, metricsPort, pprofPort, b.logDir)
	if b.k8s, err = kwokenv.NewClient(b.c.Kubeconfig); err != nil {
		return nil, err
	}
	restCfg, err := clientcmd.BuildConfigFromFlags("", b.c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	restCfg.QPS, restCfg.Burst = 200, 400
	// The watcher's connections are its own, not the drains'.
	ownConnections(restCfg)
	if b.cs, err = kubernetes.NewForConfig(restCfg); err != nil {
		return nil, err
	}
	if b.tdbCache, err = cache.New(restCfg, cache.Options{Scheme: b.k8s.Scheme()}); err != nil {
		return nil, err
	}
	cacheCtx, cancelCache := context.WithCancel(ctx)
	defer cancelCache()
	go func() { _ = b.tdbCache.Start(cacheCtx) }()

	if b.scale, err = perfenv.PlanScale(perfenv.ScaleSpec{Prefix: prefix, Pods: cfg.Pods, Nodes: cfg.Nodes, Workloads: cfg.Budgets, DaemonSet: true, ZonePinned: true}); err != nil {
		return nil, err
	}
	fmt.Printf(">> population: %s", kwokenv.Indent(b.scale.Describe(), "   ")[3:])
	t0 := time.Now()
	if err := b.scale.CreateWorkloads(ctx, b.k8s); err != nil {
		return nil, err
	}
	took, err := b.scale.WaitReady(ctx, b.k8s, 30*time.Minute, os.Stdout)
	if err != nil {
		return nil, err
	}
	rep.Population["pods_ready_s"] = time.Since(t0).Seconds()
	rep.Population["pods"] = float64(b.scale.Pods())
	fmt.Printf("   %d pods Running and Ready in %.0fs (%.0f pods/s)\n", b.scale.Pods(), took.Seconds(), float64(b.scale.Pods())/took.Seconds())
	var nodes corev1.NodeList
	if err := b.k8s.List(ctx, &nodes); err != nil {
		return nil, err
	}
	for _, n := range nodes.Items {
		b.original[n.Name] = true
	}

	for round := range cfg.Rounds {
		order := []string{systemTDB, systemPDB, systemNone}
		if round%2 == 1 {
			order = []string{systemPDB, systemTDB, systemNone}
		}
		res := map[string]*system{}
		for _, sys := range order {
			s, err := b.turn(ctx, round, sys)
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", round+1, sys, err)
			}
			res[sys] = s
			pool(rep.Systems, sys, s)
		}
		rep.Rounds = append(rep.Rounds, res)
	}
	for _, s := range rep.Systems {
		s.finish()
	}
	toFloor(rep.Systems)
	rep.Population["total_s"] = time.Since(start).Seconds()
	rep.Failures = verdict(rep)
	summary(rep)
	if cfg.out != "" {
		if err := writeJSON(cfg.out, rep); err != nil {
			return nil, err
		}
		fmt.Printf("\nresults written to %s\n", cfg.out)
	}
	return rep.Failures, nil
}

func (b *bench) close() {
	if b.op != nil {
		b.op.Stop()
	}
	if b.cfg.keep {
		fmt.Printf("\nthe cluster is still up: export KUBECONFIG=%s\ntear it down with: make cluster-down CLUSTER_NAME=%s\n", b.c.Kubeconfig, b.c.Name)
		return
	}
	b.keepClusterLogs()
	fmt.Println(">> tearing the cluster down")
	if err := b.c.Down(); err != nil {
		fmt.Fprintln(os.Stderr, "tearing the cluster down:", err)
	}
}

// keepClusterLogs copies the control plane's logs (the API server's audit
// log among them when AUDIT_POLICY is set) into the log directory before the
// cluster is torn down with them.
func (b *bench) keepClusterLogs() {
	// hack/cluster keeps a cluster's kubeconfig and logs/ in one directory.
	src := filepath.Join(filepath.Dir(b.c.Kubeconfig), "logs")
	dst := filepath.Join(b.logDir, "cluster")
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		fmt.Fprintln(os.Stderr, "keeping the cluster's logs:", err)
		return
	}
	fmt.Printf("   the control plane's logs are in %s\n", dst)
}

// turn is one system's recycle of RECYCLE nodes.
func (b *bench) turn(ctx context.Context, round int, sys string) (*system, error) {
	cfg := b.cfg
	fmt.Printf("\n>> round %d, %s: budgets\n", round+1, sys)
	if err := b.setBudgets(ctx, sys); err != nil {
		return nil, err
	}
	// New nodes first, as an upgrade's surge: the drained pods land there
	// as well as on the other nodes.
	for i, z := range []string{"zone-a", "zone-b", "zone-c"} {
		n := cfg.Recycle / perfenv.ScaleZones
		if i < cfg.Recycle%perfenv.ScaleZones {
			n++
		}
		if _, err := b.c.AddNodes(z, n); err != nil {
			return nil, err
		}
	}
	var nodes corev1.NodeList
	if err := b.k8s.List(ctx, &nodes); err != nil {
		return nil, err
	}
	var candidates []corev1.Node
	for _, n := range nodes.Items {
		if b.original[n.Name] && !b.drained[n.Name] {
			candidates = append(candidates, n)
		}
	}
	drain := perfenv.NodesSpread(candidates, cfg.Recycle)
	for _, n := range drain {
		b.drained[n] = true
	}

	w := newWatcher(b.scale, rulesOf(b.scale, sys))
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	if err := w.run(wctx, b.cs, b.tdbCache, prefix); err != nil {
		return nil, err
	}
	dr, err := newDrainer(b.c.Kubeconfig, time.Duration(cfg.RetryDelaySec*float64(time.Second)))
	if err != nil {
		return nil, err
	}
	audit := markAuditLog(b.c.Kubeconfig)
	api0, err := apiRequests(ctx, b.cs)
	if err != nil {
		return nil, err
	}
	op0, err := operatorCounters(metricsPort)
	if err != nil {
		return nil, err
	}
	s := &system{}
	profDone := make(chan error, 1)
	if cfg.pprof && sys == systemTDB {
		s.CPUProfile = filepath.Join(cfg.profDir, fmt.Sprintf("cpu-round%d.pprof", round+1))
		go func() {
			profDone <- profile(ctx, pprofPort, fmt.Sprintf("profile?seconds=%d", cfg.ProfileSeconds), s.CPUProfile)
		}()
	} else {
		profDone <- nil
	}
	sampler := startOpSampler(b.op.Pid(), metricsPort)
	machine := startMachineSampler(b.c.Kubeconfig, b.op.Pid())
	b.remover.TakeRemovalTimes() // from the drain on
	w.arm()
	fmt.Printf("   draining %d nodes at once (drain library, retry after %gs)\n", len(drain), cfg.RetryDelaySec)
	start := time.Now()
	results := dr.drainAll(ctx, drain, 20*time.Minute)
	wall := time.Since(start)
	figs := sampler.finish()
	s.Machine = []MachineFigures{machine.finish()}
	if cfg.pprof && sys == systemTDB {
		s.HeapProfile = filepath.Join(cfg.profDir, fmt.Sprintf("heap-round%d.pprof", round+1))
		if err := profile(ctx, pprofPort, "heap", s.HeapProfile); err != nil {
			return nil, err
		}
	}
	// Let the last pod events and statuses arrive before the tally.
	time.Sleep(2 * time.Second)
	api1, err := apiRequests(ctx, b.cs)
	if err != nil {
		return nil, err
	}
	tallied := time.Now()
	op1, err := operatorCounters(metricsPort)
	if err != nil {
		return nil, err
	}

	s.DrainWallS = wall.Seconds()
	s.walls = []float64{wall.Seconds()}
	s.NodesDrained = len(drain)
	for _, r := range results {
		s.PodsEvicted += r.evicted
		s.nodes = append(s.nodes, r.took.Seconds())
		if r.err != nil {
			s.DrainErrors = append(s.DrainErrors, r.node+": "+r.err.Error())
		}
	}
	s.calls = dr.transport.take()
	s.OperatorCPUS, s.OperatorAvgCores, s.OperatorPeakHeapMiB = figs.CPUSec, figs.AvgCores, figs.PeakHeapMiB
	s.OperatorPeakRSSMiB, s.OperatorGoroutines, s.DecisionsPerSecPeak = figs.PeakRSSMiB, figs.PeakGoroutines, figs.PeakDecisionsPerSec

	// What the API server did meanwhile, per allowed eviction.
	allowed := 0
	for _, c := range s.calls {
		if c.code == 201 {
			allowed++
		}
	}
	s.Writes = map[string]float64{}
	s.RequestsPerAllowed = map[string]float64{}
	s.APIMeanMS = map[string]float64{}
	for k, v := range api1 {
		d := v - api0[k]
		if req, ok := strings.CutPrefix(k, apiSeconds); ok {
			if n := api1[req] - api0[req]; n > 0 && slices.Contains(meanLatencyOf, req) {
				s.APIMeanMS[req] = d / n * 1000
			}
			continue
		}
		if d > 0 && allowed > 0 {
			s.RequestsPerAllowed[k] = d / float64(allowed)
		}
	}
	s.Decisions = map[string]float64{}
	s.StatusChangesPerAllowed = map[string]float64{}
	for k, v := range op1 {
		d := v - op0[k]
		switch {
		case d <= 0:
		case strings.HasPrefix(k, "writes "):
			s.Writes["operator "+strings.TrimPrefix(k, "writes ")] = d
		case strings.HasPrefix(k, "changes "):
			if allowed > 0 {
				s.StatusChangesPerAllowed[strings.TrimPrefix(k, "changes ")] = d / float64(allowed)
			}
		case k == queuedAll:
			s.StatusPasses = int(d)
			s.StatusPassesQueuedOver1s = int(d - (op1[queuedWithin1s] - op0[queuedWithin1s]))
		case k == queuedWithin1s:
		default:
			s.Decisions[strings.TrimPrefix(k, "decisions ")] = d
		}
	}
	statusWrites := func(res string) float64 {
		n := 0.0
		for _, verb := range []string{"PUT", "PATCH", "APPLY"} {
			k := verb + " " + res
			n += api1[k] - api0[k]
		}
		return n
	}
	s.Writes["api topologydisruptionbudgets/status"] = statusWrites("topologydisruptionbudgets/status")
	s.Writes["api poddisruptionbudgets/status"] = statusWrites("poddisruptionbudgets/status")
	// The same PDB status writes by writer, from the audit log: their sum
	// is the API server's count above, each write once.
	writers, err := audit.writers(tallied)
	if err != nil {
		return nil, err
	}
	for w, n := range writers {
		s.Writes["audit poddisruptionbudgets/status "+w] = float64(n)
	}
	if allowed > 0 {
		switch sys {
		case systemTDB:
			s.WritesPerAllowed = s.Writes["api topologydisruptionbudgets/status"] / float64(allowed)
			s.WebhookWritesPerAllowed = s.Writes["operator webhook"] / float64(allowed)
			s.StatusWritesPerAllowed = s.Writes["operator status"] / float64(allowed)
		case systemPDB:
			s.WritesPerAllowed = s.Writes["api poddisruptionbudgets/status"] / float64(allowed)
			s.EvictionHandlerWritesPerAllowed = float64(writers[writerEvictionHandler]) / float64(allowed)
			s.DisruptionControllerWritesPerAllowed = float64(writers[writerDisruptionController]) / float64(allowed)
		}
	}
	wr := w.report(s.calls)
	s.Violations, s.ViolationEvidence, s.PodEventsChecked = len(wr.Violations), wr.Violations, wr.Checked
	s.OverBudgetNotByEviction, s.EvictionsOverBudgetAfterDecision = wr.Excesses, wr.Races
	if len(s.ViolationEvidence) > 20 {
		s.ViolationEvidence = s.ViolationEvidence[:20]
	}
	s.lags, s.StatusLagUnresolved, s.neverShown = wr.Lags, wr.Unresolved, wr.NeverShown
	s.removals = b.remover.TakeRemovalTimes()
	if len(wr.Slowest) > 0 {
		b.writeSlowLags(round, sys, wr.Armed, wr.Slowest)
	}
	stopWatch()
	if err := <-profDone; err != nil {
		fmt.Fprintln(os.Stderr, "CPU profile:", err)
		s.CPUProfile = ""
	}
	s.finish()
	fmt.Printf("   drained in %.1fs: %d pods evicted, %d allowed / %d refused eviction calls, %d violations\n",
		s.DrainWallS, s.PodsEvicted, s.Allowed, s.Refused, s.Violations)
	if b.remover != nil {
		fmt.Printf("   pods removed by UID so far: %d (%d deletes found the name gone or held by another pod)\n",
			b.remover.Removed.Load(), b.remover.Missed.Load())
	}

	// Recycle: the drained nodes go (a node whose drain failed stays,
	// cordoned); the workloads must be whole again, with no pod left on a
	// deleted node (pod garbage collection removes those), before the next
	// turn.
	for _, r := range results {
		if r.err != nil {
			continue
		}
		if err := b.k8s.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: r.node}}); client.IgnoreNotFound(err) != nil {
			return nil, err
		}
	}
	if err := b.waitWhole(ctx, 10*time.Minute); err != nil {
		return nil, err
	}
	return s, nil
}

// writeSlowLags writes the turn's slowest status lags, each with what the
// watcher saw of its domain, to the log directory: evidence to read against
// the operator's log.
func (b *bench) writeSlowLags(round int, sys string, armed time.Time, slow []slowLag) {
	var out strings.Builder
	fmt.Fprintf(&out, "The %d slowest status lags of round %d (%s), longest first. Times are seconds since the watcher was armed (%s),\n"+
		"when it received each event; a lag runs from a pod event that changed a domain's healthy pods to the first status showing that number.\n",
		len(slow), round+1, sys, armed.UTC().Format(time.RFC3339Nano))
	for _, l := range slow {
		fmt.Fprintf(&out, "\n%s: %.3fs from %.3fs\n", l.Domain, l.Lag.Seconds(), l.At.Seconds())
		for _, t := range l.Trace {
			fmt.Fprintf(&out, "  %s\n", t)
		}
	}
	path := filepath.Join(b.logDir, fmt.Sprintf("status-lag-slowest-round%d-%s.txt", round+1, sys))
	if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "writing the slowest status lags:", err)
		return
	}
	fmt.Printf("   slowest status lag %.1fs (%s); the %d slowest, with their domains' events: %s\n", slow[0].Lag.Seconds(), slow[0].Domain, len(slow), path)
}

// meanLatencyOf are the requests whose mean latency the report shows: the
// budgets' status writes, the evictions (with the webhook's call) and the
// pod reads (the drains' and the operator's live reads).
var meanLatencyOf = []string{"PUT topologydisruptionbudgets/status", "PUT poddisruptionbudgets/status", "POST pods/eviction", "GET pods"}

// finish computes the figures from the raw calls and lags.
func (s *system) finish() {
	var ok, refused []time.Duration
	s.Allowed, s.Refused, s.OtherAnswers = 0, 0, 0
	for _, c := range s.calls {
		switch c.code {
		case 201:
			ok = append(ok, c.took)
		case 429:
			refused = append(refused, c.took)
		default:
			s.OtherAnswers++
		}
	}
	s.Allowed, s.Refused = len(ok), len(refused)
	if s.Allowed > 0 {
		s.RefusedPerAllowed = float64(s.Refused) / float64(s.Allowed)
	}
	s.AllowedP50MS, s.AllowedP99MS, s.AllowedMaxMS = percentileMS(ok, .5), percentileMS(ok, .99), percentileMS(ok, 1)
	s.RefusedP50MS, s.RefusedP99MS, s.RefusedMaxMS = percentileMS(refused, .5), percentileMS(refused, .99), percentileMS(refused, 1)
	if s.PodRemovals = len(s.removals); s.PodRemovals > 0 {
		s.PodRemovalP50MS, s.PodRemovalP99MS, s.PodRemovalMaxMS = percentileMS(s.removals, .5), percentileMS(s.removals, .99), percentileMS(s.removals, 1)
	}
	if len(s.lags) > 0 {
		s.StatusLagSamples = len(s.lags)
		s.StatusLagP50MS, s.StatusLagP99MS, s.StatusLagMaxMS = percentileMS(s.lags, .5), percentileMS(s.lags, .99), percentileMS(s.lags, 1)
	}
	if all := slices.Concat(s.lags, s.neverShown); len(all) > 0 {
		s.StatusLagP99AllMS = percentileMS(all, .99)
	}
	if len(s.walls) > 0 {
		sum := 0.0
		for _, w := range s.walls {
			sum += w
		}
		s.DrainWallS = sum / float64(len(s.walls))
	}
	if len(s.nodes) > 0 {
		sorted := append([]float64(nil), s.nodes...)
		sort.Float64s(sorted)
		s.NodeDrainP50S = sorted[(len(sorted)-1)/2]
	}
}

// pool adds one turn's figures to the system's over all rounds.
func pool(into map[string]*system, sys string, s *system) {
	p := into[sys]
	if p == nil {
		cp := *s
		cp.calls = append([]evictionCall(nil), s.calls...)
		cp.lags = append([]time.Duration(nil), s.lags...)
		cp.neverShown = append([]time.Duration(nil), s.neverShown...)
		cp.removals = append([]time.Duration(nil), s.removals...)
		cp.walls = append([]float64(nil), s.walls...)
		cp.Machine = append([]MachineFigures(nil), s.Machine...)
		cp.nodes = append([]float64(nil), s.nodes...)
		cp.Writes, cp.RequestsPerAllowed, cp.Decisions = copyMap(s.Writes), copyMap(s.RequestsPerAllowed), copyMap(s.Decisions)
		cp.StatusChangesPerAllowed, cp.APIMeanMS = copyMap(s.StatusChangesPerAllowed), copyMap(s.APIMeanMS)
		into[sys] = &cp
		return
	}
	n := float64(len(p.walls))
	p.calls, p.lags = append(p.calls, s.calls...), append(p.lags, s.lags...)
	p.neverShown = append(p.neverShown, s.neverShown...)
	p.removals = append(p.removals, s.removals...)
	p.walls, p.nodes = append(p.walls, s.walls...), append(p.nodes, s.nodes...)
	p.NodesDrained += s.NodesDrained
	p.PodsEvicted += s.PodsEvicted
	p.DrainErrors = append(p.DrainErrors, s.DrainErrors...)
	p.Violations += s.Violations
	p.ViolationEvidence = append(p.ViolationEvidence, s.ViolationEvidence...)
	p.Machine = append(p.Machine, s.Machine...)
	p.PodEventsChecked += s.PodEventsChecked
	p.OverBudgetNotByEviction += s.OverBudgetNotByEviction
	p.EvictionsOverBudgetAfterDecision += s.EvictionsOverBudgetAfterDecision
	p.StatusLagUnresolved += s.StatusLagUnresolved
	p.StatusPasses += s.StatusPasses
	p.StatusPassesQueuedOver1s += s.StatusPassesQueuedOver1s
	p.OperatorPeakHeapMiB = max(p.OperatorPeakHeapMiB, s.OperatorPeakHeapMiB)
	p.OperatorPeakRSSMiB = max(p.OperatorPeakRSSMiB, s.OperatorPeakRSSMiB)
	p.OperatorGoroutines = max(p.OperatorGoroutines, s.OperatorGoroutines)
	p.DecisionsPerSecPeak = max(p.DecisionsPerSecPeak, s.DecisionsPerSecPeak)
	p.OperatorCPUS += s.OperatorCPUS
	p.OperatorAvgCores = (p.OperatorAvgCores*n + s.OperatorAvgCores) / (n + 1)
	p.WritesPerAllowed = (p.WritesPerAllowed*n + s.WritesPerAllowed) / (n + 1)
	p.WebhookWritesPerAllowed = (p.WebhookWritesPerAllowed*n + s.WebhookWritesPerAllowed) / (n + 1)
	p.StatusWritesPerAllowed = (p.StatusWritesPerAllowed*n + s.StatusWritesPerAllowed) / (n + 1)
	p.EvictionHandlerWritesPerAllowed = (p.EvictionHandlerWritesPerAllowed*n + s.EvictionHandlerWritesPerAllowed) / (n + 1)
	p.DisruptionControllerWritesPerAllowed = (p.DisruptionControllerWritesPerAllowed*n + s.DisruptionControllerWritesPerAllowed) / (n + 1)
	for k, v := range s.Decisions {
		p.Decisions[k] += v
	}
	for k, v := range s.Writes {
		p.Writes[k] += v
	}
	for k, v := range s.RequestsPerAllowed {
		p.RequestsPerAllowed[k] = (p.RequestsPerAllowed[k]*n + v) / (n + 1)
	}
	for k, v := range s.StatusChangesPerAllowed {
		p.StatusChangesPerAllowed[k] = (p.StatusChangesPerAllowed[k]*n + v) / (n + 1)
	}
	for k, v := range s.APIMeanMS {
		p.APIMeanMS[k] = (p.APIMeanMS[k]*n + v) / (n + 1)
	}
}

func copyMap(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// setBudgets gives every workload the system's budget (none for
// systemNone), removes the other systems' and waits until each budget has a
// status for its generation.
func (b *bench) setBudgets(ctx context.Context, sys string) error {
	sel := client.MatchingLabels{perfenv.ScaleLabel: prefix}
	for _, ns := range b.scale.Namespaces {
		if sys != systemPDB {
			if err := b.k8s.DeleteAllOf(ctx, &policyv1.PodDisruptionBudget{}, client.InNamespace(ns), sel); err != nil {
				return err
			}
		}
		if sys != systemTDB {
			if err := b.k8s.DeleteAllOf(ctx, &policyv1alpha1.TopologyDisruptionBudget{}, client.InNamespace(ns), sel); err != nil {
				return err
			}
		}
	}
	var create []client.Object
	switch sys {
	case systemTDB:
		for _, t := range b.scale.TDBs {
			create = append(create, t.DeepCopy())
		}
	case systemPDB:
		for _, p := range b.scale.EquivalentPDBs() {
			create = append(create, p)
		}
	}
	for _, o := range create {
		if err := b.k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
			return err
		}
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		behind, err := b.budgetsBehind(ctx, sys)
		if err != nil {
			return err
		}
		if behind == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("budgets without a current status after 5 minutes: " + behind)
		}
		time.Sleep(time.Second)
	}
}

// budgetsBehind names a budget of the system that is not current (gone
// budgets of the other system included), or "".
func (b *bench) budgetsBehind(ctx context.Context, sys string) (string, error) {
	sel := client.MatchingLabels{perfenv.ScaleLabel: prefix}
	var tdbs policyv1alpha1.TopologyDisruptionBudgetList
	if err := b.k8s.List(ctx, &tdbs, sel); err != nil {
		return "", err
	}
	var pdbs policyv1.PodDisruptionBudgetList
	if err := b.k8s.List(ctx, &pdbs, sel); err != nil {
		return "", err
	}
	wantTDBs, wantPDBs := 0, 0
	switch sys {
	case systemTDB:
		wantTDBs = len(b.scale.TDBs)
	case systemPDB:
		wantPDBs = len(b.scale.TDBs)
	}
	if len(tdbs.Items) != wantTDBs || len(pdbs.Items) != wantPDBs {
		return fmt.Sprintf("%d TDBs and %d PDBs, want %d and %d", len(tdbs.Items), len(pdbs.Items), wantTDBs, wantPDBs), nil
	}
	for _, t := range tdbs.Items {
		if t.Status.ObservedGeneration != t.Generation || t.Status.ExpectedPods == 0 {
			return "tdb " + t.Namespace + "/" + t.Name, nil
		}
	}
	for _, p := range pdbs.Items {
		if p.Status.ObservedGeneration != p.Generation || p.Status.ExpectedPods == 0 {
			return "pdb " + p.Namespace + "/" + p.Name, nil
		}
	}
	return "", nil
}

// waitWhole waits until every StatefulSet and Deployment of the population
// has all its pods Ready and no pod of theirs is being deleted.
func (b *bench) waitWhole(ctx context.Context, timeout time.Duration) error {
	sel := client.MatchingLabels{perfenv.ScaleLabel: prefix}
	deadline := time.Now().Add(timeout)
	for {
		short := ""
		var stss appsv1.StatefulSetList
		if err := b.k8s.List(ctx, &stss, sel); err != nil {
			return err
		}
		for _, o := range stss.Items {
			if o.Status.ReadyReplicas != ptr.Deref(o.Spec.Replicas, 1) || o.Status.Replicas != ptr.Deref(o.Spec.Replicas, 1) {
				short = "statefulset " + o.Namespace + "/" + o.Name
			}
		}
		var deps appsv1.DeploymentList
		if err := b.k8s.List(ctx, &deps, sel); err != nil {
			return err
		}
		for _, o := range deps.Items {
			if o.Status.ReadyReplicas != ptr.Deref(o.Spec.Replicas, 1) || o.Status.Replicas != ptr.Deref(o.Spec.Replicas, 1) {
				short = "deployment " + o.Namespace + "/" + o.Name
			}
		}
		if short == "" {
			gone, err := b.podOnGoneNode(ctx)
			if err != nil {
				return err
			}
			if gone == "" {
				return nil
			}
			short = gone
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("workloads not whole after %s, e.g. %s", timeout, short)
		}
		time.Sleep(2 * time.Second)
	}
}

// podOnGoneNode names a pod of the population on a node that no longer
// exists, or "".
func (b *bench) podOnGoneNode(ctx context.Context) (string, error) {
	var nodes corev1.NodeList
	if err := b.k8s.List(ctx, &nodes); err != nil {
		return "", err
	}
	exists := map[string]bool{}
	for _, n := range nodes.Items {
		exists[n.Name] = true
	}
	var pods corev1.PodList
	if err := b.k8s.List(ctx, &pods, client.MatchingLabels{perfenv.ScaleLabel: prefix}); err != nil {
		return "", err
	}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && !exists[p.Spec.NodeName] {
			return "pod " + p.Namespace + "/" + p.Name + " on gone node " + p.Spec.NodeName, nil
		}
	}
	return "", nil
}

// summary prints the tables.
func summary(rep *report) {
	tdb, pdb := rep.Systems[systemTDB], rep.Systems[systemPDB]
	if tdb == nil || pdb == nil {
		return
	}
	var shown []*system
	header := ""
	for _, name := range systems {
		if s := rep.Systems[name]; s != nil {
			shown = append(shown, s)
			header += "\t" + columnOf[name]
		}
	}
	fmt.Printf("\n>> results (%d nodes, %d pods, %d budgets, %d rounds of %d nodes recycled per system; commit %s)\n\n",
		rep.Config.Nodes, rep.Config.Pods, rep.Config.Budgets, rep.Config.Rounds, rep.Config.Recycle, rep.Commit)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	row := func(name string, f func(s *system) string) {
		line := name
		for _, s := range shown {
			line += "\t" + f(s)
		}
		_, _ = fmt.Fprintln(tw, line)
	}
	_, _ = fmt.Fprintln(tw, header)
	row("drain wall time (s)", func(s *system) string { return fmt.Sprintf("%.1f", s.DrainWallS) })
	row("  to no budget's", func(s *system) string { return ratio(s.DrainWallToFloor) })
	row("per-node drain p50 (s)", func(s *system) string { return fmt.Sprintf("%.1f", s.NodeDrainP50S) })
	row("pods evicted", func(s *system) string { return strconv.Itoa(s.PodsEvicted) })
	row("allowed evictions p50/p99/max (ms)", func(s *system) string {
		return fmt.Sprintf("%.0f / %.0f / %.0f", s.AllowedP50MS, s.AllowedP99MS, s.AllowedMaxMS)
	})
	row("  p99 to no budget's", func(s *system) string { return ratio(s.AllowedP99ToFloor) })
	row("refused evictions p50/p99/max (ms)", func(s *system) string {
		return fmt.Sprintf("%.0f / %.0f / %.0f", s.RefusedP50MS, s.RefusedP99MS, s.RefusedMaxMS)
	})
	row("refused per allowed", func(s *system) string { return fmt.Sprintf("%.2f (%d/%d)", s.RefusedPerAllowed, s.Refused, s.Allowed) })
	row("other answers", func(s *system) string { return strconv.Itoa(s.OtherAnswers) })
	row("budget violations", func(s *system) string {
		if s == rep.Systems[systemNone] {
			return "- (no budget)"
		}
		return fmt.Sprintf("%d (%d pod events checked)", s.Violations, s.PodEventsChecked)
	})
	row("over budget, not by an eviction", func(s *system) string { return strconv.Itoa(s.OverBudgetNotByEviction) })
	row("evictions over budget only after the decision", func(s *system) string { return strconv.Itoa(s.EvictionsOverBudgetAfterDecision) })
	row("status lag p50/p99/max (ms; PDB: the disruption controller's)", func(s *system) string {
		if s.StatusLagSamples == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f / %.0f / %.0f (%d, %d never)", s.StatusLagP50MS, s.StatusLagP99MS, s.StatusLagMaxMS, s.StatusLagSamples, s.StatusLagUnresolved)
	})
	row("  p99 with the never shown at their age (ms; the target's)", func(s *system) string {
		if s.StatusLagSamples+s.StatusLagUnresolved == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f", s.StatusLagP99AllMS)
	})
	row("evicted pods removed after (ms; p50/p99/max)", func(s *system) string {
		if len(s.removals) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f / %.0f / %.0f (%d)", s.PodRemovalP50MS, s.PodRemovalP99MS, s.PodRemovalMaxMS, len(s.removals))
	})
	row("operator CPU (s; avg cores)", func(s *system) string { return fmt.Sprintf("%.1f; %.2f", s.OperatorCPUS, s.OperatorAvgCores) })
	row("operator peak heap / RSS (MiB)", func(s *system) string {
		return fmt.Sprintf("%.0f / %.0f", s.OperatorPeakHeapMiB, s.OperatorPeakRSSMiB)
	})
	row("operator peak goroutines", func(s *system) string { return fmt.Sprintf("%.0f", s.OperatorGoroutines) })
	row("webhook decisions/s at peak", func(s *system) string { return fmt.Sprintf("%.0f", s.DecisionsPerSecPeak) })
	row("budget status writes per allowed eviction", func(s *system) string { return fmt.Sprintf("%.2f", s.WritesPerAllowed) })
	row("  TDB: webhook / status controller; PDB: eviction handler / disruption controller", func(s *system) string {
		switch {
		case s.WebhookWritesPerAllowed+s.StatusWritesPerAllowed > 0:
			return fmt.Sprintf("%.2f / %.2f", s.WebhookWritesPerAllowed, s.StatusWritesPerAllowed)
		case s.EvictionHandlerWritesPerAllowed+s.DisruptionControllerWritesPerAllowed > 0:
			return fmt.Sprintf("%.2f / %.2f", s.EvictionHandlerWritesPerAllowed, s.DisruptionControllerWritesPerAllowed)
		}
		return "-"
	})
	_ = tw.Flush()
	for _, name := range systems {
		s := rep.Systems[name]
		if s == nil {
			continue
		}
		fmt.Printf("\n%s: writes %s\n%s: API requests per allowed eviction (top 12): %s\n", name, mapLine(s.Writes, 0), name, mapLine(s.RequestsPerAllowed, 12))
		if len(s.Decisions) > 0 {
			fmt.Printf("%s: webhook decisions %s\n", name, mapLine(s.Decisions, 0))
		}
		if len(s.StatusChangesPerAllowed) > 0 {
			fmt.Printf("%s: status controller writes per allowed eviction, by what they change: %s\n", name, mapLine(s.StatusChangesPerAllowed, 0))
		}
		if s.StatusPasses > 0 {
			fmt.Printf("%s: status controller passes %d, queued over 1 s %d\n", name, s.StatusPasses, s.StatusPassesQueuedOver1s)
		}
		if len(s.APIMeanMS) > 0 {
			fmt.Printf("%s: API server mean latency (ms): %s\n", name, mapLine(s.APIMeanMS, 0))
		}
		for i, m := range s.Machine {
			fmt.Printf("%s: the machine during drain %d (avg cores): %s\n", name, i+1, m)
		}
		for _, v := range s.ViolationEvidence {
			fmt.Printf("   violation at %s: %s: %s\n", v.At, v.Workload, v.Detail)
		}
		if s.CPUProfile != "" {
			fmt.Printf("%s: profiles %s %s\n", name, s.CPUProfile, s.HeapProfile)
		}
	}
	fmt.Println("\ntargets:")
	for _, t := range targets(tdb, pdb) {
		mark := "met"
		if !t.met {
			mark = "MISSED"
		}
		fmt.Printf("   %-6s %s: %s\n", mark, t.name, t.got)
	}
}

// columnOf are the systems' column heads.
var columnOf = map[string]string{systemTDB: "TDB (operator)", systemPDB: "PDB (core)", systemNone: "no budget (floor)"}

// ratio shows a ratio to the floor; "-" for the floor itself, or with no
// floor measured.
func ratio(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", r)
}

func mapLine(m map[string]float64, top int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] || m[keys[i]] == m[keys[j]] && keys[i] < keys[j] })
	if top > 0 && len(keys) > top {
		keys = keys[:top]
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.2f", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func writeJSON(path string, rep *report) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
