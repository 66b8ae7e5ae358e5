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

// Package rolloutbench measures, side by side in one run on a local kwok
// cluster with the real control plane (hack/cluster: 12 nodes, 4 per zone,
// pods Ready 2 s after they are scheduled), how long the update of a 24-pod,
// 3-zone StatefulSet takes under:
//
//	a  the built-in RollingUpdate (one pod at a time), with a
//	   TopologyDisruptionBudget maxUnavailable 2 per zone WITHOUT rollout,
//	   so the operator's status controller does the same bookkeeping as in
//	   b and c but nothing asks it before a pod is deleted
//	b  updateStrategy OnDelete, driven by the operator: a TDB maxUnavailable 2
//	   per zone with rollout.strategy AllDomains, which the StatefulSet names
//	   in its policy.tdb.dev/rollout-budget annotation (a single OnDelete
//	   workload: no settle window)
//	c  the same with rollout.strategy DomainByDomain
//
// Every case has the same StatefulSet shape (24 replicas, Parallel pod
// management, 8 pods per zone kept in their zone by zonal volumes: each
// ordinal's claim is pre-bound to a volume with a zone's node affinity) in
// its own namespace, one case after the other on the same 12 nodes; a
// case's namespace is deleted before the next case starts. The update is a
// change of a pod template annotation. The wall time runs from that change
// until
//
//	a  the StatefulSet reports updatedReplicas = readyReplicas = 24 and
//	   currentRevision = updateRevision;
//	b, c  the budget reports RolloutComplete True for the new revision.
//
// Either way the pods are then checked (all 24 at the update revision, Ready,
// not deleting); "PODS" is the first moment the benchmark itself saw that.
// An independent kwokenv.Watcher measurement (Watcher.Unavailable, every
// 100 ms) gives the maximum unavailable pods per zone and overall and the
// most zones disrupted at once. The operator's API requests are counted
// from its metrics endpoint (client-go's rest_client_requests_total, by
// method and code) before and after the update, and the evictions from the
// kube-apiserver's own apiserver_request_total.
//
// The cases run in rounds (-rounds, default 3): a, b, c, a, b, c, ... It
// prints a table, the speed-ups a/b (target 4x) and a/c within each round
// and their medians (the verdict), and exits
// non-zero if a case failed or timed out, a budget was exceeded (b, c: more
// than 2 unavailable in a zone; c: more than one zone disrupted at once), or
// the operator reported a rollout complete before the pods were. The cluster
// is torn down at the end unless -keep.
package rolloutbench

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
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

const (
	replicas      = 24
	perZone       = 8
	budgetPerZone = 2
	app           = "web"
	stsName       = "web"
	budgetName    = "web"
	// revisionAnnotation is the pod template annotation whose change is the
	// update.
	revisionAnnotation = "bench.tdb.dev/revision"
	webhookPort        = 39443
	metricsPort        = 38080
	probePort          = 38081
)

var zones = []string{"zone-a", "zone-b", "zone-c"}

// benchCase is one way of updating the StatefulSet.
type benchCase struct {
	id, title string
	update    appsv1.StatefulSetUpdateStrategyType
	// rollout is the budget's spec.rollout; nil for the built-in update.
	rollout *policyv1alpha1.RolloutSpec
	// bound names the case's budget bound; maxZones > 0 also bounds the
	// zones disrupted at once.
	bound    string
	bounded  bool
	maxZones int
}

func cases() []benchCase {
	return []benchCase{
		{
			id: "a", title: "built-in RollingUpdate (TDB w/o rollout)",
			update: appsv1.RollingUpdateStatefulSetStrategyType,
			bound:  "- (not asked)",
		},
		{
			id: "b", title: "operator AllDomains, 2/zone",
			update:  appsv1.OnDeleteStatefulSetStrategyType,
			rollout: &policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.AllDomains},
			bound:   "zone <= 2", bounded: true,
		},
		{
			id: "c", title: "operator DomainByDomain, 2/zone",
			update:  appsv1.OnDeleteStatefulSetStrategyType,
			rollout: &policyv1alpha1.RolloutSpec{Strategy: policyv1alpha1.DomainByDomain},
			bound:   "zone <= 2, 1 zone", bounded: true, maxZones: 1,
		},
	}
}

