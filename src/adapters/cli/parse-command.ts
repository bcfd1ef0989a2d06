import { parseArgs } from 'node:util';
import type { KeyMode } from '../../domain/api-key.js';

export type Command =
  | { readonly name: 'help' }
  | { readonly name: 'migrate'; readonly json: boolean }
  | { readonly name: 'import'; readonly json: boolean; readonly file: string; readonly quiet: boolean }
  | { readonly name: 'check'; readonly json: boolean; readonly file: string; readonly quiet: boolean; readonly entries: boolean }
  | { readonly name: 'keys issue'; readonly json: boolean; readonly partner: string; readonly label: string | null; readonly mode: KeyMode }
  | { readonly name: 'keys revoke'; readonly json: boolean; readonly keyId: string }
  | { readonly name: 'keys list'; readonly json: boolean; readonly partner: string }
  | { readonly name: 'keys generate'; readonly json: boolean; readonly mode: KeyMode }
  | { readonly name: 'admins invite'; readonly json: boolean; readonly partner: string; readonly email: string }
  | { readonly name: 'webhooks add'; readonly json: boolean; readonly partner: string; readonly url: string; readonly description: string | null }
  | { readonly name: 'webhooks list'; readonly json: boolean; readonly partner: string }
  | { readonly name: 'webhooks resend'; readonly json: boolean; readonly endpointId: string; readonly messageId: string }
  | { readonly name: EndpointCommand; readonly json: boolean; readonly endpointId: string };

/** The webhook commands that act on one endpoint, named by its id. */
export type EndpointCommand =
  | 'webhooks secret' | 'webhooks rotate' | 'webhooks enable' | 'webhooks disable' | 'webhooks remove' | 'webhooks test' | 'webhooks deliveries';
const ENDPOINT_COMMANDS: readonly string[] = [
  'webhooks secret', 'webhooks rotate', 'webhooks enable', 'webhooks disable', 'webhooks remove', 'webhooks test', 'webhooks deliveries',
] satisfies EndpointCommand[];

export const USAGE = `Usage: npm run cli -- <command> [--json]

Commands:
  migrate                                     bring the MySQL schema named by DATABASE_URL up to date
  import <file> [--quiet]                     validate a partner-catalog/v1 file and import it in one transaction
  check <file> [--entries] [--quiet]          validate a catalog file as import does and, importing nothing, report
                                              its PDP entries' JSON-LD: each of Google's findings with the number of
                                              entries it applies to and the first 3, each reason for no JSON-LD the
                                              same way, then the totals; --entries: each entry with its own findings
  keys issue --partner <id> [--label <text>] [--test]
                                              create a key, print it once, store only its hash; a live key
                                              (pcat_live_), or with --test a test key (pcat_test_) that reads
                                              the partner's sandbox, never its live catalog
  keys revoke <key-id>                        revoke a key from the next request on
  keys list --partner <id>                    list a partner's keys and their modes (never a key or a hash)
  keys generate [--test]                      print a fresh key and its sha256 for a catalog file; stores nothing;
                                              --test: a test key, whose file entry needs "mode": "test"
  admins invite --partner <id> --email <email>
                                              invite a partner admin to the portal: prints a one-time link, valid 72 hours
  webhooks add --partner <id> --url <url> [--description <text>]
                                              register a webhook endpoint (https, at most 10 per partner); prints its signing secret
  webhooks list --partner <id>                list a partner's webhook endpoints (never a secret)
  webhooks secret <endpoint-id>               print an endpoint's current signing secret
  webhooks rotate <endpoint-id>               a new signing secret; the old one keeps signing beside it for 24 hours
  webhooks enable <endpoint-id>               send the endpoint messages again
  webhooks disable <endpoint-id>              send the endpoint no messages until it is enabled
  webhooks remove <endpoint-id>               delete an endpoint and its secrets
  webhooks test <endpoint-id>                 send the endpoint a webhook.test message (a running instance posts it)
  webhooks deliveries <endpoint-id>           the endpoint's last 100 attempts, newest first
  webhooks resend <endpoint-id> <message-id>  send the endpoint a message again, now, with the same webhook-id

An option is given at most once. --json prints one JSON document instead of text; check --json --entries prints a JSON object a line per entry.
import and check show their progress on stderr: a line redrawn on a terminal, else a line every
4 seconds, the first after 1 (PROGRESS_INTERVAL_MS sets the 4 seconds); --quiet shows none,
nor the note that import, keys issue and keys revoke print when no Redis is set to tell running instances.
`;

