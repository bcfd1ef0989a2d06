import { expect } from 'chai';
import { videoObjectFindings, type StructuredDataFinding } from '../../src/domain/structured-data.js';

const finding = (path: string, message: string, fields: string[] = []): StructuredDataFinding => ({ path, message, fields });

describe('Google\'s findings as they bear on a VideoObject', function () {
  it('keeps the findings on the VideoObject as they are, and makes those on its `about` Product notes, whatever their severity', function () {
    const onVideo = finding('', 'Required attribute "thumbnailUrl" is missing', ['thumbnailUrl']);
    const nested = finding('publication', 'Missing field "startDate" (optional)', ['startDate']);
    const offers = finding('about', 'Required attribute "offers" is missing', ['offers']);
    const gtin = finding('about', 'Missing one of field "gtin"', ['gtin']);
    const price = finding('about.offers', 'Required attribute "price" is missing', ['price']);
    expect(videoObjectFindings({ errors: [onVideo, offers, price], warnings: [nested, gtin] })).to.deep.equal({
      errors: [onVideo], warnings: [nested], notes: [offers, price, gtin],
    });
  });

  it('takes a path that only begins like "about" for the VideoObject\'s own', function () {
    const own = finding('aboutness', 'Required attribute "x" is missing');
    expect(videoObjectFindings({ errors: [own], warnings: [] })).to.deep.equal({ errors: [own], warnings: [], notes: [] });
  });
});
