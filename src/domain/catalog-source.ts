import type {
  ApiKeyRecord,
  Catalog,
  Creator,
  Partner,
  PdpEntry,
  Product,
  ProductProperty,
  Video,
} from './catalog.js';
import { answerBytesOverBound, MAX_ANSWER_BYTES } from './answer-size.js';
import { CompactStringMap } from './compact-string-map.js';
import { isValidSku } from './sku.js';
import { uploadDateProblem } from './upload-date.js';

export const CATALOG_FORMAT = 'partner-catalog/v1';

/**
 * The longest key, string or number a catalog file may hold, in characters (UTF-16 code units):
 * ample for the longest transcript, and a reader never holds more of one.
 */
export const MAX_STRING_LENGTH = 1_000_000;

const PARTNER_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
const SHA256_PATTERN = /^[0-9a-f]{64}$/;
const ASPECT_RATIO_PATTERN = /^[1-9][0-9]*x[1-9][0-9]*$/;
const LANGUAGE_PATTERN = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/;

/** A catalog file that breaks one or more rules; nothing of it may be loaded. */
export class CatalogSourceError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`catalog refused, ${problems.length} problem${problems.length === 1 ? '' : 's'}:\n${problems.join('\n')}`);
    this.name = 'CatalogSourceError';
  }
}

/**
 * Validates a parsed `partner-catalog/v1` document and returns it as the domain catalog.
 * Every problem is collected with its JSON path; any problem refuses the whole document.
 */
export function parseCatalogSource(document: unknown): Catalog {
  const reader = new CatalogSourceReader();
  const partners: Partner[] = [];
  const products = new Map<string, Product[]>();
  for (const piece of piecesOfDocument(document)) {
    for (const unit of reader.read(piece)) {
      if (unit.kind === 'partner') products.set(unit.partner.id, []);
      else if (unit.kind === 'product') products.get(unit.partner.id)?.push(unit.product);
      else partners.push({ ...unit.partner, products: products.get(unit.partner.id) ?? [] });
    }
  }
  const problems = reader.finish();
  if (problems.length > 0) throw new CatalogSourceError(problems);
  return { partners };
}

/** Parses JSON text first, so a syntax error is reported the same way as a rule broken. */
export function parseCatalogSourceText(text: string): Catalog {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new CatalogSourceError([`$: ${notJson((error as Error).message)}`]);
  }
  return parseCatalogSource(document);
}

const notJson = (reason: string): string => `not valid JSON (${reason})`;

/**
 * A catalog document in the order a reader meets it, so a file can be checked and imported
 * product by product without ever being held whole. A piece carries a whole value only below
 * the level of a product or of a partner's other fields.
 */
export type CatalogPiece =
  /** The document is not an object: the whole of it. */
  | { readonly kind: 'document'; readonly value: unknown }
  /** A top-level field; `partners` comes as one only when it is not an array. */
  | { readonly kind: 'field'; readonly key: string; readonly value: unknown }
  /** The `partners` array opens. */
  | { readonly kind: 'partners' }
  /** An element of `partners` that is not an object. */
  | { readonly kind: 'partner'; readonly index: number; readonly value: unknown }
  | { readonly kind: 'partnerStart'; readonly index: number }
  /** A field of a partner; `products` comes as one only when it is not an array. */
  | { readonly kind: 'partnerField'; readonly index: number; readonly key: string; readonly value: unknown }
  /** A partner's `products` array opens. */
  | { readonly kind: 'products'; readonly index: number }
  | { readonly kind: 'product'; readonly partner: number; readonly index: number; readonly value: unknown }
  | { readonly kind: 'partnerEnd'; readonly index: number }
  /** A problem the reader of the text found at this path (a key given twice, a string too long); reading goes on. */
  | { readonly kind: 'problem'; readonly path: string; readonly message: string }
  /** The text stopped being readable (not UTF-8, not JSON, cut short) at this path; nothing after it is read. */
  | { readonly kind: 'unreadable'; readonly path: string; readonly message: string };

/** Pieces of a catalog, one at a time or in groups (a file reader hands on what each read of the file held). */
export type CatalogPieces = Iterable<CatalogPiece> | AsyncIterable<readonly CatalogPiece[]>;

/** A partner as known before its products: what a product's JSON-LD and storage need of it. */
export interface PartnerHeader {
  readonly id: string;
  readonly name: string;
}

/**
 * What a reader hands on, in order: a partner once its id and name are valid, then each of its
 * valid products, then the partner with its keys once it ends. A partner whose id or name is
 * refused hands on nothing; its products are still checked.
 */