// result is what one case measured.
type result struct {
	c     benchCase
	round int
	// wall: the template change until the completion signal of the case;
	// pods: until the benchmark saw every pod updated and Ready.
	wall, pods time.Duration
	// premature: the completion signal came while some pod was not updated
	// and Ready.
	premature  string
	updated    int
	moved      int
	maxPerZone map[string]int
	maxOverall int
	maxZones   int
	samples    int
	sampleErrs int
	operator   requestStats
	apiserver  map[string]float64
	logErrors  map[string]int
	logLines   int
	operatorOK bool
	// load is the machine's 1-minute load average at the end of the case:
	// the machines are shared, and the wall times move with it.
	load string
	err  error
}

func (r *result) exceeded() bool {
	if r.err != nil || !r.c.bounded {
		return false
	}
	for _, u := range r.maxPerZone {
		if u > budgetPerZone {
			return true
		}
	}
	return r.c.maxZones > 0 && r.maxZones > r.c.maxZones
}

// The bench's flags, after go test's -args (make bench-rollout BENCH_ARGS=...).
var (
	keep        = flag.Bool("keep", false, "Keep the cluster at the end instead of tearing it down.")
	clusterName = flag.String("cluster", "tdb-rolloutbench", "Name of the local cluster.")
	only        = flag.String("cases", "abc", "Cases to run, in order (subset of abc).")
	rounds      = flag.Int("rounds", 3, "How many times to run the cases, one round after the other; the ratios are per round, and their median is the verdict (the machines are shared: one slow moment must not decide).")
	timeout     = flag.Duration("timeout", 5*time.Minute, "How long one update may take before the case fails.")
	verbose     = flag.Bool("v", false, "Print the unavailability and rollout timeline of each case.")
	logLevel    = flag.String("operator-log-level", "", "The operator's --zap-log-level (e.g. debug, for the rollout controller's decisions in its log); default: its own.")
)

// TestRolloutBench runs the bench and fails when a budget was exceeded or
// an update did not complete.
func TestRolloutBench(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Millisecond timestamps: the operator log is how a slow pass is found.
	opArgs := []string{"--zap-time-encoding=rfc3339nano"}
	if *logLevel != "" {
		opArgs = append(opArgs, "--zap-log-level="+*logLevel)
	}
	code, err := run(ctx, *clusterName, *keep, *only, max(*rounds, 1), *timeout, *verbose, opArgs)
	if err != nil {
		t.Fatalf("rolloutbench: %v", err)
	}
	if code != 0 {
		t.Fatalf("rolloutbench: exit code %d (see the report above)", code)
	}
}

func run(ctx context.Context, name string, keep bool, only string, rounds int, timeout time.Duration, verbose bool, opArgs []string) (int, error) {
	var selected []benchCase
	for _, bc := range cases() {
		if strings.Contains(only, bc.id) {
			selected = append(selected, bc)
		}
	}
	if len(selected) == 0 {
		return 2, fmt.Errorf("-cases %q selects no case (want letters of abc)", only)
	}
	start := time.Now()
	b, err := kwokenv.StartBench(name, "rolloutbench-", "12 nodes, 4 per zone; POD_READY_DELAY=2s",
		[]string{"ZONES=3", "NODES_PER_ZONE=4", "POD_READY_DELAY=2s"},
		kwokenv.OperatorOptions{WebhookPort: webhookPort, MetricsPort: metricsPort, ProbePort: probePort, Args: opArgs})
	if err != nil {
		return 1, err
	}
	defer b.Close(keep)
	c, k8s, logDir, opLog := b.Cluster, b.Client, b.LogDir, b.OperatorLog

	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return 1, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 1, err
	}
	env := &benchEnv{k8s: k8s, cs: cs, op: b.Operator, opLog: opLog, timeout: timeout, verbose: verbose}
	var results []*result
	for round := 1; round <= rounds; round++ {
		for i, bc := range selected {
			if ctx.Err() != nil {
				return 1, ctx.Err()
			}
			fmt.Printf("\n>> round %d/%d, case %s: %s\n", round, rounds, bc.id, bc.title)
			r := env.runCase(ctx, bc, filepath.Join(logDir, fmt.Sprintf("round-%d-case-%s", round, bc.id)))
			r.round = round
			results = append(results, r)
			if r.err != nil {
				fmt.Printf("   case %s did not complete: %v\n", bc.id, r.err)
			} else {
				fmt.Printf("   done in %s (pods %s): max unavailable %s, overall %d, zones at once %d; operator writes %d, evictions %d, 429s %d\n",
					r.wall.Round(10*time.Millisecond), r.pods.Round(10*time.Millisecond), kwokenv.ZoneList(r.maxPerZone), r.maxOverall, r.maxZones,
					int(r.operator.writes()), int(r.evictions()), int(r.operator.byCode("429")))
			}
			if !keep || round != rounds || i != len(selected)-1 {
				if err := deleteNamespace(ctx, k8s, namespaceOf(bc)); err != nil {
					fmt.Printf("   warning: %v\n", err)
				} else if err := deleteVolumes(ctx, k8s, namespaceOf(bc)); err != nil {
					fmt.Printf("   warning: %v\n", err)
				}
			}
		}
	}

	code := report(results)
	fmt.Printf("\ntotal %s; timelines, the operator log and its slice per case: %s\n", time.Since(start).Round(time.Second), logDir)
	return code, nil
}

