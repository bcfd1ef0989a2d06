/** The waits between attempts at one message, in seconds, as `WEBHOOK_RETRY_SCHEDULE` gives them by default: about 27.8 hours in all. */
export const DEFAULT_RETRY_SCHEDULE_SECONDS: readonly number[] = [5, 300, 1_800, 7_200, 18_000, 36_000, 36_000];

/** A receiver's `Retry-After` is honoured up to a day; a longer one waits a day. */
export const MAX_RETRY_AFTER_SECONDS = 24 * 60 * 60;

/** Each wait is its scheduled length give or take this share, so that failed messages do not all come back at once. */
export const RETRY_JITTER = 0.1;

/** An endpoint whose attempts have all failed for this long, with none delivered, is disabled. */
export const FAILING_ENDPOINT_DISABLED_AFTER_MS = 5 * 24 * 60 * 60 * 1000;

/** The delivery log keeps each attempt this long; a message goes after it once no delivery waits for it. */
export const WEBHOOK_ATTEMPT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

/** What an attempt's answer means for its message and its endpoint. */
export type AttemptVerdict = 'delivered' | 'endpoint_gone' | 'failed';

/** 2xx delivers; 410 says the endpoint is gone for good; anything else (3xx included) or no answer fails. */
export function verdictOf(status: number | null): AttemptVerdict {
  if (status !== null && status >= 200 && status <= 299) return 'delivered';
  return status === 410 ? 'endpoint_gone' : 'failed';
}

/**
 * How long to wait after failed attempt number `attempt` (1 for the first) before the next, in
 * milliseconds; or null when the schedule is spent and the message has failed. The scheduled wait
 * is jittered by ±10 %; a longer `Retry-After` from the receiver wins, up to a day.
 */
export function retryDelayMs(
  schedule: readonly number[], attempt: number, retryAfterSeconds: number | null, random: () => number = Math.random,
): number | null {
  const scheduled = schedule[attempt - 1];
  if (scheduled === undefined) return null;
  const jittered = scheduled * 1000 * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random());
  const asked = retryAfterSeconds === null ? 0 : Math.min(retryAfterSeconds, MAX_RETRY_AFTER_SECONDS) * 1000;
  return Math.round(Math.max(jittered, asked));
}

/** The longest wait a schedule may hold: a week, so a message is never kept waiting for months by a typo. */
export const MAX_SCHEDULED_WAIT_SECONDS = 7 * 24 * 60 * 60;
const MAX_RETRIES = 20;

/**
 * Reads `WEBHOOK_RETRY_SCHEDULE`: whole seconds separated by commas, each from 1 to a week, at most
 * 20 of them; an empty value means no retry at all. Returns the waits, or a message naming what is wrong.
 */
export function parseRetrySchedule(text: string): readonly number[] | { readonly problem: string } {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  const parts = trimmed.split(',').map((part) => part.trim());
  if (parts.length > MAX_RETRIES) return { problem: `at most ${MAX_RETRIES} waits; got ${parts.length}` };
  const waits: number[] = [];
  for (const [index, part] of parts.entries()) {
    if (!/^[0-9]{1,7}$/.test(part) || Number(part) < 1 || Number(part) > MAX_SCHEDULED_WAIT_SECONDS) {
      return { problem: `wait ${index + 1} must be a whole number of seconds from 1 to ${MAX_SCHEDULED_WAIT_SECONDS}; got "${part}"` };
    }
    waits.push(Number(part));
  }
  return waits;
}
