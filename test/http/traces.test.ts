import { expect } from 'chai';
import { createHash } from 'node:crypto';
import type { Deployment } from '../../src/composition/deployment.js';
import { KEYS } from '../fixtures/catalog-fixture.js';
import { fixtureCatalogFile, openTestDeployment } from '../support/deployments.js';
import { spansByName, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startTestServer, type TestServer } from '../support/test-server.js';

/*
 * Traces (decisions: traces) exported by the real OpenTelemetry SDK and exporters over OTLP/HTTP to a
 * receiver on loopback, which decodes what arrives as a collector would.
 */

const SKU_PATH = '/api/v1/public/sku/TENT-2P';
const SERVER = 2;
const PARTNER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARTNER_SPAN = '00f067aa0ba902b7';

/** Settings that turn tracing on towards the receiver, exporting every few milliseconds. */
function tracingTo(receiver: OtlpReceiver, settings: Record<string, string> = {}): Record<string, string> {
  return { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '20', ...settings };
}

/** The server span of the request with this request id, once it has arrived. */
async function serverSpanOf(receiver: OtlpReceiver, requestId: string): Promise<ReceivedSpan> {
  const spans = await receiver.waitFor((received) => received.some((span) => span.attributes['pcat.request.id'] === requestId));
  return spans.find((span) => span.attributes['pcat.request.id'] === requestId)!;
}

/** The request's spans: its server span and every span of its trace below it, once all have arrived. */
async function requestSpans(receiver: OtlpReceiver, requestId: string, names: readonly string[]): Promise<Map<string, ReceivedSpan>> {
  const server = await serverSpanOf(receiver, requestId);
  await receiver.waitFor((received) => names.every((name) => received.some((span) => span.traceId === server.traceId && span.name === name)));
  return spansByName(receiver.spans(), server.traceId);
}

/** Everything the receiver holds, as text: no key, nor its hash, may be in it. */
function expectNoSecret(receiver: OtlpReceiver): void {
  const text = JSON.stringify(receiver.spans(), (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
  for (const key of Object.values(KEYS)) {
    expect(text).not.to.include(key);
    expect(text).not.to.include(createHash('sha256').update(key).digest('hex'));
  }
}

describe('traces over OTLP, on memory storage', function () {
  this.timeout(30_000);
  let receiver: OtlpReceiver;
  let deployment: Deployment | undefined;
  let server: TestServer | undefined;

  beforeEach(async function () {
    receiver = await startOtlpReceiver();
  });
  afterEach(async function () {
    await server?.close();
    await deployment?.close();
    server = undefined;
    deployment = undefined;
    await receiver.close();
  });

  const start = async (settings: Record<string, string> = {}): Promise<TestServer> => {
    deployment = await openTestDeployment({ CATALOG_FILE: fixtureCatalogFile(), ...tracingTo(receiver, settings) });
    server = await startTestServer(deployment.api, { traceIds: true });
    return server;
  };

  it("draws a lookup as a server span (the metrics' route template) with the key check below it, and its log line carries the span's ids", async function () {
    const api = await start();
    const response = await api.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme } });
    expect(response.status).to.equal(200);
    const requestId = String(response.headers['x-request-id']);
    const spans = await requestSpans(receiver, requestId, ['key check']);
    const request = spans.get('GET /api/v1/public/sku/:sku')!;
    expect(request.kind).to.equal(SERVER);
    expect(request.parentSpanId, 'a root: no traceparent was sent').to.equal('');
    expect(request.attributes).to.include({
      'http.request.method': 'GET', 'http.route': '/api/v1/public/sku/:sku', 'url.path': SKU_PATH, 'http.response.status_code': 200,
      'pcat.partner.id': 'acme', 'pcat.key.id': 'acme-prod', 'pcat.key.mode': 'live', 'pcat.request.id': requestId,
    });
    expect(spans.get('key check')!.parentSpanId).to.equal(request.spanId);
    expect(request.resource['service.name']).to.equal('partner-catalog-api');
    const line = api.logs.map((text) => JSON.parse(text) as Record<string, unknown>).find((entry) => entry.reqId === requestId)!;
    expect(line).to.include({ trace_id: request.traceId, span_id: request.spanId });
    expectNoSecret(receiver);
  });

  it("continues a partner's valid traceparent and ignores a malformed one", async function () {
    const api = await start();
    const continued = await api.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme, traceparent: `00-${PARTNER_TRACE}-${PARTNER_SPAN}-01`, tracestate: 'partner=1' } });
    const span = await serverSpanOf(receiver, String(continued.headers['x-request-id']));
    expect(span.traceId).to.equal(PARTNER_TRACE);
    expect(span.parentSpanId).to.equal(PARTNER_SPAN);
    for (const malformed of [`00-${PARTNER_TRACE.toUpperCase()}-${PARTNER_SPAN}-01`, `ff-${PARTNER_TRACE}-${PARTNER_SPAN}-01`, `00-${'0'.repeat(32)}-${PARTNER_SPAN}-01`, 'garbage']) {
      const ignored = await api.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme, traceparent: malformed } });
      expect(ignored.status, malformed).to.equal(200);
      const root = await serverSpanOf(receiver, String(ignored.headers['x-request-id']));
      expect(root.parentSpanId, malformed).to.equal('');
      expect(root.traceId, malformed).not.to.equal(PARTNER_TRACE);
    }
  });

  it("lets no partner decide what is traced with its sampled flag or its trace ids, unless the operator's sampler is parent-based", async function () {
    // The SDK's own ratio sampler keeps a trace whose id ends low: a partner choosing such ids would be traced every time.
    const lowIds = Array.from({ length: 100 }, (_, i) => `${i.toString(16).padStart(24, '0')}00000000`.replace(/^0/, '1'));
    const send = async (api: TestServer): Promise<string[]> => {
      const ids: string[] = [];
      for (const traceId of lowIds) {
        const response = await api.request(SKU_PATH, { headers: { 'X-API-Key': KEYS.acme, traceparent: `00-${traceId}-${PARTNER_SPAN}-01` } });
        expect(response.status).to.equal(200);
        ids.push(traceId);
      }
      return ids;
    };
    const tracedOf = (ids: readonly string[]): number => new Set(receiver.spans().filter((span) => ids.includes(span.traceId)).map((span) => span.traceId)).size;

    const ratio = await start({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' });
    const ratioIds = await send(ratio);
    // The stop exports everything queued: what was kept is all here.
    await server!.close();
    await deployment!.close();
    server = undefined;
    deployment = undefined;
    expect(tracedOf(ratioIds), 'traces kept of 100 a partner asked to be sampled, at 1 %').to.be.below(15);

    const parentBased = await start({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0' });
    await send(parentBased);
    await server!.close();
    await deployment!.close();
    server = undefined;
    deployment = undefined;
    expect(tracedOf(lowIds), 'under a parent-based sampler the caller decides: every one kept').to.equal(100);
  });
});
