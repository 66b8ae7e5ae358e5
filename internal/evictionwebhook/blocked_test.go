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
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// A refused domain is marked blocked only if it still allows nothing
// BlockMarkDelay after the refusal, with the refusal's time: a domain that
// reopens meanwhile, as one does while a drained pod's replacement starts,
// costs no status write.
func TestBlockedMarkWaitsForTheDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	for _, reopens := range []bool{false, true} {
		var writes, marks atomic.Int32
		server := countingServer(t, []client.Object{readyPod(), zoneNode(), budgetAllowing("b", 0)}, &writes, &marks)
		h := newHandler(t, server, server)
		h.BlockMarkDelay = delay
		refusedAt := h.Clock.Now()
		if resp := h.Handle(context.Background(), request(t, eviction(), false)); resp.Allowed || resp.Result.Code != http.StatusTooManyRequests {
			t.Fatalf("reopens=%v: %+v, want a 429 refusal", reopens, resp.Result)
		}
		time.Sleep(delay / 3)
		if got := getBudget(t, server, "b").Status.Domains[0].BlockedSince; got != nil || marks.Load() != 0 {
			t.Fatalf("reopens=%v: marked %v (%d writes) before the delay", reopens, got, marks.Load())
		}
		if reopens {
			// The status controller finds the domain's pod back.
			b := getBudget(t, server, "b")
			b.Status.Domains[0].CurrentHealthy, b.Status.Domains[0].DisruptionsAllowed = 3, 1
			if err := server.Status().Update(context.Background(), b); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(delay)
		deadline := time.Now().Add(5 * time.Second)
		got := getBudget(t, server, "b").Status.Domains[0].BlockedSince
		for !reopens && got == nil && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			got = getBudget(t, server, "b").Status.Domains[0].BlockedSince
		}
		switch {
		case reopens && (got != nil || marks.Load() != 0):
			t.Errorf("a domain that allowed again within the delay was marked blocked: %v, %d mark writes", got, marks.Load())
		case !reopens && (got == nil || !got.Time.Equal(refusedAt.Truncate(time.Second)) || marks.Load() != 1):
			t.Errorf("blocked domain: blockedSince %v (%d mark writes), want the refusal's time %v in one write", got, marks.Load(), refusedAt)
		}
	}
}
