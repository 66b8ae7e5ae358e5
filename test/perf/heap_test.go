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

// Package perf_test holds measured runs, not timed unit tests: they start a
// real kube-apiserver and etcd (envtest, through the integration framework),
// load them with a realistic cluster and report what the operator's manager
// costs. The framework is built with the integration tag, so run with both:
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s/v1.37.2 go test -tags perf,integration \
//		-count=1 -timeout 20m -v ./test/perf/ -run TestManagerHeapAt10kPods
//
// Set HEAP_PROFILE_DIR to also write a heap profile of each measurement.
package perf_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/controllers"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

const (
	numNodes   = 1000
	numPods    = 10000
	numSets    = 30
	numWorkers = 16

	// heapTargetMiB is the most HeapInuse the manager may add, with the
	// cache transforms, once it caches numPods pods.
	heapTargetMiB = 150

	zoneKey       = "topology.kubernetes.io/zone"
	recordTimeout = 2 * time.Minute
	// syncTimeout bounds the wait for the budgets to show every pod.
	syncTimeout = 5 * time.Minute
)

var (
	zones = []string{"zone-a", "zone-b", "zone-c"}
	// apps are the three StatefulSet groups; each has one budget selecting
	// app=<name> and numSets/3 StatefulSets.
	apps = []string{"ingester", "store-gateway", "querier"}
)

// set is a StatefulSet the pods are owned by.
type set struct {
	name, app, revision string
	uid                 types.UID
	replicas            int32
}

func TestManagerHeapAt10kPods(t *testing.T) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	ctx := context.Background()
	start := time.Now()

	env, cfg, err := framework.StartAPIServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})

	// The loader client: raised rate limits, its concurrency bounded by the
	// worker pool instead.
	loadCfg := rest.CopyConfig(cfg)
	loadCfg.QPS, loadCfg.Burst = 5000, 10000
	c, err := client.New(loadCfg, client.Options{Scheme: framework.Scheme})
	if err != nil {
		t.Fatal(err)
	}

	ns, budgets := populate(ctx, t, c)
	t.Logf("cluster populated in %s (%d nodes, %d pods, %d StatefulSets, %d budgets)",
		time.Since(start).Round(time.Millisecond), numNodes, numPods, numSets, len(budgets))

	// With the transforms: the manager exactly as the binary wires it.
	with := measure(ctx, t, c, ns, "with transforms", func() (*framework.Manager, error) {
		return framework.StartManager(cfg, clock.RealClock{}, recordTimeout)
	})

	// Without: same controller and indexes, a cache without Transform.
	resetStatuses(ctx, t, c, ns)
	without := measure(ctx, t, c, ns, "without transforms", func() (*framework.Manager, error) {
		return startUntransformedManager(cfg)
	})

	ratioInuse := float64(without.delta.HeapInuse) / float64(with.delta.HeapInuse)
	ratioAlloc := float64(without.delta.HeapAlloc) / float64(with.delta.HeapAlloc)
	report(t, "heap after caching %d pods: without/with transforms ratio = %.2fx (HeapInuse), %.2fx (HeapAlloc)",
		numPods, ratioInuse, ratioAlloc)
	report(t, "measured run took %s", time.Since(start).Round(time.Second))

	if got := mib(with.delta.HeapInuse); got > heapTargetMiB {
		t.Errorf("HeapInuse delta with transforms is %.1f MiB, over the %d MiB target", got, heapTargetMiB)
	}
}

// heap is a heap reading after two GCs.
type heap struct {
	HeapInuse, HeapAlloc, HeapObjects int64
}

func readHeap() heap {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return heap{int64(m.HeapInuse), int64(m.HeapAlloc), int64(m.HeapObjects)}
}

