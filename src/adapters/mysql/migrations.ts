import type { MigrationProvider } from 'kysely';
import { initialSchema } from './migrations/0001_initial_schema.js';
import { productLookupDocument } from './migrations/0002_product_lookup_document.js';
import { videoSearchFields } from './migrations/0003_video_search_fields.js';
import { identitiesAndHashesOnly } from './migrations/0004_identities_and_hashes_only.js';
import { changesFeed } from './migrations/0005_changes_feed.js';
import { partnerPortal } from './migrations/0006_partner_portal.js';
import { feedOnAnswers } from './migrations/0007_feed_on_answers.js';
import { serviceSecrets } from './migrations/0008_service_secrets.js';
import { adminRecordsRetention } from './migrations/0009_admin_records_retention.js';
import { webhookEndpoints } from './migrations/0010_webhook_endpoints.js';
import { webhookOutbox } from './migrations/0011_webhook_outbox.js';
import { feedBeforeSigning } from './migrations/0012_feed_before_signing.js';
import { attemptsAcrossResends } from './migrations/0013_attempts_across_resends.js';
import { testKeys } from './migrations/0014_test_keys.js';
import { keyChangeSequence } from './migrations/0015_key_change_sequence.js';
import { catalogSourceHash } from './migrations/0016_catalog_source_hash.js';
import { webhookMessageTraceparent } from './migrations/0017_webhook_message_traceparent.js';

/** Migrations live in code so they run the same under tsx and compiled, with no directory to scan. */
export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve({
    '0001_initial_schema': initialSchema,
    '0002_product_lookup_document': productLookupDocument,
    '0003_video_search_fields': videoSearchFields,
    '0004_identities_and_hashes_only': identitiesAndHashesOnly,
    '0005_changes_feed': changesFeed,
    '0006_partner_portal': partnerPortal,
    '0007_feed_on_answers': feedOnAnswers,
    '0008_service_secrets': serviceSecrets,
    '0009_admin_records_retention': adminRecordsRetention,
    '0010_webhook_endpoints': webhookEndpoints,
    '0011_webhook_outbox': webhookOutbox,
    '0012_feed_before_signing': feedBeforeSigning,
    '0013_attempts_across_resends': attemptsAcrossResends,
    '0014_test_keys': testKeys,
    '0015_key_change_sequence': keyChangeSequence,
    '0016_catalog_source_hash': catalogSourceHash,
    '0017_webhook_message_traceparent': webhookMessageTraceparent,
  }),
};
