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
