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

// Package perfenv is what only the benchmarks under test/perf use on top of
// the local-cluster harness (test/kwokenv): a cluster populated at scale
// (Scale, UpScale), the PodRemover that ends pod deletions by UID as a
// kubelet does, and the commit a run measured.
package perfenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// This file populates a local cluster at scale (hundreds to thousands of
// nodes, thousands of pods) for the benchmarks that measure reads of a large
// cluster: many workloads over several namespaces, spread over the zones,
// with a TopologyDisruptionBudget or a policy/v1 PodDisruptionBudget each.
//
// What limits how fast it comes up is hack/cluster, which starts the
// control plane with kwokctl's defaults: kube-controller-manager's clients
// at --kube-api-qps 20 (burst 30), one client per controller, so that the
// ReplicaSet and the StatefulSet controllers each create about 20 pods a
// second (10,000 pods: about 4 minutes on 2 cores, most requests waiting on
// the client-side limiter), and kube-scheduler's at 50 (burst 100);
// kwok-controller has no limit. The nodes themselves take up.sh about 0.2 s
// each (it waits for them one by one with kubectl wait): about 3.5 minutes
// for 1,000 nodes.

// ScaleZones is the number of zones of a scale cluster.
const ScaleZones = 3

// ScaleLabel marks every object a Scale creates, with its Prefix as value.
const ScaleLabel = "scale.tdb.dev/population"

// ScaleSettings are the hack/cluster/up.sh settings of a scale cluster of
// nodes nodes: ScaleZones zones of nodes/ScaleZones nodes each (topUpNodes
// adds the rest) and pods Ready as soon as they are bound.
func ScaleSettings(nodes int) []string {
	return []string{
		"ZONES=" + strconv.Itoa(ScaleZones),
		"NODES_PER_ZONE=" + strconv.Itoa(nodes/ScaleZones),
		"POD_READY_DELAY=0",
	}
}

// UpScale brings up the named cluster with nodes nodes over ScaleZones zones
// (ScaleSettings, then topUpNodes). Unless reuse, a cluster of that name is
// torn down first, so that the cluster is fresh; with reuse an existing
// cluster is kept with what runs on it (up.sh only adds missing nodes).
// extra are more hack/cluster settings (e.g. ExternalPodRemoval).
func UpScale(ctx context.Context, name string, nodes int, reuse bool, extra ...string) (*kwokenv.Cluster, error) {
	if !reuse {
		if err := (&kwokenv.Cluster{Name: name}).DownIfExists(); err != nil {
			return nil, err
		}
	}
	c, err := kwokenv.Up(name, append(ScaleSettings(nodes), extra...)...)
	if err != nil {
		return nil, err
	}
	return c, topUpNodes(ctx, c, nodes)
}

// topUpNodes adds nodes, one zone after the other (zone-a first), until the
// cluster has n nodes: up.sh makes the same number in every zone.
func topUpNodes(ctx context.Context, c *kwokenv.Cluster, n int) error {
	k8s, err := kwokenv.NewClient(c.Kubeconfig)
	if err != nil {
		return err
	}
	var nodes corev1.NodeList
	if err := k8s.List(ctx, &nodes); err != nil {
		return err
	}
	for i := len(nodes.Items); i < n; i++ {
		zone := "zone-" + string(rune('a'+(i%ScaleZones)))
		if _, err := c.AddNodes(zone, 1); err != nil {
			return err
		}
	}
	return nil
}

// ScaleSpec is the population of a scale cluster.
type ScaleSpec struct {
	// Prefix names the namespaces, <prefix>-00, <prefix>-01, ... (default
	// "scale"), and is the value of ScaleLabel on every object.
	Prefix string
	// Namespaces (default 10) hold the Workloads round-robin.
	Namespaces int
	// Workloads (default 100) alternate between StatefulSets (Parallel, so
	// that their pods are created at once) and Deployments, all spread over
	// the zones with maxSkew 1 (DoNotSchedule) and over nodes (ScheduleAnyway).
	Workloads int
	// Pods is the number of pods in all, the DaemonSet's included: the
	// Workloads share what the DaemonSet leaves, as evenly as possible.
	Pods int
	// Nodes is the number of nodes of the cluster: the DaemonSet's pods.
	Nodes int
	// DaemonSet adds one DaemonSet (a pod on every node, no budget) in the
	// first namespace.
	DaemonSet bool
	// PDBEvery, when positive, gives every PDBEvery-th workload a policy/v1
	// PodDisruptionBudget instead of a TopologyDisruptionBudget.
	PDBEvery int
	// ZonePinned makes every other StatefulSet a zone-pinned one (all its
	// pods in one zone, the zones taken in turn, as Mimir's ingester-zone-a,
	// -b, -c), the rest staying spread.
	ZonePinned bool
}

