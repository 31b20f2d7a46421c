// DefaultTolerationSeconds (kube-apiserver 1.33's plugin/pkg/admission/defaulttolerationseconds):
// a pod created or updated without a toleration for the not-ready or unreachable NoExecute taints
// gets one for each, bounded by --default-not-ready-toleration-seconds and
// --default-unreachable-toleration-seconds (300 s each), so its eviction from a failed node waits
// that long.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, isObject } from '../../registry/object.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { isCoreResource, reorderPodSpec } from './pod-plugins-common.js';

export const notReadyTaintKey = 'node.kubernetes.io/not-ready';
export const unreachableTaintKey = 'node.kubernetes.io/unreachable';
export const defaultTolerationSeconds = 300;

export interface DefaultTolerationSecondsOptions {
  notReadySeconds: number;
  unreachableSeconds: number;
}

/** whether a toleration covers key:NoExecute (an empty key or effect matches all) */
function tolerates(t: Record<string, unknown>, key: string): boolean {
  const k = typeof t.key === 'string' ? t.key : '';
  const effect = typeof t.effect === 'string' ? t.effect : '';
  return (k === key || k === '') && (effect === 'NoExecute' || effect === '');
}

export function defaultTolerationSecondsPlugin(opts: DefaultTolerationSecondsOptions): AdmissionPlugin {
  return {
    name: 'DefaultTolerationSeconds',
    handles: (attrs) => isCoreResource(attrs, 'pods') && attrs.object !== null,
    mutate(attrs) {
      const pod = attrs.object as KubeObject;
      if (attrs.operation !== 'CREATE' && attrs.operation !== 'UPDATE') return pod;
      const spec = isObject(pod.spec) ? pod.spec : (pod.spec = {});
      const tolerations = asArray(spec.tolerations).map(asObject);
      const added: Record<string, unknown>[] = [];
      if (!tolerations.some((t) => tolerates(t, notReadyTaintKey))) {
        added.push({ key: notReadyTaintKey, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: opts.notReadySeconds });
      }
      if (!tolerations.some((t) => tolerates(t, unreachableTaintKey))) {
        added.push({ key: unreachableTaintKey, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: opts.unreachableSeconds });
      }
      if (added.length) {
        spec.tolerations = [...asArray(spec.tolerations), ...added];
        reorderPodSpec(pod);
      }
      return pod;
    },
  };
}

function secondsFlag(deps: AdmissionDeps, name: string): number {
  const v = deps.flag?.(name);
  return typeof v === 'number' && Number.isFinite(v) ? v : defaultTolerationSeconds;
}

export const defaultTolerationSecondsFactory: AdmissionPluginFactory = {
  name: 'DefaultTolerationSeconds',
  create: (deps) =>
    defaultTolerationSecondsPlugin({
      notReadySeconds: secondsFlag(deps, 'default-not-ready-toleration-seconds'),
      unreachableSeconds: secondsFlag(deps, 'default-unreachable-toleration-seconds'),
    }),
};
