import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
