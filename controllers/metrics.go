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
	"github.com/prometheus/client_golang/prometheus"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
)

// budgetSeries are the series the status controller exports per budget.
var budgetSeries = []*prometheus.GaugeVec{
	operatormetrics.DomainAllowed, operatormetrics.DomainBlockedSince,
	operatormetrics.DomainExpectedPods, operatormetrics.DomainCurrentHealthy, operatormetrics.DomainDesiredHealthy,
	operatormetrics.BudgetCondition,
}

// rolloutSeries are the series the rollout controller exports per budget.
var rolloutSeries = []*prometheus.GaugeVec{
	operatormetrics.RolloutDomainPhase, operatormetrics.RolloutDomainUpdatedPods, operatormetrics.RolloutDomainPods,
}

// exportAllowances replaces a budget's series with its current domains:
// their numbers and allowances, since when the blocked ones refuse
// evictions, and the DisruptionAllowed condition.
func exportAllowances(tdb *policyv1alpha1.TopologyDisruptionBudget) {
	deleteSeries(budgetSeries, tdb.Namespace, tdb.Name)
	for _, d := range tdb.Status.Domains {
		operatormetrics.DomainAllowed.WithLabelValues(tdb.Namespace, tdb.Name, d.Name).Set(float64(d.DisruptionsAllowed))
		operatormetrics.DomainExpectedPods.WithLabelValues(tdb.Namespace, tdb.Name, d.Name).Set(float64(d.ExpectedPods))
		operatormetrics.DomainCurrentHealthy.WithLabelValues(tdb.Namespace, tdb.Name, d.Name).Set(float64(d.CurrentHealthy))
		operatormetrics.DomainDesiredHealthy.WithLabelValues(tdb.Namespace, tdb.Name, d.Name).Set(float64(d.DesiredHealthy))
		if d.BlockedSince != nil {
			operatormetrics.DomainBlockedSince.WithLabelValues(tdb.Namespace, tdb.Name, d.Name).Set(float64(d.BlockedSince.Unix()))
		}
	}
	if c := apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed); c != nil {
		operatormetrics.BudgetCondition.WithLabelValues(tdb.Namespace, tdb.Name, c.Type, string(c.Status), c.Reason).Set(1)
	}
}

// forgetAllowances drops a budget's series, the rollout's included.
func forgetAllowances(namespace, name string) {
	deleteSeries(budgetSeries, namespace, name)
	deleteSeries(rolloutSeries, namespace, name)
}

// exportRollout replaces a budget's rollout series with its
// status.rollout.domains; a budget without a rollout status has none.
func exportRollout(tdb *policyv1alpha1.TopologyDisruptionBudget) {
	deleteSeries(rolloutSeries, tdb.Namespace, tdb.Name)
	if tdb.Status.Rollout == nil {
		return
	}
	for _, d := range tdb.Status.Rollout.Domains {
		operatormetrics.RolloutDomainPhase.WithLabelValues(tdb.Namespace, tdb.Name, d.Name, string(d.Phase)).Set(1)
		operatormetrics.RolloutDomainUpdatedPods.WithLabelValues(tdb.Namespace, tdb.Name, d.Name).Set(float64(d.UpdatedPods))
		operatormetrics.RolloutDomainPods.WithLabelValues(tdb.Namespace, tdb.Name, d.Name).Set(float64(d.TotalPods))
	}
}

// forgetRollout drops a budget's rollout series.
func forgetRollout(namespace, name string) {
	deleteSeries(rolloutSeries, namespace, name)
}

func deleteSeries(vecs []*prometheus.GaugeVec, namespace, name string) {
	for _, v := range vecs {
		v.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "tdb": name})
	}
}
