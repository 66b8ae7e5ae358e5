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
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/budgetstatus"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
	"github.com/tdb-operator/tdb-operator/internal/tombstone"
)

// reopened is a cluster whose budget's status was computed while web-2 was
// not Ready (zone-a: 3 expected, 2 healthy, nothing to spare); web-2 has
// turned Ready since, and the status controller has not written it yet.
func reopened(t *testing.T, extra func(*builders.BudgetWrapper)) (client.Client, *policyv1alpha1.TopologyDisruptionBudget) {
	t.Helper()
	sts := builders.StatefulSet("web").Namespace("ns").Replicas(3).PodLabels(map[string]string{"app": "web"}).Obj()
	sts.UID = "s1"
	b := builders.Budget("b").Namespace("ns").Generation(1).MatchLabels(map[string]string{"app": "web"}).
		TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).ObservedGeneration(1).
		StatusDomains(policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 2, DesiredHealthy: 2}).
		Conditions(metav1.Condition{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionFalse,
			Reason: policyv1alpha1.ReasonInsufficientPods, ObservedGeneration: 1, LastTransitionTime: metav1.Now()})
	if extra != nil {
		extra(b)
	}
	objs := []client.Object{sts, zoneNode(), b.Obj()}
	for i := range 3 {
		objs = append(objs, builders.Pod(fmt.Sprintf("web-%d", i)).Namespace("ns").UID(types.UID(fmt.Sprintf("p%d", i))).
			Labels(map[string]string{"app": "web"}).ControlledBy(builders.RefTo(sts)).OnNode("n1").Running().Ready().Obj())
	}
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	return c, b.Obj()
}

func computes(v bool) func() bool { return func() bool { return v } }

// leaderBehind makes h the leader's webhook, with the status controller
// holding an event of budget b it has not finished a pass on.
func leaderBehind(h *EvictionHandler) {
	h.Computes = computes(true)
	h.Pending = &budgetstatus.Pending{}
	h.Pending.Touch(types.NamespacedName{Namespace: "ns", Name: "b"})
}

// Where the status controller runs, a refusal for want of allowance is
// checked against the pods as the cache shows them now: a replacement
// Ready a moment ago reopens its domain without waiting for the status
// write, and the grant's write carries the new numbers.
func TestARefusingStatusIsRecomputedFromTheCache(t *testing.T) {
	c, _ := reopened(t, nil)
	h := newHandler(t, c, c)
	leaderBehind(h)

	resp := h.Handle(context.Background(), request(t, eviction(), false))
	if !resp.Allowed {
		t.Fatalf("refused (%d: %s); the cache shows zone-a whole, 3 of 3 Ready", resp.Result.Code, resp.Result.Message)
	}
	got := getBudget(t, c, "b")
	if len(got.Status.DisruptedPods) != 1 || got.Status.DisruptedPods[0].Name != "web-0" {
		t.Errorf("records after the grant: %+v; want web-0's", got.Status.DisruptedPods)
	}
	row := got.Status.Domains[0]
	if row.ExpectedPods != 3 || row.CurrentHealthy != 2 || row.DisruptionsAllowed != 0 {
		t.Errorf("zone-a after the grant: %+v; want 3 expected, 2 healthy (web-0 recorded), nothing allowed", row)
	}
	// And the next eviction in zone-a is refused: web-0 is charged.
	req := request(t, map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": "web-1", "namespace": "ns"}}, false)
	req.Name = "web-1"
	if resp := h.Handle(context.Background(), req); resp.Allowed {
		t.Errorf("a second eviction in zone-a was allowed; zone-a allows one")
	}
}

// Elsewhere (a replica that does not run the status controller, whose
// cache may be older than the one the status came from), and for a status
// that is not a plain want of allowance, the written status is final.
func TestARefusingStatusIsFinalWhereNothingIsRecomputed(t *testing.T) {
	for name, tc := range map[string]struct {
		computes bool
		current  bool
		extra    func(*builders.BudgetWrapper)
	}{
		"not the leader": {computes: false},
		// The status controller has finished a pass since the last event:
		// nothing to recompute (in this fake, the cache disagrees with
		// the status; in a cluster it would not).
		"status current": {computes: true, current: true},
		"fail-closed status": {computes: true, extra: func(b *builders.BudgetWrapper) {
			b.Conditions(metav1.Condition{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionFalse,
				Reason: policyv1alpha1.ReasonSyncFailed, Message: "cannot read scale", ObservedGeneration: 1, LastTransitionTime: metav1.Now()})
		}},
		"stale status": {computes: true, extra: func(b *builders.BudgetWrapper) { b.Generation(2) }},
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := reopened(t, tc.extra)
			h := newHandler(t, c, c)
			leaderBehind(h)
			h.Computes = computes(tc.computes)
			if tc.current {
				key := types.NamespacedName{Namespace: "ns", Name: "b"}
				h.Pending.Done(key, h.Pending.Begin(key))
			}
			resp := h.Handle(context.Background(), request(t, eviction(), false))
			if resp.Allowed || resp.Result.Code != http.StatusTooManyRequests {
				t.Fatalf("answer %v %d (%s); want a 429 from the written status", resp.Allowed, resp.Result.Code, resp.Result.Message)
			}
			if got := getBudget(t, c, "b"); len(got.Status.DisruptedPods) != 0 {
				t.Errorf("records %+v; want none", got.Status.DisruptedPods)
			}
		})
	}
}