export type CatalogUnit =
  | { readonly kind: 'partner'; readonly partner: PartnerHeader }
  | { readonly kind: 'product'; readonly partner: PartnerHeader; readonly product: Product }
  | { readonly kind: 'partnerEnd'; readonly partner: PartnerHeader & { readonly apiKeys: readonly ApiKeyRecord[] }; readonly listed: ListedIdentities };

/** What a partner of the file lists, as the reader saw it: whatever is stored and not listed goes. */
export interface ListedIdentities {
  readonly skus: { has(sku: string): boolean };
  readonly videoRefs: { has(ref: string): boolean };
}

/** The pieces of a document already parsed, in its own key order. */
export function* piecesOfDocument(document: unknown): Generator<CatalogPiece> {
  if (!isObject(document)) {
    yield { kind: 'document', value: document };
    return;
  }
  for (const [key, value] of Object.entries(document)) {
    if (key !== 'partners' || !Array.isArray(value)) {
      yield { kind: 'field', key, value };
      continue;
    }
    yield { kind: 'partners' };
    for (const [index, partner] of value.entries()) {
      if (!isObject(partner)) {
        yield { kind: 'partner', index, value: partner };
        continue;
      }
      yield { kind: 'partnerStart', index };
      for (const [field, fieldValue] of Object.entries(partner)) {
        if (field !== 'products' || !Array.isArray(fieldValue)) {
          yield { kind: 'partnerField', index, key: field, value: fieldValue };
          continue;
        }
        yield { kind: 'products', index };
        for (const [productIndex, product] of fieldValue.entries()) yield { kind: 'product', partner: index, index: productIndex, value: product };
      }
      yield { kind: 'partnerEnd', index };
    }
  }
}

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

const ROOT_FIELDS = ['format', 'partners'];
const PARTNER_REQUIRED = ['id', 'name', 'products'];

/** A partner being read: what is known of it so far. */
interface OpenPartner {
  readonly path: string;
  readonly seen: Set<string>;
  id: string | undefined;
  name: string | undefined;
  apiKeys: ApiKeyRecord[] | undefined;
  header: PartnerHeader | null;
  /** Valid products met before the header was known; dropped once it cannot be. */
  waiting: Product[] | null;
  readonly skus: CompactStringMap;
  readonly videoRefs: CompactStringMap;
}

/**
 * Checks a catalog piece by piece, holding only what the rules need across pieces: the ids,
 * key ids and key hashes seen, and the current partner's SKUs and video refs.
 */
export class CatalogSourceReader {
  private readonly r = new Reader();
  private readonly rootSeen = new Set<string>();
  private readonly partnerIds = new Map<string, string>();
  private readonly keyIds = new Map<string, string>();
  private readonly keyHashes = new Map<string, string>();
  private open: OpenPartner | null = null;
  private documentRefused = false;

  /** Every problem found so far, each naming its JSON path. */
  get problems(): readonly string[] {
    return this.r.problems;
  }

  read(piece: CatalogPiece): CatalogUnit[] {
    const r = this.r;
    switch (piece.kind) {
      case 'document':
        this.documentRefused = true;
        r.fail('', 'must be an object');
        return [];
      case 'problem':
        r.fail(piece.path, piece.message);
        return [];
      case 'unreadable':
        this.documentRefused = true;
        r.fail(piece.path, piece.message);
        return [];
      case 'field':
        this.rootSeen.add(piece.key);
        if (!ROOT_FIELDS.includes(piece.key)) r.fail(piece.key, 'is not a known field');
        else if (piece.key === 'format' && piece.value !== CATALOG_FORMAT) r.fail('format', `must be ${JSON.stringify(CATALOG_FORMAT)}`);
        else if (piece.key === 'partners') r.array('partners', piece.value);
        return [];
      case 'partners':
        this.rootSeen.add('partners');
        return [];
      case 'partner':
        r.object(`partners[${piece.index}]`, piece.value, PARTNER_REQUIRED);
        return [];
      case 'partnerStart':
        this.open = {
          path: `partners[${piece.index}]`, seen: new Set(), id: undefined, name: undefined, apiKeys: undefined,
          header: null, waiting: [], skus: new CompactStringMap(), videoRefs: new CompactStringMap(),
        };
        return [];
      case 'partnerField':
        return this.partnerField(this.current(), piece.key, piece.value);
      case 'products':
        this.current().seen.add('products');
        return [];
      case 'product':
        return this.product(this.current(), piece.index, piece.value);
      case 'partnerEnd':
        return this.partnerEnd(this.current());
    }
  }