func (h heap) minus(o heap) heap {
	return heap{h.HeapInuse - o.HeapInuse, h.HeapAlloc - o.HeapAlloc, h.HeapObjects - o.HeapObjects}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

type measurement struct {
	abs, delta heap
}

// measure takes a baseline, starts a manager, waits until the budgets count
// every pod, reads the heap, writes an optional profile and stops the
// manager.
func measure(ctx context.Context, t *testing.T, c client.Client, ns, label string, start func() (*framework.Manager, error)) measurement {
	t.Helper()
	base := readHeap()
	t0 := time.Now()
	m, err := start()
	if err != nil {
		t.Fatalf("%s: starting the manager: %v", label, err)
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			if err := m.Stop(); err != nil {
				t.Errorf("%s: stopping the manager: %v", label, err)
			}
		}
	}
	defer stop()
	if err := waitForBudgets(ctx, c, ns); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	synced := time.Since(t0)
	after := readHeap()
	if dir := os.Getenv("HEAP_PROFILE_DIR"); dir != "" {
		writeProfile(t, filepath.Join(dir, "heap-"+slug(label)+".pprof"))
	}
	stop()

	d := after.minus(base)
	report(t, "heap after caching %d pods (%s): HeapInuse delta = %.1f MiB (absolute %.1f MiB), HeapAlloc delta = %.1f MiB (absolute %.1f MiB), heap objects delta = %d; synced and computed in %s",
		numPods, label, mib(d.HeapInuse), mib(after.HeapInuse), mib(d.HeapAlloc), mib(after.HeapAlloc),
		d.HeapObjects, synced.Round(time.Millisecond))
	return measurement{abs: after, delta: d}
}

// report prints a figure both to the test log and to stdout.
func report(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Logf(format, args...)
	fmt.Printf(format+"\n", args...)
}

func slug(s string) string {
	out := []byte(s)
	for i, b := range out {
		if b == ' ' {
			out[i] = '-'
		}
	}
	return string(out)
}

func writeProfile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Errorf("writing heap profile: %v", err)
		return
	}
	defer func() { _ = f.Close() }()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Errorf("writing heap profile: %v", err)
		return
	}
	t.Logf("heap profile written to %s", path)
}

// waitForBudgets waits until the budgets' expectedPods and currentHealthy
// each sum to numPods: the caches are synced and every budget computed.
func waitForBudgets(ctx context.Context, c client.Client, ns string) error {
	deadline := time.Now().Add(syncTimeout)
	var expected, healthy int32
	for {
		var list policyv1alpha1.TopologyDisruptionBudgetList
		if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
			return fmt.Errorf("listing budgets: %w", err)
		}
		expected, healthy = 0, 0
		computed := 0
		for i := range list.Items {
			st := &list.Items[i].Status
			if st.ExpectedPods > 0 {
				computed++
			}
			expected += st.ExpectedPods
			healthy += st.CurrentHealthy
		}
		if computed == len(apps) && expected == numPods && healthy == numPods {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("budgets show %d expected and %d healthy pods after %s, want %d", expected, healthy, syncTimeout, numPods)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// resetStatuses clears the budgets' statuses so the next manager's figures
// are its own.
func resetStatuses(ctx context.Context, t *testing.T, c client.Client, ns string) {
	t.Helper()
	var list policyv1alpha1.TopologyDisruptionBudgetList
	if err := c.List(ctx, &list, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		b := &list.Items[i]
		b.Status = policyv1alpha1.TopologyDisruptionBudgetStatus{}
		if err := c.Status().Update(ctx, b); err != nil {
			t.Fatalf("resetting the status of %s: %v", b.Name, err)
		}
	}
}

// startUntransformedManager wires the manager as framework.StartManager does
// but with a cache that keeps whole objects.
func startUntransformedManager(cfg *rest.Config) (*framework.Manager, error) {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 framework.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{},
		// The first manager registered the controller name in this process.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := (&controllers.BudgetReconciler{
		Client:        mgr.GetClient(),
		APIReader:     mgr.GetClient(),
		Recorder:      mgr.GetEventRecorder("tdb-operator"),
		Clock:         clock.RealClock{},
		RecordTimeout: recordTimeout,
	}).SetupWithManager(mgr); err != nil {
		cancel()
		return nil, err
	}
	m := &framework.Manager{Cancel: cancel, Done: make(chan error, 1)}
	go func() { m.Done <- mgr.Start(ctx) }()
	return m, nil
}

