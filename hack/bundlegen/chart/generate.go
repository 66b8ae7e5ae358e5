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

// Package chart generates tdb-operator's Helm chart (dist/chart) from the
// kustomize renderings of config/default, the config/certmanager overlay and
// config/prometheus, so that the chart, the kustomize install and the OLM
// bundle never drift: every object, field and name comes from config/, and
// only the parts the chart's values choose are turned into templates.
package chart

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/tdb-operator/tdb-operator/hack/bundlegen/bundle"
)

// Names and constants of config/ the chart depends on. The generator fails
// when config/ no longer matches them rather than emit a wrong chart.
const (
	// ChartName is the chart's name and app.kubernetes.io/name's default.
	ChartName = "tdb-operator"
	// namePrefix is config/default's namePrefix: a config name "tdb-x"
	// becomes "<fullname>-x" in the chart.
	namePrefix = "tdb-"
	// managerContainer is the Deployment's container that runs the manager.
	managerContainer = "manager"
	certRotationArg  = "--cert-rotation="
	injectCAFrom     = "cert-manager.io/inject-ca-from"
	// installedPolicyAnnotation records on the webhook configuration the
	// failurePolicy the install set (config/webhook).
	installedPolicyAnnotation = "policy.tdb.dev/installed-failure-policy"
	// enforceLabel marks the namespaces the webhook reaches with
	// webhook.scope=labelled.
	enforceLabel = "policy.tdb.dev/enforce"
)

// fixedNames are names that look like prefixed object names but are fixed
// in the operator's code, whatever the release is called: the leader
// election Lease (cmd/main.go's leaderElectionID) lives in the release's
// namespace, so two releases never share it.
var fixedNames = map[string]bool{"tdb-operator.policy.tdb.dev": true}

// commonLabels are the labels kustomize's `labels:` puts on every object
// (config/default/kustomization.yaml); in the chart, the standard Helm
// labels of "tdb.labels" replace them.
var commonLabels = []string{
	"app.kubernetes.io/name", "app.kubernetes.io/part-of", "app.kubernetes.io/managed-by",
	"app.kubernetes.io/instance", "app.kubernetes.io/version", "helm.sh/chart",
}

// Input is what the chart is generated from.
type Input struct {
	// Version is the chart's version (x.y.z, bundle/VERSION); the appVersion
	// and the image's default tag are v<Version>.
	Version string
	// ImageRepository is the manager image's default repository.
	ImageRepository string
	// Default is `kustomize build config/default`.
	Default []byte
	// CertManager is `kustomize build config/certmanager`.
	CertManager []byte
	// Prometheus is `kustomize build config/prometheus`; empty when there is
	// none.
	Prometheus []byte
	// CRDs are the CRD files (config/crd/bases), copied into crds/ as they are.
	CRDs []bundle.SourceFile
}

// File is one generated file, its path relative to the chart's directory.
type File struct {
	Path string
	Data []byte
}

// generator holds what every object's template needs.
type generator struct {
	namespace string
	// names are the prefixed object names of config/, longest first.
	names []string
	// podSelector is the manager Deployment's selector (config's).
	podSelector map[string]any
	// certVolume is config/certmanager's version of the Deployment's
	// certificate volume, and certVolumeName its name.
	certVolume     map[string]any
	certVolumeName string
	// injectCA is config/certmanager's inject-ca-from annotation value.
	injectCA string
	// defaults are the values.yaml defaults taken from config/.
	defaults valuesDefaults
}

