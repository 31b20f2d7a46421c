// The default RBAC policy of kube-apiserver 1.33 (its bootstrappolicy package, with the
// feature gates at their 1.33 defaults): ClusterRoles and ClusterRoleBindings labelled
// kubernetes.io/bootstrapping=rbac-defaults and annotated autoupdate "true", the
// system:controller:* roles bound to kube-system service accounts, and the Roles and
// RoleBindings in kube-system and kube-public. Rules are facts a client can read back
// (`kubectl get clusterrole admin -o yaml`), so they are kept exactly, order included.

import { JWKS_PATH, OPENID_CONFIGURATION_PATH } from '../machinery/oidc-paths.js';
import type { KubeObject } from '../../storage/interface.js';
import { RBAC_GROUP, ruleToJson, type PolicyRule, type Subject } from './rbac/types.js';
import {
  ALL_AUTHENTICATED,
  ALL_SERVICE_ACCOUNTS_GROUP,
  ALL_UNAUTHENTICATED,
  KUBE_CONTROLLER_MANAGER,
  KUBE_PROXY,
  KUBE_SCHEDULER,
  MONITORING_GROUP,
  SYSTEM_PRIVILEGED_GROUP,
} from './rbac/subjects.js';

export const BOOTSTRAP_LABEL = 'kubernetes.io/bootstrapping';
export const BOOTSTRAP_LABEL_VALUE = 'rbac-defaults';
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';
export const CONTROLLER_ROLE_PREFIX = 'system:controller:';

const READ = ['get', 'list', 'watch'];
const WRITE = ['create', 'update', 'patch', 'delete', 'deletecollection'];
const READ_WRITE = [...READ, ...WRITE];
const READ_UPDATE = ['get', 'list', 'watch', 'update', 'patch'];

const core = '';
const apps = 'apps';
const authn = 'authentication.k8s.io';
const authz = 'authorization.k8s.io';
const autoscaling = 'autoscaling';
const batch = 'batch';
const certificates = 'certificates.k8s.io';
const coordination = 'coordination.k8s.io';
const discovery = 'discovery.k8s.io';
const extensions = 'extensions';
const policy = 'policy';
const storage = 'storage.k8s.io';
const networking = 'networking.k8s.io';
const events = 'events.k8s.io';
const admissionregistration = 'admissionregistration.k8s.io';

const sorted = (l: readonly string[]) => [...l].sort();

/** a resource rule as kube's rule builder makes it: verbs, resources and names sorted */
function rule(verbs: readonly string[], groups: readonly string[], resources: readonly string[], names?: readonly string[]): PolicyRule {
  const r: PolicyRule = { verbs: sorted(verbs), apiGroups: [...groups], resources: sorted(resources) };
  if (names?.length) r.resourceNames = sorted(names);
  return r;
}

function urls(verbs: readonly string[], list: readonly string[]): PolicyRule {
  return { verbs: sorted(verbs), nonResourceURLs: sorted(list) };
}

const eventsRule = () => rule(['create', 'update', 'patch'], [core, events], ['events']);

export interface ClusterRoleSpec {
  name: string;
  labels?: Record<string, string>;
  rules?: PolicyRule[];
  /** matchLabels of each clusterRoleSelector */
  aggregateFrom?: Record<string, string>[];
}

export interface BindingSpec {
  name: string;
  namespace?: string;
  roleKind: 'ClusterRole' | 'Role';
  roleName: string;
  subjects: Subject[];
}

export interface RoleSpec {
  name: string;
  namespace: string;
  rules: PolicyRule[];
}

const group = (name: string): Subject => ({ kind: 'Group', apiGroup: RBAC_GROUP, name });
const user = (name: string): Subject => ({ kind: 'User', apiGroup: RBAC_GROUP, name });
const serviceAccount = (namespace: string, name: string): Subject => ({ kind: 'ServiceAccount', name, namespace });

const aggregateTo = (role: 'admin' | 'edit' | 'view') => ({ [`rbac.authorization.k8s.io/aggregate-to-${role}`]: 'true' });

