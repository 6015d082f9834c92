{{/* Chart name, truncated to the 63 characters Kubernetes allows in names. */}}
{{- define "groundguard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name: release-chart unless the release name already holds the chart. */}}
{{- define "groundguard.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "groundguard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "groundguard.labels" -}}
helm.sh/chart: {{ include "groundguard.chart" . }}
{{ include "groundguard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: guard
{{- end }}

{{- define "groundguard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "groundguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "groundguard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "groundguard.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "groundguard.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/* The port of /metrics, /healthz and /readyz: the settings' metrics.port. */}}
{{- define "groundguard.metricsPort" -}}
{{- $metrics := .Values.config.metrics | default dict }}
{{- $metrics.port | default 9464 }}
{{- end }}

{{/* Mount point of the Kafka TLS secret. */}}
{{- define "groundguard.tlsDir" -}}/etc/groundguard/tls{{- end }}

{{/*
The settings file: .Values.config, with the TLS file paths filled in when a TLS secret is given.
*/}}
{{- define "groundguard.config" -}}
{{- $config := deepCopy .Values.config }}
{{- with .Values.secrets.kafkaTls }}
{{- if .secretName }}
{{- $security := get $config "security" | default dict }}
{{- $dir := include "groundguard.tlsDir" $ }}
{{- if .caKey }}{{- $_ := set $security "ssl_cafile" (printf "%s/%s" $dir .caKey) }}{{- end }}
{{- if .certKey }}{{- $_ := set $security "ssl_certfile" (printf "%s/%s" $dir .certKey) }}{{- end }}
{{- if .keyKey }}{{- $_ := set $security "ssl_keyfile" (printf "%s/%s" $dir .keyKey) }}{{- end }}
{{- $_ := set $config "security" $security }}
{{- end }}
{{- end }}
{{- if or .Values.staticMembership.enabled .Values.redis.enabled }}
{{- $kafka := get $config "kafka" | default dict }}
{{- if .Values.staticMembership.enabled }}
{{- $_ := set $kafka "static_membership" true }}
{{- $_ := set $kafka "session_timeout_ms" (int .Values.staticMembership.sessionTimeoutMs) }}
{{- $_ := set $config "kafka" $kafka }}
{{- end }}
{{- if .Values.redis.enabled }}
{{- $judge := get $config "judge" | default dict }}
{{- $budget := get $judge "budget" | default dict }}
{{- $_ := set $budget "fleet" "redis" }}
{{- $_ := set $budget "redis_prefix" (.Values.redis.prefix | default (include "groundguard.fullname" .)) }}
{{- $_ := set $judge "budget" $budget }}
{{- $_ := set $config "judge" $judge }}
{{- end }}
{{- end }}
{{- toYaml $config }}
{{- end }}

{{/* StatefulSet with static membership (stable pod names are the group.instance.id), else a
Deployment. */}}
{{- define "groundguard.workloadKind" -}}
{{- if .Values.staticMembership.enabled }}StatefulSet{{ else }}Deployment{{ end }}
{{- end }}

{{/* Refuse value combinations that cannot work. */}}
{{- define "groundguard.validate" -}}
{{- if and .Values.autoscaling.enabled .Values.keda.enabled }}
{{- fail "autoscaling.enabled and keda.enabled are exclusive: KEDA creates its own HorizontalPodAutoscaler" }}
{{- end }}
{{- if and .Values.keda.enabled (gt (int .Values.keda.maxReplicaCount) (int .Values.keda.topicPartitions)) }}
{{- fail (printf "keda.maxReplicaCount (%d) exceeds keda.topicPartitions (%d): replicas beyond the partition count of the requests topic get no partition" (int .Values.keda.maxReplicaCount) (int .Values.keda.topicPartitions)) }}
{{- end }}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.maxReplicas) (int .Values.keda.topicPartitions)) }}
{{- fail (printf "autoscaling.maxReplicas (%d) exceeds keda.topicPartitions (%d): replicas beyond the partition count of the requests topic get no partition (and no share of the budget)" (int .Values.autoscaling.maxReplicas) (int .Values.keda.topicPartitions)) }}
{{- end }}
{{- if and .Values.redis.enabled (not .Values.redis.existingSecret) }}
{{- fail "redis.enabled needs redis.existingSecret: a Secret holding the Redis URL (redis://:password@host:6379/0) under redis.urlKey" }}
{{- end }}
{{- with .Values.livenessProbe }}
{{- if lt (mul (int (.periodSeconds | default 10)) (int (.failureThreshold | default 3))) 30 }}
{{- fail "livenessProbe: periodSeconds x failureThreshold must be at least 30 s; a shorter window restarts pods on CPU throttling and redelivers their messages" }}
{{- end }}
{{- end }}
{{- if and .Values.secrets.kafkaTls.keyKey (not .Values.secrets.kafkaTls.certKey) }}
{{- fail "secrets.kafkaTls.keyKey is set without secrets.kafkaTls.certKey" }}
{{- end }}
{{- end }}

{{/* groundguard serve: its own name, so no selector of run's objects matches its pods. */}}
{{- define "groundguard.serve.fullname" -}}
{{- printf "%s-serve" (include "groundguard.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "groundguard.serve.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "%s-serve" (include "groundguard.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "groundguard.serve.labels" -}}
helm.sh/chart: {{ include "groundguard.chart" . }}
{{ include "groundguard.serve.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: serve
{{- end }}

{{/* Mount point of the serve API keys secret. */}}
{{- define "groundguard.serve.keysDir" -}}/etc/groundguard/api-keys{{- end }}

{{/*
serve's settings file: .Values.config with .Values.serve.config merged over it, and
serve.api_keys_file pointing at the mounted Secret when serve.apiKeys.secretName is set.
*/}}
{{- define "groundguard.serve.config" -}}
{{- $config := mergeOverwrite (deepCopy .Values.config) (deepCopy (.Values.serve.config | default dict)) }}
{{- $serve := get $config "serve" | default dict }}
{{- if not (hasKey $serve "port") }}{{- $_ := set $serve "port" 8080 }}{{- end }}
{{- with .Values.serve.apiKeys }}
{{- if .secretName }}
{{- $_ := set $serve "api_keys_file" (printf "%s/%s" (include "groundguard.serve.keysDir" $) .key) }}
{{- end }}
{{- end }}
{{- $_ := set $config "serve" $serve }}
{{- toYaml $config }}
{{- end }}

{{/* The port of serve's API, health and metrics: the merged settings' serve.port. */}}
{{- define "groundguard.serve.port" -}}
{{- (include "groundguard.serve.config" . | fromYaml).serve.port }}
{{- end }}
