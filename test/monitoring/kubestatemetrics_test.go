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

package monitoring

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// The CustomResourceState configuration, as kube-state-metrics documents it
// (docs/metrics/extend/customresourcestate-metrics.md; the types of
// k8s.io/kube-state-metrics/v2/pkg/customresourcestate, config.go and
// config_metrics_types.go), without importing kube-state-metrics: decoded
// strictly, an unknown or misspelt field fails the test.
type ksmConfig struct {
	Kind string `json:"kind"`
	Spec struct {
		Resources []ksmResource `json:"resources"`
	} `json:"spec"`
}

type ksmLabels struct {
	CommonLabels   map[string]string   `json:"commonLabels,omitempty"`
	LabelsFromPath map[string][]string `json:"labelsFromPath,omitempty"`
}

type ksmResource struct {
	ksmLabels        `json:",inline"`
	MetricNamePrefix *string `json:"metricNamePrefix,omitempty"`
	GroupVersionKind struct {
		Group   string `json:"group"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	} `json:"groupVersionKind"`
	ResourcePlural string         `json:"resourcePlural,omitempty"`
	Metrics        []ksmGenerator `json:"metrics"`
	ErrorLogV      int            `json:"errorLogV,omitempty"`
}

type ksmGenerator struct {
	ksmLabels `json:",inline"`
	Name      string `json:"name"`
	Help      string `json:"help"`
	ErrorLogV int    `json:"errorLogV,omitempty"`
	Each      struct {
		Type  string `json:"type"`
		Gauge *struct {
			ksmMeta      `json:",inline"`
			ValueFrom    []string `json:"valueFrom,omitempty"`
			LabelFromKey string   `json:"labelFromKey,omitempty"`
			NilIsZero    bool     `json:"nilIsZero,omitempty"`
		} `json:"gauge,omitempty"`
		StateSet *struct {
			ksmMeta   `json:",inline"`
			List      []string `json:"list"`
			LabelName string   `json:"labelName"`
			ValueFrom []string `json:"valueFrom,omitempty"`
		} `json:"stateSet,omitempty"`
		Info *struct {
			ksmMeta      `json:",inline"`
			LabelFromKey string `json:"labelFromKey,omitempty"`
		} `json:"info,omitempty"`
	} `json:"each"`
}

type ksmMeta struct {
	LabelsFromPath map[string][]string `json:"labelsFromPath,omitempty"`
	Path           []string            `json:"path"`
}

func loadKSM(t *testing.T) ksmConfig {
	t.Helper()
	var c ksmConfig
	if err := yaml.UnmarshalStrict(read(t, ksmFile), &c); err != nil {
		t.Fatalf("%s does not parse as a CustomResourceState configuration: %v", ksmFile, err)
	}
	return c
}

// kubeStateMetricsNames are the names of the metrics the configuration
// makes kube-state-metrics export.
func kubeStateMetricsNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, r := range loadKSM(t).Spec.Resources {
		prefix := "kube_customresource"
		if r.MetricNamePrefix != nil {
			prefix = *r.MetricNamePrefix
		}
		for _, m := range r.Metrics {
			name := m.Name
			if prefix != "" {
				name = prefix + "_" + name
			}
			names[name] = true
		}
	}
	return names
}

var metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// The configuration parses as kube-state-metrics' schema, names the CRD's
// group, version, kind and plural, and every path it reads exists in the
// CRD's schema (labels read strings, gauges read numbers, booleans,
// condition statuses or timestamps): a renamed status field fails here.
func TestKubeStateMetricsConfig(t *testing.T) {
	c := loadKSM(t)
	if c.Kind != "CustomResourceStateMetrics" {
		t.Errorf("kind %q, want CustomResourceStateMetrics", c.Kind)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(read(t, filepath.Join(root, "config", "crd", "bases", "policy.tdb.dev_topologydisruptionbudgets.yaml")), &crd); err != nil {
		t.Fatal(err)
	}
	if len(c.Spec.Resources) != 1 {
		t.Fatalf("%d resources, want 1 (TopologyDisruptionBudget)", len(c.Spec.Resources))
	}
	r := c.Spec.Resources[0]
	gvk := r.GroupVersionKind
	if gvk.Group != crd.Spec.Group || gvk.Kind != crd.Spec.Names.Kind || r.ResourcePlural != crd.Spec.Names.Plural {
		t.Errorf("groupVersionKind %+v, plural %q; the CRD's: %s %s %s", gvk, r.ResourcePlural, crd.Spec.Group, crd.Spec.Names.Kind, crd.Spec.Names.Plural)
	}
	var schema *apiextensionsv1.JSONSchemaProps
	for _, v := range crd.Spec.Versions {
		if v.Name == gvk.Version {
			schema = v.Schema.OpenAPIV3Schema
		}
	}
	if schema == nil {
		t.Fatalf("the CRD has no version %s", gvk.Version)
	}
	checkPaths(t, "resource labelsFromPath", schema, nil, r.LabelsFromPath, "string")
	seen := map[string]bool{}
	for _, m := range r.Metrics {
		where := "metric " + m.Name
		if !metricName.MatchString(m.Name) || seen[m.Name] {
			t.Errorf("%s: not a valid or unique metric name", where)
		}
		seen[m.Name] = true
		if strings.TrimSpace(m.Help) == "" {
			t.Errorf("%s: no help", where)
		}
		set := 0
		switch m.Each.Type {
		case "Gauge":
			if g := m.Each.Gauge; g != nil {
				set++
				base := lookup(t, where, schema, g.Path)
				if base != nil && base.Type == "array" {
					base = base.Items.Schema
				}
				checkPaths(t, where, base, nil, g.LabelsFromPath, "string")
				if g.ValueFrom != nil {
					checkPaths(t, where, base, nil, map[string][]string{"valueFrom": g.ValueFrom}, "value")
				} else if base != nil && !isValue(base) {
					t.Errorf("%s: path %v is a %s, not a value", where, g.Path, base.Type)
				}
			}
		case "Info":
			if i := m.Each.Info; i != nil {
				set++
				base := lookup(t, where, schema, i.Path)
				if base != nil && base.Type == "array" {
					base = base.Items.Schema
				}
				checkPaths(t, where, base, nil, i.LabelsFromPath, "string")
			}
		case "StateSet":
			if s := m.Each.StateSet; s != nil {
				set++
				lookup(t, where, schema, s.Path)
			}
		default:
			t.Errorf("%s: type %q, want Gauge, Info or StateSet", where, m.Each.Type)
		}
		if set != 1 || m.Each.Gauge != nil && m.Each.Type != "Gauge" || m.Each.Info != nil && m.Each.Type != "Info" || m.Each.StateSet != nil && m.Each.Type != "StateSet" {
			t.Errorf("%s: each must set exactly the field of its type %s", where, m.Each.Type)
		}
	}
	for _, want := range []string{"status_disruptions_allowed", "status_disrupted_domains", "status_expected_pods", "status_current_healthy",
		"status_domain_disruptions_allowed", "status_domain_current_healthy", "status_condition"} {
		if !seen[want] {
			t.Errorf("no metric %s", want)
		}
	}
}

// lookup follows path in the CRD's schema. metadata is not in a CRD's
// schema: its fields are the object's metadata.
func lookup(t *testing.T, where string, s *apiextensionsv1.JSONSchemaProps, path []string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	if len(path) == 2 && path[0] == "metadata" {
		switch path[1] {
		case "name", "namespace":
			return &apiextensionsv1.JSONSchemaProps{Type: "string"}
		case "generation":
			return &apiextensionsv1.JSONSchemaProps{Type: "integer"}
		}
	}
	for i, p := range path {
		if s == nil {
			return nil
		}
		next, ok := s.Properties[p]
		if !ok {
			t.Errorf("%s: %v: the CRD's schema has no %q at %v", where, path, p, path[:i])
			return nil
		}
		s = &next
	}
	return s
}

func checkPaths(t *testing.T, where string, base, _ *apiextensionsv1.JSONSchemaProps, paths map[string][]string, want string) {
	t.Helper()
	for label, p := range paths {
		s := lookup(t, where+" "+label, base, p)
		if s == nil {
			continue
		}
		switch {
		case want == "string" && s.Type != "string":
			t.Errorf("%s: %s reads %v, a %s, not a string", where, label, p, s.Type)
		case want == "value" && !isValue(s):
			t.Errorf("%s: %s reads %v, a %s, not a number, boolean, condition status or timestamp", where, label, p, s.Type)
		}
	}
}

// isValue says whether kube-state-metrics can make a sample value of a
// field: numbers, booleans, and strings that are condition statuses
// (True/False/Unknown) or RFC 3339 times.
func isValue(s *apiextensionsv1.JSONSchemaProps) bool {
	switch s.Type {
	case "integer", "number", "boolean":
		return true
	case "string":
		return s.Format == "date-time" || len(s.Enum) > 0 && strings.Contains(string(s.Enum[0].Raw), "True")
	}
	return false
}