// Generate returns the chart's files.
func Generate(in Input) ([]File, error) {
	if in.Version == "" || strings.HasPrefix(in.Version, "v") {
		return nil, fmt.Errorf("version %q: want x.y.z", in.Version)
	}
	if in.ImageRepository == "" {
		return nil, fmt.Errorf("no image repository")
	}
	def, err := bundle.ParseObjects(in.Default)
	if err != nil {
		return nil, fmt.Errorf("config/default: %w", err)
	}
	cm, err := bundle.ParseObjects(in.CertManager)
	if err != nil {
		return nil, fmt.Errorf("config/certmanager: %w", err)
	}
	prom, err := bundle.ParseObjects(in.Prometheus)
	if err != nil {
		return nil, fmt.Errorf("config/prometheus: %w", err)
	}
	g := &generator{}
	if err := g.learn(def, cm, prom); err != nil {
		return nil, err
	}

	var files []File
	seen := map[string]bool{}
	add := func(o bundle.Object, cond string) error {
		if seen[o.Kind+"/"+o.Name] {
			return nil
		}
		seen[o.Kind+"/"+o.Name] = true
		text, err := g.template(o)
		if err != nil {
			return fmt.Errorf("%s: %w", o.ID(), err)
		}
		if cond != "" {
			text = "{{- if " + cond + " }}\n" + text + "{{- end }}\n"
		}
		if o.Kind == "Deployment" {
			text = "{{- include \"tdb.validate\" . }}\n" + text
		}
		files = append(files, File{Path: path.Join("templates", g.fileName(o)), Data: []byte(text)})
		return nil
	}
	inCM := idsOf(cm)
	for _, o := range def {
		switch {
		case o.Kind == "Namespace", o.Kind == "CustomResourceDefinition":
			continue // Helm's release namespace; crds/
		case !inCM[o.Kind+"/"+o.Name]:
			// Dropped by the cert-manager overlay: the chart's own certificate
			// Secret, which the operator fills.
			err = add(o, `eq .Values.certs.mode "self-signed"`)
		case o.Kind == "NetworkPolicy":
			err = add(o, ".Values.networkPolicy.enabled")
		default:
			err = add(o, "")
		}
		if err != nil {
			return nil, err
		}
	}
	inDefault := idsOf(def)
	for _, o := range cm {
		if !inDefault[o.Kind+"/"+o.Name] {
			if err := add(o, `eq .Values.certs.mode "cert-manager"`); err != nil {
				return nil, err
			}
		}
	}
	for _, o := range prom {
		cond := ".Values.prometheus.serviceMonitor.enabled"
		if o.Kind == "PrometheusRule" {
			cond = ".Values.prometheus.rules.enabled"
		}
		if err := add(o, cond); err != nil {
			return nil, err
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })

	for _, crd := range in.CRDs {
		files = append(files, File{Path: path.Join("crds", crd.Name), Data: crd.Data})
	}
	values, err := g.defaults.render(in.ImageRepository)
	if err != nil {
		return nil, err
	}
	files = append(files,
		File{Path: "Chart.yaml", Data: []byte(chartYAML(in.Version))},
		File{Path: "values.yaml", Data: values},
		File{Path: ".helmignore", Data: []byte(helmignore)},
		File{Path: "templates/_helpers.tpl", Data: []byte(helpers(g.partOf(def)))},
		File{Path: "templates/NOTES.txt", Data: []byte(notes)},
	)
	return files, nil
}

func idsOf(objs []bundle.Object) map[string]bool {
	ids := map[string]bool{}
	for _, o := range objs {
		ids[o.Kind+"/"+o.Name] = true
	}
	return ids
}

// partOf is config's app.kubernetes.io/part-of, kept by the chart's labels.
func (g *generator) partOf(objs []bundle.Object) string {
	for _, o := range objs {
		if v, ok := labelsOf(o.Fields)["app.kubernetes.io/part-of"].(string); ok {
			return v
		}
	}
	return ChartName
}

// fileName is templates/<kind>-<name without the prefix>.yaml.
func (g *generator) fileName(o bundle.Object) string {
	return strings.ToLower(o.Kind) + "-" + strings.TrimPrefix(o.Name, namePrefix) + ".yaml"
}

// learn reads what the templates need from config/ and checks that the
// cert-manager overlay changes only what the chart's certs.mode knows.
func (g *generator) learn(def, cm, prom []bundle.Object) error {
	names := map[string]bool{}
	for _, objs := range [][]bundle.Object{def, cm, prom} {
		for _, o := range objs {
			switch {
			case o.Kind == "Namespace":
				if g.namespace != "" && g.namespace != o.Name {
					return fmt.Errorf("two namespaces, %s and %s", g.namespace, o.Name)
				}
				g.namespace = o.Name
			case o.Kind == "CustomResourceDefinition":
			case !strings.HasPrefix(o.Name, namePrefix):
				return fmt.Errorf("%s: the name lacks config/default's prefix %q, so the chart cannot follow fullnameOverride", o.ID(), namePrefix)
			default:
				names[o.Name] = true
			}
		}
	}
	if g.namespace == "" {
		return fmt.Errorf("config/default has no Namespace")
	}
	for n := range names {
		g.names = append(g.names, n)
	}
	sort.Slice(g.names, func(i, j int) bool {
		if len(g.names[i]) != len(g.names[j]) {
			return len(g.names[i]) > len(g.names[j])
		}
		return g.names[i] < g.names[j]
	})
	for _, o := range append(append([]bundle.Object{}, cm...), prom...) {
		if o.Namespace != "" && o.Namespace != g.namespace {
			return fmt.Errorf("%s is not in config/default's namespace %s", o.ID(), g.namespace)
		}
	}

	dep, err := only(def, "Deployment")
	if err != nil {
		return err
	}
	if g.podSelector, err = nestedMap(dep.Fields, "spec", "selector", "matchLabels"); err != nil {
		return fmt.Errorf("%s: %w", dep.ID(), err)
	}
	if err := g.defaults.learn(def); err != nil {
		return err
	}
	return g.learnCertManager(def, cm)
}

