import { generateApiKey, hashApiKey } from '../../domain/api-key.js';
import type { Catalog } from '../../domain/catalog.js';
import type { CatalogPieces } from '../../domain/catalog-source.js';
import { jsonLdOutcome, type NoJsonLdReason, type VideoObjectJsonLd } from '../../domain/json-ld.js';
import type { StructuredDataFinding, StructuredDataFindings } from '../../domain/structured-data.js';
import type { ApiKeyListing, OperatorStore } from '../../application/ports/operator-store.js';
import { parseCommand, USAGE, UsageError, type Command } from './parse-command.js';

export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Opened only by commands that need the database; `keys generate` never does. */
  openStore(): Promise<OperatorStore>;
  /** Reads and validates a catalog file, listing every problem by JSON path. */
  readCatalog(file: string): Promise<Catalog>;
  /** A catalog file's pieces, read as a stream: an import never holds the whole file. */
  catalogPieces(file: string): CatalogPieces;
  /** What search engines' rules find wrong or missing in a JSON-LD object. */
  checkStructuredData(jsonLd: VideoObjectJsonLd): Promise<StructuredDataFindings>;
  /** The portal page where an invitation with this token is accepted. */
  invitationUrl(token: string): string;
}

/** Exit codes: 0 done, 1 the command failed, 2 the command line was wrong. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`error: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  try {
    io.stdout.write(await execute(command, io));
    return 0;
  } catch (error) {
    io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

/** Runs the command and returns what it prints: one JSON document with --json, else text. */
async function execute(command: Command, io: CliIo): Promise<string> {
  switch (command.name) {
    case 'help':
      return USAGE;
    case 'keys generate': {
      const key = generateApiKey();
      const generated = { key, sha256: hashApiKey(key) };
      return command.json ? json(generated) : `key:    ${generated.key}\nsha256: ${generated.sha256}\n`;
    }
    case 'import': {
      // The file is checked as it is written, in one transaction: a bad file changes nothing.
      const summary = await withStore(io, (store) => store.importCatalog(io.catalogPieces(command.file)));
      if (command.json) return json(summary);
      const lines = Object.entries(summary).map(([kind, counts]) =>
        `  ${kind}: ${Object.entries(counts).map(([what, n]) => `${n} ${what}`).join(', ')}`);
      return `imported ${command.file}\n${lines.join('\n')}\n`;
    }
    case 'check':
      return check(await io.readCatalog(command.file), command.json, io);
    case 'migrate': {
      const applied = await withStore(io, (store) => store.migrate());
      if (command.json) return json({ applied });
      return applied.length === 0 ? 'schema is up to date\n' : applied.map((name) => `applied ${name}\n`).join('');
    }
    case 'keys issue': {
      const issued = await withStore(io, (store) => store.issueKey(command.partner, command.label));
      if (command.json) return json({ ...issued, created_at: issued.created_at.toISOString() });
      return `issued key ${issued.id} for partner ${issued.partner}; it is shown only now, store it as a secret:\n${issued.key}\n`;
    }
    case 'keys revoke': {
      const revoked = await withStore(io, (store) => store.revokeKey(command.keyId));
      if (command.json) return json({ id: revoked.id, revoked_at: revoked.revoked_at.toISOString() });
      return `revoked key ${revoked.id} (since ${revoked.revoked_at.toISOString()})\n`;
    }
    case 'admins invite': {
      const invitation = await withStore(io, (store) => store.inviteAdmin(command.partner, command.email));
      const invited = { partner: invitation.partner, email: invitation.email, invite_url: io.invitationUrl(invitation.token), expires_at: invitation.expiresAt.toISOString() };
      if (command.json) return json(invited);
      return `invited ${invited.email} as an admin of partner ${invited.partner}; this link works once, until ${invited.expires_at}:\n${invited.invite_url}\n`;
    }
    case 'keys list': {
      const keys = (await withStore(io, (store) => store.listKeys(command.partner))).map(listing);
      if (command.json) return json(keys);
      if (keys.length === 0) return `partner ${command.partner} has no keys\n`;
      return keys.map((k) => `${k.id}\t${k.label ?? '-'}\tcreated ${k.created_at}\t${k.revoked_at === null ? 'active' : `revoked ${k.revoked_at}`}\n`).join('');
    }
  }
}

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

/** Every PDP entry of the catalog: its JSON-LD as the service would serve it, or why there is none. */
async function check(catalog: Catalog, asJson: boolean, io: CliIo): Promise<string> {
  const entries: EntryCheck[] = [];
  for (const partner of catalog.partners) {
    for (const product of partner.products) {
      for (const entry of product.pdpUrls) {
        const outcome = jsonLdOutcome(entry, product, partner.name);
        const findings = outcome.jsonLd === null ? { errors: [], warnings: [] } : await io.checkStructuredData(outcome.jsonLd);
        entries.push({
          partner: partner.id,
          sku: product.sku,
          pdp_url: entry.pdpUrl,
          json_ld: outcome.jsonLd === null ? 'null' : 'generated',
          reason: outcome.reason,
          errors: findings.errors,
          warnings: findings.warnings,
        });
      }
    }
  }
  if (asJson) return json(entries);
  const at = (finding: StructuredDataFinding): string => (finding.path === '' ? finding.message : `${finding.path}: ${finding.message}`);
  const lines = entries.flatMap((e) => [
    e.json_ld === 'null'
      ? `${e.partner} ${e.sku} ${e.pdp_url}: no JSON-LD (${e.reason ?? ''})`
      : `${e.partner} ${e.sku} ${e.pdp_url}: generated, ${e.errors.length} error${e.errors.length === 1 ? '' : 's'}, ${e.warnings.length} warning${e.warnings.length === 1 ? '' : 's'}`,
    ...e.errors.map((f) => `  error: ${at(f)}`),
    ...e.warnings.map((f) => `  warning: ${at(f)}`),
  ]);
  const generated = entries.filter((e) => e.json_ld === 'generated');
  const reasons = new Map<string, number>();
  for (const e of entries) if (e.reason !== null) reasons.set(e.reason, (reasons.get(e.reason) ?? 0) + 1);
  // Errors on the nested Product (it has no offers in a catalog without prices) do not stop a video rich result.
  const clean = generated.filter((e) => e.errors.every((f) => f.path !== '')).length;
  const summary = `${entries.length} PDP entries: ${generated.length} with JSON-LD (${clean} with no error on the VideoObject itself), ` +
    `${entries.length - generated.length} without${reasons.size === 0 ? '' : ` (${[...reasons].map(([reason, n]) => `${reason} ${n}`).join(', ')})`}`;
  return `${[...lines, summary].join('\n')}\n`;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function listing(key: ApiKeyListing) {
  return { id: key.id, label: key.label, created_at: key.created_at.toISOString(), revoked_at: key.revoked_at?.toISOString() ?? null };
}

async function withStore<T>(io: CliIo, work: (store: OperatorStore) => Promise<T>): Promise<T> {
  const store = await io.openStore();
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}
