// Services through the registry with the real allocator over real etcd: what a create,
// update, delete and dry run allocate and free, the 422s for requested values that cannot be
// had, and 200 creates spread over two replicas getting 200 distinct addresses.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import { startEtcd, type EtcdProcess } from '../../storage/testing/etcd-server.js';
import { StatusError } from '../machinery/status.js';
import { ipAddressKeyPrefix } from './cluster-ip.js';
import { nodePortKeyPrefix } from './node-port.js';
import { ctx, ensureNamespace, service, startReplica, type Replica } from './testing.js';

let etcd: EtcdProcess;
let r: Replica;
const ns = 'alloc';

before(async () => {
  etcd = await startEtcd();
  r = startReplica(etcd);
  await ensureNamespace(r, ns);
});

after(async () => {
  await r.close();
  await etcd.stop();
});

type Spec = Record<string, any>;
const specOf = (o: KubeObject): Spec => o.spec as Spec;

async function statusOf(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof StatusError, `expected a StatusError, got ${String(e)}`);
    return e;
  }
  assert.fail('expected the request to fail');
}

const create = (svc: KubeObject, extra = {}) => r.services.create(ctx(ns, extra), svc);
const replace = (name: string, fn: (cur: KubeObject) => KubeObject, extra = {}) =>
  r.services.update(ctx(ns, extra), name, async (cur) => fn(cur!), { allowCreate: false }).then((x) => x.object);
const remove = (name: string, extra = {}) => r.services.delete(ctx(ns, extra), name, {});

async function ipHolder(ip: string): Promise<string | undefined> {
  const obj = await r.store.get(`${ipAddressKeyPrefix}/${ip}`, { ignoreNotFound: true });
  if (!obj) return undefined;
  const ref = (obj.spec as Spec).parentRef;
  return `${ref.namespace}/${ref.name}`;
}

async function portHolder(port: number): Promise<string | undefined> {
  const obj = await r.store.get(`${nodePortKeyPrefix}/${port}`, { ignoreNotFound: true });
  if (!obj) return undefined;
  const ref = (obj.spec as Spec).parentRef;
  return `${ref.namespace}/${ref.name}`;
}

test('a ClusterIP Service gets an address from the range, single-stack IPv4, fields in kube order', async () => {
  const svc = await create(service('plain'));
  const spec = specOf(svc);
  assert.match(spec.clusterIP, /^10\.(9[6-9]|10[0-9]|11[01])\./);
  assert.deepEqual(spec.clusterIPs, [spec.clusterIP]);
  assert.deepEqual(spec.ipFamilies, ['IPv4']);
  assert.equal(spec.ipFamilyPolicy, 'SingleStack');
  assert.deepEqual(Object.keys(spec), [
    'ports',
    'selector',
    'clusterIP',
    'clusterIPs',
    'type',
    'sessionAffinity',
    'ipFamilies',
    'ipFamilyPolicy',
    'internalTrafficPolicy',
  ]);
  assert.equal(await ipHolder(spec.clusterIP), `${ns}/plain`);
  // the IPAddress is an API object like any other
  const ip = await r.ipaddresses.get(ctx(), spec.clusterIP, {});
  assert.deepEqual(ip.spec, { parentRef: { resource: 'services', namespace: ns, name: 'plain' } });
});

