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

{{- define "kapi.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{/* the --etcd-servers value: the bundled members, or the external endpoints */}}
{{- define "kapi.etcdServers" -}}
{{- if .Values.etcd.bundled -}}
{{- $name := include "kapi.etcdName" . -}}
{{- $ns := .Release.Namespace -}}
{{- $urls := list -}}
{{- range $i := until (int .Values.etcd.replicas) -}}
{{- $urls = append $urls (printf "http://%s-%d.%s-peers.%s.svc:2379" $name $i $name $ns) -}}
{{- end -}}
{{- join "," $urls -}}
{{- else -}}
{{- required "etcd.external.endpoints is required when etcd.bundled is false" (join "," .Values.etcd.external.endpoints) -}}
{{- end -}}
{{- end -}}

{{- define "kapi.externalEtcdTLS" -}}
{{- if and (not .Values.etcd.bundled) .Values.etcd.external.tlsSecret -}}true{{- end -}}
{{- end -}}
