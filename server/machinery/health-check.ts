// A named health check, as /livez, /readyz and /healthz list them.

export interface HealthCheck {
  readonly name: string;
  /** resolves when healthy, rejects with the reason otherwise */
  check(): Promise<void>;
}
