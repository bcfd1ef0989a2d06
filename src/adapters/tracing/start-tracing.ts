import type { TracingSettings } from './tracing-settings.js';
import type { SpanQueueCounts } from './span-queue.js';
import { useTracing, type Tracing } from './tracing.js';

const NOT_COUNTED: SpanQueueCounts = { dropped: () => undefined, exported: () => undefined };

/**
 * Turns tracing on for the process: the OpenTelemetry SDK is imported here, only now, so a process
 * with tracing off never loads it. `stop` exports what is queued within its deadline and turns it off.
 * `serviceName` names the process in its spans (the CLI's is not the API's), unless OTEL_SERVICE_NAME does.
 */
export async function startTracing(
  settings: TracingSettings, counts: SpanQueueCounts = NOT_COUNTED, serviceName?: string,
): Promise<{ stop(deadlineMs: number): Promise<void> }> {
  const { startOtelTracing } = await import('./otel-tracing.js');
  const started: Tracing = startOtelTracing(settings, counts, serviceName);
  useTracing(started);
  return {
    stop: async (deadlineMs) => {
      useTracing(undefined);
      await started.shutdown(deadlineMs);
    },
  };
}
