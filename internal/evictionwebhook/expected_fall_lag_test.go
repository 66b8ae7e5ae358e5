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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// Until the status controller writes a fall of expected pods (the status
// lag), the written status still counts a pod gone since: a ReplicaSet of 3 in zone-a whose web-old terminated
// beside its replacement web-new, not Ready. Written: 4 expected, 2 healthy,
// 3 desired; the cache: 3 expected, 2 healthy, 2 desired. web-new's
// eviction (not Ready, IfHealthyBudget) is refused on the written numbers
// and granted uncharged on the cache's: the leader's webhook decides on
// the cache's, a replica that does not run the status controller on the
// written ones, stricter.
func TestANotReadyPodBeforeAFallOfExpectedPodsIsWritten(t *testing.T) {
	for _, leader := range []bool{true, false} {
		t.Run(map[bool]string{true: "the leader", false: "another replica"}[leader], func(t *testing.T) {
			rs := builders.ReplicaSet("web").Namespace("ns").Replicas(3).PodLabels(map[string]string{"app": "web"}).Obj()
			rs.UID = "rs1"
			b := builders.Budget("b").Namespace("ns").Generation(1).MatchLabels(map[string]string{"app": "web"}).
				TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).ObservedGeneration(1).
				StatusDomains(policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 4, CurrentHealthy: 2, DesiredHealthy: 3}).
				Conditions(metav1.Condition{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionFalse,
					Reason: policyv1alpha1.ReasonInsufficientPods, ObservedGeneration: 1, LastTransitionTime: metav1.Now()})
			pod := func(name string) *builders.PodWrapper {
				return builders.Pod(name).Namespace("ns").UID(types.UID("uid-" + name)).Labels(map[string]string{"app": "web"}).
					ControlledBy(builders.RefTo(rs)).OnNode("n1").Running()
			}
			objs := []client.Object{rs, zoneNode(), b.Obj(), pod("web-0").Ready().Obj(), pod("web-1").Ready().Obj(), pod("web-new").NotReady().Obj()}
			c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
				WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
			h := newHandler(t, c, c)
			leaderBehind(h)
			h.Computes = computes(leader)

			req := request(t, map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": "web-new", "namespace": "ns"}}, false)
			req.Name = "web-new"
			resp := h.Handle(context.Background(), req)
			got := getBudget(t, c, "b")
			if !leader {
				if resp.Allowed || resp.Result.Code != http.StatusTooManyRequests {
					t.Fatalf("answer %v %d (%s); want a 429 from the written status (2 healthy of 3 desired)", resp.Allowed, resp.Result.Code, resp.Result.Message)
				}
				if len(got.Status.DisruptedPods) != 0 {
					t.Errorf("records %+v; want none", got.Status.DisruptedPods)
				}
				return
			}
			if !resp.Allowed {
				t.Fatalf("refused (%d: %s); the cache shows 2 healthy of 2 desired: a not-Ready pod goes uncharged", resp.Result.Code, resp.Result.Message)
			}
			if len(got.Status.DisruptedPods) != 1 || got.Status.DisruptedPods[0].Name != "web-new" {
				t.Errorf("records after the grant: %+v; want web-new's", got.Status.DisruptedPods)
			}
			row := got.Status.Domains[0]
			if row.ExpectedPods != 3 || row.CurrentHealthy != 2 || row.DesiredHealthy != 2 || row.DisruptionsAllowed != 0 {
				t.Errorf("zone-a after the grant: %+v; want the held change carried (3 expected, 2 healthy, 2 desired, nothing allowed)", row)
			}
		})
	}
}
