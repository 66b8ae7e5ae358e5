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
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
)

func server(t *testing.T) client.WithWatch {
	t.Helper()
	s := runtime.NewScheme()
	if err := policyv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	tdb := &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "u1"}}
	return fake.NewClientBuilder().WithScheme(s).WithObjects(tdb).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
}

func get(t *testing.T, c client.Reader) *policyv1alpha1.TopologyDisruptionBudget {
	t.Helper()
	var tdb policyv1alpha1.TopologyDisruptionBudget
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "b"}, &tdb); err != nil {
		t.Fatal(err)
	}
	return &tdb
}

// Another writer's change lands between this writer's read and its write:
// the write conflicts, the budget is read live and the writer's fields are
// applied to it; the other writer's field survives.
func TestUpdateReappliesOnTheLiveVersionAfterAConflict(t *testing.T) {
	ctx := context.Background()
	c := server(t)
	stale := get(t, c)
	other := stale.DeepCopy()
	other.Status.DisruptedPods = []policyv1alpha1.DisruptedPod{{Name: "web-1", UID: "p1", Domain: "zone-a"}}
	if err := c.Status().Update(ctx, other); err != nil {
		t.Fatal(err)
	}
	versions := &Versions{}
	w := &Writer{Name: "test-reapply", Client: c, Live: c, Versions: versions}
	calls := 0
	written, err := w.Update(ctx, stale, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		calls++
		base.Status.ExpectedPods = 6
		return base, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	live := get(t, c)
	if calls != 2 || live.Status.ExpectedPods != 6 || len(live.Status.DisruptedPods) != 1 {
		t.Errorf("after %d attempts: expectedPods %d, records %v; want 2 attempts, 6 and the other writer's record",
			calls, live.Status.ExpectedPods, live.Status.DisruptedPods)
	}
	if written.ResourceVersion != live.ResourceVersion {
		t.Errorf("returned version %s, live %s", written.ResourceVersion, live.ResourceVersion)
	}
	// Every version before the write is now known to be older.
	if got := versions.Newest(stale); got.ResourceVersion != live.ResourceVersion {
		t.Errorf("Newest(stale) = %s, want the written %s", got.ResourceVersion, live.ResourceVersion)
	}
	if got := testutil.ToFloat64(operatormetrics.StatusWrites.WithLabelValues("test-reapply", resultConflict)); got != 1 {
		t.Errorf("conflicts counted: %v, want 1", got)
	}
	if got := testutil.ToFloat64(operatormetrics.StatusWrites.WithLabelValues("test-reapply", resultWritten)); got != 1 {
		t.Errorf("writes counted: %v, want 1", got)
	}
}

// With one attempt (the status controller's), a conflict is returned at
// once and nothing is re-read.
func TestUpdateStopsAfterItsSteps(t *testing.T) {
	ctx := context.Background()
	c := server(t)
	stale := get(t, c)
	if err := c.Status().Update(ctx, stale.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	w := &Writer{Name: "test-steps", Client: c, Live: c, Backoff: wait.Backoff{Steps: 1}}
	calls := 0
	_, err := w.Update(ctx, stale, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		calls++
		base.Status.ExpectedPods = 6
		return base, nil
	})
	if !apierrors.IsConflict(err) || calls != 1 {
		t.Errorf("err %v after %d attempts, want a conflict after 1", err, calls)
	}
}

func TestUpdateWritesNothingWhenApplyHasNothing(t *testing.T) {
	ctx := context.Background()
	c := server(t)
	before := get(t, c)
	w := &Writer{Name: "test-nothing", Client: c, Live: c}
	written, err := w.Update(ctx, before, func(*policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		return nil, nil
	})
	if err != nil || written != nil || get(t, c).ResourceVersion != before.ResourceVersion {
		t.Errorf("written %v, err %v; want nothing written", written, err)
	}
	boom := errors.New("boom")
	if _, err := w.Update(ctx, before, func(*policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		return nil, boom
	}); !errors.Is(err, boom) {
		t.Errorf("err %v, want the apply's error", err)
	}
}

// A budget deleted and re-created under the same name between attempts is
// not written: the writer's fields were derived for the other one.
func TestUpdateRefusesARecreatedBudget(t *testing.T) {
	ctx := context.Background()
	c := server(t)
	stale := get(t, c)
	if err := c.Delete(ctx, stale.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b", UID: "u2"}}); err != nil {
		t.Fatal(err)
	}
	w := &Writer{Name: "test-gone", Client: c, Live: c}
	_, err := w.Update(ctx, stale, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		base.Status.ExpectedPods = 6
		return base, nil
	})
	if !errors.Is(err, ErrGone) {
		t.Errorf("err %v, want ErrGone", err)
	}
	if got := get(t, c); got.Status.ExpectedPods != 0 {
		t.Errorf("the re-created budget was written: %+v", got.Status)
	}
}

