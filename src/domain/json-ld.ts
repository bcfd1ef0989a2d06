import { Type, type Static } from 'typebox';
import type { PdpEntry, Product, Video } from './catalog.js';
import { isoDuration } from './iso-duration.js';

/**
 * The schema.org VideoObject embedded on one retailer product page (docs/api.md, the VideoObject): its
 * type and the OpenAPI document's `VideoObject` both come from this one declaration. The optional keys
 * are there only when the catalog gives the video both a thumbnail and an upload date, which
 * search engines require before they read a VideoObject at all.
 */
export const VideoObjectJsonLdSchema = Type.Object({
  '@context': Type.Literal('https://schema.org'),
  '@type': Type.Literal('VideoObject'),
  '@id': Type.String({ format: 'uri' }),
  name: Type.String(),
  description: Type.String(),
  thumbnailUrl: Type.Optional(Type.String({
    format: 'uri',
    description: 'Present, with `uploadDate`, `duration`, `about.name` and `about.image`, only when the catalog gives the video a thumbnail and an upload date, which search engines require.',
  })),
  uploadDate: Type.Optional(Type.String({ description: 'ISO 8601 date, or date-time with an offset, as the catalog gives it.' })),
  duration: Type.Optional(Type.String({
    pattern: '^PT([0-9]+H)?([0-9]+M)?([0-9]+S)?$',
    minLength: 4,
    description: 'The video\'s length, ISO 8601, in whole seconds, such as `PT1M33S`.',
  })),
  transcript: Type.String(),
  inLanguage: Type.String(),
  isFamilyFriendly: Type.Boolean(),
  contentUrl: Type.String({ format: 'uri' }),
  embedUrl: Type.String({ format: 'uri' }),
  genre: Type.Array(Type.String()),
  keywords: Type.Array(Type.String()),
  creator: Type.Object({ '@type': Type.Literal('Person'), name: Type.String(), jobTitle: Type.String() }, { additionalProperties: false }),
  publisher: Type.Object({ '@type': Type.Literal('Organization'), name: Type.String() }, { additionalProperties: false }),
  about: Type.Object({
    '@type': Type.Literal('Product'),
    '@id': Type.String({ format: 'uri' }),
    name: Type.Optional(Type.String({ description: 'The product\'s title; present with `thumbnailUrl`.' })),
    image: Type.Optional(Type.String({ format: 'uri', description: 'The product\'s image; present with `thumbnailUrl`.' })),
    brand: Type.Object({ '@type': Type.Literal('Brand'), name: Type.String() }, { additionalProperties: false }),
    additionalProperty: Type.Array(
      Type.Object({ '@type': Type.Literal('PropertyValue'), name: Type.String(), value: Type.String() }, { additionalProperties: false }),
      { description: 'In the catalog\'s order; names may repeat.' },
    ),
  }, { additionalProperties: false }),
  isPartOf: Type.Object({ '@type': Type.Literal('WebPage'), '@id': Type.String({ format: 'uri' }), url: Type.String({ format: 'uri' }) }, { additionalProperties: false }),
}, {
  additionalProperties: false,
  description: 'A schema.org VideoObject anchored to the entry\'s `pdp_url` (`@id`, `embedUrl`, `about.@id`, `isPartOf.@id`, `isPartOf.url`).',
});

export type VideoObjectJsonLd = Static<typeof VideoObjectJsonLdSchema>;

/**
 * Why a PDP entry has no JSON-LD, in the order a content team fixes them: name a video, publish
 * it, give it a transcript, give the entry the video's file URL. Only the first one missing is
 * reported, as each later one is judged against the video the earlier ones settle.
 */
export type NoJsonLdReason = 'no_video_ref' | 'video_unpublished' | 'no_transcript' | 'no_video_file_url';

/** An entry's JSON-LD, or the reason it has none: exactly one of the two is null. */
export type JsonLdOutcome =
  | { readonly jsonLd: VideoObjectJsonLd; readonly reason: null }
  | { readonly jsonLd: null; readonly reason: NoJsonLdReason };

/**
 * The VideoObject of one PDP entry, or why there is none. It exists when, and only when, the
 * entry names a published video of the product with a non-empty transcript, and has a file URL.
 */
export function jsonLdOutcome(entry: PdpEntry, product: Product, publisherName: string): JsonLdOutcome {
  if (entry.videoRef === null) return { jsonLd: null, reason: 'no_video_ref' };
  // A validated catalog's video_ref always names a video of its product; any other is as unusable as an unpublished one.
  const video = product.videos.find((v) => v.ref === entry.videoRef && v.published);
  if (video === undefined) return { jsonLd: null, reason: 'video_unpublished' };
  if (!video.transcript) return { jsonLd: null, reason: 'no_transcript' };
  if (entry.videoFileUrl === null) return { jsonLd: null, reason: 'no_video_file_url' };
  return { jsonLd: videoObject(entry.pdpUrl, entry.videoFileUrl, video, video.transcript, product, publisherName), reason: null };
}

/** The VideoObject of one PDP entry, or null while it cannot be generated (see `jsonLdOutcome`). */
export function generateJsonLd(entry: PdpEntry, product: Product, publisherName: string): VideoObjectJsonLd | null {
  return jsonLdOutcome(entry, product, publisherName).jsonLd;
}

/**
 * Keys are written in one fixed order: answers are served as bytes with ETags, so an object
 * without the optional keys must stay byte for byte what it was before they existed.
 */
function videoObject(
  pageUrl: string,
  fileUrl: string,
  video: Video,
  transcript: string,
  product: Product,
  publisherName: string,
): VideoObjectJsonLd {
  const searchable = video.thumbnailUrl !== null && video.uploadDate !== null
    ? { thumbnailUrl: video.thumbnailUrl, uploadDate: video.uploadDate }
    : null;
  return {
    '@context': 'https://schema.org',
    '@type': 'VideoObject',
    '@id': pageUrl,
    name: video.name ?? product.title,
    description: video.description ?? product.shortDescription,
    ...(searchable === null ? {} : { ...searchable, duration: isoDuration(video.length) }),
    transcript,
    inLanguage: video.language,
    isFamilyFriendly: video.familyFriendly,
    contentUrl: fileUrl,
    embedUrl: pageUrl,
    genre: [...video.genre],
    keywords: [...video.keywords],
    creator: { '@type': 'Person', name: video.creator.name, jobTitle: video.creator.jobTitle },
    publisher: { '@type': 'Organization', name: publisherName },
    about: {
      '@type': 'Product',
      '@id': pageUrl,
      ...(searchable === null ? {} : { name: product.title, image: product.image }),
      brand: { '@type': 'Brand', name: product.brand },
      additionalProperty: product.properties.map((p) => ({
        '@type': 'PropertyValue',
        name: p.name,
        value: p.value,
      })),
    },
    isPartOf: { '@type': 'WebPage', '@id': pageUrl, url: pageUrl },
  };
}
