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
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// renderConfig is `kustomize build config/default` with the pinned
// kustomize: $KUSTOMIZE (make test-bundlegen sets it), else bin/ as the Makefile
// pins it.
func renderConfig(t *testing.T) []byte {
	t.Helper()
	bin := os.Getenv("KUSTOMIZE")
	if bin == "" {
		makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`(?m)^KUSTOMIZE_VERSION \?= (\S+)$`).FindSubmatch(makefile)
		if m == nil {
			t.Fatal("the Makefile pins no KUSTOMIZE_VERSION")
		}
		bin = filepath.Join(repoRoot, "bin", "kustomize-"+string(m[1]))
		if _, err := os.Stat(bin); err != nil {
			t.Skipf("no pinned kustomize at %s: run `make test-bundlegen`, which builds it", bin)
		}
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "build", "config/default")
	cmd.Dir = repoRoot
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("kustomize build config/default: %v\n%s", err, stderr.String())
	}
	return out
}

// servedWebhookPath is where the manager serves the eviction webhook: the
// constant Path of internal/evictionwebhook, read from its source, since
// this module does not depend on the operator's.
func servedWebhookPath(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(repoRoot, "internal", "evictionwebhook")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if name.Name != "Path" {
						continue
					}
					var lit *ast.BasicLit
					if i < len(vs.Values) {
						lit, _ = vs.Values[i].(*ast.BasicLit)
					}
					if lit == nil || lit.Kind != token.STRING {
						t.Fatalf("%s: const Path is not a string literal", file)
					}
					path, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatalf("%s: const Path: %v", file, err)
					}
					return path
				}
			}
		}
	}
	t.Fatalf("%s declares no const Path", dir)
	return ""
}

// The committed bundle follows OLM's rules and says what config/ says.
func TestCommittedBundle(t *testing.T) {
	b, err := LoadBundle(repoRoot)
	if err != nil {
		t.Fatalf("reading the committed bundle (make bundle VERSION=x.y.z): %v", err)
	}
	if problems := Check(b); len(problems) > 0 {
		t.Errorf("the committed bundle breaks OLM's rules:\n%s", strings.Join(problems, "\n"))
	}
	crds := readDir(t, filepath.Join(repoRoot, "config", "crd", "bases"))
	if problems := checkAgainstConfig(b, renderConfig(t), crds, servedWebhookPath(t)); len(problems) > 0 {
		t.Errorf("the committed bundle does not match config/ (make bundle):\n%s", strings.Join(problems, "\n"))
	}
}

// renderedConfig is the rendered config decoded.
type renderedConfig struct {
	deployments  map[string]appsv1.Deployment
	clusterRoles map[string]rbacv1.ClusterRole
	roles        map[string]rbacv1.Role
	crbs         []rbacv1.ClusterRoleBinding
	rbs          []rbacv1.RoleBinding
	vwcs         []admissionregistrationv1.ValidatingWebhookConfiguration
	services     []corev1.Service
	extras       map[string]map[string]any // PDBs and ConfigMaps by kind/name
}

func decodeConfig(rendered []byte) (renderedConfig, error) {
	c := renderedConfig{
		deployments:  map[string]appsv1.Deployment{},
		clusterRoles: map[string]rbacv1.ClusterRole{},
		roles:        map[string]rbacv1.Role{},
		extras:       map[string]map[string]any{},
	}
	objs, err := ParseObjects(rendered)
	if err != nil {
		return c, err
	}
	for _, o := range objs {
		var err error
		switch o.Kind {
		case "Deployment":
			var d appsv1.Deployment
			err = json.Unmarshal(o.JSON, &d)
			c.deployments[d.Name] = d
		case "ClusterRole":
			var r rbacv1.ClusterRole
			err = json.Unmarshal(o.JSON, &r)
			c.clusterRoles[r.Name] = r
		case "Role":
			var r rbacv1.Role
			err = json.Unmarshal(o.JSON, &r)
			c.roles[r.Namespace+"/"+r.Name] = r
		case "ClusterRoleBinding":
			var r rbacv1.ClusterRoleBinding
			err = json.Unmarshal(o.JSON, &r)
			c.crbs = append(c.crbs, r)
		case "RoleBinding":
			var r rbacv1.RoleBinding
			err = json.Unmarshal(o.JSON, &r)
			c.rbs = append(c.rbs, r)
		case "ValidatingWebhookConfiguration":
			var v admissionregistrationv1.ValidatingWebhookConfiguration
			err = json.Unmarshal(o.JSON, &v)
			c.vwcs = append(c.vwcs, v)
		case "Service":
			var s corev1.Service
			err = json.Unmarshal(o.JSON, &s)
			c.services = append(c.services, s)
		case "PodDisruptionBudget", "ConfigMap":
			c.extras[o.Kind+"/"+o.Name] = o.Fields
		}
		if err != nil {
			return c, fmt.Errorf("%s: %w", o.ID(), err)
		}
	}
	return c, nil
}

