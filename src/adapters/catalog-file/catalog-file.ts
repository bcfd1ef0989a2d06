import { readFile } from 'node:fs/promises';
import { parseCatalogSourceText } from '../../domain/catalog-source.js';
import type { Catalog, Product } from '../../domain/catalog.js';

/** The catalog shipped with the service, shown off when no CATALOG_FILE is given. */
export const DEMO_CATALOG_FILE = new URL('../../../catalogs/demo-catalog.json', import.meta.url);
export const DEMO_PARTNER_ID = 'demo';

let demo: Promise<readonly Product[]> | undefined;

/** The demo partner's products, read once: the sandbox of every partner whose catalog gives none. */
export function demoProducts(): Promise<readonly Product[]> {
  demo ??= readCatalogFile(DEMO_CATALOG_FILE).then((catalog) => {
    const partner = catalog.partners.find((candidate) => candidate.id === DEMO_PARTNER_ID);
    if (partner === undefined) throw new Error(`the bundled ${String(DEMO_CATALOG_FILE)} has no partner ${DEMO_PARTNER_ID}`);
    return partner.products;
  });
  return demo;
}

/** Reads and validates a catalog file; throws CatalogSourceError listing every problem. */
export async function readCatalogFile(path: string | URL): Promise<Catalog> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read catalog file ${String(path)}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  return parseCatalogSourceText(text);
}
