import { expect } from 'chai';
import { Agent, request } from 'node:http';
import { trustedProxies } from '../../src/adapters/listening/client-address.js';
import { jsonAnswers, startGuardedServer, type RunningServer } from '../../src/adapters/listening/guarded-server.js';

type Outcome = { readonly connection: string | undefined; readonly afterClose: boolean } | { readonly error: string };

/** Keep-alive requests from `clients` loops until `stop()`, each on the agent's pooled connections. */
function keepAliveLoad(url: string, clients: number, closedAt: () => number | null): { ended(): number; stop(): Promise<Outcome[]> } {
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const outcomes: Outcome[] = [];
  let running = true;
  const one = (): Promise<void> => new Promise((resolve) => {
    const req = request(url, { agent }, (res) => {
      res.resume();
      res.on('end', () => {
        const closed = closedAt();
        // Its headers were written after the close began: the handler (in this process, on the same
        // clock) says when it wrote them. Timing the answer's arrival instead depends on the machine's load.
        const writtenAt = Number(res.headers['x-written-at']);
        outcomes.push({ connection: res.headers.connection, afterClose: closed !== null && writtenAt >= closed });
        resolve();
      });
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      outcomes.push({ error: error.code ?? error.message });
      resolve();
    });
    req.end();
  });
  const loops = Array.from({ length: clients }, async () => {
    while (running) await one();
  });
  return {
    ended: () => outcomes.length,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      agent.destroy();
      return outcomes;
    },
  };
}

describe('a listener closing under keep-alive load (a rolling restart)', function () {
  this.timeout(20_000);

  it('says Connection: close on every answer once closing, and resets no request on an open connection', async function () {
    const server: RunningServer = await startGuardedServer((_req, res) => {
      // Each answer waits 5 ms, so at the close nearly every client has a request under way.
      setTimeout(() => res.writeHead(200, { 'Content-Type': 'text/plain', 'X-Written-At': String(performance.now()) }).end('ok'), 5);
    }, {
      port: 0,
      host: '127.0.0.1',
      policy: { limits: { maxConnections: 100, maxConnectionsPerAddress: 100, trustedProxies: trustedProxies([]) }, format: jsonAnswers, allow: 'GET, HEAD' },
    });
    let closedAt: number | null = null;
    const load = keepAliveLoad(`${server.url}/`, 8, () => closedAt);
    // Under way by a count of answers, not a time, whatever the machine's load.
    while (load.ended() < 150) await new Promise((r) => setTimeout(r, 10));
    closedAt = performance.now();
    // Closed once every connection has ended; the clients meanwhile go on, and are refused.
    await server.close(5_000);
    const outcomes = await load.stop();
    const errors = outcomes.filter((o): o is { error: string } => 'error' in o).map((o) => o.error);
    const answered = outcomes.filter((o): o is { connection: string | undefined; afterClose: boolean } => 'connection' in o);
    process.stdout.write(`      ${answered.length} answered, ${answered.filter((o) => o.afterClose).length} of them after the close began; errors: ${JSON.stringify(errors.reduce<Record<string, number>>((n, e) => ({ ...n, [e]: (n[e] ?? 0) + 1 }), {}))}\n`);
    // New connections are refused once the listener is closed: a client's cue to go to another instance.
    expect(errors.filter((e) => e !== 'ECONNREFUSED')).to.deep.equal([]);
    expect(answered.filter((o) => o.afterClose).every((o) => o.connection === 'close')).to.equal(true);
    expect(answered.filter((o) => o.afterClose).length).to.be.greaterThan(0);
    expect(answered.length).to.be.greaterThan(100);
  });
});
