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

// Package project checks that PROJECT, the kubebuilder project file,
// records what the project has: its module, its CRDs and the core-type
// webhook the manifests register; that the folders are the design card's
// (go/v4 with the reconcilers in controllers/, one per file); that the nested hack/bundlegen module
// builds with the same Go and dependency versions as the operator's; and
// that every Go file carries the license header.
package project

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

const root = "../.."

// projectConfig is kubebuilder's PROJECT (config version 3), strictly:
// a field kubebuilder does not record fails the test.
type projectConfig struct {
	CLIVersion  string            `json:"cliVersion,omitempty"`
	Domain      string            `json:"domain"`
	Layout      []string          `json:"layout"`
	Plugins     map[string]any    `json:"plugins,omitempty"`
	ProjectName string            `json:"projectName"`
	Repo        string            `json:"repo"`
	Resources   []projectResource `json:"resources"`
	Version     string            `json:"version"`
}

type projectResource struct {
	API        *projectAPI      `json:"api,omitempty"`
	Controller bool             `json:"controller,omitempty"`
	Core       bool             `json:"core,omitempty"`
	External   bool             `json:"external,omitempty"`
	Domain     string           `json:"domain,omitempty"`
	Group      string           `json:"group"`
	Kind       string           `json:"kind"`
	Path       string           `json:"path"`
	Version    string           `json:"version"`
	Webhooks   *projectWebhooks `json:"webhooks,omitempty"`
}

type projectAPI struct {
	CRDVersion string `json:"crdVersion"`
	Namespaced bool   `json:"namespaced,omitempty"`
}