// ScaleWorkload is one workload of a Scale.
type ScaleWorkload struct {
	// Kind is StatefulSet, Deployment or DaemonSet.
	Kind            string
	Namespace, Name string
	// Replicas are its pods (for the DaemonSet: Spec.Nodes).
	Replicas int
	// Zone is the one zone of a zone-pinned StatefulSet ("": spread).
	Zone string
	// Budget describes its budget ("" for none).
	Budget string

	obj client.Object
}

// Scale is a planned population: its objects, created by CreateWorkloads
// and CreateBudgets.
type Scale struct {
	Spec       ScaleSpec
	Namespaces []string
	Workloads  []ScaleWorkload
	TDBs       []*policyv1alpha1.TopologyDisruptionBudget
	PDBs       []*policyv1.PodDisruptionBudget
}

// PlanScale plans the population of spec (with its defaults filled in):
// Workloads StatefulSets and Deployments, one app label each (app=<name>),
// and a budget for each on its app label. The TopologyDisruptionBudgets
// take turns: maxUnavailable 1 per zone; maxUnavailable 10% per zone;
// minAvailable 90% per zone with maxDisruptedDomains 1. The
// PodDisruptionBudgets (PDBEvery) take turns between maxUnavailable 1 and
// minAvailable 90%.
func PlanScale(spec ScaleSpec) (*Scale, error) {
	if spec.Prefix == "" {
		spec.Prefix = "scale"
	}
	if spec.Namespaces <= 0 {
		spec.Namespaces = 10
	}
	if spec.Workloads <= 0 {
		spec.Workloads = 100
	}
	perWorkload := spec.Pods
	if spec.DaemonSet {
		perWorkload -= spec.Nodes
	}
	if perWorkload < spec.Workloads {
		return nil, fmt.Errorf("%d pods (%d for the DaemonSet on %d nodes) leave fewer than one pod for each of %d workloads", spec.Pods, spec.Pods-perWorkload, spec.Nodes, spec.Workloads)
	}
	s := &Scale{Spec: spec}
	for i := range spec.Namespaces {
		s.Namespaces = append(s.Namespaces, fmt.Sprintf("%s-%02d", spec.Prefix, i))
	}
	lbl := map[string]string{ScaleLabel: spec.Prefix}
	tdbTurn, pdbTurn := 0, 0
	for i := range spec.Workloads {
		ns := s.Namespaces[i%spec.Namespaces]
		replicas := perWorkload / spec.Workloads
		if i < perWorkload%spec.Workloads {
			replicas++
		}
		w := ScaleWorkload{Namespace: ns, Replicas: replicas}
		// The pods and the workload carry ScaleLabel too (withPods).
		p := kwokenv.Pods{Namespace: ns, Labels: lbl, ZoneSpread: corev1.DoNotSchedule}
		if i%2 == 0 {
			w.Kind, w.Name = "StatefulSet", fmt.Sprintf("sts-%03d", i)
			if spec.ZonePinned && i%4 == 0 {
				w.Zone = "zone-" + string(rune('a'+(i/4)%ScaleZones))
				p.Zone, p.ZoneSpread = w.Zone, ""
			}
			p.App = w.Name
			w.obj = kwokenv.OnDeleteStatefulSet(p, w.Name, int32(replicas), "")
		} else {
			w.Kind, w.Name = "Deployment", fmt.Sprintf("deploy-%03d", i)
			p.App = w.Name
			w.obj = kwokenv.RollingDeployment(p, w.Name, int32(replicas), 1, 0)
		}
		sel := map[string]string{"app": w.Name}
		meta := metav1.ObjectMeta{Namespace: ns, Name: w.Name, Labels: lbl}
		if spec.PDBEvery > 0 && i%spec.PDBEvery == spec.PDBEvery-1 {
			pdb := &policyv1.PodDisruptionBudget{ObjectMeta: meta, Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}}}
			if pdbTurn%2 == 0 {
				pdb.Spec.MaxUnavailable, w.Budget = ptr.To(intstr.FromInt32(1)), "PDB maxUnavailable 1"
			} else {
				pdb.Spec.MinAvailable, w.Budget = ptr.To(intstr.FromString("90%")), "PDB minAvailable 90%"
			}
			pdbTurn++
			s.PDBs = append(s.PDBs, pdb)
		} else {
			tdb := &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: meta, Spec: policyv1alpha1.TopologyDisruptionBudgetSpec{
				Selector: policyv1alpha1.SetAsLabelSelector(sel), TopologyKey: kwokenv.ZoneKey}}
			switch tdbTurn % 3 {
			case 0:
				tdb.Spec.MaxUnavailable, w.Budget = ptr.To(intstr.FromInt32(1)), "TDB maxUnavailable 1 per zone"
			case 1:
				tdb.Spec.MaxUnavailable, w.Budget = ptr.To(intstr.FromString("10%")), "TDB maxUnavailable 10% per zone"
			default:
				tdb.Spec.MinAvailable, tdb.Spec.MaxDisruptedDomains = ptr.To(intstr.FromString("90%")), ptr.To[int32](1)
				w.Budget = "TDB minAvailable 90% per zone, maxDisruptedDomains 1"
			}
			tdbTurn++
			s.TDBs = append(s.TDBs, tdb)
		}
		s.Workloads = append(s.Workloads, w)
	}
	if spec.DaemonSet {
		w := ScaleWorkload{Kind: "DaemonSet", Namespace: s.Namespaces[0], Name: "node-agent", Replicas: spec.Nodes}
		w.obj = kwokenv.OnDeleteDaemonSet(kwokenv.Pods{Namespace: w.Namespace, App: w.Name, Labels: lbl}, w.Name, "")
		s.Workloads = append(s.Workloads, w)
	}
	return s, nil
}

