import type { ChangeVersions } from '../../application/ports/change-versions.js';
import type { CatalogPiece, CatalogPieces } from '../../domain/catalog-source.js';
import type { OperatorStore } from '../../application/ports/operator-store.js';

/**
 * The operator store, telling every running instance of each write once it has committed: a new
 * key-set token after a key is issued or revoked, and after an import new tokens for the key set
 * and for every partner in the file. If Redis cannot be told, a revocation or an import fails
 * saying so: the write stands, and instances still connected to Redis may serve what they hold
 * for up to CACHE_TTL_MS. A new key is still printed, with a warning that it may take as long to
 * work everywhere.
 */
export function announcingStore(store: OperatorStore, versions: ChangeVersions, warn: (line: string) => void): OperatorStore {
  return {
    ...store,
    importCatalog: async (pieces) => {
      const partners: string[] = [];
      const summary = await store.importCatalog(noticingPartners(pieces, partners));
      await announce('the import', () => Promise.all([versions.catalogsChanged(partners), versions.keysChanged()]));
      return summary;
    },
    issueKey: async (partnerId, label) => {
      const issued = await store.issueKey(partnerId, label);
      try {
        await versions.keysChanged();
      } catch (error) {
        warn(`warning: key ${issued.id} is issued, but the running instances could not be told through Redis (${reasonOf(error)}): ` +
          'it may be refused for up to CACHE_TTL_MS, until each instance re-reads its keys');
      }
      return issued;
    },
    revokeKey: async (keyId) => {
      const revoked = await store.revokeKey(keyId);
      await announce(`the revocation of key ${revoked.id}`, () => versions.keysChanged());
      return revoked;
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
