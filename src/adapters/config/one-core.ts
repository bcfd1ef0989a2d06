import { availableParallelism } from 'node:os';
import type { Logger } from 'pino';

/** The V8 flag that keeps the collector's work on the main thread. */
export const SINGLE_THREADED_GC = '--single-threaded-gc';

/**
 * Whether this process, allowed `cores` CPUs, runs V8's collector on helper threads that can only
 * take the one core from the event loop. On one core (a container with one CPU, or a process pinned
 * by `taskset`), the collector's helper threads take turns with the event loop: a marking step that
 * waits for them held requests up to 24 ms, and a cold lookup's p99 was 1.7 times what it was with
 * `--single-threaded-gc` (docs/operations.md). With more cores they work beside the loop instead.
 * V8 takes the flag only on node's command line: it cannot be set once the process runs, nor in NODE_OPTIONS.
 */
export function collectorTakesTheCore(cores: number, execArgv: readonly string[]): boolean {
  return cores === 1 && !execArgv.some((arg) => arg === SINGLE_THREADED_GC || arg === '--single_threaded_gc');
}

/** Says at start, once, when the process has one core and node was started without the flag. */
export function warnOfCollectorThreadsOnOneCore(logger: Logger, cores = availableParallelism(), execArgv: readonly string[] = process.execArgv): void {
  if (!collectorTakesTheCore(cores, execArgv)) return;
  logger.warn(
    { cores, advice: `start node with ${SINGLE_THREADED_GC} (node ${SINGLE_THREADED_GC} dist/main.js)` },
    'one CPU: the garbage collector\'s helper threads take turns with the event loop and lengthen the slowest answers',
  );
}
