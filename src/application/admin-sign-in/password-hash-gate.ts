import { signInBusy } from '../../domain/admin-errors.js';
import { PASSWORD_HASH_LIMITS } from '../../domain/password.js';

export interface PasswordHashLimits {
  /** Work run at once. */
  readonly concurrent: number;
  /** Callers waiting their turn; one more is refused at once. */
  readonly maxWaiting: number;
  /** How long a caller waits for its turn before it is refused. */
  readonly maxWaitMs: number;
}

interface Waiter {
  start(): void;
}

/**
 * Runs password hashing a few at a time, in this process, for every use case that hashes: a flood
 * of sign-ins waits here, briefly, or is refused as busy ('sign_in_busy'), and never holds every
 * thread and core. The waiters are served first come, first served.
 */
export class PasswordHashGate {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly limits: PasswordHashLimits = PASSWORD_HASH_LIMITS) {}

  run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.limits.concurrent) return this.start(work);
    if (this.waiting.length >= this.limits.maxWaiting) return Promise.reject(signInBusy());
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(timer);
          this.start(work).then(resolve, reject);
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(signInBusy());
      }, this.limits.maxWaitMs);
      // A caller still waiting keeps no process from stopping.
      timer.unref();
      this.waiting.push(waiter);
    });
  }

  private async start<T>(work: () => Promise<T>): Promise<T> {
    this.running += 1;
    try {
      return await work();
    } finally {
      this.running -= 1;
      this.waiting.shift()?.start();
    }
  }
}
