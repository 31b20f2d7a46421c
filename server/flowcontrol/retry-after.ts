// The Retry-After a rejected request is told, per priority level, as kube-apiserver adapts it:
// 1 second to begin with; doubled (up to 32) when, over the current Retry-After window, at
// least three times that many requests were dropped, at most once per window; lowered by one
// when fewer requests than the window's seconds were dropped. Drops are counted per whole
// second, and the window looks only at seconds before the current one.

const MAX_RETRY_AFTER = 32;

interface LevelDrops {
  /** finished seconds: [unix second, drops], oldest first */
  history: Array<[number, number]>;
  currentSecond: number;
  currentCount: number;
  retryAfter: number;
  lastIncrease: number;
}

export class DroppedRequests {
  private readonly levels = new Map<string, LevelDrops>();

  constructor(private readonly nowSeconds: () => number = () => Math.floor(Date.now() / 1000)) {}

  record(level: string): void {
    const now = this.nowSeconds();
    let s = this.levels.get(level);
    if (!s) {
      s = { history: [], currentSecond: 0, currentCount: 0, retryAfter: 1, lastIncrease: 0 };
      this.levels.set(level, s);
    }
    if (s.currentSecond === now) {
      s.currentCount++;
      return;
    }
    // a new second: the previous one goes into the history, which keeps twice the window
    s.history.push([s.currentSecond, s.currentCount]);
    const keep = Math.min(2 * s.retryAfter, MAX_RETRY_AFTER);
    while (s.history.length > 0 && s.currentSecond - s.history[0]![0] > keep) s.history.shift();
    s.currentSecond = now;
    s.currentCount = 1;
    this.adapt(s, now);
  }

  retryAfter(level: string): number {
    return this.levels.get(level)?.retryAfter ?? 1;
  }

  private adapt(s: LevelDrops, now: number): void {
    let dropped = 0;
    for (let i = s.history.length - 1; i >= 0; i--) {
      const [second, count] = s.history[i]!;
      if (now - second > s.retryAfter) break;
      if (second < now) dropped += count;
    }
    if (now - s.lastIncrease >= s.retryAfter && dropped >= 3 * s.retryAfter) {
      s.retryAfter = Math.min(s.retryAfter * 2, MAX_RETRY_AFTER);
      s.lastIncrease = now;
    } else if (dropped < s.retryAfter && s.retryAfter > 1) {
      s.retryAfter--;
    }
  }
}
