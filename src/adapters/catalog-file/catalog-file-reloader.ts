import { unwatchFile, watch, watchFile } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { ImportCatalog } from '../../application/catalog-import/import-catalog.js';
import type { ImportReport } from '../../application/catalog-import/operator-commands.js';
import { CatalogSourceError } from '../../domain/catalog-source.js';
import { catalogFilePieces } from './catalog-pieces.js';
import { reasonOf } from '../../domain/failure-reason.js';

/** Changes this close together are read once: a file written in several parts, an editor's save. */
const SETTLE_MS = 200;
/** How often the file is looked at when its directory cannot be watched. */
const POLL_MS = 2_000;

/**
 * Keeps memory storage's catalog the file's: imports it at start, then again when asked (SIGHUP)
 * or when the file changes on disk. Reloads never overlap, and one asked for while another runs
 * is made once after it, so the last change is always read. A file with any problem is refused
 * with every problem logged, and the catalog already loaded keeps serving: the import publishes
 * nothing of a refused file.
 */
export class CatalogFileReloader {
  private readonly path: string;
  private running: Promise<void> | null = null;
  private pending: string | null = null;
  /** The file as last read; a change elsewhere in its directory matters only if this changed too. */
  private seen = '';
  private settling: NodeJS.Timeout | null = null;
  private namedChange = false;
  private stopWatching: (() => void) | null = null;

  constructor(
    file: string | URL,
    private readonly importer: ImportCatalog,
    private readonly logger: Logger,
  ) {
    this.path = typeof file === 'string' ? file : fileURLToPath(file);
  }

  /** The first import: throws on an unreadable or refused file, so that start-up fails. */
  async load(): Promise<ImportReport> {
    const started = performance.now();
    this.seen = await fingerprint(this.path);
    const report = await this.importer.execute(catalogFilePieces(this.path)).catch((error: unknown) => {
      if (error instanceof CatalogSourceError || !(error instanceof Error)) throw error;
      throw new Error(`CATALOG_FILE: ${error.message}; set CATALOG_FILE to a partner-catalog/v1 file this process can read, or unset it to serve the demo catalog`);
    });
    this.logger.info({ file: this.path, ms: Math.round(performance.now() - started), ...report }, 'catalog loaded');
    return report;
  }

  /** Reloads now, or once more after the reload under way; logs the outcome and never throws. */
  reload(trigger: string): Promise<void> {
    this.pending = trigger;
    this.running ??= this.drain();
    return this.running;
  }

  /**
   * Reloads when the file changes. The directory is watched, not the file: a file replaced by a
   * rename, as editors and `mv` do, is a new file that a watch on the old one never hears of.
   */
  watch(): void {
    const name = basename(this.path);
    try {
      const watcher = watch(dirname(this.path), { persistent: false }, (_event, changed) => this.changed(changed === null || changed === name));
      watcher.on('error', (error) => {
        watcher.close();
        this.poll(error);
      });
      this.stopWatching = () => watcher.close();
    } catch (error) {
      this.poll(error);
    }
  }

  close(): void {
    this.stopWatching?.();
    this.stopWatching = null;
    if (this.settling !== null) clearTimeout(this.settling);
  }

  private poll(reason: unknown): void {
    this.logger.warn({ file: this.path, reason: reasonOf(reason), intervalMs: POLL_MS }, 'catalog file: its directory cannot be watched; polling the file');
    const listener = (): void => this.changed(true);
    watchFile(this.path, { persistent: false, interval: POLL_MS }, listener);
    this.stopWatching = () => unwatchFile(this.path, listener);
  }

  private changed(named: boolean): void {
    this.namedChange ||= named;
    // Only the file's own changes put the read off: a busy neighbour in the directory must not delay it for ever.
    if (this.settling !== null && !named) return;
    if (this.settling !== null) clearTimeout(this.settling);
    this.settling = setTimeout(() => void this.settled(), SETTLE_MS);
    this.settling.unref();
  }

  private async settled(): Promise<void> {
    this.settling = null;
    const named = this.namedChange;
    this.namedChange = false;
    // Another name changing can still change the file: a symlink on its path repointed, as a mounted Kubernetes ConfigMap is updated.
    if (named || (await fingerprint(this.path)) !== this.seen) await this.reload('file changed');
  }

  private async drain(): Promise<void> {
    try {
      for (let trigger = this.pending; trigger !== null; trigger = this.pending) {
        this.pending = null;
        await this.reloadOnce(trigger);
      }
    } finally {
      this.running = null;
    }
  }

  private async reloadOnce(trigger: string): Promise<void> {
    const started = performance.now();
    const ms = (): number => Math.round(performance.now() - started);
    try {
      this.seen = await fingerprint(this.path);
      const report = await this.importer.execute(catalogFilePieces(this.path));
      this.logger.info({ file: this.path, trigger, ms: ms(), ...report }, 'catalog reloaded');
    } catch (error) {
      const problems = error instanceof CatalogSourceError ? error.problems : [reasonOf(error)];
      this.logger.error({ file: this.path, trigger, ms: ms(), problems }, 'catalog reload refused');
    }
  }
}

/** What tells one version of the file from the next without reading it; `missing` when there is none. */
async function fingerprint(path: string): Promise<string> {
  const found = await stat(path).catch(() => null);
  return found === null ? 'missing' : [found.dev, found.ino, found.size, found.mtimeMs, found.ctimeMs].join(':');
}