// learnCertManager takes the overlay's certificate volume and CA injection,
// and fails if the overlay changes anything else of config/default's
// objects (the chart would not carry it).
func (g *generator) learnCertManager(def, cm []bundle.Object) error {
	byID := map[string]bundle.Object{}
	for _, o := range def {
		byID[o.Kind+"/"+o.Name] = o
	}
	for _, o := range cm {
		d, ok := byID[o.Kind+"/"+o.Name]
		if !ok {
			continue
		}
		got, want := clone(o.Fields), clone(d.Fields)
		switch o.Kind {
		case "Deployment":
			c, err := managerOf(got)
			if err != nil {
				return err
			}
			if !replaceArg(c, certRotationArg, certRotationArg+"true") {
				return fmt.Errorf("config/certmanager: the manager has no %s flag", certRotationArg)
			}
			vols, _ := nestedSlice(got, "spec", "template", "spec", "volumes")
			wantVols, _ := nestedSlice(want, "spec", "template", "spec", "volumes")
			if len(vols) != len(wantVols) {
				return fmt.Errorf("config/certmanager adds or removes volumes")
			}
			for i := range vols {
				if !reflect.DeepEqual(vols[i], wantVols[i]) {
					if g.certVolume != nil {
						return fmt.Errorf("config/certmanager changes two volumes")
					}
					g.certVolume, _ = vols[i].(map[string]any)
					g.certVolumeName, _ = g.certVolume["name"].(string)
					vols[i] = wantVols[i]
				}
			}
			if g.certVolume == nil {
				return fmt.Errorf("config/certmanager does not change the certificate volume")
			}
		case "ValidatingWebhookConfiguration":
			ann, _ := nestedMap(got, "metadata", "annotations")
			g.injectCA, _ = ann[injectCAFrom].(string)
			if g.injectCA == "" {
				return fmt.Errorf("config/certmanager: the webhook configuration has no %s annotation", injectCAFrom)
			}
			delete(ann, injectCAFrom)
			if len(ann) == 0 {
				delete(got["metadata"].(map[string]any), "annotations")
			}
		}
		for _, f := range []map[string]any{got, want} {
			for _, k := range commonLabels {
				delete(labelsOf(f), k)
			}
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Errorf("config/certmanager changes %s in a way the chart's certs.mode does not know", o.ID())
		}
	}
	return nil
}

// template renders one object as a Helm template.
func (g *generator) template(o bundle.Object) (string, error) {
	w := newTemplateWriter()
	obj := clone(o.Fields)
	meta, _ := obj["metadata"].(map[string]any)
	meta["name"] = w.inlineValue(g.substitute(o.Name))
	if o.Namespace != "" {
		meta["namespace"] = w.inlineValue("{{ .Release.Namespace }}")
	}
	var err error
	switch o.Kind {
	case "Deployment":
		err = g.deployment(w, obj)
	case "ValidatingWebhookConfiguration":
		err = g.webhookConfiguration(w, obj)
	case "NetworkPolicy":
		// The webhook's: who may call it is a value. Monitoring's stays as
		// config/prometheus writes it.
		if strings.HasSuffix(o.Name, "allow-webhook-traffic") {
			spec, _ := obj["spec"].(map[string]any)
			spec["ingress"] = w.blockValue(toYAMLValue(".Values.networkPolicy.ingress"))
		}
	}
	if err != nil {
		return "", err
	}
	if err := g.walk(w, o.Kind, obj, nil); err != nil {
		return "", err
	}
	text, err := w.render(obj)
	if err != nil {
		return "", err
	}
	return "{{- /* Generated from config/ by hack/bundlegen/cmd/helmgen (make chart): do not edit. */}}\n" + text, nil
}

