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

package bundle

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
)

const (
	repoRoot       = "../../.."
	fixture        = "testdata/config-default.yaml"
	testImage      = "example.invalid/tdb-operator:v0.1.0"
	testScorecard  = "example.invalid/operator-framework/scorecard-test:v1.32.0"
	testVersion    = "0.1.0"
	managerCertDir = "/tmp/k8s-webhook-server/serving-certs"
)

// readDir reads a directory's YAML files as the command does.
func readDir(t *testing.T, dir string) []SourceFile {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []SourceFile
	for _, e := range entries {
		if e.IsDir() || e.Name() == "kustomization.yaml" || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, SourceFile{Name: e.Name(), Data: data})
	}
	return files
}

func fixtureInput(t *testing.T) Input {
	t.Helper()
	rendered, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	return Input{
		Version:        testVersion,
		Image:          testImage,
		Rendered:       rendered,
		CRDs:           readDir(t, filepath.Join(repoRoot, "config", "crd", "bases")),
		Samples:        readDir(t, filepath.Join(repoRoot, "config", "samples")),
		ScorecardImage: testScorecard,
	}
}

// bundleOf turns generated files into a Bundle, as LoadBundle would read
// them from disk.
func bundleOf(t *testing.T, files []File) Bundle {
	t.Helper()
	b := Bundle{Manifests: map[string][]byte{}}
	for _, f := range files {
		switch {
		case strings.HasPrefix(f.Path, ManifestsDir+"/"):
			b.Manifests[strings.TrimPrefix(f.Path, ManifestsDir+"/")] = f.Data
		case f.Path == AnnotationsFile:
			b.Annotations = f.Data
		case f.Path == ScorecardFile:
			b.Scorecard = f.Data
		case f.Path == DockerfileFile:
			b.Dockerfile = f.Data
		case f.Path == VersionFile:
			b.Version = f.Data
		default:
			t.Fatalf("unexpected generated file %s", f.Path)
		}
	}
	return b
}

func generate(t *testing.T, in Input) Bundle {
	t.Helper()
	files, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	return bundleOf(t, files)
}

