import type { ApiKeyRecord, Catalog, Partner, Product } from './catalog.js';
import { answerBytesOverBound, MAX_ANSWER_BYTES } from './answer-size.js';
import { apiKeyOf, productOf } from './catalog-entries.js';
import { ApiKeySchema, CatalogDocumentSchema, PartnerSchema, PdpEntrySchema, ProductSchema, SandboxSchema, VideoSchema, type ApiKeyEntry, type ProductEntry } from './catalog-format.js';
import { isSandboxErrorSku } from './sandbox.js';
import { CATALOG_FORMAT_RULES } from './catalog-format-rules.js';
import { CompactStringMap } from './compact-string-map.js';
import { compileFields, compileSchema, pathText, type ProblemSink } from './schema-problems.js';

/**
 * The longest key, string or number a catalog file may hold, in characters (UTF-16 code units):
 * ample for the longest transcript, and a reader never holds more of one.
 */
export const MAX_STRING_LENGTH = 1_000_000;

/**
 * The most products a partner's sandbox holds. A sandbox is test data, read as one value and held
 * until its partner ends; the bound keeps what an import holds and writes for it small.
 */
export const MAX_SANDBOX_PRODUCTS = 10_000;

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
      else partners.push({ ...unit.partner, products: products.get(unit.partner.id) ?? [], sandbox: unit.sandbox });
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
 * valid products, then the partner with its keys and its sandbox once it ends. A partner whose id
 * or name is refused hands on nothing; its products are still checked.
 */
export type CatalogUnit =
  | { readonly kind: 'partner'; readonly partner: PartnerHeader }
  | { readonly kind: 'product'; readonly partner: PartnerHeader; readonly product: Product }
  | {
    readonly kind: 'partnerEnd';
    readonly partner: PartnerHeader & { readonly apiKeys: readonly ApiKeyRecord[] };
    readonly listed: ListedIdentities;
    /** The sandbox's products, held whole (a sandbox is test data, read as one value); null when the partner gives none. */
    readonly sandbox: readonly Product[] | null;
  };

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

/*
 * The format's own rules come from its declaration (catalog-format.ts), compiled once. What a
 * schema cannot say is the reader's below: ids and keys unique across the file, SKUs and video
 * refs unique within a partner, PDP pages unique within a product, a `video_ref` naming a video
 * of its product, and a product's answer within the bound one row holds.
 */
const checkDocument = compileSchema(CatalogDocumentSchema, CATALOG_FORMAT_RULES);
const rootFields = compileFields(CatalogDocumentSchema, CATALOG_FORMAT_RULES);
const checkPartner = compileSchema(PartnerSchema, CATALOG_FORMAT_RULES);
const partnerFields = compileFields(PartnerSchema, CATALOG_FORMAT_RULES);
const checkProduct = compileSchema(ProductSchema, CATALOG_FORMAT_RULES);
const sandboxFields = compileFields(SandboxSchema, CATALOG_FORMAT_RULES);

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
  /** The sandbox's valid products once its field was read; null while none was. */
  sandbox: Product[] | null;
}

/**
 * Checks a catalog piece by piece, holding only what the rules need across pieces: the ids,
 * key ids and key hashes seen, and the current partner's SKUs and video refs.
 */
export class CatalogSourceReader {
  private readonly list = new ProblemList();
  /** Tells the format's problems, with no rule across values to apply. */
  private readonly plain: ProblemSink = { problem: (path, message) => this.list.fail(pathText(path), message) };
  private readonly rootSeen = new Set<string>();
  private readonly partnerIds = new Map<string, string>();
  private readonly keyIds = new Map<string, string>();
  private readonly keyHashes = new Map<string, string>();
  private open: OpenPartner | null = null;
  private documentRefused = false;

  /** Every problem found so far, each naming its JSON path. */
  get problems(): readonly string[] {
    return this.list.problems;
  }

