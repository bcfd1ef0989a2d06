import type { OtlpSink } from './otlp-sink.js';
import type { BenchCatalog } from './bench-catalog.js';

/** One row of the table: a server script started fresh for every run. */
export interface Target {
  readonly name: string;
  readonly script: string;
  readonly env: Record<string, string>;
  /** The row every ratio is taken against. */
  readonly reference?: boolean;
  cleanup?(): Promise<void>;
}

export interface BenchContext {
  readonly dir: string;
  readonly catalog: BenchCatalog;
  readonly generator: 'wrk' | 'autocannon';
  /** The service's own answer for one product, written by the bare servers. */
  readonly bodyFile: string;
  /** The headers the service sent with that answer (JSON: names and values in order, request ID first), for the bare server's `headers` mode. */
  readonly headersFile: string;
  readonly serviceEnv: Record<string, string>;
  /** The service's entry point (`src/main.ts`, or another checkout's with --service-dir). */
  readonly serviceScript: string;
  /** Where the traced rows export their spans. */
  readonly otlpSink: OtlpSink;
}
