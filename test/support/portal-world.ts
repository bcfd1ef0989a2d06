import { AdminError } from '../../src/domain/admin-errors.js';
import { MemoryApiKeyAdmin } from '../../src/adapters/memory/memory-api-key-admin.js';
import { memoryAdminStore, type MemoryAdminStore } from '../../src/adapters/memory/memory-admin-store.js';
import { MemoryCatalogStore } from '../../src/adapters/memory/memory-catalog-store.js';
import { MemoryWebhookEndpoints } from '../../src/adapters/memory/memory-webhook-endpoints.js';
import { MemoryWebhookOutbox } from '../../src/adapters/memory/memory-webhook-outbox.js';
import type { KeyChangeAnnouncer } from '../../src/application/keys/api-key-admin.js';
import type { Clock } from '../../src/application/common/clock.js';
import { fixtureDocument } from '../fixtures/catalog-fixture.js';
import { importDocument } from './import.js';

/** A clock a test moves by hand: expiry and lockout are tested without sleeping. */
export class ManualClock implements Clock {
  constructor(private ms = Date.UTC(2026, 0, 5, 9, 0, 0)) {}

  now(): number {
    return this.ms;
  }

  advance(ms: number): void {
    this.ms += ms;
  }
}

/** Counts announcements, and fails them while `failing` says so, as an unreachable Redis does. */
export class CountingAnnouncer implements KeyChangeAnnouncer {
  announced = 0;
  failing: string | null = null;

  keysChanged(): Promise<void> {
    if (this.failing !== null) return Promise.reject(new Error(this.failing));
    this.announced += 1;
    return Promise.resolve();
  }
}

/** The fixture catalog in a memory store, with the portal's memory adapters beside it. */
export interface PortalWorld {
  readonly clock: ManualClock;
  readonly store: MemoryCatalogStore;
  readonly keys: MemoryApiKeyAdmin;
  readonly admin: MemoryAdminStore;
  readonly announcer: CountingAnnouncer;
  /** Webhook endpoints and their outbox, as a memory-storage process holds them. */
  readonly webhooks: { readonly endpoints: MemoryWebhookEndpoints; readonly outbox: MemoryWebhookOutbox };
}

/** `startsAt`: the clock's first reading (a test whose messages a receiver verifies needs today's). */
export async function memoryPortalWorld(options: { startsAt?: number } = {}): Promise<PortalWorld> {
  const clock = new ManualClock(options.startsAt);
  const store = new MemoryCatalogStore();
  await importDocument(store, fixtureDocument());
  const endpoints = new MemoryWebhookEndpoints(store);
  return {
    clock, store, keys: new MemoryApiKeyAdmin(store, new Date(clock.now())), admin: memoryAdminStore(), announcer: new CountingAnnouncer(),
    webhooks: { endpoints, outbox: new MemoryWebhookOutbox(endpoints) },
  };
}

/** The AdminError a use case refuses with; anything else, or no refusal, fails the test. */
export async function adminRefusal(promise: Promise<unknown>): Promise<AdminError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AdminError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}
