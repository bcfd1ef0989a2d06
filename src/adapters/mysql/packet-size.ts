import { sql, type Kysely } from 'kysely';
import { MAX_ANSWER_BYTES } from '../../domain/answer-size.js';
import type { Database } from './database.js';

/**
 * The packet an import needs the server to take: a product's answer, stored as one row, at its
 * bound and escaped in its statement (at most twice its bytes), with room for the row's other
 * columns. Multi-row statements stay well under it (batches of about 4 MB).
 */
export const REQUIRED_PACKET_BYTES = 2 * MAX_ANSWER_BYTES + 1_048_576;

/** Why a server whose `max_allowed_packet` is this many bytes cannot take an import; null if it can. */
export function packetProblem(serverBytes: number): string | null {
  if (serverBytes >= REQUIRED_PACKET_BYTES) return null;
  return `the database server's max_allowed_packet is ${serverBytes} bytes; an import needs at least ${REQUIRED_PACKET_BYTES} ` +
    `(a product's answer may be ${MAX_ANSWER_BYTES} bytes, twice that escaped in a statement): ` +
    'raise max_allowed_packet (16M, MariaDB\'s default, is enough) and import again; nothing was written';
}

/** Refuses, before anything is written, an import the server could not take whole. */
export async function checkPacketSize(db: Kysely<Database>): Promise<void> {
  const { rows } = await sql<{ packet: number | string }>`select @@max_allowed_packet as packet`.execute(db);
  const problem = packetProblem(Number(rows[0]?.packet ?? 0));
  if (problem !== null) throw new Error(problem);
}