// EquivalentPDBs are the policy/v1 PodDisruptionBudgets closest to the
// TopologyDisruptionBudgets, one per budget with its name, selector and
// labels: maxUnavailable 1 per zone becomes maxUnavailable 1, 10% per zone
// maxUnavailable 10%, and minAvailable 90% per zone (maxDisruptedDomains 1)
// minAvailable 90%. A PDB counts the whole workload: it cannot keep
// evictions out of a zone, nor spread them over the zones.
func (s *Scale) EquivalentPDBs() []*policyv1.PodDisruptionBudget {
	out := make([]*policyv1.PodDisruptionBudget, 0, len(s.TDBs))
	for _, t := range s.TDBs {
		pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: t.Namespace, Name: t.Name, Labels: t.Labels},
			Spec: policyv1.PodDisruptionBudgetSpec{
				Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": t.Name}}, // the workload's, as the TDB's
				MinAvailable:   t.Spec.MinAvailable,
				MaxUnavailable: t.Spec.MaxUnavailable,
			}}
		out = append(out, pdb)
	}
	return out
}

// Pods is the number of pods of the population.
func (s *Scale) Pods() int {
	n := 0
	for _, w := range s.Workloads {
		n += w.Replicas
	}
	return n
}

// Describe sums the population up in a few lines.
func (s *Scale) Describe() string {
	kinds, budgets := map[string]int{}, map[string]int{}
	for _, w := range s.Workloads {
		kinds[w.Kind]++
		if w.Budget != "" {
			budgets[w.Budget]++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d pods in %d namespaces (%s-*): %s\n", s.Pods(), len(s.Namespaces), s.Spec.Prefix, countList(kinds))
	fmt.Fprintf(&b, "budgets: %s\n", countList(budgets))
	return b.String()
}

func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}

// CreateWorkloads creates the namespaces, waits for their default
// ServiceAccounts (pods are refused without one) and creates the
// workloads. What exists already is left as it is, so that a kept cluster
// can be populated again.
func (s *Scale) CreateWorkloads(ctx context.Context, k8s client.Client) error {
	var objs []client.Object
	for _, ns := range s.Namespaces {
		objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{ScaleLabel: s.Spec.Prefix}}})
	}
	if err := createAll(ctx, k8s, objs); err != nil {
		return err
	}
	for _, ns := range s.Namespaces {
		err := pollUntil(ctx, 200*time.Millisecond, 2*time.Minute, func() (bool, error) {
			err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: "default"}, &corev1.ServiceAccount{})
			return err == nil, client.IgnoreNotFound(err)
		})
		if err != nil {
			return fmt.Errorf("the default ServiceAccount of %s: %w", ns, err)
		}
	}
	objs = objs[:0]
	for _, w := range s.Workloads {
		objs = append(objs, w.obj.DeepCopyObject().(client.Object))
	}
	return createAll(ctx, k8s, objs)
}

