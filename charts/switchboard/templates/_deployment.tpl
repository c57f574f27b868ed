{{/* A component's Deployment. Argument: (dict "root" $ "name" … "component" …). */}}
{{- define "switchboard.deployment" -}}
{{- $root := .root -}}
{{- $c := .component -}}
{{- $fullName := include "switchboard.componentName" . -}}
{{- $settings := include "switchboard.settings" . -}}
{{- $sip := and $root.Values.sip.enabled (eq .name "call-control") -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $fullName }}
  labels:
    {{- include "switchboard.labels" . | nindent 4 }}
spec:
  {{- if not $c.autoscaling.enabled }}
  replicas: {{ $c.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 0
  selector:
    matchLabels:
      {{- include "switchboard.selectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "switchboard.selectorLabels" . | nindent 8 }}
        {{- with $c.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        checksum/settings: {{ $settings | sha256sum }}
        {{- if $root.Values.metrics.podAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $root.Values.adminPort | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $c.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ $fullName }}
      automountServiceAccountToken: false
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.priorityClassName }}
      priorityClassName: {{ . }}
      {{- end }}
      {{- if $c.topologySpread.enabled }}
      topologySpreadConstraints:
        {{- range $key := list "topology.kubernetes.io/zone" "kubernetes.io/hostname" }}
        - maxSkew: {{ $c.topologySpread.maxSkew }}
          topologyKey: {{ $key }}
          whenUnsatisfiable: {{ $c.topologySpread.whenUnsatisfiable }}
          matchLabelKeys: [pod-template-hash]
          labelSelector:
            matchLabels:
              {{- include "switchboard.selectorLabels" $ | nindent 14 }}
        {{- end }}
      {{- end }}
      {{- with $c.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $c.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ .name }}
          image: {{ include "switchboard.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          args:
            {{- toYaml $c.args | nindent 12 }}
          ports:
            {{- if ne $c.protocol "none" }}
            - name: {{ $c.protocol }}
              containerPort: {{ $c.port }}
              protocol: TCP
            {{- end }}
            - name: admin
              containerPort: {{ $root.Values.adminPort }}
              protocol: TCP
            {{- if $sip }}
            - name: sip-udp
              containerPort: {{ $root.Values.sip.port }}
              protocol: UDP
            - name: sip-tcp
              containerPort: {{ $root.Values.sip.port }}
              protocol: TCP
            {{- if $root.Values.sip.tls.enabled }}
            - name: sip-tls
              containerPort: {{ $root.Values.sip.tls.port }}
              protocol: TCP
            {{- end }}
            {{- end }}
          envFrom:
            - configMapRef:
                name: {{ $fullName }}
          env:
            {{- range $field, $var := dict "metadata.name" "POD_NAME" "metadata.namespace" "POD_NAMESPACE" "spec.nodeName" "NODE_NAME" }}
            - name: {{ $var }}
              valueFrom:
                fieldRef:
                  fieldPath: {{ $field }}
            {{- end }}
            {{- range $var := $c.secretEnv }}
            {{- $ref := get $root.Values.secrets $var }}
            {{- if not $ref }}
            {{- fail (printf "components.%s.secretEnv names %s, which is not a key of secrets" $.name $var) }}
            {{- end }}
            - name: {{ $var }}
              valueFrom:
                secretKeyRef:
                  name: {{ $ref.existingSecret }}
                  key: {{ $ref.key }}
                  {{- if $ref.optional }}
                  optional: true
                  {{- end }}
            {{- end }}
            {{- if and $sip (not $root.Values.sip.publicAddress) }}
            # Each replica says its own address in Via and Contact (docs/operations.md).
            - name: POD_IP
              valueFrom:
                fieldRef:
                  fieldPath: status.podIP
            - name: SIP_PUBLIC_ADDRESS
              {{- if $root.Values.sip.ipv6 }}
              value: "[$(POD_IP)]:{{ $root.Values.sip.port }}"
              {{- else }}
              value: "$(POD_IP):{{ $root.Values.sip.port }}"
              {{- end }}
            {{- end }}
            {{- if $root.Values.telemetry.enabled }}
            - name: OTEL_RESOURCE_ATTRIBUTES
              value: {{ include "switchboard.resourceAttributes" . | quote }}
            {{- end }}
          {{- range $kind, $probe := $c.probes }}
          {{- if $probe.enabled }}
          {{ $kind }}Probe:
            {{- include "switchboard.probe" (dict "probe" $probe "component" $c "name" $.name "adminPort" $root.Values.adminPort "grpcTls" $root.Values.grpcTls.enabled) | trim | nindent 12 }}
          {{- end }}
          {{- end }}
          {{- if $c.preStopSleepSeconds }}
          lifecycle:
            preStop:
              exec:
                command: ["sleep", {{ $c.preStopSleepSeconds | quote }}]
          {{- end }}
          resources:
            {{- toYaml $c.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            {{- if $root.Values.grpcTls.enabled }}
            - name: grpc-tls
              mountPath: /etc/switchboard/grpc-tls
              readOnly: true
            {{- end }}
            {{- if and $sip $root.Values.sip.tls.enabled }}
            - name: sip-tls
              mountPath: /etc/switchboard/sip-tls
              readOnly: true
            {{- end }}
      volumes:
        - name: tmp
          emptyDir:
            sizeLimit: {{ $root.Values.tmpSizeLimit }}
        {{- if $root.Values.grpcTls.enabled }}
        - name: grpc-tls
          secret:
            secretName: {{ $root.Values.grpcTls.existingSecret }}
        {{- end }}
        {{- if and $sip $root.Values.sip.tls.enabled }}
        - name: sip-tls
          secret:
            secretName: {{ $root.Values.sip.tls.existingSecret }}
        {{- end }}
{{- end -}}

{{/* A probe: type http (admin port) or grpc (the component's gRPC port, overall health). */}}
{{- define "switchboard.probe" -}}
{{- $probe := .probe -}}
{{- if eq $probe.type "grpc" }}
{{- if ne .component.protocol "grpc" }}
{{- fail (printf "components.%s: a grpc probe needs protocol grpc" .name) }}
{{- end }}
{{- if .grpcTls }}
{{- fail (printf "components.%s: a grpc probe cannot speak TLS (grpcTls.enabled): use type http" .name) }}
{{- end }}
grpc:
  port: {{ .component.port }}
{{- else }}
httpGet:
  path: {{ $probe.path }}
  port: admin
{{- end }}
periodSeconds: {{ $probe.periodSeconds }}
timeoutSeconds: {{ $probe.timeoutSeconds }}
failureThreshold: {{ $probe.failureThreshold }}
{{- end -}}
