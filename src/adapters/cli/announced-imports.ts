import type { ChangeVersions } from '../../application/instances/change-versions.js';
import type { OperatorCommands } from '../../application/catalog-import/operator-commands.js';
import { reasonOf } from '../../domain/failure-reason.js';
import { NotAnnouncedError } from '../../application/instances/not-announced.js';

/**
 * The operator commands, with every import told to the running instances once it has committed: new
 * tokens for the catalogs it changed (partners' and sandboxes' alike), and for the key set when it
 * changed a key (`ImportChanges`); an unchanged partner keeps its token, and its cached answers. If
 * Redis cannot be told, the import throws NotAnnouncedError with its summary: the write stands,
 * instances still connected to Redis may serve what they hold for up to CACHE_TTL_MS, and the same
 * file imported again tells them. (Keys issued and revoked announce themselves: the use cases do it.)
 */
export function announceImports(commands: OperatorCommands, versions: ChangeVersions): OperatorCommands {
  return {
    ...commands,
    importCatalog: (pieces, _announce, progress, trace) => commands.importCatalog(pieces, (changes, summary) => announce('the import', summary, async () => {
      // Told what the import did to the keys, an instance that cannot read the database can still apply it.
      await Promise.all([versions.catalogsChanged(changes.catalogs), changes.keys === null ? undefined : versions.keysChanged(changes.keys)]);
    }), progress, trace),
  };
}

async function announce(what: string, committed: unknown, write: () => Promise<unknown>): Promise<void> {
  try {
    await write();
  } catch (error) {
    throw new NotAnnouncedError(what, committed, reasonOf(error));
  }
}
