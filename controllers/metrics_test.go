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

package controllers

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
)

// seriesOf lists the series of the given gauges as
// `name{label="value",...} value`, sorted.
func seriesOf(t *testing.T, gauges ...*prometheus.GaugeVec) []string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, g := range gauges {
		reg.MustRegister(g)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			out = append(out, fmt.Sprintf("%s{%s} %g", f.GetName(), strings.Join(labels, ","), m.GetGauge().GetValue()))
		}
	}
	sort.Strings(out)
	return out
}

// budgetSeries are the gauges the status controller exports per budget.
var budgetSeries = []*prometheus.GaugeVec{
	operatormetrics.DomainAllowed, operatormetrics.DomainBlockedSince,
	operatormetrics.DomainExpectedPods, operatormetrics.DomainCurrentHealthy, operatormetrics.DomainDesiredHealthy,
	operatormetrics.BudgetCondition,
}

// rolloutSeries are the gauges the rollout controller exports per budget.
var rolloutSeries = []*prometheus.GaugeVec{
	operatormetrics.RolloutDomainPhase, operatormetrics.RolloutDomainUpdatedPods, operatormetrics.RolloutDomainPods,
}

// resetBudgetSeries empties the per-budget gauges and what the exporters
// remember of them, which would otherwise skip series they think set.
func resetBudgetSeries() {
	for _, v := range append(append([]*prometheus.GaugeVec{operatormetrics.BudgetDomains, operatormetrics.BudgetDisruptedDomains}, budgetSeries...), rolloutSeries...) {
		v.Reset()
	}
	exported.mu.Lock()
	clear(exported.m)
	exported.mu.Unlock()
}

// A budget over 30 partitions exports per-domain series only for the
// partitions its stored status lists (those not at full health), and the
// count of domains and of disrupted ones.
func TestExportAllowancesBoundedPerPartition(t *testing.T) {
	resetBudgetSeries()
	t.Cleanup(resetBudgetSeries)
	tdb := &policyv1alpha1.TopologyDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "mimir", Name: "partitions"}}
	for i := 0; i < 30; i++ {
		r := policyv1alpha1.DomainStatus{Name: fmt.Sprint(i), ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1}
		if i == 7 {
			r.CurrentHealthy, r.DisruptionsAllowed = 2, 0
		}
		tdb.Status.Domains = append(tdb.Status.Domains, r)
	}
	exportAllowances(tdb)
	want := []string{
		`tdb_budget_disrupted_domains{namespace="mimir",tdb="partitions"} 1`,
		`tdb_budget_domains{namespace="mimir",tdb="partitions"} 30`,
		`tdb_domain_current_healthy{domain="7",namespace="mimir",tdb="partitions"} 2`,
		`tdb_domain_desired_healthy{domain="7",namespace="mimir",tdb="partitions"} 2`,
		`tdb_domain_disruptions_allowed{domain="7",namespace="mimir",tdb="partitions"} 0`,
		`tdb_domain_expected_pods{domain="7",namespace="mimir",tdb="partitions"} 3`,
	}
	gauges := append([]*prometheus.GaugeVec{operatormetrics.BudgetDomains, operatormetrics.BudgetDisruptedDomains}, budgetSeries...)
	if diff := cmp.Diff(want, seriesOf(t, gauges...)); diff != "" {
		t.Fatalf("series (-want +got):\n%s", diff)
	}
	// Partition 7 recovers: its series go, the counts stay.
	tdb.Status.Domains[7].CurrentHealthy, tdb.Status.Domains[7].DisruptionsAllowed = 3, 1
	exportAllowances(tdb)
	want = []string{
		`tdb_budget_disrupted_domains{namespace="mimir",tdb="partitions"} 0`,
		`tdb_budget_domains{namespace="mimir",tdb="partitions"} 30`,
	}
	if diff := cmp.Diff(want, seriesOf(t, gauges...)); diff != "" {
		t.Fatalf("series after recovery (-want +got):\n%s", diff)
	}
}

