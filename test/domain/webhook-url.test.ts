import { expect } from 'chai';
import { WebhookUrlRefused, type WebhookUrlProblem } from '../../src/domain/webhook-errors.js';
import { checkWebhookUrl, MAX_WEBHOOK_URL_LENGTH } from '../../src/domain/webhook-url.js';

const PUBLIC = { allowPrivateTargets: false };
const PRIVATE_ALLOWED = { allowPrivateTargets: true };

/** The refusal `checkWebhookUrl` throws, or null when it accepts the URL. */
function refusalOf(url: string, options = PUBLIC): WebhookUrlRefused | null {
  try {
    checkWebhookUrl(url, options);
    return null;
  } catch (error) {
    if (error instanceof WebhookUrlRefused) return error;
    throw error;
  }
}

/** A URL of exactly `length` characters. */
function urlOfLength(length: number): string {
  const start = 'https://hooks.example.com/';
  return start + 'a'.repeat(length - start.length);
}

describe('webhook endpoint URLs', function () {
  const refused: [string, WebhookUrlProblem, string][] = [
    ['hooks.example.com/in', 'not_absolute', 'webhook URL refused: not an absolute URL'],
    ['/relative/path', 'not_absolute', 'webhook URL refused: not an absolute URL'],
    ['https://hooks.example.com/a b', 'control_characters', 'webhook URL refused: it contains a blank or a control character'],
    ['https://hooks.exa\nmple.com/', 'control_characters', 'webhook URL refused: it contains a blank or a control character'],
    [' https://hooks.example.com/', 'control_characters', 'webhook URL refused: it contains a blank or a control character'],
    ['http://hooks.example.com/in', 'not_https', 'webhook URL refused: the scheme is http; only https is allowed'],
    ['ftp://hooks.example.com/in', 'not_https', 'webhook URL refused: the scheme is ftp; only https is allowed'],
    ['https://user:s3cret@hooks.example.com/in', 'credentials', 'webhook URL refused: it holds credentials (a user name or a password before the host); give a URL without them'],
    ['https://token@hooks.example.com/in', 'credentials', 'webhook URL refused: it holds credentials (a user name or a password before the host); give a URL without them'],
    ['https://:s3cret@hooks.example.com/in', 'credentials', 'webhook URL refused: it holds credentials (a user name or a password before the host); give a URL without them'],
    [urlOfLength(MAX_WEBHOOK_URL_LENGTH + 1), 'too_long', 'webhook URL refused: it is 2,049 characters long; at most 2,048'],
    ['https://127.0.0.1/in', 'loopback', 'webhook URL refused: 127.0.0.1 is a loopback address; webhooks go to public addresses only'],
    ['https://127.1/in', 'loopback', 'webhook URL refused: 127.0.0.1 is a loopback address; webhooks go to public addresses only'],
    ['https://2130706433/in', 'loopback', 'webhook URL refused: 127.0.0.1 is a loopback address; webhooks go to public addresses only'],
    ['https://0x7f.0.0.1/in', 'loopback', 'webhook URL refused: 127.0.0.1 is a loopback address; webhooks go to public addresses only'],
    ['https://[::1]/in', 'loopback', 'webhook URL refused: ::1 is a loopback address; webhooks go to public addresses only'],
    ['https://10.1.2.3/in', 'private', 'webhook URL refused: 10.1.2.3 is a private address; webhooks go to public addresses only'],
    ['https://172.16.0.1:8443/in', 'private', 'webhook URL refused: 172.16.0.1 is a private address; webhooks go to public addresses only'],
    ['https://192.168.1.10/in', 'private', 'webhook URL refused: 192.168.1.10 is a private address; webhooks go to public addresses only'],
    ['https://169.254.169.254/latest/meta-data', 'link_local', 'webhook URL refused: 169.254.169.254 is a link-local address; webhooks go to public addresses only'],
    ['https://[fe80::1]/in', 'link_local', 'webhook URL refused: fe80::1 is a link-local address; webhooks go to public addresses only'],
    ['https://100.64.0.1/in', 'carrier_grade_nat', 'webhook URL refused: 100.64.0.1 is a carrier-grade NAT address; webhooks go to public addresses only'],
    ['https://[fd12:3456::1]/in', 'unique_local', 'webhook URL refused: fd12:3456::1 is a unique-local address; webhooks go to public addresses only'],
    ['https://224.0.0.1/in', 'multicast', 'webhook URL refused: 224.0.0.1 is a multicast address; webhooks go to public addresses only'],
    ['https://[ff02::1]/in', 'multicast', 'webhook URL refused: ff02::1 is a multicast address; webhooks go to public addresses only'],
    ['https://0.0.0.0/in', 'unspecified', 'webhook URL refused: 0.0.0.0 is the unspecified address; webhooks go to public addresses only'],
    ['https://[::]/in', 'unspecified', 'webhook URL refused: :: is the unspecified address; webhooks go to public addresses only'],
    // IPv4-mapped IPv6: judged as the IPv4 address it carries.
    ['https://[::ffff:127.0.0.1]/in', 'loopback', 'webhook URL refused: ::ffff:7f00:1 (IPv4-mapped 127.0.0.1) is a loopback address; webhooks go to public addresses only'],
    ['https://[::ffff:10.0.0.1]/in', 'private', 'webhook URL refused: ::ffff:a00:1 (IPv4-mapped 10.0.0.1) is a private address; webhooks go to public addresses only'],
    ['https://[::ffff:169.254.169.254]/in', 'link_local', 'webhook URL refused: ::ffff:a9fe:a9fe (IPv4-mapped 169.254.169.254) is a link-local address; webhooks go to public addresses only'],
    // Other ranges ipaddr.js does not call unicast.
    ['https://[::127.0.0.1]/in', 'special_purpose', 'webhook URL refused: ::7f00:1 is an IPv4-compatible IPv6 address, a deprecated form; webhooks go to public addresses only'],
    ['https://[64:ff9b::7f00:1]/in', 'special_purpose', 'webhook URL refused: 64:ff9b::7f00:1 is in a special-purpose range (rfc6052); webhooks go to public addresses only'],
    ['https://[2002:7f00:1::1]/in', 'special_purpose', 'webhook URL refused: 2002:7f00:1::1 is in a special-purpose range (6to4); webhooks go to public addresses only'],
    ['https://192.0.2.10/in', 'special_purpose', 'webhook URL refused: 192.0.2.10 is in a special-purpose range (reserved); webhooks go to public addresses only'],
    ['https://255.255.255.255/in', 'special_purpose', 'webhook URL refused: 255.255.255.255 is the broadcast address; webhooks go to public addresses only'],
  ];
  for (const [url, problem, message] of refused) {
    it(`refuses ${JSON.stringify(url.length > 60 ? `${url.slice(0, 40)}… (${url.length} characters)` : url)}: ${problem}`, function () {
      const refusal = refusalOf(url);
      expect(refusal, 'refused').to.not.equal(null);
      expect([refusal?.code, refusal?.problem, refusal?.message]).to.deep.equal(['invalid_webhook_url', problem, message]);
    });
  }

  const accepted: [string, string][] = [
    ['https://hooks.example.com/in?x=1', 'https://hooks.example.com/in?x=1'],
    ['https://hooks.example.com', 'https://hooks.example.com/'],
    ['HTTPS://Hooks.Example.COM:8443/In', 'https://hooks.example.com:8443/In'],
    ['https://93.184.215.14/in', 'https://93.184.215.14/in'],
    ['https://[2606:4700:4700::1111]/in', 'https://[2606:4700:4700::1111]/in'],
    ['https://[::ffff:93.184.215.14]/in', 'https://[::ffff:5db8:d70e]/in'],
    // A name is not resolved when it is added, whatever it would resolve to: delivery checks it.
    ['https://localhost.example/in', 'https://localhost.example/in'],
    [urlOfLength(MAX_WEBHOOK_URL_LENGTH), urlOfLength(MAX_WEBHOOK_URL_LENGTH)],
  ];
  for (const [url, stored] of accepted) {
    it(`accepts ${JSON.stringify(url.length > 60 ? `${url.slice(0, 40)}… (${url.length} characters)` : url)}, stored in its normal form`, function () {
      expect(checkWebhookUrl(url, PUBLIC)).to.equal(stored);
    });
  }

  it('takes exactly 2,048 characters and refuses 2,049', function () {
    expect(checkWebhookUrl(urlOfLength(2_048), PUBLIC)).to.have.length(2_048);
    expect(refusalOf(urlOfLength(2_049))?.problem).to.equal('too_long');
  });

  it('refuses a URL whose stored form would pass 2,048 characters, though the text given does not', function () {
    // Each é is percent-encoded as %C3%A9: six characters stored for one given.
    const url = `https://hooks.example.com/${'é'.repeat(400)}`;
    expect(url.length).to.be.below(MAX_WEBHOOK_URL_LENGTH);
    expect(refusalOf(url)?.problem).to.equal('too_long');
  });

  it('never repeats a password given in the URL', function () {
    expect(refusalOf('https://user:s3cret@hooks.example.com/in')?.message).to.not.include('s3cret');
  });

  it('with allowPrivateTargets, also takes http and every non-public address, but still refuses other schemes, credentials and length', function () {
    for (const url of ['http://hooks.example.com/in', 'http://127.0.0.1:8080/in', 'https://[::1]/in', 'https://10.1.2.3/in', 'http://169.254.169.254/',
      'https://[::ffff:127.0.0.1]/in', 'https://[fd00::1]/in']) {
      expect(refusalOf(url, PRIVATE_ALLOWED), url).to.equal(null);
    }
    expect(refusalOf('ftp://hooks.example.com/in', PRIVATE_ALLOWED)?.message).to.equal('webhook URL refused: the scheme is ftp; only https or http is allowed');
    expect(refusalOf('http://u:p@127.0.0.1/in', PRIVATE_ALLOWED)?.problem).to.equal('credentials');
    expect(refusalOf(urlOfLength(2_049), PRIVATE_ALLOWED)?.problem).to.equal('too_long');
  });
});
