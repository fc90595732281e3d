/**
 * The scraping options of POST /v1/web on a loopback site (docs/web.md, "Options"):
 * include/exclude selectors and extract_rules in plain mode; wait_for, actions and screenshot
 * rendered in the real headless Chromium (skipped without it); validation and billing of each.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { startLoopbackSite, type LoopbackSite } from '../support/web-site.ts';
import { isBrowserAvailable } from '../../src/browser/index.ts';
import { MAX_SCREENSHOT_HEIGHT } from '../../src/browser/steps.ts';
import { MULTI_PAGE_LINES, multiPagePdf, numberedPagesPdf } from '../support/pdf-fixtures.ts';

const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const noBrowser = (await isBrowserAvailable(chromium)) ? false : `Chromium is not available at ${chromium} (install the chromium package or set CHROMIUM_PATH)`;

let service: TestService;
let site: LoopbackSite;
let base: string;

const html = (body: string) => ({ headers: { 'content-type': 'text/html; charset=utf-8' }, body });

const PRODUCT = `<html><head><title>Trail shoe</title></head><body>
<nav><a href="/">Home</a> <a href="/shoes">Shoes</a></nav>
<main><h1 class="name">Trail shoe</h1><span class="price" data-currency="EUR">89.90</span>
<div class="desc"><p>Light and grippy.</p><div class="ad">Buy two!</div></div>
<ul class="sizes"><li>41</li><li>42</li><li>43</li></ul></main>
<footer>Shop footer</footer></body></html>`;

const LIST = `<html><body><h1>Catalogue</h1>${['Alpha', 'Beta', 'Gamma']
  .map((name, i) => `<div class="card"><a href="/p/${i + 1}">${name}</a><span class="price">${i + 10}</span></div>`)
  .join('')}</body></html>`;

/** Content that appears 1.5 s after load, well after `load` and the network going quiet. */
const LATE = `<html><body><div id="app">Loading…</div><script>setTimeout(() => { document.getElementById("app").innerHTML = '<p id="late">Arrived late</p>'; }, 1500);</script></body></html>`;

/** A list with a "load more" button that appends items from script. */
const LOAD_MORE = `<html><body><ul id="items"><li>Item 1</li><li>Item 2</li></ul><button id="more">Load more</button>
<script>let next = 3; document.getElementById("more").addEventListener("click", () => { for (let i = 0; i < 2; i++) { const li = document.createElement("li"); li.textContent = "Item " + next++; document.getElementById("items").appendChild(li); } });</script></body></html>`;

const TALL = `<html><body style="margin:0"><div style="height:${MAX_SCREENSHOT_HEIGHT + 5000}px;background:linear-gradient(#fff,#000)">Tall</div></body></html>`;
const SHORT = '<html><body style="margin:0"><div style="height:2000px">Two screens</div></body></html>';

