// The progress line while a run goes on: phase, elapsed time, calls and errors so far and
// the rate of the last second. Rewritten in place on a terminal; a plain line every five
// seconds otherwise (logs, CI).

import type { Recorder } from './recorder.js';

export class Progress {
  private phaseText = 'starting';
  private timer: NodeJS.Timeout | undefined;
  private lastTotal = 0;
  private lastAt = performance.now();
  private readonly tty: boolean;

  constructor(
    private readonly recorder: Recorder,
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {
    this.tty = out.isTTY === true;
  }

  phase(text: string): void {
    this.phaseText = text;
  }

  start(): void {
    this.timer = setInterval(() => this.print(), this.tty ? 1000 : 5000);
    this.timer.unref();
  }

  private print(): void {
    const now = performance.now();
    const r = this.recorder;
    const rate = ((r.total - this.lastTotal) * 1000) / Math.max(1, now - this.lastAt);
    this.lastTotal = r.total;
    this.lastAt = now;
    const elapsed = ((now - r.startedAt) / 1000).toFixed(0);
    const line = `[${elapsed}s] ${this.phaseText}: ${r.total} calls, ${r.failed} errors, ${rate.toFixed(0)}/s`;
    if (this.tty) this.out.write(`\r\x1b[K${line}`);
    else this.out.write(`${line}\n`);
  }

  stop(): void {
    clearInterval(this.timer);
    if (this.tty) this.out.write('\r\x1b[K');
  }
}