// checkAgainstConfig compares a bundle with the rendered config/default
// and config/crd/bases, and checks what this project promises about the
// webhook, served at servedPath. It is written apart from the generator: it
// states what the bundle must contain, not how the generator builds it.
func checkAgainstConfig(b Bundle, rendered []byte, crdSources []SourceFile, servedPath string) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	p, parseProblems := Parse(b)
	if len(parseProblems) > 0 {
		return parseProblems
	}
	cfg, err := decodeConfig(rendered)
	if err != nil {
		return []string{err.Error()}
	}
	csv := p.CSV
	strategy := csv.Spec.Install.StrategySpec

	// The CRDs: config/crd/bases' files, byte for byte.
	bundleCRDs := map[string]bool{}
	for name := range p.CRDs {
		bundleCRDs[name] = true
	}
	for _, src := range crdSources {
		got, ok := b.Manifests[src.Name]
		switch {
		case !ok:
			fail("manifests/ has no %s (config/crd/bases)", src.Name)
		case !bytes.Equal(got, src.Data):
			fail("manifests/%s differs from config/crd/bases/%s", src.Name, src.Name)
		}
		delete(bundleCRDs, src.Name)
	}
	for name := range bundleCRDs {
		fail("manifests/%s is a CRD that config/crd/bases does not have", name)
	}

	// The Deployments: config's, with the manager image, and the
	// certificate handed to OLM (rotation off; OLM mounts its key pair at
	// the cert dir, so config's volume there goes).
	image := csv.Metadata.Annotations["containerImage"]
	if len(strategy.DeploymentSpecs) != len(cfg.deployments) {
		fail("the CSV has %d deployments, config %d", len(strategy.DeploymentSpecs), len(cfg.deployments))
	}
	var managerDeployment string
	var webhookPort string
	for _, d := range strategy.DeploymentSpecs {
		want, ok := cfg.deployments[d.Name]
		if !ok {
			fail("CSV deployment %q is not in config", d.Name)
			continue
		}
		if diff := cmp.Diff(managedByOLMLabels(want.Labels), d.Label); diff != "" {
			fail("CSV deployment %q labels differ from config's, managed-by olm (-config +csv):\n%s", d.Name, diff)
		}
		wantSpec := *want.Spec.DeepCopy()
		wantSpec.Template.Labels = managedByOLMLabels(wantSpec.Template.Labels)
		gotSpec := p.Deployments[d.Name]
		gotSpec = *gotSpec.DeepCopy()
		var wantArgs, gotArgs []string
		for i := range wantSpec.Template.Spec.Containers {
			c := &wantSpec.Template.Spec.Containers[i]
			if c.Name != ManagerContainer {
				continue
			}
			managerDeployment = d.Name
			c.Image = image
			for _, a := range c.Args {
				name, value, _ := strings.Cut(a, "=")
				switch name {
				case "--cert-rotation", "--webhook-secret-name", "--webhook-service-name", "--webhook-config-name":
				case "--webhook-cert-dir":
					wantArgs = append(wantArgs, name+"="+managerCertDir)
				case "--webhook-port":
					webhookPort = value
					wantArgs = append(wantArgs, a)
				default:
					wantArgs = append(wantArgs, a)
				}
			}
			wantArgs = append(wantArgs, "--cert-rotation=false", "--webhook-config-name=")
			c.Args = nil
			var mounts []corev1.VolumeMount
			dropped := map[string]bool{}
			for _, m := range c.VolumeMounts {
				if m.MountPath == managerCertDir {
					dropped[m.Name] = true
					continue
				}
				mounts = append(mounts, m)
			}
			c.VolumeMounts = mounts
			var volumes []corev1.Volume
			for _, v := range wantSpec.Template.Spec.Volumes {
				if !dropped[v.Name] {
					volumes = append(volumes, v)
				}
			}
			wantSpec.Template.Spec.Volumes = volumes
		}
		for i := range gotSpec.Template.Spec.Containers {
			if c := &gotSpec.Template.Spec.Containers[i]; c.Name == ManagerContainer {
				gotArgs, c.Args = c.Args, nil
			}
		}
		sort.Strings(wantArgs)
		sort.Strings(gotArgs)
		if diff := cmp.Diff(wantArgs, gotArgs); diff != "" {
			fail("CSV deployment %q: manager args differ from config's with rotation off (-want +csv):\n%s", d.Name, diff)
		}
		if diff := cmp.Diff(wantSpec, gotSpec); diff != "" {
			fail("CSV deployment %q differs from config (-want +csv):\n%s", d.Name, diff)
		}

		// RBAC: what config binds to the deployment's service account,
		// less the rules only the certificate rotation needs (off in the
		// bundle): the install namespace may be shared with other
		// operators, whose Secrets the operator must not read.
		sa := want.Spec.Template.Spec.ServiceAccountName
		var wantCluster, wantNS []rbacv1.PolicyRule
		for _, crb := range cfg.crbs {
			if bindsAccount(crb.Subjects, sa, want.Namespace) {
				wantCluster = append(wantCluster, cfg.clusterRoles[crb.RoleRef.Name].Rules...)
			}
		}
		for _, rb := range cfg.rbs {
			if !bindsAccount(rb.Subjects, sa, want.Namespace) {
				continue
			}
			if rb.RoleRef.Kind == "ClusterRole" {
				wantNS = append(wantNS, cfg.clusterRoles[rb.RoleRef.Name].Rules...)
			} else {
				wantNS = append(wantNS, cfg.roles[rb.Namespace+"/"+rb.RoleRef.Name].Rules...)
			}
		}
		for kind, pair := range map[string]struct {
			want []rbacv1.PolicyRule
			got  []StrategyDeploymentPermissions
		}{
			"clusterPermissions": {withoutRotationOnly(wantCluster), strategy.ClusterPermissions},
			"permissions":        {withoutRotationOnly(wantNS), strategy.Permissions},
		} {
			var got []rbacv1.PolicyRule
			for _, perm := range pair.got {
				if perm.ServiceAccountName == sa {
					got = append(got, perm.Rules...)
				}
			}
			if diff := cmp.Diff(sortRules(pair.want), sortRules(got)); diff != "" {
				fail("CSV %s for %s differ from config's RBAC less the certificate rotation's rules (-config +csv):\n%s", kind, sa, diff)
			}
		}
	}
	// Whatever config says: no rule of the CSV reaches Secrets or webhook
	// configurations.
	for kind, perms := range map[string][]StrategyDeploymentPermissions{
		"clusterPermissions": strategy.ClusterPermissions,
		"permissions":        strategy.Permissions,
	} {
		for _, perm := range perms {
			for i, r := range perm.Rules {
				if res := rotationResourcesGranted(r); len(res) > 0 {
					fail("CSV %s for %s: rule %d grants %v, which only the certificate rotation needs (off in the bundle)", kind, perm.ServiceAccountName, i, res)
				}
			}
		}
	}

	// The webhook: config's, served at the handler's path, for evictions,
	// failing closed, with dry runs free of side effects.
	var wantHooks []admissionregistrationv1.ValidatingWebhook
	for _, v := range cfg.vwcs {
		wantHooks = append(wantHooks, v.Webhooks...)
	}
	if len(wantHooks) != len(csv.Spec.WebhookDefinitions) {
		fail("the CSV defines %d webhooks, config %d", len(csv.Spec.WebhookDefinitions), len(wantHooks))
	}
	for _, want := range wantHooks {
		var got *WebhookDescription
		for i := range csv.Spec.WebhookDefinitions {
			if csv.Spec.WebhookDefinitions[i].GenerateName == want.Name {
				got = &csv.Spec.WebhookDefinitions[i]
			}
		}
		if got == nil {
			fail("config's webhook %s is not in the CSV", want.Name)
			continue
		}
		gotView := admissionregistrationv1.ValidatingWebhook{
			Name: got.GenerateName, Rules: got.Rules, FailurePolicy: got.FailurePolicy, MatchPolicy: got.MatchPolicy,
			ObjectSelector: got.ObjectSelector, SideEffects: got.SideEffects, TimeoutSeconds: got.TimeoutSeconds,
			AdmissionReviewVersions: got.AdmissionReviewVersions,
		}
		wantView := want.DeepCopy()
		// OLM sets the namespaceSelector from the OperatorGroup and the
		// client config from its own Service.
		wantView.NamespaceSelector, wantView.ClientConfig = nil, admissionregistrationv1.WebhookClientConfig{}
		if diff := cmp.Diff(*wantView, gotView); diff != "" {
			fail("CSV webhook %s differs from config (-config +csv):\n%s", want.Name, diff)
		}
		if want.ClientConfig.Service == nil || got.WebhookPath == nil || *got.WebhookPath != *want.ClientConfig.Service.Path {
			fail("CSV webhook %s: webhookPath differs from config's service path", want.Name)
		}
	}
	for _, w := range csv.Spec.WebhookDefinitions {
		if w.WebhookPath == nil || *w.WebhookPath != servedPath {
			fail("CSV webhook %s: webhookPath is not the served path %s", w.GenerateName, servedPath)
		}
		if w.Type != ValidatingAdmissionWebhook {
			fail("CSV webhook %s: type %s, want ValidatingAdmissionWebhook", w.GenerateName, w.Type)
		}
		wantRules := []admissionregistrationv1.RuleWithOperations{{
			Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
			Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods/eviction"}},
		}}
		if diff := cmp.Diff(wantRules, w.Rules); diff != "" {
			fail("CSV webhook %s: rules must be pods/eviction CREATE (-want +csv):\n%s", w.GenerateName, diff)
		}
		if w.SideEffects == nil || *w.SideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun {
			fail("CSV webhook %s: sideEffects must be NoneOnDryRun (dry runs are decided, never recorded)", w.GenerateName)
		}
		if w.FailurePolicy == nil || *w.FailurePolicy != admissionregistrationv1.Fail {
			fail("CSV webhook %s: failurePolicy must be Fail", w.GenerateName)
		}
		if w.DeploymentName != managerDeployment {
			fail("CSV webhook %s: deploymentName %q, want the manager's %q", w.GenerateName, w.DeploymentName, managerDeployment)
		}
		// The target port is the port the manager serves the webhook on.
		spec := p.Deployments[w.DeploymentName]
		served := false
		for _, c := range spec.Template.Spec.Containers {
			for _, port := range c.Ports {
				if w.TargetPort != nil && (port.Name == w.TargetPort.StrVal || (w.TargetPort.StrVal == "" && port.ContainerPort == w.TargetPort.IntVal)) {
					served = fmt.Sprint(port.ContainerPort) == webhookPort
				}
			}
		}
		if !served {
			fail("CSV webhook %s: targetPort %v is not the manager's --webhook-port %s", w.GenerateName, w.TargetPort, webhookPort)
		}
	}

	// Objects config installs besides: shipped as they are, without a
	// namespace.
	for key, want := range cfg.extras {
		kind, name, _ := strings.Cut(key, "/")
		var found bool
		for file, data := range b.Manifests {
			objs, err := ParseObjects(data)
			if err != nil || len(objs) != 1 || objs[0].Kind != kind || objs[0].Name != name {
				continue
			}
			found = true
			wantCopy, _ := deepCopyJSON(want)
			meta := wantCopy["metadata"].(map[string]any)
			delete(meta, "namespace")
			if labels, ok := meta["labels"].(map[string]any); ok && labels["app.kubernetes.io/managed-by"] != nil {
				labels["app.kubernetes.io/managed-by"] = "olm"
			}
			if diff := cmp.Diff(wantCopy, objs[0].Fields); diff != "" {
				fail("manifests/%s differs from config's %s (-config +bundle):\n%s", file, key, diff)
			}
		}
		if !found {
			fail("config's %s is not in manifests/", key)
		}
	}

	// The package and channel.
	for key, want := range map[string]string{AnnotationPackage: PackageName, AnnotationChannels: Channel, AnnotationDefaultChannel: DefaultChannel} {
		if got := p.Annotations[key]; got != want {
			fail("annotations.yaml: %s is %q, want %q", key, got, want)
		}
	}
	return problems
}

