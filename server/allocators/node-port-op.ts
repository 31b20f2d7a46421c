// The node ports one Service write takes and frees, recorded in its ledger. A dry run checks
// requested ports (in range, not taken, not taken twice by this write) and writes nothing;
// the ports it would pick itself are placeholders (one above the highest port this write
// named, or 32769), as kube-apiserver's dry run shows them.

import type { NodePortAllocator } from './node-port.js';
import type { ServiceRef } from './owned-keys.js';
import { portErrors } from './errors.js';
import type { AllocationLedger } from './transaction.js';

const dryRunPlaceholderBase = 32768;

export class NodePortOperation {
  private readonly taken: number[] = [];

  constructor(
    private readonly ports: NodePortAllocator,
    private readonly holder: ServiceRef,
    private readonly ledger: AllocationLedger,
    private readonly dryRun: boolean,
  ) {}

  async allocate(port: number): Promise<void> {
    if (this.dryRun) {
      await this.ports.checkAvailable(port);
      if (this.taken.includes(port)) throw portErrors.allocated();
      this.taken.push(port);
      return;
    }
    const uid = await this.ports.allocate(port, this.holder);
    this.taken.push(port);
    this.ledger.onRevert(`node port ${port}`, () => this.ports.release(port, undefined, uid));
  }

  async allocateNext(): Promise<number> {
    if (this.dryRun) {
      const port = (this.taken.length ? Math.max(...this.taken) : dryRunPlaceholderBase) + 1;
      this.taken.push(port);
      return port;
    }
    const got = await this.ports.allocateNext(this.holder);
    this.taken.push(got.port);
    this.ledger.onRevert(`node port ${got.port}`, () => this.ports.release(got.port, undefined, got.uid));
    return got.port;
  }

  /** frees `port` once the Service is written without it */
  releaseOnCommit(port: number): void {
    if (this.dryRun) return;
    this.ledger.onCommit(`node port ${port}`, () => this.ports.release(port, this.holder));
  }
}
