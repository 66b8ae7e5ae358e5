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
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// The checks below are the rules OLM documents for a registry+v1 bundle and
// its ClusterServiceVersion (operator-framework's bundle format, CSV and
// webhook documentation), written out because operator-sdk's validators
// are not available here. Check reports every rule a bundle breaks.

// Bundle is a bundle as it lies on disk.
type Bundle struct {
	// Manifests are bundle/manifests' files by name.
	Manifests   map[string][]byte
	Annotations []byte
	Scorecard   []byte
	Dockerfile  []byte
	Version     []byte
}

// LoadBundle reads the bundle under root (bundle/ and bundle.Dockerfile).
func LoadBundle(root string) (Bundle, error) {
	b := Bundle{Manifests: map[string][]byte{}}
	dir := filepath.Join(root, filepath.FromSlash(ManifestsDir))
	entries, err := os.ReadDir(dir)
	if err != nil {
		return b, err
	}
	for _, e := range entries {
		if e.IsDir() {
			return b, fmt.Errorf("%s/%s: bundle manifests must be files", ManifestsDir, e.Name())
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return b, err
		}
		b.Manifests[e.Name()] = data
	}
	for _, f := range []struct {
		path string
		dst  *[]byte
	}{
		{AnnotationsFile, &b.Annotations},
		{ScorecardFile, &b.Scorecard},
		{DockerfileFile, &b.Dockerfile},
		{VersionFile, &b.Version},
	} {
		if *f.dst, err = os.ReadFile(filepath.Join(root, filepath.FromSlash(f.path))); err != nil {
			return b, err
		}
	}
	return b, nil
}

// SupportedKinds are the kinds a registry+v1 bundle may carry in manifests/.
var SupportedKinds = map[string]bool{
	"ClusterServiceVersion": true, "CustomResourceDefinition": true, "Secret": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "ConfigMap": true,
	"ServiceAccount": true, "Service": true, "Role": true, "RoleBinding": true,
	"PrometheusRule": true, "ServiceMonitor": true, "PodDisruptionBudget": true,
	"PriorityClass": true, "VerticalPodAutoscaler": true, "ConsoleYAMLSample": true,
	"ConsoleQuickStart": true, "ConsoleCLIDownload": true, "ConsoleLink": true,
}

// Capability levels and OperatorHub categories OLM's UI knows.
var (
	CapabilityLevels = map[string]bool{
		"Basic Install": true, "Seamless Upgrades": true, "Full Lifecycle": true,
		"Deep Insights": true, "Auto Pilot": true,
	}
	KnownCategories = map[string]bool{
		"AI/Machine Learning": true, "Application Runtime": true, "Big Data": true,
		"Cloud Provider": true, "Database": true, "Developer Tools": true,
		"Drivers and plugins": true, "Integration & Delivery": true,
		"Logging & Tracing": true, "Modernization & Migration": true,
		"Monitoring": true, "Networking": true, "OpenShift Optional": true,
		"Security": true, "Storage": true, "Streaming & Messaging": true,
	}
	iconMediaTypes = map[string]bool{"image/svg+xml": true, "image/png": true, "image/jpeg": true, "image/gif": true}
)

// Parsed is a bundle decoded: its CSV, its CRDs and its annotations.
type Parsed struct {
	CSV         ClusterServiceVersion
	CSVFile     string
	CRDs        map[string]apiextensionsv1.CustomResourceDefinition // by file name
	Annotations map[string]string
	Deployments map[string]appsv1.DeploymentSpec // by name
}

