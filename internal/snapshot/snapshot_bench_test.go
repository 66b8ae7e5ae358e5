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

package snapshot

import (
	"context"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// The benchmarks read one namespace of a large cluster as the status
// controller does in a drain: 1,000 nodes in 3 zones, each labelled as a
// cloud's are; 1,000 pods of 10 Deployments, one per node; 10 budgets, each
// selecting one Deployment's 100 pods. Each operation reads every budget
// once, through the informer cache with the operator's options and indexes.
const (
	benchNodes   = 1000
	benchApps    = 10
	benchPerApp  = 100
	benchBudgets = benchApps
)

type benchCluster struct {
	g       *Gatherer
	budgets []*policyv1alpha1.TopologyDisruptionBudget
}

func newBenchCluster(b *testing.B) *benchCluster {
	b.Helper()
	var nodes []*corev1.Node
	for i := range benchNodes {
		zone := fmt.Sprintf("zone-%c", 'a'+i%3)
		nodes = append(nodes, builders.Node(fmt.Sprintf("node-%04d", i)).Labels(map[string]string{
			"kubernetes.io/hostname":                   fmt.Sprintf("node-%04d", i),
			"kubernetes.io/os":                         "linux",
			"kubernetes.io/arch":                       "amd64",
			"beta.kubernetes.io/os":                    "linux",
			"beta.kubernetes.io/arch":                  "amd64",
			"node.kubernetes.io/instance-type":         "m7i.2xlarge",
			"beta.kubernetes.io/instance-type":         "m7i.2xlarge",
			"topology.kubernetes.io/region":            "eu-west-1",
			"failure-domain.beta.kubernetes.io/region": "eu-west-1",
			"failure-domain.beta.kubernetes.io/zone":   zone,
			"eks.amazonaws.com/nodegroup":              "workers",
			"eks.amazonaws.com/capacityType":           "ON_DEMAND",
		}).Zone(zone).Obj())
	}
	var pods []*corev1.Pod
	for i := range benchApps * benchPerApp {
		app := fmt.Sprintf("app-%d", i%benchApps)
		pods = append(pods, builders.Pod(fmt.Sprintf("%s-%04d", app, i)).Namespace("ns").UID(types.UID(fmt.Sprintf("uid-%d", i))).
			Labels(map[string]string{
				"app":                       app,
				"app.kubernetes.io/name":    app,
				"app.kubernetes.io/part-of": "shop",
				"pod-template-hash":         "7d4b9c8f6",
			}).
			ControlledBy(builders.RefTo(builders.ReplicaSet(app+"-7d4b9c8f6").Namespace("ns").Obj())).
			OnNode(fmt.Sprintf("node-%04d", i%benchNodes)).Running().Ready().Obj())
	}
	c := &benchCluster{g: informerCache(b, true, pods, nodes)}
	for i := range benchBudgets {
		c.budgets = append(c.budgets, zoned(fmt.Sprintf("app-%d", i)))
	}
	return c
}

// BenchmarkSnapshot lists each budget's pods.
func BenchmarkSnapshot(b *testing.B) {
	c := newBenchCluster(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, tdb := range c.budgets {
			s, err := c.g.Snapshot(ctx, tdb)
			if err != nil || len(s.Pods) != benchPerApp {
				b.Fatalf("snapshot of %s: %d pods, %v", tdb.Name, len(s.Pods), err)
			}
		}
	}
}

// BenchmarkNodesGet looks up the nodes of each budget's pods, one pass per
// budget.
func BenchmarkNodesGet(b *testing.B) {
	c := newBenchCluster(b)
	ctx := context.Background()
	var snaps []*Snapshot
	for _, tdb := range c.budgets {
		s, err := c.g.Snapshot(ctx, tdb)
		if err != nil {
			b.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range snaps {
			nodes := c.g.Nodes(ctx)
			for _, p := range s.Pods {
				if nodes.Get(p.Spec.NodeName) == nil {
					b.Fatalf("node %s not found", p.Spec.NodeName)
				}
			}
		}
	}
}

// BenchmarkFingerprint sums up each budget's pods.
func BenchmarkFingerprint(b *testing.B) {
	c := newBenchCluster(b)
	var snaps []*Snapshot
	for _, tdb := range c.budgets {
		s, err := c.g.Snapshot(context.Background(), tdb)
		if err != nil {
			b.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range snaps {
			_ = s.Fingerprint()
		}
	}
}

// BenchmarkBudgetPass gathers what a status pass reads of each budget: its
// snapshot, its fingerprint, and every pod placed in its domain.
func BenchmarkBudgetPass(b *testing.B) {
	c := newBenchCluster(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		for _, tdb := range c.budgets {
			s, err := c.g.Snapshot(ctx, tdb)
			if err != nil {
				b.Fatal(err)
			}
			_ = s.Fingerprint()
			for _, p := range s.Pods {
				if place, err := s.Place(p); err != nil || place.Domain == "" {
					b.Fatalf("%s: %+v, %v", p.Name, place, err)
				}
			}
		}
	}
}
