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

package replica

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
)

// A deleted budget is forgotten in every part at once, its own and those
// its owners keep, and only that budget.
func TestForgetDropsTheBudgetFromEveryPart(t *testing.T) {
	gone := types.NamespacedName{Namespace: "ns", Name: "web"}
	kept := types.NamespacedName{Namespace: "ns", Name: "db"}
	var m Memory
	// cached is the version the cache shows, older than the one written.
	cached := func(k types.NamespacedName) *policyv1alpha1.TopologyDisruptionBudget {
		return &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name, UID: "u-" + types.UID(k.Name), ResourceVersion: "7"}}
	}
	for _, k := range []types.NamespacedName{gone, kept} {
		written := cached(k)
		written.ResourceVersion = "9"
		m.Versions().Wrote(written, "7")
		m.Pending().Touch(k)
		m.Pending().ConfirmGone(k, map[budget.RecordKey]bool{{Name: "p"}: true})
	}
	owned := map[types.NamespacedName]bool{gone: true, kept: true}
	m.Keep("an owner's part", func(k types.NamespacedName) { delete(owned, k) })

	m.Forget(gone)

	if got := m.Versions().Newest(cached(gone)).ResourceVersion; got != "7" {
		t.Errorf("versions still hold %s's written version (newest %s, want the cached 7)", gone, got)
	}
	if got := m.Versions().Newest(cached(kept)).ResourceVersion; got != "9" {
		t.Errorf("versions lost %s's written version (newest %s, want 9)", kept, got)
	}
	if m.Pending().Behind(gone) || len(m.Pending().Gone(gone)) != 0 {
		t.Errorf("pending still holds %s", gone)
	}
	if !m.Pending().Behind(kept) || len(m.Pending().Gone(kept)) != 1 {
		t.Errorf("pending lost %s, which was not deleted", kept)
	}
	if owned[gone] || !owned[kept] {
		t.Errorf("owner's part after Forget(%s) = %v, want only %s", gone, owned, kept)
	}
	if got := m.Parts(); len(got) != 3 || got[0] != "an owner's part" {
		t.Errorf("Parts() = %v, want the owner's part, pending and versions", got)
	}
}

// A delete event forgets the budget, a tombstone's too; anything else is
// ignored.
func TestDeleteEventsForgetTheBudget(t *testing.T) {
	var m Memory
	var forgotten []string
	m.Keep("probe", func(k types.NamespacedName) { forgotten = append(forgotten, k.String()) })
	tdb := &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}}
	m.deleted(tdb)
	m.deleted(toolscache.DeletedFinalStateUnknown{Key: "ns/db", Obj: &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db"}}})
	m.deleted("not a budget")
	if len(forgotten) != 2 || forgotten[0] != "ns/web" || forgotten[1] != "ns/db" {
		t.Errorf("forgotten = %v, want [ns/web ns/db]", forgotten)
	}
}
