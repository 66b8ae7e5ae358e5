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

package plugin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// ---------------------------------------------------------------------------
// running the plugin

// cmdResult is one finished command.
type cmdResult struct {
	Args           []string
	Stdout, Stderr string
	Exit           int
}

func (r cmdResult) String() string {
	return fmt.Sprintf("$ kubectl %s\nexit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(r.Args, " "), r.Exit,
		indent(r.Stdout), indent(r.Stderr))
}

// indent sets command output off as a block, saying so when it is empty.
func indent(s string) string {
	if q := fixture.Quoted(s); q != "" {
		return q
	}
	return "    (empty)"
}

// kubectl runs the cluster's kubectl with the plugin's directory first on
// PATH and returns how it ended; only a command that could not run at all,
// or ran past a minute, fails the spec.
func kubectl(ctx context.Context, args ...string) cmdResult {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cmd := cluster.Kubectl(ctx, args...)
	// exec.Cmd keeps the last of duplicate variables.
	cmd.Env = append(cmd.Env, "PATH="+pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := cmdResult{Args: args, Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr) && ctx.Err() == nil:
		r.Exit = exitErr.ExitCode()
	default:
		Fail(fmt.Sprintf("kubectl %s did not run to its end: %v\n%s", strings.Join(args, " "), err, r))
	}
	return r
}

// tdb runs `kubectl tdb ARGS...` and logs the call.
func tdb(ctx context.Context, args ...string) cmdResult {
	r := kubectl(ctx, append([]string{"tdb"}, args...)...)
	GinkgoWriter.Printf("$ kubectl %s -> exit %d\n", strings.Join(r.Args, " "), r.Exit)
	if r.Stderr != "" {
		GinkgoWriter.Println(indent(r.Stderr))
	}
	return r
}

// decode reads the JSON document on r's stdout into a new T and checks its
// kind.
func decode[T any](r cmdResult, kind string) *T {
	var head struct{ APIVersion, Kind string }
	Expect(json.Unmarshal([]byte(r.Stdout), &head)).To(Succeed(), "stdout is not one JSON document:\n%s", r)
	Expect(head.Kind).To(Equal(kind), "%s", r)
	Expect(head.APIVersion).To(Equal("tdb.dev/v1alpha1"), "%s", r)
	out := new(T)
	Expect(json.Unmarshal([]byte(r.Stdout), out)).To(Succeed(), "%s", r)
	return out
}

// The plugin's JSON documents (/tmp/kubectl-tdb-spec.md).

type budgetRef struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Domain    string `json:"domain"`
	Message   string `json:"message"`
	Pod       string `json:"pod"`
}

func (b budgetRef) String() string {
	s := fmt.Sprintf("%s %s/%s", b.Kind, b.Namespace, b.Name)
	if b.Domain != "" {
		s += " domain " + b.Domain
	}
	if b.Pod != "" {
		s += " pod " + b.Pod
	}
	if b.Message != "" {
		s += ": " + b.Message
	}
	return s
}

type budgetNumbers struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Domain    string `json:"domain"`
	Healthy   int32  `json:"healthy"`
	Desired   int32  `json:"desired"`
	Expected  int32  `json:"expected"`
	Allowed   int32  `json:"allowed"`
}

type podCheck struct {
	Namespace    string          `json:"namespace"`
	Name         string          `json:"name"`
	Node         string          `json:"node"`
	EvictableNow bool            `json:"evictableNow"`
	Reason       string          `json:"reason"`
	BlockedBy    []budgetRef     `json:"blockedBy"`
	Budgets      []budgetNumbers `json:"budgets"`
}

func (p podCheck) key() string { return p.Namespace + "/" + p.Name }

func (p podCheck) String() string {
	return fmt.Sprintf("%s on %s: evictableNow=%v reason=%q blockedBy=%v budgets=%+v", p.key(), p.Node, p.EvictableNow, p.Reason, p.BlockedBy, p.Budgets)
}