// Parse decodes the bundle strictly; it fails on what Check cannot even
// look at (no CSV, a manifest that is not one object, a field OLM's CSV
// does not have).
func Parse(b Bundle) (Parsed, []string) {
	p := Parsed{
		CRDs:        map[string]apiextensionsv1.CustomResourceDefinition{},
		Deployments: map[string]appsv1.DeploymentSpec{},
	}
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	names := make([]string, 0, len(b.Manifests))
	for name := range b.Manifests {
		names = append(names, name)
	}
	sort.Strings(names)
	csvs := 0
	for _, name := range names {
		objs, err := ParseObjects(b.Manifests[name])
		if err != nil {
			fail("manifests/%s: %v", name, err)
			continue
		}
		if len(objs) != 1 {
			fail("manifests/%s: holds %d objects; a bundle manifest holds exactly one", name, len(objs))
			continue
		}
		o := objs[0]
		if !SupportedKinds[o.Kind] {
			fail("manifests/%s: kind %s is not supported in a registry+v1 bundle", name, o.Kind)
		}
		switch o.Kind {
		case CSVKind:
			csvs++
			p.CSVFile = name
			if err := decodeStrict(o.JSON, &p.CSV); err != nil {
				fail("manifests/%s: not a ClusterServiceVersion as OLM defines it: %v", name, err)
			}
		case "CustomResourceDefinition":
			var crd apiextensionsv1.CustomResourceDefinition
			if err := decodeStrict(o.JSON, &crd); err != nil {
				fail("manifests/%s: %v", name, err)
				continue
			}
			p.CRDs[name] = crd
		}
	}
	if csvs != 1 {
		fail("manifests/ holds %d ClusterServiceVersions, want exactly one", csvs)
	}
	for _, d := range p.CSV.Spec.Install.StrategySpec.DeploymentSpecs {
		var spec appsv1.DeploymentSpec
		if err := decodeStrict(d.Spec, &spec); err != nil {
			fail("CSV deployment %q: spec is not an apps/v1 DeploymentSpec: %v", d.Name, err)
			continue
		}
		p.Deployments[d.Name] = spec
	}

	var ann Annotations
	if err := decodeYAMLStrict(b.Annotations, &ann); err != nil {
		fail("metadata/annotations.yaml: %v", err)
	}
	p.Annotations = ann.Annotations
	return p, problems
}

// decodeYAMLStrict decodes one YAML document into v, refusing fields v
// does not have.
func decodeYAMLStrict(data []byte, v any) error {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	return decodeStrict(js, v)
}

