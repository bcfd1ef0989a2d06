import { sql } from 'kysely';

// Every table compares text byte for byte: SKUs, refs and hashes match exactly (docs/decisions.md, lookups).
export const TABLE_OPTIONS = sql`engine = InnoDB default charset = utf8mb4 collate = utf8mb4_bin`;

/** Rows a backfill writes per statement, so no one statement runs into the operator's query timeout on a large catalog. */
export const BACKFILL_RANGE = 10_000;
