//go:build perf && integration

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

package perf_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/evictionwebhook"
	"github.com/tdb-operator/tdb-operator/test/integration/framework"
)

const (
	// evSamples are the measured samples of each case, after evWarmups.
	evSamples = 200
	evWarmups = 5
	// evPoolPerZone pods per zone back each allowed case: every allowed
	// eviction's pod is replaced (as its StatefulSet would) before the next
	// sample, so the pool never runs dry and the budgets stay at rest.
	evPoolPerZone = 4
	// evRefusePerZone pods per zone back each refused case (never evicted).
	evRefusePerZone = 8
	// evPDBAllowance is the PDB status allowance of the allowed cases; it is
	// reset after every eviction, as the disruption controller would.
	evPDBAllowance = 1000

	evDirectRefused = 2000
	evDirectWarmups = 50
	evTwoTDBSamples = 20

	evStormClients  = 64
	evStormDuration = 5 * time.Second
	evDrainStorms   = 5
	evDrainPerZone  = 22
	// evDrainPDBAllowance is what the PDB of the PDB-only drain storms
	// allows: as much as the TDB's 25% of 22 pods in each of 3 zones.
	evDrainPDBAllowance = 18

	evApp           = "ingester"
	evRecordTimeout = 2 * time.Minute
	evSettleTimeout = 30 * time.Second

	evTargetRatioP50  = 1.3
	evTargetHandleP99 = 5 * time.Millisecond
	evTargetStormP99  = 100 * time.Millisecond
)

var evZones = []string{"zone-a", "zone-b", "zone-c"}

// TestEvictionLatency is a measured run of the eviction webhook on one
// envtest API server (the real kube-apiserver calls the webhook over TLS),
// with the status controller running beside the webhook as in a two-replica
// install:
//
//  1. the latency of client-go Evict calls, allowed and refused, with only a
//     policy/v1 PodDisruptionBudget (a), only a TopologyDisruptionBudget (b)
//     and both (c), all cases interleaved in a random order, in two regimes
//     of the API server (quiet and busy, see evCase.busy);
//  2. the latency of EvictionHandler.Handle called directly;
//  3. the API requests the webhook manager makes per eviction, counted by a
//     RoundTripper wrapped around its own copy of the rest.Config: these
//     counts are exact behaviour and are asserted;
//  4. refusal storms (64 clients for 5 s) and drain storms (64 simultaneous
//     evictions), PDB only beside TDB only.
//
// Latencies are printed with a PASS/MISS marker against their targets, never
// asserted: the machine is shared. Run with
//
//	KUBEBUILDER_ASSETS=$PWD/bin/k8s/v1.37.2 go test -tags perf,integration \
//		-count=1 -timeout 20m -v ./test/perf/ -run TestEvictionLatency
func TestEvictionLatency(t *testing.T) {
	logf.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	began := time.Now()
	ctx := context.Background()

	env, cfg, err := framework.StartAPIServerWithWebhook()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stopping envtest: %v", err)
		}
	})

	// The test's own clients: rate limits out of the way.
	loadCfg := rest.CopyConfig(cfg)
	loadCfg.QPS, loadCfg.Burst = 5000, 10000
	c, err := client.New(loadCfg, client.Options{Scheme: framework.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(loadCfg)
	if err != nil {
		t.Fatal(err)
	}

	// The webhook manager (no controller) on its own copy of the config,
	// every request it makes counted. QPS -1 disables client-side rate
	// limiting, as ctrl.GetConfig does for the manager binary.
	counter := &evCounter{}
	whCfg := rest.CopyConfig(cfg)
	whCfg.QPS = -1
	whCfg.Wrap(counter.wrap)
	whMgr, err := framework.StartManagerWith(whCfg, framework.ManagerOptions{
		Clock: clock.RealClock{}, RecordTimeout: evRecordTimeout, NoController: true, Webhook: framework.WebhookOptions(env),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := whMgr.Stop(); err != nil {
			t.Errorf("stopping the webhook manager: %v", err)
		}
	})
	// The status controller, as the leader of a two-replica install.
	ctrlCfg := rest.CopyConfig(cfg)
	ctrlCfg.QPS = -1
	ctrlMgr, err := framework.StartManagerWith(ctrlCfg, framework.ManagerOptions{Clock: clock.RealClock{}, RecordTimeout: evRecordTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ctrlMgr.Stop(); err != nil {
			t.Errorf("stopping the controller manager: %v", err)
		}
	})

	b := &evBench{t: t, ctx: ctx, c: c, cs: cs, wh: whMgr.Handler, cnt: counter}
	b.churn = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "tdb-perf-churn"}}
	if err := c.Create(ctx, b.churn); err != nil {
		t.Fatal(err)
	}
	zone100 := evTDBSpec{name: "per-zone", key: framework.ZoneKey, maxUnavailable: intstr.FromString("100%")}
	zone0 := evTDBSpec{name: "per-zone", key: framework.ZoneKey, maxUnavailable: intstr.FromInt32(0)}
	whole100 := evTDBSpec{name: "whole", maxUnavailable: intstr.FromString("100%")}

	// The six cases, in two regimes of the API server (see evCase.busy).
	t0 := time.Now()
	var cases []*evCase
	for _, busy := range []bool{false, true} {
		for _, allowed := range []bool{true, false} {
			pdb, tdb, perZone := ptr.To[int32](0), zone0, evRefusePerZone
			if allowed {
				pdb, tdb, perZone = ptr.To[int32](evPDBAllowance), zone100, evPoolPerZone
			}
			cases = append(cases,
				b.build("(a) PDB only", "a", allowed, evSetup{pdbAllowed: pdb}, perZone),
				b.build("(b) TDB only", "b", allowed, evSetup{tdbs: []evTDBSpec{tdb}}, perZone),
				b.build("(c) PDB + TDB", "c", allowed, evSetup{pdbAllowed: pdb, tdbs: []evTDBSpec{tdb}}, perZone))
			for _, k := range cases[len(cases)-3:] {
				k.busy = busy
			}
		}
	}
	two := b.build("two TDBs (zone + whole)", "b2", true, evSetup{tdbs: []evTDBSpec{zone100, whole100}}, evPoolPerZone)
	direct := b.build("direct Handle", "d", true, evSetup{tdbs: []evTDBSpec{zone100}}, evPoolPerZone)
	t.Logf("setups built in %s", time.Since(t0).Round(time.Millisecond))

	// 1 and 3: the twelve cases interleaved, in a new random order every
	// round (fixed seed) so that no case always follows the same one.
	b.rng = rand.New(rand.NewPCG(1, 2))
	t0 = time.Now()
	for round := 0; round < evWarmups+evSamples; round++ {
		for _, i := range b.rng.Perm(len(cases)) {
			b.sample(cases[i], round >= evWarmups)
		}
		if (round+1)%50 == 0 {
			t.Logf("round %d/%d done (%s)", round+1, evWarmups+evSamples, time.Since(t0).Round(time.Millisecond))
		}
	}
	t.Logf("latency rounds took %s", time.Since(t0).Round(time.Millisecond))

	// 3: two covering budgets, one write each.
	for i := 0; i < 2+evTwoTDBSamples; i++ {
		b.sample(two, i >= 2)
	}

	// 2: the handler alone.
	bR := cases[4]
	directRefused := b.directRefused(bR)
	for i := 0; i < evWarmups+evSamples; i++ {
		b.directAllowed(direct, i >= evWarmups)
	}

	// 4: refusal storms in two passes, the second in reverse order; then
	// drain storms, PDB only and TDB only alternately.
	var storms []*evStorm
	for pass, order := range [][]int{{3, 4, 5}, {5, 4, 3}} {
		for _, i := range order {
			storms = append(storms, b.refusalStorm(cases[i], pass+1))
		}
	}
	var drains []*evDrain
	for i := 0; i < evDrainStorms; i++ {
		drains = append(drains, b.drainStorm(i, true), b.drainStorm(i, false))
	}

	b.print(cases, two, directRefused, direct, storms, drains, time.Since(began))
}