// Check returns every documented OLM rule the bundle breaks.
func Check(b Bundle) []string {
	p, problems := Parse(b)
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	csv := p.CSV
	spec := csv.Spec

	// Bundle metadata and image labels.
	for key, want := range map[string]string{
		AnnotationMediaType: "registry+v1",
		AnnotationManifests: "manifests/",
		AnnotationMetadata:  "metadata/",
	} {
		if got := p.Annotations[key]; got != want {
			fail("annotations.yaml: %s is %q, want %q", key, got, want)
		}
	}
	pkg := p.Annotations[AnnotationPackage]
	if pkg == "" {
		fail("annotations.yaml: no package (%s)", AnnotationPackage)
	}
	channels := strings.Split(p.Annotations[AnnotationChannels], ",")
	if p.Annotations[AnnotationChannels] == "" {
		fail("annotations.yaml: no channels (%s)", AnnotationChannels)
	}
	if def := p.Annotations[AnnotationDefaultChannel]; def != "" && !contains(channels, def) {
		fail("annotations.yaml: default channel %q is not one of the channels %q", def, channels)
	}
	problems = append(problems, checkDockerfile(b.Dockerfile, p.Annotations)...)

	// CSV identity.
	if csv.APIVersion != CSVAPIVersion || csv.Kind != CSVKind {
		fail("CSV: apiVersion/kind %s/%s, want %s/%s", csv.APIVersion, csv.Kind, CSVAPIVersion, CSVKind)
	}
	if !SemVer.MatchString(spec.Version) {
		fail("CSV: spec.version %q is not a semantic version", spec.Version)
	}
	if want := pkg + ".v" + spec.Version; csv.Metadata.Name != want {
		fail("CSV: metadata.name %q, want <package>.v<version> = %q", csv.Metadata.Name, want)
	}
	if errs := validation.IsDNS1123Subdomain(csv.Metadata.Name); len(errs) > 0 {
		fail("CSV: metadata.name %q: %s", csv.Metadata.Name, strings.Join(errs, "; "))
	}
	if v := strings.TrimSpace(string(b.Version)); v != spec.Version {
		fail("bundle/VERSION says %q, the CSV's spec.version %q", v, spec.Version)
	}
	if spec.Replaces != "" && !strings.HasPrefix(spec.Replaces, pkg+".v") {
		fail("CSV: spec.replaces %q is not a CSV of package %s", spec.Replaces, pkg)
	}

	// Presentation.
	required := map[string]string{
		"spec.displayName": spec.DisplayName, "spec.description": spec.Description,
		"spec.maturity": spec.Maturity, "spec.provider.name": spec.Provider.Name,
		"metadata.annotations.description":    csv.Metadata.Annotations["description"],
		"metadata.annotations.containerImage": csv.Metadata.Annotations["containerImage"],
		"metadata.annotations.repository":     csv.Metadata.Annotations["repository"],
	}
	for _, field := range sortedKeys(required) {
		if strings.TrimSpace(required[field]) == "" {
			fail("CSV: %s is missing", field)
		}
	}
	if len(spec.Keywords) == 0 {
		fail("CSV: spec.keywords is empty")
	}
	if len(spec.Maintainers) == 0 {
		fail("CSV: spec.maintainers is empty")
	}
	for _, l := range append(append([]AppLink{}, spec.Links...), spec.Provider) {
		if l.URL == "" {
			continue
		}
		if u, err := url.Parse(l.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			fail("CSV: link %q has an invalid URL %q", l.Name, l.URL)
		}
	}
	if len(spec.Links) == 0 {
		fail("CSV: spec.links is empty")
	}
	if repo := csv.Metadata.Annotations["repository"]; repo != "" {
		if u, err := url.Parse(repo); err != nil || u.Scheme != "https" {
			fail("CSV: repository annotation %q is not an https URL", repo)
		}
	}
	if spec.MinKubeVersion == "" || !SemVer.MatchString(spec.MinKubeVersion) {
		fail("CSV: spec.minKubeVersion %q is not a semantic version", spec.MinKubeVersion)
	}
	if c := csv.Metadata.Annotations["capabilities"]; !CapabilityLevels[c] {
		fail("CSV: capabilities %q is not a capability level", c)
	}
	for _, c := range strings.Split(csv.Metadata.Annotations["categories"], ",") {
		if !KnownCategories[strings.TrimSpace(c)] {
			fail("CSV: category %q is not an OperatorHub category", c)
		}
	}
	problems = append(problems, checkIcons(spec.Icon)...)

	// Install modes.
	modes := map[InstallModeType]int{}
	supported := 0
	for _, m := range spec.InstallModes {
		modes[m.Type]++
		if m.Supported {
			supported++
		}
	}
	for _, t := range []InstallModeType{InstallModeOwnNamespace, InstallModeSingleNamespace, InstallModeMultiNamespace, InstallModeAllNamespaces} {
		if modes[t] != 1 {
			fail("CSV: installModes lists %s %d times, want once", t, modes[t])
		}
	}
	if len(modes) != 4 {
		fail("CSV: installModes has unknown types: %v", spec.InstallModes)
	}
	if supported == 0 {
		fail("CSV: installModes supports no mode")
	}
	for _, m := range spec.InstallModes {
		if m.Type == InstallModeAllNamespaces && !m.Supported {
			fail("CSV: the AllNamespaces install mode must be supported (the operator watches every namespace)")
		}
	}

	problems = append(problems, checkInstall(p)...)
	problems = append(problems, checkOwnedCRDs(p)...)
	problems = append(problems, checkExamples(p)...)
	problems = append(problems, checkWebhooks(p)...)
	problems = append(problems, checkScorecard(b.Scorecard)...)
	return problems
}

func checkDockerfile(dockerfile []byte, annotations map[string]string) []string {
	var problems []string
	labels := map[string]string{}
	copies := map[string]string{}
	from := ""
	for _, line := range strings.Split(string(dockerfile), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			if len(fields) > 1 {
				from = fields[1]
			}
		case "LABEL":
			for _, kv := range fields[1:] {
				k, v, _ := strings.Cut(kv, "=")
				labels[k] = strings.Trim(v, `"`)
			}
		case "COPY":
			if len(fields) == 3 {
				copies[strings.TrimSuffix(fields[2], "/")+"/"] = fields[1]
			}
		}
	}
	if from != "scratch" {
		problems = append(problems, fmt.Sprintf("bundle.Dockerfile: the bundle image must be FROM scratch, is FROM %q", from))
	}
	for _, k := range sortedKeys(annotations) {
		if labels[k] != annotations[k] {
			problems = append(problems, fmt.Sprintf("bundle.Dockerfile: label %s is %q, annotations.yaml says %q", k, labels[k], annotations[k]))
		}
	}
	for _, k := range sortedKeys(labels) {
		if _, ok := annotations[k]; !ok && strings.HasPrefix(k, "operators.operatorframework.io.") {
			problems = append(problems, fmt.Sprintf("bundle.Dockerfile: label %s is not in annotations.yaml", k))
		}
	}
	for dir, src := range map[string]string{
		"/" + annotations[AnnotationManifests]:  ManifestsDir,
		"/" + annotations[AnnotationMetadata]:   MetadataDir,
		"/" + annotations[AnnotationTestConfig]: ScorecardDir,
	} {
		if strings.TrimSuffix(copies[dir], "/") != src {
			problems = append(problems, fmt.Sprintf("bundle.Dockerfile: does not COPY %s to %s", src, dir))
		}
	}
	return problems
}