// CreateBudgets creates the TopologyDisruptionBudgets and the
// PodDisruptionBudgets (existing ones are left as they are).
func (s *Scale) CreateBudgets(ctx context.Context, k8s client.Client) error {
	var objs []client.Object
	for _, t := range s.TDBs {
		objs = append(objs, t.DeepCopy())
	}
	for _, p := range s.PDBs {
		objs = append(objs, p.DeepCopy())
	}
	return createAll(ctx, k8s, objs)
}

// createAll creates objs with a few requests in flight, ignoring those that
// exist.
func createAll(ctx context.Context, k8s client.Client, objs []client.Object) error {
	work := make(chan client.Object)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for o := range work {
				if err := k8s.Create(ctx, o); err != nil && !apierrors.IsAlreadyExists(err) {
					mu.Lock()
					errs = append(errs, fmt.Errorf("creating %T %s/%s: %w", o, o.GetNamespace(), o.GetName(), err))
					mu.Unlock()
				}
			}
		}()
	}
	for _, o := range objs {
		work <- o
	}
	close(work)
	wg.Wait()
	return errors.Join(errs...)
}

// ReadyPods sums the Ready pods the workloads report in their status, with
// a list of each kind (three requests, whatever the number of pods).
func (s *Scale) ReadyPods(ctx context.Context, k8s client.Client) (int, error) {
	sel := client.MatchingLabels{ScaleLabel: s.Spec.Prefix}
	ready := 0
	var stss appsv1.StatefulSetList
	if err := k8s.List(ctx, &stss, sel); err != nil {
		return 0, err
	}
	for _, o := range stss.Items {
		ready += int(min(o.Status.ReadyReplicas, ptr.Deref(o.Spec.Replicas, 1)))
	}
	var deps appsv1.DeploymentList
	if err := k8s.List(ctx, &deps, sel); err != nil {
		return 0, err
	}
	for _, o := range deps.Items {
		ready += int(min(o.Status.ReadyReplicas, ptr.Deref(o.Spec.Replicas, 1)))
	}
	var dss appsv1.DaemonSetList
	if err := k8s.List(ctx, &dss, sel); err != nil {
		return 0, err
	}
	for _, o := range dss.Items {
		ready += int(min(o.Status.NumberReady, int32(s.Spec.Nodes)))
	}
	return ready, nil
}

// PodCount is what CountPods found.
type PodCount struct {
	// All pods of the population's namespaces; Ready those Running, Ready
	// and not being deleted; Unscheduled those without a node.
	All, Ready, Unscheduled int
	// PerNode counts the pods on each node.
	PerNode map[string]int
}

// CountPods lists the pods of the population's namespaces, 500 at a time.
func (s *Scale) CountPods(ctx context.Context, k8s client.Client) (PodCount, error) {
	out := PodCount{PerNode: map[string]int{}}
	cont := ""
	for {
		var pods corev1.PodList
		if err := k8s.List(ctx, &pods, client.MatchingLabels{ScaleLabel: s.Spec.Prefix}, client.Limit(500), client.Continue(cont)); err != nil {
			return out, err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			out.All++
			if p.Spec.NodeName == "" {
				out.Unscheduled++
			} else {
				out.PerNode[p.Spec.NodeName]++
			}
			if kwokenv.PodReady(p) {
				out.Ready++
			}
		}
		if cont = pods.Continue; cont == "" {
			return out, nil
		}
	}
}

