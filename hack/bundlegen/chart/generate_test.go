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

package chart

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func renderings(t *testing.T) (def, cm []byte) {
	t.Helper()
	build := func(dir string) []byte {
		out, err := exec.Command(tool(t, "KUSTOMIZE"), "build", filepath.Join(repoRoot, "config", dir)).Output()
		if err != nil {
			t.Fatalf("kustomize build config/%s: %v", dir, err)
		}
		return out
	}
	return build("default"), build("certmanager")
}

// placed gives a rendering's manager pod a nodeSelector.
func placed(rendering []byte) string {
	return strings.Replace(string(rendering), "      serviceAccountName: tdb-operator\n", "      serviceAccountName: tdb-operator\n      nodeSelector: {a: b}\n", 1)
}

func TestGenerateIsDeterministic(t *testing.T) {
	def, cm := renderings(t)
	in := Input{Version: "1.2.3", ImageRepository: "r", Default: def, CertManager: cm}
	a, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("two runs on the same input differ")
	}
}

// What config/ may not do without the generator knowing: each edit of the
// renderings must stop the generator rather than give a wrong chart.
func TestGenerateRefusesWhatItCannotCarry(t *testing.T) {
	def, cm := renderings(t)
	monitor := "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: metrics\n  namespace: tdb-system\nspec: {}\n"
	cases := []struct {
		name           string
		def, cm, prom  string
		wantErrContain string
	}{
		{name: "the overlay changes something else", cm: strings.Replace(string(cm), "replicas: 2", "replicas: 3", 1), wantErrContain: "does not know"},
		{name: "the overlay injects no CA", cm: strings.Replace(string(cm), "    cert-manager.io/inject-ca-from: tdb-system/tdb-serving-cert\n", "", 1), wantErrContain: "inject-ca-from"},
		{name: "no rotation flag", def: strings.Replace(string(def), "--cert-rotation=true", "--other=true", 1),
			cm: strings.Replace(string(cm), "--cert-rotation=false", "--other=false", 1), wantErrContain: "--cert-rotation"},
		{name: "config places the pod itself", def: placed(def), cm: placed(cm), wantErrContain: "nodeSelector"},
		{name: "a monitoring object without the prefix", prom: monitor, wantErrContain: "prefix"},
		{name: "a monitoring object in another namespace", prom: strings.ReplaceAll(strings.Replace(monitor, "name: metrics", "name: tdb-metrics", 1), "tdb-system", "other"), wantErrContain: "namespace"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := Input{Version: "1.2.3", ImageRepository: "r", Default: def, CertManager: cm, Prometheus: []byte(c.prom)}
			if c.def != "" {
				in.Default = []byte(c.def)
			}
			if c.cm != "" {
				in.CertManager = []byte(c.cm)
			}
			if string(in.Default) == string(def) && string(in.CertManager) == string(cm) && c.prom == "" {
				t.Fatal("the edit did not apply")
			}
			_, err := Generate(in)
			if err == nil || !strings.Contains(err.Error(), c.wantErrContain) {
				t.Errorf("Generate: %v, want an error containing %q", err, c.wantErrContain)
			}
		})
	}
}

// Monitoring objects come through with Prometheus' own {{ }} templates
// printed as they are, and config's names and namespace replaced even inside
// PromQL.
func TestMonitoringObjectsThroughHelm(t *testing.T) {
	def, cm := renderings(t)
	prom, err := os.ReadFile(filepath.Join("testdata", "prometheus.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(Input{Version: "1.2.3", ImageRepository: "r", Default: def, CertManager: cm, Prometheus: prom})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := run(t, tool(t, "HELM"), "template", "tdb", dir, "--namespace", releaseNS,
		"--set", "prometheus.serviceMonitor.enabled=true,prometheus.rules.enabled=true")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	got, want := parse(t, out), parse(t, prom)
	for k, w := range want {
		if d := cmp.Diff(w, got[k]); d != "" {
			t.Errorf("%s (-want +got):\n%s", k, d)
		}
	}
	renamed, err := run(t, tool(t, "HELM"), "template", "x", dir, "--namespace", "ns", "--set", "prometheus.rules.enabled=true")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, renamed)
	}
	for _, s := range []string{`namespace=\"ns\"`, "x-webhook-service", "{{ $labels.tdb }}"} {
		if !strings.Contains(string(renamed), s) {
			t.Errorf("the renamed rule lacks %s:\n%s", s, renamed)
		}
	}
}