type projectWebhooks struct {
	Defaulting     bool   `json:"defaulting,omitempty"`
	Validation     bool   `json:"validation,omitempty"`
	Conversion     bool   `json:"conversion,omitempty"`
	WebhookVersion string `json:"webhookVersion"`
}

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestProjectFile(t *testing.T) {
	var p projectConfig
	if err := yaml.UnmarshalStrict(read(t, "PROJECT"), &p); err != nil {
		t.Fatalf("PROJECT: %v", err)
	}
	if p.Version != "3" || len(p.Layout) != 1 || p.Layout[0] != "go.kubebuilder.io/v4" {
		t.Errorf("PROJECT: want config version 3 with layout go.kubebuilder.io/v4, got %q %v", p.Version, p.Layout)
	}
	gomod := string(read(t, "go.mod"))
	if !strings.HasPrefix(gomod, "module "+p.Repo+"\n") {
		t.Errorf("PROJECT: repo %q is not go.mod's module", p.Repo)
	}

	// Every CRD in config/crd/bases is a resource with an API in api/.
	entries, err := os.ReadDir(filepath.Join(root, "config", "crd", "bases"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]projectResource{}
	for _, e := range entries {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(read(t, filepath.Join("config", "crd", "bases", e.Name())), &crd); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		group, ok := strings.CutSuffix(crd.Spec.Group, "."+p.Domain)
		if !ok {
			t.Errorf("CRD %s: group %s is not under the project's domain %s", crd.Name, crd.Spec.Group, p.Domain)
		}
		for _, v := range crd.Spec.Versions {
			want[group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = projectResource{
				API:        &projectAPI{CRDVersion: "v1", Namespaced: crd.Spec.Scope == apiextensionsv1.NamespaceScoped},
				Controller: true,
				Domain:     p.Domain,
				Group:      group,
				Kind:       crd.Spec.Names.Kind,
				Path:       p.Repo + "/api/" + v.Name,
				Version:    v.Name,
			}
		}
	}
	// The eviction webhook is a validation webhook on the core Pod type
	// (pods/eviction is its subresource), recorded as kubebuilder records
	// core types: core: true, the k8s.io/api path, no api block.
	raw := read(t, filepath.Join("config", "webhook", "manifests.yaml"))
	var vwc admissionregistrationv1.ValidatingWebhookConfiguration
	if err := yaml.Unmarshal(raw, &vwc); err != nil {
		t.Fatal(err)
	}
	for _, w := range vwc.Webhooks {
		for _, r := range w.Rules {
			for _, res := range r.Resources {
				if base, _, _ := strings.Cut(res, "/"); base != "pods" || len(r.APIGroups) != 1 || r.APIGroups[0] != "" {
					t.Fatalf("webhook %s on %v %s: extend this test for it", w.Name, r.APIGroups, res)
				}
			}
		}
		want["core/v1/Pod"] = projectResource{
			Core: true, Group: "core", Kind: "Pod", Path: "k8s.io/api/core/v1", Version: "v1",
			Webhooks: &projectWebhooks{Validation: true, WebhookVersion: "v1"},
		}
	}

	got := map[string]projectResource{}
	for _, r := range p.Resources {
		got[r.Group+"/"+r.Version+"/"+r.Kind] = r
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PROJECT resources (-want +got):\n%s", diff)
	}
}

// goMod is what this test reads of a go.mod: its module path, go and
// toolchain lines, and requirements (path to version).
type goMod struct {
	module, goVersion, toolchain string
	require                      map[string]string
}

func parseGoMod(t *testing.T, name string) goMod {
	t.Helper()
	m := goMod{require: map[string]string{}}
	inRequire := false
	for i, line := range strings.Split(string(read(t, name)), "\n") {
		line, _, _ = strings.Cut(line, "//")
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case inRequire && f[0] == ")":
			inRequire = false
		case inRequire && len(f) == 2:
			m.require[f[0]] = f[1]
		case f[0] == "require" && len(f) == 2 && f[1] == "(":
			inRequire = true
		case f[0] == "require" && len(f) == 3:
			m.require[f[1]] = f[2]
		case f[0] == "module" && len(f) == 2:
			m.module = f[1]
		case f[0] == "go" && len(f) == 2:
			m.goVersion = f[1]
		case f[0] == "toolchain" && len(f) == 2:
			m.toolchain = f[1]
		case f[0] == "replace" || f[0] == "exclude" || f[0] == "retract" || f[0] == "tool" || f[0] == "godebug" || f[0] == "ignore":
			t.Fatalf("%s:%d: %s: extend this test for it", name, i+1, f[0])
		case inRequire:
			t.Fatalf("%s:%d: unexpected requirement %q", name, i+1, strings.TrimSpace(line))
		}
	}
	return m
}

// hack/bundlegen (the OLM bundle generator) is a module of its own, so the
// operator's unit tests do not need kustomize. It decodes the manifests
// with the same Kubernetes types as the operator, built by the same Go:
// its go and toolchain lines, and every module both require, are the
// operator's; and it does not depend on the operator's module.
func TestBundlegenModuleMatchesTheOperators(t *testing.T) {
	root := parseGoMod(t, "go.mod")
	gen := parseGoMod(t, filepath.Join("hack", "bundlegen", "go.mod"))
	if want := root.module + "/hack/bundlegen"; gen.module != want {
		t.Errorf("hack/bundlegen/go.mod: module %q, want %q", gen.module, want)
	}
	if gen.goVersion != root.goVersion || gen.toolchain != root.toolchain {
		t.Errorf("hack/bundlegen/go.mod: go %s, toolchain %s; go.mod: go %s, toolchain %s", gen.goVersion, gen.toolchain, root.goVersion, root.toolchain)
	}
	if len(gen.require) == 0 {
		t.Error("hack/bundlegen/go.mod requires nothing: is it read right?")
	}
	for path, v := range gen.require {
		if path == root.module || strings.HasPrefix(path, root.module+"/") {
			t.Errorf("hack/bundlegen/go.mod requires %s: the generator must not depend on the operator's module", path)
		}
		if rv, ok := root.require[path]; ok && rv != v {
			t.Errorf("hack/bundlegen/go.mod requires %s %s, go.mod %s: keep them equal", path, v, rv)
		}
	}
}