type drainCheck struct {
	Nodes           []string   `json:"nodes"`
	AllowedTogether bool       `json:"allowedTogether"`
	DrainErrors     []string   `json:"drainErrors"`
	Pods            []podCheck `json:"pods"`
	Together        struct {
		BlockedBy []budgetRef `json:"blockedBy"`
	} `json:"together"`
}

type evictionCheck struct {
	podCheck
	Hints []string `json:"hints"`
}

type drainPlan struct {
	Waves []struct {
		Nodes   []string    `json:"nodes"`
		Pods    int         `json:"pods"`
		BoundBy []budgetRef `json:"boundBy"`
	} `json:"waves"`
	Blocked []struct {
		Node      string      `json:"node"`
		BlockedBy []budgetRef `json:"blockedBy"`
	} `json:"blocked"`
}

type budgetStatusList struct {
	Items []struct {
		Namespace       string `json:"namespace"`
		Name            string `json:"name"`
		AllowedTogether int32  `json:"allowedTogether"`
		Domains         []struct {
			Name     string `json:"name"`
			Healthy  int32  `json:"healthy"`
			Expected int32  `json:"expected"`
			Desired  int32  `json:"desired"`
			Allowed  int32  `json:"allowed"`
			Waiting  bool   `json:"waiting"`
			InFlight int32  `json:"inFlight"`
		} `json:"domains"`
	} `json:"items"`
}

// canDrain runs `kubectl tdb can-drain NODES --ignore-daemonsets -o json`
// (plus extra flags) and checks the exit status against the document: 0
// exactly when all the pods can go together and drain has no error, else 1.
func canDrain(ctx context.Context, nodes []string, extra ...string) (*drainCheck, cmdResult) {
	args := append(append([]string{"can-drain"}, nodes...), "--ignore-daemonsets", "-o", "json")
	r := tdb(ctx, append(args, extra...)...)
	Expect(r.Exit).To(BeElementOf(0, 1), "can-drain failed:\n%s", r)
	dc := decode[drainCheck](r, "DrainCheck")
	Expect(dc.Nodes).To(ConsistOf(nodes), "nodes of the DrainCheck:\n%s", r)
	wantExit := 1
	if dc.AllowedTogether && len(dc.DrainErrors) == 0 {
		wantExit = 0
	}
	Expect(r.Exit).To(Equal(wantExit), "exit status vs allowedTogether=%v drainErrors=%q:\n%s", dc.AllowedTogether, dc.DrainErrors, r)
	return dc, r
}

// ---------------------------------------------------------------------------
// a spec's namespace and nodes

// pool is a spec's fixture.Pool, in namespace plugin-<name>.
type pool struct{ *fixture.Pool }

// newFixture makes the spec's namespace and nodesPerZone fresh nodes in each
// zone, and registers their removal.
func newFixture(ctx context.Context, name string, nodesPerZone int) *pool {
	f := &pool{fixture.NewPool(ctx, suiteEnv(), name, "plugin-"+name, nodesPerZone)}
	f.ReadyWithin = 2 * time.Minute
	return f
}

// labelNodes sets a label on nodes.
func labelNodes(ctx context.Context, key, value string, nodes ...string) {
	args := append(append([]string{"label", "nodes"}, nodes...), key+"="+value, "--overwrite")
	r := kubectl(ctx, args...)
	Expect(r.Exit).To(Equal(0), "%s", r)
}

// ---------------------------------------------------------------------------
// workloads

// createZoneStatefulSets creates, in each zone, a StatefulSet app-<zone> of
// perZone pods pinned to the zone and the spec's nodes, spread over the
// zone's schedulable nodes with maxSkew 1 (a hard constraint that ignores
// cordoned nodes, so that replacements can pile up on spare nodes): with as
// many pods as nodes, one pod per node; with 3 pods on 2 nodes, 2 and 1.
func (f *pool) createZoneStatefulSets(ctx context.Context, app string, perZone int32) {
	for _, z := range fixture.Zones {
		lbls := map[string]string{"app": app, "zone": z}
		sts := builders.StatefulSet(app+"-"+z).Namespace(f.NS).Labels(lbls).PodLabels(lbls).
			Containers(corev1.Container{Name: app, Image: app + ":e2e"}).
			RequireNodeLabel(fixture.PoolLabel, f.Name).RequireNodeLabel(kwokenv.ZoneKey, z).
			Spread(corev1.LabelHostname, corev1.DoNotSchedule).
			Replicas(perZone).ParallelPodManagement().Obj()
		for i := range sts.Spec.Template.Spec.TopologySpreadConstraints {
			sts.Spec.Template.Spec.TopologySpreadConstraints[i].NodeTaintsPolicy = ptr.To(corev1.NodeInclusionPolicyHonor)
		}
		Expect(k8s.Create(ctx, sts)).To(Succeed())
	}
}