func TestGenerateFromFixture(t *testing.T) {
	in := fixtureInput(t)
	// config/default's NetworkPolicy is in the input and, by design, in no
	// bundle file (wantPaths): older OLM refuses bundles that carry one.
	if !bytes.Contains(in.Rendered, []byte("\nkind: NetworkPolicy\n")) {
		t.Fatal("the fixture has no NetworkPolicy, as config/default renders one: refresh testdata/config-default.yaml")
	}
	files, err := Generate(in)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	wantPaths := []string{
		DockerfileFile,
		VersionFile,
		ManifestsDir + "/policy.tdb.dev_topologydisruptionbudgets.yaml",
		CSVFile,
		ManifestsDir + "/tdb-operator_policy_v1_poddisruptionbudget.yaml",
		AnnotationsFile,
		ScorecardFile,
	}
	if diff := cmp.Diff(wantPaths, paths); diff != "" {
		t.Errorf("generated files (-want +got):\n%s", diff)
	}

	b := bundleOf(t, files)
	if problems := Check(b); len(problems) > 0 {
		t.Errorf("the generated bundle breaks OLM's rules:\n%s", strings.Join(problems, "\n"))
	}

	// A second run gives the same bytes.
	again, err := Generate(fixtureInput(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range files {
		if !bytes.Equal(files[i].Data, again[i].Data) {
			t.Errorf("%s differs between two runs", files[i].Path)
		}
	}

	p, problems := Parse(b)
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	spec := p.Deployments["tdb-operator"]
	if len(spec.Template.Spec.Containers) != 1 {
		t.Fatalf("want the manager container, got %+v", spec.Template.Spec.Containers)
	}
	manager := spec.Template.Spec.Containers[0]
	if manager.Image != testImage {
		t.Errorf("manager image %q, want %q", manager.Image, testImage)
	}
	wantArgs := []string{
		"--leader-elect", "--health-probe-bind-address=:8081", "--metrics-bind-address=:8080",
		"--webhook-port=9443", "--webhook-cert-dir=" + managerCertDir, "--cert-rotation=false", "--webhook-config-name=",
	}
	if diff := cmp.Diff(wantArgs, manager.Args); diff != "" {
		t.Errorf("manager args under OLM (-want +got):\n%s", diff)
	}
	if len(manager.VolumeMounts) != 0 || len(spec.Template.Spec.Volumes) != 0 {
		t.Errorf("the certificate volume must go (OLM mounts its own at %s): mounts %+v, volumes %+v",
			managerCertDir, manager.VolumeMounts, spec.Template.Spec.Volumes)
	}
	if got := p.CSV.Metadata.Annotations["containerImage"]; got != testImage {
		t.Errorf("containerImage %q, want %q", got, testImage)
	}
	var examples []map[string]any
	if err := json.Unmarshal([]byte(p.CSV.Metadata.Annotations["alm-examples"]), &examples); err != nil || len(examples) != 1 {
		t.Fatalf("alm-examples: %v %v", examples, err)
	}
	if meta := examples[0]["metadata"].(map[string]any); meta["namespace"] != nil || meta["name"] != "ingesters" {
		t.Errorf("alm-examples[0].metadata = %v, want the sample's name and no namespace", meta)
	}

	// The certificate rotation is off, and so are its rights: no rule on
	// Secrets or webhook configurations; the rest is config's.
	strategy := p.CSV.Spec.Install.StrategySpec
	var resources []string
	for _, perms := range [][]StrategyDeploymentPermissions{strategy.Permissions, strategy.ClusterPermissions} {
		for _, perm := range perms {
			for _, r := range perm.Rules {
				resources = append(resources, r.Resources...)
			}
		}
	}
	for _, res := range resources {
		if res == "secrets" || res == "validatingwebhookconfigurations" {
			t.Errorf("the CSV grants %s, which only the certificate rotation needs", res)
		}
	}
	wantNS := []string{"leases", "leases"}
	var gotNS []string
	for _, r := range strategy.Permissions[0].Rules {
		gotNS = append(gotNS, r.Resources...)
	}
	if diff := cmp.Diff(wantNS, gotNS); diff != "" {
		t.Errorf("namespaced permissions (-want +got):\n%s", diff)
	}
	if n := len(strategy.ClusterPermissions[0].Rules); n != 8 {
		t.Errorf("want config's 10 cluster rules less the 2 on validatingwebhookconfigurations, got %d", n)
	}

	// OLM, not kustomize, manages the bundle's objects.
	if got := strategy.DeploymentSpecs[0].Label[ManagedByLabel]; got != "olm" {
		t.Errorf("deployment label %s=%q, want olm", ManagedByLabel, got)
	}
	if pdb := b.Manifests["tdb-operator_policy_v1_poddisruptionbudget.yaml"]; !bytes.Contains(pdb, []byte("app.kubernetes.io/managed-by: olm\n")) {
		t.Errorf("the PodDisruptionBudget is not managed-by olm:\n%s", pdb)
	}

	if len(p.CSV.Spec.WebhookDefinitions) != 1 {
		t.Fatalf("want one webhook definition, got %d", len(p.CSV.Spec.WebhookDefinitions))
	}
	wh := p.CSV.Spec.WebhookDefinitions[0]
	if wh.ContainerPort != 443 || wh.TargetPort == nil || wh.TargetPort.String() != "webhook-server" || wh.DeploymentName != "tdb-operator" {
		t.Errorf("webhook ports/deployment: %d -> %v on %q", wh.ContainerPort, wh.TargetPort, wh.DeploymentName)
	}
}

// edit replaces text in the fixture, failing if the text is gone, so that
// no case passes because its edit silently did nothing.
func edit(t *testing.T, in Input, old, new string) Input {
	t.Helper()
	if !bytes.Contains(in.Rendered, []byte(old)) {
		t.Fatalf("the fixture no longer contains %q", old)
	}
	in.Rendered = bytes.Replace(in.Rendered, []byte(old), []byte(new), 1)
	return in
}

func TestGenerateRefuses(t *testing.T) {
	tests := []struct {
		name    string
		input   func(t *testing.T, in Input) Input
		wantErr string
	}{
		{
			name:    "version is not semver",
			input:   func(_ *testing.T, in Input) Input { in.Version = "v0.1"; return in },
			wantErr: "not a semantic version",
		},
		{
			name:    "no image",
			input:   func(_ *testing.T, in Input) Input { in.Image = ""; return in },
			wantErr: "no manager image",
		},
		{
			name: "a kind the bundle has no rule for",
			input: func(t *testing.T, in Input) Input {
				in.Rendered = append(in.Rendered, []byte("---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: operator\n  namespace: tdb-system\nspec: {}\n")...)
				return in
			},
			wantErr: "no rule for kind HorizontalPodAutoscaler",
		},
		{
			name: "a Secret with data",
			input: func(t *testing.T, in Input) Input {
				return edit(t, in, "name: tdb-webhook-server-cert\n  namespace: tdb-system\ntype: Opaque", "name: tdb-webhook-server-cert\n  namespace: tdb-system\ntype: Opaque\ndata:\n  tls.key: c2VjcmV0")
			},
			wantErr: "must not carry secrets",
		},
		{
			name: "a CRD that is not in config/crd/bases",
			input: func(t *testing.T, in Input) Input {
				return edit(t, in, "name: topologydisruptionbudgets.policy.tdb.dev", "name: widgets.policy.tdb.dev")
			},
			wantErr: "not in config/crd/bases",
		},
		{
			name: "the manager runs as a service account config does not create",
			input: func(t *testing.T, in Input) Input {
				return edit(t, in, "serviceAccountName: tdb-operator", "serviceAccountName: someone-else")
			},
			wantErr: "which config/default does not create",
		},
		{
			name: "no manager container",
			input: func(t *testing.T, in Input) Input {
				return edit(t, in, "name: manager\n", "name: operator\n")
			},
			wantErr: `no container named "manager"`,
		},
		{
			name: "the webhook Service selects no Deployment",
			input: func(t *testing.T, in Input) Input {
				return edit(t, in, "  selector:\n    control-plane: tdb-operator\n", "  selector:\n    control-plane: nothing\n")
			},
			wantErr: "selects the pods of 0 Deployments",
		},
		{
			name: "the webhook calls a port the Service does not expose",
			input: func(t *testing.T, in Input) Input {
				return edit(t, in, "  - name: webhook\n    port: 443", "  - name: webhook\n    port: 8443")
			},
			wantErr: "calls port 443",
		},
		{
			name: "a rule mixing Secrets with other resources",
			input: func(t *testing.T, in Input) Input {
				return edit(t, in, "  resources:\n  - secrets\n  verbs:\n  - get", "  resources:\n  - secrets\n  - configmaps\n  verbs:\n  - get")
			},
			wantErr: "mixes resources only the certificate rotation needs",
		},
		{
			name: "Secrets granted through a wildcard",
			input: func(t *testing.T, in Input) Input {
				return edit(t, in, "  resources:\n  - secrets\n  verbs:\n  - get", "  resources:\n  - '*'\n  verbs:\n  - get")
			},
			wantErr: "through a wildcard",
		},
		{
			name: "a selector on the managed-by label",
			input: func(t *testing.T, in Input) Input {
				return edit(t, in, "  minAvailable: 1\n  selector:\n    matchLabels:\n", "  minAvailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/managed-by: kustomize\n")
			},
			wantErr: "selects on app.kubernetes.io/managed-by",
		},
		{
			name: "a ClusterRole bound to no one",
			input: func(t *testing.T, in Input) Input {
				in.Rendered = append(in.Rendered, []byte("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: tdb-viewer\nrules: []\n")...)
				return in
			},
			wantErr: "ClusterRole tdb-viewer is bound to none",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(tc.input(t, fixtureInput(t)))
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("want an error containing %q, got %v", tc.wantErr, err)
			}
		})
	}
}