/** the rules of system:node (also what the Node authorizer allows a node beyond its graph) */
export function nodeRules(): PolicyRule[] {
  return [
    rule(['create'], [authn], ['tokenreviews']),
    rule(['create'], [authz], ['subjectaccessreviews', 'localsubjectaccessreviews']),
    rule(READ, [core], ['services']),
    rule(['create', 'get', 'list', 'watch'], [core], ['nodes']),
    rule(['update', 'patch'], [core], ['nodes/status']),
    rule(['update', 'patch'], [core], ['nodes']),
    rule(['create', 'update', 'patch'], [core], ['events']),
    rule(READ, [core], ['pods']),
    rule(['create', 'delete'], [core], ['pods']),
    rule(['update', 'patch'], [core], ['pods/status']),
    rule(['create'], [core], ['pods/eviction']),
    rule(['get', 'list', 'watch'], [core], ['secrets', 'configmaps']),
    rule(['get'], [core], ['persistentvolumeclaims', 'persistentvolumes']),
    rule(['get'], [core], ['endpoints']),
    rule(['create', 'get', 'list', 'watch'], [certificates], ['certificatesigningrequests']),
    rule(['get', 'create', 'update', 'patch', 'delete'], [coordination], ['leases']),
    rule(['get'], [storage], ['volumeattachments']),
    rule(['create'], [core], ['serviceaccounts/token']),
    rule(['get', 'update', 'patch'], [core], ['persistentvolumeclaims/status']),
    rule(['get', 'watch', 'list'], [storage], ['csidrivers']),
    rule(['get', 'create', 'update', 'patch', 'delete'], [storage], ['csinodes']),
    rule(['get', 'list', 'watch'], ['node.k8s.io'], ['runtimeclasses']),
  ];
}

