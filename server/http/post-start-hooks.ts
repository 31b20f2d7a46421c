// kube-apiserver's post-start hooks: start-up work that finishes after the server listens.
// Each hook registered here reports itself as the health check `poststarthook/<name>`, failing
// ("not finished") until its work resolves, so /readyz follows start-up without a flag per hook.

import type { HealthCheck } from '../machinery/health-check.js';

interface HookState {
  done: boolean;
  error?: string;
}

export class PostStartHooks {
  private readonly hooks = new Map<string, HookState>();

  /** `work` is the hook; a rejection keeps its check failing with the reason */
  add(name: string, work: Promise<unknown>): HealthCheck {
    if (this.hooks.has(name)) throw new Error(`post-start hook ${name} is registered twice`);
    const state: HookState = { done: false };
    this.hooks.set(name, state);
    work.then(
      () => {
        state.done = true;
      },
      (err: unknown) => {
        state.error = err instanceof Error ? err.message : String(err);
      },
    );
    return this.check(name);
  }

  /** the check of a registered hook */
  check(name: string): HealthCheck {
    const state = this.hooks.get(name);
    if (!state) throw new Error(`no post-start hook ${name}`);
    return {
      name: `poststarthook/${name}`,
      check: async () => {
        if (state.error !== undefined) throw new Error(`failed: ${state.error}`);
        if (!state.done) throw new Error('not finished');
      },
    };
  }

  /** every hook's check, by name (the order kube-apiserver lists them in) */
  checks(): HealthCheck[] {
    return [...this.hooks.keys()].sort().map((name) => this.check(name));
  }
}
