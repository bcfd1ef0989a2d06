import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

const CHROMIUM = '/usr/bin/chromium';

/**
 * Debian's Chromium, headless, with nothing reaching out to the network. Without it the suite's
 * browser tests are skipped with a warning, except under `CI=true`, where they fail.
 */
export async function launchChromium(suite: Mocha.Context, extraArgs: readonly string[] = []): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    const line = `${CHROMIUM} is missing; install Debian's chromium package (apt-get install -y chromium)`;
    if (process.env.CI === 'true') throw new Error(`browser tests cannot run under CI: ${line}`);
    process.stderr.write(`\n*** BROWSER TESTS SKIPPED: ${line} ***\n`);
    suite.skip();
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...extraArgs],
  });
}

/** The HTML pages a browser page loaded, as received, for tests of what a page may carry. */
export interface RecordedPages {
  /** The bodies of the pages answered 200, in the order they were read. */
  readonly documents: string[];
  /**
   * Resolves once every page loaded so far has been read. Call it before leaving a page whose body
   * a test counts on: the browser may drop a body not yet read once the page is replaced.
   */
  settled(): Promise<void>;
}

export function recordPages(page: Page): RecordedPages {
  const documents: string[] = [];
  const reading: Promise<void>[] = [];
  page.on('response', (response) => {
    if (response.request().resourceType() !== 'document' || response.status() !== 200) return;
    reading.push(response.text().then((text) => {
      documents.push(text);
    }, () => undefined));
  });
  return {
    documents,
    settled: async () => {
      await Promise.all(reading);
    },
  };
}

/** Opens an admin invitation's link and creates the account with the password: the page ends on the portal's API keys. */
export async function acceptInvitation(page: Page, invitationUrl: string, password: string): Promise<void> {
  await page.goto(invitationUrl);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Confirm password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Create account', exact: true }).click();
  await page.getByRole('heading', { name: 'API keys', exact: true }).waitFor();
}
