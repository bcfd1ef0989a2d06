import { measureFlood, type FloodOptions } from './flood.js';
import { openBenchRedis } from './bench-redis.js';
import { measurePipelineAttack } from './pipeline-attack.js';
import { openMysqlBenchDatabase } from './targets-mysql.js';
import type { BenchContext } from './target.js';

/** The parts of the attack section, chosen with --only by any of these words. */
const PARTS = { flood: ['attacks', 'flood'], pipeline: ['attacks', 'pipeline'] } as const;

export interface AttackChoice {
  readonly flood: boolean;
  readonly pipeline: boolean;
}

export function chooseAttacks(only: readonly string[] | undefined): AttackChoice {
  const chosen = (words: readonly string[]): boolean => only === undefined || only.some((text) => words.includes(text));
  return { flood: chosen(PARTS.flood), pipeline: chosen(PARTS.pipeline) };
}

/**
 * Hostile traffic against the service, each part on a fresh server: a legitimate key's throughput
 * and latency during a made-up-key flood against without it (memory storage; MySQL when reachable,
 * and then MySQL with Redis, the production settings, when Redis is reachable too), and the
 * server's memory and a legitimate client's answers during a non-reading pipeline attack.
 */
export async function runAttacks(context: BenchContext, choice: AttackChoice, options: { flood: FloodOptions; attackSeconds: number }): Promise<void> {
  process.stdout.write(`\nattacks on ${context.serviceScript}\n`);
  if (choice.flood) {
    await measureFlood('memory storage', context.serviceEnv, context, options.flood);
    const database = await openMysqlBenchDatabase(context, 'flood');
    if (database !== null) {
      try {
        await measureFlood('MySQL storage', database.env, context, options.flood);
        const redis = await openBenchRedis('production-settings flood');
        if (redis !== null) {
          try {
            await measureFlood('MySQL + Redis, production settings', { ...database.env, ...redis.env }, context, options.flood);
          } finally {
            await redis.cleanup();
          }
        }
      } finally {
        await database.drop();
      }
    }
  }
  if (choice.pipeline) await measurePipelineAttack(context, options.attackSeconds);
}
