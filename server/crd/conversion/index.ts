// Which storage a served version of a CRD uses: versions of a CRD with conversion strategy
// Webhook other than the storage version go through the webhook; everything else (strategy
// None, or the storage version itself) only has its apiVersion rewritten by the REST store.

import type { KubeObject, Storage } from '../../../storage/interface.js';
import type { ResourceInfo } from '../../apis/types.js';
import type { ResourceResolver } from '../../registry/rest.js';
import { specOf } from '../../registry/apiextensions/definition.js';
import { convertingStorage } from './storage.js';
import { WebhookConverter } from './webhook.js';

export function storageForVersion(
  crd: KubeObject,
  info: Pick<ResourceInfo, 'group' | 'version' | 'storageVersion'>,
  inner: Storage,
  resolver: ResourceResolver,
  log?: { warn(msg: string, kv?: Record<string, unknown>): void },
): Storage {
  const conversion = specOf(crd).conversion;
  if (conversion?.strategy !== 'Webhook' || !conversion.webhook || info.version === info.storageVersion) return inner;
  const converter = new WebhookConverter({ crdName: crd.metadata.name ?? '', webhook: conversion.webhook, resolver });
  return convertingStorage(inner, {
    converter,
    servedAPIVersion: `${info.group}/${info.version}`,
    storageAPIVersion: `${info.group}/${info.storageVersion}`,
    log,
  });
}
