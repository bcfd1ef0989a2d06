import { generateApiKey, hashApiKey } from '../../domain/api-key.js';
import type { CatalogPieces } from '../../domain/catalog-source.js';
import type { VideoObjectJsonLd } from '../../domain/json-ld.js';
import type { StructuredDataFindings } from '../../domain/structured-data.js';
import type { ApiKeyListing, OperatorCommands } from '../../application/catalog-import/operator-commands.js';
import { checkCatalog } from './check-catalog.js';
import { parseCommand, USAGE, UsageError, type Command } from './parse-command.js';
import { reasonOf } from '../../domain/failure-reason.js';
import { NotAnnouncedError } from '../../application/instances/not-announced.js';
import { progressFor, progressPolicy, type ProgressLine } from './progress.js';
import { TIMEOUTS } from '../timeouts.js';
import { tracedImport, type StartedTracing } from './traced-import.js';

export interface CliIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Deployment only by commands that need the database; `keys generate` never does. */
  openCommands(): Promise<OperatorCommands>;
  /** A catalog file's pieces, read as a stream: neither `import` nor `check` holds the whole file; `onRead` is told the bytes read so far. */
  catalogPieces(file: string, options?: { onRead?: (bytes: number) => void }): CatalogPieces;
  /** What search engines' rules find wrong or missing in a JSON-LD object. */
  checkStructuredData(jsonLd: VideoObjectJsonLd): Promise<StructuredDataFindings>;
  /** The portal page where an invitation with this token is accepted; `defaultAddress` when PORTAL_PUBLIC_URL is not set. */
  invitationUrl(token: string): { url: string; defaultAddress: boolean };
  /** The settings the CLI itself reads (how often progress is printed); none when absent. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Turns tracing on, from the OTEL_* settings, for a command that is traced (the import); undefined
   * when they leave it off, and then the OpenTelemetry SDK is not even loaded.
   */
  startTracing?(): Promise<StartedTracing | undefined>;
  /** A failure in an operator's words, saying what to do (a database that does not exist), or null to print its message. */
  explainFailure?(error: unknown): string | null;
}

/**
 * The exit code of a command whose write is committed but could not be told to the running
 * instances through Redis (NotAnnouncedError): it printed what it committed, as when told.
 */
export const EXIT_NOT_ANNOUNCED = 3;

/**
 * Said after an import or a key change made with no Redis set: the newcomer's key that an instance on
 * Redis refused came from a CLI run without REDIS_URL, which said nothing.
 */
export const NO_REDIS_HINT = 'note: no Redis is set (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES): running instances that share Redis ' +
  'learn of this change only through it; give the commands the same Redis settings as the service\n';

/** What a command's run found besides its output: a write committed and not announced, or made with nobody to announce it to. */
interface Outcome {
  notAnnounced: NotAnnouncedError | null;
  noRedis: boolean;
}

