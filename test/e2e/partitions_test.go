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

package e2e_test

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/test/e2e/fixture"
	"github.com/tdb-operator/tdb-operator/test/kwokenv"
)

// ingesterPartitions is the small Mimir-like layout of these specs: 3 zones
// of 4 partitions on 2 nodes per zone.
const ingesterPartitions = 4

// partitionDrain is how one drain of every node of a layout went.
type partitionDrain struct {
	wall     time.Duration
	refusals int
	rep      kwokenv.PartitionReport
}

// ingesters deploys the layout of the spec's pool (StatefulSets
// ingester-zone-{a,b,c} of 4, pod ingester-zone-a-2 being partition 2's
// replica in zone-a) and waits for its pods to be Ready.
func (f *pool) ingesters(ctx context.Context) kwokenv.PartitionLayout {
	l := kwokenv.PartitionLayout{Namespace: f.NS, App: "ingester", Zones: fixture.Zones, Partitions: ingesterPartitions,
		NodeLabel: [2]string{fixture.PoolLabel, f.Name}, ReadyDelay: "2s"}
	for _, s := range l.StatefulSets() {
		Expect(k8s.Create(ctx, s)).To(Succeed())
	}
	f.WaitPodsReady(ctx, "ingester", l.Replicas())
	return l
}

// drainPartitions watches the layout with bounds, drains every node of the
// pool at once (one kubectl drain each) while as many new nodes arrive, and
// returns once the drains are done and every replica is up again.
func (f *pool) drainPartitions(ctx context.Context, l kwokenv.PartitionLayout, bounds kwokenv.PartitionBounds) partitionDrain {
	w, err := kwokenv.WatchPartitions(ctx, cs, l, bounds)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(w.Stop)
	nodes := f.AllNodes()
	By(fmt.Sprintf("%s: %d kubectl drains at once while %d new nodes arrive", f.NS, len(nodes), len(nodes)))
	start := time.Now()
	ch := startDrains(ctx, nodes, 3*time.Minute)
	f.AddNodes(ctx, len(nodes)/len(fixture.Zones))
	refusals := expectDrained(collect(ch, len(nodes), 4*time.Minute))
	Expect(w.WaitAllUp(ctx, 2*time.Minute)).To(Succeed())
	d := partitionDrain{wall: time.Since(start), refusals: refusals, rep: w.Stop()}
	GinkgoWriter.Printf("%s: drained in %s, %d refusals (429) retried; watcher: %s\ntimeline:\n%s",
		f.NS, d.wall.Round(100*time.Millisecond), refusals, d.rep, kwokenv.Indent(d.rep.Timeline, "  "))
	Expect(d.rep.Events).To(BeNumerically(">=", 2*l.Replicas()), "the watcher saw too few pod events")
	Expect(d.rep.Violations).To(BeZero(), "a budget was exceeded: %s", d.rep)
	return d
}

// partitionNames are the domains of a partition budget over the layout.
func partitionNames() []string {
	out := make([]string, ingesterPartitions)
	for p := range out {
		out[p] = strconv.Itoa(p)
	}
	return out
}

