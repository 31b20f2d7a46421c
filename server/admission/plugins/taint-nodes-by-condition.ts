// TaintNodesByCondition (kube-apiserver 1.33's plugin/pkg/admission/nodetaint): a Node is
// created with the `node.kubernetes.io/not-ready:NoSchedule` taint, so nothing is scheduled on
// it before the node lifecycle controller has seen it Ready and removed the taint.

import type { KubeObject } from '../../../storage/interface.js';
import { asArray, asObject, isObject } from '../../registry/object.js';
import type { AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { isCoreResource } from './pod-plugins-common.js';
import { notReadyTaintKey } from './default-toleration-seconds.js';

export function taintNodesByConditionPlugin(): AdmissionPlugin {
  return {
    name: 'TaintNodesByCondition',
    handles: (attrs) => attrs.operation === 'CREATE' && isCoreResource(attrs, 'nodes') && attrs.object !== null,
    mutate(attrs) {
      const node = attrs.object as KubeObject;
      if (attrs.operation !== 'CREATE') return node;
      const spec = isObject(node.spec) ? node.spec : (node.spec = {});
      const taints = asArray(spec.taints);
      // a taint matches another with the same key and effect, whatever its value
      const present = taints.some((t) => asObject(t).key === notReadyTaintKey && asObject(t).effect === 'NoSchedule');
      if (!present) spec.taints = [...taints, { key: notReadyTaintKey, effect: 'NoSchedule' }];
      return node;
    },
  };
}

export const taintNodesByConditionFactory: AdmissionPluginFactory = {
  name: 'TaintNodesByCondition',
  create: () => taintNodesByConditionPlugin(),
};
