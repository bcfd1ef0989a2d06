import { expect } from 'chai';
import fc from 'fast-check';
import { jsonLdScriptFor, type LookupResult, type PdpEntryView, type VideoObjectJsonLd } from '../../client/src/index.js';

const OPEN = '<script type="application/ld+json">';
const CLOSE = '</script>';

/** Text a hostile or careless catalog could hold: any code point, and the pieces that break pages. */
const text = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.array(fc.oneof(fc.constantFrom('</script>', '</SCRIPT ', '<!--', '-->', '<script>', ']]>', '&amp;', '\u2028', '\u2029', '"', '\\', '\ud800'), fc.string()), { maxLength: 6 }).map((parts) => parts.join('')),
);

const jsonLd: fc.Arbitrary<VideoObjectJsonLd> = fc.record({
  '@context': fc.constant('https://schema.org' as const),
  '@type': fc.constant('VideoObject' as const),
  '@id': text,
  name: text,
  description: text,
  transcript: text,
  inLanguage: text,
  isFamilyFriendly: fc.boolean(),
  contentUrl: text,
  embedUrl: text,
  genre: fc.array(text, { maxLength: 3 }),
  keywords: fc.array(text, { maxLength: 3 }),
  creator: fc.record({ '@type': fc.constant('Person' as const), name: text, jobTitle: text }),
  publisher: fc.record({ '@type': fc.constant('Organization' as const), name: text }),
  about: fc.record({
    '@type': fc.constant('Product' as const),
    '@id': text,
    brand: fc.record({ '@type': fc.constant('Brand' as const), name: text }),
    additionalProperty: fc.array(fc.record({ '@type': fc.constant('PropertyValue' as const), name: text, value: text }), { maxLength: 3 }),
  }),
  isPartOf: fc.record({ '@type': fc.constant('WebPage' as const), '@id': text, url: text }),
});

function resultWith(entries: PdpEntryView[]): LookupResult {
  return {
    sku: 'TENT-2P',
    status: 'active',
    product: { id: 1, title: 't', description: null, short_description: 's', image: 'https://img.example/t.jpg', what_text: 'w', who_text: 'w', why_text: 'w', videos: [], pdp_urls: entries },
  };
}

const entry = (id: number, pdpUrl: string, ld: VideoObjectJsonLd | null): PdpEntryView => ({ id, pdp_url: pdpUrl, video_file_url: null, retailer: null, json_ld: ld });

describe('client: jsonLdScriptFor', function () {
  it('whatever the JSON-LD holds, writes one script element that no value can end, parsing back to exactly the json_ld', function () {
    fc.assert(
      fc.property(jsonLd, jsonLd, text, (mine, other, otherUrl) => {
        const pageUrl = 'https://shop.example/p/123';
        fc.pre(otherUrl !== pageUrl);
        const html = jsonLdScriptFor(resultWith([entry(1, otherUrl, other), entry(2, pageUrl, mine)]), pageUrl);
        expect(html.startsWith(OPEN) && html.endsWith(CLOSE)).to.equal(true);
        const inner = html.slice(OPEN.length, -CLOSE.length);
        // A case-insensitive search, not toLowerCase(): lowercasing can change the length (U+0130 becomes two code units).
        expect(html.search(/<\/script/i)).to.equal(html.length - CLOSE.length);
        expect(inner).to.not.match(/[<>&\u2028\u2029]/);
        expect(JSON.parse(inner)).to.deep.equal(mine);
      }),
      { numRuns: 500 },
    );
  });

  it('picks the entry whose pdp_url is exactly the page URL, and no other page\'s', function () {
    const ld = (id: string) => ({ '@id': id }) as VideoObjectJsonLd;
    const result = resultWith([entry(1, 'https://a.example/p', ld('a')), entry(2, 'https://b.example/p', ld('b'))]);
    expect(jsonLdScriptFor(result, 'https://b.example/p')).to.equal(`${OPEN}{"@id":"b"}${CLOSE}`);
    // Exact string match: no normalisation of case, trailing slash or query.
    for (const near of ['https://b.example/p/', 'https://B.example/p', 'https://b.example/p?x=1', 'http://b.example/p', '']) {
      expect(jsonLdScriptFor(result, near), near).to.equal('');
    }
  });

  it('writes nothing for an entry whose json_ld is not generated yet', function () {
    expect(jsonLdScriptFor(resultWith([entry(1, 'https://a.example/p', null)]), 'https://a.example/p')).to.equal('');
    expect(jsonLdScriptFor(resultWith([]), 'https://a.example/p')).to.equal('');
  });

  it('escapes the characters that could end the element or break a script parser as \\uXXXX', function () {
    const html = jsonLdScriptFor(resultWith([entry(1, 'p', { name: '</script><b>&\u2028\u2029' } as unknown as VideoObjectJsonLd)]), 'p');
    expect(html).to.equal(`${OPEN}{"name":"\\u003c/script\\u003e\\u003cb\\u003e\\u0026\\u2028\\u2029"}${CLOSE}`);
  });
});