// managedByOLMLabels is labels with app.kubernetes.io/managed-by, where
// config sets it, saying olm: in the bundle OLM manages the objects.
func managedByOLMLabels(labels map[string]string) map[string]string {
	if _, ok := labels["app.kubernetes.io/managed-by"]; !ok {
		return labels
	}
	out := map[string]string{}
	for k, v := range labels {
		out[k] = v
	}
	out["app.kubernetes.io/managed-by"] = "olm"
	return out
}

// rotationResources are what internal/certs' RBAC markers name for the
// certificate rotation, by API group.
var rotationResources = map[string]string{
	"secrets":                         "",
	"validatingwebhookconfigurations": "admissionregistration.k8s.io",
}

// rotationResourcesGranted lists the rotation's resources a rule grants,
// through wildcards too.
func rotationResourcesGranted(r rbacv1.PolicyRule) []string {
	var out []string
	for _, name := range sortedKeys(rotationResources) {
		group := rotationResources[name]
		groupOK, resourceOK := false, false
		for _, g := range r.APIGroups {
			groupOK = groupOK || g == "*" || g == group
		}
		for _, res := range r.Resources {
			resourceOK = resourceOK || res == "*" || res == name || strings.HasPrefix(res, name+"/")
		}
		if groupOK && resourceOK {
			out = append(out, name)
		}
	}
	return out
}

