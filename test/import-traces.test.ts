import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TOKENS } from '../src/composition/container.js';
import type { Deployment } from '../src/composition/deployment.js';
import { fixtureCatalog, retitled } from './fixtures/catalog-fixture.js';
import { cli } from './support/cli-process.js';
import { openTestDeployment } from './support/deployments.js';
import { catalogDocument, importCatalog } from './support/import.js';
import { useTestDatabase } from './support/mariadb.js';
import { spansByName, startOtlpReceiver, type OtlpReceiver } from './support/otlp-receiver.js';

/*
 * The CLI's import as a trace of its own (decisions: traces), and the webhook delivery it causes, made
 * by a running deployment, linked to it: the real CLI process and the real SDK, on MySQL.
 */

const TITLE = 'A title only the catalog file holds';
const PHASES = ['catalog import: unit of work', 'catalog import: read and write', 'catalog import: finish'];

describe('an import traced by the CLI, and the deliveries it causes (MySQL)', function () {
  this.timeout(120_000);
  const testDb = useTestDatabase();
  let otlp: OtlpReceiver;
  let partner: Server;
  let arrivals: IncomingHttpHeaders[];
  let dir: string;
  let deployment: Deployment | undefined;

  before(async function () {
    dir = await mkdtemp(join(tmpdir(), 'pcat-import-traces-'));
    otlp = await startOtlpReceiver();
    arrivals = [];
    partner = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        arrivals.push(req.headers);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => partner.listen(0, '127.0.0.1', resolve));
    await importCatalog(testDb.db, fixtureCatalog());
  });
  after(async function () {
    await deployment?.close();
    partner.closeAllConnections();
    await new Promise((resolve) => partner.close(resolve));
    await otlp.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("draws the import as a 'catalog import' trace with its phases and counts, and the delivery it caused links to it", async function () {
    const tracingOn = { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '20' };
    const env = { STORAGE: 'mysql', DATABASE_URL: testDb.url, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' };
    const url = `http://127.0.0.1:${(partner.address() as AddressInfo).port}/hooks?token=s3cretQueryToken`;
    const added = await cli(['webhooks', 'add', '--partner', 'acme', '--url', url, '--json'], env);
    expect(added.code, added.stderr).to.equal(0);
    const { id: endpointId, secret } = added.json() as { id: string; secret: string };

    const file = join(dir, 'catalog.json');
    await writeFile(file, JSON.stringify(catalogDocument(retitled(TITLE))));
    const run = await cli(['import', file, '--quiet'], { ...env, ...tracingOn });
    expect(run.code, run.stderr).to.equal(0);
    // The CLI exported its spans before it exited.
    const imported = otlp.spans().find((span) => span.name === 'catalog import');
    expect(imported, 'the import\'s root span, exported before the CLI exited').not.to.equal(undefined);
    const spans = spansByName(await otlp.waitFor((received) => PHASES.every((name) => received.some((span) => span.name === name))), imported!.traceId);
    expect(imported!.parentSpanId).to.equal('');
    expect(imported!.resource['service.name']).to.equal('partner-catalog-cli');
    expect(imported!.attributes).to.include({ 'pcat.import.products.updated': 1, 'pcat.import.products.created': 0, 'pcat.import.partners.unchanged': 2 });
    const unitOfWork = spans.get('catalog import: unit of work')!;
    expect(unitOfWork.parentSpanId).to.equal(imported!.spanId);
    expect(spans.get('catalog import: read and write')!.parentSpanId).to.equal(unitOfWork.spanId);
    expect(spans.get('catalog import: finish')!.parentSpanId).to.equal(unitOfWork.spanId);

    // A running deployment, traced too, makes the attempt.
    deployment = await openTestDeployment({ ...env, ...tracingOn });
    const deliveries = deployment.container.get(TOKENS.DeliverWebhooks);
    expect(await deliveries.poll(), 'the import queued one message for the endpoint').to.equal(1);
    await deliveries.settled();
    const delivered = await otlp.waitFor((received) => received.some((span) => span.name === 'webhook delivery'));
    const delivery = delivered.find((span) => span.name === 'webhook delivery')!;
    expect(delivery.links).to.deep.equal([{ traceId: imported!.traceId, spanId: imported!.spanId }]);
    expect(delivery.attributes).to.include({ 'pcat.webhook.endpoint.id': endpointId, 'pcat.webhook.message.type': 'catalog.changed', 'pcat.webhook.attempt': 1, 'server.address': '127.0.0.1' });
    expect(String(arrivals[0]!.traceparent)).to.equal(`00-${delivery.traceId}-${delivery.spanId}-01`);

    const text = JSON.stringify(otlp.spans(), (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
    for (const secretText of [secret, 's3cretQueryToken', TITLE]) expect(text).not.to.include(secretText);
  });
});