// evBench holds the clients of the run.
type evBench struct {
	t   *testing.T
	ctx context.Context
	c   client.Client
	cs  kubernetes.Interface
	wh  *evictionwebhook.EvictionHandler
	cnt *evCounter
	// churn is written before each sample of the busy regime.
	churn  *corev1.ConfigMap
	nChurn int
	rng    *rand.Rand
	// refusals counts the refusals sent, for the event write ratio.
	refusals int
}

// evTDBSpec is a budget of a setup.
type evTDBSpec struct {
	name, key      string
	maxUnavailable intstr.IntOrString
}

// evSetup says which budgets cover a case's pods.
type evSetup struct {
	// pdbAllowed, when set, creates a PDB whose status allows that many.
	pdbAllowed *int32
	tdbs       []evTDBSpec
}

// evTDBWant is a budget at rest: per domain, its healthy pods and its
// allowance (negative: any allowance above zero).
type evTDBWant struct {
	name             string
	healthy, allowed map[string]int32
}

// evPool is the pods of a case, per zone; allowed cases replace the pod they
// evict.
type evPool struct {
	ns    string
	world *framework.World
	next  int
	gen   int
}

func (p *evPool) pick() (string, int, *corev1.Pod) {
	i := p.next
	p.next++
	zone := evZones[i%len(evZones)]
	slot := (i / len(evZones)) % len(p.world.Pods[zone])
	return zone, slot, p.world.Pods[zone][slot]
}

func (p *evPool) all() []*corev1.Pod {
	var out []*corev1.Pod
	for _, z := range evZones {
		out = append(out, p.world.Pods[z]...)
	}
	return out
}

// evCase is one measured case.
type evCase struct {
	label, setup string
	allowed      bool
	// busy is the regime of the API server. The eviction handler of the API
	// server lists the pod's PDBs with a consistent read served from its
	// watch cache, which first waits until the cache has caught up with
	// etcd's latest revision; when the last write was not a PDB that takes a
	// watch progress notification, which the API server requests at most
	// every 100 ms. Before every sample the PDB cache is brought up to date
	// and the sample waits a random 0-100 ms (so that it meets that timer at
	// a random phase); in the busy regime one unrelated write (a ConfigMap)
	// then follows, as in a cluster whose revision always moves. In the
	// quiet regime the only write between is the webhook's own status
	// write, if any.
	busy       bool
	pool       *evPool
	pdb        *policyv1.PodDisruptionBudget
	pdbAllowed int32
	tdbs       []evTDBWant
	lat        []time.Duration
	counts     evAgg
	failures   int
	failure    string
}

func (k *evCase) fail(format string, args ...any) {
	k.failures++
	if k.failure == "" {
		k.failure = fmt.Sprintf(format, args...)
	}
}

func (k *evCase) kind() string {
	if k.allowed {
		return "allowed"
	}
	return "refused"
}