export function clusterRoles(): ClusterRoleSpec[] {
  return [
    {
      name: 'cluster-admin',
      rules: [rule(['*'], ['*'], ['*']), urls(['*'], ['*'])],
    },
    {
      name: 'system:discovery',
      rules: [
        urls(
          ['get'],
          ['/livez', '/readyz', '/healthz', '/version', '/version/', '/openapi', '/openapi/*', '/api', '/api/*', '/apis', '/apis/*'],
        ),
      ],
    },
    {
      name: 'system:monitoring',
      rules: [urls(['get'], ['/metrics', '/metrics/slis', '/livez', '/readyz', '/healthz', '/livez/*', '/readyz/*', '/healthz/*'])],
    },
    {
      name: 'system:basic-user',
      rules: [
        rule(['create'], [authz], ['selfsubjectaccessreviews', 'selfsubjectrulesreviews']),
        rule(['create'], [authn], ['selfsubjectreviews']),
      ],
    },
    {
      name: 'system:public-info-viewer',
      rules: [urls(['get'], ['/livez', '/readyz', '/healthz', '/version', '/version/'])],
    },
    { name: 'admin', aggregateFrom: [aggregateTo('admin')] },
    { name: 'edit', labels: aggregateTo('admin'), aggregateFrom: [aggregateTo('edit')] },
    { name: 'view', labels: aggregateTo('edit'), aggregateFrom: [aggregateTo('view')] },
    {
      name: 'system:aggregate-to-admin',
      labels: aggregateTo('admin'),
      rules: [
        rule(['create'], [authz], ['localsubjectaccessreviews']),
        rule(READ_WRITE, ['rbac.authorization.k8s.io'], ['roles', 'rolebindings']),
      ],
    },
    {
      name: 'system:aggregate-to-edit',
      labels: aggregateTo('edit'),
      rules: [
        rule(READ, [core], ['pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward', 'secrets', 'services/proxy']),
        rule(['impersonate'], [core], ['serviceaccounts']),
        rule(WRITE, [core], ['pods', 'pods/attach', 'pods/proxy', 'pods/exec', 'pods/portforward']),
        rule(['create'], [core], ['pods/eviction']),
        rule(
          WRITE,
          [core],
          [
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'serviceaccounts',
            'services',
            'services/proxy',
            'persistentvolumeclaims',
            'configmaps',
            'secrets',
            'events',
          ],
        ),
        rule(['create'], [core], ['serviceaccounts/token']),
        rule(
          WRITE,
          [apps],
          [
            'statefulsets',
            'statefulsets/scale',
            'daemonsets',
            'deployments',
            'deployments/scale',
            'deployments/rollback',
            'replicasets',
            'replicasets/scale',
          ],
        ),
        rule(WRITE, [autoscaling], ['horizontalpodautoscalers']),
        rule(WRITE, [batch], ['jobs', 'cronjobs']),
        rule(
          WRITE,
          [extensions],
          [
            'daemonsets',
            'deployments',
            'deployments/scale',
            'deployments/rollback',
            'ingresses',
            'replicasets',
            'replicasets/scale',
            'replicationcontrollers/scale',
            'networkpolicies',
          ],
        ),
        rule(WRITE, [policy], ['poddisruptionbudgets']),
        rule(WRITE, [networking], ['networkpolicies', 'ingresses']),
        rule(READ_WRITE, [coordination], ['leases']),
      ],
    },
    {
      name: 'system:aggregate-to-view',
      labels: aggregateTo('view'),
      rules: [
        rule(
          READ,
          [core],
          [
            'pods',
            'replicationcontrollers',
            'replicationcontrollers/scale',
            'serviceaccounts',
            'services',
            'services/status',
            'endpoints',
            'persistentvolumeclaims',
            'persistentvolumeclaims/status',
            'configmaps',
          ],
        ),
        rule(
          READ,
          [core],
          [
            'limitranges',
            'resourcequotas',
            'bindings',
            'events',
            'pods/status',
            'resourcequotas/status',
            'namespaces/status',
            'replicationcontrollers/status',
            'pods/log',
          ],
        ),
        rule(READ, [core], ['namespaces']),
        rule(READ, [discovery], ['endpointslices']),
        rule(
          READ,
          [apps],
          [
            'controllerrevisions',
            'statefulsets',
            'statefulsets/status',
            'statefulsets/scale',
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/status',
            'deployments/scale',
            'replicasets',
            'replicasets/status',
            'replicasets/scale',
          ],
        ),
        rule(READ, [autoscaling], ['horizontalpodautoscalers', 'horizontalpodautoscalers/status']),
        rule(READ, [batch], ['jobs', 'cronjobs', 'cronjobs/status', 'jobs/status']),
        rule(
          READ,
          [extensions],
          [
            'daemonsets',
            'daemonsets/status',
            'deployments',
            'deployments/scale',
            'deployments/status',
            'ingresses',
            'ingresses/status',
            'replicasets',
            'replicasets/scale',
            'replicasets/status',
            'replicationcontrollers/scale',
            'networkpolicies',
          ],
        ),
        rule(READ, [policy], ['poddisruptionbudgets', 'poddisruptionbudgets/status']),
        rule(READ, [networking], ['networkpolicies', 'ingresses', 'ingresses/status']),
      ],
    },
    {
      name: 'system:heapster',
      rules: [rule(READ, [core], ['events', 'pods', 'nodes', 'namespaces']), rule(READ, [extensions], ['deployments'])],
    },
    { name: 'system:node', rules: nodeRules() },
    {
      name: 'system:node-problem-detector',
      rules: [rule(['get'], [core], ['nodes']), rule(['patch'], [core], ['nodes/status']), eventsRule()],
    },
    {
      name: 'system:kubelet-api-admin',
      rules: [
        rule(['get', 'list', 'watch'], [core], ['nodes']),
        rule(['proxy'], [core], ['nodes']),
        rule(['*'], [core], ['nodes/proxy', 'nodes/metrics', 'nodes/stats', 'nodes/log']),
      ],
    },
    {
      name: 'system:node-bootstrapper',
      rules: [rule(['create', 'get', 'list', 'watch'], [certificates], ['certificatesigningrequests'])],
    },
    {
      name: 'system:auth-delegator',
      rules: [rule(['create'], [authn], ['tokenreviews']), rule(['create'], [authz], ['subjectaccessreviews'])],
    },
    { name: 'system:kube-aggregator', rules: [rule(READ, [core], ['services', 'endpoints'])] },
    {
      name: 'system:kube-controller-manager',
      rules: [
        eventsRule(),
        rule(['create'], [coordination], ['leases']),
        rule(['get', 'update'], [coordination], ['leases'], ['kube-controller-manager']),
        rule(['create'], [core], ['secrets', 'serviceaccounts']),
        rule(['delete'], [core], ['secrets']),
        rule(['get'], [core], ['namespaces', 'secrets', 'serviceaccounts', 'configmaps']),
        rule(['update'], [core], ['secrets', 'serviceaccounts']),
        rule(['create'], [authn], ['tokenreviews']),
        rule(['create'], [authz], ['subjectaccessreviews']),
        rule(['list', 'watch'], ['*'], ['*']),
        rule(['create'], [core], ['serviceaccounts/token']),
      ],
    },
    { name: 'system:kube-dns', rules: [rule(['list', 'watch'], [core], ['endpoints', 'services'])] },
    {
      name: 'system:persistent-volume-provisioner',
      rules: [
        rule(['get', 'list', 'watch', 'create', 'delete'], [core], ['persistentvolumes']),
        rule(['get', 'list', 'watch', 'update'], [core], ['persistentvolumeclaims']),
        rule(READ, [storage], ['storageclasses']),
        rule(['watch'], [core], ['events']),
        eventsRule(),
      ],
    },
    {
      name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
      rules: [rule(['create'], [certificates], ['certificatesigningrequests/nodeclient'])],
    },
    {
      name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
      rules: [rule(['create'], [certificates], ['certificatesigningrequests/selfnodeclient'])],
    },
    {
      name: 'system:volume-scheduler',
      rules: [
        rule(READ_UPDATE, [core], ['persistentvolumes']),
        rule(READ, [storage], ['storageclasses']),
        rule(READ_UPDATE, [core], ['persistentvolumeclaims']),
      ],
    },
    {
      name: 'system:certificates.k8s.io:legacy-unknown-approver',
      rules: [rule(['approve'], [certificates], ['signers'], ['kubernetes.io/legacy-unknown'])],
    },
    {
      name: 'system:certificates.k8s.io:kubelet-serving-approver',
      rules: [rule(['approve'], [certificates], ['signers'], ['kubernetes.io/kubelet-serving'])],
    },
    {
      name: 'system:certificates.k8s.io:kube-apiserver-client-approver',
      rules: [rule(['approve'], [certificates], ['signers'], ['kubernetes.io/kube-apiserver-client'])],
    },
    {
      name: 'system:certificates.k8s.io:kube-apiserver-client-kubelet-approver',
      rules: [rule(['approve'], [certificates], ['signers'], ['kubernetes.io/kube-apiserver-client-kubelet'])],
    },
    {
      name: 'system:service-account-issuer-discovery',
      rules: [urls(['get'], [OPENID_CONFIGURATION_PATH, `${OPENID_CONFIGURATION_PATH}/`, JWKS_PATH, `${JWKS_PATH}/`])],
    },
    {
      name: 'system:node-proxier',
      rules: [
        rule(['list', 'watch'], [core], ['services', 'endpoints']),
        rule(['get', 'list', 'watch'], [core], ['nodes']),
        eventsRule(),
        rule(['list', 'watch'], [networking], ['servicecidrs']),
        rule(['list', 'watch'], [discovery], ['endpointslices']),
      ],
    },
    {
      name: 'system:kube-scheduler',
      rules: [
        eventsRule(),
        rule(['create'], [coordination], ['leases']),
        rule(['get', 'update'], [coordination], ['leases'], ['kube-scheduler']),
        rule(READ, [core], ['nodes']),
        rule(['get', 'list', 'watch', 'delete'], [core], ['pods']),
        rule(['create'], [core], ['pods/binding', 'bindings']),
        rule(['patch', 'update'], [core], ['pods/status']),
        rule(READ, [core], ['services', 'replicationcontrollers']),
        rule(READ, [apps, extensions], ['replicasets']),
        rule(READ, [apps], ['statefulsets']),
        rule(READ, [policy], ['poddisruptionbudgets']),
        rule(READ, [core], ['persistentvolumeclaims', 'persistentvolumes']),
        rule(['create'], [authn], ['tokenreviews']),
        rule(['create'], [authz], ['subjectaccessreviews']),
        rule(READ, [storage], ['csinodes']),
        rule(['get', 'list', 'watch'], [storage], ['volumeattachments']),
        rule(READ, [core], ['namespaces']),
        rule(READ, [storage], ['csidrivers']),
        rule(READ, [storage], ['csistoragecapacities']),
      ],
    },
  ];
}

