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
	"math/rand"
	"testing"
	"time"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// statusOf is the status the status controller writes for rows (expected
// and healthy pods by domain) under spec.
func statusOf(tdb *policyv1alpha1.TopologyDisruptionBudget, expected, healthy []int32) policyv1alpha1.TopologyDisruptionBudgetStatus {
	rows := make([]policyv1alpha1.DomainStatus, len(expected))
	for i := range rows {
		rows[i] = policyv1alpha1.DomainStatus{Name: fmt.Sprintf("zone-%c", 'a'+i), ExpectedPods: expected[i], CurrentHealthy: healthy[i]}
	}
	res := Result{Domains: allowances(&tdb.Spec, rows)}
	for _, r := range rows {
		res.ExpectedPods += r.ExpectedPods
		res.CurrentHealthy += r.CurrentHealthy
	}
	res.DisruptionsAllowed = AllowedTogether(&tdb.Spec, rows)
	st := StatusFor(tdb, &res, t0, "")
	return *st
}

// A status that Relaxes lets be held must be at least as strict as the one
// it holds back, not only now but after any grants made on it: for random
// budgets, statuses and sequences of evictions (Ready or not, in any
// domain), every eviction granted on the held status is granted on the
// status written at once, after the same grants. Surges (more healthy than
// expected), scale-ups and scale-downs, maxDisruptedDomains and both
// unhealthy-pod policies included.
func TestRelaxesHoldsNothingLooser(t *testing.T) {
	rng := rand.New(rand.NewSource(16))
	specs := []func() *policyv1alpha1.TopologyDisruptionBudget{
		func() *policyv1alpha1.TopologyDisruptionBudget {
			return tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")).Obj()
		},
		func() *policyv1alpha1.TopologyDisruptionBudget {
			return tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("1")).MaxDisruptedDomains(1).Obj()
		},
		func() *policyv1alpha1.TopologyDisruptionBudget {
			return tdb("web").TopologyKey(zoneKey).MinAvailable(intOrPct("1")).MaxDisruptedDomains(1).Obj()
		},
		func() *policyv1alpha1.TopologyDisruptionBudget {
			return tdb("web").TopologyKey(zoneKey).MinAvailable(intOrPct("50%")).Obj()
		},
		func() *policyv1alpha1.TopologyDisruptionBudget {
			return tdb("web").TopologyKey(zoneKey).MaxUnavailable(intOrPct("34%")).MaxDisruptedDomains(1).
				UnhealthyPodEvictionPolicy(policyv1alpha1.AlwaysAllow).Obj()
		},
	}
	held := 0
	for trial := range 60000 {
		b := specs[rng.Intn(len(specs))]()
		b.Generation = 1
		n := 1 + rng.Intn(3)
		expN, healthyN := make([]int32, n), make([]int32, n)
		expC, healthyC := make([]int32, n), make([]int32, n)
		for i := range n {
			expN[i] = int32(rng.Intn(5))
			healthyN[i] = int32(rng.Intn(int(expN[i]) + 2))
			expC[i] = max(0, expN[i]+int32(rng.Intn(3)-1))
			healthyC[i] = max(0, healthyN[i]-int32(rng.Intn(2)))
		}
		cur, next := statusOf(b, expC, healthyC), statusOf(b, expN, healthyN)
		if !Relaxes(&cur, &next) {
			continue
		}
		held++
		onCur, onNext := b.DeepCopy(), b.DeepCopy()
		onCur.Status, onNext.Status = cur, next
		for step := range 4 {
			w := pod(fmt.Sprintf("p-%d", step)).OnNode("n1").ControlledBy(replicaSet("rs"))
			if rng.Intn(3) == 0 {
				w = w.NotReady()
			} else {
				w = w.Ready()
			}
			req := EvictionRequest{Pod: pods(w)[0], Domain: fmt.Sprintf("zone-%c", 'a'+rng.Intn(n)), Now: t0.Add(time.Duration(step) * time.Second)}
			dc, dn := DecideEviction(onCur, req), DecideEviction(onNext, req)
			if dc.Allowed && !dn.Allowed {
				t.Fatalf("trial %d, %+v: eviction %d of %s (%s) granted on the held status (%s) and refused on the one written at once (%s: %s)\nheld %+v\nat once %+v",
					trial, b.Spec, step, req.Pod.Name, req.Domain, dc.Reason, dn.Reason, dn.Message, onCur.Status.Domains, onNext.Status.Domains)
			}
			if !dc.Allowed {
				break
			}
			if dc.Status != nil {
				onCur.Status = *dc.Status
			}
			if dn.Status != nil {
				onNext.Status = *dn.Status
			}
		}
	}
	if held < 1000 {
		t.Fatalf("only %d random pairs were held: the test explores too little", held)
	}
	t.Logf("%d random pairs held", held)
}