// benchEnv is what every case uses.
type benchEnv struct {
	k8s     client.Client
	cs      kubernetes.Interface
	op      *kwokenv.Operator
	opLog   string
	timeout time.Duration
	verbose bool
}

func namespaceOf(bc benchCase) string { return "rollout-" + bc.id }

// runCase deploys the case's workload and budget, waits until they are
// settled, changes the pod template and measures the update.
func (e *benchEnv) runCase(ctx context.Context, bc benchCase, dir string) *result {
	r := &result{c: bc, maxPerZone: map[string]int{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.err = err
		return r
	}
	ns := namespaceOf(bc)
	if err := deploy(ctx, e.k8s, ns, bc); err != nil {
		r.err = err
		return r
	}
	w := &kwokenv.Watcher{Client: e.k8s, NS: ns, Selector: labels.SelectorFromSet(labels.Set{"app": app}),
		Expected: func(context.Context) (map[string]int, error) {
			expected := map[string]int{}
			for _, z := range zones {
				expected[z] = perZone
			}
			return expected, nil
		}}
	oldRev, err := waitSettled(ctx, e.k8s, w, ns, bc)
	if err != nil {
		r.err = err
		return r
	}
	zonesBefore, err := podZones(ctx, e.k8s, ns)
	if err != nil {
		r.err = err
		return r
	}
	fmt.Printf("   24 pods Ready at revision %s (%s); budget computed%s\n", oldRev, zoneCounts(zonesBefore),
		map[bool]string{true: ", rollout reported complete", false: ""}[bc.rollout != nil])

	opBefore, err := scrapeOperator()
	if err != nil {
		r.err = fmt.Errorf("scraping the operator's metrics: %w", err)
		return r
	}
	apiBefore, err := scrapeAPIServer(ctx, e.cs)
	if err != nil {
		r.err = fmt.Errorf("scraping the kube-apiserver's metrics: %w", err)
		return r
	}
	logFrom := fileSize(e.opLog)

	sampleCtx, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	progress := &strings.Builder{}
	t0 := time.Now()
	// At the first sample over the bound, the pods and the budget are
	// saved, for finding out why.
	var captured bool
	sampler := kwokenv.StartSampler(w.Unavailable, 100*time.Millisecond, func(at time.Duration, u map[string]int) {
		for _, n := range u {
			if r.c.bounded && n > budgetPerZone && !captured {
				captured = true
				writeEvidence(ctx, e.k8s, ns, filepath.Join(dir, "exceeded.txt"), at, u)
			}
		}
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		if bc.rollout != nil {
			watchRollout(sampleCtx, e.k8s, ns, t0, progress)
		}
	}()

	r.err = e.update(ctx, bc, ns, oldRev, t0, r)

	// Trailing status writes belong to the update too.
	time.Sleep(2 * time.Second)
	stopSampling()
	wg.Wait()
	rep := sampler.Stop()
	r.samples, r.sampleErrs, r.maxPerZone = rep.Samples, rep.Errors, rep.MaxZone
	r.maxOverall, r.maxZones = rep.MaxTotal, rep.MaxDisruptedZones
	_ = os.WriteFile(filepath.Join(dir, "unavailable.txt"), []byte(rep.Timeline), 0o644)
	_ = os.WriteFile(filepath.Join(dir, "rollout-status.txt"), []byte(progress.String()), 0o644)
	if e.verbose {
		fmt.Printf("   unavailability timeline (t, unavailable per zone):\n%s", kwokenv.Indent(rep.Timeline, "     "))
		if progress.Len() > 0 {
			fmt.Printf("   rollout status timeline:\n%s", kwokenv.Indent(progress.String(), "     "))
		}
	}

	if opAfter, err := scrapeOperator(); err == nil {
		r.operator = opAfter.minus(opBefore)
	} else if r.err == nil {
		r.err = fmt.Errorf("scraping the operator's metrics: %w", err)
	}
	if apiAfter, err := scrapeAPIServer(ctx, e.cs); err == nil {
		r.apiserver = minus(apiAfter, apiBefore)
	}
	r.load = loadAverage()
	r.logLines, r.logErrors = operatorLogSlice(e.opLog, logFrom, filepath.Join(dir, "operator.log"))
	r.operatorOK = e.op.Ready()
	if zonesAfter, err := podZones(ctx, e.k8s, ns); err == nil {
		for p, z := range zonesAfter {
			if zonesBefore[p] != z {
				r.moved++
			}
		}
	}
	if r.premature != "" {
		fmt.Printf("   PREMATURE: the budget reported RolloutComplete while %s\n", r.premature)
	}
	if !r.operatorOK {
		fmt.Println("   warning: the operator's readiness probe does not answer OK")
	}
	return r
}

// update changes the pod template and waits for the case's completion
// signal, then checks the pods.
func (e *benchEnv) update(ctx context.Context, bc benchCase, ns, oldRev string, t0 time.Time, r *result) error {
	var sts appsv1.StatefulSet
	if err := e.k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: stsName}, &sts); err != nil {
		return err
	}
	patch := client.MergeFrom(sts.DeepCopy())
	sts.Spec.Template.Annotations = map[string]string{revisionAnnotation: "2"}
	if err := e.k8s.Patch(ctx, &sts, patch); err != nil {
		return fmt.Errorf("changing the pod template: %w", err)
	}
	fmt.Printf("   pod template changed at t=%.2fs; waiting for the update\n", time.Since(t0).Seconds())

	deadline := t0.Add(e.timeout)
	state := ""
	for {
		newRev, done, st, err := completed(ctx, e.k8s, ns, bc, oldRev)
		if err == nil {
			state = st
		}
		if r.pods == 0 && newRev != "" {
			if ok, _, n := podsUpdated(ctx, e.k8s, ns, newRev); ok {
				r.pods = time.Since(t0)
				r.updated = n
			}
		}
		if done {
			r.wall = time.Since(t0)
			ok, why, n := podsUpdated(ctx, e.k8s, ns, newRev)
			r.updated = n
			if !ok {
				r.premature = why
				// Keep measuring the pods so the table says when they were done.
				for r.pods == 0 && time.Now().Before(deadline) && ctx.Err() == nil {
					if ok, _, n := podsUpdated(ctx, e.k8s, ns, newRev); ok {
						r.pods, r.updated = time.Since(t0), n
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			return nil
		}
		if strings.Contains(state, policyv1alpha1.ReasonProgressDeadlineExceeded) {
			r.wall = time.Since(t0)
			return fmt.Errorf("the rollout stalled after %s: %s", r.wall.Round(time.Second), state)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.wall = time.Since(t0)
			return errors.Join(fmt.Errorf("not complete %s after the template change: %s", e.timeout, state), err, ctx.Err())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// completed reads the case's completion signal: the StatefulSet's status
// for the built-in update, the budget's RolloutComplete condition for the
// operator. newRev is the StatefulSet's update revision once it differs from
// oldRev.
func completed(ctx context.Context, k8s client.Client, ns string, bc benchCase, oldRev string) (newRev string, done bool, state string, err error) {
	var sts appsv1.StatefulSet
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: stsName}, &sts); err != nil {
		return "", false, "", err
	}
	s := sts.Status
	if s.ObservedGeneration < sts.Generation || s.UpdateRevision == oldRev {
		return "", false, "the StatefulSet controller has not seen the new template yet", nil
	}
	newRev = s.UpdateRevision
	state = fmt.Sprintf("StatefulSet updated %d ready %d current %s update %s", s.UpdatedReplicas, s.ReadyReplicas, s.CurrentRevision, s.UpdateRevision)
	if bc.rollout == nil {
		return newRev, s.UpdatedReplicas == replicas && s.ReadyReplicas == replicas && s.CurrentRevision == s.UpdateRevision, state, nil
	}
	var tdb policyv1alpha1.TopologyDisruptionBudget
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: budgetName}, &tdb); err != nil {
		return newRev, false, state, err
	}
	state = rolloutSummary(&tdb) + "; " + state
	return newRev, rolloutComplete(&tdb, newRev), state, nil
}

// rolloutComplete: RolloutComplete True, reason AllPodsUpdated, for rev.
func rolloutComplete(tdb *policyv1alpha1.TopologyDisruptionBudget, rev string) bool {
	cond := meta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionRolloutComplete)
	if cond == nil || cond.Status != metav1.ConditionTrue || cond.Reason != policyv1alpha1.ReasonRolloutComplete {
		return false
	}
	if tdb.Status.Rollout == nil {
		return false
	}
	for _, wl := range tdb.Status.Rollout.Workloads {
		if wl.Kind == "StatefulSet" && wl.Name == stsName {
			return wl.UpdateRevision == rev
		}
	}
	return false
}

// podsUpdated says whether every pod runs rev, is Ready and not deleting, and
// if not, why; n counts the pods that are.
func podsUpdated(ctx context.Context, k8s client.Client, ns, rev string) (ok bool, why string, n int) {
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return false, err.Error(), 0
	}
	var outdated, unready []string
	for _, p := range pods.Items {
		switch {
		case p.Labels[appsv1.ControllerRevisionHashLabelKey] != rev:
			outdated = append(outdated, p.Name)
		case p.DeletionTimestamp != nil || !podReady(&p):
			unready = append(unready, p.Name)
		default:
			n++
		}
	}
	if n == replicas {
		return true, "", n
	}
	sort.Strings(outdated)
	sort.Strings(unready)
	return false, fmt.Sprintf("%d/%d pods updated and Ready (outdated %v, not Ready or deleting %v)", n, replicas, outdated, unready), n
}

