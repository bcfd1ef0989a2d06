import type { Attributes } from '@opentelemetry/api';
import type { ImportReport, ImportTrace } from '../../application/catalog-import/operator-commands.js';
import { NotAnnouncedError } from '../../application/instances/not-announced.js';
import { endSpan, tracedUnder, tracing } from '../tracing/tracing.js';

/** Tracing turned on for one command, and how it is turned off: what is queued exported within the deadline. */
export interface StartedTracing {
  stop(deadlineMs: number): Promise<void>;
}

/**
 * Runs an import as a trace of its own when tracing is on (decisions: traces): a root span
 * `catalog import` with a child span per phase (`ImportPhase`), and the report's counts as the root's
 * attributes, never a line of the file. The root's `traceparent` goes with the webhook messages the
 * import queues, so each attempt at delivering one links to it. Off, `work` simply runs.
 */
export async function tracedImport(work: (trace: ImportTrace | undefined) => Promise<ImportReport>): Promise<ImportReport> {
  const on = tracing();
  if (on === undefined) return work(undefined);
  const root = on.startRoot('catalog import');
  const open = [root];
  const trace: ImportTrace = {
    // An import not kept by the sampler leaves nothing for a delivery to link to.
    traceparent: root.isRecording() ? on.headersOf(root).traceparent ?? null : null,
    // Each phase below the one running (an import runs its phases one within another, never side
    // by side), kept here: no context carries spans through the import's awaits.
    phase: (phase, run) => tracedUnder(open.at(-1), `catalog import: ${phase}`, {}, async (span) => {
      if (span === undefined) return run();
      open.push(span);
      try {
        return await run();
      } finally {
        open.splice(open.lastIndexOf(span), 1);
      }
    }),
  };
  try {
    const report = await work(trace);
    root.setAttributes(countsOf(report));
    endSpan(root);
    return report;
  } catch (error) {
    // Committed and not announced: what it wrote is counted all the same.
    if (error instanceof NotAnnouncedError) root.setAttributes(countsOf(error.committed as ImportReport));
    endSpan(root, error);
    throw error;
  }
}

/** Every count of the report as `pcat.import.<kind>.<count>`: `pcat.import.products.created`, `pcat.import.partners.updated`... */
function countsOf(report: ImportReport): Attributes {
  const counts: Attributes = {};
  for (const [kind, byWhat] of Object.entries(report)) {
    for (const [what, n] of Object.entries(byWhat as Record<string, number>)) counts[`pcat.import.${kind}.${what}`] = n;
  }
  return counts;
}