// createDaemonSet runs a DaemonSet app on every node of the spec.
func (f *pool) createDaemonSet(ctx context.Context, app string) {
	lbls := map[string]string{"app": app}
	ds := builders.DaemonSet(app).Namespace(f.NS).Labels(lbls).PodLabels(lbls).
		Containers(corev1.Container{Name: app, Image: app + ":e2e"}).
		RequireNodeLabel(fixture.PoolLabel, f.Name).Obj()
	Expect(k8s.Create(ctx, ds)).To(Succeed())
}

func isDaemonSetPod(p *corev1.Pod) bool {
	ref := metav1.GetControllerOf(p)
	return ref != nil && ref.Kind == "DaemonSet"
}

// nodeWith is the spec's node of zone that holds exactly n of app's pods.
func (f *pool) nodeWith(ctx context.Context, app, zone string, n int) (string, []string) {
	on := f.PodsByNode(ctx, app)
	for _, node := range f.ZoneNodes(zone) {
		if len(on[node]) == n {
			return node, on[node]
		}
	}
	Fail(fmt.Sprintf("no node of %s holds %d pods of %s: %v", zone, n, app, on))
	return "", nil
}

// setReady turns a pod's readiness on or off, as a failing readiness probe
// would: kwok's pod stage only acts on Pending pods, so the change stays.
func (f *pool) setReady(ctx context.Context, pod string, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	Eventually(ctx, func() error {
		var p corev1.Pod
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: pod}, &p); err != nil {
			return err
		}
		now := metav1.Now()
		for i := range p.Status.Conditions {
			c := &p.Status.Conditions[i]
			if (c.Type == corev1.PodReady || c.Type == corev1.ContainersReady) && c.Status != status {
				c.Status, c.LastTransitionTime = status, now
			}
		}
		for i := range p.Status.ContainerStatuses {
			p.Status.ContainerStatuses[i].Ready = ready
		}
		return k8s.Status().Update(ctx, &p)
	}).Should(Succeed())
}

// ---------------------------------------------------------------------------
// budgets

// zoneTDB is a budget over app's pods with topologyKey zone and maxUnavailable.
func zoneTDB(app string, maxUnavailable intstr.IntOrString) policyv1alpha1.TopologyDisruptionBudgetSpec {
	return policyv1alpha1.TopologyDisruptionBudgetSpec{
		Selector:       policyv1alpha1.SetAsLabelSelector(map[string]string{"app": app}),
		TopologyKey:    kwokenv.ZoneKey,
		MaxUnavailable: ptr.To(maxUnavailable),
	}
}

// dom is what one domain of a budget's status should show.
type dom struct{ Healthy, Expected, Allowed int32 }

// allZones is the same numbers for every zone.
func allZones(d dom) map[string]dom {
	return map[string]dom{"zone-a": d, "zone-b": d, "zone-c": d}
}

// waitDomains waits until the budget's status is current, holds no
// eviction record and shows exactly these domains.
func (f *pool) waitDomains(ctx context.Context, name string, want map[string]dom) {
	Eventually(ctx, func(g Gomega) {
		var tdb policyv1alpha1.TopologyDisruptionBudget
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: f.NS, Name: name}, &tdb)).To(Succeed())
		st := tdb.Status
		g.Expect(st.ObservedGeneration).To(Equal(tdb.Generation), "observedGeneration of %s", name)
		g.Expect(st.DisruptedPods).To(BeEmpty(), "eviction records of %s", name)
		got := map[string]dom{}
		for _, d := range st.Domains {
			got[d.Name] = dom{d.CurrentHealthy, d.ExpectedPods, d.DisruptionsAllowed}
		}
		g.Expect(got).To(Equal(want), "domains of %s (healthy, expected, allowed)", name)
	}).WithTimeout(2 * time.Minute).Should(Succeed())
}

