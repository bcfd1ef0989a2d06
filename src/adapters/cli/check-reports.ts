import { once } from 'node:events';
import type { NoJsonLdReason } from '../../domain/json-ld.js';
import type { StructuredDataFinding } from '../../domain/structured-data.js';

/** One PDP entry of a `check` report. */
export interface EntryCheck {
  readonly partner: string;
  readonly sku: string;
  readonly pdp_url: string;
  readonly json_ld: 'generated' | 'null';
  readonly reason: NoJsonLdReason | null;
  /** Google's findings on the VideoObject. */
  readonly errors: readonly StructuredDataFinding[];
  readonly warnings: readonly StructuredDataFinding[];
  /** Those on the Product it is `about`: rules for a Product rich result, not for the video's (`VideoObjectFindings`). */
  readonly notes: readonly StructuredDataFinding[];
}

/** What an import of a file that passed the rules would take. */
export interface ImportedCounts {
  readonly partners: number;
  readonly products: number;
  readonly sandboxProducts: number;
}

/** The line a text report ends with: the file passed the rules, and what an import would take. */
export function validVerdict({ partners, products, sandboxProducts }: ImportedCounts): string {
  const sandbox = sandboxProducts === 0 ? '' : `, ${plural(sandboxProducts, 'sandbox product')}`;
  return `Valid: this file would be imported (${plural(partners, 'partner')}, ${plural(products, 'product')}${sandbox}).\n`;
}

/** The line that ends what `check` says of a refused file, after its problems. */
export function refusedVerdict(problems: number): string {
  return `Not valid: ${plural(problems, 'problem')}; nothing would be imported.`;
}

/** Entries named under each finding of the summary: enough to find the pattern, few enough to read. */
export const ENTRIES_NAMED_PER_FINDING = 3;

/** Writes, waiting while the reader of the output is behind: a report is never held whole. */
export async function write(out: NodeJS.WritableStream, text: string): Promise<void> {
  if (!out.write(text)) await once(out, 'drain');
}

/** A report written an entry at a time, as each is checked (`check --entries`). */
export interface EntryReport {
  entry(entry: EntryCheck): Promise<void>;
  end(): Promise<void>;
}

/** `--json --entries`: a JSON object a line per entry (NDJSON), so a reader can take it as it comes. */
export class NdjsonEntries implements EntryReport {
  constructor(private readonly out: NodeJS.WritableStream) {}

  entry(entry: EntryCheck): Promise<void> {
    return write(this.out, `${JSON.stringify(entry)}\n`);
  }

  end(): Promise<void> {
    return Promise.resolve();
  }
}

/** `--entries`: a line per entry, its findings below it, and the totals. */
export class TextEntries implements EntryReport {
  private readonly totals = new Totals();

  constructor(private readonly out: NodeJS.WritableStream) {}

  entry(e: EntryCheck): Promise<void> {
    this.totals.add(e);
    const lines = [
      e.json_ld === 'null'
        ? `${e.partner} ${e.sku} ${e.pdp_url}: no JSON-LD (${e.reason ?? ''})`
        : `${e.partner} ${e.sku} ${e.pdp_url}: generated, ${plural(e.errors.length, 'error')}, ${plural(e.warnings.length, 'warning')}, ${plural(e.notes.length, 'note')}`,
      ...e.errors.map((f) => `  error: ${findingText(f)}`),
      ...e.warnings.map((f) => `  warning: ${findingText(f)}`),
      ...e.notes.map((f) => `  note: ${findingText(f)}`),
    ];
    return write(this.out, `${lines.join('\n')}\n`);
  }

  end(): Promise<void> {
    const legend = this.totals.legend();
    return write(this.out, `${this.totals.text()}\n${legend.length === 0 ? '' : `\n${legend.join('\n')}\n`}`);
  }
}

/** An entry as a summary names it. */
interface NamedEntry {
  readonly partner: string;
  readonly sku: string;
  readonly pdp_url: string;
}

/** Entries that share one finding, or one reason for having no JSON-LD: how many, and the first few. */
class Group {
  entries = 0;
  readonly first: NamedEntry[] = [];

  add(entry: EntryCheck): void {
    this.entries += 1;
    if (this.first.length < ENTRIES_NAMED_PER_FINDING) this.first.push({ partner: entry.partner, sku: entry.sku, pdp_url: entry.pdp_url });
  }
}

type Severity = 'error' | 'warning' | 'note';

class FindingGroup extends Group {
  constructor(readonly severity: Severity, readonly finding: StructuredDataFinding, readonly order: number) {
    super();
  }
}

/**
 * The report by finding (`check`, `check --json`): each distinct finding (its severity, path, message
 * and fields) with the number of entries it applies to and the first few of them, then each reason
 * for having no JSON-LD the same way, then the totals. Its size grows with the kinds of finding, not
 * with the entries: a catalog of a million products gets a report of a few kilobytes.
 */
export class CheckSummary {
  private readonly totals = new Totals();
  private readonly groups = new Map<string, FindingGroup>();
  /** The groups of a list of findings, worked out once per list: lists are shared by the entries of one shape. */
  private readonly groupsOfList = new WeakMap<readonly StructuredDataFinding[], readonly FindingGroup[]>();
  private readonly reasons = new Map<NoJsonLdReason, Group>();

  add(entry: EntryCheck): void {
    this.totals.add(entry);
    if (entry.reason !== null) {
      let group = this.reasons.get(entry.reason);
      if (group === undefined) this.reasons.set(entry.reason, (group = new Group()));
      group.add(entry);
    }
    for (const group of this.groupsOf('error', entry.errors)) group.add(entry);
    for (const group of this.groupsOf('warning', entry.warnings)) group.add(entry);
    for (const group of this.groupsOf('note', entry.notes)) group.add(entry);
  }

