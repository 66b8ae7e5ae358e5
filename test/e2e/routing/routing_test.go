//go:build e2e

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

// Package routing_test shows on a local cluster what a per-zone budget means
// for topology-aware routing: a Service with trafficDistribution: PreferClose
// routes in-zone only while each zone has ready endpoints, and while every
// node is drained at once, a TopologyDisruptionBudget with a per-zone
// minAvailable: 2 keeps every zone's ready endpoints (in the EndpointSlices
// the real endpoint-slice controller of kube-controller-manager publishes) at
// 2 or more, while a single policy/v1 PodDisruptionBudget over the same pods,
// allowing as many evictions at once, lets a zone drop to 0.
// `make test-e2e-routing`.
package routing_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

const (
	clusterName = "tdb-routing"
	// app names the Deployment, its pods' app label, the Service and the
	// budget of each case.
	app = "web"
	// perZone pods of app run in each zone.
	perZone = 3
)

var (
	keep            = flag.Bool("keep", false, "Keep the cluster at the end instead of tearing it down.")
	operatorOptions = kwokenv.OperatorOptions{WebhookPort: 20043, MetricsPort: 18880, ProbePort: 18881}
)

// routingCase is one budget over the same workload, Service and drains.
type routingCase struct {
	// name prefixes the case's nodes, is its pool label value and, after
	// "routing-", its namespace.
	name string
	// budget describes the budget in the table.
	budget string
	// create returns the budget object for the namespace.
	create func(ns string) client.Object
	// check judges each zone's fewest ready endpoints.
	check func(t *testing.T, fewest map[string]int)
}

// caseResult is what a case measured.
type caseResult struct {
	budget string
	// fewest is each zone's fewest ready endpoints in any published state.
	fewest map[string]int
	// states counts the published states seen (the initial list and every
	// watch event).
	states   int
	drained  int
	drainDur time.Duration
	refusals int
}

func TestInZoneEndpointsDuringConcurrentDrains(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	// No node at first: each case adds its own, with its own prefix.
	b, err := kwokenv.StartBench(clusterName, "routing-e2e-", "in-zone endpoints under concurrent drains",
		[]string{"ZONES=3", "NODES_PER_ZONE=0", "POD_READY_DELAY=1s"}, operatorOptions)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { b.Close(*keep) }()
	cfg, err := clientcmd.BuildConfigFromFlags("", b.Cluster.Kubeconfig)
	fixture.Must(t, err)
	cs := kubernetes.NewForConfigOrDie(cfg)

	cases := []routingCase{
		{
			name:   "tdb",
			budget: "TDB, per zone minAvailable: 2",
			create: func(ns string) client.Object {
				return builders.Budget(app).Namespace(ns).MatchLabels(map[string]string{"app": app}).
					TopologyKey(kwokenv.ZoneKey).MinAvailable(intstr.FromInt32(2)).Obj()
			},
			check: func(t *testing.T, fewest map[string]int) {
				for _, z := range fixture.Zones {
					if fewest[z] < 2 {
						t.Errorf("%s had %d ready endpoints at its lowest; the budget keeps 2", z, fewest[z])
					}
				}
			},
		},
		{
			// The same number of evictions at once as the TDB allows (1
			// per zone), without saying where.
			name:   "pdb",
			budget: "PDB (policy/v1), maxUnavailable: 3 of 9",
			create: func(ns string) client.Object {
				return &policyv1.PodDisruptionBudget{
					ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app},
					Spec: policyv1.PodDisruptionBudgetSpec{
						Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
						MaxUnavailable: ptr.To(intstr.FromInt32(3)),
					},
				}
			},
			check: func(t *testing.T, fewest map[string]int) {
				for _, z := range fixture.Zones {
					if fewest[z] == 0 {
						t.Logf("%s had no ready endpoint: in-zone routing there fell back to the other zones", z)
						return
					}
				}
				t.Errorf("no zone lost all its ready endpoints (fewest %s): the comparison shows nothing", kwokenv.ZoneList(fewest))
			},
		},
	}
	var results []caseResult
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runCase(ctx, t, b, cs, c)
			results = append(results, r)
			for _, z := range fixture.Zones {
				if r.fewest[z] >= perZone {
					t.Errorf("%s never lost a ready endpoint: the drains did not move its pods, or the watch saw nothing", z)
				}
			}
			if r.drained != len(fixture.Zones) {
				t.Errorf("%d of %d kubectl drain processes succeeded", r.drained, len(fixture.Zones))
			}
			c.check(t, r.fewest)
		})
	}
	printTable(results)
}

