import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compactRules, compactString, covers, ruleAllows, type RuleRequest } from './rules.js';
import type { PolicyRule } from './types.js';

const req = (o: Partial<RuleRequest>): RuleRequest => ({
  verb: 'get',
  isResourceRequest: true,
  path: '',
  apiGroup: '',
  resource: 'pods',
  subresource: '',
  name: '',
  ...o,
});

describe('RBAC rule matching', () => {
  it('verbs, groups and resources with wildcards', () => {
    const r: PolicyRule = { verbs: ['get', 'list'], apiGroups: ['apps'], resources: ['deployments'] };
    assert.equal(ruleAllows(req({ apiGroup: 'apps', resource: 'deployments' }), r), true);
    assert.equal(ruleAllows(req({ apiGroup: 'apps', resource: 'deployments', verb: 'delete' }), r), false);
    assert.equal(ruleAllows(req({ apiGroup: '', resource: 'deployments' }), r), false);
    assert.equal(ruleAllows(req({ apiGroup: 'x', resource: 'y', verb: 'z' }), { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }), true);
  });

  it('subresources: resource/subresource and */subresource, never the bare resource', () => {
    const scale: PolicyRule = { verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] };
    assert.equal(ruleAllows(req({ apiGroup: 'apps', resource: 'deployments', subresource: 'scale' }), scale), true);
    assert.equal(ruleAllows(req({ apiGroup: 'apps', resource: 'deployments' }), scale), false);
    assert.equal(ruleAllows(req({ resource: 'pods', subresource: 'status' }), scale), false);
    const log: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods/log'] };
    assert.equal(ruleAllows(req({ resource: 'pods', subresource: 'log' }), log), true);
    assert.equal(ruleAllows(req({ resource: 'pods' }), log), false);
    const pods: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
    assert.equal(ruleAllows(req({ resource: 'pods', subresource: 'exec' }), pods), false);
  });

  it('resourceNames: a request must name one; create and unnamed lists never match', () => {
    const r: PolicyRule = {
      verbs: ['get', 'list', 'create', 'deletecollection'],
      apiGroups: [''],
      resources: ['configmaps'],
      resourceNames: ['a'],
    };
    assert.equal(ruleAllows(req({ resource: 'configmaps', name: 'a' }), r), true);
    assert.equal(ruleAllows(req({ resource: 'configmaps', name: 'b' }), r), false);
    assert.equal(ruleAllows(req({ resource: 'configmaps', verb: 'create' }), r), false);
    assert.equal(ruleAllows(req({ resource: 'configmaps', verb: 'deletecollection' }), r), false);
    assert.equal(ruleAllows(req({ resource: 'configmaps', verb: 'list' }), r), false);
    // request-info turns fieldSelector=metadata.name=a into the name
    assert.equal(ruleAllows(req({ resource: 'configmaps', verb: 'list', name: 'a' }), r), true);
  });

  it('non-resource URLs: exact, `*`, and a trailing `*` prefix', () => {
    const r: PolicyRule = { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] };
    const nr = (path: string, verb = 'get') => req({ isResourceRequest: false, path, verb, resource: '' });
    assert.equal(ruleAllows(nr('/healthz'), r), true);
    assert.equal(ruleAllows(nr('/healthz/etcd'), r), false);
    assert.equal(ruleAllows(nr('/apis/apps/v1'), r), true);
    assert.equal(ruleAllows(nr('/apis'), r), false);
    assert.equal(ruleAllows(nr('/healthz', 'post'), r), false);
    assert.equal(ruleAllows(nr('/anything'), { verbs: ['*'], nonResourceURLs: ['*'] }), true);
    // a resource rule never matches a non-resource request
    assert.equal(ruleAllows(nr('/api'), { verbs: ['*'], apiGroups: ['*'], resources: ['*'] }), false);
  });
});

describe('RBAC coverage (escalation checks)', () => {
  it('wildcards and */subresource cover; resourceNames narrow', () => {
    assert.equal(
      covers([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments'] }])
        .covered,
      true,
    );
    assert.equal(
      covers(
        [{ verbs: ['get'], apiGroups: ['apps'], resources: ['*/scale'] }],
        [{ verbs: ['get'], apiGroups: ['apps'], resources: ['deployments/scale'] }],
      ).covered,
      true,
    );
    const named = covers(
      [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }],
      [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }],
    );
    assert.equal(named.covered, false);
    assert.equal(
      covers(
        [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }],
        [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }],
      ).covered,
      true,
    );
    assert.equal(
      covers([{ verbs: ['get'], nonResourceURLs: ['/apis/*'] }], [{ verbs: ['get'], nonResourceURLs: ['/apis/apps'] }]).covered,
      true,
    );
  });

  it('lists what is missing, compacted and rendered as kube does', () => {
    const { missing } = covers(
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      [{ verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: ['pods', 'secrets'] }],
    );
    const texts = compactRules(missing).map(compactString).sort();
    assert.deepEqual(texts, [
      '{APIGroups:[""], Resources:["pods"], Verbs:["list" "watch"]}',
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "watch"]}',
    ]);
    assert.equal(compactString({ verbs: ['get'], nonResourceURLs: ['/x'] }), '{NonResourceURLs:["/x"], Verbs:["get"]}');
    assert.equal(
      compactString({ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['a'] }),
      '{APIGroups:[""], Resources:["secrets"], ResourceNames:["a"], Verbs:["get"]}',
    );
  });
});