  /** Ends the document: the problems of the whole of it, none if it may be loaded. */
  finish(): readonly string[] {
    if (!this.documentRefused) {
      for (const key of ROOT_FIELDS) if (!this.rootSeen.has(key)) this.r.fail(key, 'is required');
    }
    return this.r.problems;
  }

  private current(): OpenPartner {
    if (this.open === null) throw new Error('a partner piece came outside a partner');
    return this.open;
  }

  private partnerField(partner: OpenPartner, key: string, value: unknown): CatalogUnit[] {
    const r = this.r;
    const at = `${partner.path}.${key}`;
    partner.seen.add(key);
    switch (key) {
      case 'id':
      {
        const id = r.matching(at, value, PARTNER_ID_PATTERN, 'a slug of a-z, 0-9 and -, starting with a letter or digit, at most 63 characters');
        const duplicate = id !== undefined && this.partnerIds.has(id);
        r.unique(this.partnerIds, at, id, 'partner id');
        partner.id = duplicate ? undefined : id;
        break;
      }
      case 'name':
        partner.name = r.nonEmptyString(at, value);
        break;
      case 'api_keys':
        partner.apiKeys = this.apiKeys(partner.path, value);
        break;
      case 'products':
        r.array(at, value);
        break;
      default:
        r.fail(at, 'is not a known field');
    }
    return this.headerIfKnown(partner);
  }

  /** Hands the partner on once its id and name are both valid, with the products that waited for them. */
  private headerIfKnown(partner: OpenPartner): CatalogUnit[] {
    if (partner.header !== null || partner.waiting === null) return [];
    if ((partner.seen.has('id') && partner.id === undefined) || (partner.seen.has('name') && partner.name === undefined)) {
      partner.waiting = null;
      return [];
    }
    if (partner.id === undefined || partner.name === undefined) return [];
    const header = { id: partner.id, name: partner.name };
    partner.header = header;
    const units: CatalogUnit[] = [{ kind: 'partner', partner: header }];
    for (const product of partner.waiting) units.push({ kind: 'product', partner: header, product });
    partner.waiting = [];
    return units;
  }

  private apiKeys(path: string, value: unknown): ApiKeyRecord[] | undefined {
    const keys = (this.r.optionalArray(`${path}.api_keys`, value) ?? []).map((k, i) => {
      const keyPath = `${path}.api_keys[${i}]`;
      const key = readApiKey(this.r, keyPath, k);
      this.r.unique(this.keyIds, `${keyPath}.id`, key?.id, 'API key id');
      this.r.unique(this.keyHashes, `${keyPath}.sha256`, key?.sha256, 'API key hash');
      return key;
    });
    return keys.every((k) => k !== undefined) ? keys : undefined;
  }

  private product(partner: OpenPartner, index: number, value: unknown): CatalogUnit[] {
    const path = `${partner.path}.products[${index}]`;
    const refs: VideoRefs = {
      seen: partner.videoRefs,
      product: index,
      pathOf: (place) => `${partner.path}.products[${Math.floor(place / VIDEO_SLOTS)}].videos[${place % VIDEO_SLOTS}].ref`,
    };
    const product = readProduct(this.r, path, value, refs);
    this.r.uniqueAt(partner.skus, `${path}.sku`, product?.sku, 'sku', index, (place) => `${partner.path}.products[${place}].sku`);
    if (product === undefined) return [];
    const bytes = answerBytesOverBound(product, partner.name ?? '');
    if (bytes !== null) {
      this.r.fail(path, `would be answered with ${bytes.toLocaleString('en-US')} bytes of JSON; at most ${MAX_ANSWER_BYTES.toLocaleString('en-US')} are allowed (shorten its transcripts, or give fewer PDP entries its video)`);
      return [];
    }
    if (partner.header !== null) return [{ kind: 'product', partner: partner.header, product }];
    partner.waiting?.push(product);
    return [];
  }

  private partnerEnd(partner: OpenPartner): CatalogUnit[] {
    this.open = null;
    for (const key of PARTNER_REQUIRED) if (!partner.seen.has(key)) this.r.fail(`${partner.path}.${key}`, 'is required');
    if (partner.header === null) return [];
    const apiKeys = partner.seen.has('api_keys') ? partner.apiKeys : [];
    if (apiKeys === undefined) return [];
    return [{ kind: 'partnerEnd', partner: { ...partner.header, apiKeys }, listed: { skus: partner.skus, videoRefs: partner.videoRefs } }];
  }
}