// build creates a namespace with a World of perZone pods per zone and the
// setup's budgets, and waits until the budgets are computed and the webhook's
// cache has caught up.
func (b *evBench) build(label, setup string, allowed bool, s evSetup, perZone int) *evCase {
	t := b.t
	t.Helper()
	ns, err := framework.Namespace(b.ctx, b.c)
	if err != nil {
		t.Fatal(err)
	}
	w, err := framework.NewWorld(b.ctx, b.c, ns, evApp, evZones, 1, perZone)
	if err != nil {
		t.Fatalf("%s: creating the pods: %v", label, err)
	}
	k := &evCase{label: label, setup: setup, allowed: allowed, pool: &evPool{ns: ns, world: w}}
	total := int32(perZone * len(evZones))
	if s.pdbAllowed != nil {
		mu := intstr.FromString("100%")
		if *s.pdbAllowed == 0 {
			mu = intstr.FromInt32(0)
		}
		k.pdb = &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: evApp},
			Spec: policyv1.PodDisruptionBudgetSpec{
				Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": evApp}},
				MaxUnavailable: &mu,
			},
		}
		if err := b.c.Create(b.ctx, k.pdb); err != nil {
			t.Fatalf("%s: creating the PDB: %v", label, err)
		}
		k.pdbAllowed = *s.pdbAllowed
		if err := b.resetPDB(k); err != nil {
			t.Fatalf("%s: %v", label, err)
		}
	}
	for _, spec := range s.tdbs {
		mu := spec.maxUnavailable
		tdb := &policyv1alpha1.TopologyDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: spec.name},
			Spec: policyv1alpha1.TopologyDisruptionBudgetSpec{
				Selector:       policyv1alpha1.SetAsLabelSelector(map[string]string{"app": evApp}),
				TopologyKey:    spec.key,
				MaxUnavailable: &mu,
			},
		}
		if err := b.c.Create(b.ctx, tdb); err != nil {
			t.Fatalf("%s: creating budget %s: %v", label, spec.name, err)
		}
		want := evTDBWant{name: spec.name, healthy: map[string]int32{}, allowed: map[string]int32{}}
		domains := map[string]int32{"all": total}
		if spec.key != "" {
			domains = map[string]int32{}
			for _, z := range evZones {
				domains[z] = int32(perZone)
			}
		}
		for d, n := range domains {
			want.healthy[d] = n
			switch mu.String() {
			case "100%":
				want.allowed[d] = n
			case "0":
				want.allowed[d] = 0
			default:
				want.allowed[d] = -1
			}
		}
		k.tdbs = append(k.tdbs, want)
	}
	if err := b.settle(ns, k.tdbs, k.pool.all()); err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	return k
}

// resetPDB writes the status the disruption controller would: computed for
// the current generation, the case's allowance, no disrupted pods.
func (b *evBench) resetPDB(k *evCase) error {
	var pdb policyv1.PodDisruptionBudget
	if err := b.c.Get(b.ctx, client.ObjectKeyFromObject(k.pdb), &pdb); err != nil {
		return fmt.Errorf("reading the PDB: %w", err)
	}
	pods := int32(len(k.pool.all()))
	desired := max(pods-k.pdbAllowed, 0)
	pdb.Status = policyv1.PodDisruptionBudgetStatus{
		ObservedGeneration: pdb.Generation,
		DisruptionsAllowed: k.pdbAllowed,
		CurrentHealthy:     pods,
		DesiredHealthy:     desired,
		ExpectedPods:       pods,
	}
	if err := b.c.Status().Update(b.ctx, &pdb); err != nil {
		return fmt.Errorf("writing the PDB status: %w", err)
	}
	return nil
}

// settle waits until the budgets are at rest (computed for their generation,
// no records, the wanted healthy pods and allowances), the webhook's cache
// holds the same budget versions as the API server and has the given pods
// Running and Ready, and the budgets' versions hold still for one more poll.
func (b *evBench) settle(ns string, tdbs []evTDBWant, pods []*corev1.Pod) error {
	deadline := time.Now().Add(evSettleTimeout)
	prevOK, prevRVs := false, ""
	for {
		rvs, why := b.atRest(ns, tdbs, pods)
		if why == "" && prevOK && rvs == prevRVs {
			return nil
		}
		prevOK, prevRVs = why == "", rvs
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s not at rest after %s: %s", ns, evSettleTimeout, why)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (b *evBench) atRest(ns string, tdbs []evTDBWant, pods []*corev1.Pod) (string, string) {
	for _, p := range pods {
		var cached corev1.Pod
		if err := b.wh.Cache.Get(b.ctx, client.ObjectKeyFromObject(p), &cached); err != nil {
			return "", fmt.Sprintf("webhook cache: pod %s: %v", p.Name, err)
		}
		if cached.UID != p.UID || cached.Status.Phase != corev1.PodRunning || !evReady(&cached) {
			return "", fmt.Sprintf("webhook cache: pod %s not the Running and Ready one yet", p.Name)
		}
	}
	var rvs []string
	for _, want := range tdbs {
		key := client.ObjectKey{Namespace: ns, Name: want.name}
		var live, cached policyv1alpha1.TopologyDisruptionBudget
		if err := b.c.Get(b.ctx, key, &live); err != nil {
			return "", fmt.Sprintf("budget %s: %v", want.name, err)
		}
		st := &live.Status
		if st.ObservedGeneration != live.Generation {
			return "", fmt.Sprintf("budget %s: observedGeneration %d < generation %d", want.name, st.ObservedGeneration, live.Generation)
		}
		if len(st.DisruptedPods) > 0 {
			return "", fmt.Sprintf("budget %s: %d records", want.name, len(st.DisruptedPods))
		}
		if len(st.Domains) != len(want.healthy) {
			return "", fmt.Sprintf("budget %s: %d domains, want %d", want.name, len(st.Domains), len(want.healthy))
		}
		for _, d := range st.Domains {
			wa := want.allowed[d.Name]
			if d.CurrentHealthy != want.healthy[d.Name] || (wa >= 0 && d.DisruptionsAllowed != wa) || (wa < 0 && d.DisruptionsAllowed < 1) {
				return "", fmt.Sprintf("budget %s: domain %s has %d healthy and %d allowed, want %d and %d",
					want.name, d.Name, d.CurrentHealthy, d.DisruptionsAllowed, want.healthy[d.Name], wa)
			}
		}
		if err := b.wh.Cache.Get(b.ctx, key, &cached); err != nil {
			return "", fmt.Sprintf("webhook cache: budget %s: %v", want.name, err)
		}
		if cached.ResourceVersion != live.ResourceVersion {
			return "", fmt.Sprintf("webhook cache: budget %s at version %s, the API server at %s", want.name, cached.ResourceVersion, live.ResourceVersion)
		}
		rvs = append(rvs, live.ResourceVersion)
	}
	return strings.Join(rvs, ","), ""
}

func evReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// replace does what the StatefulSet controller and the kubelet would after
// an eviction: the evicted pod goes, a Ready replacement is scheduled in its
// zone. Then the PDB's status is reset and the budgets settle.
func (b *evBench) replace(k *evCase, zone string, slot int) {
	t := b.t
	t.Helper()
	p := k.pool
	old := p.world.Pods[zone][slot]
	if err := b.c.Delete(b.ctx, old, client.GracePeriodSeconds(0)); client.IgnoreNotFound(err) != nil {
		t.Fatalf("%s: deleting pod %s: %v", k.label, old.Name, err)
	}
	p.gen++
	np, err := framework.Pod(b.ctx, b.c, p.ns, framework.PodSpec{
		Name: fmt.Sprintf("%s-%s-r%d", evApp, zone, p.gen), Labels: old.Labels,
		Node: old.Spec.NodeName, Owner: p.world.Sets[zone], Ready: true,
	})
	if err != nil {
		t.Fatalf("%s: creating a replacement pod: %v", k.label, err)
	}
	p.world.Pods[zone][slot] = np
	if k.pdb != nil {
		if err := b.resetPDB(k); err != nil {
			t.Fatalf("%s: %v", k.label, err)
		}
	}
	if err := b.settle(p.ns, k.tdbs, []*corev1.Pod{np}); err != nil {
		t.Fatalf("%s: %v", k.label, err)
	}
}

func (b *evBench) evict(p *corev1.Pod) error {
	return b.cs.PolicyV1().Evictions(p.Namespace).Evict(b.ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace},
	})
}

