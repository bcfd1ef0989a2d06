import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from './support/script-command.js';

/*
 * `npm ci` at the root ends with no warning about install scripts: every installed package that has
 * one is either allowed or denied in package.json's `allowScripts`, the list npm (11.19 and later)
 * checks after an install. `npm install-scripts ls` reads the same list against the installed tree,
 * offline, and names what an install would warn about.
 */

const run = promisify(execFile);

describe('npm install: install scripts', function () {
  this.timeout(60_000);

  it('leaves no package with an install script that package.json neither allows nor denies', async function () {
    const { stdout } = await run('npm', ['install-scripts', 'ls', '--json'], { cwd: ROOT, env: { ...process.env, npm_config_update_notifier: 'false' } });
    expect(JSON.parse(stdout)).to.deep.equal({ allowScripts: [] });
  });

  it('allows esbuild\'s (it checks its platform binary), denies @scarf/scarf\'s, and opts out of Scarf\'s analytics for npm versions that run it anyway', function () {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: unknown; scarfSettings?: unknown };
    expect(manifest.allowScripts).to.deep.equal({ esbuild: true, '@scarf/scarf': false });
    // The key @scarf/scarf's report.js reads from the root package.json.
    expect(manifest.scarfSettings).to.deep.equal({ enabled: false });
  });
});
