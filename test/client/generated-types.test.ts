import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import { CLIENT_TYPES_FILE, clientTypesSource } from '../../scripts/client-types.js';

describe('client: generated types', function () {
  it('are what the OpenAPI document the service serves generates now', async function () {
    const committed = readFileSync(CLIENT_TYPES_FILE, 'utf8').split('\n');
    const generated = (await clientTypesSource()).split('\n');
    const firstDifference = generated.findIndex((line, i) => committed[i] !== line);
    const stale = firstDifference !== -1 || committed.length !== generated.length;
    expect(stale, `client/src/generated/openapi.ts is stale (from line ${firstDifference + 1}): run npm run generate:client-types`).to.equal(false);
  });
});
