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

// Command demo is tdb-operator's main job, end to end: on a local kwok
// cluster with the real kube-apiserver, controller-manager and scheduler, it
// runs the operator as a local process, deploys 24 ingesters over three zones
// (one StatefulSet per zone) with a budget of maxUnavailable 2 per zone and
// maxDisruptedDomains 1, and drains every node at once with concurrent
// `kubectl drain` processes while new nodes are added. It prints the per-zone
// status and the refusals as it goes, then a summary, and exits non-zero if
// the budget was ever exceeded or a drain failed.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"

	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

const (
	ns      = "mimir"
	perZone = 8
)

var zones = []string{"zone-a", "zone-b", "zone-c"}

func main() {
	teardown := flag.Bool("teardown", false, "Tear the cluster down at the end.")
	cluster := flag.String("cluster", "tdb-demo", "Name of the local cluster.")
	flag.Parse()
	if err := run(*cluster, *teardown); err != nil {
		fmt.Fprintln(os.Stderr, "demo failed:", err)
		os.Exit(1)
	}
}

func run(name string, teardown bool) error {
	start := time.Now()
	c, op, k8s, err := bringUp(name)
	if teardown && c != nil {
		defer func() { _ = c.Down() }()
	}
	if op != nil {
		defer op.Stop()
	}
	if err != nil {
		return err
	}
	ctx := context.Background()
	originals, err := nodeNames(ctx, k8s)
	if err != nil {
		return err
	}
	if err := askPlugin(c, originals); err != nil {
		return err
	}
	w := &kwokenv.Watcher{Client: k8s, NS: ns, Selector: labels.SelectorFromSet(labels.Set{"app": "ingester"}),
		Expected: func(context.Context) (map[string]int, error) {
			return map[string]int{"zone-a": perZone, "zone-b": perZone, "zone-c": perZone}, nil
		}}
	watch := kwokenv.StartSampler(w.Unavailable, 0, nil)
	d := drainAll(ctx, c, k8s, originals)
	return summarize(d, watch.Stop(), start, c, name, teardown)
}

// bringUp starts a fresh cluster, the operator as a local process, and
// the demo's workload and budget. The cluster is returned even on error
// once it is up, so that the caller can tear it down.
func bringUp(name string) (*kwokenv.Cluster, *kwokenv.Operator, client.Client, error) {
	fmt.Println(">> bringing up a fresh local cluster: 3 zones x 4 kwok nodes, real kube-apiserver, controller-manager and scheduler " + kwokenv.KubeVersion())
	// A previous run leaves its cluster drained: start from a clean one.
	if err := (&kwokenv.Cluster{Name: name}).DownIfExists(); err != nil {
		return nil, nil, nil, err
	}
	c, err := kwokenv.Up(name, "ZONES=3", "NODES_PER_ZONE=4", "POD_READY_DELAY=2s")
	if err != nil {
		return nil, nil, nil, err
	}
	if _, err := kwokenv.BuildManager(); err != nil {
		return c, nil, nil, err
	}
	fmt.Println(">> starting the operator as a local process (webhook at https://127.0.0.1:9443/validate-eviction)")
	op, err := kwokenv.StartOperator(c, kwokenv.OperatorOptions{})
	if err != nil {
		return c, nil, nil, err
	}
	fmt.Printf("   operator log: %s\n", op.LogPath)
	k8s, err := kwokenv.NewClient(c.Kubeconfig)
	if err == nil {
		err = deploy(context.Background(), k8s)
	}
	if err != nil {
		return c, op, nil, err
	}
	fmt.Println(">> 24 ingesters Ready; budget mimir/ingesters: maxUnavailable 2 per zone, maxDisruptedDomains 1")
	return c, op, k8s, nil
}

// nodeNames lists the cluster's nodes, sorted.
func nodeNames(ctx context.Context, k8s client.Client) ([]string, error) {
	var nodes corev1.NodeList
	if err := k8s.List(ctx, &nodes); err != nil {
		return nil, err
	}
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
	}
	sort.Strings(names)
	return names, nil
}

// drained is how the concurrent drains went.
type drained struct {
	nodes    []string
	errs     []error
	refusals int64
	// start is when the drains started.
	start time.Time
}