// runCase builds the case's workload, Service and budget on 1 fresh node per
// zone, drains the 3 nodes concurrently (one kubectl drain each) while 2 new
// nodes per zone are added, and reports each zone's fewest ready endpoints
// over the run.
func runCase(ctx context.Context, t *testing.T, b *kwokenv.Bench, cs kubernetes.Interface, c routingCase) caseResult {
	k8s := b.Client
	ns := "routing-" + c.name
	fixture.Must(t, k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	if !*keep {
		// hack/cluster gives nodes their pod CIDR by zone and number, so the
		// next case's nodes get this case's: its pods and nodes go first.
		t.Cleanup(func() { removeCase(t, k8s, ns, c.name) })
	}
	// Pods are refused until the namespace's default ServiceAccount exists.
	waitFor(ctx, t, "the default ServiceAccount of "+ns, time.Minute, func() (bool, string) {
		err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, fmt.Sprint(err)
	})

	// One node per zone: each zone's 3 pods on one node, so that draining it
	// asks for all of them at once.
	orig, err := fixture.AddPoolNodes(ctx, b.Cluster, c.name, 1)
	fixture.Must(t, err)
	pods := kwokenv.Pods{Namespace: ns, App: app, NodeLabel: [2]string{fixture.PoolLabel, c.name}, ZoneSpread: corev1.DoNotSchedule}
	fixture.Must(t, k8s.Create(ctx, service(ns)))
	fixture.Must(t, k8s.Create(ctx, kwokenv.RollingDeployment(pods, app, perZone*int32(len(fixture.Zones)), 1, 0)))
	budget := c.create(ns)
	fixture.Must(t, k8s.Create(ctx, budget))

	waitPodsPlaced(ctx, t, k8s, ns, orig)
	waitEndpoints(ctx, t, k8s, cs, ns, true)
	waitBudget(ctx, t, k8s, budget)

	// Every state the endpoint-slice controller publishes, from now on.
	ew, err := watchEndpoints(ctx, cs, ns, app)
	fixture.Must(t, err)
	defer ew.stop()
	// The pods themselves, for comparison: the project's independent watcher.
	pw := &kwokenv.Watcher{Client: k8s, NS: ns, Selector: labels.SelectorFromSet(labels.Set{"app": app}), Expected: fixture.FixedExpected(perZone)}
	ps := kwokenv.StartSampler(pw.Unavailable, 100*time.Millisecond, nil)
	defer ps.Stop()

	start := time.Now()
	ch := make(chan drainResult, len(fixture.Zones))
	// zone-a's drain starts first, and the others once it has had an answer
	// (evicted, or refused and to be retried) for each of its 3 pods, which
	// it asks for in parallel: the PDB's allowance of 3 then goes to zone-a's
	// 3 pods, as it would to whichever drain asked first. Started together,
	// the 9 requests race for the 3 evictions, and whether one zone gets all
	// of them is a matter of timing (1 run in 3 here; the others left each
	// zone at least 1). The TDB case is drained the same way.
	answered := make(chan struct{})
	answers := 0
	onLine := func(line string) {
		if (strings.HasPrefix(line, "pod/") && strings.HasSuffix(line, " evicted")) || strings.Contains(line, "will retry after") {
			if answers++; answers == perZone {
				close(answered)
			}
		}
	}
	go func() { ch <- drain(ctx, b.Cluster, orig["zone-a"][0], start, onLine) }()
	select {
	case <-answered:
	case <-time.After(time.Minute):
		t.Fatalf("kubectl drain %s had no answer for its %d pods within a minute", orig["zone-a"][0], perZone)
	}
	t.Logf("t+%.1fs zone-a's drain has an answer for each of its pods; draining zone-b and zone-c", time.Since(start).Seconds())
	for _, z := range fixture.Zones[1:] {
		go func() { ch <- drain(ctx, b.Cluster, orig[z][0], start, nil) }()
	}
	// The replacements can only schedule (in their own zone, by the zone
	// spread) once new nodes come.
	time.Sleep(3 * time.Second)
	t.Logf("t+%.1fs adding 2 nodes per zone", time.Since(start).Seconds())
	_, err = fixture.AddPoolNodes(ctx, b.Cluster, c.name, 2)
	fixture.Must(t, err)
	t.Logf("t+%.1fs the new nodes are Ready", time.Since(start).Seconds())

	r := caseResult{budget: c.budget}
	for range fixture.Zones {
		select {
		case d := <-ch:
			t.Log(d)
			if d.err == nil {
				r.drained++
			}
			r.refusals += d.refusals()
		case <-time.After(4 * time.Minute):
			t.Fatalf("a kubectl drain did not end within 4 minutes")
		}
	}
	r.drainDur = time.Since(start)
	if r.drained == len(fixture.Zones) {
		// Back to 3 ready endpoints per zone, all on the new nodes.
		var drained []string
		for _, z := range fixture.Zones {
			drained = append(drained, orig[z]...)
		}
		waitPodsOff(ctx, t, k8s, ns, drained)
		waitEndpoints(ctx, t, k8s, cs, ns, false)
	}

	rep := ew.stop()
	prep := ps.Stop()
	r.fewest, r.states = rep.fewest, rep.states
	t.Logf("ready endpoints per zone, every published state (%d states):\n%s", rep.states, rep.timeline)
	t.Logf("pods (kwokenv.Watcher, every 100 ms): %s", prep)
	if rep.err != nil {
		t.Errorf("watching the EndpointSlices: %v", rep.err)
	}
	if len(rep.problems) > 0 {
		t.Errorf("ready endpoints published without an address, a zone or a hint for their own zone:\n  %s", strings.Join(rep.problems, "\n  "))
	}
	// The endpoints follow the pods, a moment later; a dip shorter than the
	// controller's sync can show in one and not the other, so this is shown,
	// not asserted.
	podsFewest := map[string]int{}
	for z, n := range prep.MaxZone {
		podsFewest[z] = perZone - n
	}
	t.Logf("fewest per zone: ready endpoints %s, Ready pods %s", kwokenv.ZoneList(r.fewest), kwokenv.ZoneList(podsFewest))
	return r
}

// removeCase deletes the case's namespace, waits until it is gone (and
// its pods with it), then deletes the case's nodes.
func removeCase(t *testing.T, k8s client.Client, ns, pool string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting namespace %s: %v", ns, err)
		return
	}
	waitFor(ctx, t, "namespace "+ns+" to be gone", 2*time.Minute, func() (bool, string) {
		err := k8s.Get(ctx, client.ObjectKey{Name: ns}, &corev1.Namespace{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	var nodes corev1.NodeList
	if err := k8s.List(ctx, &nodes, client.MatchingLabels{fixture.PoolLabel: pool}); err != nil {
		t.Errorf("listing the nodes of %s: %v", pool, err)
		return
	}
	for i := range nodes.Items {
		if err := k8s.Delete(ctx, &nodes.Items[i]); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting node %s: %v", nodes.Items[i].Name, err)
		}
	}
}

// service is app's Service, routed in-zone.
func service(ns string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: app},
		Spec: corev1.ServiceSpec{
			Selector:            map[string]string{"app": app},
			Ports:               []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}},
			TrafficDistribution: ptr.To(corev1.ServiceTrafficDistributionPreferClose),
		},
	}
}

