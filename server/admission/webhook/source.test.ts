import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ResourceInfo } from '../../apis/types.js';
import type { ListObject, RESTResource, ResourceResolver } from '../../registry/rest.js';
import type { AdmissionDeps } from '../plugin.js';
import { startWebhookSource } from './source.js';

/** webhook configurations whose first list never answers (the informer never syncs) */
const neverListed = {
  info: { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' } as ResourceInfo,
  list: (): Promise<ListObject> => new Promise<ListObject>(() => undefined),
} as unknown as RESTResource;

const resolver: ResourceResolver = {
  lookup: () => neverListed,
  all: () => [],
};

describe('startWebhookSource', () => {
  test('ready() for a request cancelled already rejects at once instead of waiting for the first list', async () => {
    const shutdown = new AbortController();
    const deps = { resolver, signal: shutdown.signal, featureGates: {}, log: () => undefined } as AdmissionDeps;
    const source = startWebhookSource('validatingwebhookconfigurations', deps);
    const cancelled = new AbortController();
    cancelled.abort();
    try {
      const outcome = await Promise.race([
        source.ready(cancelled.signal).then(
          () => 'ready',
          (err: Error) => `rejected: ${err.message}`,
        ),
        new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 1_000).unref()),
      ]);
      assert.equal(outcome, 'rejected: request canceled');
      assert.equal(source.synced, false);
    } finally {
      shutdown.abort();
    }
  });
});
