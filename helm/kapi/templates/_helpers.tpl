{{- define "kapi.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kapi.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kapi.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: apiserver
{{- end -}}

{{- define "kapi.etcdSelectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: etcd
{{- end -}}

{{- define "kapi.etcdName" -}}
{{- printf "%s-etcd" (include "kapi.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kapi.pkiSecret" -}}
{{- default (printf "%s-pki" (include "kapi.fullname" .)) .Values.pki.existingSecret -}}
{{- end -}}

{{/* the --etcd-servers value: the in-chart members, or the external endpoints */}}
{{- define "kapi.etcdServers" -}}
{{- if .Values.etcd.enabled -}}
{{- $name := include "kapi.etcdName" . -}}
{{- $ns := .Release.Namespace -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.replicas) -}}
{{- $urls = append $urls (printf "http://%s-%d.%s-peers.%s.svc:2379" $name $i $name $ns) -}}
{{- end -}}
{{- join "," $urls -}}
{{- else -}}
{{- required "etcd.externalEndpoints is required when etcd.enabled is false" (join "," .Values.etcd.externalEndpoints) -}}
{{- end -}}
{{- end -}}