// snapshot is everything in the namespace an eviction decision depends on
// (pods, their nodes and readiness; the budgets' numbers and records), as
// one string: equal snapshots before and after a comparison mean nothing
// changed in between. blockedSince is left out: a refused dry run may set it.
func (f *pool) snapshot(ctx context.Context) string {
	var b strings.Builder
	for _, p := range f.Pods(ctx, "") {
		fmt.Fprintf(&b, "pod %s %s node=%s ready=%v deleting=%v\n", p.Name, p.UID, p.Spec.NodeName, kwokenv.PodReady(&p), p.DeletionTimestamp != nil)
	}
	var tdbs policyv1alpha1.TopologyDisruptionBudgetList
	Expect(k8s.List(ctx, &tdbs, client.InNamespace(f.NS))).To(Succeed())
	for _, t := range tdbs.Items {
		fmt.Fprintf(&b, "tdb %s gen=%d/%d records=%d", t.Name, t.Generation, t.Status.ObservedGeneration, len(t.Status.DisruptedPods))
		for _, d := range t.Status.Domains {
			fmt.Fprintf(&b, " %s:%d/%d/%d/%d", d.Name, d.CurrentHealthy, d.ExpectedPods, d.DesiredHealthy, d.DisruptionsAllowed)
		}
		b.WriteString("\n")
	}
	var pdbs policyv1.PodDisruptionBudgetList
	Expect(k8s.List(ctx, &pdbs, client.InNamespace(f.NS))).To(Succeed())
	for _, p := range pdbs.Items {
		st := p.Status
		fmt.Fprintf(&b, "pdb %s gen=%d/%d %d/%d/%d/%d disrupted=%d\n", p.Name, p.Generation, st.ObservedGeneration,
			st.CurrentHealthy, st.ExpectedPods, st.DesiredHealthy, st.DisruptionsAllowed, len(st.DisruptedPods))
	}
	var nodes corev1.NodeList
	Expect(k8s.List(ctx, &nodes, client.MatchingLabels{fixture.PoolLabel: f.Name})).To(Succeed())
	for _, n := range nodes.Items {
		fmt.Fprintf(&b, "node %s unschedulable=%v labels=%v\n", n.Name, n.Spec.Unschedulable, n.Labels)
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// the oracles

// dryRunEvict asks the API server whether the pod may be evicted now: a
// policy/v1 Eviction with DeleteOptions.DryRun [All], through the operator's
// webhook and core's PodDisruptionBudget check; nothing is charged. A 429 is
// "no"; any other error fails the spec.
func dryRunEvict(ctx context.Context, ns, name string) (bool, string) {
	err := fixture.Evict(ctx, cs, ns, name, true)
	switch {
	case err == nil:
		return true, "allowed"
	case apierrors.IsTooManyRequests(err):
		return false, err.Error()
	}
	Fail(fmt.Sprintf("dry-run eviction of %s/%s: neither allowed nor refused with 429: %v", ns, name, err))
	return false, ""
}

// drainDryRun is what `kubectl drain NODE --ignore-daemonsets
// --dry-run=server` said for each node (run for all nodes at once): the pods
// it would evict ("evicting pod ns/name" lines), the pods whose dry-run
// eviction was refused ("error when evicting ... will retry" lines), and
// the DaemonSet pods it said it ignores.
type drainDry struct {
	Evicting, Refused, IgnoredDaemonSetPods map[string]bool
	Output                                  string
}

var (
	evictingLine = regexp.MustCompile(`(?m)^evicting pod (\S+)/(\S+) \(server dry run\)$`)
	refusedLine  = regexp.MustCompile(`(?m)^error when evicting pods/"([^"]+)" -n "([^"]+)" \(will retry after`)
	ignoringLine = regexp.MustCompile(`(?m)ignoring DaemonSet-managed Pods: (.*)$`)
)

func drainDryRun(ctx context.Context, nodes []string, flags ...string) drainDry {
	out := drainDry{Evicting: map[string]bool{}, Refused: map[string]bool{}, IgnoredDaemonSetPods: map[string]bool{}}
	results := make([]cmdResult, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer GinkgoRecover()
			// A refused eviction is retried after 5 s; 3 s is enough for
			// every pod's first answer and ends the retries.
			args := append([]string{"drain", n, "--dry-run=server", "--timeout=3s"}, flags...)
			results[i] = kubectl(ctx, args...)
		}()
	}
	wg.Wait()
	for _, r := range results {
		text := r.Stdout + "\n" + r.Stderr
		out.Output += r.String() + "\n"
		for _, m := range evictingLine.FindAllStringSubmatch(text, -1) {
			out.Evicting[m[1]+"/"+m[2]] = true
		}
		for _, m := range refusedLine.FindAllStringSubmatch(text, -1) {
			out.Refused[m[2]+"/"+m[1]] = true
		}
		for _, m := range ignoringLine.FindAllStringSubmatch(text, -1) {
			for _, p := range strings.Split(m[1], ",") {
				out.IgnoredDaemonSetPods[strings.TrimSpace(p)] = true
			}
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// expectAgreement runs `kubectl tdb can-drain NODES --ignore-daemonsets -o
// json`, a server-side dry-run eviction of every pod it lists, and `kubectl
// drain NODE --ignore-daemonsets --dry-run=server` for each node, while the
// namespace holds still (the same snapshot before and after; otherwise the
// whole comparison is taken again), and asserts:
//   - every pod's evictableNow is the dry-run eviction's answer;
//   - the pods are exactly those kubectl drain would evict (and those on the
//     nodes, DaemonSet pods left out), each on the node it runs on;
//   - the pods drain's dry run was refused for are exactly those not
//     evictable now, and each of those names what blocks it;
//   - allowedTogether is false when some pod cannot go alone.
//
// It returns the plugin's answer and the dry-run answers by ns/name.
func (f *pool) expectAgreement(ctx context.Context, nodes []string) (*drainCheck, map[string]bool) {
	for attempt := 1; attempt <= 3; attempt++ {
		before := f.snapshot(ctx)
		dc, r := canDrain(ctx, nodes)
		dry := map[string]bool{}
		answers := map[string]string{}
		for _, p := range dc.Pods {
			dry[p.key()], answers[p.key()] = dryRunEvict(ctx, p.Namespace, p.Name)
		}
		drained := drainDryRun(ctx, nodes, "--ignore-daemonsets")
		if after := f.snapshot(ctx); after != before {
			GinkgoWriter.Printf("attempt %d: the namespace changed during the comparison; again\nbefore:\n%s\nafter:\n%s\n", attempt, before, after)
			time.Sleep(2 * time.Second)
			continue
		}

		onNodes, daemonSetPods := map[string]string{}, map[string]bool{}
		wanted := map[string]bool{}
		for _, n := range nodes {
			wanted[n] = true
		}
		for _, p := range f.Pods(ctx, "") {
			if !wanted[p.Spec.NodeName] {
				continue
			}
			if isDaemonSetPod(&p) {
				daemonSetPods[f.NS+"/"+p.Name] = true
				continue
			}
			onNodes[f.NS+"/"+p.Name] = p.Spec.NodeName
		}

		listed, notEvictable := map[string]bool{}, map[string]bool{}
		var mismatches []string
		for _, p := range dc.Pods {
			Expect(listed[p.key()]).To(BeFalse(), "pod %s listed twice:\n%s", p.key(), r)
			listed[p.key()] = true
			Expect(p.Node).To(Equal(onNodes[p.key()]), "node of %s:\n%s", p.key(), r)
			if !p.EvictableNow {
				notEvictable[p.key()] = true
				Expect(p.BlockedBy).NotTo(BeEmpty(), "%s is not evictable but names nothing that blocks it", p)
			}
			if p.EvictableNow != dry[p.key()] {
				mismatches = append(mismatches, fmt.Sprintf("%s\n      server dry-run eviction: %s", p, answers[p.key()]))
			}
		}
		GinkgoWriter.Printf("can-drain %v: %d pods, %d evictable now, allowedTogether=%v\n", nodes, len(dc.Pods), len(dc.Pods)-len(notEvictable), dc.AllowedTogether)
		Expect(mismatches).To(BeEmpty(), "evictableNow disagrees with the server's dry-run eviction:\n%s\n%s", strings.Join(mismatches, "\n"), r)
		Expect(keys(listed)).To(Equal(keys(drained.Evicting)), "pods listed vs pods `kubectl drain --dry-run=server` would evict:\n%s\n%s", r, drained.Output)
		Expect(keys(listed)).To(Equal(keys(mapOf(onNodes))), "pods listed vs the pods (no DaemonSet pod) on the nodes:\n%s", r)
		for p := range daemonSetPods {
			Expect(listed[p]).To(BeFalse(), "DaemonSet pod %s listed with --ignore-daemonsets", p)
			Expect(drained.IgnoredDaemonSetPods[p]).To(BeTrue(), "kubectl drain did not say it ignores DaemonSet pod %s:\n%s", p, drained.Output)
		}
		Expect(keys(notEvictable)).To(Equal(keys(drained.Refused)), "pods not evictable now vs pods kubectl drain's dry run was refused for:\n%s\n%s", r, drained.Output)
		if len(notEvictable) > 0 {
			Expect(dc.AllowedTogether).To(BeFalse(), "allowedTogether although %v cannot go alone:\n%s", keys(notEvictable), r)
		}
		return dc, dry
	}
	Fail("the namespace " + f.NS + " never held still for a comparison")
	return nil, nil
}

func mapOf(m map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// expectMixed asserts a scenario really has pods that may go and pods that
// may not (so the comparison could fail either way).
func expectMixed(dry map[string]bool) {
	yes, no := 0, 0
	for _, ok := range dry {
		if ok {
			yes++
		} else {
			no++
		}
	}
	Expect(yes).To(BeNumerically(">", 0), "the scenario has no evictable pod: %v", dry)
	Expect(no).To(BeNumerically(">", 0), "the scenario has no refused pod: %v", dry)
}

// expectWhy runs `kubectl tdb why POD -n NS -o json` and checks it against
// the server's dry-run eviction: exit 0 and evictableNow when allowed, exit
// 1 and not evictableNow when refused. It returns the document.
func (f *pool) expectWhy(ctx context.Context, pod string) *evictionCheck {
	r := tdb(ctx, "why", pod, "-n", f.NS, "-o", "json")
	Expect(r.Exit).To(BeElementOf(0, 1), "%s", r)
	ec := decode[evictionCheck](r, "EvictionCheck")
	Expect(ec.key()).To(Equal(f.NS+"/"+pod), "%s", r)
	allowed, answer := dryRunEvict(ctx, f.NS, pod)
	Expect(ec.EvictableNow).To(Equal(allowed), "why %s: evictableNow vs the server's dry-run eviction (%s):\n%s", pod, answer, r)
	if allowed {
		Expect(r.Exit).To(Equal(0), "%s", r)
	} else {
		Expect(r.Exit).To(Equal(1), "%s", r)
		Expect(ec.BlockedBy).NotTo(BeEmpty(), "%s", r)
	}
	return ec
}

// expectVerify runs can-drain --verify: the plugin's own server-side dry
// runs agree with its prediction, so it exits as without --verify (never 2).
func expectVerify(ctx context.Context, nodes []string, wantExit int) {
	args := append(append([]string{"can-drain"}, nodes...), "--ignore-daemonsets", "--verify")
	r := tdb(ctx, args...)
	Expect(r.Exit).To(Equal(wantExit), "--verify:\n%s", r)
}

// expectStatus runs `kubectl tdb status -A -o json` and `-n NS` and
// compares every TopologyDisruptionBudget of the cluster with its item:
// each domain's healthy, expected, desired and allowed. Taken again if a
// budget changed during the call.
func (f *pool) expectStatus(ctx context.Context) {
	for attempt := 1; attempt <= 3; attempt++ {
		var before, after policyv1alpha1.TopologyDisruptionBudgetList
		Expect(k8s.List(ctx, &before)).To(Succeed())
		r := tdb(ctx, "status", "-A", "-o", "json")
		Expect(k8s.List(ctx, &after)).To(Succeed())
		if !sameStatus(before, after) {
			time.Sleep(time.Second)
			continue
		}
		Expect(r.Exit).To(Equal(0), "%s", r)
		list := decode[budgetStatusList](r, "BudgetStatusList")
		items := map[string]int{}
		for i, it := range list.Items {
			items[it.Namespace+"/"+it.Name] = i
		}
		Expect(after.Items).NotTo(BeEmpty())
		for _, t := range after.Items {
			i, ok := items[t.Namespace+"/"+t.Name]
			Expect(ok).To(BeTrue(), "budget %s/%s missing from status -A:\n%s", t.Namespace, t.Name, r)
			got := map[string][4]int32{}
			for _, d := range list.Items[i].Domains {
				got[d.Name] = [4]int32{d.Healthy, d.Expected, d.Desired, d.Allowed}
			}
			want := map[string][4]int32{}
			for _, d := range t.Status.Domains {
				want[d.Name] = [4]int32{d.CurrentHealthy, d.ExpectedPods, d.DesiredHealthy, d.DisruptionsAllowed}
			}
			Expect(got).To(Equal(want), "domains of %s/%s as [healthy expected desired allowed]:\n%s", t.Namespace, t.Name, r)
		}

		rn := tdb(ctx, "status", "-n", f.NS, "-o", "json")
		Expect(rn.Exit).To(Equal(0), "%s", rn)
		var names, want []string
		for _, it := range decode[budgetStatusList](rn, "BudgetStatusList").Items {
			names = append(names, it.Namespace+"/"+it.Name)
		}
		for _, t := range after.Items {
			if t.Namespace == f.NS {
				want = append(want, t.Namespace+"/"+t.Name)
			}
		}
		Expect(names).To(ConsistOf(want), "status -n %s:\n%s", f.NS, rn)
		return
	}
	Fail("the budgets never held still for a status comparison")
}

func sameStatus(a, b policyv1alpha1.TopologyDisruptionBudgetList) bool {
	if len(a.Items) != len(b.Items) {
		return false
	}
	for i := range a.Items {
		if a.Items[i].UID != b.Items[i].UID || !equalDomains(a.Items[i].Status.Domains, b.Items[i].Status.Domains) {
			return false
		}
	}
	return true
}

func equalDomains(a, b []policyv1alpha1.DomainStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Name != y.Name || x.CurrentHealthy != y.CurrentHealthy || x.ExpectedPods != y.ExpectedPods ||
			x.DesiredHealthy != y.DesiredHealthy || x.DisruptionsAllowed != y.DisruptionsAllowed {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------------------
// kubectl drain

type drainResult struct {
	Node string
	cmdResult
	Elapsed time.Duration
}

var refusalLine = regexp.MustCompile(`(?m)^.*(Cannot evict pod|error when evicting).*$`)

// Refusals are the lines in which kubectl drain reports a refused eviction.
func (r drainResult) Refusals() []string {
	return refusalLine.FindAllString(r.Stdout+"\n"+r.Stderr, -1)
}

// drainAll runs one real `kubectl drain NODE --ignore-daemonsets
// --delete-emptydir-data --timeout=2m` per node, all at once, and returns
// when all have ended.
func drainAll(ctx context.Context, nodes []string) []drainResult {
	results := make([]drainResult, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer GinkgoRecover()
			start := time.Now()
			r := kubectl(ctx, "drain", n, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=2m")
			results[i] = drainResult{Node: n, cmdResult: r, Elapsed: time.Since(start)}
		}()
	}
	wg.Wait()
	for _, r := range results {
		GinkgoWriter.Printf("drain %s: exit %d after %s, %d refusal(s)\n", r.Node, r.Exit, r.Elapsed.Round(100*time.Millisecond), len(r.Refusals()))
	}
	return results
}
