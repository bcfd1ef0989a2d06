import type { ChangeVersions, KeyChanges } from '../../application/ports/change-versions.js';
import type { CatalogPiece, CatalogPieces } from '../../domain/catalog-source.js';
import type { OperatorStore } from '../../application/ports/operator-store.js';

/**
 * The operator store, telling every running instance of an import once it has committed: new
 * tokens for the key set and for every partner in the file. If Redis cannot be told, the import
 * fails saying so: the write stands, and instances still connected to Redis may serve what they
 * hold for up to CACHE_TTL_MS. (Keys issued and revoked announce themselves: the use cases do it.)
 */
export function announcingStore(store: OperatorStore, versions: ChangeVersions): OperatorStore {
  return {
    ...store,
    importCatalog: async (pieces) => {
      const partners: string[] = [];
      let keyChanges: KeyChanges | undefined;
      const summary = await store.importCatalog(noticingPartners(pieces, partners), (changes) => (keyChanges = changes));
      // Told what the import did to the keys, an instance that cannot read the database can still apply it.
      await announce('the import', () => Promise.all([versions.catalogsChanged(partners), versions.keysChanged(keyChanges)]));
      return summary;
    },
  };
}

/** The same pieces, noting each partner id on the way (only a file that imported whole is announced). */
async function* noticingPartners(pieces: CatalogPieces, partners: string[]): AsyncGenerator<readonly CatalogPiece[]> {
  const notice = (piece: CatalogPiece): void => {
    if (piece.kind === 'partnerField' && piece.key === 'id' && typeof piece.value === 'string') partners.push(piece.value);
  };
  if (Symbol.asyncIterator in pieces) {
    for await (const group of pieces) {
      group.forEach(notice);
      yield group;
    }
  } else {
    for (const piece of pieces) {
      notice(piece);
      yield [piece];
    }
  }
}

async function announce(what: string, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    throw new Error(
      `${what} is committed to the database, but the running instances could not be told through Redis (${reasonOf(error)}): ` +
      'instances still connected to Redis may serve what they hold for up to CACHE_TTL_MS',
    );
  }
}

function reasonOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