// A dry run is decided the same way, and writes nothing.
func TestADryRunSeesTheRecomputedStatus(t *testing.T) {
	c, _ := reopened(t, nil)
	h := newHandler(t, c, c)
	leaderBehind(h)
	resp := h.Handle(context.Background(), request(t, eviction(), true))
	if !resp.Allowed {
		t.Fatalf("dry run refused (%s)", resp.Result.Message)
	}
	if got := getBudget(t, c, "b"); len(got.Status.DisruptedPods) != 0 || got.Status.Domains[0].CurrentHealthy != 2 {
		t.Errorf("a dry run wrote the status: %+v", got.Status)
	}
}

// A StatefulSet pod's replacement (same name, new UID) reopens its domain
// too: the predecessor's record, which the status controller confirmed gone
// with a live read, is not held as one more expected pod.
func TestAStatefulSetReplacementReopensOnTheRecomputedStatus(t *testing.T) {
	rec := policyv1alpha1.DisruptedPod{Name: "web-0", UID: "p0-old", Domain: "zone-a", ControllerUID: "s1",
		Time: metav1.NewTime(time.Date(2026, 11, 21, 17, 59, 40, 0, time.UTC))}
	c, _ := reopened(t, func(b *builders.BudgetWrapper) { b.DisruptedPods(rec) })
	h := newHandler(t, c, c)
	leaderBehind(h)
	key := types.NamespacedName{Namespace: "ns", Name: "b"}
	h.Pending.ConfirmGone(key, map[budget.RecordKey]bool{budget.KeyOf(rec): true})
	req := request(t, map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": "web-1", "namespace": "ns"}}, false)
	req.Name = "web-1"
	if resp := h.Handle(context.Background(), req); !resp.Allowed {
		t.Fatalf("refused (%s); web-0's replacement is Ready and its predecessor confirmed gone", resp.Result.Message)
	}
}

// The metric counts grants written on a recomputed status: one per grant,
// none for a dry run.
func TestRecomputedGrantsAreCountedOnce(t *testing.T) {
	c, _ := reopened(t, nil)
	h := newHandler(t, c, c)
	leaderBehind(h)
	before := testutil.ToFloat64(operatormetrics.RecomputedGrants)
	if resp := h.Handle(context.Background(), request(t, eviction(), false)); !resp.Allowed {
		t.Fatalf("refused: %s", resp.Result.Message)
	}
	if d := testutil.ToFloat64(operatormetrics.RecomputedGrants) - before; d != 1 {
		t.Errorf("one recomputed grant counted %v times", d)
	}
	c2, _ := reopened(t, nil)
	h2 := newHandler(t, c2, c2)
	leaderBehind(h2)
	before = testutil.ToFloat64(operatormetrics.RecomputedGrants)
	if resp := h2.Handle(context.Background(), request(t, eviction(), true)); !resp.Allowed {
		t.Fatalf("dry run refused: %s", resp.Result.Message)
	}
	if d := testutil.ToFloat64(operatormetrics.RecomputedGrants) - before; d != 0 {
		t.Errorf("a dry run counted %v recomputed grants", d)
	}
}

// setReady sets pod name's Ready condition in c (the cache of these tests).
func setReady(t *testing.T, c client.Client, name string, ready bool) {
	t.Helper()
	var pod corev1.Pod
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: name}, &pod); err != nil {
		t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == corev1.PodReady {
			pod.Status.Conditions[i].Status = status
		}
	}
	if err := c.Status().Update(context.Background(), &pod); err != nil {
		t.Fatal(err)
	}
}