// populate creates the namespace, nodes, StatefulSets, pods and budgets. It
// returns only names, so nothing it created stays reachable.
func populate(ctx context.Context, t *testing.T, c client.Client) (string, []string) {
	t.Helper()
	ns, err := framework.Namespace(ctx, c)
	if err != nil {
		t.Fatal(err)
	}

	t0 := time.Now()
	if err := parallel(ctx, numNodes, func(i int) error { return createNode(ctx, c, i) }); err != nil {
		t.Fatalf("creating nodes: %v", err)
	}
	t.Logf("%d nodes created in %s", numNodes, time.Since(t0).Round(time.Millisecond))

	sets := make([]set, numSets)
	for s := range sets {
		app := apps[s%len(apps)]
		sets[s] = set{
			name:     fmt.Sprintf("%s-%d", app, s/len(apps)),
			app:      app,
			revision: fmt.Sprintf("%s-%d-7c9f8d6b54", app, s/len(apps)),
			replicas: int32(numPods / numSets),
		}
		if s < numPods%numSets {
			sets[s].replicas++
		}
		sts := newStatefulSet(ns, &sets[s])
		if err := c.Create(ctx, sts); err != nil {
			t.Fatalf("creating StatefulSet %s: %v", sets[s].name, err)
		}
		sets[s].uid = sts.UID
	}

	t0 = time.Now()
	var done atomic.Int64
	if err := parallel(ctx, numPods, func(i int) error {
		if err := createPod(ctx, c, ns, &sets[i%numSets], i); err != nil {
			return err
		}
		if n := done.Add(1); n%2000 == 0 {
			t.Logf("%d pods created and Ready (%.0f pods/s)", n, float64(n)/time.Since(t0).Seconds())
		}
		return nil
	}); err != nil {
		t.Fatalf("creating pods: %v", err)
	}
	t.Logf("%d pods created and Ready in %s", numPods, time.Since(t0).Round(time.Millisecond))

	var names []string
	for _, app := range apps {
		b := &policyv1alpha1.TopologyDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app},
			Spec: policyv1alpha1.TopologyDisruptionBudgetSpec{
				Selector:       policyv1alpha1.SetAsLabelSelector(map[string]string{"app": app}),
				TopologyKey:    zoneKey,
				MaxUnavailable: ptr.To(intstr.FromInt32(1)),
			},
		}
		if err := c.Create(ctx, b); err != nil {
			t.Fatalf("creating budget %s: %v", app, err)
		}
		names = append(names, app)
	}
	return ns, names
}

