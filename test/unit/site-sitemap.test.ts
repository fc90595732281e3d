/**
 * Sitemaps (src/adapters/site/sitemap.ts) on hand-made files; their discovery (discover.ts) and
 * the map's deadline (map.ts) through the real upstream runtime on a fake outbound client.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { createUpstreamRuntime, decodedResponse } from '../../src/adapters/kit/runtime.ts';
import { OutboundError, type OutboundClient, type OutboundRequest } from '../../src/outbound/types.ts';
import { MAX_SITEMAP_BYTES, MAX_SITEMAP_ENTRIES, parseSitemap, sitemapAdapter } from '../../src/adapters/site/sitemap.ts';
import { discoverSitemapUrls } from '../../src/adapters/site/discover.ts';
import { siteScope } from '../../src/adapters/site/urls.ts';
import { mapSite, type SiteMapDeps } from '../../src/adapters/site/map.ts';

const bytes = (text: string) => Buffer.from(text, 'utf8');
const urlset = (...locs: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((loc) => `<url><loc>${loc}</loc></url>`).join('')}</urlset>`;
const sitemapIndex = (...locs: string[]) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs.map((loc) => `<sitemap><loc>${loc}</loc><lastmod>2024-01-01</lastmod></sitemap>`).join('')}</sitemapindex>`;

describe('parseSitemap', () => {
  test('a urlset: locations in order, whitespace trimmed, entities and CDATA read, extensions ignored', async () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <!-- generated -->
  <url>
    <loc>
      https://example.com/a
    </loc>
    <lastmod>2024-05-01</lastmod>
    <image:image><image:loc>https://example.com/a.png</image:loc></image:image>
    <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/a"/>
  </url>
  <url><loc>https://example.com/search?q=1&amp;page=2</loc></url>
  <url><loc><![CDATA[https://example.com/c?x=1&y=2]]></loc></url>
  <url><priority>0.5</priority></url>
</urlset>`;
    assert.deepEqual(await parseSitemap(bytes(xml), 'application/xml'), {
      kind: 'urlset',
      urls: ['https://example.com/a', 'https://example.com/search?q=1&page=2', 'https://example.com/c?x=1&y=2'],
    });
  });

  test('namespace prefixes, a byte order mark, an empty urlset', async () => {
    const prefixed = '\uFEFF<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>https://example.com/p</sm:loc></sm:url></sm:urlset>';
    assert.deepEqual(await parseSitemap(bytes(prefixed)), { kind: 'urlset', urls: ['https://example.com/p'] });
    assert.deepEqual(await parseSitemap(bytes('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"/>')), { kind: 'urlset', urls: [] });
    assert.deepEqual(await parseSitemap(bytes('<urlset>\n</urlset>')), { kind: 'urlset', urls: [] });
  });

  test('a sitemap index', async () => {
    assert.deepEqual(await parseSitemap(bytes(sitemapIndex('https://example.com/s1.xml', 'https://example.com/s2.xml.gz'))), {
      kind: 'index',
      sitemaps: ['https://example.com/s1.xml', 'https://example.com/s2.xml.gz'],
    });
  });

  test('gzip by its magic bytes, whatever the content type', async () => {
    const zipped = gzipSync(bytes(urlset('https://example.com/z')));
    for (const type of [undefined, 'application/x-gzip', 'application/octet-stream', 'text/xml']) {
      assert.deepEqual(await parseSitemap(zipped, type), { kind: 'urlset', urls: ['https://example.com/z'] }, String(type));
    }
    assert.deepEqual(await parseSitemap(gzipSync(bytes('https://example.com/t1\nhttps://example.com/t2\n'))), { kind: 'urlset', urls: ['https://example.com/t1', 'https://example.com/t2'] });
  });

  test('a gzip bomb stops at 50 MB; corrupt gzip is invalid', async () => {
    const bomb = gzipSync(Buffer.alloc(MAX_SITEMAP_BYTES + 1024, 0x20));
    const result = await parseSitemap(bomb);
    assert.equal(result.kind, 'invalid');
    assert.match(result.kind === 'invalid' ? result.reason : '', /decompressed/);
    const corrupt = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from('definitely not deflate')]);
    assert.deepEqual(await parseSitemap(corrupt), { kind: 'invalid', reason: 'corrupt gzip data' });
  });

  test('a text sitemap: one URL a line, other lines ignored', async () => {
    const text = 'https://example.com/one\r\n\r\n  https://example.com/two  \n# a comment\nnot a url\nftp://example.com/x\nhttp://example.com/three';
    assert.deepEqual(await parseSitemap(bytes(text), 'text/plain'), { kind: 'urlset', urls: ['https://example.com/one', 'https://example.com/two', 'http://example.com/three'] });
    assert.equal((await parseSitemap(bytes('hello\nworld'), 'text/plain')).kind, 'invalid');
  });

  test('unescaped ampersands in URLs are read as written, escaped ones decoded', async () => {
    const mixed = '<urlset><url><loc>https://example.com/a?x=1&y=2</loc></url><url><loc>https://example.com/b?x=1&amp;y=&#50;</loc></url></urlset>';
    assert.deepEqual(await parseSitemap(bytes(mixed)), { kind: 'urlset', urls: ['https://example.com/a?x=1&y=2', 'https://example.com/b?x=1&y=2'] });
  });

  test('invalid: malformed or truncated XML, HTML, another XML document, an empty body', async () => {
    for (const broken of [
      '<urlset><url><loc>https://example.com/a</url></loc></urlset>',
      '<urlset><url><loc>https://example.com/1</loc></url><url><loc>https://example.com/2</loc></url>',
      '<urlset><url><loc>https://example.com/a<loc></url></urlset>',
      '<urlset><url><loc>https://example.com/a</loc></url></urlset><urlset>',
      '<urlset><url><loc>https://example.com/a</loc></url></urlset>trailing text',
      'junk <urlset></urlset>'.replace('junk ', '<!-- x --> junk '),
    ]) {
      const malformed = await parseSitemap(bytes(broken));
      assert.equal(malformed.kind, 'invalid', broken);
      assert.match(malformed.kind === 'invalid' ? malformed.reason : '', /^malformed XML: .+ \(line 1\)$/, broken);
    }
    assert.deepEqual(await parseSitemap(bytes('<urlset>\n<url><loc>https://example.com/a</loc></url>\n<url><loc>https://example.com/b</lo')), {
      kind: 'invalid',
      reason: 'malformed XML: the file ends inside <loc> (truncated) (line 3)',
    });
    const html = await parseSitemap(bytes('<!DOCTYPE html><html><head><title>Not found</title></head><body><p>Sorry</p></body></html>'), 'text/html');
    assert.equal(html.kind, 'invalid');
    assert.deepEqual(await parseSitemap(bytes('<rss version="2.0"><channel><title>t</title></channel></rss>')), { kind: 'invalid', reason: 'not a sitemap: the root element is <rss>' });
    assert.deepEqual(await parseSitemap(bytes('  \n ')), { kind: 'invalid', reason: 'empty file' });
  });

  test('at most 50,000 entries a file, the first ones', async () => {
    const many = Array.from({ length: MAX_SITEMAP_ENTRIES + 10 }, (_, i) => `https://example.com/p${i}`);
    const text = await parseSitemap(bytes(many.join('\n')));
    assert.ok(text.kind === 'urlset');
    assert.equal(text.urls.length, MAX_SITEMAP_ENTRIES);
    assert.equal(text.urls.at(-1), `https://example.com/p${MAX_SITEMAP_ENTRIES - 1}`);
    const xml = await parseSitemap(bytes(urlset(...many)));
    assert.ok(xml.kind === 'urlset');
    assert.equal(xml.urls.length, MAX_SITEMAP_ENTRIES);
  });
});

/** Runs `work` with a 1 ms interval ticking beside it: how many turns the event loop gave other work meanwhile. */
async function withTurns<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let turns = 0;
  const ticker = setInterval(() => (turns += 1), 1);
  try {
    const result = await work();
    return { result, turns };
  } finally {
    clearInterval(ticker);
  }
}

