import { expect } from 'chai';
import { readConfig } from '../../src/adapters/config/config.js';
import { warnOfWeakeningSettings, weakeningSettings } from '../../src/adapters/config/weakening-settings.js';

const settingsOf = (env: Record<string, string>): string[] => weakeningSettings(readConfig(env)).map((w) => w.setting);

describe('settings that weaken a deployment', function () {
  it('finds none in the defaults, nor in a production setup behind a proxy', function () {
    expect(settingsOf({})).to.deep.equal([]);
    expect(settingsOf({
      HOST: '0.0.0.0', TRUSTED_PROXIES: '10.0.0.0/8,192.168.1.7,fd00::/16', PORTAL_HOST: '0.0.0.0', PORTAL_SECURE_COOKIES: 'true',
      PORTAL_PUBLIC_URL: 'https://portal.example', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false',
    })).to.deep.equal([]);
    // A portal on loopback over plain http is the local demo; a portal turned off has no cookie.
    expect(settingsOf({ PORTAL_PUBLIC_URL: 'http://127.0.0.1:3001' })).to.deep.equal([]);
    expect(settingsOf({ PORTAL_PORT: '0', PORTAL_PUBLIC_URL: 'https://portal.example' })).to.deep.equal([]);
  });

  it('names each weakening setting with its value and what it gives up', function () {
    const found = weakeningSettings(readConfig({
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', TRUSTED_PROXIES: '10.0.0.0/8,0.0.0.0/0,::/0', PORTAL_PUBLIC_URL: 'https://portal.example',
    }));
    expect(found.map((w) => w.setting)).to.deep.equal(['WEBHOOK_ALLOW_PRIVATE_TARGETS=true', 'TRUSTED_PROXIES=10.0.0.0/8,0.0.0.0/0,::/0', 'PORTAL_SECURE_COOKIES=false']);
    expect(found[0]!.weakens).to.include('plain http').and.include('loopback, private and other non-public addresses').and.include('development and tests only');
    expect(found[1]!.weakens).to.match(/^0\.0\.0\.0\/0, ::\/0 are far wider than a network of proxies: .*X-Forwarded-For.*MAX_CONNECTIONS_PER_ADDRESS/);
    expect(found[2]!.weakens).to.include('at https://portal.example').and.include('set PORTAL_SECURE_COOKIES=true');
    expect(settingsOf({ PORTAL_HOST: '0.0.0.0' })).to.deep.equal(['PORTAL_SECURE_COOKIES=false']);
    expect(settingsOf({ TRUSTED_PROXIES: '128.0.0.0/1' })).to.deep.equal(['TRUSTED_PROXIES=128.0.0.0/1']);
  });

  it('warns of each at level warn, naming the setting in the line and as a field', function () {
    const lines: { fields: object; message: string }[] = [];
    warnOfWeakeningSettings(readConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }), { warn: (fields, message) => lines.push({ fields, message }) });
    expect(lines).to.have.length(1);
    expect(lines[0]!.fields).to.deep.equal({ setting: 'WEBHOOK_ALLOW_PRIVATE_TARGETS=true' });
    expect(lines[0]!.message).to.match(/^WEBHOOK_ALLOW_PRIVATE_TARGETS=true weakens this deployment: webhook endpoints may be plain http/);
  });
});
