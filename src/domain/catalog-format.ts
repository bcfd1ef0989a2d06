import { Type, type Static, type TSchema } from 'typebox';

/*
 * The catalog file's format (`partner-catalog/v1`, docs/decisions.md, catalog files), declared once:
 * the reader checks each value against these declarations (schema-problems.ts), and its messages
 * come from them. A `description` is the phrase a problem reads (`must be <description>; got ...`);
 * `errorMessage` gives a keyword the wording its rule has always had. A `format` names a rule
 * written as code (catalog-format-rules.ts). Rules across values (duplicates, cross-references, the
 * answer's size) are the reader's own (catalog-source.ts).
 */

export const CATALOG_FORMAT = 'partner-catalog/v1';

/** A string with a character other than white space: what `trim() !== ''` keeps. */
const NonEmptyString = Type.String({ pattern: '\\S', errorMessage: { pattern: 'must not be empty' } });

/** A field that may be null or left out, which reads as null. */
const Nullable = <T extends TSchema>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

const HttpUrl = Type.String({ format: 'http-url', description: 'an absolute http(s) URL' });

export const ApiKeySchema = Type.Object({
  id: NonEmptyString,
  sha256: Type.String({ pattern: '^[0-9a-f]{64}$', description: '64 lowercase hexadecimal characters' }),
  mode: Type.Optional(Type.Enum(['live', 'test'])),
  revoked: Type.Optional(Type.Boolean()),
}, { additionalProperties: false });

export const PropertySchema = Type.Object({
  name: NonEmptyString,
  value: Type.String(),
}, { additionalProperties: false });

export const CreatorSchema = Type.Object({
  name: Type.String(),
  job_title: Type.String(),
}, { additionalProperties: false });

const SECONDS = 'must be a non-negative number of seconds';

export const VideoSchema = Type.Object({
  ref: NonEmptyString,
  published: Type.Boolean(),
  name: Nullable(Type.String()),
  description: Nullable(Type.String()),
  aspect_ratio: Type.String({ pattern: '^[1-9][0-9]*x[1-9][0-9]*$', description: '<width>x<height>, such as "16x9"' }),
  length: Type.Number({ minimum: 0, errorMessage: { type: SECONDS, minimum: SECONDS } }),
  language: Type.String({ pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$', description: 'a language code such as "en" or "en-US"' }),
  family_friendly: Type.Boolean(),
  genre: Type.Array(Type.String()),
  keywords: Type.Array(Type.String()),
  creator: CreatorSchema,
  transcript: Nullable(Type.String()),
  thumbnail_url: Nullable(HttpUrl),
  upload_date: Nullable(Type.String({
    format: 'upload-date',
    description: 'an ISO 8601 date such as "2026-03-14", or a date-time with seconds and an offset such as "2026-03-14T09:00:00Z" or "2026-03-14T09:00:00+01:00"',
  })),
}, { additionalProperties: false });

export const PdpEntrySchema = Type.Object({
  pdp_url: HttpUrl,
  retailer: Nullable(Type.String()),
  video_ref: Nullable(Type.String()),
  video_file_url: Nullable(HttpUrl),
}, { additionalProperties: false });

export const ProductSchema = Type.Object({
  sku: Type.String({ format: 'sku', description: '1 to 50 of letters, digits, "-", "_", "."' }),
  status: Type.Enum(['active', 'inactive']),
  title: NonEmptyString,
  description: Nullable(Type.String()),
  short_description: Type.String(),
  image: HttpUrl,
  what_text: Type.String(),
  who_text: Type.String(),
  why_text: Type.String(),
  brand: Type.String(),
  properties: Type.Optional(Type.Array(PropertySchema)),
  videos: Type.Optional(Type.Array(VideoSchema)),
  pdp_urls: Type.Optional(Type.Array(PdpEntrySchema)),
}, { additionalProperties: false });

/** The products a partner's test keys read instead of its live ones (docs/catalog-files.md, the sandbox). */
export const SandboxSchema = Type.Object({
  products: Type.Array(ProductSchema),
}, { additionalProperties: false });

export const PartnerSchema = Type.Object({
  id: Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'a slug of a-z, 0-9 and -, starting with a letter or digit, at most 63 characters' }),
  name: NonEmptyString,
  api_keys: Type.Optional(Type.Array(ApiKeySchema)),
  products: Type.Array(ProductSchema),
  sandbox: Type.Optional(SandboxSchema),
}, { additionalProperties: false });

export const CatalogDocumentSchema = Type.Object({
  format: Type.Literal(CATALOG_FORMAT),
  partners: Type.Array(PartnerSchema),
}, { additionalProperties: false });

export type ApiKeyEntry = Static<typeof ApiKeySchema>;
export type ProductEntry = Static<typeof ProductSchema>;