before(async () => {
  site = await startLoopbackSite();
  base = site.url('localhost');
  site.route('/product', () => html(PRODUCT));
  site.route('/list', () => html(LIST));
  site.route('/late', () => html(LATE));
  site.route('/load-more', () => html(LOAD_MORE));
  site.route('/tall', () => html(TALL));
  site.route('/short', () => html(SHORT));
  const report = Buffer.from(await multiPagePdf());
  const long = Buffer.from(await numberedPagesPdf(31));
  site.route('/report.pdf', () => ({ headers: { 'content-type': 'application/pdf' }, body: report }));
  // No useful type: the .pdf path and the %PDF- signature tell.
  site.route('/files/report.pdf', () => ({ headers: { 'content-type': 'application/octet-stream' }, body: report }));
  site.route('/download', () => ({ headers: { 'content-type': 'application/pdf; name=report' }, body: report }));
  site.route('/long.pdf', () => ({ headers: { 'content-type': 'application/pdf' }, body: long }));
  site.route('/json', () => ({ headers: { 'content-type': 'application/json' }, body: '{"a":1}' }));
  service = await startTestService({ OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost', WEB_BROWSER_TIMEOUT_MS: '20000' });
});

after(async () => {
  await service?.close();
  await site?.close();
});

async function scrape(body: Record<string, unknown>, credits = 20) {
  const user = await service.user({ scraping: credits });
  const response = await service.call('POST', '/v1/web', { token: user.token, body });
  const balance = await service.services.ledger.balance(user.id, 'scraping');
  return { ...response, charged: credits - (balance ?? 0) };
}

/** Width and height from a PNG's IHDR chunk. */
function pngSize(image: Buffer): { width: number; height: number } {
  assert.equal(image.subarray(1, 4).toString('latin1'), 'PNG');
  return { width: image.readUInt32BE(16), height: image.readUInt32BE(20) };
}

describe('selectors and extract_rules (plain mode)', () => {
  test('include and exclude selectors trim the page before conversion; 1 credit', async () => {
    const r = await scrape({ url: `${base}/product`, format: 'text', only_main_content: false, include_selectors: ['main'], exclude_selectors: ['.ad', '.sizes'] });
    assert.equal(r.status, 200, r.text);
    const content: string = r.body.response.content;
    assert.match(content, /Light and grippy/);
    for (const gone of ['Buy two', 'Shop footer', 'Shoes', '42']) assert.doesNotMatch(content, new RegExp(gone));
    assert.equal(r.charged, 1);
    const raw = await scrape({ url: `${base}/product`, exclude_selectors: ['nav', 'footer'] });
    assert.doesNotMatch(raw.body.response.content, /<nav|<footer/);
    assert.match(raw.body.response.content, /<title>Trail shoe<\/title>/);
  });

  test('extract_rules on a product page, beside the content; 1 credit', async () => {
    const r = await scrape({
      url: `${base}/product`,
      format: 'markdown',
      extract_rules: { name: 'h1.name', price: { selector: '.price' }, currency: { selector: '.price', type: 'attr', attr: 'data-currency' }, sizes: { selector: '.sizes li', all: true }, rating: '.rating' },
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.response.extracted, { name: 'Trail shoe', price: '89.90', currency: 'EUR', sizes: ['41', '42', '43'], rating: null });
    assert.match(r.body.response.content, /Light and grippy/);
    assert.equal(r.charged, 1);
  });

  test('extract_rules on a list page: a list of objects; on JSON, null', async () => {
    const r = await scrape({ url: `${base}/list`, extract_rules: { cards: { selector: '.card', all: true, output: { name: 'a', url: { selector: 'a', type: 'attr', attr: 'href' }, price: '.price' } } } });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.response.extracted.cards, [
      { name: 'Alpha', url: '/p/1', price: '10' },
      { name: 'Beta', url: '/p/2', price: '11' },
      { name: 'Gamma', url: '/p/3', price: '12' },
    ]);
    const json = await scrape({ url: `${base}/json`, extract_rules: { a: 'a' } });
    assert.equal(json.status, 200, json.text);
    assert.equal(json.body.response.extracted, null);
  });

  test('bad selectors and rules: 422 naming each, uncharged, nothing fetched', async () => {
    const before = site.log.length;
    const r = await scrape({ url: `${base}/product`, include_selectors: ['main', 'div >'], extract_rules: { price: { selector: '.price', type: 'attr' }, list: { selector: 'li', output: { x: 'a[' } } } });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors, {
      'include_selectors.1': ['The include_selectors.1 must be a valid CSS selector: "div >".'],
      'extract_rules.price.attr': ['The extract_rules.price.attr field is required when extract_rules.price.type is attr.'],
      'extract_rules.list.output.x': ['The extract_rules.list.output.x must be a valid CSS selector.'],
    });
    const shape = await scrape({ url: `${base}/product`, include_selectors: 'main', extract_rules: ['h1'] });
    assert.deepEqual(shape.body.errors, { include_selectors: ['The include selectors must be an array.'], extract_rules: ['The extract rules must be an array.'] });
    assert.equal(r.charged + shape.charged, 0);
    assert.equal(site.log.length, before);
  });

  test('browser options without the browser: 422 on each, uncharged', async () => {
    const r = await scrape({ url: `${base}/product`, wait_for: '#x', actions: [{ type: 'wait', milliseconds: 10 }], screenshot: true });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors, {
      wait_for: ['The wait for option needs the browser: set bypass_captcha to true.'],
      actions: ['The actions option needs the browser: set bypass_captcha to true.'],
      screenshot: ['The screenshot option needs the browser: set bypass_captcha to true.'],
    });
    assert.equal(r.charged, 0);
    const bad = await scrape({ url: `${base}/product`, bypass_captcha: true, wait_for: 60_000, screenshot: { type: 'gif' }, actions: [{ type: 'click' }, { type: 'dance' }] });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors.wait_for, ['The wait for must be a CSS selector or a number of milliseconds between 0 and 10000.']);
    assert.deepEqual(bad.body.errors.screenshot, ['The screenshot must be true, or an object with full_page (true or false) and type (png or jpeg).']);
    const actions = await scrape({ url: `${base}/product`, bypass_captcha: true, actions: [{ type: 'click' }, { type: 'dance' }, { type: 'press' }] });
    assert.deepEqual(actions.body.errors, {
      'actions.0.selector': ['The actions.0.selector field is required when actions.0.type is click.'],
      'actions.1.type': ['The selected actions.1.type is invalid.'],
      'actions.2.key': ['The actions.2.key field is required when actions.2.type is press.'],
    });
  });
});