// waitPodsPlaced waits until app's pods are all Ready with an IP, each zone's
// on that zone's one node.
func waitPodsPlaced(ctx context.Context, t *testing.T, k8s client.Client, ns string, nodes map[string][]string) {
	t.Helper()
	waitFor(ctx, t, "9 Ready pods with an IP, 3 on each zone's node", 2*time.Minute, func() (bool, string) {
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
			return false, err.Error()
		}
		onNode := map[string]int{}
		ready := 0
		for _, p := range pods.Items {
			if kwokenv.PodReady(&p) && p.Status.PodIP != "" {
				ready++
				onNode[p.Spec.NodeName]++
			}
		}
		ok := len(pods.Items) == perZone*len(fixture.Zones) && ready == len(pods.Items)
		for _, z := range fixture.Zones {
			ok = ok && onNode[nodes[z][0]] == perZone
		}
		return ok, fmt.Sprintf("%d pods, %d Ready with an IP, per node %v", len(pods.Items), ready, onNode)
	})
}

// waitPodsOff waits until app has its 9 pods Ready again, none on the given
// nodes.
func waitPodsOff(ctx context.Context, t *testing.T, k8s client.Client, ns string, avoid []string) {
	t.Helper()
	waitFor(ctx, t, "9 Ready pods off the drained nodes", 2*time.Minute, func() (bool, string) {
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
			return false, err.Error()
		}
		ready := 0
		for _, p := range pods.Items {
			for _, n := range avoid {
				if p.Spec.NodeName == n {
					return false, fmt.Sprintf("pod %s is still on %s", p.Name, n)
				}
			}
			if kwokenv.PodReady(&p) {
				ready++
			}
		}
		return len(pods.Items) == perZone*len(fixture.Zones) && ready == len(pods.Items), fmt.Sprintf("%d pods, %d Ready", len(pods.Items), ready)
	})
}

