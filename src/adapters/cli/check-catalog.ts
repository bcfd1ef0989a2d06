import { once } from 'node:events';
import { CatalogSourceError, CatalogSourceReader, type CatalogPiece, type CatalogPieces, type CatalogUnit } from '../../domain/catalog-source.js';
import { jsonLdOutcome, type NoJsonLdReason, type VideoObjectJsonLd } from '../../domain/json-ld.js';
import type { StructuredDataFinding, StructuredDataFindings } from '../../domain/structured-data.js';

/** One PDP entry of a `check` report. */
interface EntryCheck {
  readonly partner: string;
  readonly sku: string;
  readonly pdp_url: string;
  readonly json_ld: 'generated' | 'null';
  readonly reason: NoJsonLdReason | null;
  readonly errors: readonly StructuredDataFinding[];
  readonly warnings: readonly StructuredDataFinding[];
}

export interface CheckIo {
  readonly stdout: NodeJS.WritableStream;
  /** The file's pieces, read afresh on each call. */
  pieces(): CatalogPieces;
  checkStructuredData(jsonLd: VideoObjectJsonLd): Promise<StructuredDataFindings>;
  /** Told of each product read, and when the second read begins. */
  readonly progress?: { product(): void; startStage(stage: 'reporting'): void };
}

/**
 * `check`: every PDP entry of a catalog file, its JSON-LD as the service would serve it or why
 * there is none. The file is read twice as a stream, as `import` reads it: first to refuse it with
 * every problem before printing anything, then to write the report an entry at a time, so memory
 * stays flat whatever the file's size.
 */
export async function checkCatalog(io: CheckIo, asJson: boolean): Promise<void> {
  const refusal = new CatalogSourceReader();
  await eachUnit(io.pieces(), refusal, (unit) => {
    if (unit.kind === 'product') io.progress?.product();
    return Promise.resolve();
  });
  const problems = refusal.finish();
  if (problems.length > 0) throw new CatalogSourceError(problems);
  io.progress?.startStage('reporting');

  const report = asJson ? new JsonReport(io.stdout) : new TextReport(io.stdout);
  const reader = new CatalogSourceReader();
  await eachUnit(io.pieces(), reader, async (unit) => {
    if (unit.kind !== 'product') return;
    const { partner, product } = unit;
    for (const entry of product.pdpUrls) {
      const outcome = jsonLdOutcome(entry, product, partner.name);
      const findings = outcome.jsonLd === null ? { errors: [], warnings: [] } : await io.checkStructuredData(outcome.jsonLd);
      await report.entry({
        partner: partner.id,
        sku: product.sku,
        pdp_url: entry.pdpUrl,
        json_ld: outcome.jsonLd === null ? 'null' : 'generated',
        reason: outcome.reason,
        errors: findings.errors,
        warnings: findings.warnings,
      });
    }
    io.progress?.product();
  });
  // The file changed between the two reads: what is printed so far is of the first.
  const changed = reader.finish();
  if (changed.length > 0) throw new CatalogSourceError(changed);
  await report.end();
}

async function eachUnit(pieces: CatalogPieces, reader: CatalogSourceReader, take: (unit: CatalogUnit) => Promise<void>): Promise<void> {
  const read = async (piece: CatalogPiece): Promise<void> => {
    for (const unit of reader.read(piece)) await take(unit);
  };
  if (Symbol.asyncIterator in pieces) {
    for await (const group of pieces) for (const piece of group) await read(piece);
  } else {
    for (const piece of pieces) await read(piece);
  }
}

/** Writes, waiting while the reader of the output is behind: the report is never held whole. */
async function write(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/** The report as `JSON.stringify(entries, null, 2)` would print it, written an entry at a time. */
class JsonReport {
  private count = 0;

  constructor(private readonly out: NodeJS.WritableStream) {}

  entry(entry: EntryCheck): Promise<void> {
    const text = JSON.stringify(entry, null, 2).replaceAll('\n', '\n  ');
    return write(this.out, `${this.count++ === 0 ? '[\n' : ',\n'}  ${text}`);
  }

  end(): Promise<void> {
    return write(this.out, this.count === 0 ? '[]\n' : '\n]\n');
  }
}

/** A line per entry, its findings below it, and a summary. */
class TextReport {
  private entries = 0;
  private generated = 0;
  private clean = 0;
  private readonly reasons = new Map<string, number>();

  constructor(private readonly out: NodeJS.WritableStream) {}

  entry(e: EntryCheck): Promise<void> {
    this.entries += 1;
    if (e.json_ld === 'generated') this.generated += 1;
    // Errors on the nested Product (it has no offers in a catalog without prices) do not stop a video rich result.
    if (e.json_ld === 'generated' && e.errors.every((f) => f.path !== '')) this.clean += 1;
    if (e.reason !== null) this.reasons.set(e.reason, (this.reasons.get(e.reason) ?? 0) + 1);
    const at = (finding: StructuredDataFinding): string => (finding.path === '' ? finding.message : `${finding.path}: ${finding.message}`);
    const lines = [
      e.json_ld === 'null'
        ? `${e.partner} ${e.sku} ${e.pdp_url}: no JSON-LD (${e.reason ?? ''})`
        : `${e.partner} ${e.sku} ${e.pdp_url}: generated, ${e.errors.length} error${e.errors.length === 1 ? '' : 's'}, ${e.warnings.length} warning${e.warnings.length === 1 ? '' : 's'}`,
      ...e.errors.map((f) => `  error: ${at(f)}`),
      ...e.warnings.map((f) => `  warning: ${at(f)}`),
    ];
    return write(this.out, `${lines.join('\n')}\n`);
  }

  end(): Promise<void> {
    const { entries, generated, clean, reasons } = this;
    return write(this.out, `${entries} PDP entries: ${generated} with JSON-LD (${clean} with no error on the VideoObject itself), ` +
      `${entries - generated} without${reasons.size === 0 ? '' : ` (${[...reasons].map(([reason, n]) => `${reason} ${n}`).join(', ')})`}\n`);
  }
}