func checkIcons(icons []Icon) []string {
	var problems []string
	if len(icons) == 0 {
		return []string{"CSV: spec.icon is empty"}
	}
	for i, ic := range icons {
		data, err := base64.StdEncoding.DecodeString(ic.Data)
		if err != nil || len(data) == 0 {
			problems = append(problems, fmt.Sprintf("CSV: icon %d is not base64 data: %v", i, err))
			continue
		}
		if !iconMediaTypes[ic.MediaType] {
			problems = append(problems, fmt.Sprintf("CSV: icon %d has media type %q", i, ic.MediaType))
		}
		if ic.MediaType == "image/svg+xml" {
			var root struct{ XMLName xml.Name }
			if err := xml.Unmarshal(data, &root); err != nil || root.XMLName.Local != "svg" {
				problems = append(problems, fmt.Sprintf("CSV: icon %d is not an SVG document: %v", i, err))
			}
		}
	}
	return problems
}

func checkInstall(p Parsed) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	install := p.CSV.Spec.Install
	if install.StrategyName != InstallStrategyDeployment {
		fail("CSV: spec.install.strategy is %q, want %q", install.StrategyName, InstallStrategyDeployment)
	}
	deps := install.StrategySpec.DeploymentSpecs
	if len(deps) == 0 {
		fail("CSV: spec.install.spec.deployments is empty")
	}
	accounts := map[string]bool{}
	seen := map[string]bool{}
	for _, d := range deps {
		if errs := validation.IsDNS1123Subdomain(d.Name); len(errs) > 0 {
			fail("CSV: deployment name %q: %s", d.Name, strings.Join(errs, "; "))
		}
		if seen[d.Name] {
			fail("CSV: deployment %q is listed twice", d.Name)
		}
		seen[d.Name] = true
		spec, ok := p.Deployments[d.Name]
		if !ok {
			continue // Parse reported it
		}
		sel, err := metav1.LabelSelectorAsSelector(spec.Selector)
		if err != nil || spec.Selector == nil || sel.Empty() {
			fail("CSV: deployment %q has no usable selector: %v", d.Name, err)
		} else if !sel.Matches(labels.Set(spec.Template.Labels)) {
			fail("CSV: deployment %q's selector does not select its pod template", d.Name)
		}
		if len(spec.Template.Spec.Containers) == 0 {
			fail("CSV: deployment %q has no containers", d.Name)
		}
		sa := spec.Template.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		accounts[sa] = true
		image := p.CSV.Metadata.Annotations["containerImage"]
		found := false
		for _, c := range spec.Template.Spec.Containers {
			found = found || c.Image == image
		}
		if !found {
			fail("CSV: containerImage %q is not the image of a container of deployment %q", image, d.Name)
		}
	}
	for kind, perms := range map[string][]StrategyDeploymentPermissions{
		"permissions":        install.StrategySpec.Permissions,
		"clusterPermissions": install.StrategySpec.ClusterPermissions,
	} {
		for _, perm := range perms {
			if !accounts[perm.ServiceAccountName] {
				fail("CSV: %s grants rules to service account %q, which no deployment runs as", kind, perm.ServiceAccountName)
			}
			if len(perm.Rules) == 0 {
				fail("CSV: %s for %q has no rules", kind, perm.ServiceAccountName)
			}
			for i, r := range perm.Rules {
				if len(r.Verbs) == 0 {
					fail("CSV: %s for %q: rule %d has no verbs", kind, perm.ServiceAccountName, i)
				}
				if len(r.Resources) == 0 && len(r.NonResourceURLs) == 0 {
					fail("CSV: %s for %q: rule %d names no resources", kind, perm.ServiceAccountName, i)
				}
			}
		}
	}
	return problems
}

