import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { Webhook } from 'standardwebhooks';
import { generateWebhookSecret } from '../src/domain/webhook-secret.js';
import { ROOT, scriptCommand } from './support/script-command.js';

interface Receiver {
  readonly url: string;
  readonly lines: () => unknown[];
  readonly child: ChildProcess;
}

// The demo receiver the README runs beside `npm start` (`npm run webhook-receiver`), as a process of its own.
describe('the demo webhook receiver (npm run webhook-receiver)', function () {
  this.timeout(60_000);
  const children: ChildProcess[] = [];
  const secret = generateWebhookSecret();

  const run = (env: Record<string, string>): { child: ChildProcess; stdout: () => string; stderr: () => string } => {
    const command = scriptCommand('webhook-receiver');
    const child = spawn(command.file, [...command.args], { cwd: ROOT, env: { PATH: command.path, HOME: process.env.HOME ?? '', ...env } });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString('utf8'); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString('utf8'); });
    return { child, stdout: () => stdout, stderr: () => stderr };
  };
  const start = async (): Promise<Receiver> => {
    const { child, stdout, stderr } = run({ WEBHOOK_SECRET: secret, PORT: '0' });
    for (const deadline = Date.now() + 30_000; !/listening on (\S+)/.test(stderr()) && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const url = /listening on (\S+)/.exec(stderr())?.[1];
    expect(url, stderr()).to.be.a('string');
    return { url: url!, child, lines: () => stdout().split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown) };
  };
  const post = async (url: string, id: string, body: string, signWith = secret): Promise<number> => {
    const timestamp = new Date();
    const signature = new Webhook(signWith).sign(id, timestamp, body);
    const response = await fetch(url, {
      method: 'POST', body,
      headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': signature },
    });
    return response.status;
  };

  afterEach(function () {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  it('verifies each message with the endpoint\'s secret, answers 204, prints it, and says when an id comes again', async function () {
    const receiver = await start();
    const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: { endpoint_id: 'whep_0123456789abcdef' } });
    expect(await post(receiver.url, 'msg_aaaaaaaaaaaaaaaaaaaaaa', body)).to.equal(204);
    expect(await post(receiver.url, 'msg_aaaaaaaaaaaaaaaaaaaaaa', body)).to.equal(204);
    expect(await post(receiver.url, 'msg_bbbbbbbbbbbbbbbbbbbbbb', body, generateWebhookSecret()), 'another secret\'s signature').to.equal(400);
    for (const deadline = Date.now() + 10_000; receiver.lines().length < 3 && Date.now() < deadline;) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(receiver.lines()).to.deep.equal([
      { id: 'msg_aaaaaaaaaaaaaaaaaaaaaa', verified: true, again: false, message: JSON.parse(body) as unknown },
      { id: 'msg_aaaaaaaaaaaaaaaaaaaaaa', verified: true, again: true, message: JSON.parse(body) as unknown },
      { id: 'msg_bbbbbbbbbbbbbbbbbbbbbb', verified: false, reason: 'No matching signature found' },
    ]);
  });

  it('refuses to start without a secret, naming the setting', async function () {
    const { child, stderr } = run({ PORT: '0' });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).to.equal(2);
    expect(stderr()).to.match(/^error: set WEBHOOK_SECRET to the endpoint's signing secret/);
  });
});
