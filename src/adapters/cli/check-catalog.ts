import { CatalogSourceError, CatalogSourceReader, type CatalogPiece, type CatalogPieces, type CatalogUnit } from '../../domain/catalog-source.js';
import { jsonLdOutcome, type VideoObjectJsonLd } from '../../domain/json-ld.js';
import { videoObjectFindings, type StructuredDataFindings, type VideoObjectFindings } from '../../domain/structured-data.js';
import type { Product } from '../../domain/catalog.js';
import { sandboxCatalogOf } from '../../domain/sandbox.js';
import { CheckSummary, NdjsonEntries, refusedVerdict, TextEntries, validVerdict, write, type EntryCheck, type ImportedCounts } from './check-reports.js';

export interface CheckIo {
  readonly stdout: NodeJS.WritableStream;
  /** The file's pieces, read afresh on each call. */
  pieces(): CatalogPieces;
  checkStructuredData(jsonLd: VideoObjectJsonLd): Promise<StructuredDataFindings>;
  /**
   * Told of each product read, valid or not, and of each that passed the rules (when reporting, each
   * checked), and of each stage: one read of the file for a summary, two for a report by entry; and
   * when the file is read, so its last line comes before the verdict, which ends the output.
   */
  readonly progress?: { productRead(): void; productValid(): void; startStage(stage: 'checking' | 'reporting'): void; finish(): void };
}

/** A file `check` refuses: its problems as `import` names them, then the verdict, nothing would be imported. */
export class CheckRefusedError extends CatalogSourceError {
  constructor(problems: readonly string[]) {
    super(problems);
    this.message += `\n${refusedVerdict(problems.length)}`;
    this.name = 'CheckRefusedError';
  }
}

/** The report `check` prints: by finding (the default) or by entry, as text or JSON. */
export interface CheckOptions {
  readonly json: boolean;
  /** Every entry with its findings (NDJSON with `json`), rather than each finding with its number of entries. */
  readonly entries: boolean;
}

/**
 * `check`: every PDP entry of a catalog file, its JSON-LD as the service would serve it or why
 * there is none, with what search engines' rules find in it. The file is read as a stream, as
 * `import` reads it, and nothing reaches stdout unless the whole file passes the rules. The summary
 * is small, so one read makes it and prints it at the end; a report by entry is as large as the
 * file, so it takes two: one to refuse the file with every problem before printing anything, then
 * one to write the report an entry at a time. Memory stays flat whatever the file's size. A text
 * report ends with the verdict, that the file would be imported and what it holds; a refused file's
 * problems end with the verdict that nothing would be.
 */
export async function checkCatalog(io: CheckIo, options: CheckOptions): Promise<void> {
  const counts = new UnitCounts();
  if (!options.entries) {
    io.progress?.startStage('checking');
    const summary = new CheckSummary();
    const reader = await eachEntry(io, (entry) => summary.add(entry), counts);
    const problems = reader.finish();
    if (problems.length > 0) throw new CheckRefusedError(problems);
    io.progress?.finish();
    await write(io.stdout, options.json ? summary.json() : `${summary.text()}\n${validVerdict(counts)}`);
    return;
  }

  const refusal = new CatalogSourceReader();
  await eachPiece(io.pieces(), (piece) => {
    if (piece.kind === 'product') io.progress?.productRead();
    for (const unit of refusal.read(piece)) {
      counts.add(unit);
      if (unit.kind === 'product') io.progress?.productValid();
    }
  });
  const problems = refusal.finish();
  if (problems.length > 0) throw new CheckRefusedError(problems);
  io.progress?.startStage('reporting');

  const report = options.json ? new NdjsonEntries(io.stdout) : new TextEntries(io.stdout);
  const reader = await eachEntry(io, (entry) => report.entry(entry));
  // The file changed between the two reads: what is printed so far is of the first.
  const changed = reader.finish();
  if (changed.length > 0) throw new CheckRefusedError(changed);
  await report.end();
  io.progress?.finish();
  if (!options.json) await write(io.stdout, `\n${validVerdict(counts)}`);
}

/** What the rules passed, counted as an import would take it: partners, their products, their sandboxes' products. */
class UnitCounts implements ImportedCounts {
  partners = 0;
  products = 0;
  sandboxProducts = 0;

  add(unit: CatalogUnit): void {
    if (unit.kind === 'partner') this.partners += 1;
    else if (unit.kind === 'product') this.products += 1;
    else if (unit.sandbox !== null) this.sandboxProducts += unit.sandbox.length;
  }
}

/**
 * Reads the file once through the rules and hands on each PDP entry of its valid products, checked;
 * a partner's sandbox section's follow its end, under the sandbox's id (`~<partner>`). Once the
 * file has a problem nothing will be printed, so entries are no longer checked; the rules still
 * read the rest, to name every problem. Returns the reader, for its problems; `counts` counts what passed.
 */
async function eachEntry(io: CheckIo, take: (entry: EntryCheck) => Promise<void> | void, counts?: UnitCounts): Promise<CatalogSourceReader> {
  const reader = new CatalogSourceReader();
  const check = async (partnerId: string, publisher: string, product: Product): Promise<void> => {
    for (const entry of product.pdpUrls) {
      const outcome = jsonLdOutcome(entry, product, publisher);
      const findings = outcome.jsonLd === null ? NO_FINDINGS : onVideoObject(await io.checkStructuredData(outcome.jsonLd));
      const taken = take({
        partner: partnerId,
        sku: product.sku,
        pdp_url: entry.pdpUrl,
        json_ld: outcome.jsonLd === null ? 'null' : 'generated',
        reason: outcome.reason,
        errors: findings.errors,
        warnings: findings.warnings,
        notes: findings.notes,
      });
      if (taken !== undefined) await taken;
    }
  };
  await eachPiece(io.pieces(), async (piece) => {
    if (piece.kind === 'product') io.progress?.productRead();
    for (const unit of reader.read(piece)) {
      counts?.add(unit);
      if (unit.kind === 'product') {
        if (reader.problems.length === 0) await check(unit.partner.id, unit.partner.name, unit.product);
        io.progress?.productValid();
      } else if (unit.kind === 'partnerEnd' && unit.sandbox !== null && reader.problems.length === 0) {
        for (const product of unit.sandbox) await check(sandboxCatalogOf(unit.partner.id), unit.partner.name, product);
      }
    }
  });
  return reader;
}

const NO_FINDINGS: VideoObjectFindings = { errors: [], warnings: [], notes: [] };

/**
 * The checker's findings as they bear on the VideoObject, worked out once per list of findings: the
 * checker hands objects of one shape the same findings, and the summary groups them by that sameness.
 */
const asVideoObject = new WeakMap<StructuredDataFindings, VideoObjectFindings>();

function onVideoObject(findings: StructuredDataFindings): VideoObjectFindings {
  let split = asVideoObject.get(findings);
  if (split === undefined) asVideoObject.set(findings, (split = videoObjectFindings(findings)));
  return split;
}

async function eachPiece(pieces: CatalogPieces, take: (piece: CatalogPiece) => Promise<void> | void): Promise<void> {
  if (Symbol.asyncIterator in pieces) {
    for await (const group of pieces) {
      for (const piece of group) {
        const taken = take(piece);
        if (taken !== undefined) await taken;
      }
    }
  } else {
    for (const piece of pieces) {
      const taken = take(piece);
      if (taken !== undefined) await taken;
    }
  }
}
