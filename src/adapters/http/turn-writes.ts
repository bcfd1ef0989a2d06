/**
 * Writes handed over during one event-loop turn, done together at its end (`setImmediate`, the
 * check phase right after the poll phase that read the turn's requests). A lone request waits for
 * nothing but the rest of its own turn; under load, the turn's answers leave one after the other.
 *
 * Why: each answer written while the client sleeps wakes it, and that wake-up is paid for on the
 * server's core, inside the write. Written in the middle of the turn's work, every answer found the
 * client asleep again; written back to back, most find it awake (docs/performance-history.md,
 * "A turn's answers written together").
 */
export class TurnWrites<Entry> {
  #pending: Entry[] = [];
  readonly #write: (entry: Entry) => void;
  readonly #failed: (error: unknown, entry: Entry) => void;

  /**
   * `write` does one entry's write; `failed` hears of one that threw, which stops neither the
   * others nor the turns after it.
   */
  constructor(write: (entry: Entry) => void, failed: (error: unknown, entry: Entry) => void) {
    this.#write = write;
    this.#failed = failed;
  }

  /** Hands an entry over, to be written at the end of this turn after those handed over before it. */
  add(entry: Entry): void {
    if (this.#pending.push(entry) === 1) setImmediate(this.#flush);
  }

  readonly #flush = (): void => {
    const pending = this.#pending;
    this.#pending = [];
    for (const entry of pending) {
      try {
        this.#write(entry);
      } catch (error) {
        this.#failed(error, entry);
      }
    }
  };
}