// The status controller's fields come from the version it computed on: when
// this process already knows a newer one, nothing is sent, and a conflict
// says to compute again.
func TestOnlyFromStartSendsNothingOnAKnownOlderVersion(t *testing.T) {
	ctx := context.Background()
	c := server(t)
	stale := get(t, c)
	versions := &Versions{}
	other := &Writer{Name: "test-other", Client: c, Live: c, Versions: versions}
	if _, err := other.Update(ctx, stale, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		base.Status.DisruptedPods = []policyv1alpha1.DisruptedPod{{Name: "web-1", UID: "p1", Domain: "zone-a"}}
		return base, nil
	}); err != nil {
		t.Fatal(err)
	}
	w := &Writer{Name: "test-stale", Client: c, Live: c, Versions: versions, Backoff: wait.Backoff{Steps: 1}, OnlyFromStart: true}
	calls := 0
	_, err := w.Update(ctx, stale, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
		calls++
		base.Status.DisruptedPods = nil
		return base, nil
	})
	if !apierrors.IsConflict(err) || calls != 0 {
		t.Errorf("err %v after %d applies, want a conflict and none", err, calls)
	}
	if got := testutil.ToFloat64(operatormetrics.StatusWrites.WithLabelValues("test-stale", resultConflict)); got != 0 {
		t.Errorf("%v conflicts sent to the API server, want 0", got)
	}
	if got := testutil.ToFloat64(operatormetrics.StatusWrites.WithLabelValues("test-stale", resultStale)); got != 1 {
		t.Errorf("stale writes counted: %v, want 1", got)
	}
	if live := get(t, c); len(live.Status.DisruptedPods) != 1 {
		t.Errorf("the other writer's record was lost: %+v", live.Status.DisruptedPods)
	}
}

// Writers of one process take turns on a budget; a writer waiting for its
// turn gives up with its context.
func TestLockWaitsNoLongerThanTheContext(t *testing.T) {
	var v Versions
	key := types.NamespacedName{Namespace: "ns", Name: "b"}
	unlock, err := v.Lock(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := v.Lock(ctx, key); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second Lock: %v, want the deadline", err)
	}
	unlock()
	again, err := v.Lock(context.Background(), key)
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	again()
}