func recomputations(result string) float64 {
	return testutil.ToFloat64(operatormetrics.Recomputations.WithLabelValues(result))
}

// Refusals of a budget that nothing changed between share one computation
// (a refusal storm costs one cache read per event, not one per refusal),
// and the next event of the budget is read: web-2 turning Ready reopens
// zone-a.
func TestRefusalsShareARecomputationUntilTheNextEvent(t *testing.T) {
	c, _ := reopened(t, nil)
	setReady(t, c, "web-2", false)
	h := newHandler(t, c, c)
	leaderBehind(h)
	key := types.NamespacedName{Namespace: "ns", Name: "b"}

	computed, reused := recomputations("computed"), recomputations("reused")
	for i := range 3 {
		if resp := h.Handle(context.Background(), request(t, eviction(), false)); resp.Allowed {
			t.Fatalf("refusal %d: allowed; web-2 is not Ready and zone-a has nothing to spare", i)
		}
	}
	if got := recomputations("computed") - computed; got != 1 {
		t.Errorf("three refusals with no event between computed %v times; want once", got)
	}
	if got := recomputations("reused") - reused; got != 2 {
		t.Errorf("three refusals with no event between reused a computation %v times; want twice", got)
	}

	setReady(t, c, "web-2", true)
	h.Pending.Touch(key) // the status controller's event handler, after the cache holds the change
	if resp := h.Handle(context.Background(), request(t, eviction(), false)); !resp.Allowed {
		t.Fatalf("refused (%s) after web-2's Ready event; zone-a is whole again", resp.Result.Message)
	}
	if got := recomputations("computed") - computed; got != 2 {
		t.Errorf("computations after the event: %v; want a second one", got)
	}
}