// withoutRotationOnly drops the rules on the rotation's resources alone.
func withoutRotationOnly(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	var out []rbacv1.PolicyRule
	for _, r := range rules {
		only := len(r.Resources) > 0 && len(r.APIGroups) > 0
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				base, _, _ := strings.Cut(res, "/")
				if group, ok := rotationResources[base]; !ok || group != g {
					only = false
				}
			}
		}
		if !only {
			out = append(out, r)
		}
	}
	return out
}

func bindsAccount(subjects []rbacv1.Subject, name, namespace string) bool {
	for _, s := range subjects {
		if s.Kind == rbacv1.ServiceAccountKind && s.Name == name && s.Namespace == namespace {
			return true
		}
	}
	return false
}

func sortRules(rules []rbacv1.PolicyRule) []string {
	var out []string
	for _, r := range rules {
		b, _ := json.Marshal(r)
		out = append(out, string(b))
	}
	sort.Strings(out)
	return out
}

// mutate returns a copy of the bundle with the CSV edited as generic YAML.
func mutate(t *testing.T, b Bundle, edit func(csv map[string]any)) Bundle {
	t.Helper()
	out := Bundle{Manifests: map[string][]byte{}, Annotations: b.Annotations, Scorecard: b.Scorecard, Dockerfile: b.Dockerfile, Version: b.Version}
	for k, v := range b.Manifests {
		out.Manifests[k] = v
	}
	name := strings.TrimPrefix(CSVFile, ManifestsDir+"/")
	var csv map[string]any
	if err := yaml.Unmarshal(b.Manifests[name], &csv); err != nil {
		t.Fatal(err)
	}
	edit(csv)
	data, err := yaml.Marshal(csv)
	if err != nil {
		t.Fatal(err)
	}
	out.Manifests[name] = data
	return out
}

