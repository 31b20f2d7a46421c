import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseEncryptionConfiguration, parseGroupResource, groupResourceString } from './config.js';

const AES16 = 'c2VjcmV0IGlzIHNlY3VyZQ=='; // 16 bytes
const SB32 = 'YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY='; // 32 bytes

const yaml = (resources: string): string => `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
${resources}`;

function fails(text: string, message: string | RegExp, reload = false): void {
  assert.throws(
    () => parseEncryptionConfiguration(text, reload),
    (err: Error) => {
      if (typeof message === 'string') assert.equal(err.message, message);
      else assert.match(err.message, message);
      return true;
    },
  );
}

test('a full YAML configuration and its JSON twin decode alike', () => {
  const text = yaml(`  - resources: [secrets, configmaps]
    providers:
      - aescbc:
          keys:
            - name: key1
              secret: ${AES16}
      - identity: {}
  - resources: ['*.apps']
    providers:
      - secretbox:
          keys: [{name: k, secret: ${SB32}}]
  - resources: ['*.*']
    providers:
      - aesgcm:
          keys: [{name: g, secret: ${AES16}}]`);
  const config = parseEncryptionConfiguration(text, false);
  assert.deepEqual(
    config.resources.map((r) => r.resources),
    [['secrets', 'configmaps'], ['*.apps'], ['*.*']],
  );
  assert.deepEqual(config.resources[0]!.providers, [{ aescbc: { keys: [{ name: 'key1', secret: AES16 }] } }, { identity: {} }]);
  const json = JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources: config.resources });
  assert.deepEqual(parseEncryptionConfiguration(json, false), config);
});

test('the legacy v1 EncryptionConfig is read; other kinds and versions are not', () => {
  const legacy = `kind: EncryptionConfig\napiVersion: v1\nresources:\n  - resources: [secrets]\n    providers: [{identity: {}}]\n`;
  assert.equal(parseEncryptionConfiguration(legacy, false).resources.length, 1);
  fails(legacy.replace('EncryptionConfig', 'Pod'), 'no kind "Pod" is registered for version "v1" in scheme');
});

test('strict decoding: an unknown field is an error naming its path', () => {
  fails(
    yaml(`  - resources: [secrets]\n    providers:\n      - aesgcm:\n          keys: [{name: k, secret: ${AES16}, pandas: yes}]`),
    'strict decoding error: unknown field "resources[0].providers[0].aesgcm.keys[0].pandas"',
  );
});

test("kube's validation messages", () => {
  fails(yaml('  []').replace('resources:\n  []', 'resources: []'), 'resources: Required value: at least one resources is required');
  fails(
    yaml(`  - resources: []\n    providers: []`),
    '[resources[0].resources: Required value: at least one resources[0].resources is required, resources[0].providers: Required value: at least one resources[0].providers is required]',
  );
  fails(
    yaml(`  - resources: [secrets]\n    providers:\n      - aescbc:\n          keys: [{name: k, secret: c2hvcnQ=}]`),
    'resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 5, expected one of [16 24 32]',
  );
  fails(
    yaml(`  - resources: [secrets]\n    providers:\n      - secretbox:\n          keys: [{name: k, secret: ${AES16}}]`),
    'resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of [32]',
  );
  fails(
    yaml(`  - resources: [secrets]\n    providers:\n      - aesgcm:\n          keys: [{name: k, secret: 'not base64!'}]`),
    'resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded',
  );
  fails(
    yaml(`  - resources: [secrets]\n    providers:\n      - aesgcm:\n          keys: [{secret: ${AES16}}]`),
    'resources[0].providers[0].aesgcm.keys[0].name: Required value: name is a mandatory field for a key',
  );
  fails(
    yaml(`  - resources: [secrets]\n    providers:\n      - aesgcm:\n          keys: []`),
    'resources[0].providers[0].aesgcm.keys: Required value: at least one keys is required',
  );
  fails(
    yaml(`  - resources: [secrets]\n    providers:\n      - {}`),
    /resources\[0\]\.providers\[0\]: Invalid value: .*provider does not contain any of the expected providers/,
  );
  fails(
    yaml(`  - resources: [secrets]\n    providers:\n      - identity: {}\n        aescbc: {keys: [{name: k, secret: ${AES16}}]}`),
    /more than one provider specified in a single element, should split into different list elements/,
  );
});

test('resource names: duplicates, overlaps, capitals, *, non-REST, events.k8s.io, extensions, resource.*', () => {
  const one = (names: string) => yaml(`  - resources: [${names}]\n    providers: [{identity: {}}]`);
  fails(
    one('secrets, secrets'),
    'resources[0].resources: Invalid value: []string{"secrets", "secrets"}: the same resource cannot be specified multiple times',
  );
  fails(one("secrets, '*.'"), /using overlapping resources such as 'secrets' and '\*\.' in the same resource list is not allowed/);
  fails(one("'*.*', configmaps"), /overlapping resources/);
  fails(one("'deployments.apps', '*.apps'"), /overlapping resources/);
  fails(one('Secrets'), 'resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters');
  fails(one("'*'"), /use '\*\.' to encrypt all the resources from core API group or \*\.\* to encrypt all resources/);
  fails(
    one('serviceipallocations'),
    'resources[0].resources[0]: Invalid value: "serviceipallocations": resources which do not have REST API/s cannot be encrypted',
  );
  fails(one('events.events.k8s.io'), /objects are stored using the 'events' API group in etcd/);
  fails(one('deployments.extensions'), /'extensions' group has been removed/);
  fails(one("'secrets.*'"), /encrypting the same resource across groups is not supported/);
  assert.equal(parseEncryptionConfiguration(one("'*.', '*.apps'"), false).resources.length, 1);
});

test('KMS configurations are validated as kube does', () => {
  const kms = (body: string) => yaml(`  - resources: [secrets]\n    providers:\n${body}`);
  fails(
    kms('      - kms: {apiVersion: v2, name: "a:b", endpoint: "unix:///tmp/s.sock"}'),
    /invalid KMS provider name a:b, must not contain ':'/,
  );
  fails(
    kms('      - kms: {apiVersion: v2, name: p, endpoint: "tcp://x"}'),
    /unsupported scheme "tcp" for KMS provider, only unix is supported/,
  );
  fails(
    kms('      - kms: {apiVersion: v2, name: p, endpoint: "unix:///a"}\n      - kms: {apiVersion: v2, name: p, endpoint: "unix:///b"}'),
    /duplicate KMS provider name p, names must be unique/,
  );
  // a valid KMS block passes validation (kapi refuses it when building transformers)
  assert.equal(
    parseEncryptionConfiguration(kms('      - kms: {apiVersion: v2, name: p, endpoint: "unix:///tmp/p.sock"}'), false).resources.length,
    1,
  );
});

test('group/resource parsing as kube parses encryption resource names', () => {
  assert.deepEqual(parseGroupResource('secrets'), { group: '', resource: 'secrets' });
  assert.deepEqual(parseGroupResource('deployments.apps'), { group: 'apps', resource: 'deployments' });
  assert.deepEqual(parseGroupResource('*.'), { group: '', resource: '*' });
  assert.deepEqual(parseGroupResource('*.*'), { group: '*', resource: '*' });
  assert.equal(groupResourceString({ group: '', resource: '*' }), '*.');
  assert.equal(groupResourceString({ group: 'networking.k8s.io', resource: 'ingresses' }), 'ingresses.networking.k8s.io');
});
