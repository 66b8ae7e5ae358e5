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
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tdb-operator/tdb-operator/hack/bundlegen/bundle"
)

// The committed chart (dist/chart) rendered by the real helm (HELM, built by
// `make helm-binary`) against config/ rendered by the pinned kustomize
// (KUSTOMIZE): `make test-chart`.

const (
	repoRoot   = "../../.."
	releaseNS  = "tdb-system"
	otherNS    = "elsewhere"
	kustomized = "controller:latest"
)

func chartDir() string { return filepath.Join(repoRoot, "dist", "chart") }

func tool(t *testing.T, env string) string {
	t.Helper()
	bin := os.Getenv(env)
	if bin == "" {
		t.Skipf("%s is not set: run `make test-chart`", env)
	}
	return bin
}

func run(t *testing.T, bin string, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		return append(out.Bytes(), errOut.Bytes()...), err
	}
	return out.Bytes(), nil
}

// objects maps "Kind/name" to the object's fields, normalized: Helm's and
// kustomize's standard labels dropped (from metadata and selectors), the
// image and pull policy dropped (the chart's default image is a real tag,
// config's a placeholder).
type objects map[string]map[string]any

func parse(t *testing.T, data []byte) objects {
	t.Helper()
	objs, err := bundle.ParseObjects(data)
	if err != nil {
		t.Fatal(err)
	}
	out := objects{}
	for _, o := range objs {
		if o.Kind == "Namespace" || o.Kind == "CustomResourceDefinition" {
			continue
		}
		f := clone(o.Fields)
		normalize(f)
		out[o.Kind+"/"+o.Name] = f
	}
	return out
}

func normalize(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			if m, ok := c.(map[string]any); ok && (k == "labels" || k == "matchLabels" || k == "selector") {
				for _, l := range commonLabels {
					delete(m, l)
				}
				if len(m) == 0 {
					delete(v, k)
					continue
				}
			}
			if k == "containers" {
				for _, ct := range c.([]any) {
					cm := ct.(map[string]any)
					delete(cm, "image")
					delete(cm, "imagePullPolicy")
				}
			}
			normalize(c)
		}
	case []any:
		for _, c := range v {
			normalize(c)
		}
	}
}

func kustomizeBuild(t *testing.T, dir string) objects {
	t.Helper()
	out, err := run(t, tool(t, "KUSTOMIZE"), "build", filepath.Join(repoRoot, "config", dir))
	if err != nil {
		t.Fatalf("kustomize build config/%s: %v\n%s", dir, err, out)
	}
	return parse(t, out)
}

func helmTemplate(t *testing.T, release, ns string, args ...string) (objects, []byte) {
	t.Helper()
	out, err := run(t, tool(t, "HELM"), append([]string{"template", release, chartDir(), "--namespace", ns}, args...)...)
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", args, err, out)
	}
	return parse(t, out), out
}

