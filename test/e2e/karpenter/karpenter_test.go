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

// Package karpenter_test runs the real Karpenter (its kwok cloud provider,
// built from Go modules by hack/build-karpenter.sh) against a local cluster
// with the operator, and has it replace a 3-zone node pool (drift) under a
// TopologyDisruptionBudget, once without mirrored PDBs and once with them,
// side by side: `make test-e2e-karpenter`.
package karpenter_test

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

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	policyv1 "k8s.io/api/policy/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

const (
	clusterName = "tdb-karpenter"
	// podsPerZone pods per zone, one per node (anti-affinity), each on a
	// node Karpenter launches.
	podsPerZone = 2
	app         = "ingester"
	budgetName  = "ingesters"
	// disruptedTaint is the taint Karpenter puts on a node it has chosen to
	// disrupt, before it drains it.
	disruptedTaint = "karpenter.sh/disrupted"
	generationKey  = "e2e.tdb.dev/generation"
)

var (
	keep    = flag.Bool("keep", false, "Keep the cluster at the end instead of tearing it down.")
	timeout = flag.Duration("case-timeout", 12*time.Minute, "How long one case may take to replace the pool.")
)

// mode is one case: the budget's mirrorPodDisruptionBudgets.
type result struct {
	mode policyv1alpha1.MirrorMode
	// replaced: from the drift until every old node is gone and every pod
	// Ready on a new node.
	replaced time.Duration
	// maxPerZone, maxZones: the worst the independent watcher saw.
	maxPerZone map[string]int
	maxZones   int
	// taintedRefused are the nodes Karpenter tainted for disruption while
	// the budget refused the eviction of a pod on them.
	taintedRefused []string
	// chosen are the old nodes Karpenter tainted.
	chosen int
	// refusals (429) and allowed evictions, from the operator's metrics.
	refusals, allowed float64
	// forceDeleted are pods gone without an allowed eviction.
	forceDeleted int
	err          error
}

func TestKarpenterReplacesAPoolWithinTheBudget(t *testing.T) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Pods take 15 s to become Ready: a zone whose pod was evicted stays
	// disrupted long enough for Karpenter's next decision to see it.
	b, err := kwokenv.StartBench(clusterName, "karpenter-e2e-", "pods Ready 15 s after start",
		[]string{"ZONES=3", "NODES_PER_ZONE=0", "POD_READY_DELAY=15s"},
		kwokenv.OperatorOptions{WebhookPort: 19643, MetricsPort: 18380, ProbePort: 18381})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(*keep)
	k, err := kwokenv.StartKarpenter(ctx, b.Cluster, kwokenv.KarpenterOptions{
		MetricsPort: 18480, ProbePort: 18481, LogPath: filepath.Join(b.LogDir, "karpenter.log")})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	fmt.Printf("   karpenter running (kwok provider); logs in %s\n", b.LogDir)
	if err := applyNodePool(ctx, b.Cluster); err != nil {
		t.Fatal(err)
	}

	var results []*result
	for i, mode := range []policyv1alpha1.MirrorMode{policyv1alpha1.MirrorNone, policyv1alpha1.MirrorPerDomain} {
		fmt.Printf("\n>> case %s: TDB maxUnavailable 1 per zone, maxDisruptedDomains 1, mirrorPodDisruptionBudgets %s\n", mode, mode)
		r := runCase(ctx, b, mode, fmt.Sprint(i+1))
		results = append(results, r)
		if r.err != nil {
			t.Errorf("case %s: %v", mode, r.err)
		}
	}
	report(t, results)
}

// applyNodePool creates the KWOKNodeClass and a NodePool over the three
// zones whose own disruption budget lets Karpenter disrupt one node at a
// time (docs/planners.md recommends it). With a budget that lets it take
// several at once, Karpenter issues its drift commands within a second of
// each other, before any pod is evicted: every mirror then still allows its
// zone's disruption, and no PDB can tell it that only one zone may go.
func applyNodePool(ctx context.Context, c *kwokenv.Cluster) error {
	manifest := `apiVersion: karpenter.kwok.sh/v1alpha1
kind: KWOKNodeClass
metadata:
  name: default
---
apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: default
spec:
  template:
    metadata:
      labels:
        ` + generationKey + `: "0"
    spec:
      nodeClassRef: {group: karpenter.kwok.sh, kind: KWOKNodeClass, name: default}
      expireAfter: Never
      requirements:
      - {key: topology.kubernetes.io/zone, operator: In, values: [zone-a, zone-b, zone-c]}
      - {key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}
      - {key: kubernetes.io/os, operator: In, values: [linux]}
  limits: {cpu: "200"}
  disruption:
    consolidationPolicy: WhenEmptyOrUnderutilized
    consolidateAfter: 0s
    budgets: [{nodes: "1"}]
`
	cmd := c.Kubectl(ctx, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(manifest)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("applying the NodePool: %w: %s", err, out)
	}
	return nil
}