// drainAll drains every node at once, one kubectl drain each, while four
// new nodes per zone are added, printing the budget every 4 s.
func drainAll(ctx context.Context, c *kwokenv.Cluster, k8s client.Client, nodes []string) drained {
	fmt.Printf(">> draining all %d nodes at once (%d kubectl drain processes) while 4 new nodes per zone are added\n", len(nodes), len(nodes))
	var refusals atomic.Int64
	var lastRefusal atomic.Value
	lastRefusal.Store("")
	drainCtx, cancelDrains := context.WithTimeout(ctx, 8*time.Minute)
	defer cancelDrains()
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i, node := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = drain(drainCtx, c, node, func(line string) {
				refusals.Add(1)
				lastRefusal.Store(line)
			})
		}()
	}
	go func() {
		time.Sleep(3 * time.Second)
		for _, z := range zones {
			if _, err := c.AddNodes(z, 4); err != nil {
				fmt.Fprintln(os.Stderr, "adding nodes:", err)
			}
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(4 * time.Second)
	defer tick.Stop()
	start := time.Now()
loop:
	for {
		select {
		case <-done:
			break loop
		case <-tick.C:
			printStatus(ctx, k8s, time.Since(start), refusals.Load(), lastRefusal.Load().(string))
		}
	}
	// Let the last replacements become Ready before the final sample.
	time.Sleep(4 * time.Second)
	printStatus(ctx, k8s, time.Since(start), refusals.Load(), "")
	return drained{nodes: nodes, errs: errs, refusals: refusals.Load(), start: start}
}

// summarize prints the outcome, and fails if the budget was exceeded or a
// drain failed.
func summarize(d drained, report kwokenv.SampleReport, start time.Time, c *kwokenv.Cluster, name string, teardown bool) error {
	failed := 0
	for i, err := range d.errs {
		if err != nil {
			failed++
			fmt.Printf("   drain of %s failed: %v\n", d.nodes[i], err)
		}
	}
	held := report.MaxDisruptedZones <= 1
	for _, u := range report.MaxZone {
		held = held && u <= 2
	}
	fmt.Printf("\n== summary\n")
	fmt.Printf("drained %d nodes in %s (total %s), %d refusals (429) retried by kubectl drain, %d drain(s) failed\n",
		len(d.nodes)-failed, time.Since(d.start).Round(time.Second), time.Since(start).Round(time.Second), d.refusals, failed)
	fmt.Printf("observed by an independent watcher: %s\n", report)
	if held {
		fmt.Println("budget held: at most 2 pods unavailable per zone and at most 1 zone disrupted at any sample")
	} else {
		fmt.Println("BUDGET EXCEEDED")
	}
	if !teardown {
		fmt.Printf("\nthe cluster is still up: export KUBECONFIG=%s\ntear it down with: make cluster-down CLUSTER_NAME=%s\n", c.Kubeconfig, name)
	}
	switch {
	case !held:
		return errors.New("the budget was exceeded")
	case failed > 0:
		return fmt.Errorf("%d drain(s) failed", failed)
	}
	return nil
}

func deploy(ctx context.Context, k8s client.Client) error {
	if err := client.IgnoreAlreadyExists(k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})); err != nil {
		return err
	}
	for _, z := range zones {
		if err := client.IgnoreAlreadyExists(k8s.Create(ctx, statefulSet(z))); err != nil {
			return err
		}
	}
	tdb := builders.Budget("ingesters").Namespace(ns).MatchLabels(map[string]string{"app": "ingester"}).
		TopologyKey(kwokenv.ZoneKey).MaxUnavailable(intstr.FromInt32(2)).MaxDisruptedDomains(1).Obj()
	if err := client.IgnoreAlreadyExists(k8s.Create(ctx, tdb)); err != nil {
		return err
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var cur policyv1alpha1.TopologyDisruptionBudget
		err := k8s.Get(ctx, client.ObjectKeyFromObject(tdb), &cur)
		if err == nil && cur.Status.CurrentHealthy == 3*perZone && cur.Status.DisruptionsAllowed == 2 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the ingesters did not become Ready and counted within 3 minutes (status %+v)", cur.Status)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

func statefulSet(zone string) *appsv1.StatefulSet {
	return builders.StatefulSet("ingester-"+zone).Namespace(ns).Replicas(perZone).ParallelPodManagement().
		PodLabels(map[string]string{"app": "ingester", "zone": zone}).
		Containers(corev1.Container{Name: "ingester", Image: "ingester:demo",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{}}}).
		RequireNodeLabel(kwokenv.ZoneKey, zone).
		Spread("kubernetes.io/hostname", corev1.ScheduleAnyway).Obj()
}

// drain runs kubectl drain on node, calling refused for every refusal line
// kubectl prints (it retries those every 5 seconds).
func drain(ctx context.Context, c *kwokenv.Cluster, node string, refused func(string)) error {
	cmd := c.Kubectl(ctx, "drain", node, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=7m")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	cmd.Stdout = nil
	if err := cmd.Start(); err != nil {
		return err
	}
	sc := bufio.NewScanner(stderr)
	var tail []string
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "will retry after") {
			refused(line)
			continue
		}
		tail = append(tail, line)
	}
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.Join(tail, "; "))
	}
	return nil
}

func printStatus(ctx context.Context, k8s client.Client, elapsed time.Duration, refusals int64, lastRefusal string) {
	var cur policyv1alpha1.TopologyDisruptionBudget
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "ingesters"}, &cur); err != nil {
		fmt.Println("   (reading the budget:", err, ")")
		return
	}
	fmt.Printf("\n[%s] refusals so far: %d\n", elapsed.Round(time.Second), refusals)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "ZONE\tHEALTHY/EXPECTED\tALLOWED")
	for _, d := range cur.Status.Domains {
		_, _ = fmt.Fprintf(tw, "%s\t%d/%d\t%d\n", d.Name, d.CurrentHealthy, d.ExpectedPods, d.DisruptionsAllowed)
	}
	_ = tw.Flush()
	if lastRefusal != "" {
		if i := strings.Index(lastRefusal, "topology disruption budget"); i >= 0 {
			lastRefusal = lastRefusal[i:]
		}
		fmt.Printf("latest refusal: %s\n", lastRefusal)
	}
}

// askPlugin shows what kubectl tdb says before the drains: whether a zone's
// nodes can be drained at once, and in what waves all of them could be.
func askPlugin(c *kwokenv.Cluster, nodes []string) error {
	bin, err := kwokenv.BuildPlugin()
	if err != nil {
		return err
	}
	show := func(args ...string) error {
		fmt.Printf("$ kubectl tdb %s\n", strings.Join(args, " "))
		cmd := exec.Command(bin, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
		out, err := cmd.CombinedOutput()
		fmt.Print(kwokenv.Indent(string(out), "   "))
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			return nil // "no" is an answer
		}
		return err
	}
	var zoneA []string
	for _, n := range nodes {
		if strings.Contains(n, "zone-a") {
			zoneA = append(zoneA, n)
		}
	}
	fmt.Println(">> asking kubectl tdb (make plugin) before draining")
	if err := show(append([]string{"can-drain"}, zoneA[:2]...)...); err != nil {
		return err
	}
	return show(append([]string{"plan"}, nodes...)...)
}