// deployment templates the manager's image, replicas, resources, flags,
// placement and certificate volume.
func (g *generator) deployment(w *templateWriter, obj map[string]any) error {
	spec, _ := obj["spec"].(map[string]any)
	spec["replicas"] = w.inlineValue("{{ .Values.replicas }}")
	pod, err := nestedMap(obj, "spec", "template", "spec")
	if err != nil {
		return err
	}
	tmeta, err := nestedMap(obj, "spec", "template", "metadata")
	if err != nil {
		return err
	}
	ann, _ := tmeta["annotations"].(map[string]any)
	lit, err := literalYAML(ann, 0)
	if err != nil {
		return err
	}
	tmeta["annotations"] = w.blockValue(func(indent int, key string) string {
		var b strings.Builder
		b.WriteString(keyLine(indent, key))
		if len(ann) > 0 {
			for _, l := range strings.Split(lit, "\n") {
				b.WriteString("\n" + pad(indent+2) + l)
			}
		}
		fmt.Fprintf(&b, "\n%s{{- with .Values.podAnnotations }}\n%s{{- toYaml . | nindent %d }}\n%s{{- end }}",
			pad(indent+2), pad(indent+2), indent+2, pad(indent+2))
		return b.String()
	})
	for _, k := range []string{"nodeSelector", "tolerations", "affinity"} {
		if _, ok := pod[k]; ok {
			return fmt.Errorf("config sets the pod's %s, which the chart's values would replace", k)
		}
		pod[k] = w.blockValue(optionalToYAML(".Values." + k))
	}
	c, err := managerOf(obj)
	if err != nil {
		return err
	}
	c["image"] = w.inlineValue(`"{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}"`)
	c["imagePullPolicy"] = w.inlineValue("{{ .Values.image.pullPolicy }}")
	c["resources"] = w.blockValue(toYAMLValue(".Values.resources"))

	args, _ := c["args"].([]any)
	rotation := false
	for i, a := range args {
		s, _ := a.(string)
		if strings.HasPrefix(s, certRotationArg) {
			args[i] = w.inlineValue(certRotationArg + `{{ eq .Values.certs.mode "self-signed" }}`)
			rotation = true
		}
	}
	if !rotation {
		return fmt.Errorf("the manager has no %s flag", certRotationArg)
	}
	// The scope needs no flag: the operator reads it from its webhook
	// configuration's namespaceSelector (--webhook-config-name).
	// extraArgs come last: of a flag given twice the manager takes the last.
	args = append(args, w.blockValue(func(indent int, _ string) string {
		return fmt.Sprintf("%s{{- with .Values.extraArgs }}\n%s{{- toYaml . | nindent %d }}\n%s{{- end }}",
			pad(indent), pad(indent), indent, pad(indent))
	}))
	c["args"] = args

	vols, _ := pod["volumes"].([]any)
	for i, v := range vols {
		vm, _ := v.(map[string]any)
		if vm["name"] != g.certVolumeName {
			continue
		}
		certManager := g.substituteAll(w, clone(g.certVolume))
		provided := clone(g.certVolume)
		secret, ok := provided["secret"].(map[string]any)
		if !ok {
			return fmt.Errorf("config/certmanager's certificate volume is not a Secret volume")
		}
		secret["secretName"] = w.inlineValue("{{ .Values.certs.secret.name }}")
		vols[i] = w.blockValue(w.switchBlock([]alternative{
			{cond: `eq .Values.certs.mode "self-signed"`, value: g.substituteAll(w, vm)},
			{cond: `eq .Values.certs.mode "cert-manager"`, value: certManager},
			{value: provided},
		}))
		return nil
	}
	return fmt.Errorf("the Deployment has no volume %s", g.certVolumeName)
}

