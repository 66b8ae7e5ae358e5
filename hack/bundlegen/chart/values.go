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
	"strings"
	"text/template"

	"github.com/tdb-operator/tdb-operator/hack/bundlegen/bundle"
)

// valuesDefaults are the defaults of values.yaml that config/default sets,
// so that the chart's default install is config/default's.
type valuesDefaults struct {
	Replicas      any
	Resources     any
	FailurePolicy string
	Ingress       any
}

func (d *valuesDefaults) learn(def []bundle.Object) error {
	dep, err := only(def, "Deployment")
	if err != nil {
		return err
	}
	d.Replicas = dep.Fields["spec"].(map[string]any)["replicas"]
	if d.Replicas == nil {
		return fmt.Errorf("%s sets no replicas", dep.ID())
	}
	c, err := managerOf(dep.Fields)
	if err != nil {
		return err
	}
	d.Resources = c["resources"]
	vwc, err := only(def, "ValidatingWebhookConfiguration")
	if err != nil {
		return err
	}
	hooks, _ := vwc.Fields["webhooks"].([]any)
	if len(hooks) != 1 {
		return fmt.Errorf("%s: want one webhook", vwc.ID())
	}
	d.FailurePolicy, _ = hooks[0].(map[string]any)["failurePolicy"].(string)
	np, err := only(def, "NetworkPolicy")
	if err != nil {
		return err
	}
	spec, _ := np.Fields["spec"].(map[string]any)
	d.Ingress = spec["ingress"]
	return nil
}

var valuesTemplate = template.Must(template.New("values").Parse(`# Values of the tdb-operator chart. Generated from config/ by
# hack/bundlegen/cmd/helmgen (make chart): the defaults install what
# config/default installs. See docs/install.md.

# Object names are <fullname>-<component> (operator, webhook-service,
# webhook-server-cert, validating-webhook-configuration, manager-role, ...).
# The fullname is fullnameOverride if set, else the release name, followed
# by -<nameOverride> if that is set: install the release as "tdb" to get
# config/default's names. nameOverride also sets app.kubernetes.io/name.
nameOverride: ""
fullnameOverride: ""

image:
  repository: {{ .ImageRepository }}
  # Default: the chart's appVersion.
  tag: ""
  pullPolicy: IfNotPresent

# Manager replicas. Every Ready replica serves the eviction webhook; the
# controllers run on the elected leader.
replicas: {{ .Replicas }}

resources:
{{ .Resources }}

# Flags added to the manager's, after the chart's own (of a flag given twice
# the manager takes the last), e.g. the settings of docs/scale.md:
#   extraArgs: ["--kube-api-qps=200", "--kube-api-burst=400", "--record-timeout=5m"]
# docs/settings.md lists the flags. An unknown flag stops the manager.
extraArgs: []

# Placement of the manager pods (the pods also spread over nodes and zones,
# as config/default's).
nodeSelector: {}
tolerations: []
affinity: {}
podAnnotations: {}

certs:
  # Where the webhook's serving certificate comes from:
  #   self-signed   the operator creates and rotates it in the Secret
  #                 <fullname>-webhook-server-cert and injects its CA into the
  #                 webhook configuration (config/default; nothing else needed)
  #   cert-manager  a cert-manager Issuer and Certificate issue it, the CA
  #                 injector injects it (config/certmanager; cert-manager must
  #                 be installed)
  #   secret        a kubernetes.io/tls Secret you provide (secret.name, in the
  #                 release namespace) and the CA that signed it (secret.caBundle)
  mode: self-signed
  secret:
    name: ""
    # base64 of the PEM CA certificate(s) that sign the Secret's certificate.
    caBundle: ""

webhook:
  # Fail: while no replica answers, evictions the webhook covers are refused
  # (docs/webhook.md). Ignore: they pass unchecked.
  failurePolicy: {{ .FailurePolicy }}
  # Which namespaces' evictions the webhook decides:
  #   all       every namespace but the release's
  #   labelled  only namespaces labelled {{ .EnforceLabel }}=true (never the
  #             release's): a smaller blast radius while the operator is down
  scope: all

networkPolicy:
  # A NetworkPolicy admitting only the webhook port to the manager pods.
  enabled: true
  # Its ingress rules: give the webhook rule a "from" with your API server's
  # addresses (docs/install.md, "Who may call the webhook").
  ingress:
{{ .Ingress }}

prometheus:
  # The ServiceMonitor (prometheus-operator's CRDs must be installed).
  serviceMonitor:
    enabled: false
  # The PrometheusRule with the operator's alerts (docs/runbooks.md).
  rules:
    enabled: false
`))

func (d valuesDefaults) render(repository string) ([]byte, error) {
	resources, err := literalYAML(d.Resources, 2)
	if err != nil {
		return nil, err
	}
	ingress, err := literalYAML(d.Ingress, 2)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = valuesTemplate.Execute(&b, map[string]any{
		"ImageRepository": repository,
		"Replicas":        d.Replicas,
		"Resources":       resources,
		"FailurePolicy":   d.FailurePolicy,
		"Ingress":         ingress,
		"EnforceLabel":    enforceLabel,
	})
	return b.Bytes(), err
}