func podReady(p *corev1.Pod) bool {
	c := podCondition(p, corev1.PodReady)
	return p.Status.Phase == corev1.PodRunning && c != nil && c.Status == corev1.ConditionTrue
}

func podCondition(p *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// deploy creates the namespace, the case's zonal volumes, the StatefulSet
// and the budget.
func deploy(ctx context.Context, k8s client.Client, ns string, bc benchCase) error {
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return fmt.Errorf("creating namespace %s (a fresh cluster is expected): %w", ns, err)
	}
	if err := createVolumes(ctx, k8s, ns); err != nil {
		return err
	}
	w := statefulSet(ns, bc.update)
	if bc.rollout != nil {
		// The owner's consent: the operator updates only the OnDelete
		// workloads that name the budget.
		w.Annotation(policyv1alpha1.RolloutBudgetAnnotation, budgetName)
	}
	sts := w.Obj()
	if err := k8s.Create(ctx, sts); err != nil {
		return fmt.Errorf("creating the StatefulSet: %w", err)
	}
	tdb := builders.Budget(budgetName).Namespace(ns).MatchLabels(map[string]string{"app": app}).
		TopologyKey(kwokenv.ZoneKey).MaxUnavailable(intstr.FromInt32(budgetPerZone))
	if bc.rollout != nil {
		tdb.Rollout(*bc.rollout)
	}
	if err := k8s.Create(ctx, tdb.Obj()); err != nil {
		return fmt.Errorf("creating the budget: %w", err)
	}
	return nil
}

