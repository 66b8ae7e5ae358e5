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
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// kubectl drain retries a refused eviction every 5 seconds: one event per
// budget per interval, then one that counts what was held back.
func TestRefusalEventsAreRateLimited(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC))
	rec := events.NewFakeRecorder(100)
	r := &RefusalReporter{Recorder: rec, Clock: clk, Interval: time.Minute}
	a := builders.Budget("a").UID("a").Obj()
	b := builders.Budget("b").UID("b").Obj()

	for i := 0; i < 12; i++ { // a minute of drain retries
		r.Refused(a, "zone-a has 7 healthy pods, needs 7")
		clk.Step(5 * time.Second)
	}
	r.Refused(b, "zone-b has 3 healthy pods, needs 3")
	r.Refused(a, "zone-a has 7 healthy pods, needs 7")

	var got []string
	for len(rec.Events) > 0 {
		got = append(got, <-rec.Events)
	}
	want := []string{
		"Warning EvictionRefused zone-a has 7 healthy pods, needs 7",
		"Warning EvictionRefused zone-b has 3 healthy pods, needs 3",
		"Warning EvictionRefused zone-a has 7 healthy pods, needs 7 (and 11 more refusals in the last 1m0s)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