test('a requested address is honoured; taken or outside the range it is a 422 naming spec.clusterIPs', async () => {
  const svc = await create(service('fixed', { clusterIP: '10.96.0.10' }));
  assert.deepEqual(specOf(svc).clusterIPs, ['10.96.0.10']);
  const taken = await statusOf(create(service('fixed2', { clusterIP: '10.96.0.10' })));
  assert.equal(taken.code, 422);
  assert.equal(
    taken.message,
    'Service "fixed2" is invalid: spec.clusterIPs: Invalid value: []string{"10.96.0.10"}: failed to allocate IP 10.96.0.10: provided IP is already allocated',
  );
  assert.equal(taken.details?.causes?.[0]?.field, 'spec.clusterIPs');
  const outside = await statusOf(create(service('far', { clusterIP: '192.168.0.10' })));
  assert.equal(outside.code, 422);
  assert.equal(
    outside.message,
    'Service "far" is invalid: spec.clusterIPs: Invalid value: []string{"192.168.0.10"}: failed to allocate IP 192.168.0.10: the provided network does not match the current range',
  );
  const network = await statusOf(create(service('net', { clusterIP: '10.96.0.0' })));
  assert.match(network.message, /the provided IP \(10\.96\.0\.0\) is not in the valid range\. The range of valid IPs is 10\.96\.0\.0\/12$/);
  const bad = await statusOf(create(service('bad', { clusterIP: '10.96.0.300' })));
  assert.equal(
    bad.message,
    'Service "bad" is invalid: spec.clusterIPs[0]: Invalid value: "10.96.0.300": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
  );
  const mismatch = await statusOf(create(service('mm', { clusterIP: '10.96.0.11', clusterIPs: ['10.96.0.12'] })));
  assert.equal(mismatch.details?.causes?.[0]?.message, 'Invalid value: []string{"10.96.0.12"}: first value must match `clusterIP`');
  assert.equal(await ipHolder('10.96.0.11'), undefined);
  assert.equal(await ipHolder('10.96.0.12'), undefined);
});

test('a create that fails after allocating gives the address back; delete frees it for the next Service', async () => {
  // port 0 fails validation, which runs after allocation
  await statusOf(create(service('broken', { clusterIP: '10.96.0.20', ports: [{ port: 0 }] })));
  assert.equal(await ipHolder('10.96.0.20'), undefined);
  const first = await create(service('first', { clusterIP: '10.96.0.20' }));
  assert.equal(specOf(first).clusterIP, '10.96.0.20');
  await remove('first');
  assert.equal(await ipHolder('10.96.0.20'), undefined);
  await create(service('second', { clusterIP: '10.96.0.20' }));
  assert.equal(await ipHolder('10.96.0.20'), `${ns}/second`);
});

test('headless Services keep None and take nothing; ExternalName Services get no address and no families', async () => {
  const headless = await create(service('headless', { clusterIP: 'None' }));
  assert.deepEqual(specOf(headless).clusterIPs, ['None']);
  assert.deepEqual(specOf(headless).ipFamilies, ['IPv4']);
  assert.equal(specOf(headless).ipFamilyPolicy, 'SingleStack');
  const selectorless = await create({ ...service('headless2', { clusterIP: 'None' }), spec: { clusterIP: 'None', ports: [{ port: 80 }] } });
  // headless without a selector defaults to RequireDualStack (both families listed)
  assert.equal(specOf(selectorless).ipFamilyPolicy, 'RequireDualStack');
  assert.deepEqual(specOf(selectorless).ipFamilies, ['IPv4', 'IPv6']);
  const ext = await create({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'ext' },
    spec: { type: 'ExternalName', externalName: 'example.com' },
  });
  const spec = specOf(ext);
  assert.equal(spec.clusterIP, undefined);
  assert.equal(spec.clusterIPs, undefined);
  assert.equal(spec.ipFamilies, undefined);
  assert.equal(spec.ipFamilyPolicy, undefined);
  await remove('headless');
  await remove('ext');
});

