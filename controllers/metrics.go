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
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
)

// domainAllowed exports each domain's allowance as last computed.
var domainAllowed = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "tdb_domain_disruptions_allowed",
	Help: "Disruptions a domain of a TopologyDisruptionBudget allows, as last computed by the status controller.",
}, []string{"namespace", "tdb", "domain"})

func init() {
	metrics.Registry.MustRegister(domainAllowed)
}

// exportAllowances replaces a budget's series with its current domains.
func exportAllowances(tdb *policyv1alpha1.TopologyDisruptionBudget) {
	domainAllowed.DeletePartialMatch(prometheus.Labels{"namespace": tdb.Namespace, "tdb": tdb.Name})
	for _, d := range tdb.Status.Domains {
		domainAllowed.WithLabelValues(tdb.Namespace, tdb.Name, d.Name).Set(float64(d.DisruptionsAllowed))
	}
}

// forgetAllowances drops a deleted budget's series.
func forgetAllowances(namespace, name string) {
	domainAllowed.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "tdb": name})
}
