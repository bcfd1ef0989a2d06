import { TraceFlags } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';

/** What the queue tells the metrics. */
export interface SpanQueueCounts {
  /** Ended spans that found the queue full. */
  dropped(spans: number): void;
  /** Spans whose export ended, by how. */
  exported(spans: number, outcome: 'ok' | 'failed' | 'timeout'): void;
}

export interface SpanQueueSettings {
  readonly maxQueueSize: number;
  readonly maxExportBatchSize: number;
  readonly scheduleDelayMs: number;
  readonly exportTimeoutMs: number;
}

/**
 * The ended spans on their way to the collector, bounded: at most `maxQueueSize` wait, one export
 * is under way at a time, and a span that finds the queue full is dropped and counted. Ending a
 * span is a push on an array; nothing a request does waits for the collector, whether it is slow,
 * refuses, or never answers. The SDK's BatchSpanProcessor does the same but tells its drops only
 * to an OpenTelemetry meter, where this service's figures are Prometheus's.
 */
export class SpanQueue implements SpanProcessor {
  private queue: ReadableSpan[] = [];
  private exporting: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private stopped = false;
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly exporter: SpanExporter,
    private readonly settings: SpanQueueSettings,
    private readonly counts: SpanQueueCounts,
  ) {
    this.timer = setInterval(() => this.exportNext(), settings.scheduleDelayMs);
    this.timer.unref();
  }

  onStart(): void {}

  onEnd(span: ReadableSpan): void {
    if (this.stopped || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
    if (this.queue.length >= this.settings.maxQueueSize) {
      this.counts.dropped(1);
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= this.settings.maxExportBatchSize) this.exportNext();
  }

  /** Exports everything queued now (one batch after the other). */
  async forceFlush(): Promise<void> {
    while (this.queue.length > 0 || this.exporting !== undefined) {
      this.exportNext();
      await this.exporting;
    }
  }

  /** Exports what is queued, up to `deadlineMs`; what is left then is dropped and counted. Once: later calls share the first. */
  shutdown(deadlineMs = this.settings.exportTimeoutMs): Promise<void> {
    this.stopping ??= this.stop(deadlineMs);
    return this.stopping;
  }

  private async stop(deadlineMs: number): Promise<void> {
    clearInterval(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, deadlineMs);
    });
    await Promise.race([this.forceFlush(), deadline]);
    clearTimeout(timer);
    this.stopped = true;
    if (this.queue.length > 0) this.counts.dropped(this.queue.length);
    this.queue = [];
    // An exporter whose request hangs is let go, not waited for.
    await Promise.race([this.exporter.shutdown().catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 100).unref())]);
  }

  private exportNext(): void {
    if (this.exporting !== undefined || this.queue.length === 0) return;
    const batch = this.queue.splice(0, this.settings.maxExportBatchSize);
    this.exporting = this.export(batch).then(() => {
      this.exporting = undefined;
      if (this.queue.length >= this.settings.maxExportBatchSize) this.exportNext();
    });
  }

  private export(batch: ReadableSpan[]): Promise<void> {
    return new Promise((resolve) => {
      let settled = false;
      const settle = (outcome: 'ok' | 'failed' | 'timeout'): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.counts.exported(batch.length, outcome);
        resolve();
      };
      // Given up on at the deadline: the exporter's own timeout ends its request.
      const timer = setTimeout(() => settle('timeout'), this.settings.exportTimeoutMs);
      timer.unref();
      try {
        this.exporter.export(batch, ({ code }) => settle(code === ExportResultCode.SUCCESS ? 'ok' : 'failed'));
      } catch {
        settle('failed');
      }
    });
  }
}