  read(piece: CatalogPiece): CatalogUnit[] {
    switch (piece.kind) {
      case 'document':
        this.documentRefused = true;
        checkDocument(piece.value, '', this.plain);
        return [];
      case 'problem':
        this.list.fail(piece.path, piece.message);
        return [];
      case 'unreadable':
        this.documentRefused = true;
        this.list.fail(piece.path, piece.message);
        return [];
      case 'field':
        this.rootSeen.add(piece.key);
        rootFields.field(piece.key, piece.value, '', this.plain);
        return [];
      case 'partners':
        this.rootSeen.add('partners');
        return [];
      case 'partner':
        checkPartner(piece.value, `partners[${piece.index}]`, this.plain);
        return [];
      case 'partnerStart':
        this.open = {
          path: `partners[${piece.index}]`, seen: new Set(), id: undefined, name: undefined, apiKeys: undefined,
          header: null, waiting: [], skus: new CompactStringMap(), videoRefs: new CompactStringMap(), sandbox: null,
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
    if (!this.documentRefused) rootFields.end(this.rootSeen, '', this.plain);
    return this.list.problems;
  }

  private current(): OpenPartner {
    if (this.open === null) throw new Error('a partner piece came outside a partner');
    return this.open;
  }

  private partnerField(partner: OpenPartner, key: string, value: unknown): CatalogUnit[] {
    partner.seen.add(key);
    if (key === 'sandbox') {
      this.sandbox(partner, value);
      return [];
    }
    const sink = key === 'api_keys' ? this.keyRules() : this.plain;
    const readable = partnerFields.field(key, value, partner.path, sink);
    if (key === 'id') {
      const id = readable ? value as string : undefined;
      const duplicate = id !== undefined && this.partnerIds.has(id);
      this.list.unique(this.partnerIds, `${partner.path}.id`, id, 'partner id');
      partner.id = duplicate ? undefined : id;
    } else if (key === 'name') partner.name = readable ? value as string : undefined;
    else if (key === 'api_keys') partner.apiKeys = readable ? (value as ApiKeyEntry[]).map(apiKeyOf) : undefined;
    return this.headerIfKnown(partner);
  }

  /** Key ids and key hashes are each unique across the file; a key refused for a field of its own is not counted. */
  private keyRules(): ProblemSink {
    return {
      problem: this.plain.problem,
      checked: (schema, value, path) => {
        if (schema !== ApiKeySchema) return;
        const at = pathText(path);
        const key = value as ApiKeyEntry;
        this.list.unique(this.keyIds, `${at}.id`, key.id, 'API key id');
        this.list.unique(this.keyHashes, `${at}.sha256`, key.sha256, 'API key hash');
      },
    };
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

  private product(partner: OpenPartner, index: number, value: unknown): CatalogUnit[] {
    const path = `${partner.path}.products[${index}]`;
    const readable = checkProduct(value, path, this.productRules(partner, index, value));
    const entry = readable ? value as ProductEntry : undefined;
    this.list.uniqueAt(partner.skus, `${path}.sku`, entry?.sku, 'sku', index, (place) => `${partner.path}.products[${place}].sku`);
    if (entry === undefined) return [];
    const product = productOf(entry);
    const bytes = answerBytesOverBound(product, partner.name ?? '');
    if (bytes !== null) {
      this.list.fail(path, `would be answered with ${bytes.toLocaleString('en-US')} bytes of JSON; at most ${MAX_ANSWER_BYTES.toLocaleString('en-US')} are allowed (shorten its transcripts, or give fewer PDP entries its video)`);
      return [];
    }
    if (partner.header !== null) return [{ kind: 'product', partner: partner.header, product }];
    partner.waiting?.push(product);
    return [];
  }

  /**
   * The rules across a product's values, each applied once a video or PDP entry met the format, as
   * its turn comes: video refs unique within the partner, PDP pages unique within the product, and
   * a `video_ref` naming a video of the product.
   */
  private productRules(partner: OpenPartner, product: number, value: unknown): ProblemSink {
    const pages = new Map<string, string>();
    let ownRefs: Set<unknown> | undefined;
    return {
      problem: this.plain.problem,
      checked: (schema, entry, path) => {
        if (schema === VideoSchema) {
          // A video's path ends in its index among the product's videos.
          const video = typeof path === 'string' ? 0 : Number(path.key);
          // Past VIDEO_SLOTS videos in one product (never seen in practice) a duplicate names the last slot.
          const place = product * VIDEO_SLOTS + Math.min(video, VIDEO_SLOTS - 1);
          this.list.uniqueAt(partner.videoRefs, `${pathText(path)}.ref`, entry.ref as string, 'video ref', place, (first) => `${partner.path}.products[${Math.floor(first / VIDEO_SLOTS)}].videos[${first % VIDEO_SLOTS}].ref`);
        } else if (schema === PdpEntrySchema) {
          const at = pathText(path);
          this.list.unique(pages, `${at}.pdp_url`, entry.pdp_url as string, 'pdp_url');
          const ref = entry.video_ref;
          if (ref != null && !(ownRefs ??= refsOf(value)).has(ref)) this.list.fail(`${at}.video_ref`, `names no video of this product: ${JSON.stringify(ref)}`);
        }
      },
    };
  }

  /**
   * A sandbox's products meet every rule a partner's do, among themselves (SKUs and video refs are
   * the sandbox's own), and none takes a SKU kept for an error a test key asks for.
   */
  private sandbox(partner: OpenPartner, value: unknown): void {
    if (!isObject(value) || !Array.isArray(value.products)) {
      // Not a sandbox's shape: its declaration tells what is wrong.
      partnerFields.field('sandbox', value, partner.path, this.plain);
      return;
    }
    const sandbox: OpenPartner = {
      path: `${partner.path}.sandbox`, seen: new Set(Object.keys(value)), id: partner.id, name: partner.name, apiKeys: [],
      header: null, waiting: [], skus: new CompactStringMap(), videoRefs: new CompactStringMap(), sandbox: null,
    };
    for (const [key, field] of Object.entries(value)) if (key !== 'products') sandboxFields.field(key, field, sandbox.path, this.plain);
    if (value.products.length > MAX_SANDBOX_PRODUCTS) {
      this.list.fail(`${sandbox.path}.products`, `holds ${value.products.length.toLocaleString('en-US')} products; a sandbox holds at most ${MAX_SANDBOX_PRODUCTS.toLocaleString('en-US')}: it is test data, read whole`);
      return;
    }
    for (const [index, product] of value.products.entries()) {
      const sku = isObject(product) ? product.sku : undefined;
      if (typeof sku === 'string' && isSandboxErrorSku(sku)) {
        this.list.fail(`${sandbox.path}.products[${index}].sku`, `${JSON.stringify(sku)} is kept for the error it answers a test key; give the product another SKU`);
      }
      this.product(sandbox, index, product);
    }
    partner.sandbox = sandbox.waiting;
  }

  private partnerEnd(partner: OpenPartner): CatalogUnit[] {
    this.open = null;
    partnerFields.end(partner.seen, partner.path, this.plain);
    if (partner.header === null) return [];
    const apiKeys = partner.seen.has('api_keys') ? partner.apiKeys : [];
    if (apiKeys === undefined) return [];
    return [{ kind: 'partnerEnd', partner: { ...partner.header, apiKeys }, listed: { skus: partner.skus, videoRefs: partner.videoRefs }, sandbox: partner.sandbox }];
  }
}

type JsonObject = Record<string, unknown>;

/** A video's place in a partner is numbered `product index × VIDEO_SLOTS + video index`. */
const VIDEO_SLOTS = 2 ** 20;

/** The refs of every video a product lists: a video refused for another field still has its ref, so entries naming it are not reported as dangling. */
function refsOf(product: unknown): Set<unknown> {
  const videos = (product as { videos?: unknown }).videos;
  return new Set(Array.isArray(videos) ? videos.map((v: unknown) => (typeof v === 'object' && v !== null && 'ref' in v ? v.ref : undefined)) : []);
}

/** The problems found, one per path, so a missing field is not also reported as of the wrong type. */
class ProblemList {
  readonly problems: string[] = [];
  private readonly failed = new Set<string>();

  fail(path: string, message: string): void {
    if (this.failed.has(path)) return;
    this.failed.add(path);
    this.problems.push(`${path === '' ? '$' : path}: ${message}`);
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
