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

package snapshot

import (
	"context"
	"errors"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

func scheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := policyv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func zoned(name string) *policyv1alpha1.TopologyDisruptionBudget {
	b := builders.Budget(name).Namespace("ns").MatchLabels(map[string]string{"app": name}).
		TopologyKey(builders.ZoneKey).MaxUnavailable(intstr.FromInt32(1)).Obj()
	b.UID, b.Generation = types.UID("uid-"+b.Name), 1
	return b
}

// A budget's spec is parsed once per generation: the same Coverage comes
// back until the generation changes, a new one after.
func TestCoverageIsParsedOncePerGeneration(t *testing.T) {
	var g Gatherer
	b := zoned("web")
	first := g.Coverage(b)
	if again := g.Coverage(b.DeepCopy()); again != first {
		t.Errorf("same generation: parsed again")
	}
	next := b.DeepCopy()
	next.Generation = 2
	next.Spec.Selector = &policyv1alpha1.LabelSelector{MatchLabels: map[string]policyv1alpha1.LabelValue{"app": "api"}}
	cov := g.Coverage(next)
	if cov == first || !cov.MightSelect("ns", map[string]string{"app": "api"}) || cov.MightSelect("ns", map[string]string{"app": "web"}) {
		t.Errorf("new generation: the old selector is still used")
	}
	other := b.DeepCopy()
	other.UID = "uid-recreated"
	if g.Coverage(other) == first {
		t.Errorf("a re-created budget (new UID) got the old one's coverage")
	}
}

func TestUnusedCoveragesAreDropped(t *testing.T) {
	var c coverages
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	c.of(zoned("web"), now)
	c.of(zoned("api"), now.Add(idle+time.Second))
	if len(c.m) != 1 {
		t.Errorf("%d coverages kept, want 1 (web idled out)", len(c.m))
	}
}

// Which budgets might cover a pod: those whose selector matches, and a
// broken one unless its selector clearly rules the pod out.
func TestBudgetsSelecting(t *testing.T) {
	broken := zoned("broken")
	broken.Spec.Selector = &policyv1alpha1.LabelSelector{MatchExpressions: []policyv1alpha1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	ruledOut := zoned("ruled-out")
	ruledOut.Spec.Selector = &policyv1alpha1.LabelSelector{
		MatchLabels:      map[string]policyv1alpha1.LabelValue{"app": "db"},
		MatchExpressions: []policyv1alpha1.LabelSelectorRequirement{{Key: "tier", Operator: "Bogus"}},
	}
	elsewhere := zoned("web")
	elsewhere.Namespace = "other"
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(zoned("web"), zoned("api"), broken, ruledOut, elsewhere).Build()
	g := Gatherer{Cache: c}
	got, err := g.BudgetsSelecting(context.Background(), "ns", map[string]string{"app": "web"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, b := range got {
		names = append(names, b.Name)
	}
	if len(names) != 2 || names[0] != "broken" || names[1] != "web" {
		t.Errorf("budgets %v, want [broken web]", names)
	}
}

// One node-error policy: a node nobody knows is gone (nil, no error); a node
// the cache does not know is read live when Live is set; any other error is
// kept for the pass, which must not decide on it.
func TestNodesPolicy(t *testing.T) {
	ctx := context.Background()
	cached := builders.Node("n1").Zone("zone-a").Obj()
	late := builders.Node("n-late").Zone("zone-b").Obj()
	broken := errors.New("boom")
	cache := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(cached).
		WithInterceptorFuncs(interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if key.Name == "n-broken" {
				return broken
			}
			return c.Get(ctx, key, obj, opts...)
		}}).Build()
	live := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(cached, late).Build()

	nodes := (&Gatherer{Cache: cache}).Nodes(ctx)
	if n := nodes.Get("n1"); n == nil || n.Labels[builders.ZoneKey] != "zone-a" {
		t.Errorf("cached node: %v", n)
	}
	if n := nodes.Get("n-late"); n != nil || nodes.Err() != nil {
		t.Errorf("unknown node without Live: %v, %v; want nil, no error", n, nodes.Err())
	}
	if n := nodes.Get("n-broken"); n != nil || !errors.Is(nodes.Err(), broken) {
		t.Errorf("read error: %v, %v; want nil and the error kept", n, nodes.Err())
	}

	withLive := (&Gatherer{Cache: cache, Live: live}).Nodes(ctx)
	if n := withLive.Get("n-late"); n == nil || n.Labels[builders.ZoneKey] != "zone-b" {
		t.Errorf("a node newer than the cache, with Live: %v", n)
	}
	if n := withLive.Get("n-gone"); n != nil || withLive.Err() != nil {
		t.Errorf("a node nobody knows: %v, %v; want nil, no error", n, withLive.Err())
	}
}

// A snapshot holds the pods of the budget's namespace its selector matches,
// and places them through its nodes.
func TestSnapshotHoldsTheSelectedPods(t *testing.T) {
	ctx := context.Background()
	objs := []client.Object{
		builders.Node("n1").Zone("zone-a").Obj(),
		builders.Pod("web-0").Namespace("ns").Label("app", "web").OnNode("n1").Running().Ready().Obj(),
		builders.Pod("web-1").Namespace("ns").Label("app", "web").Obj(),
		builders.Pod("api-0").Namespace("ns").Label("app", "api").OnNode("n1").Obj(),
		builders.Pod("web-x").Namespace("other").Label("app", "web").OnNode("n1").Obj(),
	}
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).Build()
	s, err := (&Gatherer{Cache: c}).Snapshot(ctx, zoned("web"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range s.Pods {
		place, err := s.Place(p)
		if err != nil || !place.Covered {
			t.Errorf("%s: %+v, %v", p.Name, place, err)
		}
		got[p.Name] = place.Domain
	}
	if len(got) != 2 || got["web-0"] != "zone-a" || got["web-1"] != "" {
		t.Errorf("pods and domains %v, want web-0 in zone-a and web-1 unscheduled", got)
	}

	broken := zoned("web")
	broken.Spec.Selector = nil
	s, err = (&Gatherer{Cache: c}).Snapshot(ctx, broken)
	if err != nil || s.Coverage.Err() == nil || len(s.Pods) != 0 {
		t.Errorf("a spec that cannot be evaluated: err %v, coverage err %v, %d pods; want the coverage error and no pods", err, s.Coverage.Err(), len(s.Pods))
	}
}

// The fingerprint changes with what the status reads of the pods, and with
// nothing else: the deletion costs the operator writes on them, say.
func TestFingerprintFollowsWhatTheStatusReads(t *testing.T) {
	base := func() *corev1.Pod {
		return builders.Pod("web-0").Namespace("ns").UID("u0").Label("app", "web").OnNode("n1").Running().Ready().
			ControlledBy(builders.RefTo(builders.ReplicaSet("web").Namespace("ns").Obj())).Obj()
	}
	other := builders.Pod("web-1").Namespace("ns").UID("u1").Label("app", "web").OnNode("n2").Running().Ready().Obj()
	of := func(pods ...*corev1.Pod) uint64 { return (&Snapshot{Pods: pods}).Fingerprint() }
	want := of(base(), other)
	if got := of(other, base()); got != want {
		t.Error("the fingerprint depends on the order of the pods")
	}
	same := map[string]func(p *corev1.Pod){
		"a deletion cost": func(p *corev1.Pod) {
			p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "-3"}
		},
		"a new resourceVersion": func(p *corev1.Pod) { p.ResourceVersion = "99" },
	}
	for name, change := range same {
		p := base()
		change(p)
		if of(p, other) != want {
			t.Errorf("%s changes the fingerprint", name)
		}
	}
	differs := map[string]func(p *corev1.Pod){
		"readiness":      func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse },
		"phase":          func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded },
		"node":           func(p *corev1.Pod) { p.Spec.NodeName = "n3" },
		"deletion":       func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)} },
		"a label":        func(p *corev1.Pod) { p.Labels["zone"] = "a" },
		"the controller": func(p *corev1.Pod) { p.OwnerReferences[0].UID = "other" },
		"the pod's UID":  func(p *corev1.Pod) { p.UID = "u9" },
	}
	for name, change := range differs {
		p := base()
		change(p)
		if of(p, other) == want {
			t.Errorf("a change of %s leaves the fingerprint as it was", name)
		}
	}
	if of(base()) == want {
		t.Error("a pod gone leaves the fingerprint as it was")
	}
	// Fields are hashed apart, and each pod with its own labels.
	runOn := base()
	runOn.Labels = map[string]string{"appw": "eb"}
	if of(runOn, other) == want {
		t.Error("a label's value run into its name leaves the fingerprint as it was")
	}
	swapped, otherSwapped := base(), other.DeepCopy()
	swapped.Labels["app"], otherSwapped.Labels["app"] = "api", "web"
	mixed := of(swapped, otherSwapped)
	swapped.Labels["app"], otherSwapped.Labels["app"] = "web", "api"
	if mixed == of(swapped, otherSwapped) {
		t.Error("two pods' labels swapped leave the fingerprint as it was")
	}
}