test('dry run allocates nothing: placeholders for picked values, real checks for requested ones', async () => {
  const before = (
    await r.store.getList(`${ipAddressKeyPrefix}/`, { recursive: true, predicate: { isEverything: true, matches: () => true } })
  ).items.length;
  const dry = await create(service('dry', { type: 'NodePort' }), { dryRun: true });
  assert.equal(specOf(dry).clusterIP, '10.96.0.0');
  assert.equal(specOf(dry).ports[0].nodePort, 32769);
  const dryFixed = await create(service('dry2', { clusterIP: '10.96.0.30', ports: [{ port: 80, nodePort: 30030 }], type: 'NodePort' }), {
    dryRun: true,
  });
  assert.equal(specOf(dryFixed).clusterIP, '10.96.0.30');
  assert.equal(await ipHolder('10.96.0.30'), undefined);
  assert.equal(await portHolder(30030), undefined);
  const after = (
    await r.store.getList(`${ipAddressKeyPrefix}/`, { recursive: true, predicate: { isEverything: true, matches: () => true } })
  ).items.length;
  assert.equal(after, before);
  // a dry run answers as the real request would when the address is taken
  const taken = await statusOf(create(service('dry3', { clusterIP: '10.96.0.10' }), { dryRun: true }));
  assert.equal(taken.code, 422);
  // a dry-run delete frees nothing
  await create(service('keep', { clusterIP: '10.96.0.31' }));
  await remove('keep', { dryRun: true });
  assert.equal(await ipHolder('10.96.0.31'), `${ns}/keep`);
});

test('NodePort Services get a node port per port; requested ones are honoured; conflicts are 422; delete frees them', async () => {
  const svc = await create(
    service('np', {
      type: 'NodePort',
      ports: [
        { name: 'http', port: 80 },
        { name: 'https', port: 443, nodePort: 30043 },
      ],
    }),
  );
  const ports = specOf(svc).ports;
  assert.ok(ports[0].nodePort >= 30000 && ports[0].nodePort <= 32767);
  assert.equal(ports[1].nodePort, 30043);
  assert.deepEqual(Object.keys(ports[0]), ['name', 'protocol', 'port', 'targetPort', 'nodePort']);
  assert.equal(specOf(svc).externalTrafficPolicy, 'Cluster');
  assert.equal(await portHolder(30043), `${ns}/np`);
  const conflict = await statusOf(create(service('np2', { type: 'NodePort', ports: [{ port: 80, nodePort: 30043 }] })));
  assert.equal(conflict.code, 422);
  assert.equal(
    conflict.message,
    'Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 30043: provided port is already allocated',
  );
  const outside = await statusOf(create(service('np3', { type: 'NodePort', ports: [{ port: 80, nodePort: 8080 }] })));
  assert.equal(
    outside.message,
    'Service "np3" is invalid: spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767',
  );
  // the failed creates took no address
  const ips = (await r.store.getList(`${ipAddressKeyPrefix}/`, { recursive: true, predicate: { isEverything: true, matches: () => true } }))
    .items;
  assert.ok(!ips.some((o) => ['np2', 'np3'].includes((o.spec as Spec).parentRef.name)));
  // (requested ports sit below the dynamic band, so no picked port can take them first)
  // TCP and UDP on one port number share one node port
  const dns = await create(
    service('dns', {
      type: 'NodePort',
      ports: [
        { name: 'udp', port: 53, protocol: 'UDP' },
        { name: 'tcp', port: 53, protocol: 'TCP' },
      ],
    }),
  );
  assert.equal(specOf(dns).ports[0].nodePort, specOf(dns).ports[1].nodePort);
  await remove('np');
  assert.equal(await portHolder(30043), undefined);
  assert.equal(await portHolder(ports[0].nodePort), undefined);
  await create(service('np4', { type: 'NodePort', ports: [{ port: 80, nodePort: 30043 }] }));
});

