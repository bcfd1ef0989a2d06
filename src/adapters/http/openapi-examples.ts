/**
 * The demo catalog's `TENT-2P` as the API answers it; a test keeps this equal to the real answer.
 * Its first entry's video has a thumbnail and an upload date, its second's has not: both shapes show.
 */
export const demoTentLookupExample = {
  data: {
    sku: 'TENT-2P',
    status: 'active',
    product: {
      id: 1,
      title: 'Acme Ridgeline 2-Person Tent',
      description: 'A freestanding three-season tent for two, with two doors, two vestibules and a full-coverage rainfly. Pitches in under five minutes.',
      short_description: 'Freestanding 2-person, 3-season backpacking tent.',
      image: 'https://images.example.com/acme/tent-2p.jpg',
      what_text: 'A lightweight, freestanding backpacking tent that sleeps two.',
      who_text: 'Backpackers and weekend campers who want a quick pitch and room for two.',
      why_text: 'At 2.1 kg with two doors, it saves weight without the cramped feel.',
      videos: [
        {
          id: 1,
          name: 'Pitching the Ridgeline in five minutes',
          aspect_ratio: '16x9',
          length: 92.5,
        },
        {
          id: 2,
          name: 'Ridgeline in 30 seconds',
          aspect_ratio: '9x16',
          length: 30,
        },
      ],
      pdp_urls: [
        {
          id: 1,
          pdp_url: 'https://www.bigoutdoors.example/p/acme-ridgeline-2p',
          video_file_url: 'https://cdn.example.com/acme/tent-pitch.mp4',
          retailer: 'Big Outdoors',
          json_ld: {
            '@context': 'https://schema.org',
            '@type': 'VideoObject',
            '@id': 'https://www.bigoutdoors.example/p/acme-ridgeline-2p',
            name: 'Pitching the Ridgeline in five minutes',
            description: 'Step by step: footprint, poles, clips and rainfly.',
            thumbnailUrl: 'https://images.example.com/acme/tent-pitch-thumb.jpg',
            uploadDate: '2026-03-14',
            duration: 'PT1M33S',
            transcript: 'Lay the footprint down first. Cross the two poles and clip the body to them, starting from the corners. Throw the rainfly over, buckle each corner, and stake out the vestibules.',
            inLanguage: 'en',
            isFamilyFriendly: true,
            contentUrl: 'https://cdn.example.com/acme/tent-pitch.mp4',
            embedUrl: 'https://www.bigoutdoors.example/p/acme-ridgeline-2p',
            genre: [
              'How-to',
            ],
            keywords: [
              'tent',
              'camping',
              'how to pitch a tent',
            ],
            creator: {
              '@type': 'Person',
              name: 'Dana Reyes',
              jobTitle: 'Gear Specialist',
            },
            publisher: {
              '@type': 'Organization',
              name: 'Acme Outdoor Co.',
            },
            about: {
              '@type': 'Product',
              '@id': 'https://www.bigoutdoors.example/p/acme-ridgeline-2p',
              name: 'Acme Ridgeline 2-Person Tent',
              image: 'https://images.example.com/acme/tent-2p.jpg',
              brand: {
                '@type': 'Brand',
                name: 'Acme',
              },
              additionalProperty: [
                {
                  '@type': 'PropertyValue',
                  name: 'Capacity',
                  value: '2 people',
                },
                {
                  '@type': 'PropertyValue',
                  name: 'Season',
                  value: '3-season',
                },
                {
                  '@type': 'PropertyValue',
                  name: 'Color',
                  value: 'Green',
                },
                {
                  '@type': 'PropertyValue',
                  name: 'Color',
                  value: 'Grey',
                },
                {
                  '@type': 'PropertyValue',
                  name: 'Weight',
                  value: '2.1 kg',
                },
              ],
            },
            isPartOf: {
              '@type': 'WebPage',
              '@id': 'https://www.bigoutdoors.example/p/acme-ridgeline-2p',
              url: 'https://www.bigoutdoors.example/p/acme-ridgeline-2p',
            },
          },
        },
        {
          id: 2,
          pdp_url: 'https://shop.trailhead.example/products/TENT-2P',
          video_file_url: 'https://cdn.example.com/acme/tent-vertical.mp4',
          retailer: 'Trailhead',
          json_ld: {
            '@context': 'https://schema.org',
            '@type': 'VideoObject',
            '@id': 'https://shop.trailhead.example/products/TENT-2P',
            name: 'Ridgeline in 30 seconds',
            description: 'Freestanding 2-person, 3-season backpacking tent.',
            transcript: 'Two doors, two vestibules, five minutes to pitch. That\'s the Ridgeline.',
            inLanguage: 'en',
            isFamilyFriendly: true,
            contentUrl: 'https://cdn.example.com/acme/tent-vertical.mp4',
            embedUrl: 'https://shop.trailhead.example/products/TENT-2P',
            genre: [
              'Product overview',
            ],
            keywords: [
              'tent',
              'shorts',
            ],
            creator: {
              '@type': 'Person',
              name: 'Dana Reyes',
              jobTitle: 'Gear Specialist',
            },
            publisher: {
              '@type': 'Organization',
              name: 'Acme Outdoor Co.',
            },
            about: {
              '@type': 'Product',
              '@id': 'https://shop.trailhead.example/products/TENT-2P',
              brand: {
                '@type': 'Brand',
                name: 'Acme',
              },
              additionalProperty: [
                {
                  '@type': 'PropertyValue',
                  name: 'Capacity',
                  value: '2 people',
                },
                {
                  '@type': 'PropertyValue',
                  name: 'Season',
                  value: '3-season',
                },
                {
                  '@type': 'PropertyValue',
                  name: 'Color',
                  value: 'Green',
                },
                {
                  '@type': 'PropertyValue',
                  name: 'Color',
                  value: 'Grey',
                },
                {
                  '@type': 'PropertyValue',
                  name: 'Weight',
                  value: '2.1 kg',
                },
              ],
            },
            isPartOf: {
              '@type': 'WebPage',
              '@id': 'https://shop.trailhead.example/products/TENT-2P',
              url: 'https://shop.trailhead.example/products/TENT-2P',
            },
          },
        },
        {
          id: 3,
          pdp_url: 'https://acme.example/tents/ridgeline-2p',
          video_file_url: 'https://cdn.example.com/acme/tent-draft.mp4',
          retailer: null,
          json_ld: null,
        },
      ],
    },
  },
};
