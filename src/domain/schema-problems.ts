import type { TSchema } from 'typebox';

/*
 * Checks a value against a TypeBox declaration, telling each problem with its JSON path and the
 * message its keyword gives, every problem of the value rather than the first. A schema is compiled
 * once into nested checks, so a reader that checks millions of values reads no keyword twice.
 */

/** Where a value is: a path given whole, or a key (an array's index) under its parent; spelt out only for a problem. */
export type JsonPath = string | { readonly parent: JsonPath; readonly key: string | number };

/** The path as problems name it: `partners[0].products[3].sku`, '' for the document itself. */
export function pathText(path: JsonPath): string {
  if (typeof path === 'string') return path;
  const parent = pathText(path.parent);
  if (typeof path.key === 'number') return `${parent}[${path.key}]`;
  return parent === '' ? path.key : `${parent}.${path.key}`;
}

/** What a check tells as it goes. */
export interface ProblemSink {
  readonly problem: (path: JsonPath, message: string) => void;
  /** An object met its schema: rules across values, which a schema cannot say, go on from it. */
  readonly checked?: (schema: TSchema, value: Readonly<Record<string, unknown>>, path: JsonPath) => void;
}

/**
 * Checks a value, telling the sink each problem; true when the value reads as its schema says. An
 * unknown field is a problem but leaves its object readable, so rules across values still see it.
 */
export type SchemaCheck = (value: unknown, path: JsonPath, sink: ProblemSink) => boolean;

/** The rule a `format` names, written as code: true when the text meets it, false when not, or a problem of its own. */
export type FormatRule = (text: string) => boolean | string;

export type FormatRules = Readonly<Record<string, FormatRule>>;

/** The keywords checked, as TypeBox writes them. */
export interface Keywords {
  readonly type?: 'object' | 'array' | 'string' | 'number' | 'boolean' | 'null';
  readonly const?: unknown;
  readonly enum?: readonly unknown[];
  readonly anyOf?: readonly TSchema[];
  readonly pattern?: string;
  readonly format?: string;
  readonly minimum?: number;
  readonly items?: TSchema;
  readonly properties?: Readonly<Record<string, TSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean;
  /** What a valid value is, as a problem reads it: `must be <description>; got "…"`. */
  readonly description?: string;
  /** A keyword's problem in words of its own, where the derived ones would not do. */
  readonly errorMessage?: Readonly<Record<string, string>>;
}

const TYPE_PROBLEMS = {
  object: 'must be an object',
  array: 'must be an array',
  string: 'must be a string',
  number: 'must be a number',
  boolean: 'must be true or false',
} as const;

const REQUIRED = 'is required';
const UNKNOWN_FIELD = 'is not a known field';

export function compileSchema(schema: TSchema, formats: FormatRules): SchemaCheck {
  const keywords = schema as Keywords;
  const says = (keyword: string, derived: string): string => keywords.errorMessage?.[keyword] ?? derived;
  if (keywords.anyOf !== undefined) return nullable(keywords.anyOf, formats);
  if (keywords.const !== undefined) {
    const only = keywords.const;
    const problem = says('const', `must be ${JSON.stringify(only)}`);
    return (value, path, sink) => value === only || fail(sink, path, problem);
  }
  if (keywords.enum !== undefined) {
    const values = keywords.enum;
    const problem = says('enum', `must be ${values.map((v) => JSON.stringify(v)).join(' or ')}`);
    return (value, path, sink) => values.includes(value) || fail(sink, path, problem);
  }
  switch (keywords.type) {
    case 'object':
      return objectCheck(schema, keywords, says('type', TYPE_PROBLEMS.object), formats);
    case 'array': {
      const problem = says('type', TYPE_PROBLEMS.array);
      if (keywords.items === undefined) throw new Error('an array is checked here only with the schema of its items');
      const item = compileSchema(keywords.items, formats);
      return (value, path, sink) => {
        if (!Array.isArray(value)) return fail(sink, path, problem);
        let readable = true;
        for (let i = 0; i < value.length; i++) if (!item(value[i], { parent: path, key: i }, sink)) readable = false;
        return readable;
      };
    }
    case 'string':
      return stringCheck(keywords, says, formats);
    case 'number': {
      const problem = says('type', TYPE_PROBLEMS.number);
      const minimum = keywords.minimum ?? -Infinity;
      const below = says('minimum', `must be at least ${minimum}`);
      // JSON has no infinite number: one is a number the file wrote past what a double holds.
      return (value, path, sink) => {
        if (typeof value !== 'number' || !Number.isFinite(value)) return fail(sink, path, problem);
        return value >= minimum || fail(sink, path, below);
      };
    }
    case 'boolean': {
      const problem = says('type', TYPE_PROBLEMS.boolean);
      return (value, path, sink) => typeof value === 'boolean' || fail(sink, path, problem);
    }
    default:
      throw new Error(`a schema of type ${String(keywords.type)} cannot be checked here`);
  }
}

