/**
 * A webhook receiver for trying the service's webhooks on one machine (`npm run webhook-receiver`):
 * it listens on 127.0.0.1, verifies each message with the official `standardwebhooks` library and
 * the endpoint's secret, answers 204 (or 400 when no signature matches), and prints one JSON line
 * per message, saying when a `webhook-id` comes again. A demo, not a production receiver: it keeps
 * the ids it has seen in memory and reads at most 1 MiB of a body.
 *
 *   WEBHOOK_SECRET=whsec_… PORT=8080 npm run webhook-receiver
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

const MAX_BODY_BYTES = 1024 * 1024;

const secret = process.env.WEBHOOK_SECRET ?? '';
if (!/^whsec_[A-Za-z0-9+/=]+$/.test(secret)) {
  process.stderr.write('error: set WEBHOOK_SECRET to the endpoint\'s signing secret (whsec_…), as the portal\'s "Reveal secret" or `webhooks secret <id>` shows it\n');
  process.exit(2);
}
const port = Number(process.env.PORT ?? '8080');
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`error: PORT must be a port number from 0 to 65535; got "${process.env.PORT}"\n`);
  process.exit(2);
}

const webhook = new Webhook(secret);
const seen = new Set<string>();

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  let size = 0;
  request.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      response.writeHead(413, { Connection: 'close' }).end();
      request.destroy();
      return;
    }
    chunks.push(chunk);
  });
  request.on('end', () => {
    // The body exactly as received: parsing and re-serializing it would change the signed bytes.
    const body = Buffer.concat(chunks).toString('utf8');
    const id = String(request.headers['webhook-id'] ?? '');
    let message: unknown;
    try {
      message = webhook.verify(body, request.headers as Record<string, string>);
    } catch (error) {
      response.writeHead(400).end();
      process.stdout.write(`${JSON.stringify({ id, verified: false, reason: (error as Error).message })}\n`);
      return;
    }
    response.writeHead(204).end();
    const again = seen.has(id);
    seen.add(id);
    process.stdout.write(`${JSON.stringify({ id, verified: true, again, message })}\n`);
  });
});

server.listen(port, '127.0.0.1', () => {
  const { port: bound } = server.address() as AddressInfo;
  process.stderr.write(`webhook receiver listening on http://127.0.0.1:${bound}/ (register this URL as the endpoint)\n`);
});
