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

package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/predict"
	"github.com/tdb-operator/tdb-operator/internal/testing/builders"
)

// keysOf lists the JSON keys of a document, paths joined by dots, with
// "[]" for list items.
func keysOf(prefix string, v any, out map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			out[prefix+k] = true
			keysOf(prefix+k+".", x, out)
		}
	case []any:
		for _, x := range t {
			keysOf(strings.TrimSuffix(prefix, ".")+"[].", x, out)
		}
	}
}

// The -o json document of can-drain is a versioned schema scripts read:
// the keys the issue names are there, with their types.
func TestDrainCheckSchema(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	nodes := []corev1.Node{*builders.Node("n-a").Zone("zone-a").Obj(), *builders.Node("n-b").Zone("zone-b").Obj()}
	var pods []*corev1.Pod
	for i, n := range []string{"n-a", "n-a", "n-b"} {
		pods = append(pods, builders.Pod(fmt.Sprintf("web-%d", i)).Namespace("ns").Label("app", "web").OnNode(n).Running().Ready().Obj())
	}
	tdb := builders.Budget("web").Namespace("ns").MatchLabels(map[string]string{"app": "web"}).TopologyKey(builders.ZoneKey).
		MaxUnavailable(intstr.FromInt32(1)).Generation(1).ObservedGeneration(1).
		StatusDomains(
			policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 2, CurrentHealthy: 2, DesiredHealthy: 1, DisruptionsAllowed: 1},
			policyv1alpha1.DomainStatus{Name: "zone-b", ExpectedPods: 1, CurrentHealthy: 1, DesiredHealthy: 0, DisruptionsAllowed: 1}).Obj()
	pdb := policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-pdb", Generation: 1},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{ObservedGeneration: 1, ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1},
	}
	ds := &drainSet{nodes: []string{"n-a", "n-b"}, pods: map[string][]*corev1.Pod{"n-a": pods[:2], "n-b": pods[2:]},
		snap: predict.NewSnapshot(nodes, []policyv1alpha1.TopologyDisruptionBudget{*tdb}, []policyv1.PodDisruptionBudget{pdb}, now)}
	check := canDrain(ds)
	b, err := json.Marshal(check)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["apiVersion"] != "tdb.dev/v1alpha1" || doc["kind"] != "DrainCheck" {
		t.Errorf("apiVersion/kind = %v/%v", doc["apiVersion"], doc["kind"])
	}
	got := map[string]bool{}
	keysOf("", doc, got)
	for _, k := range []string{"allowedTogether", "nodes", "pods", "pods[].namespace", "pods[].name", "pods[].node", "pods[].evictableNow",
		"pods[].blockedBy", "pods[].budgets", "pods[].budgets[].kind", "pods[].budgets[].domain", "pods[].budgets[].allowed",
		"together.blockedBy", "together.blockedBy[].kind", "together.blockedBy[].namespace", "together.blockedBy[].name",
		"together.blockedBy[].domain", "together.blockedBy[].message", "together.blockedBy[].pod"} {
		if !got[k] {
			t.Errorf("key %s missing from %s", k, b)
		}
	}
	// Each pod alone may go (zone-a allows 1, the PDB 1), not all three:
	// web-0 spends zone-a's allowance and the PDB's; web-1 is refused by
	// both, web-2 (zone-b) by the PDB.
	if check.AllowedTogether {
		t.Errorf("allowedTogether = true, want false: %s", b)
	}
	for _, p := range check.Pods {
		if !p.EvictableNow {
			t.Errorf("%s: evictableNow false, want true alone", p.Name)
		}
	}
	var kinds []string
	for _, bl := range check.Together.BlockedBy {
		kinds = append(kinds, bl.Kind+"/"+bl.Name+"@"+bl.Pod)
	}
	sort.Strings(kinds)
	want := []string{"PodDisruptionBudget/web-pdb@ns/web-1", "PodDisruptionBudget/web-pdb@ns/web-2", "TopologyDisruptionBudget/web@ns/web-1"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("together blocked by %v, want %v", kinds, want)
	}
}

// Exit statuses: 0 yes, 1 no, 2 for anything that is not an answer.
func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{answeredNo, 1},
		{&ExitError{Code: ExitFailed, Err: errors.New("node(s) not found: x")}, 2},
		{errors.New("cannot reach the API server"), 2},
		{fmt.Errorf("wrapped: %w", answeredNo), 1},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