// at walks a path of map keys and list indexes in generic YAML.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			v = v.(map[string]any)[k]
		case int:
			v = v.([]any)[k]
		}
	}
	return v
}

func set(v any, value any, path ...any) {
	parent := at(v, path[:len(path)-1]...)
	switch k := path[len(path)-1].(type) {
	case string:
		parent.(map[string]any)[k] = value
	case int:
		parent.([]any)[k] = value
	}
}

func del(v any, path ...any) {
	delete(at(v, path[:len(path)-1]...).(map[string]any), path[len(path)-1].(string))
}

// Each case breaks one documented rule in a bundle that is otherwise
// valid; Check must name it.
func TestCheckRefuses(t *testing.T) {
	good := generate(t, fixtureInput(t))
	if problems := Check(good); len(problems) > 0 {
		t.Fatalf("the base bundle must be valid:\n%s", strings.Join(problems, "\n"))
	}
	csv := func(edit func(csv map[string]any)) func(t *testing.T) Bundle {
		return func(t *testing.T) Bundle { return mutate(t, good, edit) }
	}
	deployment := []any{"spec", "install", "spec", "deployments", 0}
	hook := []any{"spec", "webhookdefinitions", 0}
	owned := []any{"spec", "customresourcedefinitions", "owned", 0}
	tests := []struct {
		name    string
		bundle  func(t *testing.T) Bundle
		wantErr string
	}{
		{"no displayName", csv(func(c map[string]any) { del(c, "spec", "displayName") }), "spec.displayName is missing"},
		{"empty displayName", csv(func(c map[string]any) { set(c, "", "spec", "displayName") }), "spec.displayName is missing"},
		{"no description", csv(func(c map[string]any) { del(c, "spec", "description") }), "spec.description is missing"},
		{"no provider", csv(func(c map[string]any) { del(c, "spec", "provider") }), "spec.provider.name is missing"},
		{"no maintainers", csv(func(c map[string]any) { del(c, "spec", "maintainers") }), "spec.maintainers is empty"},
		{"no containerImage", csv(func(c map[string]any) { del(c, "metadata", "annotations", "containerImage") }), "metadata.annotations.containerImage is missing"},
		{"name is not package.vVERSION", csv(func(c map[string]any) { set(c, "tdb.v0.1.0", "metadata", "name") }), "<package>.v<version>"},
		{"version is not semver", csv(func(c map[string]any) { set(c, "0.1", "spec", "version") }), "not a semantic version"},
		{"no install modes", csv(func(c map[string]any) { del(c, "spec", "installModes") }), "installModes lists AllNamespaces 0 times"},
		{"AllNamespaces unsupported", csv(func(c map[string]any) { set(c, false, "spec", "installModes", 3, "supported") }), "AllNamespaces install mode must be supported"},
		{"not the deployment strategy", csv(func(c map[string]any) { set(c, "helm", "spec", "install", "strategy") }), `spec.install.strategy is "helm"`},
		{"no install", csv(func(c map[string]any) { del(c, "spec", "install") }), `spec.install.strategy is ""`},
		{"no deployments", csv(func(c map[string]any) { set(c, []any{}, "spec", "install", "spec", "deployments") }), "deployments is empty"},
		{"deployment spec is not a DeploymentSpec", csv(func(c map[string]any) { set(c, 2, append(deployment, "spec", "replicaCount")...) }), "not an apps/v1 DeploymentSpec"},
		{"containerImage is not deployed", csv(func(c map[string]any) { set(c, "other:1", "metadata", "annotations", "containerImage") }), "is not the image of a container"},
		{"permissions for an unknown account", csv(func(c map[string]any) {
			set(c, "ghost", "spec", "install", "spec", "clusterPermissions", 0, "serviceAccountName")
		}), `service account "ghost", which no deployment runs as`},
		{"owned CRD kind differs", csv(func(c map[string]any) { set(c, "Budget", append(owned, "kind")...) }), `has kind "Budget"`},
		{"owned CRD version not served", csv(func(c map[string]any) { set(c, "v1", append(owned, "version")...) }), "is not a served version"},
		{"owned CRD not in manifests", csv(func(c map[string]any) { set(c, "widgets.policy.tdb.dev", append(owned, "name")...) }), "is not in manifests/"},
		{"descriptor of no field", csv(func(c map[string]any) { set(c, "maxUnavailble", append(owned, "specDescriptors", 2, "path")...) }), `descriptor "maxUnavailble" names no field`},
		{"alm-examples not JSON", csv(func(c map[string]any) { set(c, "[{", "metadata", "annotations", "alm-examples") }), "alm-examples is not a JSON array"},
		{"alm-examples with an unknown field", csv(func(c map[string]any) {
			set(c, `[{"apiVersion":"policy.tdb.dev/v1alpha1","kind":"TopologyDisruptionBudget","metadata":{"name":"x"},"spec":{"maxUnavailabel":1}}]`, "metadata", "annotations", "alm-examples")
		}), "spec.maxUnavailabel is not in the CRD schema"},
		{"capability level unknown", csv(func(c map[string]any) { set(c, "Autopilot", "metadata", "annotations", "capabilities") }), "not a capability level"},
		{"icon not base64", csv(func(c map[string]any) { set(c, "<svg/>", "spec", "icon", 0, "base64data") }), "not base64"},
		{"webhook namespaceSelector (OLM has no such field)", csv(func(c map[string]any) { set(c, map[string]any{}, append(hook, "namespaceSelector")...) }), "not a ClusterServiceVersion as OLM defines it"},
		{"webhook type unknown", csv(func(c map[string]any) { set(c, "ConversionWebhook", append(hook, "type")...) }), "is not ValidatingAdmissionWebhook or MutatingAdmissionWebhook"},
		{"webhook deployment unknown", csv(func(c map[string]any) { set(c, "ghost", append(hook, "deploymentName")...) }), `deploymentName "ghost"`},
		{"webhook target port unknown", csv(func(c map[string]any) { set(c, "https", append(hook, "targetPort")...) }), "targetPort https is not a container port"},
		{"webhook side effects", csv(func(c map[string]any) { set(c, "Some", append(hook, "sideEffects")...) }), "sideEffects must be None or NoneOnDryRun"},
		{"webhook on all groups", csv(func(c map[string]any) { set(c, []any{"*"}, append(hook, "rules", 0, "apiGroups")...) }), `intercepts API group "*"`},
		{"webhook on webhook configurations", csv(func(c map[string]any) {
			set(c, []any{"validatingwebhookconfigurations"}, append(hook, "rules", 0, "resources")...)
		}), "which OLM refuses"},
		{"webhook without admission review v1", csv(func(c map[string]any) { set(c, []any{"v1beta1"}, append(hook, "admissionReviewVersions")...) }), "lacks v1"},
		{"VERSION differs", func(t *testing.T) Bundle { b := good; b.Version = []byte("0.2.0\n"); return b }, "bundle/VERSION"},
		{"Dockerfile label differs from annotations", func(t *testing.T) Bundle {
			b := good
			b.Dockerfile = bytes.Replace(b.Dockerfile, []byte("bundle.channels.v1=alpha"), []byte("bundle.channels.v1=stable"), 1)
			return b
		}, "label operators.operatorframework.io.bundle.channels.v1"},
		{"default channel not a channel", func(t *testing.T) Bundle {
			b := good
			b.Annotations = bytes.Replace(b.Annotations, []byte("channel.default.v1: alpha"), []byte("channel.default.v1: stable"), 1)
			return b
		}, "is not one of the channels"},
		{"scorecard image names a registry", func(t *testing.T) Bundle {
			b := good
			b.Scorecard = bytes.Replace(b.Scorecard, []byte("example.invalid/"), []byte("registry.example.com/"), 1)
			return b
		}, `names registry "registry.example.com"`},
		{"two objects in one manifest", func(t *testing.T) Bundle {
			b := mutate(t, good, func(map[string]any) {})
			b.Manifests["tdb-operator_policy_v1_poddisruptionbudget.yaml"] = append(append([]byte{}, b.Manifests["tdb-operator_policy_v1_poddisruptionbudget.yaml"]...), []byte("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")...)
			return b
		}, "holds 2 objects"},
		{"an unsupported kind", func(t *testing.T) Bundle {
			b := mutate(t, good, func(map[string]any) {})
			b.Manifests["np.yaml"] = []byte("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: x\n")
			return b
		}, "kind NetworkPolicy is not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problems := Check(tc.bundle(t))
			for _, p := range problems {
				if strings.Contains(p, tc.wantErr) {
					return
				}
			}
			t.Errorf("want a problem containing %q, got:\n%s", tc.wantErr, strings.Join(problems, "\n"))
		})
	}
}