type JsonObject = Record<string, unknown>;

/** A video's place in a partner is numbered `product index × VIDEO_SLOTS + video index`. */
const VIDEO_SLOTS = 2 ** 20;

/** The video refs seen in a partner, and how a video's place is kept and read back. */
interface VideoRefs {
  readonly seen: CompactStringMap;
  readonly product: number;
  readonly pathOf: (place: number) => string;
}

class Reader {
  readonly problems: string[] = [];
  private readonly failed = new Set<string>();

  /** Records a problem; one per path, so a missing field is not also reported as of the wrong type. */
  fail(path: string, message: string): undefined {
    if (this.failed.has(path)) return undefined;
    this.failed.add(path);
    this.problems.push(`${path === '' ? '$' : path}: ${message}`);
    return undefined;
  }

  /** An object with exactly the allowed keys; `required` ones must be present. */
  object(path: string, value: unknown, required: readonly string[], optional: readonly string[] = []): JsonObject | undefined {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return this.fail(path, 'must be an object');
    const record = value as JsonObject;
    const at = (key: string): string => (path === '' ? key : `${path}.${key}`);
    for (const key of required) if (!Object.hasOwn(record, key)) this.fail(at(key), 'is required');
    for (const key of Object.keys(record)) {
      if (!required.includes(key) && !optional.includes(key)) this.fail(at(key), 'is not a known field');
    }
    return record;
  }

  array(path: string, value: unknown): unknown[] | undefined {
    return Array.isArray(value) ? value : this.fail(path, 'must be an array');
  }

  optionalArray(path: string, value: unknown): unknown[] | undefined {
    return value === undefined ? [] : this.array(path, value);
  }

  string(path: string, value: unknown): string | undefined {
    return typeof value === 'string' ? value : this.fail(path, 'must be a string');
  }

  nonEmptyString(path: string, value: unknown): string | undefined {
    const text = this.string(path, value);
    if (text !== undefined && text.trim() === '') return this.fail(path, 'must not be empty');
    return text;
  }

  /** Nullable fields may also be left out, which reads as null. */
  nullableString(path: string, value: unknown): string | null | undefined {
    return value === null || value === undefined ? null : this.string(path, value);
  }

  boolean(path: string, value: unknown): boolean | undefined {
    return typeof value === 'boolean' ? value : this.fail(path, 'must be true or false');
  }

  matching(path: string, value: unknown, pattern: RegExp, rule: string): string | undefined {
    const text = this.string(path, value);
    if (text !== undefined && !pattern.test(text)) return this.fail(path, `must be ${rule}; got ${JSON.stringify(text)}`);
    return text;
  }

  url(path: string, value: unknown): string | undefined {
    const text = this.string(path, value);
    if (text === undefined) return undefined;
    if (!isHttpUrl(text)) return this.fail(path, `must be an absolute http(s) URL; got ${JSON.stringify(text)}`);
    return text;
  }

  nullableUrl(path: string, value: unknown): string | null | undefined {
    return value === null || value === undefined ? null : this.url(path, value);
  }

  nullableUploadDate(path: string, value: unknown): string | null | undefined {
    if (value === null || value === undefined) return null;
    const text = this.string(path, value);
    if (text === undefined) return undefined;
    switch (uploadDateProblem(text)) {
      case 'format':
        return this.fail(path, `must be an ISO 8601 date such as "2026-03-14", or a date-time with seconds and an offset such as "2026-03-14T09:00:00Z" or "2026-03-14T09:00:00+01:00"; got ${JSON.stringify(text)}`);
      case 'calendar':
        return this.fail(path, `must name a real day and time; got ${JSON.stringify(text)}`);
      case null:
        return text;
    }
  }

  stringList(path: string, value: unknown): string[] | undefined {
    const items = this.array(path, value);
    if (items === undefined) return undefined;
    const strings = items.map((item, i) => this.string(`${path}[${i}]`, item));
    return strings.every((s) => s !== undefined) ? (strings) : undefined;
  }

