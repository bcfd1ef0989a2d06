import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import protobuf from 'protobufjs';

/** One span as the collector received it, its ids in hex and its attributes as plain values. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root. */
  readonly parentSpanId: string;
  /** The W3C tracestate the span carries: a caller's, when it continued one; else empty. */
  readonly traceState: string;
  readonly name: string;
  /** OTLP's numbering: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly links: readonly { readonly traceId: string; readonly spanId: string }[];
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly status: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  /** The resource's attributes (service.name and the rest). */
  readonly resource: Readonly<Record<string, string | number | boolean>>;
}

/** How the receiver treats exports: answers them, or takes them and never answers (a black hole). */
export type ReceiverMode = 'answer' | 'black-hole';

export interface OtlpReceiver {
  /** The base URL a service is given as OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  /** Every span received so far. */
  spans(): readonly ReceivedSpan[];
  /** Exports received, by content type, and their bodies' bytes. */
  readonly exports: { contentType: string; bytes: number }[];
  /** Resolves with the spans received once `test` holds for them: waits for exports, not for time. */
  waitFor(test: (spans: readonly ReceivedSpan[]) => boolean): Promise<readonly ReceivedSpan[]>;
  mode(mode: ReceiverMode): void;
  close(): Promise<void>;
}

/**
 * A real OTLP/HTTP traces receiver on loopback, as a collector would be: POST /v1/traces in protobuf
 * (decoded with protobufjs over the OTLP schema, below) or JSON (OTLP's JSON encoding), answered 200
 * with an empty ExportTraceServiceResponse.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const exports: { contentType: string; bytes: number }[] = [];
  const waiting = new Set<() => void>();
  const sockets = new Set<Socket>();
  let mode: ReceiverMode = 'answer';
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (mode === 'black-hole') return;
      const body = Buffer.concat(chunks);
      const contentType = req.headers['content-type'] ?? '';
      exports.push({ contentType, bytes: body.length });
      if (req.url !== '/v1/traces' || req.method !== 'POST') {
        res.writeHead(404).end();
        return;
      }
      received.push(...(contentType.includes('json') ? fromJson(JSON.parse(body.toString('utf8')) as JsonRequest) : fromProtobuf(body)));
      res.writeHead(200, { 'Content-Type': contentType.includes('json') ? 'application/json' : 'application/x-protobuf' }).end(contentType.includes('json') ? '{}' : Buffer.alloc(0));
      for (const wake of [...waiting]) wake();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => received,
    exports,
    waitFor: (test) => new Promise((resolve) => {
      const check = (): void => {
        if (!test(received)) return;
        waiting.delete(check);
        resolve(received);
      };
      waiting.add(check);
      check();
    }),
    mode: (chosen) => {
      mode = chosen;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** The spans of a trace, by name (the first of each name). */
export function spansByName(spans: readonly ReceivedSpan[], traceId: string): Map<string, ReceivedSpan> {
  const byName = new Map<string, ReceivedSpan>();
  for (const span of spans) if (span.traceId === traceId && !byName.has(span.name)) byName.set(span.name, span);
  return byName;
}

type JsonValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type JsonAttribute = { key: string; value: JsonValue };
interface JsonSpan {
  traceId: string; spanId: string; parentSpanId?: string; traceState?: string; name: string; kind: number; attributes?: JsonAttribute[];
  links?: { traceId: string; spanId: string }[]; status?: { code?: number }; startTimeUnixNano: string | number; endTimeUnixNano: string | number;
}
interface JsonRequest { resourceSpans: { resource?: { attributes?: JsonAttribute[] }; scopeSpans: { spans: JsonSpan[] }[] }[] }

function valueOf(value: JsonValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  return value.doubleValue ?? '';
}