/** A command line that names no command or breaks its shape; the message says how. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

type Option = 'partner' | 'label' | 'email' | 'url' | 'description' | 'quiet' | 'entries' | 'test';
const OPTIONS: readonly Option[] = ['partner', 'label', 'email', 'url', 'description', 'quiet', 'entries', 'test'];

export function parseCommand(argv: readonly string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      tokens: true,
      options: {
        json: { type: 'boolean', default: false },
        partner: { type: 'string' },
        label: { type: 'string' },
        email: { type: 'string' },
        url: { type: 'string' },
        description: { type: 'string' },
        quiet: { type: 'boolean', short: 'q' },
        entries: { type: 'boolean' },
        test: { type: 'boolean' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals, tokens } = parsed;
  if (values.help || positionals.length === 0 || positionals[0] === 'help') return { name: 'help' };
  const json = values.json;
  const [first = '', second = ''] = positionals;
  const grouped = first === 'keys' || first === 'admins' || first === 'webhooks';
  const name = grouped ? `${first} ${second}` : first;
  const operands = positionals.slice(grouped ? 2 : 1);
  /** Checks the options and the operands (named like `<file>`) the command takes, if any, and that no option is given twice. */
  const allow = (options: readonly Option[], operand?: string, count = 1): void => {
    for (const option of OPTIONS) {
      if (values[option] !== undefined && !options.includes(option)) throw new UsageError(`${name} takes no --${option}`);
    }
    // parseArgs keeps the last of a repeated option: `--partner a --partner b` would act on b unnoticed.
    const seen = new Set<string>();
    for (const token of tokens) {
      if (token.kind !== 'option') continue;
      if (seen.has(token.name)) throw new UsageError(`${name} takes --${token.name} once; it is given more than once`);
      seen.add(token.name);
    }
    if (operand === undefined && operands.length > 0) throw new UsageError(`${name} takes no argument; got ${JSON.stringify(operands.join(' '))}`);
    if (operand !== undefined && operands.length !== count) throw new UsageError(`${name} needs exactly ${count === 1 ? 'one ' : ''}${operand}`);
  };
  const partner = (): string => {
    if (values.partner === undefined || values.partner === '') throw new UsageError(`${name} needs --partner <id>`);
    return values.partner;
  };
  switch (name) {
    case 'migrate':
      allow([]);
      return { name, json };
    case 'import':
      allow(['quiet'], '<file>');
      return { name, json, file: operands[0]!, quiet: values.quiet === true };
    case 'check':
      allow(['quiet', 'entries'], '<file>');
      return { name, json, file: operands[0]!, quiet: values.quiet === true, entries: values.entries === true };
    case 'keys issue':
      allow(['partner', 'label', 'test']);
      return { name, json, partner: partner(), label: values.label ?? null, mode: modeOf(values.test) };
    case 'keys revoke':
      allow([], '<key-id>');
      return { name, json, keyId: operands[0]! };
    case 'keys list':
      allow(['partner']);
      return { name, json, partner: partner() };
    case 'keys generate':
      allow(['test']);
      return { name, json, mode: modeOf(values.test) };
    case 'admins invite': {
      allow(['partner', 'email']);
      const partnerId = partner();
      if (values.email === undefined || values.email === '') throw new UsageError(`${name} needs --email <email>`);
      return { name, json, partner: partnerId, email: values.email };
    }
    case 'webhooks add': {
      allow(['partner', 'url', 'description']);
      const partnerId = partner();
      if (values.url === undefined || values.url === '') throw new UsageError(`${name} needs --url <url>`);
      return { name, json, partner: partnerId, url: values.url, description: values.description ?? null };
    }
    case 'webhooks list':
      allow(['partner']);
      return { name, json, partner: partner() };
    case 'webhooks resend': {
      allow([], '<endpoint-id> <message-id>', 2);
      const [endpointId, messageId] = operands as [string, string];
      return { name, json, endpointId, messageId };
    }
    default:
      if (isEndpointCommand(name)) {
        allow([], '<endpoint-id>');
        return { name, json, endpointId: operands[0]! };
      }
      throw new UsageError(`unknown command ${JSON.stringify(positionals.slice(0, grouped ? 2 : 1).join(' '))}`);
  }
}

/** `--test` asks for a test key; without it, a live one. */
function modeOf(test: boolean | undefined): KeyMode {
  return test === true ? 'test' : 'live';
}

function isEndpointCommand(name: string): name is EndpointCommand {
  return ENDPOINT_COMMANDS.includes(name);
}
