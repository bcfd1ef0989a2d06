import { pino, type LevelWithSilent, type Logger } from 'pino';

export type { Logger };

/** Paths that may carry a key; pino replaces them before a line is written. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'key',
  'apiKey',
];

/** One JSON line per event on stdout; `destination` lets tests capture the lines. */
export function createLogger(level: LevelWithSilent, destination?: NodeJS.WritableStream): Logger {
  const options = { level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, base: { service: 'partner-catalog-api' } };
  return destination === undefined ? pino(options) : pino(options, destination);
}