// The StatefulSet's pods keep their zone, as those of a zone-replicated
// database do because their disks are zonal: each ordinal's claim is
// pre-bound to a volume whose node affinity is one zone (ordinal i in
// zones[i%3]), so the scheduler can place a replacement only in the zone
// its predecessor left. Without it, replacements of pods evicted in
// several zones at once land wherever the spread allows, zones end up with
// 7 and 9 pods, and neither the per-zone unavailability nor the number of
// waves is comparable between cases.
const (
	storageClass = "bench-zonal"
	claimName    = "data"
)

func volumeName(ns string, ordinal int) string {
	return fmt.Sprintf("%s-%s-%d", ns, claimName, ordinal)
}

// createVolumes creates the StorageClass (once) and the case's 24 volumes,
// each pre-bound to the claim of one ordinal.
func createVolumes(ctx context.Context, k8s client.Client, ns string) error {
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: storageClass},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	if err := k8s.Create(ctx, sc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating StorageClass %s: %w", storageClass, err)
	}
	for i := range replicas {
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: volumeName(ns, i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
				StorageClassName:              storageClass,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/var/lib/bench"}},
				ClaimRef: &corev1.ObjectReference{
					Kind: "PersistentVolumeClaim", APIVersion: "v1",
					Namespace: ns, Name: fmt.Sprintf("%s-%s-%d", claimName, stsName, i),
				},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{
					NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{
						Key: kwokenv.ZoneKey, Operator: corev1.NodeSelectorOpIn, Values: []string{zones[i%len(zones)]},
					}}}},
				}},
			},
		}
		if err := k8s.Create(ctx, pv); err != nil {
			return fmt.Errorf("creating PersistentVolume %s: %w", pv.Name, err)
		}
	}
	return nil
}

