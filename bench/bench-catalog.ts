import { closeSync, openSync, writeSync } from 'node:fs';
import { hashApiKey } from '../src/domain/api-key.js';

export interface BenchCatalog {
  readonly file: string;
  readonly keys: readonly string[];
  readonly skus: readonly string[];
}

/** A deterministic key, so runs are comparable: `pcat_live_` and 40 base62 characters. */
export function benchKey(i: number): string {
  return `pcat_live_bench${String(i).padStart(35, '0')}`;
}

const transcript = 'Lay the footprint down first. Cross the two poles and clip the body to them, starting from the corners. '.repeat(5);

/** One product of about 6 KB (three PDP entries with JSON-LD), the `i`-th of a bench catalog. */
export function benchProduct(sku: string, i: number, title = `Bench product ${i}`): Record<string, unknown> {
  return {
    sku,
    status: 'active',
    title,
    description: 'A freestanding three-season tent for two, with two doors, two vestibules and a full-coverage rainfly.',
    short_description: 'Freestanding 2-person, 3-season backpacking tent.',
    image: `https://images.example.com/bench/${i}.jpg`,
    what_text: 'A lightweight, freestanding backpacking tent that sleeps two.',
    who_text: 'Backpackers and weekend campers who want a quick pitch and room for two.',
    why_text: 'At 2.1 kg with two doors, it saves weight without the cramped feel.',
    brand: 'Bench',
    properties: [{ name: 'Capacity', value: '2 people' }, { name: 'Color', value: 'Green' }, { name: 'Weight', value: '2.1 kg' }],
    videos: [{
      ref: `v-${i}`, published: true, name: 'Pitching the tent', description: 'Step by step.', aspect_ratio: '16x9',
      length: 92.5, language: 'en', family_friendly: true, genre: ['How-to'], keywords: ['tent', 'camping'],
      creator: { name: 'Dana Reyes', job_title: 'Gear Specialist' }, transcript,
    }],
    pdp_urls: ['a', 'b', 'c'].map((shop) => ({
      pdp_url: `https://shop-${shop}.example/p/${i}`, retailer: `Shop ${shop}`, video_ref: `v-${i}`, video_file_url: `https://cdn.example/v/${i}.mp4`,
    })),
  };
}

/**
 * One partner with `products` products (`benchProduct`) and `keys` keys, written a megabyte at a
 * time: a million products make a file of about 2 GB, more than one string can hold. `titleOf`
 * may give a product another title than its default (a re-import that changes one product).
 */
export function writeBenchCatalog(file: string, products: number, keys: number, titleOf: (i: number) => string | undefined = () => undefined): BenchCatalog {
  const keyList = Array.from({ length: keys }, (_, i) => benchKey(i));
  const skus = Array.from({ length: products }, (_, i) => `BENCH-${i}`);
  const partner = { id: 'bench', name: 'Bench Outdoor Co.', api_keys: keyList.map((key, i) => ({ id: `bench-${i}`, sha256: hashApiKey(key) })) };
  const fd = openSync(file, 'w');
  try {
    let pending = `{"format":"partner-catalog/v1","partners":[${JSON.stringify(partner).slice(0, -1)},"products":[`;
    skus.forEach((sku, i) => {
      pending += `${i === 0 ? '' : ','}${JSON.stringify(benchProduct(sku, i, titleOf(i)))}`;
      if (pending.length >= 1_000_000) {
        writeSync(fd, pending);
        pending = '';
      }
    });
    writeSync(fd, `${pending}]}]}`);
  } finally {
    closeSync(fd);
  }
  return { file, keys: keyList, skus };
}
