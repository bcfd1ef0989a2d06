/** Whether the storage a deployment depends on can be reached right now. */
export interface ReadinessProbe {
  isReady(): Promise<boolean>;
}
