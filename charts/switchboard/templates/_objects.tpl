{{/* A component's small objects. Argument of each: (dict "root" $ "name" … "component" …). */}}

{{- define "switchboard.serviceAccount" -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: {{ include "switchboard.componentName" . }}
  labels:
    {{- include "switchboard.labels" . | nindent 4 }}
  {{- with .component.serviceAccount.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
automountServiceAccountToken: false
{{- end -}}

{{- define "switchboard.configMap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "switchboard.componentName" . }}
  labels:
    {{- include "switchboard.labels" . | nindent 4 }}
data:
  {{- include "switchboard.settings" . | nindent 2 }}
{{- end -}}

{{- define "switchboard.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "switchboard.componentName" . }}
  labels:
    {{- include "switchboard.labels" . | nindent 4 }}
spec:
  type: ClusterIP
  selector:
    {{- include "switchboard.selectorLabels" . | nindent 4 }}
  ports:
    {{- if ne .component.protocol "none" }}
    - name: {{ .component.protocol }}
      port: {{ .component.port }}
      targetPort: {{ .component.protocol }}
      protocol: TCP
      appProtocol: {{ ternary "kubernetes.io/h2c" "http" (eq .component.protocol "grpc") }}
    {{- end }}
    - name: admin
      port: {{ .root.Values.adminPort }}
      targetPort: admin
      protocol: TCP
      appProtocol: http
{{- end -}}

{{/*
call-control's SIP Service: new requests (REGISTER, the trunk's INVITEs) for every replica, UDP
and TCP on one port; ClientIP affinity keeps a peer's retransmissions on one replica.
*/}}
{{- define "switchboard.sipService" -}}
{{- $sip := .root.Values.sip -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "switchboard.componentName" . }}-sip
  labels:
    {{- include "switchboard.labels" . | nindent 4 }}
  {{- with $sip.service.annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ $sip.service.type }}
  {{- if ne $sip.service.type "ClusterIP" }}
  externalTrafficPolicy: {{ $sip.service.externalTrafficPolicy }}
  {{- end }}
  {{- if and (eq $sip.service.type "LoadBalancer") $sip.service.loadBalancerSourceRanges }}
  loadBalancerSourceRanges:
    {{- toYaml $sip.service.loadBalancerSourceRanges | nindent 4 }}
  {{- end }}
  {{- if $sip.ipv6 }}
  ipFamilyPolicy: PreferDualStack
  {{- end }}
  sessionAffinity: ClientIP
  selector:
    {{- include "switchboard.selectorLabels" . | nindent 4 }}
  ports:
    - name: sip-udp
      port: {{ $sip.port }}
      targetPort: sip-udp
      protocol: UDP
    - name: sip-tcp
      port: {{ $sip.port }}
      targetPort: sip-tcp
      protocol: TCP
    {{- if $sip.tls.enabled }}
    - name: sip-tls
      port: {{ $sip.tls.port }}
      targetPort: sip-tls
      protocol: TCP
    {{- end }}
{{- end -}}

{{- define "switchboard.autoscaler" -}}
{{- $scaling := .component.autoscaling -}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "switchboard.componentName" . }}
  labels:
    {{- include "switchboard.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "switchboard.componentName" . }}
  minReplicas: {{ $scaling.minReplicas }}
  maxReplicas: {{ $scaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $scaling.targetCPUUtilizationPercentage }}
    {{- with $scaling.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ . }}
    {{- end }}
{{- end -}}

{{- define "switchboard.disruptionBudget" -}}
{{- $budget := .component.podDisruptionBudget -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "switchboard.componentName" . }}
  labels:
    {{- include "switchboard.labels" . | nindent 4 }}
spec:
  selector:
    matchLabels:
      {{- include "switchboard.selectorLabels" . | nindent 6 }}
  {{- if not (kindIs "invalid" $budget.minAvailable) }}
  minAvailable: {{ $budget.minAvailable }}
  {{- else }}
  maxUnavailable: {{ $budget.maxUnavailable }}
  {{- end }}
  unhealthyPodEvictionPolicy: AlwaysAllow
{{- end -}}
