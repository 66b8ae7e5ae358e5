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
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
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

// Another process (the second replica's webhook) writes R1 then R2. This
// process reads R1 live outside the write lock (groupcommit's Reread at
// try>1, undo's Reread, the rollout's read after evicting), but its Saw
// lands only after a locked writer of this process re-read R2 and wrote R3.
// R1 is of unknown order. Were it to replace R3 as the newest, R3 recorded
// as older, then with no other process writing no writer of this process
// could ever write the budget again: each attempt redirected to R1,
// conflicting, re-reading R3, and Saw ignoring R3 because it is "older".
// The writers must heal.
func TestALateUnlockedReadDoesNotFreezeTheBudget(t *testing.T) {
	ctx := context.Background()
	c := server(t)
	versions := &Versions{}
	r0 := get(t, c)
	versions.Saw(r0)

	// Replica B writes R1 and R2.
	ext := r0.DeepCopy()
	ext.Status.ExpectedPods = 1
	if err := c.Status().Update(ctx, ext); err != nil {
		t.Fatal(err)
	}
	r1 := get(t, c) // this process's unlocked live read, answered now, Saw later
	ext = r1.DeepCopy()
	ext.Status.ExpectedPods = 2
	if err := c.Status().Update(ctx, ext); err != nil {
		t.Fatal(err)
	}

	// A locked writer of this process (e.g. the rollout controller) writes.
	w := &Writer{Name: "test-rollout", Client: c, Live: c, Versions: versions}
	if _, err := w.Update(ctx, r0.DeepCopy(), func(b *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		b.Status.CurrentHealthy = 7
		return b, nil
	}); err != nil {
		t.Fatal(err)
	}
	r3 := get(t, c)

	// The unlocked read's Saw lands late (as Writer.Reread records it).
	versions.Saw(r1, r0.ResourceVersion)

	if got := versions.Newest(r3); got.ResourceVersion != r3.ResourceVersion {
		t.Logf("Newest(live %s) = %s: an older version than the cache", r3.ResourceVersion, got.ResourceVersion)
	}
	// No other writer any more. Every writer of this process keeps losing.
	status := &Writer{Name: "test-status", Client: c, Live: c, Versions: versions, Backoff: wait.Backoff{Steps: 1}, OnlyFromStart: true}
	for i := 0; i < 20; i++ {
		cached := get(t, c) // the informer has caught up
		start := versions.Newest(cached)
		_, errS := status.Update(ctx, start, func(b *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
			b.Status.DisruptionsAllowed = int32(i)
			return b, nil
		})
		_, errW := w.Update(ctx, cached, func(b *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
			b.Status.CurrentHealthy = int32(i)
			return b, nil
		})
		if errS == nil || errW == nil {
			return // healed
		}
		if i == 19 {
			t.Fatalf("after 20 rounds with no other writer, status writer: %v; rollout writer: %v; live still %s",
				errS, errW, get(t, c).ResourceVersion)
		}
	}
}

// A live read holds the status as stored, compact beyond 20 domains: the
// version recorded, and so the newest every writer starts from, has every
// row.
func TestSawExpandsAStoredStatus(t *testing.T) {
	v := &Versions{}
	cached := version("1")
	v.Saw(cached)
	live := version("2")
	for i := 0; i < 30; i++ {
		live.Status.Domains = append(live.Status.Domains, policyv1alpha1.DomainStatus{Name: fmt.Sprint(i), ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1})
	}
	sort.Slice(live.Status.Domains, func(i, j int) bool { return live.Status.Domains[i].Name < live.Status.Domains[j].Name })
	want := live.Status.DeepCopy().Domains
	budget.CompactStatus(&live.Status)
	v.Saw(live, "1")
	got := v.Newest(cached)
	if got.ResourceVersion != "2" || len(got.Status.HealthyDomains) != 0 || !equality.Semantic.DeepEqual(got.Status.Domains, want) {
		t.Errorf("newest is version %s with %d rows and groups %+v; want version 2 with all 30 rows", got.ResourceVersion, len(got.Status.Domains), got.Status.HealthyDomains)
	}
	// A status that cannot be expanded is not recorded.
	bad := version("3")
	bad.Status.HealthyDomains = []policyv1alpha1.DomainGroup{{Count: 5, Ranges: []string{"9-1"}}}
	v.Saw(bad, "2")
	if got := v.Newest(cached); got.ResourceVersion != "2" {
		t.Errorf("newest is version %s, want 2: an unreadable status must not become the newest", got.ResourceVersion)
	}
}