/** Exit codes: 0 done, 1 the command failed, 2 the command line was wrong, 3 (EXIT_NOT_ANNOUNCED) done but not told to the instances. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let command: Command;
  try {
    command = parseCommand(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`error: ${error.message}\n\n${USAGE}`);
    return 2;
  }
  const outcome: Outcome = { notAnnounced: null, noRedis: false };
  try {
    io.stdout.write(await execute(command, io, outcome));
    if (outcome.noRedis) io.stderr.write(NO_REDIS_HINT);
    if (outcome.notAnnounced === null) return 0;
    io.stderr.write(`warning: ${outcome.notAnnounced.message}; run the command again with Redis reachable to tell them at once\n`);
    return EXIT_NOT_ANNOUNCED;
  } catch (error) {
    io.stderr.write(`error: ${io.explainFailure?.(error) ?? reasonOf(error)}\n`);
    return 1;
  }
}

/** Runs the command and returns what it prints: one JSON document with --json, else text. */
async function execute(command: Command, io: CliIo, outcome: Outcome): Promise<string> {
  switch (command.name) {
    case 'help':
      return USAGE;
    case 'keys generate': {
      const key = generateApiKey(command.mode);
      const generated = { key, sha256: hashApiKey(key), mode: command.mode };
      if (command.json) return json(generated);
      const text = `key:    ${generated.key}\nsha256: ${generated.sha256}\n`;
      // A file entry without "mode" is a live key, and a key is taken only with its entry's mode's prefix.
      return command.mode === 'live' ? text
        : `${text}a test key: its api_keys entry in the catalog file needs "mode": "test" (an entry without "mode" is live, and this key would be refused)\n`;
    }
    case 'import': {
      // The file is checked as it is written, in one transaction: a bad file changes nothing.
      const summary = await committed(outcome, () => withTracing(io, () => withProgress(io, command, (progress) => tracedImport((trace) => withCommands(io, (commands) =>
        changing(command.quiet ? undefined : outcome, commands).importCatalog(io.catalogPieces(command.file, { onRead: (bytes) => progress?.bytesRead(bytes) }), undefined, progress, trace))))));
      if (command.json) return json(summary);
      const lines = Object.entries(summary).map(([kind, counts]) =>
        `  ${kind}: ${Object.entries(counts).map(([what, n]) => `${n} ${COUNTED[what] ?? what}`).join(', ')}`);
      return `imported ${command.file}\n${lines.join('\n')}\n`;
    }
    case 'check':
      await withProgress(io, command, (progress) => checkCatalog({
        stdout: io.stdout,
        pieces: () => io.catalogPieces(command.file, { onRead: (bytes) => progress?.bytesRead(bytes) }),
        checkStructuredData: (jsonLd) => io.checkStructuredData(jsonLd),
        ...(progress === undefined ? {} : { progress }),
      }, { json: command.json, entries: command.entries }));
      return '';
    case 'migrate': {
      const applied = await withCommands(io, (commands) => commands.migrate());
      if (command.json) return json({ applied });
      return applied.length === 0 ? 'schema is up to date\n' : applied.map((name) => `applied ${name}\n`).join('');
    }
    case 'keys issue': {
      const issued = await withCommands(io, (commands) => changing(outcome, commands).issueKey(command.partner, command.mode, command.label));
      if (command.json) {
        return json({ id: issued.id, partner: issued.partner, mode: issued.mode, label: issued.label, key: issued.key, created_at: issued.created_at.toISOString() });
      }
      const reads = issued.mode === 'live' ? 'its live catalog' : 'its sandbox, never live data';
      return `issued ${issued.mode} key ${issued.id} for partner ${issued.partner} (reads ${reads}); it is shown only now, store it as a secret:\n${issued.key}\n`;
    }
    case 'keys revoke': {
      const revoked = await committed(outcome, () => withCommands(io, (commands) => changing(outcome, commands).revokeKey(command.keyId)));
      if (command.json) return json({ id: revoked.id, revoked_at: revoked.revoked_at.toISOString() });
      return `revoked key ${revoked.id} (since ${revoked.revoked_at.toISOString()})\n`;
    }
    case 'admins invite': {
      const invitation = await withCommands(io, (commands) => commands.inviteAdmin(command.partner, command.email));
      const link = io.invitationUrl(invitation.token);
      const invited = { partner: invitation.partner, email: invitation.email, invite_url: link.url, expires_at: invitation.expiresAt.toISOString() };
      // The default is the portal's listener, which partners rarely reach: the newcomer's link on :3001 named nothing to change.
      if (link.defaultAddress) io.stderr.write(`note: the link uses the portal's default address, ${new URL(link.url).origin}; PORTAL_PUBLIC_URL sets the one partners reach\n`);
      if (command.json) return json(invited);
      return `invited ${invited.email} as an admin of partner ${invited.partner}; this link works once, until ${invited.expires_at}:\n${invited.invite_url}\n`;
    }
    case 'webhooks add': {
      const { endpoint, secret } = await withCommands(io, (commands) =>
        commands.webhooks.add.execute({ partnerId: command.partner, url: command.url, description: command.description, actor: null }));
      const added = { id: endpoint.id, partner: endpoint.partnerId, url: endpoint.url, description: endpoint.description, secret, created_at: endpoint.createdAt.toISOString() };
      if (command.json) return json(added);
      return `added webhook endpoint ${added.id} for partner ${added.partner}: ${added.url}\nits signing secret (webhooks secret ${added.id} shows it again):\n${secret}\n`;
    }
    case 'webhooks list': {
      const endpoints = (await withCommands(io, (commands) => commands.webhooks.list.execute({ partnerId: command.partner })))
        .map((e) => ({ id: e.id, url: e.url, description: e.description, status: e.status, created_at: e.createdAt.toISOString() }));
      if (command.json) return json(endpoints);
      if (endpoints.length === 0) return `partner ${command.partner} has no webhook endpoints\n`;
      return endpoints.map((e) => `${e.id}\t${e.status}\t${e.url}\t${e.description ?? '-'}\tcreated ${e.created_at}\n`).join('');
    }
    case 'webhooks secret': {
      const revealed = await withCommands(io, (commands) => commands.webhooks.revealSecret.execute({ partnerId: null, endpointId: command.endpointId }));
      return command.json ? json(revealed) : `${revealed.secret}\n`;
    }
    case 'webhooks rotate': {
      const rotated = await withCommands(io, (commands) => commands.webhooks.rotateSecret.execute({ partnerId: null, endpointId: command.endpointId, actor: null }));
      if (command.json) return json(rotated);
      return `rotated the signing secret of webhook endpoint ${rotated.id}; the previous one keeps signing beside it for 24 hours. The new one:\n${rotated.secret}\n`;
    }
    case 'webhooks enable':
    case 'webhooks disable': {
      const status = command.name === 'webhooks enable' ? 'enabled' : 'disabled';
      const changed = await withCommands(io, (commands) => commands.webhooks.setStatus.execute({ partnerId: null, endpointId: command.endpointId, status, actor: null }));
      return command.json ? json(changed) : `webhook endpoint ${changed.id} is ${changed.status}\n`;
    }
    case 'webhooks test': {
      const sent = await withCommands(io, (commands) => commands.webhooks.sendTest.execute({ partnerId: null, endpointId: command.endpointId }));
      if (command.json) return json({ id: sent.id, message_id: sent.messageId });
      return `queued webhook.test message ${sent.messageId} for webhook endpoint ${sent.id}; a running instance posts it (webhooks deliveries ${sent.id} shows the attempt)\n`;
    }
    case 'webhooks deliveries': {
      const log = (await withCommands(io, (commands) => commands.webhooks.deliveries.execute({ partnerId: null, endpointId: command.endpointId }))).map((entry) => ({
        message_id: entry.messageId, type: entry.type, attempt: entry.attempt, resend: entry.resend, at: entry.at.toISOString(), status: entry.status, error: entry.error,
        duration_ms: entry.durationMs,
      }));
      if (command.json) return json(log);
      if (log.length === 0) return `webhook endpoint ${command.endpointId} has no attempts yet\n`;
      return log.map((e) => `${e.at}\t${e.type}\t${e.message_id}\tattempt ${e.attempt}${e.resend ? ' (resend)' : ''}\t${e.status ?? '-'}\t${e.error ?? '-'}\t${e.duration_ms} ms\n`).join('');
    }
    case 'webhooks resend': {
      const resent = await withCommands(io, (commands) =>
        commands.webhooks.resend.execute({ partnerId: null, endpointId: command.endpointId, messageId: command.messageId }));
      if (command.json) return json({ id: resent.id, message_id: resent.messageId });
      return `queued message ${resent.messageId} again for webhook endpoint ${resent.id}; a running instance posts it (webhooks deliveries ${resent.id} shows the attempt)\n`;
    }
    case 'webhooks remove': {
      const removed = await withCommands(io, (commands) => commands.webhooks.remove.execute({ partnerId: null, endpointId: command.endpointId, actor: null }));
      return command.json ? json({ id: removed.id, removed: true }) : `removed webhook endpoint ${removed.id}\n`;
    }
    case 'keys list': {
      const keys = (await withCommands(io, (commands) => commands.listKeys(command.partner))).map(listing);
      if (command.json) return json(keys);
      if (keys.length === 0) return `partner ${command.partner} has no keys\n`;
      // A person at a terminal is told the columns; a program reading a pipe gets the lines alone, as before.
      const header = (io.stdout as { isTTY?: boolean }).isTTY === true ? KEYS_LIST_HEADER : '';
      return header + keys.map((k) => `${k.id}\t${k.mode}\t${k.label ?? '-'}\tcreated ${k.created_at}\t${k.revoked_at === null ? 'active' : `revoked ${k.revoked_at}`}\n`).join('');
    }
  }
}

