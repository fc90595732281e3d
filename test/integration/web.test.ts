/**
 * POST /v1/web in plain mode against a loopback site: validation, the blocked-domain rule on the
 * URL and on every redirect hop, the public-address rule on redirects, charsets, headers and
 * bodies, size and type limits, output formats, and billing per target status class.
 *
 * The service exempts only the name `localhost` from the public-address rule (not 127.0.0.1), so
 * the site is reachable as localhost while a redirect to http://127.0.0.1 is refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import { startTestService, type TestService } from '../support/service.ts';
import { startLoopbackSite, type LoopbackSite } from '../support/web-site.ts';
import { articlePage, ARTICLE_HEADINGS, CHROME_TEXTS } from '../support/web-fixtures.ts';

let service: TestService;
let site: LoopbackSite;
let base: string;

const html = (body: string, type = 'text/html; charset=utf-8') => ({ headers: { 'content-type': type }, body });

before(async () => {
  site = await startLoopbackSite();
  base = site.url('localhost');
  service = await startTestService({ OUTBOUND_ALLOW_HOSTS: 'localhost', WEB_BLOCKED_DOMAINS: 'blocked.example' });

  site.route('/page', () => html('<html><body><p>Hello page</p></body></html>'));
  site.route('/r1', () => ({ status: 302, headers: { location: '/r2' } }));
  site.route('/r2', () => ({ status: 301, headers: { location: `${base}/page` } }));
  site.route('/to-blocked', () => ({ status: 302, headers: { location: 'https://www.facebook.com/some/page' } }));
  site.route('/to-blocked-extra', () => ({ status: 302, headers: { location: 'http://shop.blocked.example/' } }));
  site.route('/to-loopback', () => ({ status: 302, headers: { location: `${site.url('127.0.0.1')}/secret` } }));
  site.route('/to-metadata', () => ({ status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' } }));
  site.route('/to-private', () => ({ status: 307, headers: { location: 'http://10.0.0.7/admin' } }));
  site.route('/secret', () => html('internal'));
  site.route('/loop', (hit) => ({ status: 302, headers: { location: `/loop?n=${Number(new URL(hit.path, 'http://x').searchParams.get('n') ?? 0) + 1}` } }));
  site.route('/echo', (hit) => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify({ method: hit.method, headers: hit.headers, body: hit.body }) }));
  site.route('/cp1251', () => ({ headers: { 'content-type': 'text/html; charset=windows-1251' }, body: Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]) }));
  site.route('/sjis', () => ({
    headers: { 'content-type': 'text/html' },
    body: Buffer.concat([Buffer.from('<html><head><meta charset="Shift_JIS"></head><body>'), Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]), Buffer.from('</body></html>')]),
  }));
  site.route('/gbk', () => ({ headers: { 'content-type': 'text/plain; charset=GBK' }, body: Buffer.from([0xd6, 0xd0, 0xce, 0xc4]) }));
  site.route('/utf16', () => ({ headers: { 'content-type': 'text/html' }, body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<p>Grüße 世界</p>', 'utf16le')]) }));
  site.route('/image', () => ({ headers: { 'content-type': 'image/png' }, body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]) }));
  site.route('/pdf', () => ({ headers: { 'content-type': 'application/pdf' }, body: Buffer.from('%PDF-1.7\n\x00\x01binary') }));
  site.route('/bomb', () => ({ headers: { 'content-type': 'text/html', 'content-encoding': 'gzip' }, body: gzipSync(Buffer.alloc(40 * 1024 * 1024, 0x61)) }));
  site.route('/article', () => html(articlePage()));
  site.route('/js-shell', () => html('<html><body><div id="app">Loading…</div><script>document.getElementById("app").textContent = "Built by script";</script></body></html>'));
  for (const status of [200, 201, 404, 410, 403, 429, 500, 503]) site.route(`/status/${status}`, () => ({ status, ...html(`<p>status ${status}</p>`) }));
  site.route('/status/302-no-location', () => ({ status: 302, body: '' }));
});

after(async () => {
  await service?.close();
  await site?.close();
});

async function scrape(body: Record<string, unknown>, credits = 20) {
  const user = await service.user({ scraping: credits });
  const response = await service.call('POST', '/v1/web', { token: user.token, body });
  const balance = await service.services.ledger.balance(user.id, 'scraping');
  return { ...response, charged: credits - (balance ?? 0), user };
}

describe('validation', () => {
  test('url is required and must be a URL', async () => {
    const r = await scrape({});
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors, { url: ['The url field is required.'] });
    const bad = await scrape({ url: 'ftp://example.com/x', method: 'TRACE', format: 'pdf', headers: { a: 1 } });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors.url, ['The url must be a valid URL.']);
    assert.deepEqual(bad.body.errors.method, ['The selected method is invalid.']);
    assert.deepEqual(bad.body.errors.format, ['The selected format is invalid.']);
    assert.deepEqual(bad.body.errors.headers, ['The headers must be an object of header names and string values.']);
    assert.equal(bad.charged, 0);
  });

  test('bypass_captcha with a non-GET method, headers, body or proxy_country: the contract wording', async () => {
    for (const extra of [{ method: 'POST' }, { headers: { 'x-a': 'b' } }, { body: 'x' }, { body: { a: 1 } }, { proxy_country: 'de' }]) {
      const r = await scrape({ url: `${base}/page`, bypass_captcha: true, ...extra });
      assert.equal(r.status, 422, JSON.stringify(extra));
      assert.deepEqual(r.body.errors.bypass_captcha, ['The bypass captcha option cannot be combined with method, headers, body or proxy_country.']);
    }
  });

  test('proxy_country without a configured proxy is a 422 on proxy_country', async () => {
    const r = await scrape({ url: `${base}/page`, proxy_country: 'de' });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors.proxy_country, ['The proxy country option is not available: no proxy is configured.']);
    const unknown = await scrape({ url: `${base}/page`, proxy_country: 'DE' });
    assert.deepEqual(unknown.body.errors.proxy_country, ['The selected proxy country is invalid.', 'The proxy country option is not available: no proxy is configured.']);
  });

  test('a URL on a non-public address is a 422', async () => {
    const r = await scrape({ url: `${site.url('127.0.0.1')}/secret` });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors.url, ['The url must point to a public address.']);
    assert.equal(site.log.filter((hit) => hit.path === '/secret').length, 0);
  });
});

describe('blocked domains', () => {
  test('the URL itself: 403, nothing charged, nothing fetched', async () => {
    for (const url of ['https://www.facebook.com/page', 'https://google.co.uk/search?q=x', 'https://M.REDDIT.COM./r/x', 'http://blocked.example/']) {
      const r = await scrape({ url });
      assert.equal(r.status, 403, url);
      assert.deepEqual(r.body, { message: 'Domain not supported' });
      assert.equal(r.charged, 0);
    }
  });

  test('YouTube and Freelancer URLs: 403, uncharged', async () => {
    for (const url of ['https://www.youtube.com/watch?v=dQw4w9WgXcQ', 'https://youtu.be/dQw4w9WgXcQ', 'https://music.youtube.com/', 'https://www.freelancer.com/projects/python/scrape-product-catalogue', 'https://www.freelancer.co.uk/jobs/php/']) {
      const r = await scrape({ url });
      assert.equal(r.status, 403, url);
      assert.deepEqual(r.body, { message: 'Domain not supported' });
      assert.equal(r.charged, 0);
    }
  });

  test('a redirect into a blocked domain: 403, uncharged', async () => {
    for (const path of ['/to-blocked', '/to-blocked-extra']) {
      const r = await scrape({ url: `${base}${path}` });
      assert.equal(r.status, 403, path);
      assert.deepEqual(r.body, { message: 'Domain not supported' });
      assert.equal(r.charged, 0);
    }
  });
});

describe('redirects', () => {
  test('a chain is followed and the final URL returned', async () => {
    const r = await scrape({ url: `${base}/r1` });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.response.url, `${base}/page`);
    assert.equal(r.body.response.status_code, 200);
    assert.match(r.body.response.content, /Hello page/);
    assert.equal(r.charged, 1);
  });

  test('into 127.0.0.1, 169.254.169.254 and 10.x: refused before any connection, uncharged', async () => {
    for (const path of ['/to-loopback', '/to-metadata', '/to-private']) {
      const started = Date.now();
      const r = await scrape({ url: `${base}${path}` });
      assert.equal(r.status, 422, `${path}: ${r.text}`);
      assert.deepEqual(r.body.errors.url, ['The url must point to a public address.']);
      assert.equal(r.charged, 0);
      assert.ok(Date.now() - started < 5_000, 'no connection was attempted (no connect time-out was waited for)');
    }
    assert.equal(site.log.filter((hit) => hit.path === '/secret').length, 0, 'the loopback target was never reached');
  });

  test('more than 10 redirects: 502 could not be reached', async () => {
    const r = await scrape({ url: `${base}/loop` });
    assert.equal(r.status, 502);
    assert.deepEqual(r.body, { message: 'The target site could not be reached.' });
    assert.equal(r.charged, 0);
    assert.ok(site.log.filter((hit) => hit.path.startsWith('/loop')).length <= 11);
  });
});

describe('charsets', () => {
  for (const [path, expected] of [
    ['/cp1251', 'Привет'],
    ['/sjis', '日本語'],
    ['/gbk', '中文'],
    ['/utf16', 'Grüße 世界'],
  ] as const) {
    test(`${path} comes out as ${expected}`, async () => {
      const r = await scrape({ url: `${base}${path}` });
      assert.equal(r.status, 200, r.text);
      assert.ok(r.body.response.content.includes(expected), r.body.response.content);
    });
  }
});

describe('method, headers and body', () => {
  test("the caller's method, headers and JSON body reach the target; hop-by-hop, Host and Proxy-* do not", async () => {
    const r = await scrape({
      url: `${base}/echo`,
      method: 'PUT',
      headers: { 'X-Custom': 'yes', Host: 'intranet.example', 'Proxy-Authorization': 'Basic c2VjcmV0', Connection: 'close', 'User-Agent': 'my-agent/1' },
      body: { hello: 'world' },
    });
    assert.equal(r.status, 200, r.text);
    const echoed = JSON.parse(r.body.response.content);
    assert.equal(echoed.method, 'PUT');
    assert.equal(echoed.body, '{"hello":"world"}');
    assert.equal(echoed.headers['x-custom'], 'yes');
    assert.equal(echoed.headers['user-agent'], 'my-agent/1');
    assert.equal(echoed.headers['content-type'], 'application/json');
    assert.equal(echoed.headers.host, `localhost:${site.port}`);
    assert.equal(echoed.headers['proxy-authorization'], undefined);
    assert.equal(r.body.response.headers['content-type'], 'application/json');
  });

  test('headers and body are never stored in request history', async () => {
    const r = await scrape({ url: `${base}/echo`, method: 'POST', headers: { Authorization: 'Bearer target-secret' }, body: 'password=hunter2' });
    assert.equal(r.status, 200);
    const history = await service.call('GET', '/requests', { token: r.user.token });
    const record = history.body.data.find((entry: { endpoint: string }) => entry.endpoint === '/v1/web');
    assert.equal(record.params.url, `${base}/echo`);
    assert.equal(record.params.method, 'POST');
    assert.ok(!history.text.includes('target-secret') && !history.text.includes('hunter2'));
  });
});

describe('limits', () => {
  test('binary content types: 422 on url, uncharged', async () => {
    for (const path of ['/image', '/pdf']) {
      const r = await scrape({ url: `${base}${path}` });
      assert.equal(r.status, 422, path);
      assert.deepEqual(r.body.errors, { url: ['The url must point to a web page.'] });
      assert.equal(r.charged, 0);
    }
  });

  test('a gzip bomb is stopped at the 10 MB decoded cap: 422, uncharged', async () => {
    const r = await scrape({ url: `${base}/bomb` });
    assert.equal(r.status, 422, r.text);
    assert.deepEqual(r.body.errors, { url: ['The url must point to a page of at most 10 MB.'] });
    assert.equal(r.charged, 0);
  });
});

describe('billing per target status', () => {
  for (const status of [200, 201, 404, 410]) {
    test(`${status}: answered and charged 1`, async () => {
      const r = await scrape({ url: `${base}/status/${status}` });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.response.status_code, status);
      assert.match(r.body.response.content, new RegExp(`status ${status}`));
      assert.equal(r.charged, 1);
    });
  }
  for (const status of [403, 429, 500, 503]) {
    test(`${status}: 502 with the status, uncharged`, async () => {
      const r = await scrape({ url: `${base}/status/${status}` });
      assert.equal(r.status, 502);
      assert.deepEqual(r.body, { message: `The target site answered ${status}.`, status_code: status });
      assert.equal(r.charged, 0);
    });
  }
  test('a 3xx without Location is another status: 502, uncharged', async () => {
    const r = await scrape({ url: `${base}/status/302-no-location` });
    assert.deepEqual(r.body, { message: 'The target site answered 302.', status_code: 302 });
  });
  test('no answer: 502 could not be reached, uncharged', async () => {
    const closed = await startLoopbackSite();
    const url = `${closed.url('localhost')}/gone`;
    await closed.close();
    const r = await scrape({ url });
    assert.equal(r.status, 502);
    assert.deepEqual(r.body, { message: 'The target site could not be reached.' });
    assert.equal(r.charged, 0);
  });
  test('a balance of 0: 403, nothing fetched', async () => {
    const before = site.log.length;
    const r = await scrape({ url: `${base}/page?zero` }, 0);
    assert.equal(r.status, 403);
    assert.equal(site.log.slice(before).filter((hit) => hit.path === '/page?zero').length, 0);
  });
});

describe('output formats', () => {
  test('markdown: the article only, with links', async () => {
    const r = await scrape({ url: `${base}/article`, format: 'markdown', links: true });
    assert.equal(r.status, 200, r.text);
    const { content, links } = r.body.response;
    for (const heading of ARTICLE_HEADINGS) assert.match(content, new RegExp(`^#{1,3} ${heading}$`, 'm'));
    for (const chrome of CHROME_TEXTS) assert.ok(!content.includes(chrome), chrome);
    assert.deepEqual(links, [`${base}/`, `${base}/pricing`, `${base}/second`]);
    assert.equal(r.charged, 1, 'same price');
  });

  test('text', async () => {
    const r = await scrape({ url: `${base}/article`, format: 'text' });
    // Text holds what the Markdown holds (issue 40): the title, then the article; the title is in metadata too.
    assert.match(r.body.response.content, /^How the meter works\nEvery request holds its maximum cost/);
    assert.equal(r.body.response.metadata.title, 'How the meter works');
    assert.ok(!r.body.response.content.includes('<p>'));
  });

  test('only_main_content and links_inline (issue 24): the whole page, links as text; validated', async () => {
    const whole = await scrape({ url: `${base}/article`, format: 'text', only_main_content: false });
    assert.equal(whole.status, 200, whole.text);
    assert.ok(CHROME_TEXTS.some((chrome) => whole.body.response.content.includes(chrome)), 'the chrome is back');
    const plain = await scrape({ url: `${base}/article`, format: 'markdown', links_inline: false });
    assert.equal(plain.status, 200, plain.text);
    assert.doesNotMatch(plain.body.response.content, /\]\(http/);
    assert.match(plain.body.response.content, /See the second post for more/);
    const bad = await scrape({ url: `${base}/article`, format: 'markdown', only_main_content: 'yes', links_inline: 'no' });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors, {
      only_main_content: ['The only main content field must be true or false.'],
      links_inline: ['The links inline field must be true or false.'],
    });
  });

  test('a page built by JavaScript: plain mode sees the shell', async () => {
    const r = await scrape({ url: `${base}/js-shell` });
    assert.match(r.body.response.content, /Loading…/);
    assert.ok(!r.body.response.content.includes('<div id="app">Built by script'));
  });
});
