{{/*
A component's NetworkPolicy: what it may receive and send on top of the release's default deny.
Ingress: its callers' pods on its port (components whose `calls` name it), the ingress controller
on its port when publicIngress is set, the metrics scraper on the admin port. Egress: DNS,
PostgreSQL and Redis when it holds their URLs, the components it calls, the OTLP collector,
the internet on 443 without private ranges when internetEgress is set; call-control's SIP port
in (from sip.allowFrom and the SIP edge's pods) and UDP out when `sip.enabled`.
Argument: (dict "root" $ "name" … "component" …).
*/}}
{{- define "switchboard.networkPolicy" -}}
{{- $root := .root -}}
{{- $c := .component -}}
{{- $policy := $root.Values.networkPolicy -}}
{{- $callers := list -}}
{{- range $name := include "switchboard.enabledComponents" $root | fromYamlArray -}}
{{- $other := include "switchboard.component" (dict "root" $root "name" $name) | fromYaml -}}
{{- if has $.name $other.calls -}}
{{- $callers = append $callers $name -}}
{{- end -}}
{{- end -}}
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: {{ include "switchboard.componentName" . }}
  labels:
    {{- include "switchboard.labels" . | nindent 4 }}
spec:
  podSelector:
    matchLabels:
      {{- include "switchboard.selectorLabels" . | nindent 6 }}
  policyTypes: [Ingress, Egress]
  ingress:
    {{- if and $callers (ne $c.protocol "none") }}
    - from:
        {{- range $caller := $callers }}
        - podSelector:
            matchLabels:
              {{- include "switchboard.selectorLabels" (dict "root" $root "name" $caller) | nindent 14 }}
        {{- end }}
      ports:
        - port: {{ $c.port }}
          protocol: TCP
    {{- end }}
    {{- if and $c.networkPolicy.publicIngress (ne $c.protocol "none") }}
    - from:
        {{- toYaml $policy.ingressControllerFrom | nindent 8 }}
      ports:
        - port: {{ $c.port }}
          protocol: TCP
    {{- end }}
    - from:
        {{- toYaml $policy.metricsFrom | nindent 8 }}
      ports:
        - port: {{ $root.Values.adminPort }}
          protocol: TCP
    {{- if and $root.Values.sip.enabled (eq $.name "call-control") }}
    - ports:
        - port: {{ $root.Values.sip.port }}
          protocol: UDP
        - port: {{ $root.Values.sip.port }}
          protocol: TCP
        {{- if $root.Values.sip.tls.enabled }}
        - port: {{ $root.Values.sip.tls.port }}
          protocol: TCP
        {{- end }}
      {{- with $root.Values.sip.allowFrom }}
      from:
        {{- range $cidr := . }}
        - ipBlock:
            cidr: {{ $cidr }}
        {{- end }}
        {{- if $root.Values.sipEdge.enabled }}
        # The SIP edge's pods (sipEdge), whatever sip.allowFrom says.
        - podSelector:
            matchLabels:
              {{- include "switchboard.selectorLabels" (dict "root" $root "name" "sip-edge") | nindent 14 }}
        {{- end }}
      {{- end }}
    {{- end }}
    {{- with $c.networkPolicy.extraIngress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  egress:
    {{- include "switchboard.dnsEgressRule" $policy | nindent 4 }}
    {{- if has "DATABASE_URL" $c.secretEnv }}
    {{- include "switchboard.egressRule" $policy.postgres | nindent 4 }}
    {{- end }}
    {{- if has "REDIS_URL" $c.secretEnv }}
    {{- include "switchboard.egressRule" $policy.redis | nindent 4 }}
    {{- end }}
    {{- range $callee := $c.calls }}
    {{- $target := include "switchboard.component" (dict "root" $root "name" $callee) | fromYaml }}
    - to:
        - podSelector:
            matchLabels:
              {{- include "switchboard.selectorLabels" (dict "root" $root "name" $callee) | nindent 14 }}
      ports:
        - port: {{ $target.port }}
          protocol: TCP
    {{- end }}
    {{- if and $root.Values.telemetry.enabled $root.Values.telemetry.otlpEndpoint }}
    {{- include "switchboard.egressRule" $policy.otelCollector | nindent 4 }}
    {{- end }}
    {{- if $c.networkPolicy.internetEgress }}
    - to:
        - ipBlock:
            cidr: 0.0.0.0/0
            except:
              {{- toYaml $policy.internetEgress.ipv4Except | nindent 14 }}
        - ipBlock:
            cidr: ::/0
            except:
              {{- toYaml $policy.internetEgress.ipv6Except | nindent 14 }}
      ports:
        {{- range $port := $policy.internetEgress.ports }}
        - port: {{ $port }}
          protocol: TCP
        {{- end }}
    {{- end }}
    {{- if and $root.Values.sip.enabled (eq $.name "call-control") }}
    # SIP to the trunk and the phones, wherever their registrations say they are (UDP), and
    # connections to a trunk over TCP or TLS.
    - ports:
        - protocol: UDP
        {{- range $port := $root.Values.sip.trunkTcpPorts }}
        - port: {{ $port }}
          protocol: TCP
        {{- end }}
    {{- end }}
    {{- with $c.networkPolicy.extraEgress }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
{{- end -}}

{{/* An egress rule to { ports, to }: no `to` means any destination on those ports. */}}
{{- define "switchboard.egressRule" -}}
- ports:
    {{- range $port := .ports }}
    - port: {{ $port }}
      protocol: TCP
    {{- end }}
  {{- with .to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}


{{/* The egress rule to cluster DNS (networkPolicy.dns.to), port 53 UDP and TCP. Argument: .Values.networkPolicy. */}}
{{- define "switchboard.dnsEgressRule" -}}
- to:
    {{- toYaml .dns.to | nindent 4 }}
  ports:
    - port: 53
      protocol: UDP
    - port: 53
      protocol: TCP
{{- end -}}
