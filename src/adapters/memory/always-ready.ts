import type { ReadinessProbe } from '../../application/common/readiness-probe.js';

/** In-process storage is reachable whenever the process is. */
export const alwaysReady: ReadinessProbe = { isReady: () => Promise.resolve(true) };
