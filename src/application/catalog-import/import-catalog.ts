import type { Product } from '../../domain/catalog.js';
import { CatalogSourceError, CatalogSourceReader, type CatalogPiece, type CatalogPieces } from '../../domain/catalog-source.js';
import type { CursorKeys } from '../changes/cursor-keys.js';
import { CatalogChangedMessages } from '../webhooks/catalog-changed-messages.js';
import type { Clock } from '../common/clock.js';
import type { CatalogStore } from './catalog-store.js';
import type { AnnounceImport, ImportPhase, ImportProgress, ImportReport, ImportTrace } from './operator-commands.js';
import { ImportRun } from './import-run.js';

/**
 * Imports a `partner-catalog/v1` catalog into a store, as one unit: it lands whole or not at all.
 *
 * The rules (docs/decisions.md, catalog files):
 * - For every partner in the file, the file is the whole truth: its products, videos and PDP
 *   entries the file no longer lists are deleted; its file-listed keys the file no longer lists
 *   are revoked. Partners absent from the file, and keys issued by an operator, are left alone.
 * - A key revoked once stays revoked: a re-import never brings it back.
 * - Rows keep their IDs by identity: a product by partner and SKU, a video by partner and ref,
 *   a PDP entry by product and page.
 * - Only what changed is written, and JSON-LD is generated only for entries one of whose
 *   sources changed.
 * - A catalog whose source is the one its rows were last imported from (`catalogSourceHash`: its
 *   name and every field of its products; for a sandbox, its section's or the bundled demo's) is
 *   neither read nor written: its rows are counted unchanged. Partners that fit a batch are held
 *   whole and their stored catalogs read many at a time; a larger one is examined row by row.
 * - The instances are told (`AnnounceImport`) only of the catalogs whose rows or name it wrote or
 *   deleted, or whose source it did not know (changed, or never recorded); of the keys only when
 *   one changed, or a partner's source was not known: an import whose announcement failed leaves
 *   its catalogs so, and importing the file again tells of them.
 *
 * - A partner whose catalog the import changed gets one `catalog.changed` webhook message, to each
 *   of its enabled endpoints, queued in the same unit of work (`CatalogChangedMessages`).
 * - Each partner's sandbox, the catalog its test keys read, is imported by the same rules once
 *   every live catalog is (so a sandbox never moves a live product's ID in memory storage, where
 *   IDs follow the file's order): the file's `sandbox` section, or else the bundled demo products.
 *   A sandbox's changes reach its feed, never a webhook.
 *
 * The catalog is read piece by piece and written in batches as it is read, so memory holds a
 * batch or the partners held (HELD_BYTES), and the identities seen, whatever the file's size. A
 * file with any problem is refused with every problem listed by JSON path, and nothing it held is
 * kept.
 *
 * Traced (`ImportTrace`), each phase is run inside the trace's, and every webhook message queued
 * carries the import's trace context.
 */
export class ImportCatalog {
  constructor(
    private readonly store: CatalogStore,
    private readonly clock: Clock,
    private readonly cursorKeys: CursorKeys,
    /** The bundled demo products: the sandbox of a partner whose file section gives none. */
    private readonly demoProducts: () => Promise<readonly Product[]>,
  ) {}

  /** Imports the file; once it has committed, `announce` is told what it changed, for the instances to be told. */
  async execute(pieces: CatalogPieces, announce?: AnnounceImport, progress?: ImportProgress, trace?: ImportTrace): Promise<ImportReport> {
    const phase = <T>(name: ImportPhase, run: () => Promise<T>): Promise<T> => (trace === undefined ? run() : trace.phase(name, run));
    let committed: ImportRun | undefined;
    // Read before the unit of work starts, so the import holds no second connection for it.
    const messages = new CatalogChangedMessages(await this.cursorKeys.cursorKey(), trace?.traceparent ?? null);
    const demoProducts = await this.demoProducts();
    const report = await phase('unit of work', () => this.store.importing(async (session) => {
      const reader = new CatalogSourceReader();
      const run = new ImportRun(session, new Date(this.clock.now()), messages, demoProducts, progress);
      committed = run;
      const take = async (piece: CatalogPiece): Promise<void> => {
        if (piece.kind === 'product') progress?.productRead();
        const units = reader.read(piece);
        // Once the file is refused nothing more is written: the rest is only checked, to list every problem.
        if (reader.problems.length > 0) run.stop();
        else for (const unit of units) await run.take(unit);
      };
      await phase('read and write', async () => {
        try {
          if (Symbol.asyncIterator in pieces) {
            for await (const group of pieces) for (const piece of group) await take(piece);
          } else {
            for (const piece of pieces) await take(piece);
          }
        } catch (error) {
          // The unit of work ends here: no statement of the batch being written may come after its rollback.
          await run.settled().catch(() => undefined);
          throw error;
        }
        progress?.startStage('finishing');
        await run.settled();
      });
      const problems = reader.finish();
      if (problems.length > 0) throw new CatalogSourceError(problems);
      return phase('finish', () => run.finish());
    }));
    const run = committed;
    if (announce !== undefined && run !== undefined) await phase('announce', () => this.announce(run, announce, report));
    return report;
  }

  private async announce(run: ImportRun, announce: AnnounceImport, report: ImportReport): Promise<void> {
    try {
      await announce(run.changes(), report);
    } catch (error) {
      // Not known to match their source any more, they are changed and told of when the file comes again.
      const forgotten = run.unannounced().map((catalogId) => ({ catalogId, sourceHash: null }));
      await this.store.importing((session) => session.saveSourceHashes(forgotten)).catch(() => undefined);
      throw error;
    }
  }
}
