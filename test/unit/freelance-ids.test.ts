/** Freelancer project references: the URL forms the site links, ids, and what is refused. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isFreelancerHost, projectId, projectRefFromUrl } from '../../src/adapters/freelance/ids.ts';

describe('project URLs', () => {
  test('/projects/<category>/<slug>, on any Freelancer site, with a query, fragment, trailing slash or tab', () => {
    const seo = { kind: 'seo_url', seoUrl: 'python/scrape-product-catalogue-csv' };
    for (const url of [
      'https://www.freelancer.com/projects/python/scrape-product-catalogue-csv',
      'https://www.freelancer.com/projects/python/scrape-product-catalogue-csv/',
      'https://www.freelancer.com/projects/python/scrape-product-catalogue-csv?utm_source=x&ref=y',
      'https://www.freelancer.com/projects/python/scrape-product-catalogue-csv#bids',
      'https://www.freelancer.com/projects/python/scrape-product-catalogue-csv/details',
      'https://www.freelancer.com/projects/python/scrape-product-catalogue-csv/proposals/',
      'https://www.freelancer.com/projects/python/scrape-product-catalogue-csv.html',
      'http://freelancer.com/projects/python/scrape-product-catalogue-csv',
      'https://www.freelancer.co.uk/projects/python/scrape-product-catalogue-csv',
      'https://www.freelancer.in/projects/python/scrape-product-catalogue-csv',
      'https://WWW.FREELANCER.COM.AU/projects/python/scrape-product-catalogue-csv',
      '  https://www.freelancer.com/projects/python/scrape-product-catalogue-csv  ',
    ]) {
      assert.deepEqual(projectRefFromUrl(url), seo, url);
    }
  });

  test('/projects/<id>, with or without a trailing slash or a query', () => {
    for (const url of ['https://www.freelancer.com/projects/38001234', 'https://www.freelancer.com/projects/38001234/', 'https://www.freelancer.co.uk/projects/38001234?ref=mail']) {
      assert.deepEqual(projectRefFromUrl(url), { kind: 'id', id: 38001234 }, url);
    }
  });

  test('percent-encoded slugs are decoded', () => {
    assert.deepEqual(projectRefFromUrl('https://www.freelancer.com/projects/translation/traduction-fran%C3%A7ais'), { kind: 'seo_url', seoUrl: 'translation/traduction-français' });
  });

  test('other pages, other sites and malformed URLs are refused', () => {
    for (const url of [
      'https://www.freelancer.com/',
      'https://www.freelancer.com/projects/',
      'https://www.freelancer.com/projects/python',
      'https://www.freelancer.com/jobs/python/',
      'https://www.freelancer.com/u/someone',
      'https://www.freelancer.com/projects/python/slug/bids/extra',
      'https://www.freelancer.com/projects/0123',
      'https://www.freelancer.com/projects/a/%E0%A4%A',
      'https://freelancer.example.com/projects/python/slug',
      'https://notfreelancer.com/projects/python/slug',
      'https://www.upwork.com/projects/python/slug',
      'ftp://www.freelancer.com/projects/python/slug',
      'not a url',
      'https://127.0.0.1/projects/123',
    ]) {
      assert.equal(projectRefFromUrl(url), null, url);
    }
  });

  test('Freelancer hosts', () => {
    assert.equal(isFreelancerHost('www.freelancer.com'), true);
    assert.equal(isFreelancerHost('freelancer.co.uk'), true);
    assert.equal(isFreelancerHost('freelancer.com.evil.example'), false);
  });
});

describe('project ids', () => {
  test('digits or a JSON integer', () => {
    assert.equal(projectId('38001234'), 38001234);
    assert.equal(projectId(' 38001234 '), 38001234);
    assert.equal(projectId(38001234), 38001234);
  });

  test('anything else is refused', () => {
    for (const value of ['', '0', '-5', '12a', '1.5', '0123', '99999999999999999', 0, -1, 1.5, Number.NaN, null, true, [1], { id: 1 }]) {
      assert.equal(projectId(value), null, JSON.stringify(value));
    }
  });
});
