import type { Logger } from 'pino';

/** How long repeats of one kind of failure are only counted, between two summary lines. */
export const FAILURE_SUMMARY_WINDOW_MS = 10_000;
/** Kinds followed at once; beyond that a failure is logged in full, so memory stays bounded. */
const MAX_KINDS = 100;
/** Kinds are named from error messages; a long one is cut, as the full line already carried it. */
const MAX_KIND_LENGTH = 200;

export interface FailureLog {
  /** Logs an unexpected error: in full the first time its kind is seen, then counted. */
  unexpected(error: unknown, requestId: string | undefined): void;
}

interface Repeats {
  count: number;
  readonly timer: NodeJS.Timeout;
}

const byLogger = new WeakMap<Logger, FailureLog>();

/**
 * The unexpected-error log of a logger, one per logger whichever path the request took. A database
 * outage fails every request the same way: the first failure of a kind is logged with its stack,
 * then one summary line per window gives how many more there were, instead of a line each.
 */
export function failureLogOf(logger: Logger): FailureLog {
  let log = byLogger.get(logger);
  if (log === undefined) {
    log = createFailureLog(logger, FAILURE_SUMMARY_WINDOW_MS);
    byLogger.set(logger, log);
  }
  return log;
}

export function createFailureLog(logger: Logger, windowMs: number): FailureLog {
  const kinds = new Map<string, Repeats>();

  // A window that saw repeats is summed up and followed by another; a quiet one forgets its kind.
  const follow = (kind: string): Repeats => {
    const repeats: Repeats = {
      count: 0,
      timer: setTimeout(() => {
        kinds.delete(kind);
        if (repeats.count === 0) return;
        logger.error({ kind, count: repeats.count, windowMs }, 'unexpected error repeated');
        kinds.set(kind, follow(kind));
      }, windowMs).unref(),
    };
    return repeats;
  };

  return {
    unexpected: (error, requestId) => {
      const kind = kindOf(error);
      const repeats = kinds.get(kind);
      if (repeats !== undefined) {
        repeats.count += 1;
        return;
      }
      if (kinds.size < MAX_KINDS) kinds.set(kind, follow(kind));
      logger.error({ err: error, reqId: requestId, kind }, 'unexpected error');
    },
  };
}

/** Errors of one kind share a name and a message. */
function kindOf(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  if ('sql' in error || 'sqlMessage' in error) {
    // A raw driver error's message is the server's, which can quote values: its code names the kind.
    const code = (error as { code?: unknown }).code;
    return `${error.name} ${typeof code === 'string' ? code : 'without a code'}`;
  }
  const kind = `${error.name}: ${error.message}`;
  return kind.length > MAX_KIND_LENGTH ? kind.slice(0, MAX_KIND_LENGTH) : kind;
}
