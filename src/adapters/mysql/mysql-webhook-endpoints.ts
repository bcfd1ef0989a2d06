import type { Kysely, Selectable } from 'kysely';
import type { EndpointInsert, WebhookEndpointStore } from '../../application/webhooks/webhook-endpoint-store.js';
import type { WebhookEndpoint, WebhookEndpointStatus, WebhookSecrets } from '../../domain/webhook-endpoint.js';
import type { Database, WebhookEndpointsTable } from './database.js';
import { isSandboxCatalog } from '../../domain/sandbox.js';

function endpointOf(row: Selectable<WebhookEndpointsTable>): WebhookEndpoint {
  const previous = row.previous_secret === null || row.previous_secret_until === null ? null : { secret: row.previous_secret, until: row.previous_secret_until };
  return {
    id: row.id, partnerId: row.partner_id, url: row.url, description: row.description, status: row.status, createdAt: row.created_at,
    secrets: { current: row.secret, previous },
  };
}

function secretColumns(secrets: WebhookSecrets): Pick<WebhookEndpointsTable, 'secret' | 'previous_secret' | 'previous_secret_until'> {
  return { secret: secrets.current, previous_secret: secrets.previous?.secret ?? null, previous_secret_until: secrets.previous?.until ?? null };
}

/** Webhook endpoints in MySQL, seen alike by every instance and the CLI. */
export class MysqlWebhookEndpoints implements WebhookEndpointStore {
  constructor(private readonly db: Kysely<Database>) {}

  async partnerExists(partnerId: string): Promise<boolean> {
    // A sandbox has a partner row of its own, but it is no partner: its changes are never pushed.
    if (isSandboxCatalog(partnerId)) return false;
    return (await this.db.selectFrom('partners').select('id').where('id', '=', partnerId).executeTakeFirst()) !== undefined;
  }

  insertWithin(endpoint: WebhookEndpoint, limit: number): Promise<EndpointInsert> {
    if (isSandboxCatalog(endpoint.partnerId)) return Promise.resolve('partner_not_found');
    return this.db.transaction().execute(async (trx) => {
      // The partner's row, locked: adds for one partner take turns, so the count below stays true until the insert.
      const partner = await trx.selectFrom('partners').select('id').where('id', '=', endpoint.partnerId).forUpdate().executeTakeFirst();
      if (partner === undefined) return 'partner_not_found';
      const { n } = await trx.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number | bigint | string>().as('n'))
        .where('partner_id', '=', endpoint.partnerId).executeTakeFirstOrThrow();
      if (Number(n) >= limit) return 'limit_reached';
      await trx.insertInto('webhook_endpoints').values({
        id: endpoint.id, partner_id: endpoint.partnerId, url: endpoint.url, description: endpoint.description, status: endpoint.status,
        created_at: endpoint.createdAt, ...secretColumns(endpoint.secrets),
      }).execute();
      return 'added';
    });
  }

  async find(endpointId: string): Promise<WebhookEndpoint | null> {
    const row = await this.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).executeTakeFirst();
    return row === undefined ? null : endpointOf(row);
  }

  async list(partnerId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.db.selectFrom('webhook_endpoints').selectAll().where('partner_id', '=', partnerId).orderBy('created_at').orderBy('id').execute();
    return rows.map(endpointOf);
  }

  async setStatus(endpointId: string, status: WebhookEndpointStatus): Promise<boolean> {
    await this.db.updateTable('webhook_endpoints').set({ status }).where('id', '=', endpointId).execute();
    // Counted by a read, not by affected rows: MariaDB counts a row set to what it held as unchanged.
    return (await this.find(endpointId)) !== null;
  }

  async replaceSecrets(endpointId: string, expectedCurrent: string, secrets: WebhookSecrets): Promise<boolean> {
    const result = await this.db.updateTable('webhook_endpoints').set(secretColumns(secrets))
      .where('id', '=', endpointId).where('secret', '=', expectedCurrent).executeTakeFirst();
    return result.numUpdatedRows === 1n;
  }

  async remove(endpointId: string): Promise<boolean> {
    const result = await this.db.deleteFrom('webhook_endpoints').where('id', '=', endpointId).executeTakeFirst();
    return result.numDeletedRows === 1n;
  }
}