function attributesOf(attributes: JsonAttribute[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((attributes ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

function fromJson(request: JsonRequest): ReceivedSpan[] {
  return request.resourceSpans.flatMap(({ resource, scopeSpans }) => scopeSpans.flatMap(({ spans }) => spans.map((span) => ({
    traceId: span.traceId,
    spanId: span.spanId,
    parentSpanId: span.parentSpanId ?? '',
    traceState: span.traceState ?? '',
    name: span.name,
    kind: span.kind,
    attributes: attributesOf(span.attributes),
    links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
    status: span.status?.code ?? 0,
    startNs: BigInt(span.startTimeUnixNano),
    endNs: BigInt(span.endTimeUnixNano),
    resource: attributesOf(resource?.attributes),
  }))));
}

/**
 * The messages of opentelemetry/proto/collector/trace/v1/trace_service.proto (and what they hold) that a
 * traces export carries, with their field numbers from the OTLP specification: what a collector decodes.
 */
const OTLP_TRACES = protobuf.Root.fromJSON({
  nested: {
    AnyValue: { oneofs: { value: { oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue'] } }, fields: { stringValue: { type: 'string', id: 1 }, boolValue: { type: 'bool', id: 2 }, intValue: { type: 'int64', id: 3 }, doubleValue: { type: 'double', id: 4 } } },
    KeyValue: { fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } } },
    Resource: { fields: { attributes: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
    Link: { fields: { traceId: { type: 'bytes', id: 1 }, spanId: { type: 'bytes', id: 2 } } },
    Status: { fields: { code: { type: 'int32', id: 3 } } },
    Span: {
      fields: {
        traceId: { type: 'bytes', id: 1 }, spanId: { type: 'bytes', id: 2 }, traceState: { type: 'string', id: 3 }, parentSpanId: { type: 'bytes', id: 4 }, name: { type: 'string', id: 5 },
        kind: { type: 'int32', id: 6 }, startTimeUnixNano: { type: 'fixed64', id: 7 }, endTimeUnixNano: { type: 'fixed64', id: 8 },
        attributes: { rule: 'repeated', type: 'KeyValue', id: 9 }, links: { rule: 'repeated', type: 'Link', id: 13 }, status: { type: 'Status', id: 15 },
      },
    },
    ScopeSpans: { fields: { spans: { rule: 'repeated', type: 'Span', id: 2 } } },
    ResourceSpans: { fields: { resource: { type: 'Resource', id: 1 }, scopeSpans: { rule: 'repeated', type: 'ScopeSpans', id: 2 } } },
    ExportTraceServiceRequest: { fields: { resourceSpans: { rule: 'repeated', type: 'ResourceSpans', id: 1 } } },
  },
}).lookupType('ExportTraceServiceRequest');

function fromProtobuf(body: Buffer): ReceivedSpan[] {
  // protobufjs leaves out empty lists and unset fields.
  type Decoded = { resourceSpans?: (Omit<JsonRequest['resourceSpans'][number], 'scopeSpans'> & { scopeSpans?: { spans?: (Omit<JsonSpan, 'kind'> & { kind?: number })[] }[] })[] };
  const decoded = OTLP_TRACES.toObject(OTLP_TRACES.decode(body), { longs: String, bytes: String, defaults: false, oneofs: false }) as Decoded;
  // protobufjs writes bytes in base64 where OTLP's JSON writes ids in hex.
  const hex = (base64: string | undefined): string => Buffer.from(base64 ?? '', 'base64').toString('hex');
  for (const resourceSpans of decoded.resourceSpans ?? []) {
    for (const scope of resourceSpans.scopeSpans ?? []) {
      for (const span of scope.spans ?? []) {
        span.traceId = hex(span.traceId);
        span.spanId = hex(span.spanId);
        span.parentSpanId = hex(span.parentSpanId);
        span.links ??= [];
        for (const link of span.links) {
          link.traceId = hex(link.traceId);
          link.spanId = hex(link.spanId);
        }
      }
    }
  }
  return fromJson({ resourceSpans: (decoded.resourceSpans ?? []).map(({ resource, scopeSpans }) => ({ ...(resource === undefined ? {} : { resource }), scopeSpans: (scopeSpans ?? []).map(({ spans }) => ({ spans: (spans ?? []).map((span) => ({ ...span, kind: span.kind ?? 0 })) })) })) });
}
