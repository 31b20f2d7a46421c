// The chain: mutating plugins in order, then validating ones; a plugin doing both runs in
// both phases; handles() skips; warnings and audit annotations reach the request; start-up
// errors for unknown and unimplemented plugins.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../storage/interface.js';
import type { AdmissionAttributes, ResourceResolver } from '../registry/rest.js';
import type { ResourceInfo } from '../apis/types.js';
import { buildAdmissionChain, chainOf, optionsFromQuery } from './chain.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory } from './plugin.js';

const info = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', subresources: [] } as unknown as ResourceInfo;

function attrs(obj: KubeObject | null): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: info,
    namespace: 'default',
    name: 'x',
    object: obj,
    oldObject: null,
    dryRun: false,
    user: { username: 'u', groups: [] },
  };
}

test('mutating plugins run in order on the previous output, then validating ones; both-phase plugins run twice', async () => {
  const calls: string[] = [];
  const label = (name: string): AdmissionPlugin => ({
    name,
    mutate(a) {
      calls.push(`mutate ${name}`);
      const o = structuredClone(a.object!) as KubeObject;
      o.metadata.labels = { ...(o.metadata.labels ?? {}), [name]: String(Object.keys(o.metadata.labels ?? {}).length) };
      return o;
    },
  });
  const both: AdmissionPlugin = {
    name: 'Both',
    mutate: (a, ctx) => {
      calls.push('mutate Both');
      ctx.warnings.push('from Both');
      ctx.auditAnnotations['both/key'] = 'v';
      return a.object!;
    },
    validate: (a) => {
      calls.push(`validate Both ${JSON.stringify(a.object?.metadata.labels)}`);
    },
  };
  const skipped: AdmissionPlugin = { name: 'Skipped', handles: () => false, mutate: () => assert.fail('skipped plugin ran') };
  const deny: AdmissionPlugin = {
    name: 'Deny',
    validate: () => {
      calls.push('validate Deny');
    },
  };
  const chain = chainOf([label('A'), skipped, both, label('B'), deny]);
  const warnings: string[] = [];
  const annotations: Record<string, string>[] = [];
  const hooks = chain.hooksFor({ warnings, onAuditAnnotations: (a) => annotations.push(a) });
  const out = await hooks.mutate!(attrs({ metadata: { name: 'x' } } as KubeObject));
  assert.deepEqual(out.metadata.labels, { A: '0', B: '1' });
  await hooks.validate!({ ...attrs(out) });
  assert.deepEqual(calls, ['mutate A', 'mutate Both', 'mutate B', 'validate Both {"A":"0","B":"1"}', 'validate Deny']);
  assert.deepEqual(warnings, ['from Both']);
  assert.deepEqual(annotations, [{ 'both/key': 'v' }]);
});

test('a validating refusal stops the chain and reaches the caller', async () => {
  const chain = chainOf([
    {
      name: 'No',
      validate: () => {
        throw new Error('refused');
      },
    },
    { name: 'Never', validate: () => assert.fail('ran after a refusal') },
  ]);
  await assert.rejects(chain.hooksFor({ warnings: [] }).validate!(attrs(null)), /refused/);
});

const deps: AdmissionDeps = {
  resolver: { lookup: () => undefined, all: () => [] } as ResourceResolver,
  signal: new AbortController().signal,
  featureGates: {},
  log: () => {},
};

test('buildAdmissionChain: kube order whatever the factory order; unknown or unimplemented explicit names fail start-up', async () => {
  const f = (name: string): AdmissionPluginFactory => ({ name, create: () => ({ name }) });
  const factories = [f('AlwaysDeny'), f('ValidatingAdmissionWebhook'), f('NamespaceLifecycle'), f('AlwaysAdmit')];
  const none = { enable: [], disable: [], admissionControl: [] };
  const chain = await buildAdmissionChain({ flags: { ...none, enable: ['AlwaysDeny', 'AlwaysAdmit'] }, configFile: '', factories, deps });
  assert.deepEqual(
    chain.plugins.map((p) => p.name),
    ['AlwaysAdmit', 'NamespaceLifecycle', 'ValidatingAdmissionWebhook', 'AlwaysDeny'],
  );
  const off = await buildAdmissionChain({ flags: { ...none, disable: ['ValidatingAdmissionWebhook'] }, configFile: '', factories, deps });
  assert.deepEqual(
    off.plugins.map((p) => p.name),
    ['NamespaceLifecycle'],
  );
  await assert.rejects(buildAdmissionChain({ flags: { ...none, enable: ['Bogus'] }, configFile: '', factories, deps }), {
    message: 'enable-admission-plugins plugin "Bogus" is unknown',
  });
  await assert.rejects(buildAdmissionChain({ flags: { ...none, enable: ['EventRateLimit'] }, configFile: '', factories, deps }), {
    message: 'admission plugin "EventRateLimit" is not implemented by kapi',
  });
});

test('options sent to webhooks come from the query of the verb', () => {
  assert.deepEqual(optionsFromQuery('CREATE', new URLSearchParams('fieldManager=kubectl-create&fieldValidation=Strict&dryRun=All')), {
    kind: 'CreateOptions',
    apiVersion: 'meta.k8s.io/v1',
    dryRun: ['All'],
    fieldManager: 'kubectl-create',
    fieldValidation: 'Strict',
  });
  assert.deepEqual(optionsFromQuery('DELETE', new URLSearchParams('gracePeriodSeconds=0&propagationPolicy=Background')), {
    kind: 'DeleteOptions',
    apiVersion: 'meta.k8s.io/v1',
    gracePeriodSeconds: 0,
    propagationPolicy: 'Background',
  });
});
