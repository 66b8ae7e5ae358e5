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
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// version is budget ns/b (UID u1) at a resourceVersion. The versions are
// deliberately not numbers in order: the package must not compare them.
func version(rv string) *policyv1alpha1.TopologyDisruptionBudget {
	return versionOf("u1", rv)
}

func versionOf(uid types.UID, rv string) *policyv1alpha1.TopologyDisruptionBudget {
	return &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{
		Namespace: "ns", Name: "b", UID: uid, ResourceVersion: rv}}
}

func TestNewestFollowsTheOrderOfWhatWasSeen(t *testing.T) {
	// A step is a write's answer on a base (wrote) or a live read with the
	// versions known to be older than it.
	type step struct {
		rv     string
		wrote  bool
		before []string
	}
	wrote := func(rv, base string) step { return step{rv: rv, wrote: true, before: []string{base}} }
	read := func(rv string, before ...string) step { return step{rv: rv, before: before} }
	tests := []struct {
		name   string
		steps  []step
		cached string
		want   string
	}{
		{name: "nothing seen: the cached copy", cached: "kx", want: "kx"},
		{name: "a write on the cached version: the write",
			steps: []step{wrote("kb", "ka")}, cached: "ka", want: "kb"},
		{name: "the cached copy is the newest", steps: []step{wrote("kb", "ka")}, cached: "kb", want: "kb"},
		{name: "a cached version of unknown order is used as it is",
			steps: []step{wrote("kb", "ka")}, cached: "kz", want: "kz"},
		{name: "two writes in turn: every earlier version is older than the last",
			steps: []step{wrote("kb", "ka"), wrote("kc", "kb")}, cached: "ka", want: "kc"},
		{name: "a live read after a conflict on the newest replaces it",
			steps: []step{wrote("kb", "ka"), read("kd", "kb")}, cached: "kb", want: "kd"},
		{name: "the first live read of a budget is its newest",
			steps: []step{read("kb")}, cached: "kb", want: "kb"},
		{name: "a live read of unknown order does not replace the newest",
			steps: []step{wrote("kb", "ka"), read("kq")}, cached: "ka", want: "kb"},
		{name: "a late live read, answered before this process's write, does not replace it",
			steps: []step{read("k0"), wrote("k3", "k2"), read("k1", "k0")}, cached: "k2", want: "k3"},
		// A stale newest is corrected by the read after the conflict it
		// causes, even when that read returns a version once recorded older.
		{name: "evidence wins over an older record",
			steps: []step{wrote("k3", "k2"), wrote("k1", "k0"), read("k3", "k1")}, cached: "k1", want: "k3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v Versions
			for _, s := range tc.steps {
				if s.wrote {
					v.Wrote(version(s.rv), s.before[0])
				} else {
					v.Saw(version(s.rv), s.before...)
				}
			}
			if got := v.Newest(version(tc.cached)).ResourceVersion; got != tc.want {
				t.Errorf("Newest(%s) = %s, want %s", tc.cached, got, tc.want)
			}
		})
	}
}

func TestNewestReturnsACopy(t *testing.T) {
	var v Versions
	v.Wrote(version("kb"), "ka")
	got := v.Newest(version("ka"))
	got.Status.DisruptionsAllowed = 7
	if again := v.Newest(version("ka")); again.Status.DisruptionsAllowed != 0 {
		t.Errorf("a caller's change reached the stored version: %+v", again.Status)
	}
}

func TestARecreatedBudgetStartsOver(t *testing.T) {
	var v Versions
	v.Wrote(versionOf("u1", "kb"), "ka")
	if got := v.Newest(versionOf("u2", "ka")); got.UID != "u2" || got.ResourceVersion != "ka" {
		t.Errorf("another budget of the same name got %s/%s", got.UID, got.ResourceVersion)
	}
	v.Wrote(versionOf("u2", "kc"), "ka")
	if got := v.Newest(versionOf("u2", "ka")); got.ResourceVersion != "kc" {
		t.Errorf("Newest = %s, want kc", got.ResourceVersion)
	}
	if got := v.Newest(versionOf("u1", "ka")); got.UID != "u1" {
		t.Errorf("the deleted budget's copy came back: %s", got.UID)
	}
}

func TestOlderVersionsAreBounded(t *testing.T) {
	var v Versions
	prev := "v0"
	for i := 1; i <= 3*maxOlder; i++ {
		rv := "v" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		v.Wrote(version(rv), prev)
		prev = rv
	}
	k := v.budgets[types.NamespacedName{Namespace: "ns", Name: "b"}]
	if len(k.older) > maxOlder {
		t.Errorf("%d older versions kept, want at most %d", len(k.older), maxOlder)
	}
	// The oldest are forgotten: a copy that far behind is used as it is
	// (its write then conflicts and re-reads).
	if got := v.Newest(version("v0")); got.ResourceVersion != "v0" {
		t.Errorf("Newest(v0) = %s, want v0 (forgotten)", got.ResourceVersion)
	}
}

func TestIdleBudgetsAreForgotten(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	v := Versions{now: func() time.Time { return now }}
	v.Wrote(version("kb"), "ka")
	other := versionOf("u9", "k1")
	other.Name = "other"
	now = now.Add(idle + time.Second)
	v.Saw(other)
	if v.size() != 1 {
		t.Errorf("%d budgets kept after one idled out, want 1", v.size())
	}
	v.Forget(types.NamespacedName{Namespace: "ns", Name: "other"})
	if v.size() != 0 {
		t.Errorf("%d budgets kept after Forget, want 0", v.size())
	}
}

func TestANilVersionsKnowsNothing(t *testing.T) {
	var v *Versions
	v.Wrote(version("kb"), "ka")
	if got := v.Newest(version("ka")); got.ResourceVersion != "ka" {
		t.Errorf("Newest = %s, want the cached ka", got.ResourceVersion)
	}
	v.Forget(types.NamespacedName{Namespace: "ns", Name: "b"})
}
