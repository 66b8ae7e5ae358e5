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

package budgetstatus

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// A status is behind from an event until a pass that began after it
// finishes; an event during a pass keeps it behind.
func TestPendingIsBehindUntilAPassReadTheEvent(t *testing.T) {
	var p Pending
	key := types.NamespacedName{Namespace: "ns", Name: "b"}
	if p.Behind(key) {
		t.Fatal("behind with no event")
	}
	p.Touch(key)
	if !p.Behind(key) {
		t.Fatal("not behind after an event")
	}
	seen := p.Begin(key)
	p.Touch(key) // during the pass, after its cache read
	p.Done(key, seen)
	if !p.Behind(key) {
		t.Fatal("an event during a pass was forgotten at its end")
	}
	p.Done(key, p.Begin(key))
	if p.Behind(key) {
		t.Fatal("still behind after a pass read every event")
	}
	p.ConfirmGone(key, map[budget.RecordKey]bool{{Name: "a"}: true, {Name: "b"}: true})
	p.Keep(key, map[budget.RecordKey]bool{{Name: "b"}: true})
	if g := p.Gone(key); len(g) != 1 || !g[budget.RecordKey{Name: "b"}] {
		t.Errorf("confirmations kept: %v; want b's only", g)
	}
	p.Forget(key)
	if p.Behind(key) || len(p.Gone(key)) != 0 {
		t.Error("a forgotten budget still has state")
	}
}
