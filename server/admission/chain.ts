// The admission chain as the registry sees it (AdmissionHooks): every enabled plugin in
// kube-apiserver's order, mutating ones first (on the decoded object, before validation),
// then validating ones (on the final object). A plugin that does both runs in both phases.

import type { KubeObject } from '../../storage/interface.js';
import type { AdmissionAttributes, AdmissionHooks, SignalSource } from '../registry/rest.js';
import { enabledPluginNames, explicitlyEnabled, readAdmissionConfigFile, validateAdmissionFlags, type AdmissionFlags } from './config.js';
import type { RequestState } from '../request/types.js';
import { addAuditAnnotations } from '../request/audit-annotations.js';
import { ReadFence } from '../../storage/read-fence.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory, AdmissionRequestContext } from './plugin.js';

/** what one request hands the chain */
export interface AdmissionRequest {
  /** the request's warnings (sent as `Warning` headers) */
  warnings: string[];
  /** the request's cancellation (its signal is made when first read) */
  cancellation?: SignalSource;
  /** receives the audit annotations plugins add, after each phase */
  onAuditAnnotations?: (annotations: Record<string, string>) => void;
  /** the request's CreateOptions/UpdateOptions/DeleteOptions, when the attributes carry none */
  options?: (operation: AdmissionAttributes['operation']) => Record<string, unknown> | undefined;
}

export interface AdmissionChain {
  /** the running plugins, in order */
  readonly plugins: readonly AdmissionPlugin[];
  /** the hooks the registry calls for one request */
  hooksFor(req: AdmissionRequest): AdmissionHooks;
}

export interface ChainOptions {
  flags: AdmissionFlags;
  /** --admission-control-config-file ('' for none) */
  configFile: string;
  factories: readonly AdmissionPluginFactory[];
  deps: AdmissionDeps;
}

/** the admission flags from the parsed command line */
export function admissionFlagsOf(values: { get(name: string): unknown }): AdmissionFlags {
  const list = (name: string) => (values.get(name) as string[] | undefined) ?? [];
  return {
    enable: list('enable-admission-plugins'),
    disable: list('disable-admission-plugins'),
    admissionControl: list('admission-control'),
  };
}

/** throws kube's option-validation errors before anything starts */
export function checkAdmissionFlags(flags: AdmissionFlags): void {
  const errs = validateAdmissionFlags(flags);
  if (errs.length > 0) throw new Error(aggregate(errs));
}