// A computation is not reused on other records (a grant written since:
// the records of the version being decided on differ) nor on other
// confirmations (a record confirmed gone since).
func TestARecomputationIsNotReusedOnOtherRecordsOrConfirmations(t *testing.T) {
	t.Run("a grant since", func(t *testing.T) {
		c, _ := reopened(t, nil)
		h := newHandler(t, c, c)
		leaderBehind(h)
		if resp := h.Handle(context.Background(), request(t, eviction(), false)); !resp.Allowed {
			t.Fatalf("refused: %s", resp.Result.Message)
		}
		// No event since: only the records say web-0 is charged. The
		// first computation, reused, would drop its record and allow.
		for _, name := range []string{"web-1", "web-2"} {
			if resp := h.Handle(context.Background(), evictionOf(t, name, false)); resp.Allowed {
				t.Fatalf("%s allowed after web-0's grant; zone-a allows one", name)
			}
		}
		if got := getBudget(t, c, "b"); len(got.Status.DisruptedPods) != 1 {
			t.Errorf("records %+v; want web-0's alone", got.Status.DisruptedPods)
		}
	})
	t.Run("a record confirmed gone since", func(t *testing.T) {
		rec := policyv1alpha1.DisruptedPod{Name: "web-0", UID: "p0-old", Domain: "zone-a", ControllerUID: "s1",
			Time: metav1.NewTime(time.Date(2026, 11, 21, 17, 59, 40, 0, time.UTC))}
		c, _ := reopened(t, func(b *builders.BudgetWrapper) { b.DisruptedPods(rec) })
		h := newHandler(t, c, c)
		leaderBehind(h)
		req := evictionOf(t, "web-1", false)
		if resp := h.Handle(context.Background(), req); resp.Allowed {
			t.Fatalf("allowed while web-0's predecessor is held (not confirmed gone)")
		}
		h.Pending.ConfirmGone(types.NamespacedName{Namespace: "ns", Name: "b"}, map[budget.RecordKey]bool{budget.KeyOf(rec): true})
		if resp := h.Handle(context.Background(), req); !resp.Allowed {
			t.Fatalf("refused (%s) after web-0's predecessor was confirmed gone", resp.Result.Message)
		}
	})
}

// goneNodeWorld is a StatefulSet of pods by zone whose web-2 still runs, in
// the cache, on node n3, deleted since; the written status refuses every
// zone and the status controller has an event of it to write.
func goneNodeWorld(t *testing.T, replicas int, zones []string, pods func(pod func(i int, node string) *builders.PodWrapper) []client.Object) (client.Client, *budgetstatus.Pending) {
	t.Helper()
	sts := builders.StatefulSet("web").Namespace("ns").Replicas(int32(replicas)).PodLabels(map[string]string{"app": "web"}).Obj()
	sts.UID = "s1"
	var rows []policyv1alpha1.DomainStatus
	for _, z := range zones {
		rows = append(rows, policyv1alpha1.DomainStatus{Name: z, ExpectedPods: 1})
	}
	b := builders.Budget("b").Namespace("ns").Generation(1).MatchLabels(map[string]string{"app": "web"}).
		TopologyKey(zoneKey).MaxUnavailable(intstr.FromInt32(1)).ObservedGeneration(1).StatusDomains(rows...).
		Conditions(metav1.Condition{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionFalse,
			Reason: policyv1alpha1.ReasonInsufficientPods, ObservedGeneration: 1, LastTransitionTime: metav1.Now()})
	objs := []client.Object{sts, b.Obj(), builders.Node("n1").Zone("zone-a").Obj(), builders.Node("n2").Zone("zone-b").Obj()}
	objs = append(objs, pods(func(i int, node string) *builders.PodWrapper {
		return builders.Pod(fmt.Sprintf("web-%d", i)).Namespace("ns").UID(types.UID(fmt.Sprintf("p%d", i))).
			Labels(map[string]string{"app": "web"}).ControlledBy(builders.RefTo(sts)).OnNode(node).Running()
	})...)
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).
		WithStatusSubresource(&policyv1alpha1.TopologyDisruptionBudget{}).Build()
	pending := &budgetstatus.Pending{}
	pending.Touch(types.NamespacedName{Namespace: "ns", Name: "b"})
	return c, pending
}