// prime sets the regime before a sample (see evCase.busy): a consistent
// list of the namespace's PDBs, which returns once the API server's PDB
// cache is up to date, a random pause when randomPhase, then in the busy
// regime one unrelated write.
func (b *evBench) prime(k *evCase, randomPhase bool) {
	t := b.t
	t.Helper()
	if err := b.c.List(b.ctx, &policyv1.PodDisruptionBudgetList{}, client.InNamespace(k.pool.ns)); err != nil {
		t.Fatalf("listing PDBs: %v", err)
	}
	if randomPhase {
		time.Sleep(time.Duration(b.rng.Int64N(int64(100 * time.Millisecond))))
	}
	if k.busy {
		b.nChurn++
		patch := fmt.Appendf(nil, `{"data":{"n":"%d"}}`, b.nChurn)
		if err := b.c.Patch(b.ctx, b.churn, client.RawPatch(types.MergePatchType, patch)); err != nil {
			t.Fatalf("writing the churn ConfigMap: %v", err)
		}
	}
}

// sample sends one eviction through the API server, counting the webhook
// manager's requests while it is in flight.
func (b *evBench) sample(k *evCase, measured bool) {
	zone, slot, pod := k.pool.pick()
	b.prime(k, true)
	b.cnt.begin()
	t0 := time.Now()
	err := b.evict(pod)
	d := time.Since(t0)
	got := b.cnt.end()
	if !k.allowed {
		b.refusals++
	}
	switch {
	case k.allowed && err != nil:
		k.fail("eviction of %s/%s should be allowed: %v", pod.Namespace, pod.Name, err)
	case !k.allowed && !apierrors.IsTooManyRequests(err):
		k.fail("eviction of %s/%s should be refused with 429: %v", pod.Namespace, pod.Name, err)
	}
	if measured {
		k.lat = append(k.lat, d)
		k.counts.add(got, k.expect(got))
	}
	if k.allowed {
		b.replace(k, zone, slot)
	}
}

// expect checks the exact request counts: one status write and no read per
// covering budget for an allowed eviction, no write for a refusal.
func (k *evCase) expect(got evTally) string {
	if k.allowed {
		if got.tdbStatusWrites != len(k.tdbs) || got.otherWrites != 0 || got.reads() != 0 {
			return fmt.Sprintf("want %d status write(s) and no other request, got %s", len(k.tdbs), got)
		}
		return ""
	}
	if got.writes() != 0 {
		return fmt.Sprintf("want no write, got %s", got)
	}
	return ""
}

// directRefused calls the handler directly for refused evictions.
func (b *evBench) directRefused(k *evCase) *evCase {
	out := &evCase{label: "direct Handle", setup: "d", pool: k.pool}
	var reqs []admission.Request
	for _, p := range k.pool.all() {
		reqs = append(reqs, evEvictionRequest(p))
	}
	for i := 0; i < evDirectWarmups+evDirectRefused; i++ {
		b.cnt.begin()
		t0 := time.Now()
		resp := b.wh.Handle(b.ctx, reqs[i%len(reqs)])
		d := time.Since(t0)
		got := b.cnt.end()
		b.refusals++
		if resp.Allowed || resp.Result == nil || resp.Result.Code != http.StatusTooManyRequests {
			out.fail("direct refusal %d: allowed=%v result=%v", i, resp.Allowed, resp.Result)
		}
		if i >= evDirectWarmups {
			out.lat = append(out.lat, d)
			out.counts.add(got, out.expect(got))
		}
	}
	return out
}