test('updates: replace keeps allocations; type changes take and free; added and removed ports', async () => {
  const created = await create(service('morph', { type: 'NodePort' }));
  const ip = specOf(created).clusterIP;
  const np = specOf(created).ports[0].nodePort;
  // kubectl replace with the original manifest keeps the address and the node port
  const replaced = await replace('morph', (cur) => ({ ...service('morph', { type: 'NodePort' }), metadata: { ...cur.metadata } }));
  assert.equal(specOf(replaced).clusterIP, ip);
  assert.equal(specOf(replaced).ports[0].nodePort, np);
  // a second port gets its own node port
  const twoPorts = await replace('morph', (cur) => ({
    ...cur,
    spec: { ...specOf(cur), ports: [...specOf(cur).ports.map((p: Spec) => ({ ...p, name: 'a' })), { name: 'b', port: 81 }] },
  }));
  const np2 = specOf(twoPorts).ports[1].nodePort;
  assert.ok(np2 >= 30000 && np2 !== np);
  assert.equal(await portHolder(np2), `${ns}/morph`);
  // dropping it frees it
  await replace('morph', (cur) => ({ ...cur, spec: { ...specOf(cur), ports: [{ ...specOf(cur).ports[0], name: undefined }] } }));
  assert.equal(await portHolder(np2), undefined);
  assert.equal(await portHolder(np), `${ns}/morph`);
  // NodePort -> ClusterIP drops and frees the node port, keeps the address
  const clusterIP = await replace('morph', (cur) => ({ ...cur, spec: { ...specOf(cur), type: 'ClusterIP' } }));
  assert.equal(specOf(clusterIP).ports[0].nodePort, undefined);
  assert.equal(specOf(clusterIP).clusterIP, ip);
  assert.equal(await portHolder(np), undefined);
  // ClusterIP -> ExternalName frees the address
  const ext = await replace('morph', (cur) => ({ ...cur, spec: { ...specOf(cur), type: 'ExternalName', externalName: 'example.com' } }));
  assert.equal(specOf(ext).clusterIP, undefined);
  assert.equal(specOf(ext).ipFamilies, undefined);
  assert.equal(await ipHolder(ip), undefined);
  // ExternalName -> ClusterIP takes a new one
  const back = await replace('morph', (cur) => {
    const spec: Spec = { ...specOf(cur), type: 'ClusterIP' };
    delete spec.externalName;
    return { ...cur, spec };
  });
  assert.match(specOf(back).clusterIP, /^10\./);
  assert.equal(await ipHolder(specOf(back).clusterIP), `${ns}/morph`);
  // changing the address is refused and takes nothing
  const change = await statusOf(
    replace('morph', (cur) => ({ ...cur, spec: { ...specOf(cur), clusterIP: '10.96.0.40', clusterIPs: ['10.96.0.40'] } })),
  );
  assert.equal(change.code, 422);
  assert.equal(await ipHolder('10.96.0.40'), undefined);
  // a node port taken by another Service is refused on update too, and nothing is freed
  const conflict = await statusOf(
    replace('morph', (cur) => ({ ...cur, spec: { ...specOf(cur), type: 'NodePort', ports: [{ port: 80, nodePort: 30043 }] } })),
  );
  assert.equal(conflict.details?.causes?.[0]?.field, 'spec.ports[0].nodePort');
  assert.equal(await ipHolder(specOf(back).clusterIP), `${ns}/morph`);
});

test('a dry-run update changes no allocation', async () => {
  const svc = await create(service('dryup', { type: 'NodePort' }));
  const np = specOf(svc).ports[0].nodePort;
  const dry = await replace('dryup', (cur) => ({ ...cur, spec: { ...specOf(cur), type: 'ClusterIP' } }), { dryRun: true });
  assert.equal(specOf(dry).type, 'ClusterIP');
  assert.equal(await portHolder(np), `${ns}/dryup`);
});

test('LoadBalancer with externalTrafficPolicy Local gets a health check node port, freed on delete', async () => {
  const svc = await create(service('lb', { type: 'LoadBalancer', externalTrafficPolicy: 'Local' }));
  const hc = specOf(svc).healthCheckNodePort;
  assert.ok(hc >= 30000 && hc <= 32767);
  assert.equal(await portHolder(hc), `${ns}/lb`);
  // without node ports for the LB, the health check port is still allocated
  const noNP = await create(service('lb2', { type: 'LoadBalancer', allocateLoadBalancerNodePorts: false, externalTrafficPolicy: 'Local' }));
  assert.equal(specOf(noNP).ports[0].nodePort, undefined);
  assert.ok(specOf(noNP).healthCheckNodePort > 0);
  // switching to Cluster frees it
  const cluster = await replace('lb', (cur) => ({ ...cur, spec: { ...specOf(cur), externalTrafficPolicy: 'Cluster' } }));
  assert.equal(specOf(cluster).healthCheckNodePort, undefined);
  assert.equal(await portHolder(hc), undefined);
  await remove('lb2');
  assert.equal(await portHolder(specOf(noNP).healthCheckNodePort), undefined);
});

