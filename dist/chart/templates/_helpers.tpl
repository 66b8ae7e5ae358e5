{{- /* Generated from config/ by hack/bundlegen/cmd/helmgen (make chart): do not edit. */}}

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
app.kubernetes.io/part-of: tdb-operator
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