// parallel runs fn(0..n-1) on numWorkers goroutines and returns the first
// error.
func parallel(ctx context.Context, n int, fn func(i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idx := make(chan int)
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for range numWorkers {
		wg.Go(func() {
			for i := range idx {
				if err := fn(i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
				}
			}
		})
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case idx <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(idx)
	wg.Wait()
	return firstErr
}

// retry retries f on the errors a loaded API server may return.
func retry(f func(attempt int) error) error {
	var err error
	for attempt := range 6 {
		if err = f(attempt); err == nil {
			return nil
		}
		if !apierrors.IsTooManyRequests(err) && !apierrors.IsServerTimeout(err) &&
			!apierrors.IsTimeout(err) && !apierrors.IsInternalError(err) && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * 250 * time.Millisecond)
	}
	return err
}

// create creates obj, tolerating that a timed-out earlier attempt did.
func create(ctx context.Context, c client.Client, obj client.Object) error {
	return retry(func(attempt int) error {
		err := c.Create(ctx, obj)
		if attempt > 0 && apierrors.IsAlreadyExists(err) {
			return c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		}
		return err
	})
}

func updateStatus(ctx context.Context, c client.Client, obj client.Object) error {
	return retry(func(int) error { return c.Status().Update(ctx, obj) })
}

func nodeName(i int) string { return fmt.Sprintf("node-%04d", i) }

func nodeIP(i int) string { return fmt.Sprintf("172.20.%d.%d", i/250, i%250+2) }

// createNode creates a node with the labels and status of a cloud node.
func createNode(ctx context.Context, c client.Client, i int) error {
	name := nodeName(i)
	zone := zones[i%len(zones)]
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"kubernetes.io/hostname":           name,
				"kubernetes.io/os":                 "linux",
				"kubernetes.io/arch":               "amd64",
				"beta.kubernetes.io/os":            "linux",
				"beta.kubernetes.io/arch":          "amd64",
				"node.kubernetes.io/instance-type": "m6i.4xlarge",
				"topology.kubernetes.io/region":    "eu-west-1",
				zoneKey:                            zone,
				"node-pool":                        "general",
			},
			Annotations: map[string]string{
				"node.alpha.kubernetes.io/ttl":                           "0",
				"volumes.kubernetes.io/controller-managed-attach-detach": "true",
			},
		},
		Spec: corev1.NodeSpec{
			PodCIDR:    fmt.Sprintf("10.%d.%d.0/24", 100+i/256, i%256),
			PodCIDRs:   []string{fmt.Sprintf("10.%d.%d.0/24", 100+i/256, i%256)},
			ProviderID: fmt.Sprintf("aws:///eu-west-1%s/i-0%016x", zone[len(zone)-1:], i),
		},
	}
	if err := create(ctx, c, n); err != nil {
		return fmt.Errorf("creating node %s: %w", name, err)
	}
	now := metav1.Now()
	res := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse("16"),
		corev1.ResourceMemory:           resource.MustParse("64453Mi"),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("100Gi"),
	}
	cond := func(t corev1.NodeConditionType, s corev1.ConditionStatus, reason, msg string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: s, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	var images []corev1.ContainerImage
	for j := range 15 {
		images = append(images, corev1.ContainerImage{
			Names: []string{
				fmt.Sprintf("registry.example.com/platform/image-%02d@sha256:%064x", j, j+1),
				fmt.Sprintf("registry.example.com/platform/image-%02d:v1.%d.0", j, j),
			},
			SizeBytes: int64(20_000_000 + j*7_000_000),
		})
	}
	n.Status = corev1.NodeStatus{
		Capacity:    res,
		Allocatable: res,
		Phase:       corev1.NodeRunning,
		Conditions: []corev1.NodeCondition{
			cond(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
			cond(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
			cond(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
			cond(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady", "kubelet is posting ready status"),
		},
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: nodeIP(i)},
			{Type: corev1.NodeHostName, Address: name},
			{Type: corev1.NodeInternalDNS, Address: name + ".eu-west-1.compute.internal"},
		},
		DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		NodeInfo: corev1.NodeSystemInfo{
			MachineID: fmt.Sprintf("%032x", i), SystemUUID: fmt.Sprintf("ec2%029x", i), BootID: fmt.Sprintf("%032x", i+1<<20),
			KernelVersion: "6.1.112-124.190.amzn2023.x86_64", OSImage: "Amazon Linux 2023.6.20241010",
			ContainerRuntimeVersion: "containerd://1.7.22", KubeletVersion: "v1.37.2",
			OperatingSystem: "linux", Architecture: "amd64",
		},
		Images: images,
	}
	if err := updateStatus(ctx, c, n); err != nil {
		return fmt.Errorf("updating the status of node %s: %w", name, err)
	}
	return nil
}

func setLabels(s *set) map[string]string {
	return map[string]string{
		"app":                          s.app,
		"app.kubernetes.io/name":       s.app,
		"app.kubernetes.io/instance":   s.name,
		"app.kubernetes.io/part-of":    "observability",
		"app.kubernetes.io/managed-by": "helm",
	}
}

func newStatefulSet(ns string, s *set) *appsv1.StatefulSet {
	sel := map[string]string{"app": s.app, "app.kubernetes.io/instance": s.name}
	tmpl := podTemplate(s, "template", 0)
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s.name, Labels: setLabels(s)},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &s.replicas,
			ServiceName:         s.name + "-headless",
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Selector:            &metav1.LabelSelector{MatchLabels: sel},
			Template:            corev1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					StorageClassName: ptr.To("gp3"),
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("50Gi")}},
				},
			}},
		},
	}
}

