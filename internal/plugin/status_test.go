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
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/predict"
)

// partitionBudget is a budget over 25 partitions as stored: compact, with
// partition 7 degraded and a replica of partition 12 in flight.
func partitionBudget() *policyv1alpha1.TopologyDisruptionBudget {
	tdb := &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "mimir", Name: "ingesters", Generation: 1}}
	tdb.Spec.Partition = &policyv1alpha1.PartitionSource{Label: "apps.kubernetes.io/pod-index"}
	st := &tdb.Status
	st.ObservedGeneration = 1
	for i := 0; i < 25; i++ {
		r := policyv1alpha1.DomainStatus{Name: fmt.Sprint(i), ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1}
		if i == 7 || i == 12 {
			r.CurrentHealthy, r.DisruptionsAllowed = 2, 0
		}
		st.Domains = append(st.Domains, r)
	}
	sort.Slice(st.Domains, func(i, j int) bool { return st.Domains[i].Name < st.Domains[j].Name })
	st.DomainCount = 25
	st.DisruptedPods = []policyv1alpha1.DisruptedPod{{Name: "ingester-zone-a-12", Domain: "12", Time: metav1.Now()}}
	st.Conditions = []metav1.Condition{{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionTrue, Reason: policyv1alpha1.ReasonSufficientPods}}
	budget.CompactStatus(st)
	return tdb
}

// The plugin reads the compact status a budget over many partitions
// stores, decides on every partition, and prints the partitions not at
// full health with a count of the others.
func TestStatusOfManyPartitions(t *testing.T) {
	stored := partitionBudget()
	if len(stored.Status.Domains) != 2 || len(stored.Status.HealthyDomains) != 1 {
		t.Fatalf("stored status is not compact: %+v", stored.Status)
	}
	s := runtime.NewScheme()
	if err := policyv1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	c := &clients{kube: kubefake.NewClientset(), crs: fake.NewClientBuilder().WithScheme(s).WithObjects(stored).Build()}
	tdbs, _, err := c.budgets(context.Background(), []string{"mimir"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tdbs) != 1 || len(tdbs[0].Status.Domains) != 25 {
		t.Fatalf("read %d budgets, want 1 with 25 partitions: %+v", len(tdbs), tdbs)
	}
	list := BudgetStatusList{Items: []predict.BudgetStatus{predict.StatusOf(&tdbs[0])}}
	var out bytes.Buffer
	printStatus(&out, list, time.Now())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("printed %d lines, want a header, partitions 12 and 7, and the count of the others:\n%s", len(lines), out.String())
	}
	for i, want := range [][]string{{"mimir", "ingesters", "23", "SufficientPods", "12", "2/3", "2", "0", "-", "1"}, {"7", "2/3", "2", "0", "-", "0"}, {"(23 more at full health)"}} {
		if f := strings.Fields(lines[i+1]); !strings.HasPrefix(strings.Join(f, " "), strings.Join(want, " ")) {
			t.Errorf("line %d is %q, want it to start with %q", i+1, lines[i+1], strings.Join(want, " "))
		}
	}
}