// waitEndpoints waits until the Service's EndpointSlices hold exactly the
// pods' IPs, 3 ready endpoints per zone, each with its zone and a hint for
// its own zone; with show, it logs them.
func waitEndpoints(ctx context.Context, t *testing.T, k8s client.Client, cs kubernetes.Interface, ns string, show bool) {
	t.Helper()
	var slices []discoveryv1.EndpointSlice
	waitFor(ctx, t, "3 ready endpoints per zone with their zone and hints, one per pod IP", 2*time.Minute, func() (bool, string) {
		list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + app})
		if err != nil {
			return false, err.Error()
		}
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
			return false, err.Error()
		}
		slices = list.Items
		ready, problems := readyPerZone(slices)
		var podIPs, addrs []string
		for _, p := range pods.Items {
			podIPs = append(podIPs, p.Status.PodIP)
		}
		for _, s := range slices {
			for _, e := range s.Endpoints {
				addrs = append(addrs, e.Addresses...)
			}
		}
		sort.Strings(podIPs)
		sort.Strings(addrs)
		ok := len(problems) == 0 && strings.Join(podIPs, ",") == strings.Join(addrs, ",")
		for _, z := range fixture.Zones {
			ok = ok && ready[z] == perZone
		}
		return ok, fmt.Sprintf("ready %s, addresses %v, pod IPs %v, problems %v", kwokenv.ZoneList(ready), addrs, podIPs, problems)
	})
	if !show {
		return
	}
	for _, s := range slices {
		var b strings.Builder
		fmt.Fprintf(&b, "EndpointSlice %s (%s):", s.Name, s.AddressType)
		for _, e := range s.Endpoints {
			fmt.Fprintf(&b, "\n  %-12s ready=%t zone=%s node=%s hints.forZones=%v", strings.Join(e.Addresses, ","),
				ptr.Deref(e.Conditions.Ready, true), ptr.Deref(e.Zone, ""), ptr.Deref(e.NodeName, ""), hintZones(e))
		}
		t.Log(b.String())
	}
}

// waitBudget waits until the budget's status is current and allows 3
// evictions: 1 per zone for the TDB, 3 anywhere for the PDB.
func waitBudget(ctx context.Context, t *testing.T, k8s client.Client, obj client.Object) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	waitFor(ctx, t, "the budget to expect 9, count 9 healthy and allow 3", time.Minute, func() (bool, string) {
		switch obj.(type) {
		case *policyv1alpha1.TopologyDisruptionBudget:
			var tdb policyv1alpha1.TopologyDisruptionBudget
			if err := k8s.Get(ctx, key, &tdb); err != nil {
				return false, err.Error()
			}
			st := tdb.Status
			return st.ObservedGeneration == tdb.Generation && st.ExpectedPods == 9 && st.CurrentHealthy == 9 &&
					st.DisruptionsAllowed == 3 && st.DomainCount == 3,
				fmt.Sprintf("%+v", st)
		default:
			var pdb policyv1.PodDisruptionBudget
			if err := k8s.Get(ctx, key, &pdb); err != nil {
				return false, err.Error()
			}
			st := pdb.Status
			return st.ObservedGeneration == pdb.Generation && st.ExpectedPods == 9 && st.CurrentHealthy == 9 && st.DisruptionsAllowed == 3,
				fmt.Sprintf("%+v", st)
		}
	})
}