export function clusterRoleBindings(): BindingSpec[] {
  const b = (name: string, ...subjects: Subject[]): BindingSpec => ({ name, roleKind: 'ClusterRole', roleName: name, subjects });
  return [
    b('cluster-admin', group(SYSTEM_PRIVILEGED_GROUP)),
    b('system:monitoring', group(MONITORING_GROUP)),
    b('system:discovery', group(ALL_AUTHENTICATED)),
    b('system:basic-user', group(ALL_AUTHENTICATED)),
    b('system:public-info-viewer', group(ALL_AUTHENTICATED), group(ALL_UNAUTHENTICATED)),
    b('system:node-proxier', user(KUBE_PROXY)),
    b('system:kube-controller-manager', user(KUBE_CONTROLLER_MANAGER)),
    b('system:kube-dns', serviceAccount('kube-system', 'kube-dns')),
    b('system:kube-scheduler', user(KUBE_SCHEDULER)),
    b('system:volume-scheduler', user(KUBE_SCHEDULER)),
    // kept without subjects since the Node authorizer replaced it
    b('system:node'),
    b('system:service-account-issuer-discovery', group(ALL_SERVICE_ACCOUNTS_GROUP)),
  ];
}

/** the system:controller:* roles, each bound to the kube-system service account of its name */
export function controllerRoles(): ClusterRoleSpec[] {
  const c = (name: string, ...rules: PolicyRule[]): ClusterRoleSpec => ({ name: CONTROLLER_ROLE_PREFIX + name, rules });
  return [
    c(
      'attachdetach-controller',
      rule(['list', 'watch'], [core], ['persistentvolumes', 'persistentvolumeclaims']),
      rule(['get', 'list', 'watch'], [core], ['nodes']),
      rule(['patch', 'update'], [core], ['nodes/status']),
      rule(['list', 'watch'], [core], ['pods']),
      eventsRule(),
      rule(['get', 'create', 'delete', 'list', 'watch'], [storage], ['volumeattachments']),
      rule(['get', 'watch', 'list'], [storage], ['csidrivers']),
      rule(['get', 'watch', 'list'], [storage], ['csinodes']),
    ),
    c(
      'clusterrole-aggregation-controller',
      rule(['escalate', 'get', 'list', 'watch', 'update', 'patch'], ['rbac.authorization.k8s.io'], ['clusterroles']),
    ),
    c(
      'cronjob-controller',
      rule(['get', 'list', 'watch', 'update'], [batch], ['cronjobs']),
      rule(['get', 'list', 'watch', 'create', 'update', 'delete', 'patch'], [batch], ['jobs']),
      rule(['update'], [batch], ['cronjobs/status']),
      rule(['update'], [batch], ['cronjobs/finalizers']),
      rule(['list', 'watch', 'delete'], [core], ['pods']),
      eventsRule(),
    ),
    c(
      'daemon-set-controller',
      rule(['get', 'list', 'watch'], [extensions, apps], ['daemonsets']),
      rule(['update'], [extensions, apps], ['daemonsets/status']),
      rule(['update'], [extensions, apps], ['daemonsets/finalizers']),
      rule(['list', 'watch'], [core], ['nodes']),
      rule(['list', 'watch', 'create', 'delete', 'patch'], [core], ['pods']),
      rule(['create'], [core], ['pods/binding']),
      rule(['get', 'list', 'watch', 'create', 'delete', 'update', 'patch'], [apps], ['controllerrevisions']),
      eventsRule(),
    ),
    c(
      'deployment-controller',
      rule(['get', 'list', 'watch', 'update'], [extensions, apps], ['deployments']),
      rule(['update'], [extensions, apps], ['deployments/status']),
      rule(['update'], [extensions, apps], ['deployments/finalizers']),
      rule(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], [apps, extensions], ['replicasets']),
      rule(['get', 'list', 'watch', 'update'], [core], ['pods']),
      eventsRule(),
    ),
    c(
      'disruption-controller',
      rule(['get', 'list', 'watch'], [extensions, apps], ['deployments']),
      rule(['get', 'list', 'watch'], [apps, extensions], ['replicasets']),
      rule(['get', 'list', 'watch'], [core], ['replicationcontrollers']),
      rule(['get', 'list', 'watch'], [policy], ['poddisruptionbudgets']),
      rule(['get', 'list', 'watch'], [apps], ['statefulsets']),
      rule(['update'], [policy], ['poddisruptionbudgets/status']),
      rule(['patch', 'update'], [core], ['pods/status']),
      rule(['get'], ['*'], ['*/scale']),
      eventsRule(),
    ),
    c(
      'endpoint-controller',
      rule(['get', 'list', 'watch'], [core], ['services', 'pods']),
      rule(['get', 'list', 'watch', 'create', 'update', 'delete'], [core], ['endpoints']),
      rule(['create'], [core], ['endpoints/restricted']),
      eventsRule(),
    ),
    c(
      'endpointslice-controller',
      rule(['get', 'list', 'watch'], [core], ['services', 'pods', 'nodes']),
      rule(['update'], [core], ['services/finalizers']),
      rule(['get', 'list', 'watch', 'create', 'update', 'delete'], [discovery], ['endpointslices']),
      eventsRule(),
    ),
    c(
      'endpointslicemirroring-controller',
      rule(['get', 'list', 'watch'], [core], ['services', 'endpoints']),
      rule(['update'], [core], ['services/finalizers']),
      rule(['update'], [core], ['endpoints/finalizers']),
      rule(['get', 'list', 'watch', 'create', 'update', 'delete'], [discovery], ['endpointslices']),
      eventsRule(),
    ),
    c(
      'expand-controller',
      rule(['get', 'list', 'watch', 'update', 'patch'], [core], ['persistentvolumes']),
      rule(['update', 'patch'], [core], ['persistentvolumeclaims/status']),
      rule(['get', 'list', 'watch'], [core], ['persistentvolumeclaims']),
      eventsRule(),
      rule(['get'], [core], ['services']),
    ),
    c(
      'ephemeral-volume-controller',
      rule(['get', 'list', 'watch'], [core], ['pods']),
      rule(['update'], [core], ['pods/finalizers']),
      rule(['get', 'list', 'watch', 'create'], [core], ['persistentvolumeclaims']),
      eventsRule(),
    ),
    c('generic-garbage-collector', rule(['get', 'list', 'watch', 'patch', 'update', 'delete'], ['*'], ['*']), eventsRule()),
    c(
      'horizontal-pod-autoscaler',
      rule(['get', 'list', 'watch'], [autoscaling], ['horizontalpodautoscalers']),
      rule(['update'], [autoscaling], ['horizontalpodautoscalers/status']),
      rule(['get', 'update'], ['*'], ['*/scale']),
      rule(['list', 'watch'], [core], ['pods']),
      rule(['list', 'watch'], ['metrics.k8s.io'], ['pods']),
      rule(['get', 'list', 'watch'], ['custom.metrics.k8s.io'], ['*']),
      rule(['get', 'list', 'watch'], ['external.metrics.k8s.io'], ['*']),
      eventsRule(),
    ),
    c(
      'job-controller',
      rule(['get', 'list', 'watch', 'update', 'patch'], [batch], ['jobs']),
      rule(['update'], [batch], ['jobs/status']),
      rule(['update'], [batch], ['jobs/finalizers']),
      rule(['list', 'watch', 'create', 'delete', 'patch'], [core], ['pods']),
      eventsRule(),
    ),
    c(
      'namespace-controller',
      rule(['get', 'list', 'watch', 'delete'], [core], ['namespaces']),
      rule(['update'], [core], ['namespaces/finalize', 'namespaces/status']),
      rule(['get', 'list', 'watch', 'delete', 'deletecollection'], ['*'], ['*']),
    ),
    c(
      'node-controller',
      rule(['get', 'list', 'watch', 'update', 'delete', 'patch'], [core], ['nodes']),
      rule(['patch', 'update'], [core], ['nodes/status']),
      rule(['patch', 'update'], [core], ['pods/status']),
      rule(['list', 'watch', 'get', 'delete'], [core], ['pods']),
      eventsRule(),
    ),
    c(
      'persistent-volume-binder',
      rule(['get', 'list', 'watch', 'update', 'create', 'delete'], [core], ['persistentvolumes']),
      rule(['update'], [core], ['persistentvolumes/status']),
      rule(['get', 'list', 'watch', 'update'], [core], ['persistentvolumeclaims']),
      rule(['update'], [core], ['persistentvolumeclaims/status']),
      rule(['list', 'watch', 'get', 'create', 'delete'], [core], ['pods']),
      rule(['get', 'list', 'watch'], [storage], ['storageclasses']),
      rule(['list', 'watch'], [core], ['nodes']),
      eventsRule(),
      rule(['watch'], [core], ['events']),
      rule(['get'], [core], ['services']),
    ),
    c(
      'pod-garbage-collector',
      rule(['list', 'watch', 'delete'], [core], ['pods']),
      rule(['get', 'list', 'watch'], [core], ['nodes']),
      rule(['patch'], [core], ['pods/status']),
    ),
    c(
      'replicaset-controller',
      rule(['get', 'list', 'watch', 'update'], [apps, extensions], ['replicasets']),
      rule(['update'], [apps, extensions], ['replicasets/status']),
      rule(['update'], [apps, extensions], ['replicasets/finalizers']),
      rule(['list', 'watch', 'patch', 'create', 'delete'], [core], ['pods']),
      eventsRule(),
    ),
    c(
      'replication-controller',
      rule(['get', 'list', 'watch', 'update'], [core], ['replicationcontrollers']),
      rule(['update'], [core], ['replicationcontrollers/status']),
      rule(['update'], [core], ['replicationcontrollers/finalizers']),
      rule(['list', 'watch', 'patch', 'create', 'delete'], [core], ['pods']),
      eventsRule(),
    ),
    c('resourcequota-controller', rule(['list', 'watch'], ['*'], ['*']), rule(['update'], [core], ['resourcequotas/status']), eventsRule()),
    c('route-controller', rule(['list', 'watch'], [core], ['nodes']), rule(['patch'], [core], ['nodes/status']), eventsRule()),
    c('service-account-controller', rule(['create'], [core], ['serviceaccounts']), eventsRule()),
    c(
      'service-controller',
      rule(['get', 'list', 'watch'], [core], ['services']),
      rule(['patch', 'update'], [core], ['services/status']),
      rule(['list', 'watch'], [core], ['nodes']),
      eventsRule(),
    ),
    c(
      'service-cidrs-controller',
      rule(['get', 'list', 'watch', 'patch', 'update'], [networking], ['servicecidrs']),
      rule(['patch', 'update'], [networking], ['servicecidrs/finalizers']),
      rule(['patch', 'update'], [networking], ['servicecidrs/status']),
      rule(['get', 'list', 'watch'], [networking], ['ipaddresses']),
      eventsRule(),
    ),
    c(
      'statefulset-controller',
      rule(['list', 'watch'], [core], ['pods']),
      rule(['get', 'list', 'watch'], [apps], ['statefulsets']),
      rule(['update'], [apps], ['statefulsets/status']),
      rule(['update'], [apps], ['statefulsets/finalizers']),
      rule(['get', 'create', 'delete', 'update', 'patch'], [core], ['pods']),
      rule(['get', 'create', 'delete', 'update', 'patch', 'list', 'watch'], [apps], ['controllerrevisions']),
      rule(['get', 'create', 'list', 'watch'], [core], ['persistentvolumeclaims']),
      rule(['update', 'delete'], [core], ['persistentvolumeclaims']),
      rule(['update'], [core], ['pods/finalizers']),
      eventsRule(),
    ),
    c('ttl-controller', rule(['update', 'patch', 'list', 'watch'], [core], ['nodes']), eventsRule()),
    c(
      'certificate-controller',
      rule(['get', 'list', 'watch', 'delete'], [certificates], ['certificatesigningrequests']),
      rule(['update'], [certificates], ['certificatesigningrequests/status', 'certificatesigningrequests/approval']),
      rule(['approve'], [certificates], ['signers'], ['kubernetes.io/kube-apiserver-client-kubelet']),
      rule(
        ['sign'],
        [certificates],
        ['signers'],
        [
          'kubernetes.io/legacy-unknown',
          'kubernetes.io/kube-apiserver-client',
          'kubernetes.io/kube-apiserver-client-kubelet',
          'kubernetes.io/kubelet-serving',
        ],
      ),
      rule(['create'], [authz], ['subjectaccessreviews']),
      eventsRule(),
    ),
    c(
      'pvc-protection-controller',
      rule(['get', 'list', 'watch', 'update'], [core], ['persistentvolumeclaims']),
      rule(['list', 'watch', 'get'], [core], ['pods']),
      eventsRule(),
    ),
    c('pv-protection-controller', rule(['get', 'list', 'watch', 'update'], [core], ['persistentvolumes']), eventsRule()),
    c('ttl-after-finished-controller', rule(['get', 'list', 'watch', 'delete'], [batch], ['jobs']), eventsRule()),
    c('root-ca-cert-publisher', rule(['create', 'update'], [core], ['configmaps']), eventsRule()),
    c(
      'validatingadmissionpolicy-status-controller',
      rule(['get', 'list', 'watch'], [admissionregistration], ['validatingadmissionpolicies']),
      rule(['get', 'patch', 'update'], [admissionregistration], ['validatingadmissionpolicies/status']),
      eventsRule(),
    ),
    c(
      'legacy-service-account-token-cleaner',
      rule(['get'], [core], ['configmaps'], ['kube-apiserver-legacy-service-account-token-tracking']),
      rule(['patch', 'delete'], [core], ['secrets']),
    ),
    c(
      'selinux-warning-controller',
      eventsRule(),
      rule(['get', 'list', 'watch'], [core], ['persistentvolumes']),
      rule(['get', 'list', 'watch'], [core], ['persistentvolumeclaims']),
      rule(['get', 'list', 'watch'], [core], ['pods']),
      rule(['get', 'list', 'watch'], [storage], ['csidrivers']),
    ),
  ];
}

