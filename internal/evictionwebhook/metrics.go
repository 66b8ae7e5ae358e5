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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

var (
	decisionsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "tdb_eviction_decisions_total",
		Help: "Eviction admission decisions by decision (allowed, refused, error) and reason.",
	}, []string{"decision", "reason"})

	decisionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "tdb_eviction_decision_duration_seconds",
		Help:    "Time to decide one eviction, status writes included, by decision.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
	}, []string{"decision"})

	chargesPerWrite = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "tdb_eviction_charges_per_status_write",
		Help:    "Evictions recorded by one status write of the webhook (concurrent grants on one budget are written together).",
		Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
	})
)

func init() {
	metrics.Registry.MustRegister(decisionsTotal, decisionSeconds, chargesPerWrite)
}

func observe(o outcome, took time.Duration) {
	decisionsTotal.WithLabelValues(o.decision, string(o.reason)).Inc()
	decisionSeconds.WithLabelValues(o.decision).Observe(took.Seconds())
}