// webhookConfiguration templates the failure policy, the namespace scope
// and the CA's source.
func (g *generator) webhookConfiguration(w *templateWriter, obj map[string]any) error {
	meta, _ := obj["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	for k := range ann {
		if k != installedPolicyAnnotation {
			return fmt.Errorf("config sets annotation %s, which the chart would replace", k)
		}
	}
	if _, ok := ann[installedPolicyAnnotation]; !ok {
		return fmt.Errorf("config does not record the installed failurePolicy (annotation %s)", installedPolicyAnnotation)
	}
	// The annotation records the failurePolicy the chart sets.
	meta["annotations"] = w.blockValue(func(indent int, key string) string {
		return fmt.Sprintf("%s\n%s  %s: {{ .Values.webhook.failurePolicy }}\n%s{{- if eq .Values.certs.mode \"cert-manager\" }}\n%s  %s: %s\n%s{{- end }}",
			keyLine(indent, key), pad(indent), installedPolicyAnnotation,
			pad(indent), pad(indent), injectCAFrom, g.substitute(g.injectCA), pad(indent))
	})
	hooks, _ := obj["webhooks"].([]any)
	if len(hooks) != 1 {
		return fmt.Errorf("want one webhook, have %d", len(hooks))
	}
	hook, _ := hooks[0].(map[string]any)
	hook["failurePolicy"] = w.inlineValue("{{ .Values.webhook.failurePolicy }}")
	cc, _ := hook["clientConfig"].(map[string]any)
	if _, ok := cc["caBundle"]; ok {
		return fmt.Errorf("config sets a caBundle")
	}
	cc["caBundle"] = w.blockValue(func(indent int, key string) string {
		return fmt.Sprintf("%s{{- if eq .Values.certs.mode \"secret\" }}\n%s %s\n%s{{- end }}",
			pad(indent), keyLine(indent, key), "{{ .Values.certs.secret.caBundle }}", pad(indent))
	})
	all, ok := hook["namespaceSelector"].(map[string]any)
	if !ok {
		return fmt.Errorf("the webhook has no namespaceSelector")
	}
	if _, ok := all["matchLabels"]; ok {
		return fmt.Errorf("the webhook's namespaceSelector already has matchLabels")
	}
	all = g.substituteAll(w, all)
	labelled := clone(all)
	labelled["matchLabels"] = map[string]any{enforceLabel: "true"}
	hook["namespaceSelector"] = w.blockValue(w.switchBlock([]alternative{
		{cond: `eq .Values.webhook.scope "labelled"`, value: labelled},
		{value: all},
	}))
	return nil
}

// walk replaces config's names in every string with the release's, and
// label maps with the chart's labels.
func (g *generator) walk(w *templateWriter, kind string, v any, at []string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			here := append(append([]string{}, at...), k)
			switch {
			case k == "labels" && len(at) > 0 && at[len(at)-1] == "metadata":
				m, _ := child.(map[string]any)
				include := "tdb.labels"
				if len(at) > 1 { // a pod template's labels: the selector's
					include = "tdb.selectorLabels"
				}
				lit := map[string]any{}
				for lk, lv := range m {
					lit[lk] = lv
				}
				for _, c := range commonLabels {
					delete(lit, c)
				}
				f, err := mapWithInclude(lit, include)
				if err != nil {
					return err
				}
				v[k] = w.blockValue(f)
			case k == "matchLabels" || (kind == "Service" && strings.Join(here, ".") == "spec.selector"):
				m, _ := child.(map[string]any)
				if !contains(m, g.podSelector) {
					continue
				}
				f, err := mapWithInclude(m, "tdb.selectorLabels")
				if err != nil {
					return err
				}
				v[k] = w.blockValue(f)
			default:
				if s, ok := child.(string); ok {
					if t := g.substitute(s); t != s {
						v[k] = w.inlineValue(t)
					}
					continue
				}
				if err := g.walk(w, kind, child, here); err != nil {
					return err
				}
			}
		}
	case []any:
		for i, child := range v {
			if s, ok := child.(string); ok {
				if t := g.substitute(s); t != s {
					v[i] = w.inlineValue(t)
				}
				continue
			}
			if err := g.walk(w, kind, child, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// substituteAll is walk for a value that goes into a switch block.
func (g *generator) substituteAll(w *templateWriter, m map[string]any) map[string]any {
	var sub func(v any) any
	sub = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				v[k] = sub(c)
			}
		case []any:
			for i, c := range v {
				v[i] = sub(c)
			}
		case string:
			if t := g.substitute(v); t != v {
				return w.inlineValue(t)
			}
		}
		return v
	}
	return sub(m).(map[string]any)
}

// piece is part of a string value in a template: literal text, or a
// template action.
type piece struct {
	text   string
	action bool
}