func TestExportAllowances(t *testing.T) {
	resetBudgetSeries()
	t.Cleanup(resetBudgetSeries)
	blocked := metav1.NewTime(time.Unix(1700000000, 0))
	tdb := &policyv1alpha1.TopologyDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "mimir", Name: "ingesters"},
		Status: policyv1alpha1.TopologyDisruptionBudgetStatus{
			Domains: []policyv1alpha1.DomainStatus{
				{Name: "zone-a", ExpectedPods: 8, CurrentHealthy: 7, DesiredHealthy: 7, DisruptionsAllowed: 0, BlockedSince: &blocked},
				{Name: "zone-b", ExpectedPods: 8, CurrentHealthy: 8, DesiredHealthy: 7, DisruptionsAllowed: 1},
			},
			Conditions: []metav1.Condition{
				{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionTrue, Reason: policyv1alpha1.ReasonSufficientPods},
				// Other controllers' conditions are theirs to report.
				{Type: policyv1alpha1.ConditionRolloutProgressing, Status: metav1.ConditionFalse, Reason: policyv1alpha1.ReasonProgressDeadlineExceeded},
			},
		},
	}
	other := &policyv1alpha1.TopologyDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "brokers"},
		Status: policyv1alpha1.TopologyDisruptionBudgetStatus{
			Conditions: []metav1.Condition{{Type: policyv1alpha1.ConditionDisruptionAllowed, Status: metav1.ConditionFalse, Reason: policyv1alpha1.ReasonSyncFailed}},
		},
	}
	exportAllowances(tdb)
	exportAllowances(other)
	want := []string{
		`tdb_budget_condition{namespace="kafka",reason="SyncFailed",status="False",tdb="brokers",type="DisruptionAllowed"} 1`,
		`tdb_budget_condition{namespace="mimir",reason="SufficientPods",status="True",tdb="ingesters",type="DisruptionAllowed"} 1`,
		`tdb_domain_blocked_since_seconds{domain="zone-a",namespace="mimir",tdb="ingesters"} 1.7e+09`,
		`tdb_domain_current_healthy{domain="zone-a",namespace="mimir",tdb="ingesters"} 7`,
		`tdb_domain_current_healthy{domain="zone-b",namespace="mimir",tdb="ingesters"} 8`,
		`tdb_domain_desired_healthy{domain="zone-a",namespace="mimir",tdb="ingesters"} 7`,
		`tdb_domain_desired_healthy{domain="zone-b",namespace="mimir",tdb="ingesters"} 7`,
		`tdb_domain_disruptions_allowed{domain="zone-a",namespace="mimir",tdb="ingesters"} 0`,
		`tdb_domain_disruptions_allowed{domain="zone-b",namespace="mimir",tdb="ingesters"} 1`,
		`tdb_domain_expected_pods{domain="zone-a",namespace="mimir",tdb="ingesters"} 8`,
		`tdb_domain_expected_pods{domain="zone-b",namespace="mimir",tdb="ingesters"} 8`,
	}
	if diff := cmp.Diff(want, seriesOf(t, budgetSeries...)); diff != "" {
		t.Fatalf("series (-want +got):\n%s", diff)
	}

	// The next pass replaces the budget's series: zone-b is gone, zone-a
	// unblocked, the condition's reason changed.
	tdb.Status.Domains = tdb.Status.Domains[:1]
	tdb.Status.Domains[0].BlockedSince = nil
	tdb.Status.Domains[0].DisruptionsAllowed = 1
	tdb.Status.Conditions[0].Reason = policyv1alpha1.ReasonDomainError
	tdb.Status.Conditions[0].Status = metav1.ConditionFalse
	exportAllowances(tdb)
	want = []string{
		`tdb_budget_condition{namespace="kafka",reason="SyncFailed",status="False",tdb="brokers",type="DisruptionAllowed"} 1`,
		`tdb_budget_condition{namespace="mimir",reason="DomainError",status="False",tdb="ingesters",type="DisruptionAllowed"} 1`,
		`tdb_domain_current_healthy{domain="zone-a",namespace="mimir",tdb="ingesters"} 7`,
		`tdb_domain_desired_healthy{domain="zone-a",namespace="mimir",tdb="ingesters"} 7`,
		`tdb_domain_disruptions_allowed{domain="zone-a",namespace="mimir",tdb="ingesters"} 1`,
		`tdb_domain_expected_pods{domain="zone-a",namespace="mimir",tdb="ingesters"} 8`,
	}
	if diff := cmp.Diff(want, seriesOf(t, budgetSeries...)); diff != "" {
		t.Fatalf("series after the next pass (-want +got):\n%s", diff)
	}

	// A deleted budget leaves nothing behind, its rollout's series included.
	exportRollout(&policyv1alpha1.TopologyDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "mimir", Name: "ingesters"},
		Status: policyv1alpha1.TopologyDisruptionBudgetStatus{Rollout: &policyv1alpha1.RolloutStatus{
			Domains: []policyv1alpha1.RolloutDomainStatus{{Name: "zone-a", Phase: policyv1alpha1.RolloutPhaseProgressing}},
		}},
	})
	forgetAllowances("mimir", "ingesters")
	want = []string{
		`tdb_budget_condition{namespace="kafka",reason="SyncFailed",status="False",tdb="brokers",type="DisruptionAllowed"} 1`,
	}
	if diff := cmp.Diff(want, seriesOf(t, append(append([]*prometheus.GaugeVec{}, budgetSeries...), rolloutSeries...)...)); diff != "" {
		t.Fatalf("series after the budget is gone (-want +got):\n%s", diff)
	}
}