func keys(o objects) []string {
	var ks []string
	for k := range o {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func diff(t *testing.T, what string, want, got objects) {
	t.Helper()
	if d := cmp.Diff(keys(want), keys(got)); d != "" {
		t.Errorf("%s: objects differ (-want +got):\n%s", what, d)
	}
	for k, w := range want {
		if g, ok := got[k]; ok {
			if d := cmp.Diff(w, g); d != "" {
				t.Errorf("%s: %s differs (-want +got):\n%s", what, k, d)
			}
		}
	}
}

func TestLint(t *testing.T) {
	out, err := run(t, tool(t, "HELM"), "lint", "--strict", chartDir())
	if err != nil {
		t.Fatalf("helm lint: %v\n%s", err, out)
	}
	for _, vs := range [][]string{
		{"--set", "certs.mode=cert-manager"},
		{"--set", "certs.mode=secret,certs.secret.name=tls,certs.secret.caBundle=Q0E="},
		{"--set", "webhook.scope=labelled,networkPolicy.enabled=false,fullnameOverride=x"},
		{"--set", "prometheus.serviceMonitor.enabled=true,prometheus.rules.enabled=true"},
	} {
		if out, err := run(t, tool(t, "HELM"), append([]string{"lint", "--strict", chartDir()}, vs...)...); err != nil {
			t.Errorf("helm lint %v: %v\n%s", vs, err, out)
		}
	}
}

func TestCRDsAreConfigs(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(repoRoot, "config", "crd", "bases"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		want, _ := os.ReadFile(filepath.Join(repoRoot, "config", "crd", "bases", e.Name()))
		got, err := os.ReadFile(filepath.Join(chartDir(), "crds", e.Name()))
		if err != nil || !bytes.Equal(want, got) {
			t.Errorf("crds/%s is not config/crd/bases/%s (%v): run make chart", e.Name(), e.Name(), err)
		}
	}
}

// The default values, released as "tdb" in tdb-system, install exactly
// config/default's objects (the Namespace aside: Helm's release namespace).
func TestDefaultIsConfigDefault(t *testing.T) {
	got, _ := helmTemplate(t, "tdb", releaseNS)
	diff(t, "default values", kustomizeBuild(t, "default"), got)
}

// certs.mode=cert-manager installs config/certmanager's objects.
func TestCertManagerIsTheOverlay(t *testing.T) {
	got, _ := helmTemplate(t, "tdb", releaseNS, "--set", "certs.mode=cert-manager")
	diff(t, "certs.mode=cert-manager", kustomizeBuild(t, "certmanager"), got)
}

// The labelled scope is config/scope-labelled (config/default with the
// Component config/components/scope-labelled), object by object.
func TestLabelledScopeIsTheOverlay(t *testing.T) {
	got, _ := helmTemplate(t, "tdb", releaseNS, "--set", "webhook.scope=labelled")
	diff(t, "webhook.scope=labelled", kustomizeBuild(t, "scope-labelled"), got)
}

// mutate returns config/default's objects changed by f.
func mutate(t *testing.T, f func(o objects)) objects {
	t.Helper()
	o := kustomizeBuild(t, "default")
	f(o)
	return o
}

func managerIn(o objects) map[string]any {
	c, _ := managerOf(o["Deployment/tdb-operator"])
	return c
}

func webhookOf(o objects) map[string]any {
	return o["ValidatingWebhookConfiguration/tdb-validating-webhook-configuration"]["webhooks"].([]any)[0].(map[string]any)
}

func TestValueSets(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want objects
	}{{
		name: "a provided Secret",
		args: []string{"--set", "certs.mode=secret,certs.secret.name=my-tls,certs.secret.caBundle=Q0E="},
		want: func() objects {
			o := kustomizeBuild(t, "certmanager")
			delete(o, "Issuer/tdb-selfsigned-issuer")
			delete(o, "Certificate/tdb-serving-cert")
			vwc := o["ValidatingWebhookConfiguration/tdb-validating-webhook-configuration"]
			vwc["metadata"].(map[string]any)["annotations"] = map[string]any{"policy.tdb.dev/installed-failure-policy": "Fail"}
			webhookOf(o)["clientConfig"].(map[string]any)["caBundle"] = "Q0E="
			vols, _ := nestedSlice(o["Deployment/tdb-operator"], "spec", "template", "spec", "volumes")
			vols[0].(map[string]any)["secret"].(map[string]any)["secretName"] = "my-tls"
			return o
		}(),
	}, {
		name: "labelled namespaces only",
		args: []string{"--set", "webhook.scope=labelled"},
		want: mutate(t, func(o objects) {
			webhookOf(o)["namespaceSelector"].(map[string]any)["matchLabels"] = map[string]any{enforceLabel: "true"}
		}),
	}, {
		name: "no NetworkPolicy",
		args: []string{"--set", "networkPolicy.enabled=false"},
		want: mutate(t, func(o objects) { delete(o, "NetworkPolicy/tdb-allow-webhook-traffic") }),
	}, {
		name: "failurePolicy Ignore, replicas, resources, placement, annotations",
		args: []string{"--set", "webhook.failurePolicy=Ignore,replicas=3,podAnnotations.a=b",
			"--set-json", `resources={"requests":{"cpu":"1"}}`,
			"--set-json", `nodeSelector={"pool":"system"}`,
			"--set-json", `tolerations=[{"key":"k","operator":"Exists"}]`,
			"--set-json", `affinity={"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"k","operator":"Exists"}]}]}}}`},
		want: mutate(t, func(o objects) {
			webhookOf(o)["failurePolicy"] = "Ignore"
			o["ValidatingWebhookConfiguration/tdb-validating-webhook-configuration"]["metadata"].(map[string]any)["annotations"] = map[string]any{"policy.tdb.dev/installed-failure-policy": "Ignore"}
			dep := o["Deployment/tdb-operator"]
			dep["spec"].(map[string]any)["replicas"] = float64(3)
			pod, _ := nestedMap(dep, "spec", "template", "spec")
			pod["nodeSelector"] = map[string]any{"pool": "system"}
			pod["tolerations"] = []any{map[string]any{"key": "k", "operator": "Exists"}}
			pod["affinity"] = map[string]any{"nodeAffinity": map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
				"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{map[string]any{"key": "k", "operator": "Exists"}}}}}}}
			ann, _ := nestedMap(dep, "spec", "template", "metadata", "annotations")
			ann["a"] = "b"
			// Helm merges maps of values: the other defaults stay.
			managerIn(o)["resources"].(map[string]any)["requests"].(map[string]any)["cpu"] = "1"
		}),
	}, {
		name: "extra flags, after the chart's own",
		args: []string{"--set-json", `extraArgs=["--kube-api-qps=200","--leader-elect=false"]`},
		want: mutate(t, func(o objects) {
			c := managerIn(o)
			c["args"] = append(c["args"].([]any), "--kube-api-qps=200", "--leader-elect=false")
		}),
	}, {
		name: "monitoring on: every object of config/prometheus, if it exists",
		args: []string{"--set", "prometheus.serviceMonitor.enabled=true,prometheus.rules.enabled=true"},
		want: mutate(t, func(o objects) {
			if _, err := os.Stat(filepath.Join(repoRoot, "config", "prometheus", "kustomization.yaml")); err != nil {
				return
			}
			for k, v := range kustomizeBuild(t, "prometheus") {
				o[k] = v
			}
		}),
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := helmTemplate(t, "tdb", releaseNS, c.args...)
			diff(t, c.name, c.want, got)
		})
	}
}

// With another name and namespace, every name and every reference between
// objects follows: no config name or namespace is left anywhere.
func TestFullnameOverrideEverywhere(t *testing.T) {
	for _, args := range [][]string{
		{"--set", "fullnameOverride=acme-ops"},
		{"--set", "fullnameOverride=acme-ops,certs.mode=cert-manager,webhook.scope=labelled,prometheus.serviceMonitor.enabled=true,prometheus.rules.enabled=true"},
		{"--set", "nameOverride=x,fullnameOverride=acme-ops"},
	} {
		got, raw := helmTemplate(t, "rel", otherNS, args...)
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.Contains(line, releaseNS) {
				t.Errorf("%v: config's namespace left: %q", args, line)
			}
			if i := strings.Index(line, "tdb-"); i >= 0 && !allowedTDB(line) {
				t.Errorf("%v: a config name left: %q", args, line)
			}
		}
		for k, o := range got {
			name := o["metadata"].(map[string]any)["name"].(string)
			if !strings.HasPrefix(name, "acme-ops-") {
				t.Errorf("%v: %s is not named after fullnameOverride", args, k)
			}
		}
		checkReferences(t, got, "acme-ops", otherNS)
	}
	// Without an override, the release name is the prefix.
	got, _ := helmTemplate(t, "rel", otherNS, "--set", "certs.mode=cert-manager")
	checkReferences(t, got, "rel", otherNS)
}

