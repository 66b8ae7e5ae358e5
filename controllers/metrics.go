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

	policyv1alpha1 "github.com/tdb-operator/tdb-operator/api/v1alpha1"
	"github.com/tdb-operator/tdb-operator/internal/operatormetrics"
)

// exportAllowances replaces a budget's series with its current domains:
// their allowances, and since when the blocked ones refuse evictions.
func exportAllowances(tdb *policyv1alpha1.TopologyDisruptionBudget) {
	forgetAllowances(tdb.Namespace, tdb.Name)
	for _, d := range tdb.Status.Domains {
		operatormetrics.DomainAllowed.WithLabelValues(tdb.Namespace, tdb.Name, d.Name).Set(float64(d.DisruptionsAllowed))
		if d.BlockedSince != nil {
			operatormetrics.DomainBlockedSince.WithLabelValues(tdb.Namespace, tdb.Name, d.Name).Set(float64(d.BlockedSince.Unix()))
		}
	}
}

// forgetAllowances drops a budget's series.
func forgetAllowances(namespace, name string) {
	operatormetrics.DomainAllowed.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "tdb": name})
	operatormetrics.DomainBlockedSince.DeletePartialMatch(prometheus.Labels{"namespace": namespace, "tdb": name})
}
