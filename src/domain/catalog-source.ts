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
import { isValidSku } from './sku.js';
import { uploadDateProblem } from './upload-date.js';

export const CATALOG_FORMAT = 'partner-catalog/v1';

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
  const reader = new Reader();
  const catalog = readCatalog(reader, document);
  if (reader.problems.length > 0 || catalog === undefined) throw new CatalogSourceError(reader.problems);
  return catalog;
}

/** Parses JSON text first, so a syntax error is reported the same way as a rule broken. */
export function parseCatalogSourceText(text: string): Catalog {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new CatalogSourceError([`$: not valid JSON (${(error as Error).message})`]);
  }
  return parseCatalogSource(document);
}

type JsonObject = Record<string, unknown>;

class Reader {
  readonly problems: string[] = [];

  fail(path: string, message: string): undefined {
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
}

function isHttpUrl(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol, host } = new URL(text);
  return (protocol === 'http:' || protocol === 'https:') && host !== '';
}

function readCatalog(r: Reader, document: unknown): Catalog | undefined {
  const root = r.object('', document, ['format', 'partners']);
  if (root === undefined) return undefined;
  if (Object.hasOwn(root, 'format') && root.format !== CATALOG_FORMAT) {
    r.fail('format', `must be ${JSON.stringify(CATALOG_FORMAT)}`);
  }
  const partners = Object.hasOwn(root, 'partners') ? r.array('partners', root.partners) : undefined;
  if (partners === undefined) return undefined;
  const partnerIds = new Map<string, string>();
  const keyIds = new Map<string, string>();
  const keyHashes = new Map<string, string>();
  const read = partners.map((value, i) => {
    const path = `partners[${i}]`;
    const partner = readPartner(r, path, value, keyIds, keyHashes);
    r.unique(partnerIds, `${path}.id`, partner?.id, 'partner id');
    return partner;
  });
  return read.every((p) => p !== undefined) ? { partners: read } : undefined;
}

function readPartner(
  r: Reader,
  path: string,
  value: unknown,
  keyIds: Map<string, string>,
  keyHashes: Map<string, string>,
): Partner | undefined {
  const o = r.object(path, value, ['id', 'name', 'products'], ['api_keys']);
  if (o === undefined) return undefined;
  const id = r.matching(`${path}.id`, o.id, PARTNER_ID_PATTERN, 'a slug of a-z, 0-9 and -, starting with a letter or digit, at most 63 characters');
  const name = r.nonEmptyString(`${path}.name`, o.name);
  const apiKeys = (r.optionalArray(`${path}.api_keys`, o.api_keys) ?? []).map((k, i) => {
    const keyPath = `${path}.api_keys[${i}]`;
    const key = readApiKey(r, keyPath, k);
    r.unique(keyIds, `${keyPath}.id`, key?.id, 'API key id');
    r.unique(keyHashes, `${keyPath}.sha256`, key?.sha256, 'API key hash');
    return key;
  });
  const skus = new Map<string, string>();
  const videoRefs = new Map<string, string>();
  const products = (r.array(`${path}.products`, o.products) ?? []).map((p, i) => {
    const productPath = `${path}.products[${i}]`;
    const product = readProduct(r, productPath, p, videoRefs);
    r.unique(skus, `${productPath}.sku`, product?.sku, 'sku');
    return product;
  });
  if (id === undefined || name === undefined) return undefined;
  if (!apiKeys.every((k) => k !== undefined) || !products.every((p) => p !== undefined)) return undefined;
  return { id, name, apiKeys: apiKeys, products: products };
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

function readProduct(r: Reader, path: string, value: unknown, videoRefs: Map<string, string>): Product | undefined {
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
    r.unique(videoRefs, `${videoPath}.ref`, video?.ref, 'video ref');
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
