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

	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// A refusal is answered as core's eviction answers one: 429 with the
// DisruptionBudget cause, and no retryAfterSeconds (on which client-go
// would retry inside the one call, blocking the client for a minute).
func TestRefusalsCarryTheDisruptionBudgetCause(t *testing.T) {
	stale := allowing("b", 1).Generation(2).Obj()
	for _, tc := range []struct {
		name   string
		budget *policyv1alpha1.TopologyDisruptionBudget
	}{
		{name: "no allowance", budget: budgetAllowing("b", 0)},
		{name: "status behind the spec", budget: stale},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(readyPod(), zoneNode(), tc.budget).
				WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
			resp := newHandler(t, c, c).Handle(context.Background(), request(t, eviction(), false))
			if resp.Allowed || resp.Result.Code != http.StatusTooManyRequests {
				t.Fatalf("response %+v; want 429", resp.Result)
			}
			d := resp.Result.Details
			if d == nil || len(d.Causes) != 1 || d.Causes[0].Type != policyv1.DisruptionBudgetCause || d.Causes[0].Message != resp.Result.Message {
				t.Errorf("details %+v; want one DisruptionBudget cause with the message", d)
			}
			if d != nil && d.RetryAfterSeconds != 0 {
				t.Errorf("retryAfterSeconds %d, want none", d.RetryAfterSeconds)
			}
		})
	}
}
