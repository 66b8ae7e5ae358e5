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
	type step struct {
		saw    string
		before []string
	}
	tests := []struct {
		name   string
		steps  []step
		cached string
		want   string
	}{
		{name: "nothing seen: the cached copy", cached: "kx", want: "kx"},
		{name: "a write on the cached version: the write",
			steps: []step{{saw: "kb", before: []string{"ka"}}}, cached: "ka", want: "kb"},
		{name: "the cached copy is the newest", steps: []step{{saw: "kb", before: []string{"ka"}}}, cached: "kb", want: "kb"},
		{name: "a cached version of unknown order is used as it is",
			steps: []step{{saw: "kb", before: []string{"ka"}}}, cached: "kz", want: "kz"},
		{name: "two writes in turn: every earlier version is older than the last",
			steps: []step{{saw: "kb", before: []string{"ka"}}, {saw: "kc", before: []string{"kb"}}}, cached: "ka", want: "kc"},
		{name: "a write's result arriving after a newer one is ignored",
			steps: []step{{saw: "kc", before: []string{"kb"}}, {saw: "kb", before: []string{"ka"}}}, cached: "kb", want: "kc"},
		{name: "a live read after a conflict replaces the newest",
			steps: []step{{saw: "kb", before: []string{"ka"}}, {saw: "kd", before: []string{"kb"}}}, cached: "kb", want: "kd"},
		{name: "a version of unknown order replaces the newest, which becomes older",
			steps: []step{{saw: "kb", before: []string{"ka"}}, {saw: "kq"}}, cached: "kb", want: "kq"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var v Versions
			for _, s := range tc.steps {
				v.Saw(version(s.saw), s.before...)
			}
			if got := v.Newest(version(tc.cached)).ResourceVersion; got != tc.want {
				t.Errorf("Newest(%s) = %s, want %s", tc.cached, got, tc.want)
			}
		})
	}
}

func TestNewestReturnsACopy(t *testing.T) {
	var v Versions
	v.Saw(version("kb"), "ka")
	got := v.Newest(version("ka"))
	got.Status.DisruptionsAllowed = 7
	if again := v.Newest(version("ka")); again.Status.DisruptionsAllowed != 0 {
		t.Errorf("a caller's change reached the stored version: %+v", again.Status)
	}
}

func TestARecreatedBudgetStartsOver(t *testing.T) {
	var v Versions
	v.Saw(versionOf("u1", "kb"), "ka")
	if got := v.Newest(versionOf("u2", "ka")); got.UID != "u2" || got.ResourceVersion != "ka" {
		t.Errorf("another budget of the same name got %s/%s", got.UID, got.ResourceVersion)
	}
	v.Saw(versionOf("u2", "kc"), "ka")
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
		v.Saw(version(rv), prev)
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
	v.Saw(version("kb"), "ka")
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
	v.Saw(version("kb"), "ka")
	if got := v.Newest(version("ka")); got.ResourceVersion != "ka" {
		t.Errorf("Newest = %s, want the cached ka", got.ResourceVersion)
	}
	v.Forget(types.NamespacedName{Namespace: "ns", Name: "b"})
}
