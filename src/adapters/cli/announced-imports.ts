import type { ChangeVersions, KeyChanges } from '../../application/instances/change-versions.js';
import type { CatalogPiece, CatalogPieces } from '../../domain/catalog-source.js';
import type { OperatorCommands } from '../../application/catalog-import/operator-commands.js';
import { reasonOf } from '../../domain/failure-reason.js';
import { NotAnnouncedError } from '../../application/instances/not-announced.js';
import { sandboxCatalogOf } from '../../domain/sandbox.js';

/**
 * The operator commands, with every import told to the running instances once it has committed: new
 * tokens for the key set and for every partner in the file. If Redis cannot be told, the import
 * throws NotAnnouncedError with its summary: the write stands, and instances still connected to
 * Redis may serve what they hold for up to CACHE_TTL_MS. (Keys issued and revoked announce
 * themselves: the use cases do it.) Each partner's sandbox is imported with it, and is told too.
 */
export function announceImports(commands: OperatorCommands, versions: ChangeVersions): OperatorCommands {
  return {
    ...commands,
    importCatalog: async (pieces, _keysChanged, progress) => {
      const partners: string[] = [];
      let keyChanges: KeyChanges | undefined;
      const summary = await commands.importCatalog(noticingPartners(pieces, partners), (changes) => (keyChanges = changes), progress);
      // Told what the import did to the keys, an instance that cannot read the database can still apply it.
      await announce('the import', summary, () => Promise.all([versions.catalogsChanged(partners.flatMap((id) => [id, sandboxCatalogOf(id)])), versions.keysChanged(keyChanges)]));
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

async function announce(what: string, committed: unknown, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    throw new NotAnnouncedError(what, committed, reasonOf(error));
  }
}