func hintZones(e discoveryv1.Endpoint) []string {
	if e.Hints == nil {
		return nil
	}
	var out []string
	for _, z := range e.Hints.ForZones {
		out = append(out, z.Name)
	}
	return out
}

// readyPerZone counts each zone's ready endpoints (every zone present, 0 if
// none), as kube-proxy does: Ready unset counts as ready. problems lists the
// ready endpoints in-zone routing could not use: without an address, a zone,
// or a hint for exactly their own zone.
func readyPerZone(slices []discoveryv1.EndpointSlice) (map[string]int, []string) {
	ready := map[string]int{}
	for _, z := range fixture.Zones {
		ready[z] = 0
	}
	var problems []string
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if !ptr.Deref(e.Conditions.Ready, true) {
				continue
			}
			zone := ptr.Deref(e.Zone, "")
			if hz := hintZones(e); len(e.Addresses) == 0 || zone == "" || len(hz) != 1 || hz[0] != zone {
				problems = append(problems, fmt.Sprintf("%s: addresses %v zone %q hints %v", s.Name, e.Addresses, zone, hz))
			}
			ready[zone]++
		}
	}
	return ready, problems
}

// ---------------------------------------------------------------------------
// the EndpointSlice watch

// endpointWatch follows a Service's EndpointSlices with a watch, so that it
// sees every state the endpoint-slice controller publishes (a poll could
// miss a short one), and keeps each zone's fewest ready endpoints.
type endpointWatch struct {
	start  time.Time
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once

	mu       sync.Mutex
	slices   map[string]discoveryv1.EndpointSlice
	rep      endpointReport
	timeline strings.Builder
	last     string
}

// endpointReport is what an endpointWatch saw.
type endpointReport struct {
	fewest   map[string]int
	states   int
	problems []string
	timeline string
	err      error
}

// watchEndpoints lists the Service's EndpointSlices and watches them from
// the list's resourceVersion on.
func watchEndpoints(ctx context.Context, cs kubernetes.Interface, ns, svc string) (*endpointWatch, error) {
	sel := discoveryv1.LabelServiceName + "=" + svc
	list, err := cs.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, fmt.Errorf("listing the EndpointSlices of %s/%s: %w", ns, svc, err)
	}
	wctx, cancel := context.WithCancel(ctx)
	rw, err := watchtools.NewRetryWatcherWithContext(wctx, list.ResourceVersion, &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = sel
			return cs.DiscoveryV1().EndpointSlices(ns).Watch(ctx, o)
		},
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watching the EndpointSlices of %s/%s: %w", ns, svc, err)
	}
	w := &endpointWatch{start: time.Now(), cancel: cancel, done: make(chan struct{}),
		slices: map[string]discoveryv1.EndpointSlice{}, rep: endpointReport{fewest: map[string]int{}}}
	for _, s := range list.Items {
		w.slices[s.Name] = s
	}
	w.observe()
	go w.run(wctx, rw)
	return w, nil
}

func (w *endpointWatch) run(ctx context.Context, rw *watchtools.RetryWatcher) {
	defer close(w.done)
	defer rw.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-rw.ResultChan():
			if !ok {
				return
			}
			w.mu.Lock()
			switch ev.Type {
			case watch.Added, watch.Modified, watch.Deleted:
				s, isSlice := ev.Object.(*discoveryv1.EndpointSlice)
				if !isSlice {
					break
				}
				if ev.Type == watch.Deleted {
					delete(w.slices, s.Name)
				} else {
					w.slices[s.Name] = *s
				}
				w.observeLocked()
			case watch.Error:
				if w.rep.err == nil {
					w.rep.err = apierrors.FromObject(ev.Object)
				}
			}
			w.mu.Unlock()
		}
	}
}

