import type { TSchema } from 'typebox';
import type { Keywords } from '../../src/domain/schema-problems.js';

/*
 * Walks a catalog format declaration (src/domain/catalog-format.ts) to make values of it and every
 * one-leaf change of them, so a test over "every field" reads the fields from the declaration and a
 * field added there is walked without the test naming it. Values need not meet patterns or formats:
 * they go through productOf, which only renames.
 */

export type LeafPath = readonly (string | number)[];

/** One change of a value: where, what was done, and the whole value after it. */
export interface Change {
  readonly path: LeafPath;
  readonly what: string;
  readonly value: unknown;
}

/** A string leaf of the value, as its path and text; a string array's items are leaves too. */
export interface StringLeaf {
  readonly path: LeafPath;
  readonly text: string;
}

/** Makes values whose every leaf differs from every other (a counter in each), so no change can land on an equal value. */
export class SampleMaker {
  private next = 0;

  /** A value of the schema: every optional field given, one item in every array, every nullable field null when `nulls`. */
  sample(schema: TSchema | Keywords, nulls: boolean): unknown {
    const keywords = schema as Keywords;
    if (keywords.anyOf !== undefined) return nulls ? null : this.sample(nonNull(keywords), nulls);
    if (keywords.const !== undefined) return keywords.const;
    if (keywords.enum !== undefined) return keywords.enum[0];
    this.next += 1;
    switch (keywords.type) {
      case 'object':
        return Object.fromEntries(Object.entries(keywords.properties ?? {}).map(([name, child]) => [name, this.sample(child, nulls)]));
      case 'array':
        return [this.sample(keywords.items!, nulls)];
      case 'string':
        return `text-${this.next}`;
      case 'number':
        return this.next;
      case 'boolean':
        return true;
      default:
        throw new Error(`a declaration this walker does not know: ${JSON.stringify(schema)}`);
    }
  }

  /**
   * Every change of one leaf of `value` to another value its declaration allows (a string or a
   * number changed, a boolean flipped, another enum member, null for a nullable field or a value for
   * a null one), every optional field left out, and every array emptied or given one more item.
   */
  changes(schema: TSchema, value: unknown): Change[] {
    const changes: { path: LeafPath; what: string; replace: (old: unknown) => unknown }[] = [];
    const walk = (keywords: Keywords, current: unknown, path: LeafPath): void => {
      if (keywords.anyOf !== undefined) {
        if (current === null || current === undefined) {
          changes.push({ path, what: 'given a value', replace: () => this.sample(nonNull(keywords), false) });
          return;
        }
        changes.push({ path, what: 'made null', replace: () => null });
        walk(nonNull(keywords), current, path);
        return;
      }
      if (keywords.const !== undefined) return;
      if (keywords.enum !== undefined) {
        for (const other of keywords.enum.filter((member) => member !== current)) changes.push({ path, what: `made ${JSON.stringify(other)}`, replace: () => other });
        return;
      }
      switch (keywords.type) {
        case 'object': {
          const object = current as Record<string, unknown>;
          for (const [name, child] of Object.entries(keywords.properties ?? {})) {
            // Left out reads as null: a null field left out is no change.
            if (!(keywords.required ?? []).includes(name) && object[name] !== undefined && object[name] !== null) {
              changes.push({ path: [...path, name], what: 'left out', replace: () => LEFT_OUT });
            }
            walk(child, object[name], [...path, name]);
          }
          return;
        }
        case 'array': {
          const items = current as unknown[];
          if (items.length > 0) changes.push({ path, what: 'emptied', replace: () => [] });
          changes.push({ path, what: 'given one more item', replace: (old) => [...(old as unknown[]), this.sample(keywords.items!, false)] });
          items.forEach((item, index) => walk(keywords.items!, item, [...path, index]));
          return;
        }
        case 'string':
          changes.push({ path, what: 'changed', replace: (old) => `${String(old)}-changed` });
          return;
        case 'number':
          changes.push({ path, what: 'changed', replace: (old) => (old as number) + 0.5 });
          return;
        case 'boolean':
          changes.push({ path, what: 'flipped', replace: (old) => !(old as boolean) });
          return;
        default:
          throw new Error(`a declaration this walker does not know: ${JSON.stringify(keywords)}`);
      }
    };
    walk(schema, value, []);
    return changes.map(({ path, what, replace }) => ({ path, what, value: replaced(value, path, replace) }));
  }
}

/** Every string leaf of `value` that its declaration lets be any text (an enum's or a constant's are bounded). */
export function stringLeaves(schema: TSchema, value: unknown): StringLeaf[] {
  const leaves: StringLeaf[] = [];
  const walk = (keywords: Keywords, current: unknown, path: LeafPath): void => {
    if (current === null || current === undefined) return;
    if (keywords.anyOf !== undefined) return walk(nonNull(keywords), current, path);
    if (keywords.const !== undefined || keywords.enum !== undefined) return;
    if (keywords.type === 'object') {
      for (const [name, child] of Object.entries(keywords.properties ?? {})) walk(child, (current as Record<string, unknown>)[name], [...path, name]);
    } else if (keywords.type === 'array') {
      (current as unknown[]).forEach((item, index) => walk(keywords.items!, item, [...path, index]));
    } else if (keywords.type === 'string') {
      leaves.push({ path, text: current as string });
    }
  };
  walk(schema, value, []);
  return leaves;
}

/** `value` with the leaf at `path` replaced; the rest shared with nothing. */
export function replaced(value: unknown, path: LeafPath, replace: (old: unknown) => unknown): unknown {
  const copy = structuredClone(value);
  if (path.length === 0) return replace(copy);
  let parent = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  const next = replace(parent[last]);
  if (next === LEFT_OUT) Reflect.deleteProperty(parent, last);
  else parent[last] = next;
  return copy;
}

export function pathText(path: LeafPath): string {
  return path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`)).join('').replace(/^\./, '');
}

const LEFT_OUT = Symbol('left out');

function nonNull(keywords: Keywords): Keywords {
  const [member, more] = (keywords.anyOf ?? []).filter((option) => (option as Keywords).type !== 'null');
  if (member === undefined || more !== undefined) throw new Error(`a union this walker does not know: ${JSON.stringify(keywords)}`);
  return member;
}
