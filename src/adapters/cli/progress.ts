import { stat } from 'node:fs/promises';

/** When `import` and `check` print their progress line on stderr, in milliseconds. */
export interface ProgressPolicy {
  /** The first line, once the work has run this long: a command done sooner prints none. */
  readonly firstMs: number;
  /** Then, in a log or a pipe, a line at least this often, whether or not anything moved. */
  readonly everyMs: number;
  /** On a terminal, the one line is redrawn this often. */
  readonly redrawMs: number;
}

/**
 * A first line within 2 s of the start, then one at least every 5 s (docs/operations.md, progress of
 * long commands): each a second sooner than that, as a busy event loop or machine can hold a timer back.
 */
export const PROGRESS_POLICY: ProgressPolicy = { firstMs: 1_000, everyMs: 4_000, redrawMs: 250 };

/** The setting that changes how often a line is printed; 0 prints one at every step (each read of the file, each batch written). */
export const PROGRESS_INTERVAL_SETTING = 'PROGRESS_INTERVAL_MS';
const MAX_INTERVAL_MS = 3_600_000;
/** Products between two looks at whether a line is due. */
const PRODUCTS_PER_LOOK = 64;

/** The policy, with the interval the environment sets, if it sets one. */
export function progressPolicy(env: Readonly<Record<string, string | undefined>>): ProgressPolicy {
  const value = env[PROGRESS_INTERVAL_SETTING]?.trim();
  if (value === undefined || value === '') return PROGRESS_POLICY;
  const everyMs = /^[0-9]+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(everyMs) || everyMs > MAX_INTERVAL_MS) {
    throw new Error(`${PROGRESS_INTERVAL_SETTING}: must be a whole number of milliseconds from 0 to ${MAX_INTERVAL_MS}; got ${JSON.stringify(value)}`);
  }
  return { firstMs: Math.min(PROGRESS_POLICY.firstMs, everyMs), everyMs, redrawMs: Math.min(PROGRESS_POLICY.redrawMs, everyMs) };
}

/** Where the line goes: stderr, a terminal or not. */
export interface ProgressOutput {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/**
 * The stages of the two commands: `import` reads and writes, then finishes its transaction; `check`
 * reads the file once for its summary (checking), or twice for its report by entry (validating, then reporting).
 */
export type ProgressStage = 'reading' | 'finishing' | 'checking' | 'validating' | 'reporting';

/**
 * The progress of an `import` or a `check`, on stderr so stdout holds only the command's output.
 * On a terminal one line is redrawn in place and ended when the work ends; in a log or a pipe a
 * plain line is printed when one is due. A line falls due on the policy's clock, and is printed at
 * the next step of the work or by a timer when the work is quiet (a long statement, the commit).
 */
export class ProgressLine {
  private readonly started: number;
  private stage: ProgressStage;
  private stageStarted: number;
  /** Products of the file read in this stage, valid or not. */
  private read = 0;
  /** Products of this stage that passed the rules (`check`; when reporting, those checked). */
  private valid = 0;
  /** Products read or passed in this stage, to look at the clock every few. */
  private moves = 0;
  /** Products `check` validated in its first stage: the second's whole. */
  private validated: number | null = null;
  private written = 0;
  private bytes = 0;
  private due: number;
  private timer: NodeJS.Timeout | undefined;
  private printed = false;
  private ended = false;

  constructor(
    private readonly command: 'import' | 'check',
    private readonly out: ProgressOutput,
    private readonly policy: ProgressPolicy,
    /** The file's size. */
    private readonly totalBytes: number,
    /** Milliseconds since the process started. */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.started = this.now();
    this.stageStarted = this.started;
    this.stage = command === 'import' ? 'reading' : 'validating';
    // Counted from the process's start (the clock's origin), as the person who started it counts: the
    // time spent loading the program is part of the wait. A terminal gets its line within a redraw.
    this.due = Math.max(this.started, out.isTTY === true ? this.started + policy.redrawMs : policy.firstMs);
    this.schedule();
  }

  /** A product of the file read, valid or not: a refused file's line counts every product, not only those before its problems. */
  productRead(): void {
    this.read += 1;
    this.moved();
  }

  /** A product that passed the rules (`check`; when reporting, one checked). */
  productValid(): void {
    this.valid += 1;
    this.moved();
  }

  /** Products written so far, in the import's unit of work. */
  productsWritten(total: number): void {
    this.written = total;
    this.step();
  }

  /** Bytes of the file read so far in this stage. */
  bytesRead(total: number): void {
    this.bytes = total;
    this.step();
  }

  startStage(stage: ProgressStage): void {
    if (stage === 'reporting') this.validated = this.valid;
    if (stage !== 'finishing') {
      this.read = 0;
      this.valid = 0;
      this.bytes = 0;
      this.stageStarted = this.now();
    }
    this.stage = stage;
    this.step();
  }

  /** The work is done: a last line, if any was printed, says what it came to. */
  finish(): void {
    this.end(true);
  }

  /** The work failed: the line says where it stopped; the error follows it. */
  fail(): void {
    this.end(false);
  }

