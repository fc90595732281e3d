/**
 * POST /v1/map against a loopback site: robots.txt's Sitemap line, a sitemap index with a gzipped
 * child, /sitemap.xml, the start page's links; scope, canonical forms and dedupe, the search
 * filter, the limit, robots.txt's rules (and `ignore_robots` where the operator allows it),
 * validation, billing, and a site that cannot be reached.
 *
 * The service exempts only the name `localhost` from the public-address rule, so the site is
 * reached as localhost.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { startTestService, type TestService } from '../support/service.ts';
import { startLoopbackSite, type LoopbackSite } from '../support/web-site.ts';

let service: TestService;
let site: LoopbackSite;
let base: string;

const xml = (body: string) => ({ headers: { 'content-type': 'application/xml' }, body });
const urlset = (...paths: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${paths.map((path) => `  <url>\n    <loc>${path.startsWith('http') ? path : base + path}</loc>\n  </url>`).join('\n')}\n</urlset>`;

before(async () => {
  site = await startLoopbackSite();
  base = site.url('localhost');
  service = await startTestService({ OUTBOUND_ALLOW_HOSTS: 'localhost' });

  site.route('/', () => ({
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: `<html><body>
      <a href="/about">About</a>
      <a href="/contact?utm_source=home">Contact</a>
      <a href="/blog/first#comments">First post</a>
      <a href="blog/second">Second post</a>
      <a href="/search?topic=blog">Search</a>
      <a href="https://elsewhere.example/page">Elsewhere</a>
      <a href="http://169.254.169.254/latest/meta-data/">Metadata</a>
      <a href="mailto:team@example.com">Mail</a>
      <a href="/about/">About again</a>
    </body></html>`,
  }));
  site.route('/broken', () => ({ status: 500, body: 'down' }));
  site.route('/robots.txt', () => ({ headers: { 'content-type': 'text/plain' }, body: `User-agent: *\nDisallow: /private\n\nSitemap: ${base}/sitemap_index.xml\n` }));
  site.route('/sitemap_index.xml', () =>
    xml(`<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>${base}/sitemap-pages.xml</loc></sitemap>
  <sitemap><loc>${base}/sitemap-posts.xml.gz</loc></sitemap>
  <sitemap><loc>${site.url('127.0.0.1')}/sitemap-pages.xml</loc></sitemap>
  <sitemap><loc>http://169.254.169.254/latest/sitemap.xml</loc></sitemap>
</sitemapindex>`),
  );
  site.route('/sitemap.xml', () => xml(urlset('/about', '/legacy')));
  site.route('/sitemap-pages.xml', () => xml(urlset('/', '/about/', '/blog/first?utm_source=news&amp;utm_medium=email', '/private/secret', 'https://other.example/x')));
  site.route('/sitemap-posts.xml.gz', () => ({ headers: { 'content-type': 'application/x-gzip' }, body: gzipSync(Buffer.from(urlset('/blog/second', '/blog/third'))) }));
});

after(async () => {
  await service?.close();
  await site?.close();
});

async function map(body: Record<string, unknown>, credits = 10) {
  const user = await service.user({ scraping: credits });
  const response = await service.call('POST', '/v1/map', { token: user.token, body });
  const balance = await service.services.ledger.balance(user.id, 'scraping');
  return { ...response, charged: credits - (balance ?? 0) };
}

describe('POST /v1/map', () => {
  test('the start URL, its page links, then sitemap URLs: same site only, canonical, each once; 1 credit', async () => {
    const hitsBefore = site.log.length;
    const r = await map({ url: `${base}/` });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, {
      response: {
        links: [
          `${base}/`,
          `${base}/about`,
          `${base}/contact`,
          `${base}/blog/first`,
          `${base}/blog/second`,
          `${base}/search?topic=blog`,
          `${base}/legacy`,
          // Not /private/secret: robots.txt disallows it.
          `${base}/blog/third`,
        ],
      },
    });
    assert.equal(r.charged, 1);
    const asked = site.log.slice(hitsBefore).map((hit) => hit.path);
    for (const file of ['/robots.txt', '/sitemap_index.xml', '/sitemap.xml', '/sitemap-pages.xml', '/sitemap-posts.xml.gz', '/']) {
      assert.equal(asked.filter((path) => path === file).length, 1, `${file} fetched once`);
    }
    assert.ok(!asked.some((path) => path.startsWith('/about') || path.startsWith('/blog')), 'listed pages are not fetched');
    // A child sitemap on a private address is refused by the outbound client before any request.
    assert.ok(site.log.every((hit) => !hit.host.startsWith('127.0.0.1')));
  });

  test('search keeps matching URLs, those with the term in the path first; limit cuts the list', async () => {
    const r = await map({ url: `${base}/`, search: 'BLOG' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.response.links, [`${base}/blog/first`, `${base}/blog/second`, `${base}/blog/third`, `${base}/search?topic=blog`]);
    assert.equal(r.charged, 1);
    const limited = await map({ url: `${base}/`, limit: 3 });
    assert.deepEqual(limited.body.response.links, [`${base}/`, `${base}/about`, `${base}/contact`]);
    const none = await map({ url: `${base}/`, search: 'nothing-matches-this' });
    assert.equal(none.status, 200);
    assert.deepEqual(none.body.response.links, []);
  });

  test('a start page that fails still maps from the sitemaps', async () => {
    const r = await map({ url: `${base}/broken?utm_campaign=x` });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.response.links, [
      `${base}/broken`,
      `${base}/about`,
      `${base}/legacy`,
      `${base}/`,
      `${base}/blog/first`,
      `${base}/blog/second`,
      `${base}/blog/third`,
    ]);
    assert.equal(r.charged, 1);
  });

  test('robots.txt: what it disallows for the crawler is left out; ignore_robots lists it only where the operator allows it', async () => {
    const jobs = service.services.config.jobs;
    const refused = await map({ url: `${base}/`, ignore_robots: true });
    assert.equal(refused.status, 422);
    assert.deepEqual(refused.body, {
      message: 'The given data was invalid.',
      errors: { ignore_robots: ['The ignore robots field cannot be true: this service lists only what robots.txt allows.'] },
    });
    assert.equal(refused.charged, 0);
    const notFlag = await map({ url: `${base}/`, ignore_robots: 'yes please' });
    assert.deepEqual(notFlag.body.errors, { ignore_robots: ['The ignore robots field must be true or false.'] });

    jobs.allowIgnoreRobots = true;
    try {
      const all = await map({ url: `${base}/`, search: 'private', ignore_robots: true });
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(all.body.response.links, [`${base}/private/secret`]);
      assert.equal(all.charged, 1);
      const honoured = await map({ url: `${base}/`, search: 'private', ignore_robots: false });
      assert.deepEqual(honoured.body.response.links, []);
    } finally {
      jobs.allowIgnoreRobots = false;
    }

    // The crawler's own group, when robots.txt has one, is the one that judges.
    const own = await startLoopbackSite();
    try {
      const ownBase = own.url('localhost');
      own.route('/', () => ({ headers: { 'content-type': 'text/html' }, body: '<a href="/a">A</a> <a href="/drafts/b">B</a> <a href="/c">C</a>' }));
      own.route('/robots.txt', () => ({ headers: { 'content-type': 'text/plain' }, body: 'User-agent: *\nDisallow: /\n\nUser-agent: gleaner\nDisallow: /drafts/\n' }));
      const r = await map({ url: `${ownBase}/` });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.body.response.links, [`${ownBase}/`, `${ownBase}/a`, `${ownBase}/c`]);
    } finally {
      await own.close();
    }
  });

  test('a robots.txt that cannot be read (5xx) may disallow everything: 502, nothing charged', async () => {
    const failing = await startLoopbackSite();
    try {
      failing.route('/', () => ({ headers: { 'content-type': 'text/html' }, body: '<a href="/a">A</a>' }));
      failing.route('/robots.txt', () => ({ status: 503, body: 'busy' }));
      const r = await map({ url: `${failing.url('localhost')}/` });
      assert.equal(r.status, 502, r.text);
      assert.deepEqual(r.body, { message: "The site's robots.txt could not be read: it may disallow every URL." });
      assert.equal(r.charged, 0);
    } finally {
      await failing.close();
    }
  });

  test('validation: 422 for a missing, malformed or private url and a limit out of range; nothing charged', async () => {
    const missing = await map({});
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.body.errors, { url: ['The url field is required.'] });
    const bad = await map({ url: 'ftp://example.com/x', limit: 0, include_subdomains: 'maybe' });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors.url, ['The url must be a valid URL.']);
    assert.deepEqual(bad.body.errors.limit, ['The limit must be between 1 and 50000.']);
    assert.deepEqual(bad.body.errors.include_subdomains, ['The include subdomains field must be true or false.']);
    assert.equal(bad.charged, 0);
    const credentials = await map({ url: 'https://user:secret@example.com/' });
    assert.deepEqual(credentials.body.errors, { url: ['The url must be a valid URL.'] });
    const tooMany = await map({ url: `${base}/`, limit: 50001 });
    assert.deepEqual(tooMany.body.errors.limit, ['The limit must be between 1 and 50000.']);
    const loopback = await map({ url: `${site.url('127.0.0.1')}/` });
    assert.equal(loopback.status, 422);
    assert.deepEqual(loopback.body.errors.url, ['The url must point to a public address.']);
    assert.equal(loopback.charged, 0);
  });

  test('a blocked domain is refused as /v1/web refuses it', async () => {
    const r = await map({ url: 'https://www.facebook.com/' });
    assert.equal(r.status, 403);
    assert.deepEqual(r.body, { message: 'Domain not supported' });
    assert.equal(r.charged, 0);
  });

  test('a site that cannot be reached: 502, nothing charged', async () => {
    const gone = await startLoopbackSite();
    const url = `${gone.url('localhost')}/`;
    await gone.close();
    const r = await map({ url });
    assert.equal(r.status, 502, r.text);
    assert.deepEqual(r.body, { message: 'The target site could not be reached.' });
    assert.equal(r.charged, 0);
  });
});