  /** Reports a value seen before under the same scope, naming where it was first seen. */
  unique(seen: Map<string, string>, path: string, key: string | undefined, what: string): void {
    if (key === undefined) return;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, path);
    else this.fail(path, `duplicate ${what} ${JSON.stringify(key)}, first at ${first}`);
  }

  /**
   * The same for values kept for a whole partner, which may have millions of them: where each was
   * first seen is kept as a number, which `pathOf` turns back into its path.
   */
  uniqueAt(seen: CompactStringMap, path: string, key: string | undefined, what: string, place: number, pathOf: (place: number) => string): void {
    if (key === undefined) return;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, place);
    else this.fail(path, `duplicate ${what} ${JSON.stringify(key)}, first at ${pathOf(first)}`);
  }
}

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol, host } = new URL(text);
  return (protocol === 'http:' || protocol === 'https:') && host !== '';
}

function readApiKey(r: Reader, path: string, value: unknown): ApiKeyRecord | undefined {
  const o = r.object(path, value, ['id', 'sha256'], ['revoked']);
  if (o === undefined) return undefined;
  const id = r.nonEmptyString(`${path}.id`, o.id);
  const sha256 = r.matching(`${path}.sha256`, o.sha256, SHA256_PATTERN, '64 lowercase hexadecimal characters');
  const revoked = o.revoked === undefined ? false : r.boolean(`${path}.revoked`, o.revoked);
  if (id === undefined || sha256 === undefined || revoked === undefined) return undefined;
  return { id, sha256, revoked };
}

const PRODUCT_FIELDS = [
  'sku', 'status', 'title', 'short_description', 'image', 'what_text', 'who_text', 'why_text', 'brand',
] as const;

function readProduct(r: Reader, path: string, value: unknown, videoRefs: VideoRefs): Product | undefined {
  const o = r.object(path, value, PRODUCT_FIELDS, ['description', 'properties', 'videos', 'pdp_urls']);
  if (o === undefined) return undefined;
  const sku = r.string(`${path}.sku`, o.sku);
  if (sku !== undefined && !isValidSku(sku)) {
    r.fail(`${path}.sku`, `must be 1 to 50 of letters, digits, "-", "_", "."; got ${JSON.stringify(sku)}`);
  }
  const status = o.status === 'active' || o.status === 'inactive' ? o.status : r.fail(`${path}.status`, 'must be "active" or "inactive"');
  const title = r.nonEmptyString(`${path}.title`, o.title);
  const description = r.nullableString(`${path}.description`, o.description);
  const shortDescription = r.string(`${path}.short_description`, o.short_description);
  const image = r.url(`${path}.image`, o.image);
  const whatText = r.string(`${path}.what_text`, o.what_text);
  const whoText = r.string(`${path}.who_text`, o.who_text);
  const whyText = r.string(`${path}.why_text`, o.why_text);
  const brand = r.string(`${path}.brand`, o.brand);
  const properties = (r.optionalArray(`${path}.properties`, o.properties) ?? []).map((p, i) => readProperty(r, `${path}.properties[${i}]`, p));
  const videoValues = r.optionalArray(`${path}.videos`, o.videos) ?? [];
  const videos = videoValues.map((v, i) => {
    const videoPath = `${path}.videos[${i}]`;
    const video = readVideo(r, videoPath, v);
    // Past VIDEO_SLOTS videos in one product (never seen in practice) a duplicate names the last slot.
    const place = videoRefs.product * VIDEO_SLOTS + Math.min(i, VIDEO_SLOTS - 1);
    r.uniqueAt(videoRefs.seen, `${videoPath}.ref`, video?.ref, 'video ref', place, videoRefs.pathOf);
    return video;
  });
  // A video refused for another field still has its ref, so entries naming it are not reported as dangling.
  const ownRefs = new Set(videoValues.map((v) => (typeof v === 'object' && v !== null && 'ref' in v ? v.ref : undefined)));
  const pageUrls = new Map<string, string>();
  const pdpUrls = (r.optionalArray(`${path}.pdp_urls`, o.pdp_urls) ?? []).map((e, i) => {
    const entryPath = `${path}.pdp_urls[${i}]`;
    const entry = readPdpEntry(r, entryPath, e);
    r.unique(pageUrls, `${entryPath}.pdp_url`, entry?.pdpUrl, 'pdp_url');
    if (entry?.videoRef != null && !ownRefs.has(entry.videoRef)) {
      r.fail(`${entryPath}.video_ref`, `names no video of this product: ${JSON.stringify(entry.videoRef)}`);
    }
    return entry;
  });
  const fields = [sku, status, title, description, shortDescription, image, whatText, whoText, whyText, brand];
  if (fields.some((f) => f === undefined)) return undefined;
  if (![...properties, ...videos, ...pdpUrls].every((x) => x !== undefined)) return undefined;
  return {
    sku: sku as string,
    status: status as Product['status'],
    title: title as string,
    description: description as string | null,
    shortDescription: shortDescription as string,
    image: image as string,
    whatText: whatText as string,
    whoText: whoText as string,
    whyText: whyText as string,
    brand: brand as string,
    properties: properties as ProductProperty[],
    videos: videos as Video[],
    pdpUrls: pdpUrls as PdpEntry[],
  };
}