describe('browser options', { skip: noBrowser }, () => {
  test('wait_for a selector on a page that renders late; the browser price', { timeout: 60_000 }, async () => {
    const r = await scrape({ url: `${site.url()}/late`, bypass_captcha: true, format: 'text', only_main_content: false, wait_for: '#late' });
    assert.equal(r.status, 200, r.text);
    assert.match(r.body.response.content, /Arrived late/);
    assert.equal(r.charged, 5);
  });

  test('wait_for a selector that never shows: 422 on wait_for, uncharged', { timeout: 60_000 }, async () => {
    const r = await scrape({ url: `${site.url()}/product`, bypass_captcha: true, wait_for: '#never' });
    assert.equal(r.status, 422, r.text);
    assert.match(r.body.errors.wait_for[0], /The wait_for selector "#never" did not appear/);
    assert.equal(r.charged, 0);
  });

  test('actions click "load more" twice; a failing action is a 422 on it, uncharged', { timeout: 60_000 }, async () => {
    const r = await scrape({
      url: `${site.url()}/load-more`,
      bypass_captcha: true,
      actions: [{ type: 'click', selector: '#more' }, { type: 'click', selector: '#more' }, { type: 'wait', selector: 'li:nth-child(6)' }],
      extract_rules: { items: { selector: '#items li', all: true } },
    });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.response.extracted.items, ['Item 1', 'Item 2', 'Item 3', 'Item 4', 'Item 5', 'Item 6']);
    assert.equal(r.charged, 5);
    const failing = await scrape({ url: `${site.url()}/load-more`, bypass_captcha: true, actions: [{ type: 'click', selector: '#more' }, { type: 'click', selector: '#missing' }] });
    assert.equal(failing.status, 422, failing.text);
    assert.match(failing.body.errors['actions.1'][0], /^The actions\.1 step \(click\) failed/);
    assert.equal(failing.charged, 0);
  });

  test('screenshots: viewport, full page, capped height, jpeg; one more credit each', { timeout: 120_000 }, async () => {
    const viewport = await scrape({ url: `${site.url()}/short`, bypass_captcha: true, screenshot: true });
    assert.equal(viewport.status, 200, viewport.text);
    assert.deepEqual(pngSize(Buffer.from(viewport.body.response.screenshot, 'base64')), { width: 1366, height: 768 });
    assert.equal(viewport.charged, 6);

    const full = await scrape({ url: `${site.url()}/short`, bypass_captcha: true, screenshot: { full_page: true } });
    assert.equal(full.status, 200, full.text);
    assert.deepEqual(pngSize(Buffer.from(full.body.response.screenshot, 'base64')), { width: 1366, height: 2000 });
    assert.equal(full.charged, 6);

    const tall = await scrape({ url: `${site.url()}/tall`, bypass_captcha: true, screenshot: { full_page: true, type: 'jpeg' } });
    assert.equal(tall.status, 200, tall.text);
    const jpeg = Buffer.from(tall.body.response.screenshot, 'base64');
    assert.deepEqual([...jpeg.subarray(0, 3)], [0xff, 0xd8, 0xff]);
    const sharp = (await import('sharp')).default;
    const meta = await sharp(jpeg).metadata();
    assert.equal(meta.height, MAX_SCREENSHOT_HEIGHT);
    assert.equal(tall.charged, 6);
  });
});

describe('a PDF URL', () => {
  test('markdown and text: the pages joined with page markers, 1 credit per page', async () => {
    const r = await scrape({ url: `${base}/report.pdf`, format: 'markdown' });
    assert.equal(r.status, 200, r.text);
    const content: string = r.body.response.content;
    assert.equal(r.body.response.page_count, 3);
    assert.deepEqual(content.match(/<!-- page \d+ -->/g), ['<!-- page 1 -->', '<!-- page 2 -->', '<!-- page 3 -->']);
    for (const lines of MULTI_PAGE_LINES) for (const line of lines) assert.ok(content.includes(line), line);
    assert.ok(content.indexOf('Quarterly report') < content.indexOf('<!-- page 2 -->'));
    assert.equal(r.charged, 3);

    for (const path of ['/files/report.pdf', '/download?id=7']) {
      const text = await scrape({ url: `${base}${path}`, format: 'text' });
      assert.equal(text.status, 200, `${path} ${text.text}`);
      assert.match(text.body.response.content, /^--- page 1 ---\n\nQuarterly report/);
      assert.equal(text.charged, 3, path);
    }
  });

  test('raw format: still "not a web page", uncharged; over 30 pages: 400, uncharged; a short balance: 403', async () => {
    const raw = await scrape({ url: `${base}/report.pdf` });
    assert.equal(raw.status, 422);
    assert.deepEqual(raw.body.errors.url, ['The url must point to a web page.']);
    assert.equal(raw.charged, 0);
    const long = await scrape({ url: `${base}/long.pdf`, format: 'text' });
    assert.equal(long.status, 400, long.text);
    assert.equal(long.body.message, 'The PDF has more than 30 pages.');
    assert.equal(long.charged, 0);
    const poor = await scrape({ url: `${base}/report.pdf`, format: 'text' }, 2);
    assert.equal(poor.status, 403, poor.text);
    assert.equal(poor.charged, 0);
  });
});