// podTemplate is the pod of StatefulSet s with the given ordinal, as the
// StatefulSet controller would create it (name, labels, owner and node are
// set by createPod).
func podTemplate(s *set, name string, ordinal int) *corev1.Pod {
	labels := setLabels(s)
	labels["controller-revision-hash"] = s.revision
	labels["statefulset.kubernetes.io/pod-name"] = name
	labels["apps.kubernetes.io/pod-index"] = strconv.Itoa(ordinal)
	fieldEnv := func(name, path string) corev1.EnvVar {
		return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: path}}}
	}
	httpProbe := func(path, port string, delay int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:        corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString(port), Scheme: corev1.URISchemeHTTP}},
			InitialDelaySeconds: delay, TimeoutSeconds: 1, PeriodSeconds: 10, SuccessThreshold: 1, FailureThreshold: 3,
		}
	}
	saVolume := "kube-api-access-" + fmt.Sprintf("%05x", ordinal)[:5]
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Labels: labels,
			Annotations: map[string]string{
				"kubectl.kubernetes.io/default-container": s.app,
				"prometheus.io/scrape":                    "true",
				"prometheus.io/port":                      "8080",
				"checksum/config":                         "3f2a1c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f",
			},
		},
		Spec: corev1.PodSpec{
			Hostname:                      name,
			Subdomain:                     s.name + "-headless",
			ServiceAccountName:            s.app,
			TerminationGracePeriodSeconds: ptr.To[int64](240),
			EnableServiceLinks:            ptr.To(false),
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](10001), RunAsGroup: ptr.To[int64](10001), FSGroup: ptr.To[int64](10001),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			Affinity: &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
					Weight: 100,
					PodAffinityTerm: corev1.PodAffinityTerm{
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/instance": s.name}},
						TopologyKey:   "kubernetes.io/hostname",
					},
				}},
			}},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			},
			Containers: []corev1.Container{
				{
					Name:  s.app,
					Image: "registry.example.com/observability/" + s.app + ":v2.14.3",
					Args: []string{
						"-target=" + s.app, "-config.file=/etc/" + s.app + "/config.yaml",
						"-runtime-config.file=/etc/" + s.app + "/runtime.yaml", "-log.level=info",
						"-server.grpc-max-recv-msg-size-bytes=104857600", "-memberlist.join=dns+gossip-ring.observability.svc:7946",
					},
					Ports: []corev1.ContainerPort{
						{Name: "http-metrics", ContainerPort: 8080, Protocol: corev1.ProtocolTCP},
						{Name: "grpc", ContainerPort: 9095, Protocol: corev1.ProtocolTCP},
						{Name: "gossip-ring", ContainerPort: 7946, Protocol: corev1.ProtocolTCP},
					},
					Env: []corev1.EnvVar{
						fieldEnv("POD_NAME", "metadata.name"),
						fieldEnv("POD_NAMESPACE", "metadata.namespace"),
						fieldEnv("POD_IP", "status.podIP"),
						fieldEnv("NODE_NAME", "spec.nodeName"),
						{Name: "GOMAXPROCS", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.cpu", Divisor: resource.MustParse("1")}}},
						{Name: "GOMEMLIMIT", Value: "3865470566"},
						{Name: "JAEGER_AGENT_HOST", Value: "jaeger-agent.tracing.svc.cluster.local"},
						{Name: "JAEGER_SAMPLER_TYPE", Value: "ratelimiting"},
					},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("2Gi")},
						Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("4Gi")},
					},
					LivenessProbe:  httpProbe("/healthz", "http-metrics", 60),
					ReadinessProbe: httpProbe("/ready", "http-metrics", 15),
					VolumeMounts: []corev1.VolumeMount{
						{Name: "config", MountPath: "/etc/" + s.app, ReadOnly: true},
						{Name: "data", MountPath: "/data"},
						{Name: saVolume, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
					},
					SecurityContext: &corev1.SecurityContext{
						AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
						Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					},
					TerminationMessagePath:   corev1.TerminationMessagePathDefault,
					TerminationMessagePolicy: corev1.TerminationMessageReadFile,
					ImagePullPolicy:          corev1.PullIfNotPresent,
				},
				{
					Name:  "config-reloader",
					Image: "registry.example.com/platform/config-reloader:v0.9.1",
					Args:  []string{"--watch-dir=/etc/" + s.app, "--webhook-url=http://127.0.0.1:8080/-/reload", "--listen-address=:9533"},
					Ports: []corev1.ContainerPort{{Name: "reloader-web", ContainerPort: 9533, Protocol: corev1.ProtocolTCP}},
					Env:   []corev1.EnvVar{fieldEnv("POD_NAME", "metadata.name"), {Name: "LOG_FORMAT", Value: "json"}},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
						Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
					},
					LivenessProbe: &corev1.Probe{
						ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("reloader-web")}},
						PeriodSeconds: 30, TimeoutSeconds: 1, SuccessThreshold: 1, FailureThreshold: 3,
					},
					ReadinessProbe: httpProbe("/healthz", "reloader-web", 5),
					VolumeMounts: []corev1.VolumeMount{
						{Name: "config", MountPath: "/etc/" + s.app, ReadOnly: true},
						{Name: saVolume, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true},
					},
					TerminationMessagePath:   corev1.TerminationMessagePathDefault,
					TerminationMessagePolicy: corev1.TerminationMessageReadFile,
					ImagePullPolicy:          corev1.PullIfNotPresent,
				},
			},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: s.name + "-config"}, DefaultMode: ptr.To[int32](0o644),
				}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-" + name}}},
				{Name: saVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					DefaultMode: ptr.To[int32](0o644),
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
						{ConfigMap: &corev1.ConfigMapProjection{
							LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
							Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
						}},
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{
							Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"},
						}}}},
					},
				}}},
			},
		},
	}
}

