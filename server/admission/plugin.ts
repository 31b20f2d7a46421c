// The seam between kapi's admission chain and its plugins (kube-apiserver's admission
// plugins: built-in ones such as ServiceAccount or PodSecurity, the webhooks, the CEL
// policies). The registry calls the chain through RequestContext.admission
// (server/registry/rest.ts AdmissionHooks): every mutating plugin runs, in kube-apiserver's
// order, before the registry validates the object; every validating plugin runs on the final
// object just before it is written (and on the stored object before a delete).

import type { KubeObject } from '../../storage/interface.js';
import type { ReadFence } from '../../storage/read-fence.js';
import type { AdmissionAttributes, ResourceResolver, SignalSource } from '../registry/rest.js';
import type { ReviewAuthorizer } from '../machinery/access-review.js';

/** One admission plugin. A denial is thrown as a StatusError (server/http/status.ts), usually
 *  `admissionForbidden` from ./errors.ts (403 with kube's "is forbidden:" message). */
export interface AdmissionPlugin {
  /** kube-apiserver's plugin name, e.g. `ServiceAccount` */
  readonly name: string;
  /** the plugin reads `attrs.options` (webhooks and policies send them on): the chain makes
   *  them from the request only for such plugins */
  readonly readsOptions?: boolean;
  /** a cheap pre-check: false skips both phases for this request */
  handles?(attrs: AdmissionAttributes): boolean;
  /** returns the object to go on with (the same one, changed or not, or a new one). Only
   *  called for CREATE and UPDATE with an object, and for CONNECT-less writes. */
  mutate?(attrs: AdmissionAttributes, ctx: AdmissionRequestContext): Promise<KubeObject> | KubeObject;
  validate?(attrs: AdmissionAttributes, ctx: AdmissionRequestContext): Promise<void> | void;
}

/** What a plugin may use while handling one request. */
export interface AdmissionRequestContext {
  /** warnings sent back to the client in `Warning` headers */
  warnings: string[];
  /** audit annotations of this request (key -> value), recorded with the audit event */
  auditAnnotations: Record<string, string>;
  /** its signal aborts when the client goes away; read it where a plugin waits, not before (a
   *  request's signal is made when first read, server/request/cancellation.ts) */
  cancellation?: SignalSource;
  /** the plugins' consistent reads of this request share one wait for etcd's revision
   *  (pass it on in the contexts of their lookups) */
  readFence?: ReadFence;
}

/** What a plugin may use for its whole life. */
export interface AdmissionDeps {
  /** the registry: plugins read other objects (namespaces, service accounts, limit ranges,
   *  webhook configurations, ...) through it with an internal context (see
   *  server/controllers/util.ts internalContext) */
  resolver: ResourceResolver;
  /** ends the plugin's background work (informers, caches) at shutdown */
  signal: AbortSignal;
  /** the cluster's feature gates (--feature-gates with defaults) */
  featureGates: Record<string, boolean>;
  log: (level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void;
  /** the cluster's authorizer (as access reviews see it), for plugins that check what the
   *  requester may do (CertificateApproval/Signing, ClusterTrustBundleAttest); absent means
   *  every check is allowed (AlwaysAllow) */
  authorizer?: ReviewAuthorizer;
  /** a command-line flag's value (app.ts: `config.values.get(name)`), for the plugins kube
   *  configures by flag (DefaultTolerationSeconds); absent means every flag's default */
  flag?: (name: string) => unknown;
}

export interface AdmissionPluginFactory {
  /** kube-apiserver's plugin name; where it goes in the chain is kube's order (./order.ts) */
  readonly name: string;
  /** the plugin's entry in --admission-control-config-file (its `configuration`, or the
   *  parsed contents of its `path`), if any */
  create(deps: AdmissionDeps, config: unknown | undefined): AdmissionPlugin | Promise<AdmissionPlugin>;
}