// allowedTDB: lines that may name "tdb-" whatever the release: label
// values, the chart's name, and the Lease whose name is fixed in code.
func allowedTDB(line string) bool {
	for _, ok := range []string{"control-plane: tdb-operator", "app.kubernetes.io/name: tdb-operator",
		"app.kubernetes.io/part-of: tdb-operator", "helm.sh/chart: tdb-operator-", "- tdb-operator.policy.tdb.dev",
		"# Source: tdb-operator/", `image: "tdb-operator:`} {
		if strings.Contains(line, ok) {
			return true
		}
	}
	return false
}

func checkReferences(t *testing.T, o objects, full, ns string) {
	t.Helper()
	must := func(k string) map[string]any {
		v, ok := o[k]
		if !ok {
			t.Fatalf("no %s among %v", k, keys(o))
		}
		return v
	}
	dep := must("Deployment/" + full + "-operator")
	must("Service/" + full + "-webhook-service")
	must("ServiceAccount/" + full + "-operator")
	pod, _ := nestedMap(dep, "spec", "template", "spec")
	if pod["serviceAccountName"] != full+"-operator" {
		t.Errorf("serviceAccountName %v", pod["serviceAccountName"])
	}
	c, _ := managerOf(dep)
	args := map[string]bool{}
	for _, a := range c["args"].([]any) {
		args[a.(string)] = true
	}
	for _, want := range []string{"--webhook-secret-name=" + full + "-webhook-server-cert",
		"--webhook-service-name=" + full + "-webhook-service",
		"--webhook-config-name=" + full + "-validating-webhook-configuration"} {
		if !args[want] {
			t.Errorf("manager args %v lack %s", c["args"], want)
		}
	}
	for _, kind := range []string{"RoleBinding", "ClusterRoleBinding"} {
		b := must(kind + "/" + full + "-manager-rolebinding")
		want := []any{map[string]any{"kind": "ServiceAccount", "name": full + "-operator", "namespace": ns}}
		if d := cmp.Diff(want, b["subjects"]); d != "" {
			t.Errorf("%s subjects (-want +got):\n%s", kind, d)
		}
		if b["roleRef"].(map[string]any)["name"] != full+"-manager-role" {
			t.Errorf("%s roleRef %v", kind, b["roleRef"])
		}
	}
	names := func(k string) []string {
		var out []string
		for _, r := range must(k)["rules"].([]any) {
			rn, _ := r.(map[string]any)["resourceNames"].([]any)
			for _, n := range rn {
				out = append(out, n.(string))
			}
		}
		sort.Strings(out)
		return out
	}
	if d := cmp.Diff([]string{full + "-webhook-server-cert", "tdb-operator.policy.tdb.dev"}, names("Role/"+full+"-manager-role")); d != "" {
		t.Errorf("Role resourceNames (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{full + "-validating-webhook-configuration"}, names("ClusterRole/"+full+"-manager-role")); d != "" {
		t.Errorf("ClusterRole resourceNames (-want +got):\n%s", d)
	}
	hook := must("ValidatingWebhookConfiguration/" + full + "-validating-webhook-configuration")["webhooks"].([]any)[0].(map[string]any)
	svc := hook["clientConfig"].(map[string]any)["service"].(map[string]any)
	if svc["name"] != full+"-webhook-service" || svc["namespace"] != ns {
		t.Errorf("the webhook calls %v", svc)
	}
	exprs := hook["namespaceSelector"].(map[string]any)["matchExpressions"].([]any)
	if d := cmp.Diff([]any{map[string]any{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []any{ns}}}, exprs); d != "" {
		t.Errorf("namespaceSelector (-want +got):\n%s", d)
	}
	if cert, ok := o["Certificate/"+full+"-serving-cert"]; ok {
		spec := cert["spec"].(map[string]any)
		want := []any{full + "-webhook-service." + ns + ".svc", full + "-webhook-service." + ns + ".svc.cluster.local"}
		if d := cmp.Diff(want, spec["dnsNames"]); d != "" {
			t.Errorf("certificate DNS names (-want +got):\n%s", d)
		}
		if spec["secretName"] != full+"-webhook-server-cert" || spec["issuerRef"].(map[string]any)["name"] != full+"-selfsigned-issuer" {
			t.Errorf("certificate %v", spec)
		}
		must("Issuer/" + full + "-selfsigned-issuer")
		ann := must("ValidatingWebhookConfiguration/" + full + "-validating-webhook-configuration")["metadata"].(map[string]any)["annotations"].(map[string]any)
		if ann[injectCAFrom] != ns+"/"+full+"-serving-cert" {
			t.Errorf("inject-ca-from %v", ann[injectCAFrom])
		}
	}
}

// The chart installs on the oldest Kubernetes minor make test-compat runs
// the operator on (bundle.MinKubeVersion, the bundle's minKubeVersion too)
// and refuses the minor before it, which nothing has run on.
func TestKubeVersionIsTheOldestTestedMinor(t *testing.T) {
	major, minor, ok := strings.Cut(strings.TrimSuffix(bundle.MinKubeVersion, ".0"), ".")
	n, err := strconv.Atoi(minor)
	if !ok || major != "1" || err != nil {
		t.Fatalf("bundle.MinKubeVersion %q is not 1.<minor>.0", bundle.MinKubeVersion)
	}
	for _, v := range []string{"v" + bundle.MinKubeVersion, fmt.Sprintf("v1.%d.13", n)} {
		if out, err := run(t, tool(t, "HELM"), "template", "tdb", chartDir(), "--kube-version", v); err != nil {
			t.Errorf("helm template --kube-version %s: %v\n%s", v, err, out)
		}
	}
	older := fmt.Sprintf("v1.%d.99", n-1)
	out, err := run(t, tool(t, "HELM"), "template", "tdb", chartDir(), "--kube-version", older)
	if err == nil || !strings.Contains(string(out), "kubeVersion") {
		t.Errorf("helm template --kube-version %s: want the chart's kubeVersion to refuse it, got %v\n%s", older, err, out)
	}
}

func TestBadValuesRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--set", "certs.mode=vault"},
		{"--set", "certs.mode=secret"},
		{"--set", "certs.mode=secret,certs.secret.name=tls"},
		{"--set", "webhook.scope=some"},
		{"--set", "webhook.failurePolicy=Maybe"},
		{"--set", "fullnameOverride=" + strings.Repeat("a", 48)},
		{"--set", "extraArgs=--kube-api-qps=200"},
		{"--set-json", `extraArgs=["kube-api-qps=200"]`},
		{"--set-json", `extraArgs=[200]`},
		{"--set-json", `extraArgs={"kube-api-qps":"200"}`},
	} {
		if out, err := run(t, tool(t, "HELM"), append([]string{"template", "tdb", chartDir()}, args...)...); err == nil {
			t.Errorf("helm template %v succeeded:\n%s", args, out)
		}
	}
}
