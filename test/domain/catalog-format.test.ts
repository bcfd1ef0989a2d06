import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import type { TSchema } from 'typebox';
import { ApiKeySchema, PartnerSchema, PdpEntrySchema, ProductSchema, VideoSchema } from '../../src/domain/catalog-format.js';

/** The fields a table of docs/decisions.md (catalog files, fields) lists under its heading, each with whether it is marked *req*. */
function documentedFields(heading: string): Map<string, boolean> {
  const docs = readFileSync(new URL('../../docs/decisions.md', import.meta.url), 'utf8');
  const start = docs.indexOf(`\n${heading}\n`);
  expect(start, heading).to.be.greaterThan(-1);
  const rows = docs.slice(start + heading.length + 2).trimStart().split('\n\n')[0]!.split('\n').slice(2);
  const fields = new Map<string, boolean>();
  for (const row of rows) {
    const cell = row.split('|')[1]!;
    for (const [, name] of cell.matchAll(/`([a-z0-9_]+)`/g)) fields.set(name!, cell.includes('*req*'));
  }
  return fields;
}

function declaredFields(schema: TSchema): Map<string, boolean> {
  const { properties, required } = schema as { properties: Record<string, unknown>; required: string[] };
  return new Map(Object.keys(properties).map((name) => [name, required.includes(name)]));
}

describe('catalog format (partner-catalog/v1)', function () {
  const tables: [string, TSchema][] = [
    ['**Partner**', PartnerSchema],
    ['**Key** (`api_keys[]`)', ApiKeySchema],
    ['**Product** (`products[]`)', ProductSchema],
    ['**Video** (`videos[]`)', VideoSchema],
    ['**PDP entry** (`pdp_urls[]`)', PdpEntrySchema],
  ];
  for (const [heading, schema] of tables) {
    it(`is documented as declared: ${heading.replaceAll('*', '')}, every field and which are required`, function () {
      expect([...documentedFields(heading)].sort()).to.deep.equal([...declaredFields(schema)].sort());
    });
  }
});
