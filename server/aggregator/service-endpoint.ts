// Where an APIService's Service is reached, and why not when it cannot be. kube-aggregator
// with --enable-aggregator-routing picks a ready endpoint of the Service (EndpointSlices);
// without, it dials the cluster IP and lets kube-proxy choose. kapi has no Service network,
// so it always picks the endpoint itself. The reasons and messages are the availability
// controller's (kube 1.33, EndpointSlice based).

import type { KubeObject } from '../../storage/interface.js';
import { internalContext, isNotFound } from '../controllers/util.js';
import type { ResourceResolver } from '../registry/rest.js';
import type { ServiceReference } from './api-services.js';

export type EndpointProblemReason =
  | 'ServiceNotFound'
  | 'ServiceAccessError'
  | 'ServicePortError'
  | 'EndpointsNotFound'
  | 'EndpointsAccessError'
  | 'MissingEndpoints';

export type EndpointResolution =
  | { ok: true; host: string; port: number }
  | { ok: false; reason: EndpointProblemReason; message: string; status: 'False' | 'Unknown' };

interface ServicePortShape {
  name?: string;
  port?: number;
}

interface EndpointSliceShape {
  ports?: { name?: string; port?: number }[] | null;
  endpoints?: { addresses?: string[]; conditions?: { ready?: boolean | null } }[] | null;
}

const where = (ref: ServiceReference): string => `service/${ref.name} in ${JSON.stringify(ref.namespace)}`;

export async function resolveServiceEndpoint(
  resolver: ResourceResolver,
  ref: ServiceReference,
  pick: (n: number) => number = (n) => Math.floor(Math.random() * n),
): Promise<EndpointResolution> {
  const ctx = internalContext('kube-aggregator', ref.namespace);
  const services = resolver.lookup('', 'v1', 'services');
  let service: KubeObject;
  try {
    if (!services) throw new Error('services are not served');
    service = await services.get(ctx, ref.name, {});
  } catch (err) {
    if (isNotFound(err)) return { ok: false, status: 'False', reason: 'ServiceNotFound', message: `${where(ref)} is not present` };
    return {
      ok: false,
      status: 'Unknown',
      reason: 'ServiceAccessError',
      message: `${where(ref)} cannot be checked due to: ${(err as Error).message}`,
    };
  }
  const spec = (service as { spec?: { type?: string; externalName?: string; ports?: ServicePortShape[] } }).spec ?? {};
  if (spec.type === 'ExternalName' && spec.externalName) return { ok: true, host: spec.externalName, port: ref.port };
  const servicePort = (spec.ports ?? []).find((p) => p.port === ref.port);
  if (!servicePort)
    return { ok: false, status: 'False', reason: 'ServicePortError', message: `${where(ref)} is not listening on port ${ref.port}` };
  const portName = servicePort.name ?? '';
  let slices: EndpointSliceShape[];
  try {
    const rest = resolver.lookup('discovery.k8s.io', 'v1', 'endpointslices');
    if (!rest) throw new Error('endpointslices are not served');
    const list = await rest.list(ctx, { labelSelector: `kubernetes.io/service-name=${ref.name}` });
    slices = list.items as unknown as EndpointSliceShape[];
  } catch (err) {
    return {
      ok: false,
      status: 'Unknown',
      reason: 'EndpointsAccessError',
      message: `${where(ref)} cannot be checked due to: ${(err as Error).message}`,
    };
  }
  if (slices.length === 0)
    return { ok: false, status: 'False', reason: 'EndpointsNotFound', message: `cannot find endpointslices for ${where(ref)}` };
  const candidates: { host: string; port: number }[] = [];
  for (const slice of slices) {
    const port = (slice.ports ?? []).find((p) => (p.name ?? '') === portName && typeof p.port === 'number');
    if (!port) continue;
    for (const e of slice.endpoints ?? []) {
      if (e.conditions?.ready === false) continue;
      for (const address of e.addresses ?? []) candidates.push({ host: address, port: port.port! });
    }
  }
  if (candidates.length === 0) {
    return {
      ok: false,
      status: 'False',
      reason: 'MissingEndpoints',
      message: `endpointslices for ${where(ref)} have no addresses with port name ${JSON.stringify(portName)}`,
    };
  }
  const chosen = candidates[pick(candidates.length)] ?? candidates[0]!;
  return { ok: true, ...chosen };
}

/** `host:port` with IPv6 hosts bracketed, as a URL authority */
export function authority(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
