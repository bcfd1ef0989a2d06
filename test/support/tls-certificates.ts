import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A certificate authority of the test's own and a server certificate it signed, for localhost and 127.0.0.1, as PEM files in `dir`. */
export function makeCertificates(dir: string): { ca: string; cert: string; key: string } {
  const files = { ca: join(dir, 'ca.pem'), caKey: join(dir, 'ca.key'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key'), csr: join(dir, 'server.csr'), ext: join(dir, 'san.ext') };
  const openssl = (...args: string[]): void => {
    const run = spawnSync('openssl', args, { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`openssl ${args[0]}: ${run.stderr}`);
  };
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', files.caKey, '-out', files.ca, '-days', '1', '-subj', '/CN=pcat test CA');
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', files.key, '-out', files.csr, '-subj', '/CN=localhost');
  writeFileSync(files.ext, 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  openssl('x509', '-req', '-in', files.csr, '-CA', files.ca, '-CAkey', files.caKey, '-CAcreateserial', '-out', files.cert, '-days', '1', '-extfile', files.ext);
  return { ca: files.ca, cert: files.cert, key: files.key };
}
