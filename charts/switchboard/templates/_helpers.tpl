{{/* Names, labels and the merge of components.default into each component. */}}

{{- define "switchboard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "switchboard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The name of a component's objects: (dict "root" $ "name" "gateway"). */}}
{{- define "switchboard.componentName" -}}
{{- printf "%s-%s" (include "switchboard.fullname" .root) .name -}}
{{- end -}}

{{- define "switchboard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels that select the release's pods (all components). */}}
{{- define "switchboard.releaseSelectorLabels" -}}
app.kubernetes.io/name: {{ include "switchboard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Labels that select one component's pods: (dict "root" $ "name" "gateway"). */}}
{{- define "switchboard.selectorLabels" -}}
{{ include "switchboard.releaseSelectorLabels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{/* Every object's labels: (dict "root" $ "name" "gateway"); name may be empty. */}}
{{- define "switchboard.labels" -}}
{{- if .name }}
{{- include "switchboard.selectorLabels" . }}
{{- else }}
{{- include "switchboard.releaseSelectorLabels" .root }}
{{- end }}
app.kubernetes.io/part-of: switchboard
app.kubernetes.io/version: {{ include "switchboard.imageTag" .root | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ include "switchboard.chart" .root }}
{{- end -}}

{{- define "switchboard.imageTag" -}}
{{- default .Chart.AppVersion .Values.image.tag -}}
{{- end -}}

{{- define "switchboard.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (include "switchboard.imageTag" .) -}}
{{- end -}}
{{- end -}}

{{/*
Deep merge of two maps as YAML: keys of .over win, maps merge key by key, everything else
(lists, scalars, false, 0) replaces. sprig's merge/mergeOverwrite skip false and 0, which would
make `enabled: false` on a component lose against `enabled: true` in the default block.
*/}}
{{- define "switchboard.deepMerge" -}}
{{- $out := deepCopy .base -}}
{{- range $key, $value := .over -}}
{{- $current := get $out $key -}}
{{- if and (kindIs "map" $value) (kindIs "map" $current) -}}
{{- $_ := set $out $key (include "switchboard.deepMerge" (dict "base" $current "over" $value) | fromYaml) -}}
{{- else -}}
{{- $_ := set $out $key $value -}}
{{- end -}}
{{- end -}}
{{- toYaml $out -}}
{{- end -}}

{{/* One component's values, components.default merged under it: (dict "root" $ "name" "gateway"). */}}
{{- define "switchboard.component" -}}
{{- $components := .root.Values.components -}}
{{- include "switchboard.deepMerge" (dict "base" $components.default "over" (get $components .name)) -}}
{{- end -}}

{{/* The names of the enabled components, as a YAML list. */}}
{{- define "switchboard.enabledComponents" -}}
{{- $names := list -}}
{{- range $name, $_ := .Values.components -}}
{{- if ne $name "default" -}}
{{- $component := include "switchboard.component" (dict "root" $ "name" $name) | fromYaml -}}
{{- if $component.enabled -}}
{{- $names = append $names $name -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toYaml $names -}}
{{- end -}}

{{/* The gateway's public base URL: publicUrl, else the Ingress host. */}}
{{- define "switchboard.publicUrl" -}}
{{- if .Values.publicUrl -}}
{{- .Values.publicUrl -}}
{{- else if and .Values.ingress.enabled .Values.ingress.host -}}
{{- printf "%s://%s" (ternary "https" "http" .Values.ingress.tls.enabled) .Values.ingress.host -}}
{{- end -}}
{{- end -}}