var _ = Describe("Partitioned replicas (Mimir-like ingesters: one replica of each partition per zone)", func() {
	It("every node drained at once: one replica per partition is never exceeded and drains faster than one PDB over all",
		SpecTimeout(6*time.Minute), func(ctx SpecContext) {
			By("(a) a partition budget: ingester-zone-[a-z]-([0-9]+), maxUnavailable 1")
			fa := newFixture(ctx, "parts-a", 2)
			la := fa.ingesters(ctx)
			fa.CreateTDB(ctx, "ingesters", la.ByPartition(1, 0))
			fa.waitTDB(ctx, "ingesters", tdbWant{Expected: 12, Healthy: 12, Allowed: ingesterPartitions, Domains: partitionNames()})
			a := fa.drainPartitions(ctx, la, kwokenv.PartitionBounds{PerPartition: 1, Zones: -1, Total: -1})
			Expect(a.rep.MaxPartitionDown).To(Equal(1), "%s", a.rep)
			fa.waitTDB(ctx, "ingesters", tdbWant{Expected: 12, Healthy: 12, Allowed: ingesterPartitions, Domains: partitionNames()})

			By("(c) one policy/v1 PodDisruptionBudget, maxUnavailable 1 over all ingesters")
			fc := newFixture(ctx, "parts-c", 2)
			lc := fc.ingesters(ctx)
			Expect(k8s.Create(ctx, lc.OnePDB("ingesters"))).To(Succeed())
			fc.WaitPDB(ctx, "ingesters", 12, 12, 1)
			c := fc.drainPartitions(ctx, lc, kwokenv.PartitionBounds{PerPartition: -1, Zones: -1, Total: 1})

			GinkgoWriter.Printf("wall time: (a) partition budget %s, (c) one PDB %s: (a) %.1fx faster; zones degraded at once: (a) %d, (c) %d\n",
				a.wall.Round(100*time.Millisecond), c.wall.Round(100*time.Millisecond), c.wall.Seconds()/a.wall.Seconds(),
				a.rep.MaxZonesDegraded, c.rep.MaxZonesDegraded)
			Expect(a.wall).To(BeNumerically("<", c.wall), "the partition budget should drain faster than one PDB over all")
		})

	It("a partition budget and a zone budget over the same pods (one replica per partition, at most 2 zones): both held, every eviction charged to both",
		SpecTimeout(4*time.Minute), func(ctx SpecContext) {
			f := newFixture(ctx, "parts-zones", 2)
			l := f.ingesters(ctx)
			records := watchRecords(ctx, f.NS)
			f.CreateTDB(ctx, "by-partition", l.ByPartition(1, 0))
			f.CreateTDB(ctx, "by-zone", l.ByZone(2))
			f.waitTDB(ctx, "by-partition", tdbWant{Expected: 12, Healthy: 12, Allowed: ingesterPartitions, Domains: partitionNames()})
			f.waitTDB(ctx, "by-zone", tdbWant{Expected: 12, Healthy: 12, Allowed: 2 * ingesterPartitions, Domains: fixture.Zones})

			d := f.drainPartitions(ctx, l, kwokenv.PartitionBounds{PerPartition: 1, Zones: 2, Total: -1})
			// At least once: a replacement the scheduler put on an old node
			// not cordoned yet is evicted again by that node's drain.
			Expect(len(d.rep.Deleted)).To(BeNumerically(">=", l.Replicas()), "every replica should have been evicted: %s", d.rep)
			f.waitTDB(ctx, "by-partition", tdbWant{Expected: 12, Healthy: 12, Allowed: ingesterPartitions, Domains: partitionNames()})
			f.waitTDB(ctx, "by-zone", tdbWant{Expected: 12, Healthy: 12, Allowed: 2 * ingesterPartitions, Domains: fixture.Zones})

			By("every evicted pod is in both budgets' records: charged to both, never to one")
			byPartition, byZone := records.seen("by-partition"), records.seen("by-zone")
			for _, uid := range d.rep.Deleted {
				Expect(byPartition).To(HaveKey(uid), "pod %s was evicted without a record in by-partition", uid)
				Expect(byZone).To(HaveKey(uid), "pod %s was evicted without a record in by-zone", uid)
			}
			GinkgoWriter.Printf("records: %d in by-partition, %d in by-zone, %d evicted pods; recorded in one budget only (a partial charge undone): %v\n",
				len(byPartition), len(byZone), len(d.rep.Deleted), onlyInOne(byPartition, byZone))
		})
})

// recordWatcher collects, from an informer of its own, every eviction
// record (by pod UID) each budget of a namespace ever showed in its status.
type recordWatcher struct {
	mu   sync.Mutex
	byTB map[string]map[types.UID]bool
}

// watchRecords starts a recordWatcher on the budgets of ns until the spec
// ends.
func watchRecords(ctx context.Context, ns string) *recordWatcher {
	cfg, err := clientcmd.BuildConfigFromFlags("", cluster.Kubeconfig)
	Expect(err).NotTo(HaveOccurred())
	c, err := crcache.New(cfg, crcache.Options{Scheme: k8s.Scheme(), DefaultNamespaces: map[string]crcache.Config{ns: {}}})
	Expect(err).NotTo(HaveOccurred())
	inf, err := c.GetInformer(ctx, &policyv1alpha1.TopologyDisruptionBudget{})
	Expect(err).NotTo(HaveOccurred())
	r := &recordWatcher{byTB: map[string]map[types.UID]bool{}}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    r.observe,
		UpdateFunc: func(_, o any) { r.observe(o) },
	})
	Expect(err).NotTo(HaveOccurred())
	cctx, cancel := context.WithCancel(context.Background())
	DeferCleanup(cancel)
	go func() { _ = c.Start(cctx) }()
	Expect(c.WaitForCacheSync(ctx)).To(BeTrue())
	return r
}

func (r *recordWatcher) observe(o any) {
	tdb, ok := o.(*policyv1alpha1.TopologyDisruptionBudget)
	if !ok {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byTB[tdb.Name] == nil {
		r.byTB[tdb.Name] = map[types.UID]bool{}
	}
	for _, rec := range tdb.Status.DisruptedPods {
		r.byTB[tdb.Name][rec.UID] = true
	}
}

// seen are the pod UIDs budget name ever recorded.
func (r *recordWatcher) seen(name string) map[types.UID]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[types.UID]bool{}
	for uid := range r.byTB[name] {
		out[uid] = true
	}
	return out
}

// onlyInOne are the UIDs recorded in exactly one of a and b, sorted.
func onlyInOne(a, b map[types.UID]bool) []types.UID {
	var out []types.UID
	for uid := range a {
		if !b[uid] {
			out = append(out, uid)
		}
	}
	for uid := range b {
		if !a[uid] {
			out = append(out, uid)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
