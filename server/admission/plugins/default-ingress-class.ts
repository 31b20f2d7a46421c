// DefaultIngressClass (kube's plugin/pkg/admission/network/defaultingressclass): a new Ingress
// without spec.ingressClassName and without the legacy `kubernetes.io/ingress.class`
// annotation gets the IngressClass annotated `ingressclass.kubernetes.io/is-default-class:
// "true"`, the newest one when several are.

import type { KubeObject } from '../../../storage/interface.js';
import { asObject } from '../../registry/object.js';
import type { AdmissionPlugin, AdmissionPluginFactory } from '../plugin.js';
import { annotation, groupResource, listAll, newestDefault } from './shared.js';

export function isDefaultIngressClass(ic: KubeObject): boolean {
  return annotation(ic, 'ingressclass.kubernetes.io/is-default-class') === 'true';
}

export const defaultIngressClass: AdmissionPluginFactory = {
  name: 'DefaultIngressClass',
  create(deps): AdmissionPlugin {
    return {
      name: 'DefaultIngressClass',
      handles: (attrs) => attrs.operation === 'CREATE' && !attrs.subresource && groupResource(attrs) === 'networking.k8s.io/ingresses',
      async mutate(attrs, ctx) {
        const ing = attrs.object as KubeObject;
        const spec = asObject(ing.spec);
        if (spec.ingressClassName !== undefined && spec.ingressClassName !== null) return ing;
        if (annotation(ing, 'kubernetes.io/ingress.class') !== undefined) return ing;
        const classes = await listAll(deps.resolver, 'networking.k8s.io', 'v1', 'ingressclasses', '', ctx.cancellation?.signal);
        const def = newestDefault(classes, isDefaultIngressClass);
        if (!def) return ing;
        ing.spec = { ...spec, ingressClassName: def.metadata.name };
        return ing;
      },
    };
  },
};
