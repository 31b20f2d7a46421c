// What kube-apiserver creates on start and keeps in place: the system namespaces and the
// `kubernetes` Service in `default` (its Endpoints are master-endpoints.ts's business).
// Every replica runs this; it is idempotent and race-safe: losing a create race to another
// replica counts as success.

import type { KubeObject } from '../../storage/interface.js';
import type { RESTResource, RequestContext } from '../registry/rest.js';
import { firstServiceIP } from './service-ip.js';
import { defaultLogger, type Controller, type ControllerDeps } from './types.js';
import { errorMessage, internalContext, isAlreadyExists, isNotFound, sleep } from './util.js';
import { jsonEqual } from '../registry/object.js';

export const systemNamespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'] as const;

export const kubernetesServiceName = 'kubernetes';
export const kubernetesServicePort = 443;

/** kube-apiserver writes these as its own loopback client */
const fieldManager = 'kube-apiserver';

export type BootstrapDeps = Pick<ControllerDeps, 'resolver' | 'serviceClusterIPRange' | 'securePort'>;

function mustLookup(deps: BootstrapDeps, group: string, version: string, resource: string): RESTResource {
  const res = deps.resolver.lookup(group, version, resource);
  if (!res) throw new Error(`the registry serves no ${group || 'core'}/${version} ${resource}`);
  return res;
}

/** creates `obj` unless an object of that name exists; a lost create race is success */
async function ensureExists(res: RESTResource, ctx: RequestContext, obj: KubeObject): Promise<KubeObject> {
  const name = obj.metadata.name ?? '';
  try {
    return await res.get(ctx, name, {});
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  try {
    return await res.create(ctx, obj);
  } catch (err) {
    if (isAlreadyExists(err)) return res.get(ctx, name, {});
    // Another replica may have won in a way that fails differently for us (for the Service: its
    // ClusterIP is then already allocated); if the object is there now, that is success.
    try {
      return await res.get(ctx, name, {});
    } catch {
      throw err;
    }
  }
}

export async function ensureSystemNamespaces(deps: BootstrapDeps, signal?: AbortSignal): Promise<void> {
  const namespaces = mustLookup(deps, '', 'v1', 'namespaces');
  const ctx = internalContext(fieldManager, '', signal);
  for (const name of systemNamespaces) {
    await ensureExists(namespaces, ctx, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  }
}

interface ServicePort {
  name: string;
  protocol: string;
  port: number;
  targetPort: number;
}

export function kubernetesService(deps: Pick<BootstrapDeps, 'serviceClusterIPRange' | 'securePort'>): KubeObject {
  const { ip, family } = firstServiceIP(deps.serviceClusterIPRange);
  return {
    kind: 'Service',
    apiVersion: 'v1',
    metadata: {
      name: kubernetesServiceName,
      namespace: 'default',
      labels: { component: 'apiserver', provider: 'kubernetes' },
    },
    spec: {
      ports: [desiredPort(deps.securePort)],
      clusterIP: ip,
      clusterIPs: [ip],
      type: 'ClusterIP',
      sessionAffinity: 'None',
      ipFamilies: [family],
      ipFamilyPolicy: 'SingleStack',
    },
  };
}

function desiredPort(securePort: number): ServicePort {
  return { name: 'https', protocol: 'TCP', port: kubernetesServicePort, targetPort: securePort };
}

/** true when the Service's ports and type are what kube-apiserver keeps them at */
function serviceIsCurrent(svc: KubeObject, securePort: number): boolean {
  const spec = (svc.spec ?? {}) as { ports?: Array<Partial<ServicePort>>; type?: string };
  const ports = (spec.ports ?? []).map((p) => ({ name: p.name, protocol: p.protocol, port: p.port, targetPort: p.targetPort }));
  return spec.type === 'ClusterIP' && jsonEqual(ports, [desiredPort(securePort)]);
}

/** creates the `kubernetes` Service, or puts its ports and type back when someone changed them */
export async function ensureKubernetesService(deps: BootstrapDeps, signal?: AbortSignal): Promise<void> {
  const services = mustLookup(deps, '', 'v1', 'services');
  const ctx = internalContext(fieldManager, 'default', signal);
  const current = await ensureExists(services, ctx, kubernetesService(deps));
  if (serviceIsCurrent(current, deps.securePort)) return;
  await services.update(
    ctx,
    kubernetesServiceName,
    (latest) => {
      if (!latest) throw new Error('the kubernetes Service vanished while being reconciled');
      const spec = (latest.spec ?? {}) as Record<string, unknown>;
      return { ...latest, spec: { ...spec, ports: [desiredPort(deps.securePort)], type: 'ClusterIP' } };
    },
    { allowCreate: false },
  );
}

export async function runBootstrap(deps: BootstrapDeps, signal?: AbortSignal): Promise<void> {
  await ensureSystemNamespaces(deps, signal);
  await ensureKubernetesService(deps, signal);
}

export interface BootstrapControllerOptions {
  /** how often the objects are checked again after the first success. Default 60 s. */
  resyncMs?: number;
  /** called once, after the first complete pass */
  onBootstrapped?: () => void;
}

/** runs the bootstrap at start (retrying until it succeeds), then again every `resyncMs` */
export function bootstrapController(deps: ControllerDeps, opts: BootstrapControllerOptions = {}): Controller {
  const log = deps.log ?? defaultLogger;
  const resyncMs = opts.resyncMs ?? 60_000;
  return {
    name: 'bootstrap',
    async start(signal) {
      let bootstrapped = false;
      let retryMs = 200;
      while (!signal.aborted) {
        try {
          await runBootstrap(deps, signal);
          if (!bootstrapped) {
            bootstrapped = true;
            opts.onBootstrapped?.();
          }
          retryMs = 200;
          await sleep(resyncMs, signal);
        } catch (err) {
          if (signal.aborted) return;
          log.warn('bootstrap failed, retrying', { err: errorMessage(err) });
          await sleep(retryMs, signal);
          retryMs = Math.min(retryMs * 2, 10_000);
        }
      }
    },
  };
}
