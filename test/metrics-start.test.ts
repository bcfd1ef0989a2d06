import { expect } from 'chai';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { freePort } from './support/redis.js';
import type { ServiceScript } from './support/script-command.js';
import { startService, type ServiceProcess } from './support/service-process.js';

/** The TCP ports the process listens on, from /proc: its socket inodes among the listening sockets. */
function listeningPorts(pid: number): number[] {
  const inodes = new Set(readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      return [/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1]].filter((inode) => inode !== undefined);
    } catch {
      return []; // closed meanwhile
    }
  }));
  const ports: number[] = [];
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT, st 0A is LISTEN, the inode is the tenth field.
      if (fields[3] === '0A' && inodes.has(fields[9] ?? '')) ports.push(parseInt(fields[1]!.split(':')[1]!, 16));
    }
  }
  return ports.sort((a, b) => a - b);
}

// As production starts it (compiled, from dist/); the demo's start (tsx) runs the same sources.
const script: ServiceScript = 'start:prod';
describe(`the service's metrics listener, METRICS_PORT and METRICS_HOST (npm run ${script})`, function () {
  this.timeout(30_000);
  const running: ServiceProcess[] = [];
  const start = (env: Record<string, string>): ServiceProcess => {
    const service = startService(env, script);
    running.push(service);
    return service;
  };
  afterEach(function () {
    for (const service of running.splice(0)) service.kill();
  });

  it('serves /metrics on its own port, counting the API\'s requests, and closes it on SIGTERM', async function () {
    const port = await freePort();
    const service = start({ METRICS_PORT: String(port) });
    const [, url, path] = await service.waitFor(/curl -s -H 'Authorization: Bearer pcat_live_[A-Za-z0-9]{40}' (http:\/\/[^\s/]+)(\S+)/);
    const [, key] = /(pcat_live_[A-Za-z0-9]{40})/.exec(service.stdout())!;
    await service.waitFor(new RegExp(`"metricsUrl":"http://127\\.0\\.0\\.1:${port}/metrics"`));
    expect((await fetch(`${url!}${path!}`, { headers: { Authorization: `Bearer ${key!}` } })).status).to.equal(200);

    const response = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(response.status).to.equal(200);
    const text = await response.text();
    const requests = parsePrometheusTextFormat(text).find((f) => f.name === 'pcat_http_requests_total');
    expect(requests?.metrics).to.deep.equal([{ labels: { route: '/api/v1/public/sku/:sku', status: '200', mode: 'live' }, value: '1' }]);
    expect(text).to.not.include(key!).and.not.include('TENT-2P').and.not.include('demo');

    service.child.kill('SIGTERM');
    expect(await service.exited()).to.equal(0);
    await fetch(`http://127.0.0.1:${port}/metrics`).then(
      () => expect.fail('the metrics listener outlived the process'),
      (error: unknown) => expect(error).to.be.instanceOf(TypeError),
    );
  });

  it('opens no listener of its own with METRICS_PORT=0', async function () {
    const port = await freePort();
    const [off, on] = [start({ METRICS_PORT: '0' }), start({ METRICS_PORT: String(port) })];
    const [, offLine] = await off.waitFor(/(\{[^\n]*"msg":"listening"[^\n]*\})/);
    await on.waitFor(/"msg":"listening"/);
    expect(offLine).to.not.include('metricsUrl');
    const [offPorts, onPorts] = [listeningPorts(off.child.pid!), listeningPorts(on.child.pid!)];
    expect(onPorts).to.include(port);
    // The same listeners otherwise: only the metrics one is missing.
    expect(offPorts).to.have.length(onPorts.length - 1);
  });

  it('refuses to start on a bad METRICS_PORT, naming it in one line', async function () {
    const service = start({ METRICS_PORT: 'metrics' });
    expect(await service.exited()).to.not.equal(0);
    expect(service.stderr().trim().split('\n')).to.have.length(1);
    expect(service.stderr()).to.include('METRICS_PORT: must be a whole number from 0 to 65535; got "metrics"');
  });

  it('refuses to start when the metrics port is taken, naming the variables', async function () {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const { port } = taken.address() as { port: number };
    try {
      const service = start({ METRICS_PORT: String(port) });
      expect(await service.exited()).to.not.equal(0);
      expect(service.stderr().trim().split('\n')).to.have.length(1);
      expect(service.stderr()).to.include(`METRICS_PORT=${port}: another program already listens on 127.0.0.1:${port} (EADDRINUSE)`).and.include('set METRICS_PORT to a free port');
    } finally {
      taken.close();
    }
  });
});