func evictionOf(t *testing.T, name string, dryRun bool) admission.Request {
	req := request(t, map[string]any{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": map[string]any{"name": name, "namespace": "ns"}}, dryRun)
	req.Name = name
	return req
}

// A computation that placed a pod by a deleted node's last labels is not
// shared: they expire on a clock, with no event of the budget. Once n3's
// labels are forgotten, web-2's missing pod counts in every zone and zone-a
// has nothing to spare; a computation kept from before would still allow.
func TestARecomputationThatReadADeletedNodeIsNotShared(t *testing.T) {
	c, pending := goneNodeWorld(t, 4, []string{"zone-a", "zone-b", "zone-c"}, func(pod func(int, string) *builders.PodWrapper) []client.Object {
		return []client.Object{pod(0, "n1").Ready().Obj(), pod(1, "n2").Ready().Obj(), pod(3, "n2").NotReady().Obj(), pod(2, "n3").Ready().Obj()}
	})
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC))
	gone := tombstone.New(clk)
	gone.Deleted(builders.Node("n3").Zone("zone-c").Obj())
	h := newHandler(t, c, c)
	h.GoneNodes, h.Computes, h.Pending = gone, computes(true), pending

	if resp := h.Handle(context.Background(), evictionOf(t, "web-1", false)); resp.Allowed {
		t.Fatalf("web-1 allowed; zone-b has a pod not Ready")
	}
	if resp := h.Handle(context.Background(), evictionOf(t, "web-0", true)); !resp.Allowed {
		t.Fatalf("web-0 refused while n3's labels place web-2 in zone-c (%s)", resp.Result.Message)
	}
	clk.Step(tombstone.DefaultTTL + time.Minute)
	if resp := h.Handle(context.Background(), evictionOf(t, "web-0", false)); resp.Allowed {
		t.Errorf("web-0 allowed after n3's labels expired: web-2's missing pod counts in zone-a too")
	}
}

// And one made before a deleted node's labels were noted does not keep
// refusing once they are (they come by a handler of their own, maybe after
// the node's event).
func TestARecomputationBeforeADeletedNodesLabelsIsNotShared(t *testing.T) {
	c, pending := goneNodeWorld(t, 3, []string{"zone-a", "zone-b"}, func(pod func(int, string) *builders.PodWrapper) []client.Object {
		return []client.Object{pod(0, "n1").Ready().Obj(), pod(1, "n2").Ready().Obj(), pod(2, "n3").Ready().Obj()}
	})
	gone := tombstone.New(nil)
	h := newHandler(t, c, c)
	h.GoneNodes, h.Computes, h.Pending = gone, computes(true), pending
	if resp := h.Handle(context.Background(), evictionOf(t, "web-0", true)); resp.Allowed {
		t.Fatalf("web-0 allowed while web-2's domain is unknown")
	}
	gone.Deleted(builders.Node("n3").Zone("zone-b").Obj())
	if resp := h.Handle(context.Background(), evictionOf(t, "web-0", true)); !resp.Allowed {
		t.Errorf("web-0 refused (%s) once n3's labels place web-2 in zone-b", resp.Result.Message)
	}
}

// closing is the reverse of reopened: the written status allows one in
// zone-a (3 of 3 healthy), and web-2 has turned not Ready since, an event
// the status controller has not written yet.
func closing(t *testing.T) client.Client {
	t.Helper()
	c, _ := reopened(t, func(b *builders.BudgetWrapper) {
		b.StatusDomains(policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1}).
			Conditions(metav1.Condition{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionTrue,
				Reason: policyv1alpha1.ReasonSufficientPods, ObservedGeneration: 1, LastTransitionTime: metav1.Now()})
	})
	setReady(t, c, "web-2", false)
	return c
}