/** The import's counts whose name alone left a newcomer guessing, in the text report. */
const COUNTED: Readonly<Record<string, string>> = { regenerated: 'regenerated (JSON-LD made anew)' };

/** The columns of `keys list`'s lines, tab-separated as they are. */
export const KEYS_LIST_HEADER = 'id\tmode\tlabel\tcreated\tstatus\n';

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function listing(key: ApiKeyListing) {
  return { id: key.id, mode: key.mode, label: key.label, created_at: key.created_at.toISOString(), revoked_at: key.revoked_at?.toISOString() ?? null };
}

/** What the work committed, also when it could not be announced (noted in the outcome, for the exit code). */
async function committed<T>(outcome: Outcome, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof NotAnnouncedError)) throw error;
    outcome.notAnnounced = error;
    return error.committed as T;
  }
}

/** The work, with its progress line on stderr unless `--quiet`: stdout keeps only the command's output. */
async function withProgress<T>(io: CliIo, command: { name: 'import' | 'check'; file: string; quiet: boolean }, work: (progress: ProgressLine | undefined) => Promise<T>): Promise<T> {
  const progress = command.quiet ? undefined : await progressFor(command.name, command.file, io.stderr, progressPolicy(io.env ?? {}));
  try {
    const result = await work(progress);
    progress?.finish();
    return result;
  } catch (error) {
    // Committed and not announced: the work is done, and its line ends as done.
    if (error instanceof NotAnnouncedError) progress?.finish();
    else progress?.fail();
    throw error;
  }
}

/** The work with tracing on when the settings turn it on, its spans exported (within TIMEOUTS.traceFlushMs) before it returns. */
async function withTracing<T>(io: CliIo, work: () => Promise<T>): Promise<T> {
  const started = await io.startTracing?.();
  try {
    return await work();
  } finally {
    await started?.stop(TIMEOUTS.traceFlushMs);
  }
}

/** The commands, the outcome (none under --quiet) noting a change made while no Redis is set to tell the instances of it. */
function changing(outcome: Outcome | undefined, commands: OperatorCommands): OperatorCommands {
  if (outcome !== undefined) outcome.noRedis = !commands.announcesChanges;
  return commands;
}

async function withCommands<T>(io: CliIo, work: (commands: OperatorCommands) => Promise<T>): Promise<T> {
  const commands = await io.openCommands();
  try {
    return await work(commands);
  } finally {
    await commands.close();
  }
}
