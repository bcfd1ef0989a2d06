import type { Redis } from 'ioredis';

/** Closes politely when connected; if Redis went away meanwhile, dropping the connection is all that is left. */
export async function quitOrDrop(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // Fall through to dropping it.
    }
  }
  client.disconnect();
}

/** Where a `redis://` URL points, for messages: host and port, never a password. */
export function redisServer(url: string): string {
  if (!URL.canParse(url)) return 'the server REDIS_URL names';
  const { hostname, port } = new URL(url);
  return `${hostname}:${port === '' ? '6379' : port}`;
}

/** Redis did not answer: where, why, and what to do, naming the setting. */
export function redisUnreachable(url: string, reason: string): Error {
  return new Error(`REDIS_URL: Redis at ${redisServer(url)} did not answer (${reason}): start it, or correct REDIS_URL`);
}
