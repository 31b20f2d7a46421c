// The rbac.authorization.k8s.io group's resources: names are any path segment, a PUT to a
// missing name creates it, and writes pass the escalation checks when the registry has them.

import { nameIsPathSegment } from '../../machinery/validation/names.js';
import { genericStrategy, groupProvider, type DescriptorContext } from '../descriptor.js';
import * as columns from '../printers/others.js';
import type { ResourceStrategy } from '../strategy.js';
import { roleReaderFrom, withEscalationChecks, type RbacResource } from './escalation-hooks.js';

const generic = genericStrategy({ validateName: nameIsPathSegment, allowCreateOnUpdate: true });

function rbacStrategy(resource: RbacResource): (c: DescriptorContext) => ResourceStrategy {
  return (c) => {
    const base = generic(c);
    const checker = c.options.rbacEscalation;
    return checker ? withEscalationChecks(resource, base, checker, roleReaderFrom(c.handler)) : base;
  };
}

export const rbacProvider = groupProvider('rbac.authorization.k8s.io', [
  {
    key: 'rbac.authorization.k8s.io/clusterrolebindings',
    strategy: rbacStrategy('clusterrolebindings'),
    table: columns.clusterRoleBindings,
  },
  { key: 'rbac.authorization.k8s.io/clusterroles', strategy: rbacStrategy('clusterroles') },
  { key: 'rbac.authorization.k8s.io/rolebindings', strategy: rbacStrategy('rolebindings'), table: columns.roleBindings },
  { key: 'rbac.authorization.k8s.io/roles', strategy: rbacStrategy('roles') },
]);