// A pass deletes the series of exactly the domains that disappeared, and
// leaves those of other budgets, and of the budget's unchanged domains, as
// they are; a pass that changes nothing keeps every series.
func TestExportAllowancesDropsADisappearedDomain(t *testing.T) {
	resetBudgetSeries()
	t.Cleanup(resetBudgetSeries)
	blocked := metav1.NewTime(time.Unix(1700000000, 0))
	budgetWith := func(ns, name string, domains ...policyv1alpha1.DomainStatus) *policyv1alpha1.TopologyDisruptionBudget {
		return &policyv1alpha1.TopologyDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Status:     policyv1alpha1.TopologyDisruptionBudgetStatus{Domains: domains},
		}
	}
	tdb := budgetWith("mimir", "ingesters",
		policyv1alpha1.DomainStatus{Name: "zone-a", ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1},
		policyv1alpha1.DomainStatus{Name: "zone-b", ExpectedPods: 3, CurrentHealthy: 2, DesiredHealthy: 2, BlockedSince: &blocked},
		policyv1alpha1.DomainStatus{Name: "zone-c", ExpectedPods: 3, CurrentHealthy: 3, DesiredHealthy: 2, DisruptionsAllowed: 1})
	// Another budget with a domain of the same name, in a namespace of
	// the same name: its series are not the first budget's.
	other := budgetWith("mimir", "ingesters-canary",
		policyv1alpha1.DomainStatus{Name: "zone-b", ExpectedPods: 1, CurrentHealthy: 1, DesiredHealthy: 1})
	exportAllowances(tdb)
	exportAllowances(other)
	exportRollout(&policyv1alpha1.TopologyDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "mimir", Name: "ingesters"},
		Status: policyv1alpha1.TopologyDisruptionBudgetStatus{Rollout: &policyv1alpha1.RolloutStatus{
			Domains: []policyv1alpha1.RolloutDomainStatus{{Name: "zone-b", Phase: policyv1alpha1.RolloutPhaseProgressing, TotalPods: 3}},
		}},
	})
	canary := []string{
		`tdb_domain_current_healthy{domain="zone-b",namespace="mimir",tdb="ingesters-canary"} 1`,
		`tdb_domain_desired_healthy{domain="zone-b",namespace="mimir",tdb="ingesters-canary"} 1`,
		`tdb_domain_disruptions_allowed{domain="zone-b",namespace="mimir",tdb="ingesters-canary"} 0`,
		`tdb_domain_expected_pods{domain="zone-b",namespace="mimir",tdb="ingesters-canary"} 1`,
	}
	rollout := []string{
		`tdb_rollout_domain_phase{domain="zone-b",namespace="mimir",phase="Progressing",tdb="ingesters"} 1`,
		`tdb_rollout_domain_pods{domain="zone-b",namespace="mimir",tdb="ingesters"} 3`,
		`tdb_rollout_domain_updated_pods{domain="zone-b",namespace="mimir",tdb="ingesters"} 0`,
	}
	all := func() []string {
		return seriesOf(t, append(append([]*prometheus.GaugeVec{}, budgetSeries...), rolloutSeries...)...)
	}
	withOthers := func(series ...string) []string {
		out := append(append(append([]string{}, series...), canary...), rollout...)
		sort.Strings(out)
		return out
	}

	// zone-b (blocked) is gone, zone-c's allowance changed.
	tdb.Status.Domains = []policyv1alpha1.DomainStatus{tdb.Status.Domains[0], tdb.Status.Domains[2]}
	tdb.Status.Domains[1].DisruptionsAllowed = 0
	exportAllowances(tdb)
	want := withOthers(
		`tdb_domain_current_healthy{domain="zone-a",namespace="mimir",tdb="ingesters"} 3`,
		`tdb_domain_current_healthy{domain="zone-c",namespace="mimir",tdb="ingesters"} 3`,
		`tdb_domain_desired_healthy{domain="zone-a",namespace="mimir",tdb="ingesters"} 2`,
		`tdb_domain_desired_healthy{domain="zone-c",namespace="mimir",tdb="ingesters"} 2`,
		`tdb_domain_disruptions_allowed{domain="zone-a",namespace="mimir",tdb="ingesters"} 1`,
		`tdb_domain_disruptions_allowed{domain="zone-c",namespace="mimir",tdb="ingesters"} 0`,
		`tdb_domain_expected_pods{domain="zone-a",namespace="mimir",tdb="ingesters"} 3`,
		`tdb_domain_expected_pods{domain="zone-c",namespace="mimir",tdb="ingesters"} 3`,
	)
	if diff := cmp.Diff(want, all()); diff != "" {
		t.Fatalf("series after zone-b disappeared (-want +got):\n%s", diff)
	}
	exportAllowances(tdb)
	if diff := cmp.Diff(want, all()); diff != "" {
		t.Fatalf("series after a pass that changed nothing (-want +got):\n%s", diff)
	}

	// Every domain gone: none of the budget's domain series is left.
	tdb.Status.Domains = nil
	exportAllowances(tdb)
	if diff := cmp.Diff(withOthers(), all()); diff != "" {
		t.Fatalf("series after every domain disappeared (-want +got):\n%s", diff)
	}

	// Deleted: the rollout's series go too, the other budget's stay.
	forgetAllowances("mimir", "ingesters")
	if diff := cmp.Diff(canary, all()); diff != "" {
		t.Fatalf("series after the budget is gone (-want +got):\n%s", diff)
	}
}