// deleteVolumes deletes the case's volumes (Released once its namespace,
// and so its claims, are gone).
func deleteVolumes(ctx context.Context, k8s client.Client, ns string) error {
	for i := range replicas {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: volumeName(ns, i)}}
		if err := k8s.Delete(ctx, pv); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting PersistentVolume %s: %w", pv.Name, err)
		}
	}
	return nil
}

// statefulSet is the one workload shape of every case: 24 pods created in
// parallel, 8 per zone, each kept in its zone by its volume.
func statefulSet(ns string, update appsv1.StatefulSetUpdateStrategyType) *builders.WorkloadWrapper[appsv1.StatefulSet] {
	return builders.StatefulSet(stsName).Namespace(ns).Replicas(replicas).ParallelPodManagement().UpdateStrategy(update).
		PodLabels(map[string]string{"app": app}).PodAnnotations(map[string]string{revisionAnnotation: "1"}).
		Containers(corev1.Container{Name: app, Image: "web:bench",
			VolumeMounts: []corev1.VolumeMount{{Name: claimName, MountPath: "/data"}}}).
		VolumeClaimTemplates(corev1.PersistentVolumeClaim{
			ObjectMeta: metav1.ObjectMeta{Name: claimName},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: ptr.To(storageClass),
				Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
			},
		})
}

// waitSettled waits until the 24 pods are Ready at one revision and the
// budget is computed for them (and, with rollout, reports the rollout
// complete), and returns that revision.
func waitSettled(ctx context.Context, k8s client.Client, w *kwokenv.Watcher, ns string, bc benchCase) (string, error) {
	deadline := time.Now().Add(3 * time.Minute)
	for {
		state, rev, ok := settled(ctx, k8s, w, ns, bc)
		if ok {
			return rev, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", fmt.Errorf("case %s: not settled within 3m: %s", bc.id, state)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func settled(ctx context.Context, k8s client.Client, w *kwokenv.Watcher, ns string, bc benchCase) (state, rev string, ok bool) {
	u, err := w.Unavailable(ctx)
	if err != nil {
		return err.Error(), "", false
	}
	if kwokenv.Sum(u) > 0 {
		return fmt.Sprintf("unavailable %s", kwokenv.ZoneList(u)), "", false
	}
	var sts appsv1.StatefulSet
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: stsName}, &sts); err != nil {
		return err.Error(), "", false
	}
	rev = sts.Status.UpdateRevision
	if sts.Status.CurrentRevision != rev || sts.Status.ReadyReplicas != replicas {
		return fmt.Sprintf("StatefulSet current %s update %s ready %d", sts.Status.CurrentRevision, rev, sts.Status.ReadyReplicas), "", false
	}
	var tdb policyv1alpha1.TopologyDisruptionBudget
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: budgetName}, &tdb); err != nil {
		return err.Error(), "", false
	}
	s := tdb.Status
	const wantAllowed = budgetPerZone * 3
	if s.ObservedGeneration < tdb.Generation || s.ExpectedPods != replicas || s.CurrentHealthy != replicas || s.DisruptionsAllowed != wantAllowed {
		return fmt.Sprintf("budget expected %d healthy %d allowed %d (want %d)", s.ExpectedPods, s.CurrentHealthy, s.DisruptionsAllowed, wantAllowed), "", false
	}
	if bc.rollout != nil && !rolloutComplete(&tdb, rev) {
		return "the budget does not report RolloutComplete for revision " + rev + " (is the rollout controller running?): " + rolloutSummary(&tdb), "", false
	}
	return "", rev, true
}

