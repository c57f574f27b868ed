{{/*
A component's plain settings (its ConfigMap), as YAML: the shared env, the admin port, the
release's Redis key prefix, the startup probe's budget (STARTUP_WAIT_MS), the public URL, its listen port, the addresses of the components it calls, the OpenTelemetry
exporter, the internet ports its NetworkPolicy opens (WEBHOOK_ALLOWED_PORTS), then the
component's own env (which wins).
Argument: (dict "root" $ "name" "gateway" "component" <merged component values>).
*/}}
{{- define "switchboard.settings" -}}
{{- $root := .root -}}
{{- $component := .component -}}
{{- $settings := dict -}}
{{- range $key, $value := $root.Values.env -}}
{{- $_ := set $settings $key $value -}}
{{- end -}}
{{- $_ := set $settings "ADMIN_PORT" (printf "%d" (int $root.Values.adminPort)) -}}
{{- if and (has "REDIS_URL" $component.secretEnv) (not (hasKey $settings "REDIS_KEY_PREFIX")) -}}
{{- /* Per release: two releases on one Redis keep apart rate-limit buckets and caches. */ -}}
{{- $_ := set $settings "REDIS_KEY_PREFIX" (printf "%s:" (include "switchboard.fullname" $root)) -}}
{{- end -}}
{{- $startup := $component.probes.startup -}}
{{- if $startup.enabled -}}
{{- /* An unreachable PostgreSQL at start is retried for as long as the startup probe waits. */ -}}
{{- $_ := set $settings "STARTUP_WAIT_MS" (printf "%d" (mul $startup.periodSeconds $startup.failureThreshold 1000)) -}}
{{- end -}}
{{- $publicUrl := include "switchboard.publicUrl" $root -}}
{{- if $publicUrl -}}
{{- $_ := set $settings "PUBLIC_URL" $publicUrl -}}
{{- end -}}
{{- if and $component.portEnv (ne $component.protocol "none") -}}
{{- $_ := set $settings $component.portEnv (printf "%d" (int $component.port)) -}}
{{- end -}}
{{- range $callee := $component.calls -}}
{{- $target := include "switchboard.component" (dict "root" $root "name" $callee) | fromYaml -}}
{{- if not $target.enabled -}}
{{- fail (printf "components.%s calls %s, which is disabled (remove it from components.%s.calls)" $.name $callee $.name) -}}
{{- end -}}
{{- if not $target.addressEnv -}}
{{- fail (printf "components.%s.calls names %s, which has no addressEnv" $.name $callee) -}}
{{- end -}}
{{- $address := printf "%s:%d" (include "switchboard.componentName" (dict "root" $root "name" $callee)) (int $target.port) -}}
{{- $_ := set $settings $target.addressEnv $address -}}
{{- end -}}
{{- $telemetry := $root.Values.telemetry -}}
{{- if $telemetry.enabled -}}
{{- $_ := set $settings "OTEL_SERVICE_NAME" .name -}}
{{- if $telemetry.otlpEndpoint -}}
{{- $_ := set $settings "OTEL_EXPORTER_OTLP_ENDPOINT" $telemetry.otlpEndpoint -}}
{{- $_ := set $settings "OTEL_EXPORTER_OTLP_PROTOCOL" $telemetry.otlpProtocol -}}
{{- $_ := set $settings "OTEL_TRACES_EXPORTER" "otlp" -}}
{{- end -}}
{{- $_ := set $settings "OTEL_TRACES_SAMPLER" $telemetry.sampler -}}
{{- $_ := set $settings "OTEL_TRACES_SAMPLER_ARG" (toString $telemetry.samplerArg) -}}
{{- else -}}
{{- $_ := set $settings "OTEL_SDK_DISABLED" "true" -}}
{{- end -}}
{{- if $root.Values.grpcTls.enabled -}}
{{- $_ := set $settings "GRPC_TLS_CERT" "/etc/switchboard/grpc-tls/tls.crt" -}}
{{- $_ := set $settings "GRPC_TLS_KEY" "/etc/switchboard/grpc-tls/tls.key" -}}
{{- $_ := set $settings "GRPC_TLS_CA" "/etc/switchboard/grpc-tls/ca.crt" -}}
{{- end -}}
{{- if and $root.Values.networkPolicy.enabled $component.networkPolicy.internetEgress -}}
{{- /* The webhook API refuses URLs on ports its NetworkPolicy does not open (delivery-ports.ts). */ -}}
{{- $ports := list -}}
{{- range $port := $root.Values.networkPolicy.internetEgress.ports -}}
{{- $ports = append $ports (printf "%d" (int $port)) -}}
{{- end -}}
{{- $_ := set $settings "WEBHOOK_ALLOWED_PORTS" (join "," $ports) -}}
{{- end -}}
{{- $sip := $root.Values.sip -}}
{{- if and $sip.enabled (eq .name "call-control") -}}
{{- $_ := set $settings "SIP_LISTEN" (printf "%s:%d" (ternary "[::]" "0.0.0.0" (eq $sip.ipv6 true)) (int $sip.port)) -}}
{{- with $sip.publicAddress -}}
{{- $_ := set $settings "SIP_PUBLIC_ADDRESS" . -}}
{{- end -}}
{{- if $sip.tls.enabled -}}
{{- $_ := set $settings "SIP_TLS_PORT" (printf "%d" (int $sip.tls.port)) -}}
{{- $_ := set $settings "SIP_TLS_CERT_FILE" "/etc/switchboard/sip-tls/tls.crt" -}}
{{- $_ := set $settings "SIP_TLS_KEY_FILE" "/etc/switchboard/sip-tls/tls.key" -}}
{{- with $sip.tls.trunkCaKey -}}
{{- $_ := set $settings "SIP_TLS_CA_FILE" (printf "/etc/switchboard/sip-tls/%s" .) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- range $key, $value := $component.env -}}
{{- $_ := set $settings $key $value -}}
{{- end -}}
{{- toYaml $settings -}}
{{- end -}}

{{/* OTEL_RESOURCE_ATTRIBUTES: fixed attributes, the pod's (downward API), then telemetry.resourceAttributes. */}}
{{- define "switchboard.resourceAttributes" -}}
{{- $root := .root -}}
{{- $attributes := dict
  "service.namespace" (include "switchboard.fullname" $root)
  "service.version" (include "switchboard.imageTag" $root)
  "k8s.deployment.name" (include "switchboard.componentName" .)
  "k8s.container.name" .name
  "k8s.namespace.name" "$(POD_NAMESPACE)"
  "k8s.pod.name" "$(POD_NAME)"
  "k8s.node.name" "$(NODE_NAME)"
-}}
{{- range $key, $value := $root.Values.telemetry.resourceAttributes -}}
{{- $_ := set $attributes $key $value -}}
{{- end -}}
{{- $pairs := list -}}
{{- range $key, $value := $attributes -}}
{{- $pairs = append $pairs (printf "%s=%s" $key $value) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}
