import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { generatedFiles } from '../scripts/generated-files.js';

describe('files generated from the response contract', function () {
  it('are committed as the declarations generate them now', async function () {
    for (const { path, source } of await generatedFiles()) {
      const committed = readFileSync(new URL(`../${path}`, import.meta.url), 'utf8').split('\n');
      const generated = source.split('\n');
      const firstDifference = generated.findIndex((line, i) => committed[i] !== line);
      const stale = firstDifference !== -1 || committed.length !== generated.length;
      expect(stale, `${path} is stale (from line ${firstDifference + 1}): run npm run generate`).to.equal(false);
    }
  });
});