// Where the status controller runs and has an event of the budget to
// write, a grant the written status allows is checked against the pods as
// the cache shows them: a pod of the domain that turned not Ready since
// takes the allowance, and the eviction is refused (at 1,000 nodes, a grant
// made on a status whose stricter write was still on its way exceeded a
// zone's budget). Without a pending event the written status decides.
func TestAGrantIsCheckedAgainstAStatusBehindTheCache(t *testing.T) {
	for _, dryRun := range []bool{false, true} {
		c := closing(t)
		h := newHandler(t, c, c)
		leaderBehind(h)
		resp := h.Handle(context.Background(), request(t, eviction(), dryRun))
		if resp.Allowed || resp.Result.Code != http.StatusTooManyRequests {
			t.Fatalf("dry run %v: answer %v %d (%s); want a 429: web-2 is not Ready and zone-a allows one", dryRun, resp.Allowed, resp.Result.Code, resp.Result.Message)
		}
		if got := getBudget(t, c, "b"); len(got.Status.DisruptedPods) != 0 {
			t.Errorf("records %+v after a refusal; want none", got.Status.DisruptedPods)
		}
	}

	c := closing(t)
	h := newHandler(t, c, c)
	leaderBehind(h)
	key := types.NamespacedName{Namespace: "ns", Name: "b"}
	h.Pending.Done(key, h.Pending.Begin(key))
	if resp := h.Handle(context.Background(), request(t, eviction(), false)); !resp.Allowed {
		t.Errorf("refused (%s) on a current status that allows one", resp.Result.Message)
	}
}

// replacedRecord is zone-a (3 expected, 2 healthy, maxUnavailable 2: one
// allowed, as written) whose web-2 was evicted and replaced by a
// StatefulSet pod of the same name, running, not Ready: the predecessor's
// record is still in status.
func replacedRecord(t *testing.T) (client.Client, policyv1alpha1.DisruptedPod) {
	t.Helper()
	rec := policyv1alpha1.DisruptedPod{Name: "web-2", UID: "p2-old", Domain: "zone-a", ControllerUID: "s1",
		Time: metav1.NewTime(time.Date(2026, 11, 21, 17, 59, 40, 0, time.UTC))}
	c, _ := reopened(t, func(b *builders.BudgetWrapper) {
		b.MaxUnavailable(intstr.FromInt32(2)).DisruptedPods(rec).
			StatusDomains(policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 2, DesiredHealthy: 1, DisruptionsAllowed: 1}).
			Conditions(metav1.Condition{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionTrue,
				Reason: policyv1alpha1.ReasonSufficientPods, ObservedGeneration: 1, LastTransitionTime: metav1.Now()})
	})
	var web2 corev1.Pod
	if err := c.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: "web-2"}, &web2); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(context.Background(), &web2); err != nil {
		t.Fatal(err)
	}
	replacement := builders.Pod("web-2").Namespace("ns").UID("p2-new").Labels(map[string]string{"app": "web"}).
		ControlledBy(webRef()).OnNode("n1").Running().NotReady().Obj()
	if err := c.Create(context.Background(), replacement); err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// A StatefulSet replacement running, not Ready yet, in its predecessor's
// domain: the recomputation holds the predecessor's record as one more
// expected pod until a live read confirms it gone (the status controller
// reads it before it writes). A grant the written status makes (3
// expected, 2 healthy, maxUnavailable 2: one allowed) is not refused for
// it: the webhook reads the pod live, confirms the record gone for the
// status controller too, and grants.
func TestAGrantCheckConfirmsAReplacedRecordLive(t *testing.T) {
	c, rec := replacedRecord(t)
	h := newHandler(t, c, c)
	leaderBehind(h)
	if resp := h.Handle(context.Background(), request(t, eviction(), false)); !resp.Allowed {
		t.Fatalf("refused (%s); zone-a has 2 of 3 healthy and allows 2 unavailable", resp.Result.Message)
	}
	if gone := h.Pending.Gone(types.NamespacedName{Namespace: "ns", Name: "b"}); !gone[budget.KeyOf(rec)] {
		t.Errorf("the record read gone is not shared with the status controller: %v", gone)
	}
}

