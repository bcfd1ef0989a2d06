import { expect } from 'chai';
import { Type, type TSchema } from 'typebox';
import { compileFields, compileSchema, pathText, type JsonPath, type ProblemSink } from '../../src/domain/schema-problems.js';

const formats = {
  even: (text: string) => text.length % 2 === 0,
  'no-x': (text: string) => !text.includes('x') || `names an x at ${text.indexOf('x')}`,
};

const Item = Type.Object({
  name: Type.String({ pattern: '\\S', errorMessage: { pattern: 'must not be empty' } }),
  code: Type.String({ pattern: '^[a-z]+$', description: 'lowercase letters' }),
  size: Type.Number({ minimum: 1 }),
  note: Type.Optional(Type.Union([Type.String({ format: 'no-x', description: 'a note' }), Type.Null()])),
}, { additionalProperties: false });

const Doc = Type.Object({
  kind: Type.Literal('doc'),
  state: Type.Enum(['on', 'off']),
  flag: Type.Boolean(),
  tag: Type.String({ format: 'even', description: 'an even number of characters' }),
  items: Type.Array(Item),
}, { additionalProperties: false });

/** Every problem a value has, as `path: message`, and the paths of the objects that met their schema. */
function check(schema: TSchema, value: unknown): { problems: string[]; checked: string[]; readable: boolean } {
  const problems: string[] = [];
  const checked: string[] = [];
  const sink: ProblemSink = {
    problem: (path: JsonPath, message: string) => problems.push(`${pathText(path)}: ${message}`),
    checked: (_schema, _value, path) => checked.push(pathText(path)),
  };
  const readable = compileSchema(schema, formats)(value, 'doc', sink);
  return { problems, checked, readable };
}

describe('schema problems: a value checked against its TypeBox declaration', function () {
  const good = { kind: 'doc', state: 'on', flag: true, tag: 'ab', items: [{ name: 'a', code: 'abc', size: 1 }, { name: 'b', code: 'd', size: 2, note: null }] };

  it('finds nothing in a value that meets its schema, and hands on each object it checked', function () {
    expect(check(Doc, good)).to.deep.equal({ problems: [], checked: ['doc.items[0]', 'doc.items[1]', 'doc'], readable: true });
  });

  it('tells every problem by its path, in the declaration\'s order, with the message its keyword gives', function () {
    const bad = {
      colour: 'red', kind: 'Doc', state: 1, flag: 'yes', tag: 'abc',
      items: [{ name: ' ', code: 'A1', size: 0, note: 'xylophone' }, { code: 3, size: Infinity, note: 4 }, 'item'],
    };
    const { problems, checked, readable } = check(Doc, bad);
    expect(problems).to.deep.equal([
      'doc.colour: is not a known field',
      'doc.kind: must be "doc"',
      'doc.state: must be "on" or "off"',
      'doc.flag: must be true or false',
      'doc.tag: must be an even number of characters; got "abc"',
      'doc.items[0].name: must not be empty',
      'doc.items[0].code: must be lowercase letters; got "A1"',
      'doc.items[0].size: must be at least 1',
      'doc.items[0].note: names an x at 0',
      'doc.items[1].name: is required',
      'doc.items[1].code: must be a string',
      'doc.items[1].size: must be a number',
      'doc.items[1].note: must be a string',
      'doc.items[2]: must be an object',
    ]);
    expect([checked, readable]).to.deep.equal([[], false]);
  });

  it('reads an object with an unknown field, reporting the field', function () {
    expect(check(Item, { name: 'a', code: 'b', size: 3, extra: 1 })).to.deep.equal({ problems: ['doc.extra: is not a known field'], checked: ['doc'], readable: true });
  });

  it('checks an object met a field at a time with the same messages', function () {
    const problems: string[] = [];
    const sink: ProblemSink = { problem: (path, message) => problems.push(`${pathText(path)}: ${message}`) };
    const fields = compileFields(Doc, formats);
    expect([fields.field('flag', true, '', sink), fields.field('state', 'of', '', sink), fields.field('colour', 1, '', sink)]).to.deep.equal([true, false, false]);
    fields.end(new Set(['flag', 'state', 'colour']), '', sink);
    expect(problems).to.deep.equal(['state: must be "on" or "off"', 'colour: is not a known field', 'kind: is required', 'tag: is required', 'items: is required']);
  });
});
