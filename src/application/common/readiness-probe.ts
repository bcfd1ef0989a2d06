/** Whether the storage a deployment depends on can be reached right now. */
export interface ReadinessProbe {
  isReady(): Promise<boolean>;
}

/**
 * A probe that answers not ready from the moment the process is told to stop, whatever the storage
 * says: load balancers take the instance out while it still serves (decisions, stopping without dropping).
 */
export class StoppingReadiness implements ReadinessProbe {
  private stopping = false;

  constructor(private readonly inner: ReadinessProbe) {}

  /** From now on, not ready. */
  stop(): void {
    this.stopping = true;
  }

  isReady(): Promise<boolean> {
    return this.stopping ? Promise.resolve(false) : this.inner.isReady();
  }
}
