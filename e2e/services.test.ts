// Done-when 6 of the write-path issue: Services get ClusterIPs from --service-cluster-ip-range
// and node ports from --service-node-port-range, with kubectl 1.33 against real kapi processes
// sharing one etcd. Requested values are honoured, conflicts are kube-apiserver's 422s, a
// delete frees what the Service held, and 200 concurrent creates through two replicas get 200
// distinct addresses (the allocation state is etcd's, not a replica's).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  createNamespace,
  jsonOf,
  kubectl,
  kubectlOk,
  startEtcd,
  startKapi,
  uniqueName,
  type EtcdProcess,
  type KapiProcess,
} from './harness.js';

/** 10.96.0.0/12, kapi's default range: 10.96.0.1 .. 10.111.255.254 */
function inDefaultRange(ip: string): boolean {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) return false;
  const [a, b, c, d] = parts as [number, number, number, number];
  if (a !== 10 || b < 96 || b > 111) return false;
  return !(b === 96 && c === 0 && d === 0) && !(b === 111 && c === 255 && d === 255);
}

describe('Service ClusterIP and NodePort allocation', () => {
  let etcd: EtcdProcess;
  let a: KapiProcess;
  let b: KapiProcess;
  const ns = uniqueName('svc');
  const k = (...args: string[]) => kubectlOk([...args, '-n', ns], { kubeconfig: a.kubeconfig });
  const kFails = async (...args: string[]) => {
    const r = await kubectl([...args, '-n', ns], { kubeconfig: a.kubeconfig });
    assert.notEqual(r.code, 0, `kubectl ${args.join(' ')} should have failed: ${r.stdout}`);
    return r.stderr;
  };
  const clusterIPOf = async (name: string) => (await k('get', 'service', name, '-o', 'jsonpath={.spec.clusterIP}')).trim();

  before(async () => {
    etcd = await startEtcd();
    a = await startKapi({ etcdServers: etcd.endpoint });
    b = await startKapi({ etcdServers: etcd.endpoint });
    await createNamespace(a.http, ns);
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
  });

  it('the kubernetes Service holds the first address of the range, as an IPAddress; the range is the default ServiceCIDR', async () => {
    const ip = (
      await kubectlOk(['get', 'service', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}'], { kubeconfig: a.kubeconfig })
    ).trim();
    assert.equal(ip, '10.96.0.1');
    const parent = await kubectlOk(['get', 'ipaddress', '10.96.0.1', '-o', 'jsonpath={.spec.parentRef.namespace}/{.spec.parentRef.name}'], {
      kubeconfig: a.kubeconfig,
    });
    assert.equal(parent, 'default/kubernetes');
    // and the range itself is the default ServiceCIDR, as kube-apiserver 1.33 shows it
    const cidrs = await kubectlOk(['get', 'servicecidr', 'kubernetes', '-o', 'jsonpath={.spec.cidrs[*]}'], { kubeconfig: a.kubeconfig });
    assert.equal(cidrs, '10.96.0.0/12');
  });

  it('kubectl create service clusterip gets an address from the range, listed by kubectl get ipaddresses', async () => {
    await k('create', 'service', 'clusterip', 'x', '--tcp=80:8080');
    const ip = await clusterIPOf('x');
    assert.ok(inDefaultRange(ip), `${ip} is in 10.96.0.0/12`);
    const ipAddresses = await kubectlOk(['get', 'ipaddresses'], { kubeconfig: a.kubeconfig });
    assert.match(ipAddresses, new RegExp(`^${ip.replace(/\./g, '\\.')}\\s+services/${ns}/x\\s*$`, 'm'));
    const families = await k('get', 'service', 'x', '-o', 'jsonpath={.spec.ipFamilies[*]} {.spec.ipFamilyPolicy} {.spec.clusterIPs[*]}');
    assert.equal(families, `IPv4 SingleStack ${ip}`);
  });

  it('kubectl expose deployment gets an address from the range', async () => {
    await k('create', 'deployment', 'web', '--image=nginx:1.27', '--port=8080');
    await k('expose', 'deployment', 'web', '--port=80', '--target-port=8080');
    const ip = await clusterIPOf('web');
    assert.ok(inDefaultRange(ip), `${ip} is in 10.96.0.0/12`);
    assert.equal(await k('get', 'service', 'web', '-o', 'jsonpath={.spec.selector.app}'), 'web');
  });

  it('a NodePort Service gets a node port in 30000-32767; a requested one is honoured; a taken one is refused', async () => {
    await k('create', 'service', 'nodeport', 'np', '--tcp=80:8080');
    const port = Number(await k('get', 'service', 'np', '-o', 'jsonpath={.spec.ports[0].nodePort}'));
    assert.ok(port >= 30000 && port <= 32767, `node port ${port}`);
    assert.ok(inDefaultRange(await clusterIPOf('np')));
    // requested ports below the dynamic band (30000-30085) cannot have been picked for another Service
    await k('create', 'service', 'nodeport', 'np-fixed', '--tcp=80:8080', '--node-port=30008');
    assert.equal(await k('get', 'service', 'np-fixed', '-o', 'jsonpath={.spec.ports[0].nodePort}'), '30008');
    const stderr = await kFails('create', 'service', 'nodeport', 'np-taken', '--tcp=80:8080', '--node-port=30008');
    assert.match(
      stderr,
      /Service "np-taken" is invalid: spec\.ports\[0\]\.nodePort: Invalid value: 30008: provided port is already allocated/,
    );
    const outside = await kFails('create', 'service', 'nodeport', 'np-outside', '--tcp=80:8080', '--node-port=8080');
    assert.match(outside, /provided port is not in the valid range\. The range of valid ports is 30000-32767/);
    // deleting frees the port for the next Service
    await k('delete', 'service', 'np-fixed');
    await k('create', 'service', 'nodeport', 'np-again', '--tcp=80:8080', '--node-port=30008');
  });

  it('a requested address is honoured, refused while taken, and free again once its Service is deleted', async () => {
    await k('create', 'service', 'clusterip', 'fixed', '--tcp=80', '--clusterip=10.96.0.50');
    assert.equal(await clusterIPOf('fixed'), '10.96.0.50');
    const taken = await kFails('create', 'service', 'clusterip', 'fixed-taken', '--tcp=80', '--clusterip=10.96.0.50');
    assert.match(
      taken,
      /spec\.clusterIPs: Invalid value: \[\]string\{"10\.96\.0\.50"\}: failed to allocate IP 10\.96\.0\.50: provided IP is already allocated/,
    );
    await k('delete', 'service', 'fixed');
    const gone = await kubectl(['get', 'ipaddress', '10.96.0.50'], { kubeconfig: a.kubeconfig });
    assert.notEqual(gone.code, 0, 'the IPAddress is gone with its Service');
    // through the other replica, the freed address can be had again
    await kubectlOk(['create', 'service', 'clusterip', 'fixed-again', '--tcp=80', '--clusterip=10.96.0.50', '-n', ns], {
      kubeconfig: b.kubeconfig,
    });
    assert.equal(await clusterIPOf('fixed-again'), '10.96.0.50');
  });

  it('addresses outside the range are refused; headless and ExternalName Services take none', async () => {
    const outside = await kFails('create', 'service', 'clusterip', 'far', '--tcp=80', '--clusterip=192.168.7.7');
    assert.match(
      outside,
      /Service "far" is invalid: spec\.clusterIPs: Invalid value: \[\]string\{"192\.168\.7\.7"\}: failed to allocate IP 192\.168\.7\.7: /,
    );
    await k('create', 'service', 'clusterip', 'headless', '--clusterip=None', '--tcp=80');
    assert.equal(await clusterIPOf('headless'), 'None');
    await k('create', 'service', 'externalname', 'ext', '--external-name=example.com');
    assert.equal(await clusterIPOf('ext'), '');
    const list = jsonOf<{ items: Array<{ spec: { parentRef: { namespace: string; name: string } } }> }>(
      await a.http.get('/apis/networking.k8s.io/v1/ipaddresses'),
    );
    const held = list.items.filter((i) => i.spec.parentRef.namespace === ns).map((i) => i.spec.parentRef.name);
    assert.ok(!held.includes('headless') && !held.includes('ext') && !held.includes('far'), held.join(','));
  });

  it('kubectl create --dry-run=server allocates nothing', async () => {
    const before = jsonOf<{ items: unknown[] }>(await a.http.get('/apis/networking.k8s.io/v1/ipaddresses')).items.length;
    const ip = await k('create', 'service', 'clusterip', 'dry', '--tcp=80', '--dry-run=server', '-o', 'jsonpath={.spec.clusterIP}');
    // kube-apiserver's dry run shows the range's network address instead of picking one
    assert.equal(ip, '10.96.0.0');
    const after = jsonOf<{ items: unknown[] }>(await a.http.get('/apis/networking.k8s.io/v1/ipaddresses')).items.length;
    assert.equal(after, before);
    assert.notEqual((await kubectl(['get', 'service', 'dry', '-n', ns], { kubeconfig: a.kubeconfig })).code, 0);
  });

  it('100 concurrent creates through each of two replicas get 200 distinct addresses', async () => {
    const many = uniqueName('many');
    await createNamespace(a.http, many);
    const create = (replica: KapiProcess, i: number) =>
      replica.http.post(
        `/api/v1/namespaces/${many}/services`,
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: `s${i}` },
          spec: { selector: { app: `s${i}` }, ports: [{ port: 80 }] },
        },
        { timeoutMs: 60000 },
      );
    const responses = await Promise.all(Array.from({ length: 200 }, (_, i) => create(i % 2 ? a : b, i)));
    const ips = responses.map((res) => {
      assert.equal(res.status, 201, res.body);
      return jsonOf<{ spec: { clusterIP: string } }>(res).spec.clusterIP;
    });
    assert.equal(new Set(ips).size, 200);
    for (const ip of ips) assert.ok(inDefaultRange(ip), `${ip} is in 10.96.0.0/12`);
    // each address is one IPAddress naming the Service that got it
    const list = jsonOf<{ items: Array<{ metadata: { name: string }; spec: { parentRef: { namespace: string; name: string } } }> }>(
      await b.http.get('/apis/networking.k8s.io/v1/ipaddresses'),
    );
    const holder = new Map(list.items.map((i) => [i.metadata.name, `${i.spec.parentRef.namespace}/${i.spec.parentRef.name}`]));
    ips.forEach((ip, i) => assert.equal(holder.get(ip), `${many}/s${i}`));
  });
});