describe('parseSitemap on large files (issue 33: the event loop keeps turning)', () => {
  test('a 10 MB sitemap of 50,000 URLs: all of them, read in slices; reading stops at the limit', async () => {
    const entry = (i: number) => `<url><loc>https://example.com/products/category-${i % 100}/item-${i}-${'x'.repeat(40)}</loc><lastmod>2024-01-01</lastmod><changefreq>daily</changefreq><priority>0.5</priority></url>\n`;
    const entries = Array.from({ length: MAX_SITEMAP_ENTRIES }, (_, i) => entry(i)).join('');
    const body = bytes(`<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries}</urlset>`);
    assert.ok(body.length > 9_500_000, String(body.length));
    const { result, turns } = await withTurns(() => parseSitemap(body));
    assert.ok(result.kind === 'urlset');
    assert.equal(result.urls.length, MAX_SITEMAP_ENTRIES);
    assert.equal(result.urls[0], 'https://example.com/products/category-0/item-0-' + 'x'.repeat(40));
    assert.equal(result.urls.at(-1), `https://example.com/products/category-99/item-${MAX_SITEMAP_ENTRIES - 1}-${'x'.repeat(40)}`);
    assert.ok(turns > 0, 'the event loop got turns while the file was read');
    // Past the limit nothing is read: a broken tail there does not matter.
    const tailed = await parseSitemap(bytes(`<urlset>${entries}<url><loc>https://example.com/after</url>`));
    assert.ok(tailed.kind === 'urlset');
    assert.equal(tailed.urls.length, MAX_SITEMAP_ENTRIES);
  });

  test('about 50 MB of junk inside <url> elements: the locations, in slices', async () => {
    const junk = 'y'.repeat(260);
    const body = bytes(`<urlset>${Array.from({ length: 45_000 }, (_, i) => `<url><loc>https://e.com/a${i}</loc><x a="${junk}">${junk}<![CDATA[${junk}]]></x>${junk}</url>`).join('')}</urlset>`);
    assert.ok(body.length > 45 * 1024 * 1024 && body.length <= MAX_SITEMAP_BYTES, String(body.length));
    const { result, turns } = await withTurns(() => parseSitemap(body));
    assert.ok(result.kind === 'urlset');
    assert.equal(result.urls.length, 45_000);
    assert.equal(result.urls.at(-1), 'https://e.com/a44999');
    assert.ok(turns > 0, 'the event loop got turns while the file was read');
  });

  test('a text sitemap of 40 MB, a line of megabytes in it: that line is no URL, the others are read, in slices', async () => {
    const body = bytes(`https://e.com/first\n${'# not a URL\n'.repeat(1_000_000)}https://e.com/${'z'.repeat(30 * 1024 * 1024)}\nhttps://e.com/last\n`);
    const { result, turns } = await withTurns(() => parseSitemap(body, 'text/plain'));
    assert.deepEqual(result, { kind: 'urlset', urls: ['https://e.com/first', 'https://e.com/last'] });
    assert.ok(turns > 0, 'the event loop got turns while the file was read');
  });
});

describe('sitemapAdapter', () => {
  const answer = (status: number, body: string | Uint8Array, type = 'application/xml') =>
    sitemapAdapter.parse(decodedResponse(status, 'https://example.com/sitemap.xml', { 'content-type': type }, typeof body === 'string' ? bytes(body) : body), { url: 'https://example.com/sitemap.xml' });

  test('ok for a sitemap; not_found for 404 and 410; blocked for other failures; changed for what is no sitemap', async () => {
    assert.deepEqual(await answer(200, urlset('https://example.com/a')), { kind: 'ok', value: { kind: 'urlset', urls: ['https://example.com/a'] } });
    assert.deepEqual(await answer(404, 'gone'), { kind: 'not_found' });
    assert.deepEqual(await answer(410, 'gone'), { kind: 'not_found' });
    assert.equal((await answer(403, 'no')).kind, 'blocked');
    assert.equal((await answer(503, 'later')).kind, 'blocked');
    assert.equal((await answer(200, '<html><body>home</body></html>', 'text/html')).kind, 'changed');
    const request = sitemapAdapter.buildRequest({ url: 'https://example.com/s.xml' }, { baseUrl: '', now: new Date() });
    assert.deepEqual([request.url, request.method, sitemapAdapter.upstream, sitemapAdapter.operation], ['https://example.com/s.xml', 'GET', 'site', 'sitemap']);
  });
});

type Served = { status?: number; body: string | Uint8Array } | Error;

/** The real runtime over an outbound client that serves `files` by URL (404 otherwise) and records what was asked. */
function siteOf(files: Record<string, Served>) {
  const asked: string[] = [];
  const sizes: number[] = [];
  const outbound: OutboundClient = {
    async fetch(url: string, request: OutboundRequest) {
      asked.push(url);
      sizes.push(request.maxBytes);
      const served = files[url] ?? { status: 404, body: 'no' };
      if (served instanceof Error) throw served;
      const body = typeof served.body === 'string' ? bytes(served.body) : Buffer.from(served.body);
      return { url, status: served.status ?? 200, headers: { 'content-type': 'application/xml' }, body, hops: [url] };
    },
    isPublicUrl: async () => true,
  };
  const runtime = createUpstreamRuntime({ outbound });
  return { call: runtime.upstream({ timeoutMs: 5000, retry: false, breaker: false }), asked, sizes };
}

describe('discoverSitemapUrls', () => {
  test('robots.txt sitemaps then /sitemap.xml, indexes followed breadth-first, each file once, URLs deduplicated by key', async () => {
    const site = siteOf({
      'https://example.com/from-robots.xml': { body: sitemapIndex('https://example.com/child-a.xml', 'https://example.com/child-b.xml.gz', 'https://example.com/from-robots.xml') },
      'https://example.com/sitemap.xml': { body: urlset('https://example.com/top', 'https://example.com/a/') },
      'https://example.com/child-a.xml': { body: urlset('https://example.com/a', 'https://example.com/b?utm_source=x', 'https://other.example/x', 'https://example.com/b#frag') },
      'https://example.com/child-b.xml.gz': { body: gzipSync(bytes(urlset('https://example.com/c', 'https://www.example.com/d'))) },
    });
    const found = await discoverSitemapUrls(
      site.call,
      { startUrl: 'https://example.com/', robotsSitemaps: ['https://example.com/from-robots.xml', 'https://example.com/from-robots.xml#again'], maxUrls: 100, accept: siteScope('https://example.com/', { allowSubdomains: false }) },
      {},
    );
    assert.deepEqual(found.urls, ['https://example.com/top', 'https://example.com/a/', 'https://example.com/b', 'https://example.com/c', 'https://www.example.com/d']);
    assert.equal(found.filesRead, 4);
    assert.deepEqual(site.asked, ['https://example.com/from-robots.xml', 'https://example.com/sitemap.xml', 'https://example.com/child-a.xml', 'https://example.com/child-b.xml.gz']);
    assert.ok(site.sizes.every((size) => size === MAX_SITEMAP_BYTES));
  });

  test('failed files are skipped; nothing read at all is filesRead 0', async () => {
    const site = siteOf({
      'https://example.com/broken.xml': { body: '<html>oops</html>' },
      'https://example.com/down.xml': new OutboundError('network', 'connection refused', 'https://example.com/down.xml'),
      'https://example.com/sitemap.xml': { status: 500, body: 'error' },
    });
    const none = await discoverSitemapUrls(site.call, { startUrl: 'https://example.com/', robotsSitemaps: ['https://example.com/broken.xml', 'https://example.com/down.xml'], maxUrls: 10 }, {});
    assert.deepEqual(none, { urls: [], filesRead: 0 });
    const some = siteOf({ 'https://example.com/down.xml': new OutboundError('network', 'refused', ''), 'https://example.com/sitemap.xml': { body: urlset('https://example.com/ok') } });
    assert.deepEqual(await discoverSitemapUrls(some.call, { startUrl: 'https://example.com/', robotsSitemaps: ['https://example.com/down.xml'], maxUrls: 10 }, {}), {
      urls: ['https://example.com/ok'],
      filesRead: 1,
    });
  });

  test('stops at maxUrls and at maxFiles', async () => {
    const children = Array.from({ length: 20 }, (_, i) => `https://example.com/s${i}.xml`);
    const files: Record<string, Served> = { 'https://example.com/sitemap.xml': { body: sitemapIndex(...children) } };
    children.forEach((child, i) => (files[child] = { body: urlset(`https://example.com/p${i}-1`, `https://example.com/p${i}-2`) }));
    const capped = siteOf(files);
    const few = await discoverSitemapUrls(capped.call, { startUrl: 'https://example.com/', robotsSitemaps: [], maxUrls: 5 }, {});
    assert.deepEqual(few.urls, ['https://example.com/p0-1', 'https://example.com/p0-2', 'https://example.com/p1-1', 'https://example.com/p1-2', 'https://example.com/p2-1']);
    assert.equal(capped.asked.length, 4, 'the index, then one batch of three children');
    const limited = siteOf(files);
    const byFiles = await discoverSitemapUrls(limited.call, { startUrl: 'https://example.com/', robotsSitemaps: [], maxUrls: 1000, maxFiles: 6 }, {});
    assert.equal(limited.asked.length, 6);
    assert.equal(byFiles.urls.length, 10);
  });

  test('no file is started after the deadline', async () => {
    const site = siteOf({ 'https://example.com/sitemap.xml': { body: urlset('https://example.com/a') } });
    const late = await discoverSitemapUrls(site.call, { startUrl: 'https://example.com/', robotsSitemaps: [], maxUrls: 10, deadline: Date.now() - 1 }, {});
    assert.deepEqual(late, { urls: [], filesRead: 0 });
    assert.equal(site.asked.length, 0);
  });
});

describe('mapSite', () => {
  /** A start page that never comes: it ends only when its signal aborts, as the runtime's calls do. */
  const hangingPage: SiteMapDeps['web'] = {
    scrape: (_request, context) =>
      new Promise((_resolve, reject) => context.signal?.addEventListener('abort', () => reject(context.signal?.reason), { once: true })),
  };

  test('the deadline ends a start page that does not come; what the sitemaps gave is answered', async () => {
    const site = siteOf({ 'https://example.com/sitemap.xml': { body: urlset('https://example.com/a', 'https://elsewhere.example/b') } });
    const started = performance.now();
    const outcome = await mapSite({ url: 'https://example.com/', limit: 10, includeSubdomains: false }, { site: site.call, web: hangingPage, userAgent: 'gleaner', deadlineMs: 300 }, {});
    assert.deepEqual(outcome, { kind: 'ok', links: ['https://example.com/', 'https://example.com/a'] });
    assert.ok(performance.now() - started < 2000);
    assert.deepEqual(site.asked, ['https://example.com/robots.txt', 'https://example.com/sitemap.xml']);
  });

  test("robots.txt: each origin's own file judges its URLs; one that cannot be read lists nothing; ignoreRobots lists all", async () => {
    const site = siteOf({
      'https://example.com/robots.txt': { body: 'User-agent: *\nDisallow: /private/\n' },
      'https://blog.example.com/robots.txt': { body: 'User-agent: gleaner\nDisallow: /drafts/\n' },
      'https://shop.example.com/robots.txt': { status: 503, body: 'down' },
      'https://example.com/sitemap.xml': {
        body: urlset('https://example.com/a', 'https://example.com/private/b', 'https://blog.example.com/post', 'https://blog.example.com/drafts/c', 'https://shop.example.com/cart', 'https://www.example.com/d'),
      },
    });
    const request = { url: 'https://example.com/', limit: 50, includeSubdomains: true };
    const deps = { site: site.call, web: hangingPage, userAgent: 'gleaner', deadlineMs: 300 };
    assert.deepEqual(await mapSite(request, deps, {}), {
      kind: 'ok',
      // www.example.com has no robots.txt (404): no rules.
      links: ['https://example.com/', 'https://example.com/a', 'https://blog.example.com/post', 'https://www.example.com/d'],
    });
    assert.equal(site.asked.filter((url) => url === 'https://blog.example.com/robots.txt').length, 1);
    const all = await mapSite({ ...request, ignoreRobots: true }, deps, {});
    assert.equal(all.kind === 'ok' ? all.links.length : 0, 7);
    const unreadable = siteOf({ 'https://example.com/robots.txt': { status: 500, body: '' }, 'https://example.com/sitemap.xml': { body: urlset('https://example.com/a') } });
    assert.deepEqual(await mapSite(request, { ...deps, site: unreadable.call }, {}), { kind: 'robots_unreadable' });
  });

  test('nothing read at all is unreachable; the caller going away rejects', async () => {
    const nothing = siteOf({});
    assert.deepEqual(await mapSite({ url: 'https://example.com/', limit: 10, includeSubdomains: false }, { site: nothing.call, web: hangingPage, userAgent: 'gleaner', deadlineMs: 200 }, {}), { kind: 'unreachable' });
    const caller = new AbortController();
    const pending = mapSite({ url: 'https://example.com/', limit: 10, includeSubdomains: false }, { site: nothing.call, web: hangingPage, userAgent: 'gleaner' }, { signal: caller.signal });
    caller.abort(new Error('client went away'));
    await assert.rejects(pending, /client went away/);
  });
});
