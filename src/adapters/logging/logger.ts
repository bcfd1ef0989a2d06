import { traceIdsOfActiveSpan } from '../tracing/tracing.js';
import { pino, type DestinationStream, type LevelWithSilent, type Logger } from 'pino';

export type { Logger };

/** Paths that may carry a key; pino replaces them before a line is written. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'key',
  'apiKey',
];

/** Fields of driver and query-builder errors that hold SQL text or the values bound into it. */
const STATEMENT_FIELDS = new Set(['sql', 'sqlMessage', 'parameters', 'values', 'params', 'bindings', 'query']);
const MAX_DEPTH = 5;

/**
 * Lines gather up to this many bytes before one write to stdout. A write per line (each a round trip
 * through libuv's thread pool) took a tenth of the samples of a cold lookup's profile under load, and
 * at 4 KB a batch (some 16 request lines) the hand-overs to the pool still took 4 to 5 % of the memory
 * path's samples with the service on one core, where the pool's thread takes the core from the loop.
 */
export const LOG_BATCH_BYTES = 32 * 1024;
/** The longest a line waits for its batch; at exit, whatever is gathered is written at once. */
export const LOG_FLUSH_MS = 100;

/**
 * One JSON line per event on stdout, written in batches; `destination` lets tests capture the lines.
 * With `traceIds` (tracing on), a line written within a traced step (`runIn`) carries its span's
 * `trace_id` and `span_id`; a request's own line carries its ids however it is written.
 */
export function createLogger(level: LevelWithSilent, destination?: DestinationStream, { traceIds = false } = {}): Logger {
  const options = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    base: { service: 'partner-catalog-api' },
    serializers: { err: serializeError },
    ...(traceIds ? { mixin: traceIdsOfActiveSpan } : {}),
  };
  return pino(options, destination ?? batchedStdout());
}

/**
 * Stdout in batches: each line is encoded straight into the batch's buffer, and a full batch, or one
 * that has waited `LOG_FLUSH_MS`, goes to pino's destination (sonic-boom), which writes what it is
 * handed at once, or as soon as its write under way is done. Handing it each line on its own cost a
 * buffer per line and its bookkeeping, some 3 % of the memory path's samples. At exit pino's
 * destination flushes synchronously, and the lines still gathered here go first.
 */
function batchedStdout(): DestinationStream {
  const out = pino.destination({ dest: 1, sync: false, contentMode: 'buffer', maxWrite: 2 * LOG_BATCH_BYTES });
  // In its buffer mode sonic-boom takes bytes, though its types say text.
  return new LineBatches(out as unknown as BatchDestination);
}

/** Where full batches go: written as soon as they arrive, and all of them at once by `flushSync`. */
export interface BatchDestination {
  write(batch: Buffer): unknown;
  flushSync(): void;
}

/** Room for a batch: a line that starts below `LOG_BATCH_BYTES` always fits, up to its slack. */
const BATCH_SLACK = 16 * 1024;

/** Lines encoded into batches of about `LOG_BATCH_BYTES` for a destination that writes a batch as soon as it gets one. */
export class LineBatches implements DestinationStream {
  private batch = Buffer.allocUnsafe(LOG_BATCH_BYTES + BATCH_SLACK);
  private used = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly out: BatchDestination) {
    // The destination's own flush at exit (pino's) writes the lines gathered here first.
    const flushSync = out.flushSync.bind(out);
    out.flushSync = () => {
      this.handOver();
      flushSync();
    };
  }

  write(line: string): void {
    // A UTF-16 unit takes at most 3 bytes in UTF-8: a line that may not fit goes after the batch so far, or on its own.
    if (line.length * 3 > this.batch.length - this.used) {
      this.handOver();
      if (line.length * 3 > this.batch.length) {
        this.out.write(Buffer.from(line, 'utf8'));
        return;
      }
    }
    this.used += this.batch.write(line, this.used, 'utf8');
    if (this.used >= LOG_BATCH_BYTES) this.handOver();
    else this.timer ??= setTimeout(this.handOver, LOG_FLUSH_MS).unref();
  }

  /** What is gathered goes to the destination now, and the next lines into a buffer of their own. */
  readonly handOver = (): void => {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.used === 0) return;
    const full = this.batch.subarray(0, this.used);
    this.batch = Buffer.allocUnsafe(this.batch.length);
    this.used = 0;
    this.out.write(full);
  };
}

/**
 * pino's error serializer, minus statements and their values: the storage adapter never lets a
 * driver error out, and this keeps one that slips through from writing a key hash to the log.
 * A driver error's message is the server's, which can quote values, so it goes too.
 */
export function serializeError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const serialized = scrub(pino.stdSerializers.err(error), 0) as Record<string, unknown>;
  // The standard serializer folds the causes' messages and stacks into the top ones.
  if (causes(error).some(isDriverError)) withhold(serialized);
  return serialized;
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let current = error; current !== undefined && current !== null && chain.length < MAX_DEPTH; current = (current as { cause?: unknown }).cause) {
    chain.push(current);
  }
  return chain;
}

function isDriverError(value: unknown): boolean {
  return typeof value === 'object' && value !== null && ('sql' in value || 'sqlMessage' in value);
}

function scrub(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => scrub(item, depth + 1));
  const driverError = isDriverError(value);
  const copy: Record<string, unknown> = {};
  for (const [field, inner] of Object.entries(value)) {
    if (!STATEMENT_FIELDS.has(field)) copy[field] = scrub(inner, depth + 1);
  }
  if (driverError) withhold(copy);
  return copy;
}

function withhold(serialized: Record<string, unknown>): void {
  const code = typeof serialized.code === 'string' ? ` (${serialized.code})` : '';
  serialized.message = `database driver error${code}; its message is withheld`;
  if (typeof serialized.stack === 'string') {
    const frames = serialized.stack.split('\n');
    const end = frames.findIndex((line) => line.startsWith('caused by:'));
    serialized.stack = frames.slice(0, end === -1 ? undefined : end).filter((line) => /^\s+at /.test(line)).join('\n');
  }
}