/**
 * An object's fields, for a reader that meets them one at a time rather than the object whole:
 * the same checks and messages as the object's own.
 */
export interface FieldChecks {
  /** Checks one field met; true when it reads as its schema says (an unknown field is a problem, and false). */
  field(key: string, value: unknown, path: JsonPath, sink: ProblemSink): boolean;
  /** The object ended: each required field not met is a problem. */
  end(met: ReadonlySet<string>, path: JsonPath, sink: ProblemSink): void;
}

export function compileFields(schema: TSchema, formats: FormatRules): FieldChecks {
  const keywords = schema as Keywords;
  const checks = new Map(Object.entries(keywords.properties ?? {}).map(([key, property]) => [key, compileSchema(property, formats)]));
  const required = keywords.required ?? [];
  return {
    field(key, value, path, sink) {
      const check = checks.get(key);
      if (check === undefined) return fail(sink, { parent: path, key }, UNKNOWN_FIELD);
      return check(value, { parent: path, key }, sink);
    },
    end(met, path, sink) {
      for (const key of required) if (!met.has(key)) sink.problem({ parent: path, key }, REQUIRED);
    },
  };
}

function fail(sink: ProblemSink, path: JsonPath, message: string): false {
  sink.problem(path, message);
  return false;
}

/** A field that may be null: null, or the one other schema, whose problems are the ones told. */
function nullable(branches: readonly TSchema[], formats: FormatRules): SchemaCheck {
  const others = branches.filter((branch) => (branch as Keywords).type !== 'null');
  if (others.length !== 1 || branches.length !== 2) throw new Error('anyOf is checked here only as one schema or null');
  const check = compileSchema(others[0]!, formats);
  return (value, path, sink) => value === null || check(value, path, sink);
}

function stringCheck(keywords: Keywords, says: (keyword: string, derived: string) => string, formats: FormatRules): SchemaCheck {
  const problem = says('type', TYPE_PROBLEMS.string);
  const pattern = keywords.pattern === undefined ? null : new RegExp(keywords.pattern, 'u');
  const rule = keywords.format === undefined ? null : formats[keywords.format];
  if (rule === undefined) throw new Error(`no rule for the format ${keywords.format ?? ''}`);
  const described = keywords.description ?? `a string matching ${keywords.pattern ?? keywords.format ?? ''}`;
  const unlike = (text: string): string => `must be ${described}; got ${JSON.stringify(text)}`;
  const patternProblem = keywords.errorMessage?.pattern;
  return (value, path, sink) => {
    if (typeof value !== 'string') return fail(sink, path, problem);
    if (pattern !== null && !pattern.test(value)) return fail(sink, path, patternProblem ?? unlike(value));
    if (rule === null) return true;
    const verdict = rule(value);
    return verdict === true || fail(sink, path, verdict === false ? unlike(value) : verdict);
  };
}

function objectCheck(schema: TSchema, keywords: Keywords, problem: string, formats: FormatRules): SchemaCheck {
  const properties = Object.entries(keywords.properties ?? {}).map(([key, property]) => [key, compileSchema(property, formats)] as const);
  const known = new Set(properties.map(([key]) => key));
  const required = keywords.required ?? [];
  const closed = keywords.additionalProperties === false;
  return (value, path, sink) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(sink, path, problem);
    const record = value as Readonly<Record<string, unknown>>;
    let readable = true;
    for (const key of required) {
      if (!Object.hasOwn(record, key)) readable = fail(sink, { parent: path, key }, REQUIRED);
    }
    if (closed) {
      for (const key of Object.keys(record)) if (!known.has(key)) sink.problem({ parent: path, key }, UNKNOWN_FIELD);
    }
    for (const [key, check] of properties) {
      if (Object.hasOwn(record, key) && !check(record[key], { parent: path, key }, sink)) readable = false;
    }
    if (readable) sink.checked?.(schema, record, path);
    return readable;
  };
}
