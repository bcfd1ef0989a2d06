import { pino, type DestinationStream, type Logger } from 'pino';
import type { Principal } from '../../domain/api-key.js';
import { traceIdsOfActiveSpan } from '../tracing/tracing.js';

const KEY_LIKE = /(pcat_(?:live|test)_)[A-Za-z0-9]*/g;

/** A path fit for a log line: anything shaped like a key, of either mode, is masked, whatever position it is in. */
export function loggablePath(path: string): string {
  return path.includes('pcat_') ? path.replace(KEY_LIKE, '$1[redacted]') : path;
}

/** What the one log line of a request says; never a header value or a key. */
export interface RequestLine {
  readonly requestId: string;
  readonly traceId: string | undefined;
  /** The request's server span while tracing is on. */
  readonly spanId?: string | undefined;
  readonly method: string | undefined;
  readonly path: string;
  readonly status: number;
  /** From the request's arrival to the write of its answer. */
  readonly ms: number;
  readonly principal: Principal | undefined;
}

/** Writes a request's log line. */
export type RequestLog = (line: RequestLine) => void;

/** The fields of the line, in the order they are written. */
function fieldsOf({ requestId, traceId, spanId, method, path, status, ms, principal }: RequestLine): Record<string, unknown> {
  const fields: Record<string, unknown> = { reqId: requestId, method, path: loggablePath(path), status, ms: roundedMs(ms) };
  if (traceId !== undefined) fields.trace_id = traceId;
  if (spanId !== undefined) fields.span_id = spanId;
  if (principal !== undefined) {
    fields.partner = principal.partnerId;
    fields.mode = principal.mode;
    fields.keyId = principal.keyId;
  }
  return fields;
}

const roundedMs = (ms: number): number => Math.round(ms * 100) / 100;

const FIELD_NAMES = ['reqId', 'method', 'path', 'status', 'ms', 'trace_id', 'span_id', 'partner', 'mode', 'keyId', 'msg'];

/** What a string needs to be written in JSON: nothing, `"` and `\` escaped, or JSON.stringify (a control character). */
function escaping(value: string): 'none' | 'quotes' | 'control' {
  let found: 'none' | 'quotes' = 'none';
  for (let i = 0; i < value.length; i += 1) {
    const code = value.charCodeAt(i);
    if (code < 32) return 'control';
    if (code === 34 || code === 92) found = 'quotes';
  }
  return found;
}

/**
 * A string as pino writes it: JSON.stringify past 100 characters or with a control character,
 * else quoted with `"` and `\` escaped. JSON.stringify on every string took more of the line's time
 * than all the rest of it.
 */
function quoted(value: string): string {
  const needs = value.length > 100 ? 'control' : escaping(value);
  if (needs === 'none') return `"${value}"`;
  return needs === 'control' ? JSON.stringify(value) : `"${value.replace(/["\\]/g, '\\$&')}"`;
}

/**
 * The request log of a logger: the line `logger.info(fields, 'request')` would write, byte for byte,
 * but made by one template instead of pino's walk over a fields object (that walk, the object and
 * its escaping took a tenth of the memory path's CPU samples). It is written only where pino would
 * do nothing more to it: no mixin (but the trace ids' one, which adds nothing to a line written
 * outside a traced step, as request lines are: a traced request's line names its span itself), log
 * formatter, write hook, nested key, message prefix, serializer or redaction of its fields, and a
 * destination that needs no metadata; elsewhere pino writes it.
 */
export function requestLogOf(logger: Logger): RequestLog {
  const {
    streamSym, chindingsSym, timeSym, lsCacheSym, endSym, messageKeySym, mixinSym, formattersSym, hooksSym, nestedKeySym,
    serializersSym, stringifiersSym, wildcardFirstSym, needsMetadataGsym,
  } = pino.symbols;
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[streamSym] as DestinationStream & Record<symbol, unknown>;
  const formatters = internals[formattersSym] as { log?: unknown } | undefined;
  const hooks = internals[hooksSym] as { streamWrite?: unknown; logMethod?: unknown } | undefined;
  const serializers = (internals[serializersSym] ?? {}) as Record<string, unknown>;
  const stringifiers = (internals[stringifiersSym] ?? {}) as Record<string | symbol, unknown>;
  const level = logger.levels.values.info;
  const levelText = (internals[lsCacheSym] as Record<number, string> | undefined)?.[level!];
  const mixin = internals[mixinSym];
  const plain = (mixin == null || mixin === traceIdsOfActiveSpan) && formatters?.log == null && hooks?.streamWrite == null && hooks?.logMethod == null && internals[nestedKeySym] == null
    && internals[messageKeySym] === 'msg' && (logger as unknown as { msgPrefix?: string }).msgPrefix === undefined
    && stream[needsMetadataGsym] !== true && stringifiers[wildcardFirstSym] == null && typeof levelText === 'string'
    && FIELD_NAMES.every((name) => serializers[name] == null && stringifiers[name] == null);
  if (!plain) return (line) => logger.info(fieldsOf(line), 'request');

  const time = internals[timeSym] as () => string;
  const end = internals[endSym] as string;
  return (line) => {
    if (!logger.isLevelEnabled('info')) return;
    const { principal, traceId, spanId } = line;
    const method = line.method === undefined ? '' : `,"method":${quoted(line.method)}`;
    const trace = traceId === undefined ? '' : `,"trace_id":${quoted(traceId)}${spanId === undefined ? '' : `,"span_id":"${spanId}"`}`;
    const who = principal === undefined ? '' : `,"partner":${quoted(principal.partnerId)},"mode":"${principal.mode}","keyId":${quoted(principal.keyId)}`;
    // Bindings are read per line: a child's may change (setBindings).
    stream.write(`${levelText}${time.call(logger)}${internals[chindingsSym] as string},"reqId":${quoted(line.requestId)}${method},"path":${quoted(loggablePath(line.path))},"status":${line.status},"ms":${roundedMs(line.ms)}${trace}${who},"msg":"request"${end}`);
  };
}