// A grant on a budget the cache shows blocked (a new pod of it on a node
// without the zone label: the status controller's next write refuses
// everything, DomainError) is refused while that write is on its way.
func TestAGrantOnABudgetNowBlockedIsRefused(t *testing.T) {
	c, _ := reopened(t, func(b *builders.BudgetWrapper) {
		b.StatusDomains(policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1}).
			Conditions(metav1.Condition{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionTrue,
				Reason: policyv1alpha1.ReasonSufficientPods, ObservedGeneration: 1, LastTransitionTime: metav1.Now()})
	})
	if err := c.Create(context.Background(), builders.Node("n-unlabelled").Obj()); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(context.Background(), builders.Pod("web-3").Namespace("ns").UID("p3").Labels(map[string]string{"app": "web"}).
		ControlledBy(webRef()).OnNode("n-unlabelled").Running().Ready().Obj()); err != nil {
		t.Fatal(err)
	}
	h := newHandler(t, c, c)
	leaderBehind(h)
	if resp := h.Handle(context.Background(), request(t, eviction(), false)); resp.Allowed {
		t.Errorf("allowed on a budget whose pods the cache shows without a domain")
	}
}

// webRef is the controller reference of reopened's StatefulSet.
func webRef() metav1.OwnerReference {
	sts := builders.StatefulSet("web").Namespace("ns").Obj()
	sts.UID = "s1"
	return builders.RefTo(sts)
}

// A replica that does not run the status controller checks every grant the
// numbers made on its own cache, and refuses one the cache no longer
// allows (web-2 turned not Ready after the status was written): about half
// the evictions of a storm reach it. A grant its cache also allows goes
// through on the written status; a refusal is never lifted there.
func TestAReplicaThatIsNotTheLeaderRefusesAGrantItsCacheNoLongerAllows(t *testing.T) {
	for _, dryRun := range []bool{false, true} {
		c := closing(t)
		h := newHandler(t, c, c)
		h.Computes = computes(false)
		resp := h.Handle(context.Background(), request(t, eviction(), dryRun))
		if resp.Allowed || resp.Result.Code != http.StatusTooManyRequests {
			t.Fatalf("dry run %v: answer %v %d (%s); want a 429: web-2 is not Ready and zone-a allows one", dryRun, resp.Allowed, resp.Result.Code, resp.Result.Message)
		}
		if got := getBudget(t, c, "b"); len(got.Status.DisruptedPods) != 0 {
			t.Errorf("records %+v after a refusal; want none", got.Status.DisruptedPods)
		}
	}

	c := closing(t)
	setReady(t, c, "web-2", true)
	h := newHandler(t, c, c)
	h.Computes = computes(false)
	if resp := h.Handle(context.Background(), request(t, eviction(), false)); !resp.Allowed {
		t.Fatalf("refused (%s); status and cache both allow one", resp.Result.Message)
	}
	got := getBudget(t, c, "b")
	if len(got.Status.DisruptedPods) != 1 || got.Status.Domains[0].DisruptionsAllowed != 0 {
		t.Errorf("after the grant: records %+v, zone-a %+v; want web-0 charged on the written status", got.Status.DisruptedPods, got.Status.Domains[0])
	}

	// Recomputation off (NoRecompute): the written status decides.
	c = closing(t)
	h = newHandler(t, c, c)
	if resp := h.Handle(context.Background(), request(t, eviction(), false)); !resp.Allowed {
		t.Errorf("refused (%s) with recomputation off; the written status allows one", resp.Result.Message)
	}
}

// A replica that is not the leader confirms a replaced record live too: a
// StatefulSet replacement of web-2 runs, not Ready, and the written status
// (one allowed) is not refused for the predecessor's record its cache holds
// as one more expected pod (it would be refused until the record was
// dropped, up to 30 s per replacement).
func TestAReplicaThatIsNotTheLeaderConfirmsAReplacedRecordLive(t *testing.T) {
	c, _ := replacedRecord(t)
	h := newHandler(t, c, c)
	h.Computes = computes(false)
	if resp := h.Handle(context.Background(), request(t, eviction(), false)); !resp.Allowed {
		t.Fatalf("refused (%s); zone-a has 2 of 3 healthy and allows 2 unavailable", resp.Result.Message)
	}
}
