import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Where the traced rows send their spans: a collector that takes everything and answers at once. */
export interface OtlpSink {
  /** The base URL the service is given as OTEL_EXPORTER_OTLP_ENDPOINT. */
  readonly url: string;
  /** Exports received, and their bytes. */
  readonly received: { exports: number; bytes: number };
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP receiver on loopback that reads each export whole and answers 200 with an empty
 * response, decoding nothing: the traced rows measure what tracing costs the service, not a collector.
 */
export async function startOtlpSink(): Promise<OtlpSink> {
  const received = { exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      received.bytes += chunk.length;
    });
    req.on('end', () => {
      received.exports += 1;
      res.writeHead(200, { 'Content-Type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** The settings of a row traced at `ratio` (1 for every request) towards `sink`. */
export function tracedEnv(sink: OtlpSink, ratio: number): Record<string, string> {
  return { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: String(ratio) };
}