// directAllowed calls the handler directly for one allowed eviction (the
// status write included), then replaces the pod as after a real eviction.
func (b *evBench) directAllowed(k *evCase, measured bool) {
	zone, slot, pod := k.pool.pick()
	req := evEvictionRequest(pod)
	b.cnt.begin()
	t0 := time.Now()
	resp := b.wh.Handle(b.ctx, req)
	d := time.Since(t0)
	got := b.cnt.end()
	if !resp.Allowed {
		k.fail("direct eviction of %s should be allowed: %v", pod.Name, resp.Result)
	}
	if measured {
		k.lat = append(k.lat, d)
		k.counts.add(got, k.expect(got))
	}
	b.replace(k, zone, slot)
}

// evEvictionRequest is the AdmissionRequest the API server sends for an
// Eviction of pod.
func evEvictionRequest(pod *corev1.Pod) admission.Request {
	raw, err := json.Marshal(map[string]any{
		"apiVersion": "policy/v1", "kind": "Eviction",
		"metadata": map[string]any{"name": pod.Name, "namespace": pod.Namespace},
	})
	if err != nil {
		panic(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID:         types.UID(fmt.Sprintf("req-%s", pod.UID)),
		Kind:        metav1.GroupVersionKind{Group: "policy", Version: "v1", Kind: "Eviction"},
		Resource:    metav1.GroupVersionResource{Version: "v1", Resource: "pods"},
		SubResource: "eviction",
		Name:        pod.Name,
		Namespace:   pod.Namespace,
		Operation:   admissionv1.Create,
		Object:      k8sruntime.RawExtension{Raw: raw},
		DryRun:      ptr.To(false),
	}}
}

// evStorm is a refusal storm: evStormClients clients sending refused
// evictions for evStormDuration.
type evStorm struct {
	label      string
	pass       int
	lat        []time.Duration
	elapsed    time.Duration
	errors     int
	firstError string
	counts     evTally
	// webhookMean is the mean time the handler took per decision.
	webhookMean time.Duration
}

func (b *evBench) refusalStorm(k *evCase, pass int) *evStorm {
	pods := k.pool.all()
	s := &evStorm{label: k.label, pass: pass}
	b.prime(k, false)
	ws0, wn0 := evWebhookSeconds()
	lats := make([][]time.Duration, evStormClients)
	errs := make([]error, evStormClients)
	nerr := make([]int, evStormClients)
	var wg sync.WaitGroup
	begin := make(chan struct{})
	b.cnt.begin()
	start := time.Now()
	stop := start.Add(evStormDuration)
	for g := range evStormClients {
		wg.Go(func() {
			<-begin
			for i := g; time.Now().Before(stop); i += evStormClients {
				t0 := time.Now()
				err := b.evict(pods[i%len(pods)])
				lats[g] = append(lats[g], time.Since(t0))
				if !apierrors.IsTooManyRequests(err) {
					nerr[g]++
					if errs[g] == nil {
						errs[g] = fmt.Errorf("want 429, got %w", err)
					}
				}
			}
		})
	}
	close(begin)
	wg.Wait()
	s.elapsed = time.Since(start)
	s.counts = b.cnt.end()
	ws1, wn1 := evWebhookSeconds()
	s.webhookMean = evMean(ws1-ws0, wn1-wn0)
	for g := range evStormClients {
		s.lat = append(s.lat, lats[g]...)
		s.errors += nerr[g]
		if errs[g] != nil && s.firstError == "" {
			s.firstError = errs[g].Error()
		}
	}
	b.refusals += len(s.lat)
	return s
}

// evDrain is one 64-call storm of a drain: simultaneous evictions of 64
// distinct pods over 3 zones of evDrainPerZone pods, under a PDB allowing
// evDrainPDBAllowance, or a per-zone TDB of maxUnavailable 25%.
type evDrain struct {
	label                       string
	pdb                         bool
	lat                         []time.Duration
	allowed, refused, contended int
	errors                      int
	firstError                  string
	// allowance and allowed are per zone for the TDB, "all" for the PDB.
	allowance, allowedBy map[string]int32
	counts               evTally
	webhookMean          time.Duration
}

func (b *evBench) drainStorm(rep int, pdb bool) *evDrain {
	t := b.t
	d := &evDrain{label: "(b) TDB only", pdb: pdb, allowance: map[string]int32{}, allowedBy: map[string]int32{}}
	s := evSetup{tdbs: []evTDBSpec{{name: "per-zone", key: framework.ZoneKey, maxUnavailable: intstr.FromString("25%")}}}
	if pdb {
		d.label, s = "(a) PDB only", evSetup{pdbAllowed: ptr.To[int32](evDrainPDBAllowance)}
	}
	k := b.build(fmt.Sprintf("drain storm %d %s", rep+1, d.label), "drain", true, s, evDrainPerZone)
	if pdb {
		d.allowance["all"] = evDrainPDBAllowance
	} else {
		var tdb policyv1alpha1.TopologyDisruptionBudget
		if err := b.c.Get(b.ctx, client.ObjectKey{Namespace: k.pool.ns, Name: "per-zone"}, &tdb); err != nil {
			t.Fatal(err)
		}
		for _, row := range tdb.Status.Domains {
			d.allowance[row.Name] = row.DisruptionsAllowed
		}
	}
	var pods []*corev1.Pod
	var keyOf []string
	for i := 0; len(pods) < evStormClients; i++ {
		z := evZones[i%len(evZones)]
		pods = append(pods, k.pool.world.Pods[z][i/len(evZones)])
		if pdb {
			z = "all"
		}
		keyOf = append(keyOf, z)
	}
	lat := make([]time.Duration, len(pods))
	errs := make([]error, len(pods))
	var wg sync.WaitGroup
	begin := make(chan struct{})
	b.prime(k, false)
	ws0, wn0 := evWebhookSeconds()
	b.cnt.begin()
	for i := range pods {
		wg.Go(func() {
			<-begin
			t0 := time.Now()
			errs[i] = b.evict(pods[i])
			lat[i] = time.Since(t0)
		})
	}
	close(begin)
	wg.Wait()
	d.counts = b.cnt.end()
	ws1, wn1 := evWebhookSeconds()
	d.webhookMean = evMean(ws1-ws0, wn1-wn0)
	d.lat = lat
	for i, err := range errs {
		switch {
		case err == nil:
			d.allowed++
			d.allowedBy[keyOf[i]]++
		case apierrors.IsTooManyRequests(err):
			d.refused++
			b.refusals++
			if strings.Contains(err.Error(), "too many concurrent evictions") {
				d.contended++
			}
		default:
			d.errors++
			if d.firstError == "" {
				d.firstError = err.Error()
			}
		}
	}
	return d
}

