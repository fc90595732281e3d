/** robots.txt (src/adapters/site/robots.ts): its rules for our user agent, and the pure adapter that fetches it. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodedResponse } from '../../src/adapters/kit/runtime.ts';
import { MAX_CRAWL_DELAY_MS, readRobots, robotsAdapter, robotsProductToken, robotsUrlFor, ROBOTS_PARSE_LIMIT_BYTES } from '../../src/adapters/site/robots.ts';

const ROBOTS_URL = 'https://example.com/robots.txt';
const UA = 'Mozilla/5.0 (compatible; gleaner/0.1)';

describe('readRobots', () => {
  test('our group wins over *, the longest rule wins, Allow breaks a tie', () => {
    const robots = readRobots(
      ROBOTS_URL,
      ['User-agent: *', 'Disallow: /', '', 'User-agent: Gleaner', 'Disallow: /private/', 'Allow: /private/open', 'Disallow: /*.pdf$', 'Allow: /tie', 'Disallow: /tie'].join('\n'),
      UA,
    );
    assert.equal(robots.isAllowed('https://example.com/'), true);
    assert.equal(robots.isAllowed('https://example.com/private/x'), false);
    assert.equal(robots.isAllowed('https://example.com/private/open/page'), true);
    assert.equal(robots.isAllowed('https://example.com/doc.pdf'), false);
    assert.equal(robots.isAllowed('https://example.com/doc.pdf?x=1'), true);
    assert.equal(robots.isAllowed('https://example.com/tie'), true);
    const other = readRobots(ROBOTS_URL, 'User-agent: *\nDisallow: /\n\nUser-agent: gleaner\nDisallow: /private/', 'SomeOtherBot/2.0');
    assert.equal(other.isAllowed('https://example.com/'), false);
  });

  test('a missing or empty file allows everything', () => {
    for (const body of [null, '', '# nothing here\n']) {
      const robots = readRobots(ROBOTS_URL, body, UA);
      assert.equal(robots.isAllowed('https://example.com/anything?x=1'), true);
      assert.equal(robots.crawlDelayMs, 0);
      assert.deepEqual(robots.sitemaps, []);
    }
  });

  test('a URL of another origin is not this file to judge: refused', () => {
    const robots = readRobots(ROBOTS_URL, '', UA);
    for (const url of ['http://example.com/', 'https://www.example.com/', 'https://example.com:8443/', 'not a url']) assert.equal(robots.isAllowed(url), false, url);
  });

  test('crawl delay in ms, capped at 30 s; nonsense ignored', () => {
    assert.equal(readRobots(ROBOTS_URL, 'User-agent: *\nCrawl-delay: 2.5', UA).crawlDelayMs, 2500);
    assert.equal(readRobots(ROBOTS_URL, 'User-agent: *\nCrawl-delay: 3600', UA).crawlDelayMs, MAX_CRAWL_DELAY_MS);
    assert.equal(MAX_CRAWL_DELAY_MS, 30_000);
    for (const value of ['soon', '-5', '0']) assert.equal(readRobots(ROBOTS_URL, `User-agent: *\nCrawl-delay: ${value}`, UA).crawlDelayMs, 0, value);
    assert.equal(readRobots(ROBOTS_URL, 'User-agent: gleaner\nCrawl-delay: 4\n\nUser-agent: *\nCrawl-delay: 9', UA).crawlDelayMs, 4000);
  });

  test('Sitemap lines: absolute http(s) URLs, relative ones resolved, others dropped, any group', () => {
    const robots = readRobots(
      ROBOTS_URL,
      '\uFEFFSitemap: https://example.com/sitemap_index.xml\nUser-agent: *\nDisallow: /x\nsitemap: /news.xml\nSitemap: ftp://example.com/s.xml\nSitemap: https://cdn.example.net/s.xml.gz',
      UA,
    );
    assert.deepEqual(robots.sitemaps, ['https://example.com/sitemap_index.xml', 'https://example.com/news.xml', 'https://cdn.example.net/s.xml.gz']);
    assert.equal(robots.isAllowed('https://example.com/x'), false, 'a leading byte order mark does not hide the first line');
  });

  test('only the first 500 KiB are read (RFC 9309 §2.5)', () => {
    const filler = `# ${'x'.repeat(1000)}\n`.repeat(Math.ceil(ROBOTS_PARSE_LIMIT_BYTES / 1000));
    const robots = readRobots(ROBOTS_URL, `User-agent: *\nDisallow: /early\n${filler}Disallow: /late\n`, UA);
    assert.equal(robots.isAllowed('https://example.com/early'), false);
    assert.equal(robots.isAllowed('https://example.com/late'), true);
  });

  test('the product token of a User-Agent header', () => {
    assert.equal(robotsProductToken(UA), 'gleaner');
    assert.equal(robotsProductToken('Googlebot/2.1 (+http://www.google.com/bot.html)'), 'googlebot');
    assert.equal(robotsProductToken('my-crawler'), 'my-crawler');
    assert.equal(robotsProductToken(''), '*');
  });
});

describe('robotsAdapter', () => {
  const answer = (status: number, body = '') => robotsAdapter.parse(decodedResponse(status, ROBOTS_URL, { 'content-type': 'text/plain' }, Buffer.from(body)), { url: 'https://example.com/' });

  test('asks GET <origin>/robots.txt, whatever URL of the site it is given', () => {
    const request = robotsAdapter.buildRequest({ url: 'https://example.com:8443/deep/page?q=1#x' }, { baseUrl: '', now: new Date() });
    assert.equal(request.url, 'https://example.com:8443/robots.txt');
    assert.equal(request.method, 'GET');
    assert.equal(robotsAdapter.upstream, 'site');
    assert.equal(robotsAdapter.operation, 'robots');
    assert.equal(robotsAdapter.idempotent, true);
    assert.equal(robotsUrlFor('http://example.com/a/b'), 'http://example.com/robots.txt');
  });

  test('2xx: the text; 4xx and unfollowed redirects: no file (allow all); 5xx and 429: blocked', () => {
    assert.deepEqual(answer(200, 'User-agent: *\nDisallow: /'), { kind: 'ok', value: 'User-agent: *\nDisallow: /' });
    for (const status of [400, 401, 403, 404, 410, 301]) assert.deepEqual(answer(status), { kind: 'ok', value: null }, String(status));
    for (const status of [429, 500, 502, 503]) {
      const outcome = answer(status);
      assert.equal(outcome.kind, 'blocked', String(status));
    }
  });
});
