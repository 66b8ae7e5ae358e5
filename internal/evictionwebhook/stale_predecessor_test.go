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

package evictionwebhook

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// A StatefulSet pod web-0 (UID p0, zone-a) was granted an eviction (its
// record is in status) and deleted; the
// StatefulSet recreated web-0 (UID p0-next) in zone-b, where it turned
// Ready, and a drain that listed it evicts "web-0" again. The operator's pod
// cache lags and still shows the old web-0 Running and Ready, so the webhook
// decides on it without a live read (eviction.go pod(): a healthy cached pod
// is trusted), finds the old record (findRecord matches name and UID p0)
// and lets the eviction through as AlreadyRecorded, renewing the old record.
// The API server then evicts the pod that holds the name now: the Ready
// p0-next in zone-b, charged to nobody, although zone-b allows nothing.
// (Seen at 1,000 nodes, make bench-scale: two Ready pods of one zone
// deleting at once under maxUnavailable 1.) The webhook now reads a pod
// whose name a record holds live, and refuses when another pod holds it.
func TestStaleCachedPredecessorLetsItsSuccessorGoUncharged(t *testing.T) {
	old := webPod("web-0", "p0").Obj() // on n1, zone-a
	next := webPod("web-0", "p0-next").OnNode("n2").Obj()
	zoneB := builders.Node("n2").Zone("zone-b").Obj()
	rec := policyv1alpha1.DisruptedPod{Name: "web-0", UID: "p0", Domain: "zone-a", ControllerUID: "s1",
		Time: metav1.NewTime(time.Date(2026, 11, 21, 17, 59, 50, 0, time.UTC))}
	b := builders.Budget("b").Namespace("ns").Generation(1).MatchLabels(map[string]string{"app": "web"}).
		TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).ObservedGeneration(1).
		StatusDomains(
			policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 2, DesiredHealthy: 2},
			// zone-b has an eviction of its own in progress: nothing to spare.
			policyv1alpha1.DomainStatus{Name: "zone-b", ExpectedPods: 3, CurrentHealthy: 2, DesiredHealthy: 2},
		).DisruptedPods(rec).Obj()
	cache := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(old, zoneNode(), zoneB, b).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(next, zoneNode(), zoneB, b).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	h := newHandler(t, cache, server)

	resp := h.Handle(context.Background(), request(t, eviction(), false))
	if resp.Allowed {
		got := getBudget(t, server, "b")
		t.Fatalf("the eviction of web-0 was allowed (the API server evicts p0-next, Ready in zone-b, which allows nothing); "+
			"records after: %+v, zone-b allows %d", got.Status.DisruptedPods, got.Status.Domains[1].DisruptionsAllowed)
	}
}

// The same with two replicas: the status this replica knows does not show
// the record yet (another replica granted it), so nothing tells it to read
// web-0 live before deciding. Its charge conflicts with the other
// replica's write, and on the budget as the API server has it the cached
// web-0 is AlreadyRecorded: it would pass uncharged while the API server
// evicts p0-next, Ready in zone-b. A pod whose name a record holds in the
// version being written is read live there too.
func TestStalePredecessorSeenOnlyInTheVersionBeingWritten(t *testing.T) {
	old := webPod("web-0", "p0").Obj() // on n1, zone-a
	next := webPod("web-0", "p0-next").OnNode("n2").Obj()
	zoneB := builders.Node("n2").Zone("zone-b").Obj()
	b := builders.Budget("b").Namespace("ns").Generation(1).MatchLabels(map[string]string{"app": "web"}).
		TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).ObservedGeneration(1).
		StatusDomains(
			policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1},
			policyv1alpha1.DomainStatus{Name: "zone-b", ExpectedPods: 3, CurrentHealthy: 2, DesiredHealthy: 2},
		).Obj()
	cache := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(old, zoneNode(), zoneB, b.DeepCopy()).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	server := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(next, zoneNode(), zoneB, b.DeepCopy()).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	// The other replica's grant for the old web-0, as the API server has it.
	granted := getBudget(t, server, "b")
	granted.Status.DisruptedPods = []policyv1alpha1.DisruptedPod{{Name: "web-0", UID: "p0", Domain: "zone-a", ControllerUID: "s1",
		Time: metav1.NewTime(time.Date(2026, 11, 21, 17, 59, 50, 0, time.UTC))}}
	granted.Status.Domains[0].DisruptionsAllowed = 0
	if err := server.Status().Update(context.Background(), granted); err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, cache, server)

	resp := h.Handle(context.Background(), request(t, eviction(), false))
	if resp.Allowed {
		got := getBudget(t, server, "b")
		t.Fatalf("the eviction of web-0 was allowed (%s; the API server evicts p0-next, Ready in zone-b, which allows nothing); "+
			"records after: %+v", resp.Result.Message, got.Status.DisruptedPods)
	}
}