func chartYAML(version string) string {
	return strings.ReplaceAll(`# Generated from config/ by hack/bundlegen/cmd/helmgen (make chart).
apiVersion: v2
name: `+ChartName+`
description: Disruption budgets per failure domain (TopologyDisruptionBudget) with an eviction webhook.
type: application
version: VERSION
appVersion: "vVERSION"
kubeVersion: ">= `+bundle.MinKubeVersion+`-0"
keywords:
- disruption
- poddisruptionbudget
- topology
- drain
`, "VERSION", version)
}

const helmignore = `# Generated by hack/bundlegen/cmd/helmgen (make chart).
.DS_Store
*.swp
*.bak
*.tmp
*.orig
*~
`

func helpers(partOf string) string {
	return `{{- /* Generated from config/ by hack/bundlegen/cmd/helmgen (make chart): do not edit. */}}

{{/*
The app.kubernetes.io/name label: nameOverride, else the chart's name.
*/}}
{{- define "tdb.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The prefix of every object's name: fullnameOverride, else the release name
(followed by -nameOverride if set). The longest name that must be a DNS label
is <fullname>-webhook-service, hence at most 47 characters.
*/}}
{{- define "tdb.fullname" -}}
{{- $name := .Release.Name }}
{{- if .Values.fullnameOverride }}
{{- $name = .Values.fullnameOverride }}
{{- else if .Values.nameOverride }}
{{- $name = printf "%s-%s" .Release.Name .Values.nameOverride }}
{{- end }}
{{- if gt (len $name) 47 }}
{{- fail (printf "the full name %q is longer than 47 characters (%s-webhook-service must be a DNS label): set fullnameOverride" $name $name) }}
{{- end }}
{{- $name }}
{{- end }}

{{/*
Labels of every object.
*/}}
{{- define "tdb.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "tdb.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: ` + partOf + `
{{- end }}

{{/*
Labels that select the release's manager pods, added to config's selectors.
*/}}
{{- define "tdb.selectorLabels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Refuses values the templates cannot honour.
*/}}
{{- define "tdb.validate" -}}
{{- if not (has .Values.certs.mode (list "self-signed" "cert-manager" "secret")) }}
{{- fail (printf "certs.mode %q: want self-signed, cert-manager or secret" .Values.certs.mode) }}
{{- end }}
{{- if and (eq .Values.certs.mode "secret") (not (and .Values.certs.secret.name .Values.certs.secret.caBundle)) }}
{{- fail "certs.mode secret needs certs.secret.name (a kubernetes.io/tls Secret in the release namespace) and certs.secret.caBundle (base64 of the PEM CA that signed it)" }}
{{- end }}
{{- if not (has .Values.webhook.scope (list "all" "labelled")) }}
{{- fail (printf "webhook.scope %q: want all or labelled" .Values.webhook.scope) }}
{{- end }}
{{- if not (has .Values.webhook.failurePolicy (list "Fail" "Ignore")) }}
{{- fail (printf "webhook.failurePolicy %q: want Fail or Ignore" .Values.webhook.failurePolicy) }}
{{- end }}
{{- if and .Values.extraArgs (not (kindIs "slice" .Values.extraArgs)) }}
{{- fail "extraArgs: want a list of flags, e.g. [\"--kube-api-qps=200\"]" }}
{{- end }}
{{- range .Values.extraArgs }}
{{- if not (and (kindIs "string" .) (hasPrefix "--" .)) }}
{{- fail (printf "extraArgs: %v is not a flag (want --name=value)" .) }}
{{- end }}
{{- end }}
{{- end }}
`
}

const notes = `{{- include "tdb.validate" . -}}
{{- $fullname := include "tdb.fullname" . -}}
tdb-operator {{ .Chart.AppVersion }} is installed in {{ .Release.Namespace }} as {{ $fullname }}.

1. The manager replicas become Ready once they serve the webhook's certificate:

     kubectl -n {{ .Release.Namespace }} rollout status deploy/{{ $fullname }}-operator

2. The webhook is registered and has its CA (a non-empty caBundle):

     kubectl get validatingwebhookconfiguration {{ $fullname }}-validating-webhook-configuration \
       -o jsonpath='{.webhooks[0].clientConfig.caBundle}' | wc -c
{{- if eq .Values.webhook.scope "labelled" }}

   It decides evictions only in namespaces labelled policy.tdb.dev/enforce=true:

     kubectl label namespace <namespace> policy.tdb.dev/enforce=true
{{- end }}

3. The budgets, cluster-wide ("can I drain now?"):

     kubectl get tdb -A

4. A dry-run eviction goes through the webhook and changes nothing: for a node
   with pods covered by a budget,

     kubectl drain <node> --dry-run=server --ignore-daemonsets --delete-emptydir-data

   "failed calling webhook" means the API server cannot reach the webhook
   (the NetworkPolicy's rules, networkPolicy.ingress, or the certificate);
   a refusal naming a budget means it works.

The webhook's failurePolicy is {{ .Values.webhook.failurePolicy }}: uninstall with
"helm uninstall", which removes the webhook configuration with the rest
(docs/install.md).
`