// substitute returns the template text of a string value of config: its
// namespace and prefixed object names replaced with the release namespace
// and "<fullname>-<name>" where they stand as whole names (bounded by
// anything but a letter, digit or dash: a DNS name's dots, a flag's "=", a
// "namespace/name" reference), and template delimiters in it (a
// PrometheusRule's {{ $labels.x }}) escaped so that Helm prints them as they
// are. A value YAML would quote stays a double-quoted YAML string.
func (g *generator) substitute(s string) string {
	var pieces []piece
	literal := func(t string) {
		if n := len(pieces); n > 0 && !pieces[n-1].action {
			pieces[n-1].text += t
			return
		}
		pieces = append(pieces, piece{text: t})
	}
	for i := 0; i < len(s); {
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "{{"), strings.HasPrefix(rest, "}}"):
			pieces = append(pieces, piece{text: "{{ " + strconvQuote(rest[:2]) + " }}", action: true})
			i += 2
			continue
		case i == 0 || !isNameByte(s[i-1]):
			if fixedNames[rest] {
				literal(rest)
				i = len(s)
				continue
			}
			if t, n := g.replacement(rest); n > 0 {
				pieces = append(pieces, piece{text: t, action: true})
				i += n
				continue
			}
		}
		literal(s[i : i+1])
		i++
	}
	if !slices.ContainsFunc(pieces, func(p piece) bool { return p.action }) {
		return s
	}
	quoted := needsQuotes(s)
	var b strings.Builder
	for _, p := range pieces {
		switch {
		case p.action || !quoted:
			b.WriteString(p.text)
		default:
			q := strconvQuote(p.text)
			b.WriteString(q[1 : len(q)-1])
		}
	}
	if quoted {
		return `"` + b.String() + `"`
	}
	return b.String()
}

// needsQuotes tells whether YAML would quote s (or write it as a block).
func needsQuotes(s string) bool {
	data, err := yaml.Marshal(s)
	if err != nil {
		return true
	}
	text := strings.TrimSuffix(string(data), "\n")
	return text != s
}

// strconvQuote is s as a double-quoted string, which both Go templates and
// YAML read back as s.
func strconvQuote(s string) string { return strconv.Quote(s) }

func (g *generator) replacement(s string) (string, int) {
	whole := func(name string) bool {
		return strings.HasPrefix(s, name) && (len(s) == len(name) || !isNameByte(s[len(name)]))
	}
	if whole(g.namespace) {
		return "{{ .Release.Namespace }}", len(g.namespace)
	}
	for _, n := range g.names {
		if whole(n) {
			return `{{ include "tdb.fullname" . }}-` + strings.TrimPrefix(n, namePrefix), len(n)
		}
	}
	return "", 0
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
}

func contains(m, sub map[string]any) bool {
	if len(sub) == 0 {
		return false
	}
	for k, v := range sub {
		if m[k] != v {
			return false
		}
	}
	return true
}

func only(objs []bundle.Object, kind string) (bundle.Object, error) {
	var found []bundle.Object
	for _, o := range objs {
		if o.Kind == kind {
			found = append(found, o)
		}
	}
	if len(found) != 1 {
		return bundle.Object{}, fmt.Errorf("config/default has %d %s objects, want 1", len(found), kind)
	}
	return found[0], nil
}

func labelsOf(obj map[string]any) map[string]any {
	m, _ := nestedMap(obj, "metadata", "labels")
	return m
}

func nestedMap(obj map[string]any, keys ...string) (map[string]any, error) {
	cur := obj
	for _, k := range keys {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("no map at %s", strings.Join(keys, "."))
		}
		cur = next
	}
	return cur, nil
}

func nestedSlice(obj map[string]any, keys ...string) ([]any, error) {
	m, err := nestedMap(obj, keys[:len(keys)-1]...)
	if err != nil {
		return nil, err
	}
	s, ok := m[keys[len(keys)-1]].([]any)
	if !ok {
		return nil, fmt.Errorf("no list at %s", strings.Join(keys, "."))
	}
	return s, nil
}

// managerOf is the Deployment's manager container.
func managerOf(dep map[string]any) (map[string]any, error) {
	cs, err := nestedSlice(dep, "spec", "template", "spec", "containers")
	if err != nil {
		return nil, err
	}
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok && m["name"] == managerContainer {
			return m, nil
		}
	}
	return nil, fmt.Errorf("the Deployment has no container %s", managerContainer)
}

// replaceArg replaces the container's argument starting with prefix.
func replaceArg(c map[string]any, prefix, with string) bool {
	args, _ := c["args"].([]any)
	for i, a := range args {
		if s, ok := a.(string); ok && strings.HasPrefix(s, prefix) {
			args[i] = with
			return true
		}
	}
	return false
}

// clone deep-copies JSON-like data.
func clone(m map[string]any) map[string]any {
	data, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprintf("cloning decoded JSON: %v", err)) // cannot happen: m came from JSON
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		panic(fmt.Sprintf("cloning decoded JSON: %v", err))
	}
	return out
}