func checkOwnedCRDs(p Parsed) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	byName := map[string]apiextensionsv1.CustomResourceDefinition{}
	for _, crd := range p.CRDs {
		byName[crd.Name] = crd
	}
	owned := p.CSV.Spec.CustomResourceDefinitions.Owned
	if len(owned) == 0 {
		fail("CSV: owns no CRD")
	}
	described := map[string]bool{}
	for _, d := range owned {
		described[d.Name] = true
		crd, ok := byName[d.Name]
		if !ok {
			fail("CSV: owned CRD %s is not in manifests/", d.Name)
			continue
		}
		if d.Kind != crd.Spec.Names.Kind {
			fail("CSV: owned CRD %s has kind %q, the CRD says %q", d.Name, d.Kind, crd.Spec.Names.Kind)
		}
		var version *apiextensionsv1.CustomResourceDefinitionVersion
		for i := range crd.Spec.Versions {
			if crd.Spec.Versions[i].Name == d.Version && crd.Spec.Versions[i].Served {
				version = &crd.Spec.Versions[i]
			}
		}
		if version == nil {
			fail("CSV: owned CRD %s version %q is not a served version of the CRD", d.Name, d.Version)
			continue
		}
		if d.DisplayName == "" || d.Description == "" {
			fail("CSV: owned CRD %s needs a displayName and a description", d.Name)
		}
		if len(d.Resources) == 0 {
			fail("CSV: owned CRD %s lists no resources", d.Name)
		}
		var schema *apiextensionsv1.JSONSchemaProps
		if version.Schema != nil {
			schema = version.Schema.OpenAPIV3Schema
		}
		for root, descs := range map[string][]Descriptor{"spec": d.SpecDescriptors, "status": d.StatusDescriptors} {
			if len(descs) == 0 {
				fail("CSV: owned CRD %s has no %s descriptors", d.Name, root)
			}
			for _, desc := range descs {
				if SchemaField(schema, root+"."+desc.Path) == nil {
					fail("CSV: owned CRD %s: %s descriptor %q names no field of the schema", d.Name, root, desc.Path)
				}
				if desc.DisplayName == "" || desc.Description == "" {
					fail("CSV: owned CRD %s: %s descriptor %q needs a displayName and a description", d.Name, root, desc.Path)
				}
			}
		}
	}
	for file, crd := range p.CRDs {
		if !described[crd.Name] {
			fail("manifests/%s: CRD %s is neither owned nor required by the CSV", file, crd.Name)
		}
	}
	return problems
}

// checkExamples: alm-examples is a JSON array of custom resources of owned
// CRDs whose spec fields exist in the schema.
func checkExamples(p Parsed) []string {
	raw, ok := p.CSV.Metadata.Annotations["alm-examples"]
	if !ok {
		return []string{"CSV: no alm-examples annotation"}
	}
	var examples []map[string]any
	if err := json.Unmarshal([]byte(raw), &examples); err != nil {
		return []string{fmt.Sprintf("CSV: alm-examples is not a JSON array of objects: %v", err)}
	}
	if len(examples) == 0 {
		return []string{"CSV: alm-examples is empty"}
	}
	var problems []string
	for i, ex := range examples {
		apiVersion, _ := ex["apiVersion"].(string)
		kind, _ := ex["kind"].(string)
		var schema *apiextensionsv1.JSONSchemaProps
		for _, d := range p.CSV.Spec.CustomResourceDefinitions.Owned {
			for _, crd := range p.CRDs {
				if crd.Name != d.Name || d.Kind != kind || crd.Spec.Group+"/"+d.Version != apiVersion {
					continue
				}
				for _, v := range crd.Spec.Versions {
					if v.Name == d.Version && v.Schema != nil {
						schema = v.Schema.OpenAPIV3Schema
					}
				}
			}
		}
		if schema == nil {
			problems = append(problems, fmt.Sprintf("CSV: alm-examples[%d] is a %s %s, not a custom resource of an owned CRD", i, apiVersion, kind))
			continue
		}
		spec, _ := ex["spec"].(map[string]any)
		for _, field := range sortedKeys(spec) {
			if SchemaField(schema, "spec."+field) == nil {
				problems = append(problems, fmt.Sprintf("CSV: alm-examples[%d]: spec.%s is not in the CRD schema", i, field))
			}
		}
	}
	return problems
}

