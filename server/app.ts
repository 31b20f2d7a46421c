// Starts kapi in phases, each in its own module under app/:
//
//   completeConfig  every subsystem's options from the flags: defaults, validation (all
//                   problems at once, kube's texts), completion. Nothing has started yet.
//   build           what needs no etcd: encryption, audit, PKI, authentication, authorization
//   prepare         etcd, storage and the watch cache, the API, the control loops with their
//                   post-start hooks (/readyz waits for them), admission, the handler
//   run             listen, become ready; the App's shutdown takes everything apart in
//                   reverse start order
//
// A failure in any phase stops what the earlier ones started.

import type { KapiConfig } from './config/flags.js';
import { completeConfig } from './app/config.js';
import { build } from './app/build.js';
import { StopStack } from './app/lifecycle.js';
import { prepare } from './app/prepare.js';
import { run, type App } from './app/run.js';
import { ServingState } from './app/serving-state.js';
import type { WorkerRole } from './workers/role.js';

export type { App } from './app/run.js';

/** `worker`: this process is one worker of a --workers replica, whose primary wrote the PKI
 *  and admin.kubeconfig, runs the embedded etcd, writes the audit log and merges /metrics */
export async function startApp(config: KapiConfig, worker?: WorkerRole): Promise<App> {
  const completed = completeConfig(config, worker);
  const stack = new StopStack();
  const state = new ServingState();
  try {
    const built = await build(completed, stack);
    const prepared = await prepare(completed, built, state, stack);
    return await run(completed, built, prepared, state, stack);
  } catch (err) {
    await stack.stopAll();
    throw err;
  }
}
