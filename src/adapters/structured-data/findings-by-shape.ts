import type { StructuredDataFindings } from '../../domain/structured-data.js';

/** Shapes whose findings are kept; past it the oldest is forgotten, so a catalog of many shapes costs time, never memory. */
export const SHAPES_REMEMBERED = 1_000;

/**
 * What the validator's rules read of a value besides whether it is there (`undefined`, `null`, `''`)
 * and its JSON type: `checkType` in `@adobe/structured-data-validator` 1.7.1, for the properties its
 * types of a VideoObject and its Product check that way. A property of these names gets its rule's
 * verdict in the shape at any depth. `test/adapters/structured-data.test.ts` sets every string of an
 * object to values these rules and the others tell apart, and fails if a finding came from a value
 * this table does not name.
 */
const VALUE_RULES: ReadonlyMap<string, (value: unknown) => boolean> = new Map([
  ['uploadDate', isDate],
  ['expires', isDate],
  ['duration', isDuration],
  ['contentUrl', isUrl],
  ['embedUrl', isUrl],
]);

/**
 * The validator's findings remembered by the shape of the object they are about: two objects of
 * one shape get the same findings, so the validator (an HTML page written, parsed five ways and
 * validated: a millisecond) runs once per shape, not once per PDP entry. The shape is everything the
 * rules read: the keys in order, each value's JSON type, each string's emptiness, `@type` and
 * `@context` verbatim, booleans and numbers verbatim, and the verdicts of the value rules above, run
 * on every object. Findings are shared between the objects of a shape: they are read-only.
 */
export class FindingsByShape {
  private readonly known = new Map<string, Promise<StructuredDataFindings>>();
  private runs = 0;

  constructor(
    private readonly validate: (jsonLd: object) => Promise<StructuredDataFindings>,
    private readonly capacity = SHAPES_REMEMBERED,
  ) {}

  /** How many objects the validator itself was run on. */
  get validatorRuns(): number {
    return this.runs;
  }

  findings(jsonLd: object): Promise<StructuredDataFindings> {
    const shape = shapeOf(jsonLd);
    const known = this.known.get(shape);
    if (known !== undefined) return known;
    this.runs += 1;
    const found = this.validate(jsonLd);
    // A failure is not remembered: the next object of the shape runs the validator again.
    found.catch(() => this.known.delete(shape));
    if (this.known.size >= this.capacity) this.known.delete(this.known.keys().next().value!);
    this.known.set(shape, found);
    return found;
  }
}

/** `validate`, its findings remembered by shape for as long as the function lives (`FindingsByShape`). */
export function rememberedByShape(validate: (jsonLd: object) => Promise<StructuredDataFindings>): (jsonLd: object) => Promise<StructuredDataFindings> {
  const byShape = new FindingsByShape(validate);
  return (jsonLd) => byShape.findings(jsonLd);
}

/** The shape of a JSON value, as `FindingsByShape` keys it: one string, equal for values the rules cannot tell apart. */
export function shapeOf(value: unknown): string {
  return shape(value, '');
}

function shape(value: unknown, key: string): string {
  const rule = VALUE_RULES.get(key);
  const verdict = rule === undefined || value === undefined || value === null || value === '' ? '' : rule(value) ? '+' : '-';
  if (typeof value === 'string') {
    if (key === '@type' || key === '@context') return JSON.stringify(value);
    return `${value === '' ? 'e' : 's'}${verdict}`;
  }
  if (Array.isArray(value)) return `[${value.map((item) => shape(item, key)).join(',')}]${verdict}`;
  if (typeof value === 'object' && value !== null) {
    let text = '{';
    for (const [name, child] of Object.entries(value)) text += `${JSON.stringify(name)}:${shape(child, name)},`;
    return `${text}}${verdict}`;
  }
  // Numbers, booleans and null as they are: the rules test their truth, and a number's digits.
  return value === undefined ? 'undefined' : `${JSON.stringify(value)}${verdict}`;
}

/** The validator's `date`: anything `new Date` reads. */
function isDate(value: unknown): boolean {
  return !Number.isNaN(new Date(value as string).getTime());
}

/** The validator's `duration`, its own expression. */
const DURATION = /^P(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?(T(\d+H)?(\d+M)?(\d+S)?)?$/;

function isDuration(value: unknown): boolean {
  return DURATION.test(value as string);
}

/** The validator's `url`: each of the value's URLs resolves against a base, and none is a `data:` URL. */
function isUrl(value: unknown): boolean {
  const urls = Array.isArray(value) ? value : [value];
  return urls.every((url) => {
    if (typeof url !== 'string') return false;
    return !url.startsWith('data:') && URL.canParse(url, 'https://example.com');
  });
}
