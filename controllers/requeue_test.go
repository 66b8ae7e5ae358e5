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

package controllers

import (
	"testing"
	"time"

	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// A pod warming up under minReadySeconds becomes available at an exact
// time, with no event: the status pass runs right then, not a second
// later as for a record's expiry; every wait of a drain under
// minReadySeconds would otherwise cost that second.
func TestRequeueAtTheNextAvailablePod(t *testing.T) {
	now := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	in := func(d time.Duration) *time.Time { at := now.Add(d); return &at }
	r := &BudgetReconciler{}
	for _, tc := range []struct {
		name string
		res  budget.Result
		want time.Duration
	}{
		{"nothing to wait for", budget.Result{}, 0},
		{"a record expires", budget.Result{RecheckAt: in(4 * time.Second)}, 5 * time.Second},
		{"a pod becomes available", budget.Result{AvailableAt: in(4 * time.Second)}, 4*time.Second + availableSlack},
		{"the pod first", budget.Result{RecheckAt: in(4 * time.Second), AvailableAt: in(3500 * time.Millisecond)}, 3500*time.Millisecond + availableSlack},
		{"the record first", budget.Result{RecheckAt: in(2 * time.Second), AvailableAt: in(7 * time.Second)}, 3 * time.Second},
	} {
		if got := r.requeue(tc.res, false, false, now).RequeueAfter; got != tc.want {
			t.Errorf("%s: requeue after %s, want %s", tc.name, got, tc.want)
		}
	}
}