function readProperty(r: Reader, path: string, value: unknown): ProductProperty | undefined {
  const o = r.object(path, value, ['name', 'value']);
  if (o === undefined) return undefined;
  const name = r.nonEmptyString(`${path}.name`, o.name);
  const text = r.string(`${path}.value`, o.value);
  return name === undefined || text === undefined ? undefined : { name, value: text };
}

const VIDEO_FIELDS = [
  'ref', 'published', 'aspect_ratio', 'length', 'language', 'family_friendly', 'genre', 'keywords', 'creator',
] as const;

function readVideo(r: Reader, path: string, value: unknown): Video | undefined {
  const o = r.object(path, value, VIDEO_FIELDS, ['name', 'description', 'transcript', 'thumbnail_url', 'upload_date']);
  if (o === undefined) return undefined;
  const ref = r.nonEmptyString(`${path}.ref`, o.ref);
  const published = r.boolean(`${path}.published`, o.published);
  const name = r.nullableString(`${path}.name`, o.name);
  const description = r.nullableString(`${path}.description`, o.description);
  const aspectRatio = r.matching(`${path}.aspect_ratio`, o.aspect_ratio, ASPECT_RATIO_PATTERN, '<width>x<height>, such as "16x9"');
  const length = typeof o.length === 'number' && Number.isFinite(o.length) && o.length >= 0
    ? o.length
    : r.fail(`${path}.length`, 'must be a non-negative number of seconds');
  const language = r.matching(`${path}.language`, o.language, LANGUAGE_PATTERN, 'a language code such as "en" or "en-US"');
  const familyFriendly = r.boolean(`${path}.family_friendly`, o.family_friendly);
  const genre = r.stringList(`${path}.genre`, o.genre);
  const keywords = r.stringList(`${path}.keywords`, o.keywords);
  const creator = readCreator(r, `${path}.creator`, o.creator);
  const transcript = r.nullableString(`${path}.transcript`, o.transcript);
  const thumbnailUrl = r.nullableUrl(`${path}.thumbnail_url`, o.thumbnail_url);
  const uploadDate = r.nullableUploadDate(`${path}.upload_date`, o.upload_date);
  const fields = [
    ref, published, name, description, aspectRatio, length, language, familyFriendly, genre, keywords, creator, transcript, thumbnailUrl, uploadDate,
  ];
  if (fields.some((f) => f === undefined)) return undefined;
  return {
    ref: ref as string,
    published: published as boolean,
    name: name as string | null,
    description: description as string | null,
    aspectRatio: aspectRatio as string,
    length: length as number,
    language: language as string,
    familyFriendly: familyFriendly as boolean,
    genre: genre as string[],
    keywords: keywords as string[],
    creator: creator as Creator,
    transcript: transcript as string | null,
    thumbnailUrl: thumbnailUrl as string | null,
    uploadDate: uploadDate as string | null,
  };
}

function readCreator(r: Reader, path: string, value: unknown): Creator | undefined {
  const o = r.object(path, value, ['name', 'job_title']);
  if (o === undefined) return undefined;
  const name = r.string(`${path}.name`, o.name);
  const jobTitle = r.string(`${path}.job_title`, o.job_title);
  return name === undefined || jobTitle === undefined ? undefined : { name, jobTitle };
}

function readPdpEntry(r: Reader, path: string, value: unknown): PdpEntry | undefined {
  const o = r.object(path, value, ['pdp_url'], ['retailer', 'video_ref', 'video_file_url']);
  if (o === undefined) return undefined;
  const pdpUrl = r.url(`${path}.pdp_url`, o.pdp_url);
  const retailer = r.nullableString(`${path}.retailer`, o.retailer);
  const videoRef = r.nullableString(`${path}.video_ref`, o.video_ref);
  const videoFileUrl = r.nullableUrl(`${path}.video_file_url`, o.video_file_url);
  if (pdpUrl === undefined || retailer === undefined || videoRef === undefined || videoFileUrl === undefined) return undefined;
  return { pdpUrl, retailer, videoRef, videoFileUrl };
}
