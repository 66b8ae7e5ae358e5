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
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/budget"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
)

// exportAllowances replaces a budget's series with its current domains:
// how many there are and how many are disrupted; the numbers and allowances
// of those its stored status lists (every domain up to
// budget.MaxListedDomains, beyond only those not at full health), since
// when the blocked ones refuse evictions; and the DisruptionAllowed
// condition.
func exportAllowances(tdb *policyv1alpha1.TopologyDisruptionBudget) {
	rows := budget.ListedDomains(tdb.Status.Domains)
	next := make([]sample, 0, 5*len(rows)+3)
	next = append(next,
		sampleOf(operatormetrics.BudgetDomains, float64(len(tdb.Status.Domains)), tdb.Namespace, tdb.Name),
		sampleOf(operatormetrics.BudgetDisruptedDomains, float64(budget.DisruptedDomains(tdb.Status.Domains)), tdb.Namespace, tdb.Name))
	for _, d := range rows {
		next = append(next,
			sampleOf(operatormetrics.DomainAllowed, float64(d.DisruptionsAllowed), tdb.Namespace, tdb.Name, d.Name),
			sampleOf(operatormetrics.DomainExpectedPods, float64(d.ExpectedPods), tdb.Namespace, tdb.Name, d.Name),
			sampleOf(operatormetrics.DomainCurrentHealthy, float64(d.CurrentHealthy), tdb.Namespace, tdb.Name, d.Name),
			sampleOf(operatormetrics.DomainDesiredHealthy, float64(d.DesiredHealthy), tdb.Namespace, tdb.Name, d.Name))
		if d.BlockedSince != nil {
			next = append(next, sampleOf(operatormetrics.DomainBlockedSince, float64(d.BlockedSince.Unix()), tdb.Namespace, tdb.Name, d.Name))
		}
	}
	if c := apimeta.FindStatusCondition(tdb.Status.Conditions, policyv1alpha1.ConditionDisruptionAllowed); c != nil {
		next = append(next, sampleOf(operatormetrics.BudgetCondition, 1, tdb.Namespace, tdb.Name, c.Type, string(c.Status), c.Reason))
	}
	exported.replace(seriesOwner{namespace: tdb.Namespace, name: tdb.Name, family: allowanceFamily}, next)
}

// forgetAllowances drops a budget's series, the rollout's included.
func forgetAllowances(namespace, name string) {
	exported.forget(seriesOwner{namespace: namespace, name: name, family: allowanceFamily})
	exported.forget(seriesOwner{namespace: namespace, name: name, family: rolloutFamily})
}

// exportRollout replaces a budget's rollout series with its
// status.rollout.domains; a budget without a rollout status has none.
func exportRollout(tdb *policyv1alpha1.TopologyDisruptionBudget) {
	var next []sample
	if tdb.Status.Rollout != nil {
		next = make([]sample, 0, 3*len(tdb.Status.Rollout.Domains))
		for _, d := range tdb.Status.Rollout.Domains {
			next = append(next,
				sampleOf(operatormetrics.RolloutDomainPhase, 1, tdb.Namespace, tdb.Name, d.Name, string(d.Phase)),
				sampleOf(operatormetrics.RolloutDomainUpdatedPods, float64(d.UpdatedPods), tdb.Namespace, tdb.Name, d.Name),
				sampleOf(operatormetrics.RolloutDomainPods, float64(d.TotalPods), tdb.Namespace, tdb.Name, d.Name))
		}
	}
	exported.replace(seriesOwner{namespace: tdb.Namespace, name: tdb.Name, family: rolloutFamily}, next)
}

// forgetRollout drops a budget's rollout series.
func forgetRollout(namespace, name string) {
	exported.forget(seriesOwner{namespace: namespace, name: name, family: rolloutFamily})
}

// exported is every series this process exports per budget. A pass sets
// only the series whose value changed and deletes exactly those that
// disappeared: deleting a budget's series by a partial match of their
// labels scans every budget's, which made every pass's cost grow with the
// number of budgets.
var exported = exportedSeries{m: map[seriesOwner]map[series]float64{}}

// seriesFamily tells a budget's two sets of series apart, each written by
// its own controller.
type seriesFamily int

const (
	// allowanceFamily are the status controller's series: the domains'
	// numbers and the DisruptionAllowed condition.
	allowanceFamily seriesFamily = iota
	// rolloutFamily are the rollout controller's.
	rolloutFamily
)

// seriesOwner is one budget's family of series.
type seriesOwner struct {
	namespace, name string
	family          seriesFamily
}

// maxSeriesLabels is the most labels a budget's gauge has (BudgetCondition).
const maxSeriesLabels = 5

// series is one series: its gauge and label values. An array, not a slice,
// keeps it comparable, a map key, without joining the values into a
// string on every pass.
type series struct {
	gauge  *prometheus.GaugeVec
	labels [maxSeriesLabels]string
	n      int
}

func (s series) labelValues() []string { return s.labels[:s.n] }

// sample is a series' value.
type sample struct {
	series
	value float64
}

// sampleOf is the sample of the gauge's series with these label values,
// in the gauge's order.
func sampleOf(gauge *prometheus.GaugeVec, value float64, labels ...string) sample {
	s := sample{series: series{gauge: gauge, n: len(labels)}, value: value}
	copy(s.labels[:], labels)
	return s
}

// exportedSeries remembers, per budget family, the series exported and
// their values. Safe for concurrent use.
type exportedSeries struct {
	mu sync.Mutex
	m  map[seriesOwner]map[series]float64
}

// replace makes next the owner's series: it sets those that are new or
// changed and deletes those not in next.
func (e *exportedSeries) replace(owner seriesOwner, next []sample) {
	e.mu.Lock()
	defer e.mu.Unlock()
	prev := e.m[owner]
	if len(prev) == len(next) {
		same := true
		for _, s := range next {
			if v, ok := prev[s.series]; !ok || v != s.value {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	cur := make(map[series]float64, len(next))
	for _, s := range next {
		cur[s.series] = s.value
		if v, ok := prev[s.series]; !ok || v != s.value {
			s.gauge.WithLabelValues(s.labelValues()...).Set(s.value)
		}
	}
	for s := range prev {
		if _, ok := cur[s]; !ok {
			s.gauge.DeleteLabelValues(s.labelValues()...)
		}
	}
	if len(cur) == 0 {
		delete(e.m, owner)
		return
	}
	e.m[owner] = cur
}

// forget deletes the owner's series.
func (e *exportedSeries) forget(owner seriesOwner) {
	e.replace(owner, nil)
}
