import { parseArgs } from 'node:util';

export type Command =
  | { readonly name: 'help' }
  | { readonly name: 'migrate'; readonly json: boolean }
  | { readonly name: 'import'; readonly json: boolean; readonly file: string }
  | { readonly name: 'check'; readonly json: boolean; readonly file: string }
  | { readonly name: 'keys issue'; readonly json: boolean; readonly partner: string; readonly label: string | null }
  | { readonly name: 'keys revoke'; readonly json: boolean; readonly keyId: string }
  | { readonly name: 'keys list'; readonly json: boolean; readonly partner: string }
  | { readonly name: 'keys generate'; readonly json: boolean }
  | { readonly name: 'admins invite'; readonly json: boolean; readonly partner: string; readonly email: string };

export const USAGE = `Usage: npm run cli -- <command> [--json]

Commands:
  migrate                                     bring the MySQL schema named by DATABASE_URL up to date
  import <file>                               validate a partner-catalog/v1 file and import it in one transaction
  check <file>                                validate a catalog file as import does and, importing nothing, report
                                              each PDP entry's JSON-LD: generated (with Google's findings) or why not
  keys issue --partner <id> [--label <text>]  create a key, print it once, store only its hash
  keys revoke <key-id>                        revoke a key from the next request on
  keys list --partner <id>                    list a partner's keys (never a key or a hash)
  keys generate                               print a fresh key and its sha256 for a catalog file; stores nothing
  admins invite --partner <id> --email <email>
                                              invite a partner admin to the portal: prints a one-time link, valid 72 hours

--json prints one JSON document instead of text.
`;

/** A command line that names no command or breaks its shape; the message says how. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export function parseCommand(argv: readonly string[]): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        json: { type: 'boolean', default: false },
        partner: { type: 'string' },
        label: { type: 'string' },
        email: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help || positionals.length === 0 || positionals[0] === 'help') return { name: 'help' };
  const json = values.json;
  const [first = '', second = ''] = positionals;
  const grouped = first === 'keys' || first === 'admins';
  const name = grouped ? `${first} ${second}` : first;
  const operands = positionals.slice(grouped ? 2 : 1);
  /** Checks the options and the one operand (named like `<file>`) the command takes, if any. */
  const allow = (options: readonly ('partner' | 'label' | 'email')[], operand?: string): void => {
    for (const option of ['partner', 'label', 'email'] as const) {
      if (values[option] !== undefined && !options.includes(option)) throw new UsageError(`${name} takes no --${option}`);
    }
    if (operand === undefined && operands.length > 0) throw new UsageError(`${name} takes no argument; got ${JSON.stringify(operands.join(' '))}`);
    if (operand !== undefined && operands.length !== 1) throw new UsageError(`${name} needs exactly one ${operand}`);
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
    case 'check':
      allow([], '<file>');
      return { name, json, file: operands[0]! };
    case 'keys issue':
      allow(['partner', 'label']);
      return { name, json, partner: partner(), label: values.label ?? null };
    case 'keys revoke':
      allow([], '<key-id>');
      return { name, json, keyId: operands[0]! };
    case 'keys list':
      allow(['partner']);
      return { name, json, partner: partner() };
    case 'keys generate':
      allow([]);
      return { name, json };
    case 'admins invite': {
      allow(['partner', 'email']);
      const partnerId = partner();
      if (values.email === undefined || values.email === '') throw new UsageError(`${name} needs --email <email>`);
      return { name, json, partner: partnerId, email: values.email };
    }
    default:
      throw new UsageError(`unknown command ${JSON.stringify(positionals.slice(0, grouped ? 2 : 1).join(' '))}`);
  }
}