func TestExportRollout(t *testing.T) {
	resetBudgetSeries()
	t.Cleanup(resetBudgetSeries)
	tdb := &policyv1alpha1.TopologyDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kafka", Name: "brokers"},
		Status: policyv1alpha1.TopologyDisruptionBudgetStatus{Rollout: &policyv1alpha1.RolloutStatus{
			CurrentDomain: "zone-b",
			Domains: []policyv1alpha1.RolloutDomainStatus{
				{Name: "zone-a", Phase: policyv1alpha1.RolloutPhaseComplete, UpdatedPods: 3, TotalPods: 3},
				{Name: "zone-b", Phase: policyv1alpha1.RolloutPhaseStalled, UpdatedPods: 1, TotalPods: 3},
				{Name: "zone-c", Phase: policyv1alpha1.RolloutPhasePending, UpdatedPods: 0, TotalPods: 3},
			},
		}},
	}
	exportRollout(tdb)
	want := []string{
		`tdb_rollout_domain_phase{domain="zone-a",namespace="kafka",phase="Complete",tdb="brokers"} 1`,
		`tdb_rollout_domain_phase{domain="zone-b",namespace="kafka",phase="Stalled",tdb="brokers"} 1`,
		`tdb_rollout_domain_phase{domain="zone-c",namespace="kafka",phase="Pending",tdb="brokers"} 1`,
		`tdb_rollout_domain_pods{domain="zone-a",namespace="kafka",tdb="brokers"} 3`,
		`tdb_rollout_domain_pods{domain="zone-b",namespace="kafka",tdb="brokers"} 3`,
		`tdb_rollout_domain_pods{domain="zone-c",namespace="kafka",tdb="brokers"} 3`,
		`tdb_rollout_domain_updated_pods{domain="zone-a",namespace="kafka",tdb="brokers"} 3`,
		`tdb_rollout_domain_updated_pods{domain="zone-b",namespace="kafka",tdb="brokers"} 1`,
		`tdb_rollout_domain_updated_pods{domain="zone-c",namespace="kafka",tdb="brokers"} 0`,
	}
	if diff := cmp.Diff(want, seriesOf(t, rolloutSeries...)); diff != "" {
		t.Fatalf("series (-want +got):\n%s", diff)
	}

	// One phase per domain: a domain that moves on leaves its old phase.
	tdb.Status.Rollout.Domains[1].Phase = policyv1alpha1.RolloutPhaseProgressing
	tdb.Status.Rollout.Domains = tdb.Status.Rollout.Domains[1:2]
	exportRollout(tdb)
	want = []string{
		`tdb_rollout_domain_phase{domain="zone-b",namespace="kafka",phase="Progressing",tdb="brokers"} 1`,
		`tdb_rollout_domain_pods{domain="zone-b",namespace="kafka",tdb="brokers"} 3`,
		`tdb_rollout_domain_updated_pods{domain="zone-b",namespace="kafka",tdb="brokers"} 1`,
	}
	if diff := cmp.Diff(want, seriesOf(t, rolloutSeries...)); diff != "" {
		t.Fatalf("series after the next pass (-want +got):\n%s", diff)
	}

	// spec.rollout removed: the status is cleared and so are the series.
	tdb.Status.Rollout = nil
	exportRollout(tdb)
	if diff := cmp.Diff([]string(nil), seriesOf(t, rolloutSeries...)); diff != "" {
		t.Fatalf("series without a rollout (-want +got):\n%s", diff)
	}
}

