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

package budget

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// benchWorld is one zoned budget (maxUnavailable 1, maxDisruptedDomains 1)
// over pods spread round-robin on nodes, nodes round-robin over zones, pods
// owned by 20 controllers, 1% of the pods not Ready, and 50 eviction
// records (half of running pods, half of gone ones).
func benchWorld(nPods, nNodes, nZones int) Input {
	nodes := make(map[string]*corev1.Node, nNodes)
	for i := range nNodes {
		n := node("node-"+strconv.Itoa(i)).Zone("zone-"+strconv.Itoa(i%nZones)).Label("rack", strconv.Itoa(i%40)).Obj()
		nodes[n.Name] = n
	}
	const nCtrls = 20
	os := map[types.UID]Owner{}
	for k := range nCtrls {
		uid := types.UID("rs-" + strconv.Itoa(k))
		os[uid] = owner(uid, int32(nPods/nCtrls+1))
	}
	ps := make([]*corev1.Pod, 0, nPods)
	for i := range nPods {
		p := pod("web-"+strconv.Itoa(i)).OnNode("node-"+strconv.Itoa(i%nNodes)).
			ControlledBy(replicaSet(types.UID("rs-"+strconv.Itoa(i%nCtrls)))).Label("pod-template-hash", "abc123")
		if i%100 == 7 {
			p.NotReady()
		} else {
			p.Ready()
		}
		ps = append(ps, p.Obj())
	}
	var recs []policyv1alpha1.DisruptedPod
	for i := range 50 {
		name := "web-" + strconv.Itoa(i*13%nPods)
		if i%2 == 1 {
			name = "gone-" + strconv.Itoa(i)
		}
		recs = append(recs, record(name, "zone-"+strconv.Itoa(i%nZones), types.UID("rs-"+strconv.Itoa(i%nCtrls)), at(-time.Duration(i)*time.Second)))
	}
	b := tdb("web").TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).MaxDisruptedDomains(1).DisruptedPods(recs...).Obj()
	return Input{Budget: b, Pods: ps, Nodes: func(name string) *corev1.Node { return nodes[name] }, Owners: os, Now: t0}
}

// BenchmarkCompute: one budget's status over 1,000 nodes; time per op
// should grow linearly with the pods.
func BenchmarkCompute(b *testing.B) {
	for _, zones := range []int{3, 100} {
		for _, pods := range []int{1000, 5000, 10000} {
			b.Run(fmt.Sprintf("pods=%d/nodes=1000/zones=%d", pods, zones), func(b *testing.B) {
				in := benchWorld(pods, 1000, zones)
				if res := Compute(in); len(res.Domains) != zones || res.Err != nil {
					b.Fatalf("world has %d domains (err %v), want %d", len(res.Domains), res.Err, zones)
				}
				b.ReportAllocs()
				for b.Loop() {
					Compute(in)
				}
			})
		}
	}
}
