import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DiscoveryCatalog } from '../apis/discovery.js';
import type { APIServiceIndex, APIServiceView } from './api-services.js';
import { withAggregatedGroups } from './discovery.js';

function remoteIndex(views: APIServiceView[]): APIServiceIndex {
  return {
    remote: (g, v) => views.find((a) => a.group === g && a.version === v),
    remotes: () => views,
    all: () => views,
    generation: 1,
    onChange: () => () => undefined,
    synced: Promise.resolve(),
    informer: undefined as never,
    stop: () => undefined,
  };
}

const remote = (group: string, version: string, groupPriorityMinimum: number, versionPriority: number): APIServiceView => ({
  name: `${version}.${group}`,
  group,
  version,
  groupPriorityMinimum,
  versionPriority,
  service: { namespace: 'ns', name: 'svc', port: 443 },
  insecureSkipTLSVerify: false,
  conditions: [],
});

const base: DiscoveryCatalog = {
  groups: () => [
    { name: 'apps', versions: ['v1'], preferredVersion: 'v1', groupPriority: 17800 },
    { name: 'crd.example.com', versions: ['v1'], preferredVersion: 'v1', groupPriority: 1000 },
  ],
  resourcesFor: () => [],
  isServed: (g) => g === 'apps' || g === 'crd.example.com',
};

describe('discovery with aggregated groups', () => {
  it('places remote groups by group priority, then APIService name, versions by version priority', () => {
    const catalog = withAggregatedGroups(
      base,
      remoteIndex([
        remote('metrics.k8s.io', 'v1beta1', 100, 100),
        remote('b.example.com', 'v1beta1', 1000, 10),
        remote('b.example.com', 'v1', 1000, 15),
        remote('a.example.com', 'v1', 1000, 15),
      ]),
    );
    assert.deepEqual(
      catalog.groups().map((g) => [g.name, g.versions.join(','), g.preferredVersion]),
      [
        ['apps', 'v1', 'v1'],
        ['a.example.com', 'v1', 'v1'],
        ['b.example.com', 'v1,v1beta1', 'v1'],
        ['crd.example.com', 'v1', 'v1'],
        ['metrics.k8s.io', 'v1beta1', 'v1beta1'],
      ],
    );
    assert.equal(catalog.isServed('metrics.k8s.io', 'v1beta1'), true);
    assert.equal(catalog.isServed('metrics.k8s.io', 'v1'), false);
  });

  it('leaves the local catalog alone without remote APIServices', () => {
    const catalog = withAggregatedGroups(base, remoteIndex([]));
    assert.deepEqual(catalog.groups(), base.groups());
  });
});