func (w *endpointWatch) observe() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observeLocked()
}

// observeLocked records the current state of the slices.
func (w *endpointWatch) observeLocked() {
	slices := make([]discoveryv1.EndpointSlice, 0, len(w.slices))
	for _, s := range w.slices {
		slices = append(slices, s)
	}
	ready, problems := readyPerZone(slices)
	at := time.Since(w.start)
	w.rep.states++
	for z, n := range ready {
		if prev, ok := w.rep.fewest[z]; !ok || n < prev {
			w.rep.fewest[z] = n
		}
	}
	for _, p := range problems {
		if len(w.rep.problems) < 10 {
			w.rep.problems = append(w.rep.problems, fmt.Sprintf("t+%.2fs %s", at.Seconds(), p))
		}
	}
	if line := kwokenv.ZoneList(ready); line != w.last {
		fmt.Fprintf(&w.timeline, "  %6.2fs  %s\n", at.Seconds(), line)
		w.last = line
	}
}

// stop ends the watch (once) and returns what it saw.
func (w *endpointWatch) stop() endpointReport {
	w.once.Do(func() {
		w.cancel()
		<-w.done
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	rep := w.rep
	rep.fewest = map[string]int{}
	for z, n := range w.rep.fewest {
		rep.fewest[z] = n
	}
	rep.problems = append([]string(nil), w.rep.problems...)
	rep.timeline = w.timeline.String()
	return rep
}

// ---------------------------------------------------------------------------
// kubectl drain

type drainResult struct {
	node           string
	output         string
	err            error
	started, ended time.Duration
}

// refusals counts the evictions kubectl drain was refused with 429 and
// retried (it retries nothing else).
func (r drainResult) refusals() int { return strings.Count(r.output, "will retry after") }

func (r drainResult) String() string {
	status := "ok"
	if r.err != nil {
		status = r.err.Error()
	}
	out := strings.TrimRight(r.output, "\n")
	return fmt.Sprintf("kubectl drain %s (t+%.1fs to t+%.1fs): %s, %d refusal(s) retried\n    | %s", r.node,
		r.started.Seconds(), r.ended.Seconds(), status, r.refusals(), strings.ReplaceAll(out, "\n", "\n    | "))
}

// drain runs the real `kubectl drain NODE`, which cordons the node, evicts
// its pods in parallel and retries every refused eviction every 5 s.
// onLine, when set, sees each line of its output as it comes.
func drain(ctx context.Context, c *kwokenv.Cluster, node string, since time.Time, onLine func(string)) drainResult {
	r := drainResult{node: node, started: time.Since(since)}
	cmd := c.Kubectl(ctx, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=3m")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var out strings.Builder
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if onLine != nil {
				onLine(sc.Text())
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	r.err = cmd.Run()
	_ = pw.Close()
	<-read
	r.output, r.ended = out.String(), time.Since(since)
	return r
}

// ---------------------------------------------------------------------------

// printTable prints each case's fewest ready endpoints per zone.
func printTable(results []caseResult) {
	if len(results) == 0 {
		return
	}
	fmt.Printf("\nready endpoints per zone in the EndpointSlices of Service %s (trafficDistribution: PreferClose), fewest in any\n"+
		"state the endpoint-slice controller published while the 3 nodes (3 pods each) were drained at once; %d per zone before\n\n", app, perZone)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	_, _ = fmt.Fprintf(tw, "budget\t%s\tstates seen\tkubectl drains\t\n", strings.Join(fixture.Zones, "\t"))
	for _, r := range results {
		row := []string{r.budget}
		for _, z := range fixture.Zones {
			row = append(row, fmt.Sprint(r.fewest[z]))
		}
		row = append(row, fmt.Sprint(r.states),
			fmt.Sprintf("%d/%d done in %.0fs, %d refusals retried", r.drained, len(fixture.Zones), r.drainDur.Seconds(), r.refusals))
		_, _ = fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	_ = tw.Flush()
	fmt.Println()
}

// waitFor polls cond every 200 ms until it holds, failing the test after
// timeout with cond's last description of the state.
func waitFor(ctx context.Context, t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("waiting for %s: not within %s; last: %s", what, timeout, state)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