// Each case makes the bundle disagree with config/ or break a promise
// about the webhook; checkAgainstConfig must say so.
func TestCheckAgainstConfigRefuses(t *testing.T) {
	in := fixtureInput(t)
	servedPath := servedWebhookPath(t)
	good := generate(t, in)
	if problems := checkAgainstConfig(good, in.Rendered, in.CRDs, servedPath); len(problems) > 0 {
		t.Fatalf("the base bundle must match its config:\n%s", strings.Join(problems, "\n"))
	}
	csv := func(edit func(csv map[string]any)) func(t *testing.T) Bundle {
		return func(t *testing.T) Bundle { return mutate(t, good, edit) }
	}
	deployment := []any{"spec", "install", "spec", "deployments", 0}
	container := append(append([]any{}, deployment...), "spec", "template", "spec", "containers", 0)
	hook := []any{"spec", "webhookdefinitions", 0}
	tests := []struct {
		name    string
		bundle  func(t *testing.T) Bundle
		wantErr string
	}{
		{"webhook path not the served one", csv(func(c map[string]any) { set(c, "/validate", append(hook, "webhookPath")...) }), "not the served path /validate-eviction"},
		{"webhook fails open", csv(func(c map[string]any) { set(c, "Ignore", append(hook, "failurePolicy")...) }), "failurePolicy must be Fail"},
		{"webhook records dry runs", csv(func(c map[string]any) { set(c, "None", append(hook, "sideEffects")...) }), "sideEffects must be NoneOnDryRun"},
		{"webhook also on UPDATE", csv(func(c map[string]any) { set(c, []any{"CREATE", "UPDATE"}, append(hook, "rules", 0, "operations")...) }), "rules must be pods/eviction CREATE"},
		{"webhook timeout differs", csv(func(c map[string]any) { set(c, 30, append(hook, "timeoutSeconds")...) }), "differs from config"},
		{"webhook target port not the served port", csv(func(c map[string]any) { set(c, "metrics", append(hook, "targetPort")...) }), "is not the manager's --webhook-port"},
		{"replicas differ", csv(func(c map[string]any) { set(c, 1, append(deployment, "spec", "replicas")...) }), `deployment "tdb-operator" differs from config`},
		{"rotation left on", csv(func(c map[string]any) {
			args := at(c, append(container, "args")...).([]any)
			args[len(args)-1] = "--cert-rotation=true"
		}), "manager args differ"},
		{"cluster rule dropped", csv(func(c map[string]any) {
			rules := at(c, "spec", "install", "spec", "clusterPermissions", 0, "rules").([]any)
			set(c, rules[1:], "spec", "install", "spec", "clusterPermissions", 0, "rules")
		}), "clusterPermissions for tdb-operator differ"},
		{"namespaced rule broadened", csv(func(c map[string]any) {
			set(c, []any{"*"}, "spec", "install", "spec", "permissions", 0, "rules", 0, "verbs")
		}), "permissions for tdb-operator differ"},
		{"deployment labels differ", csv(func(c map[string]any) { del(c, append(deployment, "label")...) }), "labels differ"},
		{"deployment still managed by kustomize", csv(func(c map[string]any) {
			set(c, "kustomize", append(deployment, "label", "app.kubernetes.io/managed-by")...)
		}), "labels differ from config's, managed-by olm"},
		{"namespace Secrets rule kept", csv(func(c map[string]any) {
			path := []any{"spec", "install", "spec", "permissions", 0, "rules"}
			rules := at(c, path...).([]any)
			set(c, append([]any{map[string]any{"apiGroups": []any{""}, "resources": []any{"secrets"}, "verbs": []any{"get", "list", "watch"}}}, rules...), path...)
		}), "rule 0 grants [secrets], which only the certificate rotation needs"},
		{"webhook configuration rule kept", csv(func(c map[string]any) {
			path := []any{"spec", "install", "spec", "clusterPermissions", 0, "rules"}
			rules := at(c, path...).([]any)
			set(c, append(rules, map[string]any{"apiGroups": []any{"admissionregistration.k8s.io"}, "resources": []any{"validatingwebhookconfigurations"}, "verbs": []any{"get"}}), path...)
		}), "grants [validatingwebhookconfigurations], which only the certificate rotation needs"},
		{"Secrets through a wildcard", csv(func(c map[string]any) {
			set(c, []any{"*"}, "spec", "install", "spec", "permissions", 0, "rules", 0, "resources")
			set(c, []any{"*"}, "spec", "install", "spec", "permissions", 0, "rules", 0, "apiGroups")
		}), "grants [secrets validatingwebhookconfigurations], which only the certificate rotation needs"},
		{"CRD edited", func(t *testing.T) Bundle {
			b := mutate(t, good, func(map[string]any) {})
			name := "policy.tdb.dev_topologydisruptionbudgets.yaml"
			b.Manifests[name] = bytes.Replace(b.Manifests[name], []byte("shortNames:\n    - tdb"), []byte("shortNames:\n    - tdbs"), 1)
			return b
		}, "differs from config/crd/bases"},
		{"PodDisruptionBudget edited", func(t *testing.T) Bundle {
			b := mutate(t, good, func(map[string]any) {})
			name := "tdb-operator_policy_v1_poddisruptionbudget.yaml"
			b.Manifests[name] = bytes.Replace(b.Manifests[name], []byte("minAvailable: 1"), []byte("minAvailable: 0"), 1)
			return b
		}, "differs from config's PodDisruptionBudget/tdb-operator"},
		{"PodDisruptionBudget still managed by kustomize", func(t *testing.T) Bundle {
			b := mutate(t, good, func(map[string]any) {})
			name := "tdb-operator_policy_v1_poddisruptionbudget.yaml"
			if !bytes.Contains(b.Manifests[name], []byte("managed-by: olm")) {
				t.Fatal("the PodDisruptionBudget is not managed-by olm")
			}
			b.Manifests[name] = bytes.Replace(b.Manifests[name], []byte("managed-by: olm"), []byte("managed-by: kustomize"), 1)
			return b
		}, "differs from config's PodDisruptionBudget/tdb-operator"},
		{"another package", func(t *testing.T) Bundle {
			b := good
			b.Annotations = bytes.Replace(b.Annotations, []byte("package.v1: tdb-operator"), []byte("package.v1: tdb"), 1)
			return b
		}, "bundle.package.v1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.bundle(t)
			if bytes.Equal(b.Annotations, good.Annotations) && bytes.Equal(b.Dockerfile, good.Dockerfile) && equalManifests(b, good) {
				t.Fatal("the case changed nothing")
			}
			problems := checkAgainstConfig(b, in.Rendered, in.CRDs, servedPath)
			for _, p := range problems {
				if strings.Contains(p, tc.wantErr) {
					return
				}
			}
			t.Errorf("want a problem containing %q, got:\n%s", tc.wantErr, strings.Join(problems, "\n"))
		})
	}
}

func equalManifests(a, b Bundle) bool {
	if len(a.Manifests) != len(b.Manifests) {
		return false
	}
	for k, v := range a.Manifests {
		if !bytes.Equal(v, b.Manifests[k]) {
			return false
		}
	}
	return true
}
