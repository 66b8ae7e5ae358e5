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
	"net/http"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// partitioned is a budget over app=web whose domains are the pods' name
// suffixes (web-0 is partition 0), with partition 0's row as given.
func partitioned(name string, p0 policyv1alpha1.DomainStatus) *policyv1alpha1.TopologyDisruptionBudget {
	p0.Name = "0"
	return builders.Budget(name).Namespace("ns").Generation(1).MatchLabels(map[string]string{"app": "web"}).
		PartitionByName(`web-([0-9]+)`).MaxUnavailable(intstr.FromInt32(1)).
		ObservedGeneration(1).StatusDomains(p0).Obj()
}

// A pod under a partition budget and a zone budget is charged to both, in
// its partition and its zone, or to neither when either refuses.
func TestPartitionAndZoneBudgetsChargeTogether(t *testing.T) {
	for _, tc := range []struct {
		name            string
		partitionAllows int32
		zoneAllows      int32
		want            bool
	}{
		{"both allow", 1, 1, true},
		{"the partition has a replica down", 0, 1, false},
		{"the zone has no allowance", 1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := scheme(t)
			ctx := context.Background()
			server := fake.NewClientBuilder().WithScheme(s).
				WithObjects(readyPod(), zoneNode(),
					partitioned("by-partition", policyv1alpha1.DomainStatus{ExpectedPods: 3, CurrentHealthy: 2 + tc.partitionAllows, DesiredHealthy: 2, DisruptionsAllowed: tc.partitionAllows}),
					budgetAllowing("by-zone", tc.zoneAllows)).
				WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
			h := newHandler(t, server, server)
			resp := h.Handle(ctx, request(t, eviction(), false))
			if resp.Allowed != tc.want {
				t.Fatalf("allowed %v, want %v (%+v)", resp.Allowed, tc.want, resp.Result)
			}
			part, zone := getBudget(t, server, "by-partition"), getBudget(t, server, "by-zone")
			if !tc.want {
				if resp.Result.Code != http.StatusTooManyRequests {
					t.Errorf("code %d, want 429", resp.Result.Code)
				}
				if len(part.Status.DisruptedPods)+len(zone.Status.DisruptedPods) != 0 {
					t.Errorf("a refused eviction left records: partition %+v, zone %+v", part.Status.DisruptedPods, zone.Status.DisruptedPods)
				}
				return
			}
			if len(part.Status.DisruptedPods) != 1 || part.Status.DisruptedPods[0].Domain != "0" {
				t.Errorf("partition budget records %+v, want web-0 in partition 0", part.Status.DisruptedPods)
			}
			if len(zone.Status.DisruptedPods) != 1 || zone.Status.DisruptedPods[0].Domain != "zone-a" {
				t.Errorf("zone budget records %+v, want web-0 in zone-a", zone.Status.DisruptedPods)
			}
		})
	}
}

// A covered pod without a partition is refused, saying why.
func TestPodWithoutPartitionIsRefused(t *testing.T) {
	s := scheme(t)
	b := builders.Budget("by-label").Namespace("ns").Generation(1).MatchLabels(map[string]string{"app": "web"}).
		Partition(policyv1alpha1.PartitionSource{Label: "partition"}).MaxUnavailable(intstr.FromInt32(1)).ObservedGeneration(1).Obj()
	server := fake.NewClientBuilder().WithScheme(s).WithObjects(readyPod(), zoneNode(), b).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	resp := newHandler(t, server, server).Handle(context.Background(), request(t, eviction(), false))
	if resp.Allowed || !strings.Contains(resp.Result.Message, "no label partition") {
		t.Errorf("want a refusal naming the missing label, got allowed %v: %+v", resp.Allowed, resp.Result)
	}
}