// WaitReady waits until every pod of the population is Running and Ready:
// it follows the workloads' status (ReadyPods) every 2 s, printing progress
// to progress every 15 s, then checks the pods themselves (CountPods). It
// returns how long the pods took. (While kube-controller-manager is
// throttled, the workloads' status lags behind their pods: a controller
// writes it between its batches of creations.)
func (s *Scale) WaitReady(ctx context.Context, k8s client.Client, timeout time.Duration, progress io.Writer) (time.Duration, error) {
	start := time.Now()
	want := s.Pods()
	lastPrint, lastReady := start, 0
	for {
		ready, err := s.ReadyPods(ctx, k8s)
		if err != nil {
			return time.Since(start), err
		}
		if ready >= want {
			c, err := s.CountPods(ctx, k8s)
			if err != nil {
				return time.Since(start), err
			}
			if c.Ready == want && c.All == want {
				return time.Since(start), nil
			}
			_, _ = fmt.Fprintf(progress, "   workloads report %d Ready pods; the pods: %d, %d Running and Ready, %d unscheduled\n", ready, c.All, c.Ready, c.Unscheduled)
		}
		if time.Since(start) > timeout {
			return time.Since(start), fmt.Errorf("%d of %d pods Ready after %s", ready, want, timeout)
		}
		if now := time.Now(); now.Sub(lastPrint) >= 15*time.Second {
			_, _ = fmt.Fprintf(progress, "   %4.0fs: %d/%d pods Ready (%.0f/s)\n", now.Sub(start).Seconds(), ready, want,
				float64(ready-lastReady)/now.Sub(lastPrint).Seconds())
			lastPrint, lastReady = now, ready
		}
		select {
		case <-ctx.Done():
			return time.Since(start), ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// WaitBudgetsObserved waits until every TopologyDisruptionBudget of the
// population has a status for its generation (status.observedGeneration ==
// metadata.generation) and every PodDisruptionBudget too. It returns the
// budgets' expected and healthy pods summed, from their status.
func (s *Scale) WaitBudgetsObserved(ctx context.Context, k8s client.Client, timeout time.Duration) (expected, healthy int, err error) {
	sel := client.MatchingLabels{ScaleLabel: s.Spec.Prefix}
	var behind []string
	err = pollUntil(ctx, time.Second, timeout, func() (bool, error) {
		behind, expected, healthy = nil, 0, 0
		var tdbs policyv1alpha1.TopologyDisruptionBudgetList
		if err := k8s.List(ctx, &tdbs, sel); err != nil {
			return false, err
		}
		var pdbs policyv1.PodDisruptionBudgetList
		if err := k8s.List(ctx, &pdbs, sel); err != nil {
			return false, err
		}
		seen := 0
		for _, t := range tdbs.Items {
			seen++
			if t.Generation == 0 || t.Status.ObservedGeneration != t.Generation {
				behind = append(behind, "tdb "+t.Namespace+"/"+t.Name)
			}
			expected += int(t.Status.ExpectedPods)
			healthy += int(t.Status.CurrentHealthy)
		}
		for _, p := range pdbs.Items {
			seen++
			if p.Generation == 0 || p.Status.ObservedGeneration != p.Generation {
				behind = append(behind, "pdb "+p.Namespace+"/"+p.Name)
			}
			expected += int(p.Status.ExpectedPods)
			healthy += int(p.Status.CurrentHealthy)
		}
		if want := len(s.TDBs) + len(s.PDBs); seen != want {
			behind = append(behind, fmt.Sprintf("%d of %d budgets exist", seen, want))
		}
		return len(behind) == 0, nil
	})
	if err != nil && len(behind) > 0 {
		err = fmt.Errorf("%w: %d budgets without a status for their generation, e.g. %s", err, len(behind), behind[0])
	}
	return expected, healthy, err
}

// pollUntil calls cond every interval until it returns true or an error, or
// timeout passes.
func pollUntil(ctx context.Context, interval, timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not done within %s", timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
	}
}

// NodesSpread returns n of the nodes evenly spaced in the order of zone and
// number (kwok-zone-a-1, kwok-zone-a-2, ..., kwok-zone-b-1, ...), so that
// every zone has its share.
func NodesSpread(nodes []corev1.Node, n int) []string {
	sorted := append([]corev1.Node(nil), nodes...)
	num := func(name string) int {
		i, _ := strconv.Atoi(name[strings.LastIndexByte(name, '-')+1:])
		return i
	}
	sort.Slice(sorted, func(i, j int) bool {
		zi, zj := sorted[i].Labels[kwokenv.ZoneKey], sorted[j].Labels[kwokenv.ZoneKey]
		if zi != zj {
			return zi < zj
		}
		if ni, nj := num(sorted[i].Name), num(sorted[j].Name); ni != nj {
			return ni < nj
		}
		return sorted[i].Name < sorted[j].Name
	})
	n = min(n, len(sorted))
	out := make([]string, 0, n)
	for i := range n {
		out = append(out, sorted[i*len(sorted)/n].Name)
	}
	return out
}