// evWebhookSeconds reads the webhook's decision time histogram: the sum of
// the decision times and their count.
func evWebhookSeconds() (float64, uint64) {
	mfs, err := metrics.Registry.Gather()
	if err != nil {
		return math.NaN(), 0
	}
	var sum float64
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() != "tdb_eviction_decision_duration_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetHistogram().GetSampleSum()
			n += m.GetHistogram().GetSampleCount()
		}
	}
	return sum, n
}

func evMean(seconds float64, n uint64) time.Duration {
	if n == 0 {
		return 0
	}
	return time.Duration(seconds / float64(n) * float64(time.Second))
}

// evKey is a request by verb (GET, PUT, ..., LIST, WATCH) and path pattern.
type evKey struct {
	verb, resource, subresource, pattern string
}

// evCounter counts the requests of the webhook manager while a window is
// open, and in total.
type evCounter struct {
	mu     sync.Mutex
	open   bool
	window map[evKey]int
	total  map[evKey]int
}

// wrap is a rest.Config WrapTransport; every client built from the config
// gets its own transport, all counting here.
func (c *evCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return &evCountingTransport{next: rt, c: c}
}

func (c *evCounter) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open, c.window = true, map[evKey]int{}
}

func (c *evCounter) end() evTally {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open = false
	return evTallyOf(c.window)
}

func (c *evCounter) totals() evTally {
	c.mu.Lock()
	defer c.mu.Unlock()
	return evTallyOf(c.total)
}

type evCountingTransport struct {
	next http.RoundTripper
	c    *evCounter
}

func (t *evCountingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	k := evClassify(req)
	t.c.mu.Lock()
	if t.c.total == nil {
		t.c.total = map[evKey]int{}
	}
	t.c.total[k]++
	if t.c.open {
		t.c.window[k]++
	}
	t.c.mu.Unlock()
	return t.next.RoundTrip(req)
}

func (t *evCountingTransport) WrappedRoundTripper() http.RoundTripper { return t.next }

// evClassify names a request by verb and path pattern, namespaces and names
// replaced: e.g. PUT /apis/policy.tdb.dev/v1alpha1/namespaces/{ns}/topologydisruptionbudgets/{name}/status.
func evClassify(req *http.Request) evKey {
	segs := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	prefix := 0
	switch {
	case len(segs) >= 2 && segs[0] == "api":
		prefix = 2
	case len(segs) >= 3 && segs[0] == "apis":
		prefix = 3
	default:
		return evKey{verb: req.Method, pattern: req.URL.Path}
	}
	out := slices.Clone(segs[:prefix])
	rest := segs[prefix:]
	watch := req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1"
	if len(rest) > 0 && rest[0] == "watch" {
		watch, rest = true, rest[1:]
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		out, rest = append(out, "namespaces", "{ns}"), rest[2:]
	}
	k := evKey{verb: req.Method}
	if len(rest) > 0 {
		k.resource = rest[0]
		out = append(out, rest[0])
	}
	named := len(rest) >= 2
	if named {
		out = append(out, "{name}")
		out = append(out, rest[2:]...)
		if len(rest) > 2 {
			k.subresource = strings.Join(rest[2:], "/")
		}
	}
	switch {
	case watch:
		k.verb = "WATCH"
	case req.Method == http.MethodGet && !named:
		k.verb = "LIST"
	}
	k.pattern = "/" + strings.Join(out, "/")
	return k
}

// evTally sorts counted requests: budget status writes, other writes, event
// writes (asynchronous, rate-limited refusal events), reads by name, and the
// informers' list and watch traffic (excluded from the figures).
type evTally struct {
	tdbStatusWrites, otherWrites, eventWrites int
	tdbReads, podReads, otherReads            int
	informer                                  int
	keys                                      map[evKey]int
}

func evTallyOf(m map[evKey]int) evTally {
	t := evTally{keys: map[evKey]int{}}
	for k, n := range m {
		t.keys[k] += n
		switch k.verb {
		case "WATCH", "LIST":
			t.informer += n
		case http.MethodGet:
			switch k.resource {
			case "topologydisruptionbudgets":
				t.tdbReads += n
			case "pods":
				t.podReads += n
			default:
				t.otherReads += n
			}
		default:
			switch {
			case k.resource == "events":
				t.eventWrites += n
			case k.verb == http.MethodPut && k.resource == "topologydisruptionbudgets" && k.subresource == "status":
				t.tdbStatusWrites += n
			default:
				t.otherWrites += n
			}
		}
	}
	return t
}

func (t evTally) writes() int { return t.tdbStatusWrites + t.otherWrites }
func (t evTally) reads() int  { return t.tdbReads + t.podReads + t.otherReads }

func (t *evTally) add(o evTally) {
	if t.keys == nil {
		t.keys = map[evKey]int{}
	}
	for k, n := range o.keys {
		t.keys[k] += n
	}
	t.tdbStatusWrites += o.tdbStatusWrites
	t.otherWrites += o.otherWrites
	t.eventWrites += o.eventWrites
	t.tdbReads += o.tdbReads
	t.podReads += o.podReads
	t.otherReads += o.otherReads
	t.informer += o.informer
}