func TestForOLM(t *testing.T) {
	spec := func(args []string, mounts, volumes string) map[string]any {
		t.Helper()
		argsJSON, _ := json.Marshal(args)
		raw := `{"replicas":2,"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{` +
			volumes + `"containers":[{"name":"sidecar","image":"side:1"},{"name":"manager","image":"controller:latest","args":` + string(argsJSON) + mounts + `}]}}}`
		var m map[string]any
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return m
	}
	certMount := `,"volumeMounts":[{"name":"certs","mountPath":"` + managerCertDir + `"},{"name":"cache","mountPath":"/cache"}]`
	volumes := `"volumes":[{"name":"certs","emptyDir":{}},{"name":"cache","emptyDir":{}}],`
	tests := []struct {
		name string
		in   map[string]any
		want map[string]any
	}{
		{
			name: "rotation on, own cert volume",
			in: spec([]string{"--leader-elect", "--cert-rotation=true", "--webhook-cert-dir=" + managerCertDir, "--webhook-secret-name=s", "--webhook-service-name=v", "--webhook-config-name=c"},
				certMount, volumes),
			want: spec([]string{"--leader-elect", "--webhook-cert-dir=" + managerCertDir, "--cert-rotation=false", "--webhook-config-name="},
				`,"volumeMounts":[{"name":"cache","mountPath":"/cache"}]`, `"volumes":[{"name":"cache","emptyDir":{}}],`),
		},
		{
			name: "no cert dir flag, no volumes",
			in:   spec([]string{"--cert-rotation"}, "", ""),
			want: spec([]string{"--cert-rotation=false", "--webhook-cert-dir=" + managerCertDir, "--webhook-config-name="}, "", ""),
		},
		{
			name: "pods managed by kustomize are managed by OLM",
			in: func() map[string]any {
				m := spec([]string{"--cert-rotation=false", "--webhook-cert-dir=" + managerCertDir}, "", "")
				m["template"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)[ManagedByLabel] = "kustomize"
				return m
			}(),
			want: func() map[string]any {
				m := spec([]string{"--webhook-cert-dir=" + managerCertDir, "--cert-rotation=false", "--webhook-config-name="}, "", "")
				m["template"].(map[string]any)["metadata"].(map[string]any)["labels"].(map[string]any)[ManagedByLabel] = "olm"
				return m
			}(),
		},
		{
			name: "cert dir elsewhere moves to OLM's",
			in:   spec([]string{"--webhook-cert-dir=/certs"}, "", ""),
			want: spec([]string{"--webhook-cert-dir=" + managerCertDir, "--cert-rotation=false", "--webhook-config-name="}, "", ""),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := json.Marshal(tc.in)
			got, err := ForOLM(tc.in, "tdb:1")
			if err != nil {
				t.Fatal(err)
			}
			setImage(tc.want, "tdb:1")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if after, _ := json.Marshal(tc.in); !bytes.Equal(before, after) {
				t.Error("ForOLM changed its input")
			}
			var typed appsv1.DeploymentSpec
			raw, _ := json.Marshal(got)
			if err := decodeStrict(raw, &typed); err != nil {
				t.Errorf("not a DeploymentSpec any more: %v", err)
			}
		})
	}
}

func setImage(spec map[string]any, image string) {
	for _, c := range spec["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any) {
		if c.(map[string]any)["name"] == ManagerContainer {
			c.(map[string]any)["image"] = image
		}
	}
}