export function controllerRoleBindings(): BindingSpec[] {
  return controllerRoles().map((r) => ({
    name: r.name,
    roleKind: 'ClusterRole',
    roleName: r.name,
    subjects: [serviceAccount('kube-system', r.name.slice(CONTROLLER_ROLE_PREFIX.length))],
  }));
}

/** Roles in kube-system and kube-public */
export function namespaceRoles(): RoleSpec[] {
  return [
    {
      namespace: 'kube-system',
      name: 'extension-apiserver-authentication-reader',
      rules: [rule(['get', 'list', 'watch'], [core], ['configmaps'], ['extension-apiserver-authentication'])],
    },
    {
      namespace: 'kube-system',
      name: 'system::leader-locking-kube-controller-manager',
      rules: [rule(['watch'], [core], ['configmaps']), rule(['get', 'update'], [core], ['configmaps'], ['kube-controller-manager'])],
    },
    {
      namespace: 'kube-system',
      name: 'system::leader-locking-kube-scheduler',
      rules: [rule(['watch'], [core], ['configmaps']), rule(['get', 'update'], [core], ['configmaps'], ['kube-scheduler'])],
    },
    { namespace: 'kube-system', name: 'system:controller:bootstrap-signer', rules: [rule(['list', 'watch'], [core], ['secrets'])] },
    {
      namespace: 'kube-system',
      name: 'system:controller:cloud-provider',
      rules: [rule(['create', 'get', 'list', 'watch'], [core], ['configmaps'])],
    },
    {
      namespace: 'kube-system',
      name: 'system:controller:token-cleaner',
      rules: [rule(['delete', 'get', 'list', 'watch'], [core], ['secrets']), eventsRule()],
    },
    {
      namespace: 'kube-public',
      name: 'system:controller:bootstrap-signer',
      rules: [
        rule(['get', 'list', 'watch'], [core], ['configmaps']),
        rule(['update'], [core], ['configmaps'], ['cluster-info']),
        eventsRule(),
      ],
    },
  ];
}