// rolloutSummary is one line of the budget's rollout status.
func rolloutSummary(tdb *policyv1alpha1.TopologyDisruptionBudget) string {
	var b strings.Builder
	if ro := tdb.Status.Rollout; ro != nil {
		fmt.Fprintf(&b, "current=%q", ro.CurrentDomain)
		for _, d := range ro.Domains {
			fmt.Fprintf(&b, " %s:%s %d/%d", d.Name, d.Phase, d.UpdatedPods, d.TotalPods)
		}
	} else {
		b.WriteString("no status.rollout")
	}
	for _, t := range []string{policyv1alpha1.ConditionRolloutProgressing, policyv1alpha1.ConditionRolloutComplete} {
		if c := meta.FindStatusCondition(tdb.Status.Conditions, t); c != nil {
			fmt.Fprintf(&b, "; %s=%s/%s", t, c.Status, c.Reason)
		}
	}
	fmt.Fprintf(&b, "; allowed %d, records %d", tdb.Status.DisruptionsAllowed, len(tdb.Status.DisruptedPods))
	return b.String()
}

func writeEvidence(ctx context.Context, k8s client.Client, ns, path string, at time.Duration, u map[string]int) {
	var b strings.Builder
	fmt.Fprintf(&b, "first sample over the bound at %.2fs: unavailable %s\n\npods:\n", at.Seconds(), kwokenv.ZoneList(u))
	zones, _ := podZones(ctx, k8s, ns)
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns)); err == nil {
		sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
		for _, p := range pods.Items {
			ready := podCondition(&p, corev1.PodReady)
			fmt.Fprintf(&b, "  %-8s %-6s uid %s phase %-9s ready %-5v deleting %-5v node %-14s rev %s created %s\n",
				p.Name, zones[p.Name], p.UID, p.Status.Phase, ready != nil && ready.Status == corev1.ConditionTrue,
				p.DeletionTimestamp != nil, p.Spec.NodeName, p.Labels[appsv1.ControllerRevisionHashLabelKey],
				p.CreationTimestamp.UTC().Format(time.RFC3339))
		}
	}
	var tdb policyv1alpha1.TopologyDisruptionBudget
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: budgetName}, &tdb); err == nil {
		fmt.Fprintf(&b, "\nbudget (resourceVersion %s):\n", tdb.ResourceVersion)
		for _, d := range tdb.Status.Domains {
			fmt.Fprintf(&b, "  %s expected %d healthy %d desired %d allowed %d\n", d.Name, d.ExpectedPods, d.CurrentHealthy, d.DesiredHealthy, d.DisruptionsAllowed)
		}
		for _, rec := range tdb.Status.DisruptedPods {
			fmt.Fprintf(&b, "  record %s uid %s %s at %s\n", rec.Name, rec.UID, rec.Domain, rec.Time.UTC().Format(time.RFC3339))
		}
	}
	_ = os.WriteFile(path, []byte(b.String()), 0o644)
}

// watchRollout records every change of the budget's rollout status.
func watchRollout(ctx context.Context, k8s client.Client, ns string, start time.Time, out *strings.Builder) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	last := ""
	for {
		var tdb policyv1alpha1.TopologyDisruptionBudget
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: budgetName}, &tdb); err == nil {
			if cur := rolloutSummary(&tdb); cur != last {
				fmt.Fprintf(out, "%7.2fs  %s\n", time.Since(start).Seconds(), cur)
				last = cur
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// podZones maps each pod to the zone of its node.
func podZones(ctx context.Context, k8s client.Client, ns string) (map[string]string, error) {
	var nodes corev1.NodeList
	if err := k8s.List(ctx, &nodes); err != nil {
		return nil, err
	}
	zoneOf := map[string]string{}
	for _, n := range nodes.Items {
		zoneOf[n.Name] = n.Labels[kwokenv.ZoneKey]
	}
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, p := range pods.Items {
		out[p.Name] = zoneOf[p.Spec.NodeName]
	}
	return out, nil
}

func zoneCounts(podZone map[string]string) string {
	n := map[string]int{}
	for _, z := range podZone {
		n[z]++
	}
	return fmt.Sprintf("per zone a=%d b=%d c=%d", n["zone-a"], n["zone-b"], n["zone-c"])
}

// deleteNamespace deletes a case's namespace and waits until it is gone, so
// the next case starts on empty nodes with a quiet operator.
func deleteNamespace(ctx context.Context, k8s client.Client, ns string) error {
	obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	if err := k8s.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting namespace %s: %w", ns, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		err := k8s.Get(ctx, client.ObjectKey{Name: ns}, obj)
		if apierrors.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("namespace %s still there 2m after its deletion (phase %s): %w", ns, obj.Status.Phase, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}