test('ipFamilyPolicy on a single-stack cluster: RequireDualStack refused, PreferDualStack gets one address', async () => {
  const req = await statusOf(create(service('dual', { ipFamilyPolicy: 'RequireDualStack' })));
  assert.equal(
    req.message,
    'Service "dual" is invalid: spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
  );
  const v6 = await statusOf(create(service('v6', { ipFamilies: ['IPv6'] })));
  assert.equal(v6.details?.causes?.[0]?.message, 'Invalid value: "IPv6": not configured on this cluster');
  const pref = await create(service('pref', { ipFamilyPolicy: 'PreferDualStack' }));
  assert.deepEqual(specOf(pref).ipFamilies, ['IPv4']);
  assert.equal(specOf(pref).clusterIPs.length, 1);
});

test('dual-stack cluster: PreferDualStack and RequireDualStack get one address per family; downgrade frees the second', async () => {
  const dual = startReplica(etcd, { serviceClusterIPRange: '10.50.0.0/24,fd00:50::/112' });
  try {
    const svc = await dual.services.create(ctx(ns), service('ds', { ipFamilyPolicy: 'RequireDualStack' }));
    const spec = specOf(svc);
    assert.deepEqual(spec.ipFamilies, ['IPv4', 'IPv6']);
    assert.match(spec.clusterIPs[0], /^10\.50\.0\./);
    assert.match(spec.clusterIPs[1], /^fd00:50::/);
    assert.equal(await ipHolder(spec.clusterIPs[1]), `${ns}/ds`);
    const single = await dual.services.update(
      ctx(ns),
      'ds',
      async (cur) => ({ ...cur!, spec: { ...specOf(cur!), ipFamilyPolicy: 'SingleStack' } }),
      { allowCreate: false },
    );
    assert.deepEqual(specOf(single.object).clusterIPs, [spec.clusterIPs[0]]);
    assert.equal(await ipHolder(spec.clusterIPs[1]), undefined);
    const v6first = await dual.services.create(
      ctx(ns),
      service('ds6', { ipFamilies: ['IPv6', 'IPv4'], ipFamilyPolicy: 'PreferDualStack' }),
    );
    assert.match(specOf(v6first).clusterIP, /^fd00:50::/);
  } finally {
    await dual.close();
  }
});

test('200 Service creates spread over two replicas sharing one etcd get 200 distinct addresses', async () => {
  const a = startReplica(etcd);
  const b = startReplica(etcd);
  try {
    await ensureNamespace(a, 'many');
    const created = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).services.create(ctx('many'), service(`s${i}`))),
    );
    const ips = created.map((s) => specOf(s).clusterIP as string);
    assert.equal(new Set(ips).size, 200);
    for (const [i, ip] of ips.entries()) assert.equal(await ipHolder(ip), `many/s${i}`);
  } finally {
    await a.close();
    await b.close();
  }
});

test('200 creates over two replicas in a /24 (collisions likely) still get 200 distinct addresses, none the first', async () => {
  const range = { serviceClusterIPRange: '10.60.0.0/24' };
  const a = startReplica(etcd, range);
  const b = startReplica(etcd, range);
  try {
    await ensureNamespace(a, 'dense');
    const created = await Promise.all(
      Array.from({ length: 200 }, (_, i) => (i % 2 ? a : b).services.create(ctx('dense'), service(`d${i}`))),
    );
    const ips = created.map((s) => specOf(s).clusterIP as string);
    assert.equal(new Set(ips).size, 200);
    assert.ok(!ips.includes('10.60.0.1'));
  } finally {
    await a.close();
    await b.close();
  }
});