  /** Errors first, then warnings, then notes; each the most common first, then in the order first met. */
  private sorted(): FindingGroup[] {
    return [...this.groups.values()].sort((a, b) => rank(a) - rank(b) || b.entries - a.entries || a.order - b.order);
  }

  /**
   * Findings found in the same number of entries, the same ones first, under one heading that names
   * those entries: the findings a shape of object gets come as one block, not twenty repeats.
   */
  text(): string {
    const legend = this.totals.legend();
    const heading = (what: string, group: Group): string[] => [
      `${what} ${plural(group.entries, 'entry', 'entries')}${group.entries > group.first.length ? `, the first ${group.first.length}` : ''}:`,
      ...group.first.map((e) => `  ${e.partner} ${e.sku} ${e.pdp_url}`),
    ];
    const blocks = new Map<string, FindingGroup[]>();
    for (const group of this.sorted()) {
      const key = JSON.stringify([group.entries, group.first]);
      blocks.set(key, [...blocks.get(key) ?? [], group]);
    }
    const sections = [
      ...[...blocks.values()].map((groups) => [
        ...heading('Found in', groups[0]!),
        ...[...groups].sort(errorsFirst).map((group) => `${group.severity}: ${findingText(group.finding)}`),
      ]),
      ...[...this.reasons].map(([reason, group]) => heading(`No JSON-LD (${reason}) in`, group)),
      [this.totals.text()],
      legend,
    ].filter((lines) => lines.length > 0);
    return `${sections.map((lines) => lines.join('\n')).join('\n\n')}\n`;
  }

  json(): string {
    const document = {
      findings: this.sorted().map((group) => ({
        severity: group.severity, path: group.finding.path, message: group.finding.message, fields: group.finding.fields,
        entries: group.entries, first_entries: group.first,
      })),
      no_json_ld: [...this.reasons].map(([reason, group]) => ({ reason, entries: group.entries, first_entries: group.first })),
      totals: this.totals.json(),
    };
    return `${JSON.stringify(document, null, 2)}\n`;
  }

  /** The groups a list of findings falls in, each once however often the list names it. */
  private groupsOf(severity: Severity, findings: readonly StructuredDataFinding[]): readonly FindingGroup[] {
    if (findings.length === 0) return [];
    const known = this.groupsOfList.get(findings);
    if (known !== undefined) return known;
    const groups = new Set<FindingGroup>();
    for (const finding of findings) {
      const key = JSON.stringify([severity, finding.path, finding.message, finding.fields]);
      let group = this.groups.get(key);
      if (group === undefined) this.groups.set(key, (group = new FindingGroup(severity, finding, this.groups.size)));
      groups.add(group);
    }
    const list = [...groups];
    this.groupsOfList.set(findings, list);
    return list;
  }
}

const RANK: Readonly<Record<Severity, number>> = { error: 0, warning: 1, note: 2 };

const rank = (group: FindingGroup): number => RANK[group.severity];

/** Errors before warnings before notes, each in the order first met. */
function errorsFirst(a: FindingGroup, b: FindingGroup): number {
  return rank(a) - rank(b) || a.order - b.order;
}

/** The counts both text reports end with. */
class Totals {
  private entries = 0;
  private generated = 0;
  private clean = 0;
  private readonly reasons = new Map<string, number>();
  private onVideoObject = false;
  private notes = false;

  add(e: EntryCheck): void {
    this.entries += 1;
    if (e.json_ld === 'generated') this.generated += 1;
    // The nested Product's findings are notes (it has no offers in a catalog without prices): they do not stop a video rich result.
    if (e.json_ld === 'generated' && e.errors.length === 0) this.clean += 1;
    if (e.reason !== null) this.reasons.set(e.reason, (this.reasons.get(e.reason) ?? 0) + 1);
    this.onVideoObject ||= e.errors.length > 0 || e.warnings.length > 0;
    this.notes ||= e.notes.length > 0;
  }

  /**
   * What the kinds of finding met mean, in plain words: a newcomer read "error" under every entry of a
   * valid file as a broken file. None of them stops an import; the verdict after says whether the file would.
   */
  legend(): string[] {
    return [
      ...this.onVideoObject ? ['Errors and warnings are Google\'s findings on the VideoObject: an entry with an error gets no video rich result, ' +
        'and is imported all the same.'] : [],
      ...this.notes ? ['Notes are Google\'s rules for a Product rich result, found on the Product the video is about: they matter only ' +
        'to a page that wants a Product rich result, not to the VideoObject on the page.'] : [],
    ];
  }

  text(): string {
    const { entries, generated, clean, reasons } = this;
    return `${count(entries)} PDP entries: ${count(generated)} with JSON-LD (${count(clean)} with no error on the VideoObject itself), ` +
      `${count(entries - generated)} without${reasons.size === 0 ? '' : ` (${[...reasons].map(([reason, n]) => `${reason} ${count(n)}`).join(', ')})`}`;
  }

  json(): { pdp_entries: number; with_json_ld: number; with_no_error_on_video_object: number; without_json_ld: number } {
    return { pdp_entries: this.entries, with_json_ld: this.generated, with_no_error_on_video_object: this.clean, without_json_ld: this.entries - this.generated };
  }
}

/** A finding as a line shows it: its path first, unless it is about the VideoObject itself. */
function findingText(finding: StructuredDataFinding): string {
  return finding.path === '' ? finding.message : `${finding.path}: ${finding.message}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}

const count = (n: number): string => n.toLocaleString('en-US');
