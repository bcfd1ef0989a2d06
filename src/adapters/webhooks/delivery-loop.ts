import type { Logger } from 'pino';
import type { DeliverWebhooks } from '../../application/webhooks/deliver-webhooks.js';
import { reasonOf } from '../../domain/failure-reason.js';


export interface DeliveryLoop {
  /** Stops looking, and waits up to `graceMs` for the attempts in flight to be recorded. */
  stop(graceMs: number): Promise<void>;
}

/** How often each instance forgets the delivery log's attempts past their 30 days (and the messages done with). */
export const WEBHOOK_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Runs the delivery worker beside the API: a poll at start, then `pollMs` (WEBHOOK_POLL_MS) after
 * each poll ends, so two never overlap. A poll that fails (the database is gone) is logged once per
 * outage; the claims it could not record expire and are made again once the database is back.
 * At start and every `pruneEveryMs` it also prunes the delivery log (several instances pruning at
 * once delete nothing twice).
 */
export function startDeliveryLoop(worker: DeliverWebhooks, logger: Logger, pollMs: number, pruneEveryMs = WEBHOOK_PRUNE_INTERVAL_MS): DeliveryLoop {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let failing = false;

  const poll = async (): Promise<void> => {
    try {
      await worker.poll();
      if (failing) logger.info('webhook deliveries: the outbox is reachable again');
      failing = false;
    } catch (error) {
      if (!failing) logger.warn({ err: error }, 'webhook deliveries: the outbox cannot be read; retrying');
      failing = true;
    }
    schedule(pollMs);
  };

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => void poll(), delayMs);
    timer.unref();
  }

  const prune = (): void => void worker.prune().catch((error: unknown) => {
    logger.warn({ reason: reasonOf(error) }, 'webhook deliveries: old attempts not pruned; tried again later');
  });
  prune();
  const pruning = setInterval(prune, pruneEveryMs);
  pruning.unref();

  schedule(0);
  return {
    async stop(graceMs) {
      stopped = true;
      clearTimeout(timer);
      clearInterval(pruning);
      let timeout: NodeJS.Timeout | undefined;
      await Promise.race([worker.settled(), new Promise<void>((resolve) => { timeout = setTimeout(resolve, graceMs); })]);
      clearTimeout(timeout);
    },
  };
}
