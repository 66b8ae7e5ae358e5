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

// Package monitoring tests what config/prometheus, config/grafana and
// config/kube-state-metrics ship: the alerts (with promtool, when PROMTOOL
// names it: make test-rules), their runbooks, and that every metric the
// alerts and the dashboard query is one the operator registers.
package monitoring

import (
	"os"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"
)

const root = "../.."

// rulesFile is the PrometheusRule; promtoolTests its promtool unit tests.
var (
	rulesFile     = filepath.Join(root, "config", "prometheus", "rules.yaml")
	promtoolTests = "rules_test.yaml"
	dashboardFile = filepath.Join(root, "config", "grafana", "tdb-operator.json")
	ksmFile       = filepath.Join(root, "config", "kube-state-metrics", "tdb-customresourcestate.yaml")
	runbooksFile  = filepath.Join(root, "docs", "runbooks.md")
	webhookDoc    = filepath.Join(root, "docs", "webhook.md")
)

// runbookBase is where every alert's runbook_url points, followed by the
// anchor of its section.
const runbookBase = "https://github.com/tdb-operator/tdb-operator/blob/main/docs/runbooks.md#"

// prometheusRule is the part of a PrometheusRule these tests read.
type prometheusRule struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Groups []ruleGroup `json:"groups"`
	} `json:"spec"`
}

type ruleGroup struct {
	Name  string `json:"name"`
	Rules []rule `json:"rules"`
}

type rule struct {
	Alert       string            `json:"alert,omitempty"`
	Record      string            `json:"record,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func loadRules(t *testing.T) prometheusRule {
	t.Helper()
	var pr prometheusRule
	if err := yaml.UnmarshalStrict(read(t, rulesFile), &pr); err != nil {
		t.Fatalf("%s: %v", rulesFile, err)
	}
	if pr.APIVersion != "monitoring.coreos.com/v1" || pr.Kind != "PrometheusRule" {
		t.Fatalf("%s is a %s %s, want a monitoring.coreos.com/v1 PrometheusRule", rulesFile, pr.APIVersion, pr.Kind)
	}
	if len(pr.Spec.Groups) == 0 {
		t.Fatalf("%s has no rule groups", rulesFile)
	}
	return pr
}

// ruleGroupsFile is the PrometheusRule's groups as a Prometheus rule file,
// which promtool reads.
func ruleGroupsFile(t *testing.T) []byte {
	t.Helper()
	out, err := yaml.Marshal(map[string]any{"groups": loadRules(t).Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
