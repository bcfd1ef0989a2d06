import { expect } from 'chai';
import { hashApiKey } from '../../src/domain/api-key.js';
import { KEYS } from '../fixtures/catalog-fixture.js';
import type { ServiceProcess } from './service-process.js';

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** The service's JSON log lines; anything else on stdout (there should be nothing) is ignored. */
export function logLines(service: ServiceProcess): LogLine[] {
  return service.stdout().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as LogLine);
}

/**
 * Fails if any fixture key appears in the service's output: whole, its random part alone,
 * or its SHA-256 (hex, as stored; base64 and base64url too, in case a hash is re-encoded).
 */
export function expectNoKeyInOutput(services: readonly ServiceProcess[]): void {
  for (const service of services) {
    const output = service.stdout() + service.stderr();
    for (const [name, key] of Object.entries(KEYS)) {
      const hash = hashApiKey(key);
      const hashBytes = Buffer.from(hash, 'hex');
      const forms: Record<string, string> = {
        key,
        'random part': key.slice('pcat_live_'.length),
        sha256: hash,
        'sha256 upper-case': hash.toUpperCase(),
        'sha256 base64': hashBytes.toString('base64'),
        'sha256 base64url': hashBytes.toString('base64url'),
      };
      for (const [form, text] of Object.entries(forms)) {
        expect(output.includes(text), `${form} of key ${name} in the service's output`).to.equal(false);
      }
    }
  }
}