// checkWebhooks: OLM's webhook rules. The type is one OLM knows, the
// Deployment exists and has the target port, the admission review version
// and side effects are what admissionregistration.k8s.io/v1 accepts, and the
// rules intercept nothing OLM refuses (all groups, OLM's own group, webhook
// configurations).
func checkWebhooks(p Parsed) []string {
	var problems []string
	fail := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, w := range p.CSV.Spec.WebhookDefinitions {
		name := w.GenerateName
		if name == "" {
			fail("CSV: a webhook definition has no generateName")
		}
		if w.Type != ValidatingAdmissionWebhook && w.Type != MutatingAdmissionWebhook {
			fail("CSV: webhook %s: type %q is not ValidatingAdmissionWebhook or MutatingAdmissionWebhook", name, w.Type)
		}
		spec, ok := p.Deployments[w.DeploymentName]
		if !ok {
			fail("CSV: webhook %s: deploymentName %q is not a deployment of the CSV", name, w.DeploymentName)
		}
		if w.ContainerPort < 1 || w.ContainerPort > 65535 {
			fail("CSV: webhook %s: containerPort %d out of range", name, w.ContainerPort)
		}
		if ok && w.TargetPort != nil {
			found := false
			for _, c := range spec.Template.Spec.Containers {
				for _, port := range c.Ports {
					found = found || (w.TargetPort.StrVal != "" && port.Name == w.TargetPort.StrVal) ||
						(w.TargetPort.StrVal == "" && port.ContainerPort == w.TargetPort.IntVal)
				}
			}
			if !found {
				fail("CSV: webhook %s: targetPort %s is not a container port of deployment %s", name, w.TargetPort.String(), w.DeploymentName)
			}
		}
		if !contains(w.AdmissionReviewVersions, "v1") {
			fail("CSV: webhook %s: admissionReviewVersions %v lacks v1", name, w.AdmissionReviewVersions)
		}
		if w.SideEffects == nil || (*w.SideEffects != admissionregistrationv1.SideEffectClassNone && *w.SideEffects != admissionregistrationv1.SideEffectClassNoneOnDryRun) {
			fail("CSV: webhook %s: sideEffects must be None or NoneOnDryRun", name)
		}
		if w.WebhookPath == nil || !strings.HasPrefix(*w.WebhookPath, "/") {
			fail("CSV: webhook %s: webhookPath must be an absolute path", name)
		}
		if len(w.Rules) == 0 {
			fail("CSV: webhook %s has no rules", name)
		}
		for _, r := range w.Rules {
			for _, g := range r.APIGroups {
				if g == "*" || g == "operators.coreos.com" {
					fail("CSV: webhook %s intercepts API group %q, which OLM refuses", name, g)
				}
			}
			for _, res := range r.Resources {
				base, _, _ := strings.Cut(res, "/")
				if base == "*" || base == "validatingwebhookconfigurations" || base == "mutatingwebhookconfigurations" {
					fail("CSV: webhook %s intercepts %q, which OLM refuses", name, res)
				}
			}
		}
	}
	return problems
}

// checkScorecard: a v1alpha3 Configuration whose tests name no image
// registry (example.invalid is the documented placeholder).
func checkScorecard(data []byte) []string {
	var sc ScorecardConfig
	if err := decodeYAMLStrict(data, &sc); err != nil {
		return []string{fmt.Sprintf("tests/scorecard/config.yaml: %v", err)}
	}
	var problems []string
	if sc.APIVersion != "scorecard.operatorframework.io/v1alpha3" || sc.Kind != "Configuration" {
		problems = append(problems, fmt.Sprintf("tests/scorecard/config.yaml: %s %s, want scorecard.operatorframework.io/v1alpha3 Configuration", sc.APIVersion, sc.Kind))
	}
	tests := map[string]bool{}
	for _, st := range sc.Stages {
		for _, t := range st.Tests {
			if len(t.Entrypoint) > 0 {
				tests[t.Entrypoint[len(t.Entrypoint)-1]] = true
			}
			if host := ImageRegistry(t.Image); host != "" && host != "example.invalid" {
				problems = append(problems, fmt.Sprintf("tests/scorecard/config.yaml: image %q names registry %q; use the example.invalid placeholder", t.Image, host))
			}
		}
	}
	for _, t := range ScorecardTests {
		if !tests[t.Name] {
			problems = append(problems, fmt.Sprintf("tests/scorecard/config.yaml: no %s test", t.Name))
		}
	}
	return problems
}

// ImageRegistry is the registry host an image reference names, or "".
func ImageRegistry(image string) string {
	first, _, ok := strings.Cut(image, "/")
	if !ok {
		return ""
	}
	if strings.ContainsAny(first, ".:") || first == "localhost" {
		return first
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
