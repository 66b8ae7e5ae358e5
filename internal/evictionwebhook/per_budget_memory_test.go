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
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// Per-budget state is freed: ledger entries after an idle time, refusal
// windows after ten intervals.
func TestPerBudgetMemoryIsBounded(t *testing.T) {
	var l ledger
	t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 100; i++ {
		l.entryAt(types.NamespacedName{Namespace: "ns", Name: fmt.Sprintf("b%d", i)}, t0)
	}
	busy := l.entryAt(types.NamespacedName{Namespace: "ns", Name: "busy"}, t0)
	if err := busy.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	l.entryAt(types.NamespacedName{Namespace: "ns", Name: "b0"}, t0.Add(idleEntry+time.Second))
	if got := l.size(); got != 2 {
		t.Errorf("ledger entries after an idle time = %d, want 2 (the one in use and the one held)", got)
	}

	clk := clocktesting.NewFakeClock(t0)
	r := &RefusalReporter{Recorder: events.NewFakeRecorder(1000), Clock: clk, Interval: time.Minute}
	for i := 0; i < 100; i++ {
		r.Refused(builders.Budget("b").UID(types.UID(fmt.Sprint(i))).Obj(), "refused")
	}
	clk.Step(refusalWindowIdle*time.Minute + time.Second)
	r.Refused(builders.Budget("b").UID("new").Obj(), "refused")
	r.mu.Lock()
	n := len(r.last)
	r.mu.Unlock()
	if n != 1 {
		t.Errorf("refusal windows = %d, want 1", n)
	}
}