  private end(done: boolean): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.timer);
    if (!this.printed) return;
    const seconds = (this.now() - this.started) / 1_000;
    const text = done ? this.doneText(seconds) : `${this.command}: stopped after ${seconds.toFixed(1)} s: ${this.figures()}`;
    this.out.write(this.out.isTTY === true ? `\r\x1b[K${text}\n` : `${text}\n`);
  }

  /** A look at the clock every few products: work that keeps the event loop busy holds timers back. */
  private moved(): void {
    this.moves += 1;
    if (this.moves % PRODUCTS_PER_LOOK === 0) this.step();
  }

  /** Something moved: print if a line is due. */
  private step(): void {
    if (this.ended || this.now() < this.due) return;
    this.print();
  }

  private print(): void {
    const now = this.now();
    const text = this.text(now);
    if (this.out.isTTY === true) {
      // A line wider than the terminal would wrap, and the next redraw would start on its second row.
      // A terminal that tells no size (a pseudo-terminal of none) counts as 80 columns.
      const width = Math.max((this.out.columns === undefined || this.out.columns === 0 ? 80 : this.out.columns) - 1, 20);
      this.out.write(`\r\x1b[K${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
    } else this.out.write(`${text}\n`);
    this.printed = true;
    this.due = now + (this.out.isTTY === true ? this.policy.redrawMs : this.policy.everyMs);
    this.schedule();
  }

  /** A timer for the next line, so a quiet stretch of the work still gets one; none when each step prints. */
  private schedule(): void {
    clearTimeout(this.timer);
    const interval = this.out.isTTY === true ? this.policy.redrawMs : this.policy.everyMs;
    if (this.ended || (interval === 0 && this.printed)) return;
    this.timer = setTimeout(() => {
      if (!this.ended) this.print();
    }, Math.max(0, this.due - this.now()));
    this.timer.unref();
  }

  /** What matters most first, so a narrow terminal cuts only the rate: how far, how long, then the counts. */
  private text(now: number): string {
    const label = this.command === 'check' ? `check: ${this.stage}` : 'import';
    if (this.stage === 'finishing') return `${label}: the file is read, finishing (deletions, keys, commit); ${this.figures()}`;
    const seconds = (now - this.stageStarted) / 1_000;
    const left = this.bytes === 0 || this.bytes >= this.totalBytes ? ''
      : `, about ${duration((seconds * (this.totalBytes - this.bytes)) / this.bytes)} left`;
    const products = this.stage === 'reporting' ? this.valid : this.read;
    const rate = seconds > 0 && products > 0 ? `; ${count(Math.round(products / seconds))} products/s` : '';
    return `${label}: ${this.bytesText()}${left}; ${this.figures()}${rate}`;
  }

  private figures(): string {
    if (this.command === 'import') return `${count(this.read)} products read, ${count(this.written)} written`;
    if (this.stage === 'reporting' && this.validated !== null) return `${count(this.valid)} of ${count(this.validated)} products checked`;
    return `${count(this.read)} products read, ${count(this.valid)} valid`;
  }

  private bytesText(): string {
    const percent = this.totalBytes === 0 ? 100 : Math.floor((100 * this.bytes) / this.totalBytes);
    const unit = sizeUnit(this.totalBytes);
    return `${unit.of(this.bytes)} of ${unit.of(this.totalBytes)} ${unit.name} (${percent}%)`;
  }

  private doneText(seconds: number): string {
    const size = ` of ${sizeText(this.totalBytes)}`;
    if (this.command === 'import') {
      return `import: done in ${seconds.toFixed(1)} s: ${count(this.read)} products read, ${count(this.written)} written, from a file${size}`;
    }
    // Done means the file passed the rules: every product read was valid, and checked.
    if (this.validated === null) return `check: done in ${seconds.toFixed(1)} s: ${count(this.valid)} products checked, from a file${size}`;
    return `check: done in ${seconds.toFixed(1)} s: ${count(this.validated)} products validated, ${count(this.valid)} checked, from a file${size}`;
  }
}

/**
 * A progress line for work on this file, its size read first; none for a path that is no file, as
 * the work fails at once saying why, and a line before that reason would only hide it.
 */
export async function progressFor(command: 'import' | 'check', file: string, out: ProgressOutput, policy: ProgressPolicy): Promise<ProgressLine | undefined> {
  const size = await stat(file).then((found) => (found.isFile() ? found.size : null), () => null);
  return size === null ? undefined : new ProgressLine(command, out, policy, size);
}

const count = (n: number): string => n.toLocaleString('en-US');

/** A size's unit: the file's own scale, so a small file's line reads "3.2 of 9.7 KB", never "0.0 of 0.0 MB". */
interface SizeUnit {
  readonly name: 'bytes' | 'KB' | 'MB';
  of(bytes: number): string;
}

const BYTES: SizeUnit = { name: 'bytes', of: (bytes) => count(bytes) };
const KILOBYTES: SizeUnit = { name: 'KB', of: (bytes) => (bytes / 1_000).toFixed(1) };
const MEGABYTES: SizeUnit = { name: 'MB', of: (bytes) => (bytes / 1_000_000).toFixed(1) };

/** Bytes under a kilobyte, kilobytes under a megabyte, megabytes from there. */
function sizeUnit(totalBytes: number): SizeUnit {
  if (totalBytes < 1_000) return BYTES;
  return totalBytes < 1_000_000 ? KILOBYTES : MEGABYTES;
}

function sizeText(bytes: number): string {
  const unit = sizeUnit(bytes);
  return `${unit.of(bytes)} ${unit.name}`;
}

function duration(seconds: number): string {
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 5_400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3_600).toFixed(1)} h`;
}