export function namespaceRoleBindings(): BindingSpec[] {
  const rb = (namespace: string, name: string, roleName: string, ...subjects: Subject[]): BindingSpec => ({
    namespace,
    name,
    roleKind: 'Role',
    roleName,
    subjects,
  });
  return [
    rb(
      'kube-system',
      'system::extension-apiserver-authentication-reader',
      'extension-apiserver-authentication-reader',
      user(KUBE_CONTROLLER_MANAGER),
      user(KUBE_SCHEDULER),
    ),
    rb(
      'kube-system',
      'system::leader-locking-kube-controller-manager',
      'system::leader-locking-kube-controller-manager',
      user(KUBE_CONTROLLER_MANAGER),
      serviceAccount('kube-system', 'kube-controller-manager'),
    ),
    rb(
      'kube-system',
      'system::leader-locking-kube-scheduler',
      'system::leader-locking-kube-scheduler',
      user(KUBE_SCHEDULER),
      serviceAccount('kube-system', 'kube-scheduler'),
    ),
    rb(
      'kube-system',
      'system:controller:bootstrap-signer',
      'system:controller:bootstrap-signer',
      serviceAccount('kube-system', 'bootstrap-signer'),
    ),
    rb(
      'kube-system',
      'system:controller:cloud-provider',
      'system:controller:cloud-provider',
      serviceAccount('kube-system', 'cloud-provider'),
    ),
    rb('kube-system', 'system:controller:token-cleaner', 'system:controller:token-cleaner', serviceAccount('kube-system', 'token-cleaner')),
    rb(
      'kube-public',
      'system:controller:bootstrap-signer',
      'system:controller:bootstrap-signer',
      serviceAccount('kube-system', 'bootstrap-signer'),
    ),
  ];
}

