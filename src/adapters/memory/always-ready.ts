import type { ReadinessProbe } from '../../application/shared/readiness-probe.js';

/** In-process storage is reachable whenever the process is. */
export const alwaysReady: ReadinessProbe = { isReady: () => Promise.resolve(true) };