// A budget over 40 partitions: the writer stores the status compact (only
// the partition not at full health listed) and keeps every row in what it
// returns; after a conflict it applies on the live version expanded.
func TestWriterStoresCompactAndWorksOnEveryRow(t *testing.T) {
	ctx := context.Background()
	c := server(t)
	rows := func(degraded string) []policyv1alpha1.DomainStatus {
		var out []policyv1alpha1.DomainStatus
		for i := 0; i < 40; i++ {
			r := policyv1alpha1.DomainStatus{Name: fmt.Sprint(i), ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1}
			if r.Name == degraded {
				r.CurrentHealthy, r.DisruptionsAllowed = 2, 0
			}
			out = append(out, r)
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
		return out
	}
	stale := get(t, c)
	w := &Writer{Name: "test-compact", Client: c, Live: c, Versions: &Versions{}}
	var seen [][]policyv1alpha1.DomainStatus
	write := func(w *Writer, start *policyv1alpha1.TopologyDisruptionBudget, degraded string) *policyv1alpha1.TopologyDisruptionBudget {
		t.Helper()
		written, err := w.Update(ctx, start, func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
			seen = append(seen, base.Status.Domains)
			base.Status.Domains = rows(degraded)
			base.Status.DomainCount = 40
			return base, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return written
	}
	written := write(w, stale, "7")
	if !equality.Semantic.DeepEqual(written.Status.Domains, rows("7")) {
		t.Errorf("the written version returned has %d rows, want all 40", len(written.Status.Domains))
	}
	stored := get(t, c).Status
	if len(stored.Domains) != 1 || stored.Domains[0].Name != "7" || len(stored.HealthyDomains) != 1 ||
		stored.HealthyDomains[0].Count != 39 || strings.Join(stored.HealthyDomains[0].Ranges, ",") != "0-6,8-39" {
		t.Errorf("stored status: domains %+v, healthyDomains %+v; want partition 7 listed, 39 in ranges 0-6,8-39", stored.Domains, stored.HealthyDomains)
	}
	// The same writer starts from the newest version it knows, every row.
	seen = nil
	write(w, stale, "9")
	if len(seen) != 1 || !equality.Semantic.DeepEqual(seen[0], rows("7")) {
		t.Errorf("Apply saw %d versions; want the one written, with all 40 rows", len(seen))
	}
	// A writer that knows no newer version starts from the stale one and
	// conflicts: the live version it applies on has every row.
	seen = nil
	write(&Writer{Name: "test-compact", Client: c, Live: c}, stale, "8")
	if len(seen) != 2 || !equality.Semantic.DeepEqual(seen[1], rows("9")) {
		t.Errorf("after the conflict Apply saw %d versions; want the live one with all 40 rows", len(seen))
	}
	stored = get(t, c).Status
	if len(stored.Domains) != 1 || stored.Domains[0].Name != "8" {
		t.Errorf("stored status lists %+v, want partition 8 only", stored.Domains)
	}
}

// An API server whose CRD predates status.healthyDomains prunes it (Helm
// never upgrades CRDs): the writer notices at its first compact write,
// stores every row at once, and from then on stores every row.
func TestWriterStoresEveryRowUnderAnOldCRD(t *testing.T) {
	t.Cleanup(func() { storedFull.Store(false) })
	ctx := context.Background()
	prune := interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
		if tdb, ok := obj.(*policyv1alpha1.TopologyDisruptionBudget); ok {
			tdb.Status.HealthyDomains = nil
		}
		return c.SubResource(sub).Update(ctx, obj, opts...)
	}}
	c := interceptor.NewClient(server(t), prune)
	rows := partitionRows40()
	w := &Writer{Name: "test-old-crd", Client: c, Live: c, Versions: &Versions{}}
	for i := 0; i < 2; i++ {
		written, err := w.Update(ctx, get(t, c), func(base *policyv1alpha1.TopologyDisruptionBudget) (*policyv1alpha1.TopologyDisruptionBudget, error) {
			base.Status.Domains = rows
			base.Status.ExpectedPods = int32(100 + i)
			return base, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		stored := get(t, c)
		if len(stored.Status.Domains) != 40 || stored.Status.ExpectedPods != int32(100+i) {
			t.Fatalf("write %d: stored %d rows (expectedPods %d), want all 40", i, len(stored.Status.Domains), stored.Status.ExpectedPods)
		}
		if written.ResourceVersion != stored.ResourceVersion || len(written.Status.Domains) != 40 {
			t.Errorf("write %d: returned version %s with %d rows, stored %s", i, written.ResourceVersion, len(written.Status.Domains), stored.ResourceVersion)
		}
	}
}

func partitionRows40() []policyv1alpha1.DomainStatus {
	var out []policyv1alpha1.DomainStatus
	for i := 0; i < 40; i++ {
		out = append(out, policyv1alpha1.DomainStatus{Name: fmt.Sprint(i), ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