func TestFailurePolicyExporter(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	vwc := func(annotation string, policy *admissionregistrationv1.FailurePolicyType, resource string) *admissionregistrationv1.ValidatingWebhookConfiguration {
		c := &admissionregistrationv1.ValidatingWebhookConfiguration{
			ObjectMeta: metav1.ObjectMeta{Name: "tdb-vwc"},
			Webhooks: []admissionregistrationv1.ValidatingWebhook{{
				Name: "eviction.policy.tdb.dev", FailurePolicy: policy,
				Rules: []admissionregistrationv1.RuleWithOperations{{Rule: admissionregistrationv1.Rule{Resources: []string{resource}}}},
			}},
		}
		if annotation != "" {
			c.Annotations = map[string]string{InstalledFailurePolicyAnnotation: annotation}
		}
		return c
	}
	fail, ignore := ptr.To(admissionregistrationv1.Fail), ptr.To(admissionregistrationv1.Ignore)
	readErr := errors.New("the cache is not reachable")
	for _, tc := range []struct {
		name    string
		objs    []client.Object
		getErr  error
		want    []string
		wantErr string
	}{{
		name: "as installed",
		objs: []client.Object{vwc("Fail", fail, "pods/eviction")},
		want: []string{`tdb_webhook_failure_policy{policy="Fail"} 1`, `tdb_webhook_installed_failure_policy{policy="Fail"} 1`},
	}, {
		name: "changed to Ignore",
		objs: []client.Object{vwc("Fail", ignore, "pods/eviction")},
		want: []string{`tdb_webhook_failure_policy{policy="Ignore"} 1`, `tdb_webhook_installed_failure_policy{policy="Fail"} 1`},
	}, {
		name: "unset policy is the API server's default, Fail",
		objs: []client.Object{vwc("Fail", nil, "pods/eviction")},
		want: []string{`tdb_webhook_failure_policy{policy="Fail"} 1`, `tdb_webhook_installed_failure_policy{policy="Fail"} 1`},
	}, {
		name: "no annotation: nothing to compare with",
		objs: []client.Object{vwc("", ignore, "pods/eviction")},
		want: []string{`tdb_webhook_failure_policy{policy="Ignore"} 1`},
	}, {
		name:    "an annotation that is no policy is reported and not exported",
		objs:    []client.Object{vwc("fail", fail, "pods/eviction")},
		want:    []string{`tdb_webhook_failure_policy{policy="Fail"} 1`},
		wantErr: `is "fail", not Fail or Ignore`,
	}, {
		name: "configuration deleted",
		want: []string{`tdb_webhook_failure_policy{policy="None"} 1`},
	}, {
		name: "no webhook for evictions",
		objs: []client.Object{vwc("Fail", fail, "pods")},
		want: []string{`tdb_webhook_failure_policy{policy="None"} 1`, `tdb_webhook_installed_failure_policy{policy="Fail"} 1`},
	}, {
		name:   "a read error keeps the last series",
		getErr: readErr,
		// Left from the case before.
		want:    []string{`tdb_webhook_failure_policy{policy="None"} 1`, `tdb_webhook_installed_failure_policy{policy="Fail"} 1`},
		wantErr: readErr.Error(),
	}} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder().WithScheme(scheme).WithObjects(tc.objs...)
			if tc.getErr != nil {
				b = b.WithInterceptorFuncs(interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return tc.getErr
				}})
			}
			e := &FailurePolicyExporter{Reader: b.Build(), ConfigName: "tdb-vwc"}
			err := e.Export(context.Background())
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Export() error = %v, want one containing %q", err, tc.wantErr)
			}
			got := seriesOf(t, operatormetrics.WebhookFailurePolicy, operatormetrics.WebhookInstalledFailurePolicy)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("series (-want +got):\n%s", diff)
			}
		})
	}
	if (&FailurePolicyExporter{}).NeedLeaderElection() {
		t.Error("the exporter must run on every replica")
	}
	// No configuration name (tests without a registered webhook): nothing.
	if err := (&FailurePolicyExporter{}).Start(context.Background()); err != nil {
		t.Errorf("Start without a configuration name: %v", err)
	}
}