// ---- as API objects ------------------------------------------------------------------

function defaultMeta(name: string, namespace?: string, labels?: Record<string, string>): KubeObject['metadata'] {
  const meta: KubeObject['metadata'] = {
    name,
    labels: { ...(labels ?? {}), [BOOTSTRAP_LABEL]: BOOTSTRAP_LABEL_VALUE },
    annotations: { [AUTOUPDATE_ANNOTATION]: 'true' },
  };
  if (namespace) meta.namespace = namespace;
  return meta;
}

export function clusterRoleObject(spec: ClusterRoleSpec): KubeObject {
  const obj: KubeObject = { apiVersion: `${RBAC_GROUP}/v1`, kind: 'ClusterRole', metadata: defaultMeta(spec.name, undefined, spec.labels) };
  if (spec.aggregateFrom) obj.aggregationRule = { clusterRoleSelectors: spec.aggregateFrom.map((m) => ({ matchLabels: { ...m } })) };
  if (spec.rules) obj.rules = spec.rules.map(ruleToJson);
  return obj;
}

export function roleObject(spec: RoleSpec): KubeObject {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'Role',
    metadata: defaultMeta(spec.name, spec.namespace),
    rules: spec.rules.map(ruleToJson),
  };
}

function subjectJson(s: Subject): Record<string, string> {
  const out: Record<string, string> = { kind: s.kind };
  if (s.apiGroup) out.apiGroup = s.apiGroup;
  out.name = s.name;
  if (s.namespace) out.namespace = s.namespace;
  return out;
}

export function bindingObject(spec: BindingSpec): KubeObject {
  const obj: KubeObject = {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: spec.namespace ? 'RoleBinding' : 'ClusterRoleBinding',
    metadata: defaultMeta(spec.name, spec.namespace),
    roleRef: { apiGroup: RBAC_GROUP, kind: spec.roleKind, name: spec.roleName },
  };
  if (spec.subjects.length) obj.subjects = spec.subjects.map(subjectJson);
  return obj;
}

/** everything the server reconciles at start, as API objects */
export function defaultPolicy(): {
  clusterRoles: KubeObject[];
  clusterRoleBindings: KubeObject[];
  roles: KubeObject[];
  roleBindings: KubeObject[];
} {
  return {
    clusterRoles: [...clusterRoles(), ...controllerRoles()].map(clusterRoleObject),
    clusterRoleBindings: [...clusterRoleBindings(), ...controllerRoleBindings()].map(bindingObject),
    roles: namespaceRoles().map(roleObject),
    roleBindings: namespaceRoleBindings().map(bindingObject),
  };
}
