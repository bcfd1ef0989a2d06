import type { PdpEntry, Product, Video } from './catalog.js';

/** The schema.org VideoObject embedded on one retailer product page (spec 2.5). */
export interface VideoObjectJsonLd {
  '@context': 'https://schema.org';
  '@type': 'VideoObject';
  '@id': string;
  name: string;
  description: string;
  transcript: string;
  inLanguage: string;
  isFamilyFriendly: boolean;
  contentUrl: string;
  embedUrl: string;
  genre: string[];
  keywords: string[];
  creator: { '@type': 'Person'; name: string; jobTitle: string };
  publisher: { '@type': 'Organization'; name: string };
  about: {
    '@type': 'Product';
    '@id': string;
    brand: { '@type': 'Brand'; name: string };
    additionalProperty: { '@type': 'PropertyValue'; name: string; value: string }[];
  };
  isPartOf: { '@type': 'WebPage'; '@id': string; url: string };
}

/**
 * The VideoObject of one PDP entry (decisions.md section 5), or null while it cannot be
 * generated: no video named, the video unpublished or without a transcript, or no file URL.
 */
export function generateJsonLd(
  entry: PdpEntry,
  product: Product,
  publisherName: string,
): VideoObjectJsonLd | null {
  const video = findEmbeddableVideo(product, entry.videoRef);
  if (video === undefined || !video.transcript || entry.videoFileUrl === null) return null;
  const pageUrl = entry.pdpUrl;
  return {
    '@context': 'https://schema.org',
    '@type': 'VideoObject',
    '@id': pageUrl,
    name: video.name ?? product.title,
    description: video.description ?? product.shortDescription,
    transcript: video.transcript,
    inLanguage: video.language,
    isFamilyFriendly: video.familyFriendly,
    contentUrl: entry.videoFileUrl,
    embedUrl: pageUrl,
    genre: [...video.genre],
    keywords: [...video.keywords],
    creator: { '@type': 'Person', name: video.creator.name, jobTitle: video.creator.jobTitle },
    publisher: { '@type': 'Organization', name: publisherName },
    about: {
      '@type': 'Product',
      '@id': pageUrl,
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

function findEmbeddableVideo(product: Product, ref: string | null): Video | undefined {
  if (ref === null) return undefined;
  return product.videos.find((v) => v.ref === ref && v.published);
}
