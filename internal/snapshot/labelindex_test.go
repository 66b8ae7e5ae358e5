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
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// fakeIndexer registers on a fake client's builder the indexes setup code
// registers on a manager.
type fakeIndexer struct{ b *fake.ClientBuilder }

func (f fakeIndexer) IndexField(_ context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	f.b.WithIndex(obj, field, extract)
	return nil
}

// A snapshot read through the label index holds exactly the pods a scan of
// the namespace finds, whatever the selector: random selectors of every
// operator (an empty one too) over random pods, read from the fake client
// and from the informer cache, with and without the index, and checked
// against the selector applied by hand.
func TestSnapshotThroughTheLabelIndexHoldsTheSamePods(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 11))
	keys := []string{"app", "tier", "track", "example.com/team"}
	values := []string{"a", "b", "c", ""}
	var pods []*corev1.Pod
	var objs []client.Object
	for i := range 300 {
		ns := "ns"
		if i%5 == 0 {
			ns = "other"
		}
		w := builders.Pod(fmt.Sprintf("p-%d", i)).Namespace(ns).UID(types.UID(fmt.Sprintf("u-%d", i)))
		for _, k := range keys {
			if rng.IntN(3) > 0 {
				w = w.Label(k, values[rng.IntN(len(values))])
			}
		}
		pods = append(pods, w.Obj())
		objs = append(objs, w.Obj())
	}

	b := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...)
	indexedFake := &Gatherer{}
	if err := IndexPodsByLabel(indexerOnly{indexer: fakeIndexer{b: b}}, indexedFake); err != nil {
		t.Fatal(err)
	}
	indexedFake.Cache = b.Build()
	readers := map[string]*Gatherer{
		"fake client":                 {Cache: fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).Build()},
		"fake client, label index":    indexedFake,
		"informer cache":              informerCache(t, false, pods, nil),
		"informer cache, label index": informerCache(t, true, pods, nil),
	}

	indexed := 0
	const selectors = 400
	for i := range selectors {
		tdb := zoned(fmt.Sprintf("b-%d", i))
		tdb.Spec.Selector = randomSelector(rng, keys, values)
		sel, err := metav1.LabelSelectorAsSelector(tdb.Spec.Selector.AsMeta())
		if err != nil {
			t.Fatalf("selector %v: %v", tdb.Spec.Selector, err)
		}
		if _, ok := requiredLabel(sel); ok {
			indexed++
		}
		var want []string
		for _, p := range pods {
			if p.Namespace == "ns" && sel.Matches(labels.Set(p.Labels)) {
				want = append(want, p.Name)
			}
		}
		sort.Strings(want)
		for name, g := range readers {
			s, err := g.Snapshot(context.Background(), tdb)
			if err != nil {
				t.Fatalf("%s, selector %q: %v", name, sel, err)
			}
			var got []string
			for _, p := range s.Pods {
				got = append(got, p.Name)
			}
			sort.Strings(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s, selector %q: pods (-want +got):\n%s", name, sel, diff)
			}
		}
	}
	// Both ways of reading were taken often.
	if indexed < selectors/4 || indexed > selectors*3/4 {
		t.Errorf("%d of %d selectors read through the index; want a fair share of each", indexed, selectors)
	}
}

// randomSelector picks up to two matchLabels and up to three
// matchExpressions of any operator over keys and values.
func randomSelector(rng *rand.Rand, keys, values []string) *policyv1alpha1.LabelSelector {
	sel := &policyv1alpha1.LabelSelector{}
	for range rng.IntN(3) {
		if sel.MatchLabels == nil {
			sel.MatchLabels = map[string]policyv1alpha1.LabelValue{}
		}
		sel.MatchLabels[keys[rng.IntN(len(keys))]] = policyv1alpha1.LabelValue(values[rng.IntN(len(values))])
	}
	operators := []metav1.LabelSelectorOperator{metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist}
	for range rng.IntN(4) {
		r := policyv1alpha1.LabelSelectorRequirement{Key: keys[rng.IntN(len(keys))], Operator: operators[rng.IntN(len(operators))]}
		if r.Operator == metav1.LabelSelectorOpIn || r.Operator == metav1.LabelSelectorOpNotIn {
			for range 1 + rng.IntN(2) {
				r.Values = append(r.Values, values[rng.IntN(len(values))])
			}
		}
		sel.MatchExpressions = append(sel.MatchExpressions, r)
	}
	return sel
}

// The index is read for a label every selected pod bears, and only then.
func TestRequiredLabel(t *testing.T) {
	for _, tc := range []struct {
		selector string
		want     string
	}{
		{selector: "", want: ""},
		{selector: "app=web", want: "app=web"},
		{selector: "app==web", want: "app=web"},
		{selector: "app in (web)", want: "app=web"},
		{selector: "app=", want: "app="},
		{selector: "app in (web,api)", want: ""},
		{selector: "app notin (web)", want: ""},
		{selector: "app", want: ""},
		{selector: "!app", want: ""},
		{selector: "app!=web", want: ""},
		// The first by label name, whatever the order written.
		{selector: "tier=db,app in (web,api),track=stable", want: "tier=db"},
		{selector: "track=stable,app in (web),tier=db", want: "app=web"},
	} {
		sel, err := labels.Parse(tc.selector)
		if err != nil {
			t.Fatalf("%q: %v", tc.selector, err)
		}
		got, ok := requiredLabel(sel)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("requiredLabel(%q) = %q, %v; want %q", tc.selector, got, ok, tc.want)
		}
	}
	if _, ok := requiredLabel(labels.Nothing()); ok {
		t.Error("requiredLabel(Nothing) found a label")
	}
}
