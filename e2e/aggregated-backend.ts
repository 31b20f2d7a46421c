// An extension API server for the aggregation tests: a second kapi (own embedded etcd)
// serving the CRD group agg.example.com (widgets, namespaced, a printer column), trusting a
// front-proxy CA made here for X-Remote-* headers (--requestheader-*), its serving
// certificate naming the Service `backend.aggregated.svc` the front checks. Also what a front
// needs to register it: the proxy client certificate files and the Service, EndpointSlice
// and APIService manifests.

import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createCA, generateKey, issueCert } from '../server/pki/x509.js';
import { freePort, kubectlOk, startKapi, waitFor, type KapiProcess } from './harness.js';

export const GROUP = 'agg.example.com';
export const SERVICE_NAMESPACE = 'aggregated';
export const SERVICE_NAME = 'backend';
export const API_SERVICE = `v1.${GROUP}`;

export interface FrontProxyCerts {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** a front-proxy CA and the client certificate (CN front-proxy-client) the front presents */
export async function makeFrontProxyCerts(dir: string): Promise<FrontProxyCerts> {
  mkdirSync(dir, { recursive: true });
  const ca = await createCA('front-proxy-ca', 1, await generateKey('ecdsa'));
  const key = await generateKey('ecdsa');
  const cert = await issueCert(ca, { commonName: 'front-proxy-client', usage: 'client', validDays: 1 }, key);
  const files = {
    caFile: path.join(dir, 'front-proxy-ca.crt'),
    certFile: path.join(dir, 'front-proxy-client.crt'),
    keyFile: path.join(dir, 'front-proxy-client.key'),
  };
  writeFileSync(files.caFile, ca.certPem);
  writeFileSync(files.certFile, cert);
  writeFileSync(files.keyFile, key.privateKeyPem, { mode: 0o600 });
  return files;
}

export function frontProxyFlags(certs: FrontProxyCerts): string[] {
  return ['--proxy-client-cert-file', certs.certFile, '--proxy-client-key-file', certs.keyFile, '--enable-aggregator-routing=true'];
}

export interface Backend {
  kapi: KapiProcess;
  port: number;
  dataDir: string;
  /** PEM of the CA that signed the backend's serving certificate */
  caPem: string;
  /** the backend's audit log (every request at Metadata level) */
  auditLog: string;
  args: string[];
}

export function backendArgs(certs: FrontProxyCerts, auditDir: string): string[] {
  const policy = path.join(auditDir, 'audit-policy.yaml');
  writeFileSync(policy, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  omitStages: [RequestReceived]\n');
  return [
    '--requestheader-client-ca-file',
    certs.caFile,
    '--requestheader-allowed-names',
    'front-proxy-client',
    '--requestheader-username-headers',
    'X-Remote-User',
    '--requestheader-group-headers',
    'X-Remote-Group',
    '--requestheader-extra-headers-prefix',
    'X-Remote-Extra-',
    '--tls-san',
    `${SERVICE_NAME}.${SERVICE_NAMESPACE}.svc`,
    '--authorization-mode',
    'RBAC',
    '--audit-policy-file',
    policy,
    '--audit-log-path',
    path.join(auditDir, 'audit.log'),
  ];
}

const widgetCRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList', shortNames: ['wdg'] },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            description: 'A widget served by an aggregated API server.',
            properties: { spec: { type: 'object', properties: { color: { type: 'string', description: 'The color of the widget.' } } } },
          },
        },
        additionalPrinterColumns: [{ name: 'Color', type: 'string', jsonPath: '.spec.color' }],
      },
    ],
  },
};

/** starts (or, given the same dataDir and port, restarts) the backend and waits until it serves widgets */
export async function startBackend(args: string[], dataDir: string, port?: number): Promise<Backend> {
  const kapi = await startKapi({ dataDir, port: port ?? (await freePort()), extraArgs: args });
  const opts = { kubeconfig: kapi.kubeconfig };
  if (port === undefined) {
    await kubectlOk(['apply', '-f', '-'], { ...opts, input: JSON.stringify(widgetCRD) });
    // alice may read and write widgets here; bob is allowed at the front only
    await kubectlOk(['create', 'clusterrole', 'widget-editor', '--verb=get,list,watch,create,delete', `--resource=widgets.${GROUP}`], opts);
    await kubectlOk(['create', 'clusterrolebinding', 'alice-widgets', '--clusterrole=widget-editor', '--user=alice'], opts);
  }
  await waitFor('the backend to serve widgets', async () => (await kapi.http.get(`/apis/${GROUP}/v1`)).status === 200 || undefined, 30_000);
  return {
    kapi,
    port: kapi.port,
    dataDir,
    caPem: readFileSync(path.join(dataDir, 'pki', 'ca.crt'), 'utf8'),
    auditLog: args[args.indexOf('--audit-log-path') + 1]!,
    args,
  };
}

/** Service + EndpointSlice (127.0.0.1:<port>) + APIService, as one kubectl apply input */
export function registration(backendPort: number, caPem: string): string {
  const items = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: SERVICE_NAMESPACE } },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: SERVICE_NAME, namespace: SERVICE_NAMESPACE },
      spec: { ports: [{ name: 'https', port: 443, targetPort: backendPort, protocol: 'TCP' }] },
    },
    {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `${SERVICE_NAME}-1`, namespace: SERVICE_NAMESPACE, labels: { 'kubernetes.io/service-name': SERVICE_NAME } },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      ports: [{ name: 'https', port: backendPort, protocol: 'TCP' }],
    },
    {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: API_SERVICE },
      spec: {
        group: GROUP,
        version: 'v1',
        groupPriorityMinimum: 1000,
        versionPriority: 15,
        service: { namespace: SERVICE_NAMESPACE, name: SERVICE_NAME, port: 443 },
        caBundle: Buffer.from(caPem).toString('base64'),
      },
    },
  ];
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}

/** the APIService's Available condition as `status reason message` */
export async function availability(kubeconfig: string): Promise<string> {
  return kubectlOk(
    [
      'get',
      'apiservice',
      API_SERVICE,
      '-o',
      'jsonpath={.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].reason} {.status.conditions[?(@.type=="Available")].message}',
    ],
    { kubeconfig },
  );
}
