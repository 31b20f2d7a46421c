// The problems option validation finds. Every group of options is checked before anything
// starts, and all problems are reported together, as kube-apiserver's option validation does:
// one problem as it is, several as `[a, b]`.

export class InvalidOptionsError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.length === 1 ? problems[0]! : `[${problems.join(', ')}]`);
  }
}

export class Problems {
  private readonly found: string[] = [];

  add(...messages: string[]): void {
    this.found.push(...messages);
  }

  /** runs a check that throws its message; false when it threw */
  check(check: () => void): boolean {
    try {
      check();
      return true;
    } catch (err) {
      this.found.push((err as Error).message);
      return false;
    }
  }

  throwIfAny(): void {
    if (this.found.length > 0) throw new InvalidOptionsError(this.found);
  }
}
