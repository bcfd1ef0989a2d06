/**
 * What happens beside the traffic, each on a schedule of its own: imports through the CLI, keys
 * issued and revoked through the CLI, the portal admin's visits, and the two blips (Redis killed
 * and started again, every database connection of the service cut).
 */
import type { PortalAdmin } from './soak-portal.js';
import type { SoakCli, SoakDatabase, SoakRedis } from './soak-stack.js';
import { HeldKey, type Traffic } from './soak-traffic.js';

/** How long a revoked key keeps being asked for (and must be refused) before the traffic drops it. */
const ASK_REVOKED_FOR_MS = 20_000;
/** How long a key issued through the CLI is used before it is revoked. */
const USE_ISSUED_FOR_MS = 20_000;

export interface Blip {
  readonly name: 'redis' | 'db';
  readonly startedAt: number;
  endedAt: number;
}

export interface OperationCounts {
  imports: number;
  importsFailed: number;
  keysIssued: number;
  keysRevoked: number;
  cliFailures: number;
  portalVisits: number;
  portalKeysMade: number;
}

export class SoakOperations {
  readonly blips: Blip[] = [];
  readonly counts: OperationCounts = { imports: 0, importsFailed: 0, keysIssued: 0, keysRevoked: 0, cliFailures: 0, portalVisits: 0, portalKeysMade: 0 };
  private importsDone = 0;

  constructor(private readonly parts: {
    readonly cli: SoakCli;
    readonly traffic: Traffic;
    readonly portal: PortalAdmin;
    readonly redis: SoakRedis;
    readonly database: SoakDatabase;
    /** The catalog as imported at the start, and the same with one product retitled: imports alternate them. */
    readonly catalogFiles: readonly [string, string];
    readonly event: (line: string) => void;
    readonly sleep: (ms: number) => Promise<void>;
  }) {}

  /** Imports the file that differs from the database's by one product's title. */
  async importOnce(): Promise<void> {
    const file = this.parts.catalogFiles[(this.importsDone + 1) % 2]!;
    const outcome = await this.parts.cli.run(['import', file, '--quiet', '--json']);
    if (outcome.code === 0 || outcome.code === 3) {
      this.importsDone += 1;
      this.counts.imports += 1;
      const summary = JSON.parse(outcome.stdout) as Record<string, Record<string, number>>;
      const changed = Object.entries(summary).flatMap(([kind, counts]) => Object.entries(counts).filter(([what, n]) => what !== 'unchanged' && n > 0).map(([what, n]) => `${kind} ${what} ${n}`));
      this.parts.event(`import through the CLI, exit ${outcome.code}, ${(outcome.ms / 1_000).toFixed(1)} s: ${changed.join(', ')}`);
    } else {
      this.counts.importsFailed += 1;
      this.parts.event(`import through the CLI FAILED, exit ${outcome.code}: ${outcome.stderr.trim().split('\n').at(-1) ?? ''}`);
    }
  }

  /** `keys issue`, the key used for a while, `keys revoke`, the key asked for (and refused) a while more. */
  async keyCycle(): Promise<void> {
    const { cli, traffic } = this.parts;
    let issued: { id: string; key: string };
    try {
      issued = await cli.json<{ id: string; key: string }>(['keys', 'issue', '--partner', 'bench', '--label', 'soak cli']);
    } catch (error) {
      this.counts.cliFailures += 1;
      this.parts.event(`keys issue FAILED: ${(error as Error).message}`);
      return;
    }
    this.counts.keysIssued += 1;
    const held = new HeldKey(issued.key, issued.id);
    traffic.heldKeys.add(held);
    await this.parts.sleep(USE_ISSUED_FOR_MS);
    held.revoking();
    const outcome = await cli.run(['keys', 'revoke', issued.id, '--json']);
    if (outcome.code === 0) {
      held.revoked();
      this.counts.keysRevoked += 1;
    } else {
      // Not known to be refused yet: the traffic stops asking for it rather than expect either answer.
      traffic.heldKeys.delete(held);
      this.counts.cliFailures += 1;
      this.parts.event(`keys revoke ${issued.id} exited ${outcome.code}: ${outcome.stderr.trim().split('\n').at(-1) ?? ''}`);
      return;
    }
    this.dropLater(held);
  }

  /** A portal visit; the key it made joins the traffic, the one it revoked leaves it a while later. */
  async portalVisit(): Promise<void> {
    const { made, revoked } = await this.parts.portal.visit();
    this.counts.portalVisits += 1;
    if (made !== null) {
      this.counts.portalKeysMade += 1;
      this.parts.traffic.heldKeys.add(made);
    }
    if (revoked !== null) this.dropLater(revoked);
  }

  async restartRedis(): Promise<void> {
    const blip: Blip = { name: 'redis', startedAt: performance.now(), endedAt: Number.NaN };
    this.blips.push(blip);
    await this.parts.redis.restart();
    blip.endedAt = performance.now();
    this.parts.event(`redis-server killed (SIGKILL) and started again, empty, on port ${this.parts.redis.port}: answering PING after ${((blip.endedAt - blip.startedAt) / 1_000).toFixed(2)} s`);
  }

  async cutDatabase(): Promise<void> {
    const blip: Blip = { name: 'db', startedAt: performance.now(), endedAt: Number.NaN };
    this.blips.push(blip);
    const killed = await this.parts.database.cutConnections();
    blip.endedAt = performance.now();
    this.parts.event(`database connections cut: KILL of ${killed} connections on ${this.parts.database.name}`);
  }

  private dropLater(key: HeldKey): void {
    setTimeout(() => this.parts.traffic.heldKeys.delete(key), ASK_REVOKED_FOR_MS).unref();
  }
}
