// MutatingAdmissionWebhook and ValidatingAdmissionWebhook. Mutating webhooks run one after
// another, each seeing the previous one's patch; those with reinvocationPolicy IfNeeded run
// once more when a later webhook changed the object. Validating webhooks run in parallel on
// the final object; the first failure (in webhook order) is the answer.

import type { KubeObject } from '../../../storage/interface.js';
import type { AdmissionAttributes } from '../../registry/rest.js';
import { applyJsonPatch, decodeJsonPatch, jsonEqual, type Json } from '../../machinery/json-patch.js';
import { errors, StatusError } from '../../machinery/status.js';
import type { AdmissionDeps, AdmissionPlugin, AdmissionPluginFactory, AdmissionRequestContext } from '../plugin.js';
import { webhookCallFailed, WebhookCallError } from '../errors.js';
import { isExemptFromWebhooks } from './rules.js';
import { callWebhook, forTarget, fromTarget, shouldCall, type Invocation } from './dispatch.js';
import { startWebhookSource, type WebhookSource } from './source.js';
import { credentialResolverFrom } from './credentials.js';
import { AuthorizerSession } from '../../cel/authorizer-library.js';
import type { VerifiedResponse } from './review.js';
import { addWarnings } from '../../machinery/warnings.js';

export const MUTATING_PLUGIN = 'MutatingAdmissionWebhook';
export const VALIDATING_PLUGIN = 'ValidatingAdmissionWebhook';

/** how long a request waits for the configurations' first list before giving up */
const READY_WAIT_MS = 10_000;

/** whether a request may have webhooks to call: without any configuration there is nothing
 *  to call (before the first list, a request goes on to wait for it) */
function mayCall(source: WebhookSource): boolean {
  return !source.synced || source.webhooks().length > 0;
}

async function waitReady(source: WebhookSource, ctx: AdmissionRequestContext): Promise<void> {
  // once synced, a request needs no timer nor combined signal (each costs every write)
  if (source.synced) return;
  const limit = AbortSignal.timeout(READY_WAIT_MS);
  const own = ctx.cancellation?.signal;
  const signal = own ? AbortSignal.any([own, limit]) : limit;
  try {
    await source.ready(signal);
  } catch {
    throw errors.forbidden({ group: '', resource: '', name: '' }, 'not yet ready to handle request');
  }
}

function recordAnswer(name: string, answer: Pick<VerifiedResponse, 'warnings' | 'auditAnnotations'>, ctx: AdmissionRequestContext): void {
  addWarnings(ctx.warnings, answer.warnings);
  for (const [k, v] of Object.entries(answer.auditAnnotations)) ctx.auditAnnotations[`${name}/${k}`] = v;
}

/** the denial's own warnings go out with it */
function forwardDenialWarnings(err: unknown, ctx: AdmissionRequestContext): void {
  const w = (err as { webhookWarnings?: unknown }).webhookWarnings;
  if (Array.isArray(w))
    addWarnings(
      ctx.warnings,
      w.filter((x): x is string => typeof x === 'string'),
    );
}

async function invocationsFor(
  source: WebhookSource,
  attrs: AdmissionAttributes,
  deps: AdmissionDeps,
  ctx: AdmissionRequestContext,
): Promise<Invocation[]> {
  if (isExemptFromWebhooks(attrs)) return [];
  if (!source.synced) await waitReady(source, ctx);
  const entries = source.webhooks();
  if (entries.length === 0) return [];
  const out: Invocation[] = [];
  const namespaceLabels = new Map<string, Promise<Record<string, string> | undefined>>();
  // matchConditions' authorizer checks, asked once per request
  const session = new AuthorizerSession(deps.authorizer);
  for (const entry of entries) {
    const inv = await shouldCall(entry, attrs, deps.resolver, ctx.cancellation?.signal, namespaceLabels, session);
    if (inv) out.push(inv);
  }
  return out;
}

function clientGone(ctx: AdmissionRequestContext): StatusError | undefined {
  return ctx.cancellation?.signal?.aborted
    ? errors.timeout('request did not complete within requested timeout - context canceled')
    : undefined;
}