/** kube prints one error as is and several as `[a, b]` */
function aggregate(errs: string[]): string {
  return errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`;
}

/** Validates the flags, reads the configuration file and creates every enabled plugin that kapi
 *  implements. A plugin named explicitly that kapi lacks is a start-up error; one that is only
 *  on by default is skipped (logged), since kube's default set is larger than kapi's. */
export async function buildAdmissionChain(opts: ChainOptions): Promise<AdmissionChain> {
  checkAdmissionFlags(opts.flags);
  if (opts.flags.admissionControl.length > 0) {
    opts.deps.log(
      'warn',
      'Flag --admission-control has been deprecated, Use --enable-admission-plugins or --disable-admission-plugins instead. Will be removed in a future version.',
    );
  }
  const configs = readAdmissionConfigFile(opts.configFile);
  const byName = new Map(opts.factories.map((f) => [f.name, f]));
  const explicit = explicitlyEnabled(opts.flags);
  const plugins: AdmissionPlugin[] = [];
  const missing: string[] = [];
  for (const name of enabledPluginNames(opts.flags)) {
    const factory = byName.get(name);
    if (!factory) {
      if (explicit.has(name)) throw new Error(`admission plugin "${name}" is not implemented by kapi`);
      missing.push(name);
      continue;
    }
    plugins.push(await factory.create(opts.deps, configs.get(name)));
  }
  if (missing.length > 0)
    opts.deps.log('info', 'admission plugins on by default in kube-apiserver that kapi does not implement', { plugins: missing.join(',') });
  opts.deps.log('info', 'admission chain', { plugins: plugins.map((p) => p.name).join(',') });
  return chainOf(plugins);
}

/** the chain over plugins already created (in the order given) */
export function chainOf(plugins: readonly AdmissionPlugin[]): AdmissionChain {
  const mutating = plugins.filter((p) => p.mutate);
  const validating = plugins.filter((p) => p.validate);
  return {
    plugins,
    hooksFor(req) {
      // made when a phase gets no fence from the registry (creates bring their own)
      let requestFence: ReadFence | undefined;
      const ctx: AdmissionRequestContext = { warnings: req.warnings, auditAnnotations: {}, cancellation: req.cancellation };
      const flush = () => {
        if (!req.onAuditAnnotations) return;
        const a = ctx.auditAnnotations;
        if (Object.keys(a).length === 0) return;
        req.onAuditAnnotations({ ...a });
        ctx.auditAnnotations = {};
      };
      // made for the plugins that read them, once for the request's operation
      let made: { operation: AdmissionAttributes['operation']; options: Record<string, unknown> | undefined } | undefined;
      const withOptions = (attrs: AdmissionAttributes): AdmissionAttributes => {
        if (attrs.options || !req.options) return attrs;
        if (made?.operation !== attrs.operation) made = { operation: attrs.operation, options: req.options(attrs.operation) };
        return made.options ? { ...attrs, options: made.options } : attrs;
      };
      const hooks: AdmissionHooks = {};
      if (mutating.length > 0) {
        hooks.mutate = async (attrs) => {
          let current = attrs;
          let obj = attrs.object as KubeObject;
          ctx.readFence = attrs.readFence ?? (requestFence ??= new ReadFence());
          try {
            for (const p of mutating) {
              if (p.handles && !p.handles(current)) continue;
              obj = await p.mutate!(p.readsOptions ? withOptions(current) : current, ctx);
              current = { ...current, object: obj };
            }
          } finally {
            flush();
          }
          return obj;
        };
      }
      if (validating.length > 0) {
        hooks.validate = async (attrs) => {
          ctx.readFence = attrs.readFence ?? (requestFence ??= new ReadFence());
          try {
            for (const p of validating) {
              if (p.handles && !p.handles(attrs)) continue;
              await p.validate!(p.readsOptions ? withOptions(attrs) : attrs, ctx);
            }
          } finally {
            flush();
          }
        };
      }
      return hooks;
    },
  };
}

/** kube sends webhooks the options of the request's verb, as decoded from its query */
export function optionsFromQuery(operation: AdmissionAttributes['operation'], query: URLSearchParams): Record<string, unknown> {
  const kind = operation === 'CREATE' ? 'CreateOptions' : operation === 'UPDATE' ? 'UpdateOptions' : 'DeleteOptions';
  const out: Record<string, unknown> = { kind, apiVersion: 'meta.k8s.io/v1' };
  const dryRun = query.getAll('dryRun').filter((v) => v !== '');
  if (dryRun.length > 0) out.dryRun = dryRun;
  if (operation === 'DELETE') {
    const grace = query.get('gracePeriodSeconds');
    if (grace !== null && grace !== '' && Number.isFinite(Number(grace))) out.gracePeriodSeconds = Number(grace);
    const propagation = query.get('propagationPolicy');
    if (propagation) out.propagationPolicy = propagation;
    return out;
  }
  const fieldManager = query.get('fieldManager');
  if (fieldManager) out.fieldManager = fieldManager;
  const fieldValidation = query.get('fieldValidation');
  if (fieldValidation) out.fieldValidation = fieldValidation;
  return out;
}

/** what the chain needs of one HTTP request: its warnings, signal, audit event and options */
export function admissionRequestOf(state: RequestState): AdmissionRequest {
  return {
    warnings: state.warnings,
    // the request's signal is made only if admission reads it (request/cancellation.ts)
    cancellation: state,
    onAuditAnnotations: (a) => addAuditAnnotations(state, a),
    options: (operation) => optionsFromQuery(operation, state.query),
  };
}
