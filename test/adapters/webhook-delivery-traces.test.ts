import { expect } from 'chai';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tracingSettings } from '../../src/adapters/config/tracing-config.js';
import { startTracing } from '../../src/adapters/tracing/start-tracing.js';
import { HttpWebhookSender } from '../../src/adapters/webhooks/http-webhook-sender.js';
import type { WebhookAttempt } from '../../src/application/webhooks/webhook-sender.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';

/*
 * Each webhook attempt as a client span (decisions: traces), exported by the real SDK to a receiver on
 * loopback, and the request that carries its context to the partner's receiver.
 */

const CLIENT = 3;
const ERROR = 2;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
/** A partner's URL whose path and query are its own secrets, as chat services' incoming-webhook URLs are. */
const SECRET_PATH = '/services/T0001/B0002/s3cretPathToken';
const SECRET_QUERY = 'token=s3cretQueryToken';
const IMPORT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const IMPORT_SPAN = 'b7ad6b7169203331';

const attempt = (url: string, traceparent: string | null = null): WebhookAttempt => ({
  url,
  headers: { 'webhook-id': 'msg_traced', 'webhook-timestamp': '1764064800', 'webhook-signature': 'v1,c2lnbmF0dXJlU2VjcmV0', 'Content-Type': 'application/json' },
  body: '{"type":"catalog.changed","data":{"secret_body_marker":true}}',
  subject: { messageId: 'msg_traced', type: 'catalog.changed', endpointId: 'ep_traced', partnerId: 'acme', attempt: 3, traceparent },
});

describe('webhook delivery spans (HttpWebhookSender, tracing on)', function () {
  this.timeout(20_000);
  let otlp: OtlpReceiver;
  let tracingOn: { stop(deadlineMs: number): Promise<void> } | undefined;
  let partner: Server;
  let partnerUrl: string;
  let arrivals: IncomingHttpHeaders[];
  let answer: number;
  const sender = new HttpWebhookSender({ timeoutMs: 2_000, allowsAddress: () => true, allowHttp: true });

  beforeEach(async function () {
    otlp = await startOtlpReceiver();
    arrivals = [];
    answer = 204;
    partner = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        arrivals.push(req.headers);
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((resolve) => partner.listen(0, '127.0.0.1', resolve));
    partnerUrl = `http://127.0.0.1:${(partner.address() as AddressInfo).port}`;
    const settings = tracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '20' })!;
    tracingOn = await startTracing(settings);
  });
  afterEach(async function () {
    await tracingOn?.stop(2_000);
    tracingOn = undefined;
    partner.closeAllConnections();
    await new Promise((resolve) => partner.close(resolve));
    await otlp.close();
  });

  const deliverySpan = async (): Promise<ReceivedSpan> => {
    const spans = await otlp.waitFor((received) => received.some((span) => span.name === 'webhook delivery'));
    return spans.find((span) => span.name === 'webhook delivery')!;
  };

  it("sends the attempt's span context in traceparent, and the span names the attempt, the endpoint's host and the answer, never the URL's secrets", async function () {
    const outcome = await sender.send(attempt(`${partnerUrl}${SECRET_PATH}?${SECRET_QUERY}`));
    expect(outcome.status).to.equal(204);
    const sent = TRACEPARENT.exec(String(arrivals[0]!.traceparent));
    expect(sent, `traceparent ${String(arrivals[0]!.traceparent)}`).not.to.equal(null);
    const span = await deliverySpan();
    expect(sent![1], 'the trace the receiver joins').to.equal(span.traceId);
    expect(sent![2], "the receiver's parent is the attempt's span").to.equal(span.spanId);
    expect(span.kind).to.equal(CLIENT);
    expect(span.parentSpanId, 'a root: the delivery loop serves no request').to.equal('');
    expect(span.links).to.deep.equal([]);
    expect(span.attributes).to.deep.equal({
      'http.request.method': 'POST', 'server.address': '127.0.0.1', 'server.port': Number(new URL(partnerUrl).port), 'http.response.status_code': 204,
      'pcat.partner.id': 'acme', 'pcat.webhook.endpoint.id': 'ep_traced', 'pcat.webhook.message.id': 'msg_traced',
      'pcat.webhook.message.type': 'catalog.changed', 'pcat.webhook.attempt': 3,
    });
    const text = JSON.stringify(otlp.spans(), (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value));
    for (const secret of ['s3cretPathToken', 's3cretQueryToken', 'c2lnbmF0dXJlU2VjcmV0', 'secret_body_marker']) expect(text).not.to.include(secret);
  });

  it('links the attempt to the trace of the import that queued its message', async function () {
    await sender.send(attempt(partnerUrl, `00-${IMPORT_TRACE}-${IMPORT_SPAN}-01`));
    const span = await deliverySpan();
    expect(span.links).to.deep.equal([{ traceId: IMPORT_TRACE, spanId: IMPORT_SPAN }]);
    expect(span.traceId, 'a trace of its own, linked rather than continued').not.to.equal(IMPORT_TRACE);
  });

  it('marks a failed attempt with error.type: the status of an answer other than 2xx, or why no answer came', async function () {
    answer = 503;
    await sender.send(attempt(partnerUrl));
    const answered = await deliverySpan();
    expect(answered.attributes).to.include({ 'http.response.status_code': 503, 'error.type': '503' });
    expect(answered.status).to.equal(ERROR);

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await sender.send(attempt(`http://127.0.0.1:${port}/`))).to.include({ error: 'connection_failed' });
    const spans = await otlp.waitFor((received) => received.filter((span) => span.name === 'webhook delivery').length === 2);
    const unanswered = spans.filter((span) => span.name === 'webhook delivery')[1]!;
    expect(unanswered.attributes).to.include({ 'error.type': 'connection_failed' });
    expect(unanswered.attributes).not.to.have.property('http.response.status_code');
    expect(unanswered.status).to.equal(ERROR);
  });

  it('sends no trace context with tracing off', async function () {
    await tracingOn!.stop(2_000);
    tracingOn = undefined;
    expect((await sender.send(attempt(partnerUrl))).status).to.equal(204);
    expect(arrivals[0]).not.to.have.property('traceparent');
  });
});