export const mutatingWebhookFactory: AdmissionPluginFactory = {
  name: MUTATING_PLUGIN,
  create(deps, config) {
    const credentials = credentialResolverFrom(config);
    const source = startWebhookSource('mutatingwebhookconfigurations', deps);
    const plugin: AdmissionPlugin = {
      name: MUTATING_PLUGIN,
      readsOptions: true,
      handles: () => mayCall(source),
      async mutate(attrs, ctx) {
        const first = await invocationsFor(source, attrs, deps, ctx);
        if (first.length === 0) return attrs.object as KubeObject;
        let obj = attrs.object as KubeObject;
        let invokedSinceChange: string[] = [];
        const reinvoke = new Set<string>();
        const runOne = async (inv: Invocation, round: number, index: number): Promise<void> => {
          const gone = clientGone(ctx);
          if (gone) throw gone;
          const spec = inv.entry.spec;
          // the webhook sees (and patches) the object in the version it matched
          const sent = forTarget({ ...attrs, object: obj }, inv.target);
          let answer: VerifiedResponse;
          try {
            answer = await callWebhook(inv, sent, deps.resolver, true, ctx.cancellation?.signal, credentials);
          } catch (err) {
            forwardDenialWarnings(err, ctx);
            if (err instanceof WebhookCallError) {
              if ((spec.failurePolicy ?? 'Fail') === 'Ignore') {
                deps.log('warn', 'failed calling webhook, failing open', { webhook: spec.name, error: err.message });
                ctx.auditAnnotations[`failed-open.mutating.webhook.admission.k8s.io/round_${round}_index_${index}`] = spec.name;
                return;
              }
              throw webhookCallFailed(err);
            }
            throw err;
          }
          recordAnswer(spec.name, answer, ctx);
          let changed = false;
          if (answer.patch !== undefined) {
            if (attrs.operation === 'DELETE')
              throw errors.internal(
                `admission webhook "${spec.name}" attempted to modify the object, which is not supported for this operation`,
              );
            const base = sent.object as KubeObject;
            let patched: Json;
            try {
              patched = applyJsonPatch(structuredClone(base) as unknown as Json, decodeJsonPatch(answer.patch));
            } catch (err) {
              throw errors.internal((err as Error).message);
            }
            changed = !jsonEqual(patched, base as unknown as Json);
            if (changed) obj = fromTarget(patched as unknown as KubeObject, attrs, inv.target);
          }
          ctx.auditAnnotations[`mutation.webhook.admission.k8s.io/round_${round}_index_${index}`] = JSON.stringify({
            configuration: inv.entry.configurationName,
            webhook: spec.name,
            mutated: changed,
          });
          if (changed) {
            for (const uid of invokedSinceChange) reinvoke.add(uid);
            invokedSinceChange = [];
          }
          if (spec.reinvocationPolicy === 'IfNeeded') invokedSinceChange.push(inv.entry.uid);
        };
        for (let i = 0; i < first.length; i++) await runOne(first[i]!, 0, i);
        if (reinvoke.size > 0) {
          const again = await invocationsFor(source, { ...attrs, object: obj }, deps, ctx);
          for (let i = 0; i < again.length; i++) {
            if (reinvoke.has(again[i]!.entry.uid)) await runOne(again[i]!, 1, i);
          }
        }
        return obj;
      },
      // the registry has no mutating step for deletes: webhooks registered for DELETE are
      // called here instead (they may deny; a patch of a delete is refused as in kube)
      async validate(attrs, ctx) {
        if (attrs.operation !== 'DELETE') return;
        await plugin.mutate!(attrs, ctx);
      },
    };
    return plugin;
  },
};

export const validatingWebhookFactory: AdmissionPluginFactory = {
  name: VALIDATING_PLUGIN,
  create(deps, config) {
    const credentials = credentialResolverFrom(config);
    const source = startWebhookSource('validatingwebhookconfigurations', deps);
    const plugin: AdmissionPlugin = {
      name: VALIDATING_PLUGIN,
      readsOptions: true,
      handles: () => mayCall(source),
      async validate(attrs, ctx) {
        const hooks = await invocationsFor(source, attrs, deps, ctx);
        if (hooks.length === 0) return;
        const gone = clientGone(ctx);
        if (gone) throw gone;
        const outcomes = await Promise.all(
          hooks.map(async (inv, index): Promise<StatusError | undefined> => {
            const spec = inv.entry.spec;
            try {
              const answer = await callWebhook(
                inv,
                forTarget(attrs, inv.target),
                deps.resolver,
                false,
                ctx.cancellation?.signal,
                credentials,
              );
              recordAnswer(spec.name, answer, ctx);
              return undefined;
            } catch (err) {
              forwardDenialWarnings(err, ctx);
              if (err instanceof WebhookCallError) {
                if ((spec.failurePolicy ?? 'Fail') === 'Ignore') {
                  deps.log('warn', 'failed calling webhook, failing open', { webhook: spec.name, error: err.message });
                  ctx.auditAnnotations[`failed-open.validating.webhook.admission.k8s.io/round_0_index_${index}`] = spec.name;
                  return undefined;
                }
                return webhookCallFailed(err);
              }
              if (err instanceof StatusError) return err;
              return errors.internal(`ValidatingAdmissionWebhook/${spec.name} has panicked: ${(err as Error).message}`);
            }
          }),
        );
        const failure = outcomes.find((o) => o !== undefined);
        if (failure) throw failure;
      },
    };
    return plugin;
  },
};
