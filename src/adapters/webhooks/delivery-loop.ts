import type { Logger } from 'pino';
import type { DeliverWebhooks } from '../../application/webhooks/deliver-webhooks.js';


export interface DeliveryLoop {
  /** Looks for due deliveries now (this process just queued a message), not at the next tick. */
  wake(): void;
  /** Stops looking, and waits up to `graceMs` for the attempts in flight to be recorded. */
  stop(graceMs: number): Promise<void>;
}

/**
 * Runs the delivery worker beside the API: a poll at start, then every `pollMs` (WEBHOOK_POLL_MS:
 * the first attempt starts within it of a commit anywhere), or at once when woken, and
 * never two polls at a time. A poll that fails (the database is gone) is logged once per outage;
 * the claims it could not record expire and are made again once the database is back.
 */
export function startDeliveryLoop(worker: DeliverWebhooks, logger: Logger, pollMs: number): DeliveryLoop {
  let timer: NodeJS.Timeout | undefined;
  let polling = false;
  let again = false;
  let stopped = false;
  let failing = false;

  const schedule = (delayMs: number): void => {
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void poll(), delayMs);
    timer.unref();
  };

  const poll = async (): Promise<void> => {
    if (polling) {
      again = true;
      return;
    }
    polling = true;
    try {
      await worker.poll();
      if (failing) logger.info('webhook deliveries: the outbox is reachable again');
      failing = false;
    } catch (error) {
      if (!failing) logger.warn({ err: error }, 'webhook deliveries: the outbox cannot be read; retrying');
      failing = true;
    } finally {
      polling = false;
    }
    if (again) {
      again = false;
      schedule(0);
    } else {
      schedule(pollMs);
    }
  };

  schedule(0);
  return {
    wake: () => schedule(0),
    async stop(graceMs) {
      stopped = true;
      clearTimeout(timer);
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([worker.settled(), new Promise<void>((resolve) => { timeout = setTimeout(resolve, graceMs); })]);
      clearTimeout(timeout);
    },
  };
}
