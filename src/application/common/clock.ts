/** Wall-clock time in milliseconds since the epoch; injected so tests can move it. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