// drift changes the NodePool's template: every node it launched before is
// drifted, and Karpenter replaces them.
func drift(ctx context.Context, c *kwokenv.Cluster, generation string) error {
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"labels":{%q:%q}}}}}`, generationKey, generation)
	out, err := c.Kubectl(ctx, "patch", "nodepool", "default", "--type=merge", "-p", patch).CombinedOutput()
	if err != nil {
		return fmt.Errorf("drifting the NodePool: %w: %s", err, out)
	}
	return nil
}

func runCase(ctx context.Context, b *kwokenv.Bench, mode policyv1alpha1.MirrorMode, generation string) *result {
	r := &result{mode: mode, maxPerZone: map[string]int{}}
	k8s := b.Client
	ns := "karpenter-" + strings.ToLower(string(mode))
	if err := deploy(ctx, k8s, ns, mode); err != nil {
		r.err = err
		return r
	}
	w := &kwokenv.Watcher{Client: k8s, NS: ns, Selector: labels.SelectorFromSet(labels.Set{"app": app}),
		Expected: func(context.Context) (map[string]int, error) {
			return map[string]int{"zone-a": podsPerZone, "zone-b": podsPerZone, "zone-c": podsPerZone}, nil
		}}
	if err := waitSettled(ctx, k8s, w, ns, mode, 5*time.Minute); err != nil {
		r.err = err
		return r
	}
	old, err := nodeNames(ctx, k8s)
	if err != nil {
		r.err = err
		return r
	}
	fmt.Printf("   %d pods Ready on %d nodes Karpenter launched; budget computed\n", 3*podsPerZone, len(old))

	before, err := decisions(b)
	if err != nil {
		r.err = err
		return r
	}
	obs := &observer{k8s: k8s, ns: ns, old: old, tainted: map[string]bool{}, podNode: map[string]string{},
		uids: map[types.UID]bool{}, taintedRefused: map[string]bool{}, seenEvents: map[types.UID]bool{}}
	if err := obs.sample(ctx); err != nil {
		r.err = err
		return r
	}
	start := time.Now()
	if err := drift(ctx, b.Cluster, generation); err != nil {
		r.err = err
		return r
	}
	fmt.Printf("   NodePool drifted (%s=%s): Karpenter replaces the %d nodes\n", generationKey, generation, len(old))
	sampler := kwokenv.StartSampler(w.Unavailable, 100*time.Millisecond, nil)
	stopObs := make(chan struct{})
	var obsWG sync.WaitGroup
	obsWG.Add(1)
	go func() {
		defer obsWG.Done()
		for {
			select {
			case <-stopObs:
				return
			case <-time.After(200 * time.Millisecond):
			}
			if err := obs.sample(ctx); err != nil {
				fmt.Printf("   observer: %v\n", err)
			}
		}
	}()

	deadline := time.Now().Add(*timeout)
	for {
		done, state, err := replacedAll(ctx, k8s, w, ns, old)
		if err == nil && done {
			r.replaced = time.Since(start)
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			r.err = errors.Join(fmt.Errorf("the pool was not replaced within %s: %s", *timeout, state), err)
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(time.Second)
	close(stopObs)
	obsWG.Wait()
	_ = obs.sample(ctx)
	rep := sampler.Stop()
	r.maxPerZone, r.maxZones = rep.MaxZone, rep.MaxDisruptedZones
	_ = os.WriteFile(filepath.Join(b.LogDir, "timeline-"+string(mode)+".txt"), []byte(rep.Timeline), 0o644)

	after, err := decisions(b)
	if err == nil {
		r.refusals = after["refused"] - before["refused"]
		r.allowed = after["allowed"] - before["allowed"]
	}
	r.chosen = len(obs.tainted)
	for n := range obs.taintedRefused {
		r.taintedRefused = append(r.taintedRefused, n)
	}
	sort.Strings(r.taintedRefused)
	gone := 0
	for range obs.gone() {
		gone++
	}
	r.forceDeleted = max(0, gone-int(r.allowed))
	fmt.Printf("   replaced in %s: max unavailable %s, zones at once %d; %d nodes chosen, %d tainted while the budget refused their pods %v; %.0f refusals (429), %.0f evictions allowed, %d pods gone, %d force-deleted\n",
		r.replaced.Round(100*time.Millisecond), kwokenv.ZoneList(r.maxPerZone), r.maxZones, r.chosen, len(r.taintedRefused), r.taintedRefused,
		r.refusals, r.allowed, gone, r.forceDeleted)

	if err := cleanUp(ctx, k8s, ns); err != nil && r.err == nil {
		r.err = err
	}
	return r
}

// deploy creates the namespace, the budget and one StatefulSet per zone
// (podsPerZone pods, one per node, each asking for one CPU, so that
// Karpenter launches a node for each).
func deploy(ctx context.Context, k8s client.Client, ns string, mode policyv1alpha1.MirrorMode) error {
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		return err
	}
	tdb := builders.Budget(budgetName).Namespace(ns).MatchLabels(map[string]string{"app": app}).TopologyKey(kwokenv.ZoneKey).
		MaxUnavailable(intstr.FromInt32(1)).MaxDisruptedDomains(1).Obj()
	tdb.Spec.MirrorPodDisruptionBudgets = mode
	if err := k8s.Create(ctx, tdb); err != nil {
		return err
	}
	for _, z := range fixture.Zones {
		if err := k8s.Create(ctx, statefulSet(ns, z)); err != nil {
			return err
		}
	}
	return nil
}

func statefulSet(ns, zone string) *appsv1.StatefulSet {
	podLabels := map[string]string{"app": app, "zone": zone}
	s := builders.StatefulSet(app+"-"+zone).Namespace(ns).Replicas(podsPerZone).PodLabels(podLabels).
		ParallelPodManagement().RequireNodeLabel(kwokenv.ZoneKey, zone).
		Containers(corev1.Container{Name: app, Image: "ingester:e2e", Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}).Obj()
	s.Spec.Template.Spec.NodeSelector = map[string]string{"karpenter.sh/nodepool": "default"}
	s.Spec.Template.Spec.Affinity.PodAntiAffinity = &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			TopologyKey:   corev1.LabelHostname,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		}},
	}
	return s
}

// waitSettled waits until every pod is Ready and the budget computed (and,
// mirrored, its PDBs counted by the disruption controller).
func waitSettled(ctx context.Context, k8s client.Client, w *kwokenv.Watcher, ns string, mode policyv1alpha1.MirrorMode, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		u, err := w.Unavailable(ctx)
		ready := err == nil && kwokenv.Sum(u) == 0
		state := fmt.Sprintf("unavailable %v", u)
		if ready {
			var t policyv1alpha1.TopologyDisruptionBudget
			if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: budgetName}, &t); err != nil {
				return err
			}
			s := t.Status
			ready = s.ObservedGeneration == t.Generation && s.CurrentHealthy == 3*podsPerZone && s.DisruptionsAllowed == 1
			state = fmt.Sprintf("budget healthy %d allowed %d", s.CurrentHealthy, s.DisruptionsAllowed)
			if ready && mode == policyv1alpha1.MirrorPerDomain {
				ready, state = mirrorsCounted(ctx, k8s, &t)
			}
		}
		if ready {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("not settled within %s: %s", within, state)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func mirrorsCounted(ctx context.Context, k8s client.Client, t *policyv1alpha1.TopologyDisruptionBudget) (bool, string) {
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
		if p.Status.ObservedGeneration >= p.Generation && p.Status.ExpectedPods == podsPerZone && p.Status.DisruptionsAllowed == 1 {
			counted++
		}
	}
	return counted == len(fixture.Zones), fmt.Sprintf("%d mirrors, %d counted", len(pdbs.Items), counted)
}

func nodeNames(ctx context.Context, k8s client.Client) (map[string]bool, error) {
	var nodes corev1.NodeList
	if err := k8s.List(ctx, &nodes); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range nodes.Items {
		out[n.Name] = true
	}
	return out, nil
}

// replacedAll says whether every old node is gone and every pod is Ready
// on a new one.
func replacedAll(ctx context.Context, k8s client.Client, w *kwokenv.Watcher, ns string, old map[string]bool) (bool, string, error) {
	now, err := nodeNames(ctx, k8s)
	if err != nil {
		return false, "", err
	}
	left := 0
	for n := range old {
		if now[n] {
			left++
		}
	}
	u, err := w.Unavailable(ctx)
	if err != nil {
		return false, "", err
	}
	return left == 0 && kwokenv.Sum(u) == 0, fmt.Sprintf("%d old node(s) left, unavailable %v", left, u), nil
}

// observer follows, every 200 ms, which old nodes Karpenter tainted, where
// each pod runs, and the budget's refusals on pods (the EvictionRefused
// events the webhook leaves on a refused pod): a refusal of a pod on a
// tainted node is a node chosen while the budget refused its pods.
type observer struct {
	k8s            client.Client
	ns             string
	old            map[string]bool
	mu             sync.Mutex
	tainted        map[string]bool
	podNode        map[string]string
	uids           map[types.UID]bool
	taintedRefused map[string]bool
	seenEvents     map[types.UID]bool
	lastUIDs       map[types.UID]bool
}

func (o *observer) sample(ctx context.Context) error {
	var nodes corev1.NodeList
	if err := o.k8s.List(ctx, &nodes); err != nil {
		return err
	}
	var pods corev1.PodList
	if err := o.k8s.List(ctx, &pods, client.InNamespace(o.ns)); err != nil {
		return err
	}
	var evs eventsv1.EventList
	if err := o.k8s.List(ctx, &evs, client.InNamespace(o.ns)); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, n := range nodes.Items {
		for _, t := range n.Spec.Taints {
			if t.Key == disruptedTaint && o.old[n.Name] {
				o.tainted[n.Name] = true
			}
		}
	}
	current := map[types.UID]bool{}
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" {
			o.podNode[p.Name+"/"+string(p.UID)] = p.Spec.NodeName
		}
		o.uids[p.UID] = true
		current[p.UID] = true
	}
	o.lastUIDs = current
	for _, e := range evs.Items {
		if e.Regarding.Kind != "Pod" || e.Reason != policyv1alpha1.EventReasonEvictionRefused || o.seenEvents[e.UID] {
			continue
		}
		node := o.podNode[e.Regarding.Name+"/"+string(e.Regarding.UID)]
		if node == "" {
			continue // a pod not seen yet; the next sample places it
		}
		o.seenEvents[e.UID] = true
		if o.tainted[node] {
			o.taintedRefused[node] = true
		}
	}
	return nil
}

// gone lists the pods seen during the case that no longer exist.
func (o *observer) gone() []types.UID {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []types.UID
	for uid := range o.uids {
		if !o.lastUIDs[uid] {
			out = append(out, uid)
		}
	}
	return out
}

// decisions sums the operator's eviction decisions by decision.
func decisions(b *kwokenv.Bench) (map[string]float64, error) {
	out := map[string]float64{}
	err := kwokenv.ScrapeMetrics(18380, func(series string, v float64) {
		if strings.HasPrefix(series, "tdb_eviction_decisions_total{") {
			out[kwokenv.MetricLabel(series, "decision")] += v
		}
	})
	return out, err
}

// cleanUp deletes the case's namespace and waits until Karpenter has
// removed the nodes it emptied.
func cleanUp(ctx context.Context, k8s client.Client, ns string) error {
	if err := k8s.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
		client.PropagationPolicy(metav1.DeletePropagationForeground)); err != nil {
		return err
	}
	deadline := time.Now().Add(4 * time.Minute)
	for {
		now, err := nodeNames(ctx, k8s)
		if err == nil && len(now) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("karpenter did not remove the emptied nodes within 4m (%d left)", len(now))
		}
		time.Sleep(time.Second)
	}
}

// report prints the comparison and checks what must hold: the budget never
// exceeded, the pool replaced, nothing force-deleted, and with mirrored PDBs
// no node chosen while the budget refused its pods.
func report(t *testing.T, results []*result) {
	fmt.Println("\n== Karpenter drift of a 3-zone pool under a TDB (maxUnavailable 1 per zone, maxDisruptedDomains 1)")
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "MIRROR\tREPLACED IN\tMAX UNAVAIL a/b/c\tZONES AT ONCE\tNODES CHOSEN\tCHOSEN WHILE REFUSED\t429s\tEVICTIONS\tFORCE-DELETED")
	for _, r := range results {
		if r.err != nil {
			_, _ = fmt.Fprintf(tw, "%s\terror: %v\n", r.mode, r.err)
			continue
		}
		_, _ = fmt.Fprintf(tw, "%s\t%.1fs\t%d/%d/%d\t%d\t%d\t%d\t%.0f\t%.0f\t%d\n", r.mode, r.replaced.Seconds(),
			r.maxPerZone["zone-a"], r.maxPerZone["zone-b"], r.maxPerZone["zone-c"], r.maxZones,
			r.chosen, len(r.taintedRefused), r.refusals, r.allowed, r.forceDeleted)
	}
	_ = tw.Flush()
	for _, r := range results {
		if r.err != nil {
			continue
		}
		for z, u := range r.maxPerZone {
			if u > 1 {
				t.Errorf("%s: the budget was exceeded in %s: %d pods unavailable at once", r.mode, z, u)
			}
		}
		if r.maxZones > 1 {
			t.Errorf("%s: the budget was exceeded: %d zones disrupted at once", r.mode, r.maxZones)
		}
		if r.forceDeleted > 0 {
			t.Errorf("%s: %d pods were deleted without an eviction", r.mode, r.forceDeleted)
		}
		if r.mode == policyv1alpha1.MirrorPerDomain && len(r.taintedRefused) > 0 {
			t.Errorf("%s: Karpenter chose nodes whose pods the budget refused: %v", r.mode, r.taintedRefused)
		}
	}
}