// createPod creates pod i of StatefulSet s on node i%numNodes and sets it
// Running and Ready with the status a kubelet reports.
func createPod(ctx context.Context, c client.Client, ns string, s *set, i int) error {
	ordinal := i / numSets
	name := fmt.Sprintf("%s-%d", s.name, ordinal)
	node := i % numNodes
	p := podTemplate(s, name, ordinal)
	p.Namespace, p.Name = ns, name
	p.Spec.NodeName = nodeName(node)
	p.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: "apps/v1", Kind: "StatefulSet", Name: s.name, UID: s.uid,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
	}}
	if err := create(ctx, c, p); err != nil {
		return fmt.Errorf("creating pod %s: %w", name, err)
	}

	now := metav1.Now()
	podIP := fmt.Sprintf("10.%d.%d.%d", 100+node/256, node%256, 2+ordinal%250)
	cond := func(t corev1.PodConditionType) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now}
	}
	cs := func(ctr *corev1.Container, n int) corev1.ContainerStatus {
		return corev1.ContainerStatus{
			Name: ctr.Name, Image: ctr.Image,
			ImageID:     fmt.Sprintf("%s@sha256:%064x", ctr.Image, n+7),
			ContainerID: fmt.Sprintf("containerd://%064x", i<<4|n),
			Ready:       true, Started: ptr.To(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		}
	}
	p.Status = corev1.PodStatus{
		Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{
			cond("PodReadyToStartContainers"), cond(corev1.PodInitialized), cond(corev1.PodReady),
			cond(corev1.ContainersReady), cond(corev1.PodScheduled),
		},
		HostIP:            nodeIP(node),
		HostIPs:           []corev1.HostIP{{IP: nodeIP(node)}},
		PodIP:             podIP,
		PodIPs:            []corev1.PodIP{{IP: podIP}},
		StartTime:         &now,
		QOSClass:          corev1.PodQOSBurstable,
		ContainerStatuses: []corev1.ContainerStatus{cs(&p.Spec.Containers[0], 0), cs(&p.Spec.Containers[1], 1)},
	}
	if err := updateStatus(ctx, c, p); err != nil {
		return fmt.Errorf("setting pod %s Ready: %w", name, err)
	}
	return nil
}