func (t evTally) String() string {
	if len(t.keys) == 0 {
		return "no request"
	}
	var parts []string
	for k, n := range t.keys {
		parts = append(parts, fmt.Sprintf("%s %s x%d", k.verb, k.pattern, n))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// evAgg sums the counts of a case's samples and keeps its deviations.
type evAgg struct {
	samples    int
	sum        evTally
	deviations int
	example    string
}

func (a *evAgg) add(got evTally, deviation string) {
	a.samples++
	a.sum.add(got)
	if deviation != "" {
		a.deviations++
		if a.example == "" {
			a.example = deviation
		}
	}
}

func (a *evAgg) merge(o *evAgg) {
	a.samples += o.samples
	a.sum.add(o.sum)
	a.deviations += o.deviations
	if a.example == "" {
		a.example = o.example
	}
}

func (a *evAgg) per(n int) float64 {
	if a.samples == 0 {
		return math.NaN()
	}
	return float64(n) / float64(a.samples)
}

// pct is the nearest-rank percentile.
func evPct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func evMs(d time.Duration) string {
	return fmt.Sprintf("%8.2f ms", float64(d)/float64(time.Millisecond))
}

func evMark(ok bool) string {
	if ok {
		return "PASS"
	}
	return "MISS"
}

func evRatio(x, y time.Duration) float64 { return float64(x) / float64(y) }

// print writes the figures to stdout and the test log, and fails the test on
// wrong counts or wrong answers.
func (b *evBench) print(cases []*evCase, two, directRefused, directAllowed *evCase, storms []*evStorm, drains []*evDrain, took time.Duration) {
	t := b.t
	var lines []string
	p := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }
	find := func(busy bool, setup, kind string) *evCase {
		for _, k := range cases {
			if k.busy == busy && k.setup == setup && k.kind() == kind {
				return k
			}
		}
		t.Fatalf("no case %v %s %s", busy, setup, kind)
		return nil
	}

	for _, busy := range []bool{false, true} {
		regime := "QUIET: the only write before the eviction's PDB list is the webhook's own"
		if busy {
			regime = "BUSY: one unrelated write before every eviction, as in a cluster whose etcd revision always moves"
		}
		p("")
		p("=== Eviction latency through the API server (client-go Evict), %d samples per case after %d warm-ups, all cases interleaved ===", evSamples, evWarmups)
		p("    regime %s", regime)
		p("%-16s %12s %12s %12s %12s", "setup", "allowed p50", "allowed p99", "refused p50", "refused p99")
		for _, s := range []string{"a", "b", "c"} {
			al, rf := find(busy, s, "allowed"), find(busy, s, "refused")
			p("%-16s %12s %12s %12s %12s", al.label, evMs(evPct(al.lat, .5)), evMs(evPct(al.lat, .99)), evMs(evPct(rf.lat, .5)), evMs(evPct(rf.lat, .99)))
		}
		for _, s := range []string{"b", "c"} {
			var cols []string
			for _, kind := range []string{"allowed", "refused"} {
				x, a := find(busy, s, kind), find(busy, "a", kind)
				r50, r99 := evRatio(evPct(x.lat, .5), evPct(a.lat, .5)), evRatio(evPct(x.lat, .99), evPct(a.lat, .99))
				m50 := "    "
				if s == "b" {
					m50 = evMark(r50 <= evTargetRatioP50)
				}
				cols = append(cols, fmt.Sprintf("%6.2fx %s", r50, m50), fmt.Sprintf("%6.2fx     ", r99))
			}
			p("%-16s %12s %12s %12s %12s", "ratio "+s+"/a", cols[0], cols[1], cols[2], cols[3])
		}
		p("(target: b/a <= %.1f at p50, marked PASS/MISS)", evTargetRatioP50)
	}

	p("")
	p("=== EvictionHandler.Handle called directly ===")
	p("%-34s %8s %12s %12s %12s", "case", "samples", "p50", "p99", "max")
	p("%-34s %8d %12s %12s %12s   target p99 <= %s: %s", "refused (no status write)", len(directRefused.lat),
		evMs(evPct(directRefused.lat, .5)), evMs(evPct(directRefused.lat, .99)), evMs(evPct(directRefused.lat, 1)),
		evTargetHandleP99, evMark(evPct(directRefused.lat, .99) <= evTargetHandleP99))
	p("%-34s %8d %12s %12s %12s   (reported only)", "allowed (with its status write)", len(directAllowed.lat),
		evMs(evPct(directAllowed.lat, .5)), evMs(evPct(directAllowed.lat, .99)), evMs(evPct(directAllowed.lat, 1)))

	p("")
	p("=== API requests made by the webhook manager per eviction (informer list/watch excluded; asserted) ===")
	p("%-36s %7s %8s %9s %8s %8s %9s  %-28s %s", "case", "samples", "TDB PUT", "oth.write", "GET tdb", "GET pod", "oth.GET", "target", "result")
	row := func(label string, covering int, ks ...*evCase) {
		var a evAgg
		for _, k := range ks {
			a.merge(&k.counts)
		}
		target := fmt.Sprintf("%d write, 0 reads per eviction", covering)
		if !ks[0].allowed {
			target = "0 writes per refusal"
		}
		res := fmt.Sprintf("%s (%d deviating)", evMark(a.deviations == 0), a.deviations)
		p("%-36s %7d %8.3f %9.3f %8.3f %8.3f %9.3f  %-28s %s", label, a.samples, a.per(a.sum.tdbStatusWrites), a.per(a.sum.otherWrites),
			a.per(a.sum.tdbReads), a.per(a.sum.podReads), a.per(a.sum.otherReads), target, res)
	}
	for _, kind := range []string{"allowed", "refused"} {
		for _, s := range []string{"a", "b", "c"} {
			q, bz := find(false, s, kind), find(true, s, kind)
			covering := len(q.tdbs)
			if kind == "refused" {
				covering = 0
			}
			row(q.label+", "+kind, covering, q, bz)
		}
		if kind == "allowed" {
			row(two.label+", allowed", len(two.tdbs), two)
			row("direct Handle, allowed", len(directAllowed.tdbs), directAllowed)
		}
	}
	row("direct Handle, refused", 0, directRefused)
	for _, s := range storms {
		n := float64(len(s.lat))
		p("%-36s %7d %8.3f %9.3f %8.3f %8.3f %9.3f  %-28s %s", fmt.Sprintf("refusal storm %s #%d", s.label, s.pass), len(s.lat),
			float64(s.counts.tdbStatusWrites)/n, float64(s.counts.otherWrites)/n, float64(s.counts.tdbReads)/n,
			float64(s.counts.podReads)/n, float64(s.counts.otherReads)/n, "0 writes per refusal", evMark(s.counts.writes() == 0))
	}
	tot := b.cnt.totals()
	p("refusal events (asynchronous, rate-limited to 1/min per budget, not counted above): %d event write(s) for %d refusals over the run", tot.eventWrites, b.refusals)

	p("")
	p("=== Refusal storm: %d clients sending refused evictions through the API server for %s each ===", evStormClients, evStormDuration)
	p("%-16s %5s %9s %11s %12s %12s %12s %7s %14s", "setup", "pass", "refusals", "refusals/s", "p50", "p99", "max", "errors", "webhook mean")
	for _, s := range storms {
		p("%-16s %5d %9d %11.0f %12s %12s %12s %7d %14s", s.label, s.pass, len(s.lat), float64(len(s.lat))/s.elapsed.Seconds(),
			evMs(evPct(s.lat, .5)), evMs(evPct(s.lat, .99)), evMs(evPct(s.lat, 1)), s.errors, evMs(s.webhookMean))
	}

	p("")
	p("=== Drain storm: %d simultaneous evictions of distinct pods over 3 zones x %d pods; PDB allowing %d, or TDB maxUnavailable 25%% per zone ===",
		evStormClients, evDrainPerZone, evDrainPDBAllowance)
	p("%-14s %3s %7s %7s %9s %6s %11s %11s %11s %11s %7s %7s  %s", "setup", "#", "allowed", "refused", "contended", "errors",
		"p50", "p99", "max", "webhook avg", "TDB PUT", "TDB GET", "allowed/allowance")
	pooled := map[bool][]time.Duration{}
	first := map[bool]*evDrain{}
	for i, d := range drains {
		pooled[d.pdb] = append(pooled[d.pdb], d.lat...)
		if first[d.pdb] == nil {
			first[d.pdb] = d
		}
		var keys []string
		for k := range d.allowance {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var zs []string
		for _, k := range keys {
			zs = append(zs, fmt.Sprintf("%s %d/%d", k, d.allowedBy[k], d.allowance[k]))
		}
		p("%-14s %3d %7d %7d %9d %6d %11s %11s %11s %11s %7d %7d  %s", d.label, i/2+1, d.allowed, d.refused, d.contended, d.errors,
			evMs(evPct(d.lat, .5)), evMs(evPct(d.lat, .99)), evMs(evPct(d.lat, 1)), evMs(d.webhookMean),
			d.counts.tdbStatusWrites, d.counts.tdbReads, strings.Join(zs, ", "))
	}
	for _, pdb := range []bool{true, false} {
		l, f := pooled[pdb], first[pdb]
		target := "(reported only)"
		if !pdb {
			target = fmt.Sprintf("target p99 <= %s: %s (pooled), %s (first storm alone, p99 %s)", evTargetStormP99,
				evMark(evPct(l, .99) <= evTargetStormP99), evMark(evPct(f.lat, .99) <= evTargetStormP99), strings.TrimSpace(evMs(evPct(f.lat, .99))))
		}
		p("%-14s %3s %7s %7s %9s %6s %11s %11s %11s  %s", f.label, "all", "", "", "", "",
			evMs(evPct(l, .5)), evMs(evPct(l, .99)), evMs(evPct(l, 1)), target)
	}
	p("")
	p("measured run took %s", took.Round(time.Second))

	for _, l := range lines {
		t.Log(l)
		fmt.Println(l)
	}

	// Exact behaviour: fail on it.
	all := append(slices.Clone(cases), two, directAllowed, directRefused)
	for _, k := range all {
		if k.failures > 0 {
			t.Errorf("%s, %s: %d wrong answer(s), e.g. %s", k.label, k.kind(), k.failures, k.failure)
		}
		if k.counts.deviations > 0 {
			t.Errorf("%s, %s: %d of %d samples made other API requests than expected, e.g. %s",
				k.label, k.kind(), k.counts.deviations, k.counts.samples, k.counts.example)
		}
	}
	for _, s := range storms {
		if s.errors > 0 {
			t.Errorf("refusal storm %s #%d: %d answers were not 429, e.g. %s", s.label, s.pass, s.errors, s.firstError)
		}
		if s.counts.writes() != 0 {
			t.Errorf("refusal storm %s #%d: the webhook wrote during refusals: %s", s.label, s.pass, s.counts)
		}
	}
	for i, d := range drains {
		if d.pdb {
			continue // the API server's own PDB handling: reported only
		}
		if d.errors > 0 {
			t.Errorf("drain storm %d: %d answers were neither allowed nor 429, e.g. %s", i/2+1, d.errors, d.firstError)
		}
		for z, n := range d.allowedBy {
			if n > d.allowance[z] {
				t.Errorf("drain storm %d: %d evictions allowed in %s, over its allowance of %d", i/2+1, n, z, d.allowance[z])
			}
		}
	}
}
