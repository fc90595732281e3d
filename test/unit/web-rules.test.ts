/** The pure parts of /v1/web: blocked domains, header filtering, charsets, content types, formats, solver tasks. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createDomainBlocklist } from '../../src/adapters/web/blocked-domains.ts';
import { forwardableRequestHeaders, isHeaderObject, returnedResponseHeaders } from '../../src/adapters/web/headers.ts';
import { decodePage } from '../../src/adapters/web/charset.ts';
import { isWebContent } from '../../src/adapters/web/content-type.ts';
import { extractLinks, renderContent } from '../../src/adapters/web/formats.ts';
import { captchaTask } from '../../src/adapters/web/solver.ts';
import { plainRequestParts } from '../../src/adapters/web/scraper.ts';
import { articlePage, ARTICLE_HEADINGS, ARTICLE_PARAGRAPHS, CHROME_TEXTS } from '../support/web-fixtures.ts';

describe('blocked domains', () => {
  const blocklist = createDomainBlocklist(['example.org']);

  test('the domain and every subdomain, any case, trailing dot, IDN forms', () => {
    for (const host of ['facebook.com', 'm.facebook.com', 'WWW.FaceBook.COM', 'facebook.com.', 'a.b.c.reddit.com', 'ｆａｃｅｂｏｏｋ.com', 'x.com', 'old.reddit.com', 'youtube.com']) {
      assert.equal(blocklist.isBlocked(host), true, host);
    }
  });

  test('YouTube (its short links, embeds and country sites) and Freelancer (its country sites)', () => {
    for (const host of ['youtube.com', 'www.youtube.com', 'm.youtube.com', 'music.youtube.com', 'youtu.be', 'www.youtube-nocookie.com', 'youtube.co.uk', 'freelancer.com', 'www.freelancer.com', 'freelancer.co.uk', 'www.freelancer.in', 'freelancer.com.au']) {
      assert.equal(blocklist.isBlocked(host), true, host);
    }
    for (const host of ['notyoutube.com', 'youtube.com.evil.example', 'freelancer.example.com', 'myfreelancer.com', 'freelancers.com']) assert.equal(blocklist.isBlocked(host), false, host);
  });

  test('google under every public suffix', () => {
    for (const host of ['google.com', 'www.google.co.uk', 'google.com.br', 'news.google.de', 'GOOGLE.CO.JP.']) assert.equal(blocklist.isBlocked(host), true, host);
  });

  test('look-alikes and other domains pass', () => {
    for (const host of ['notfacebook.com', 'facebook.com.evil.example', 'google.com.evil.example', 'xx.com', 'googleusercontent.example', 'example.com', '127.0.0.1', '::1']) {
      assert.equal(blocklist.isBlocked(host), false, host);
    }
  });

  test('WEB_BLOCKED_DOMAINS entries extend the list, punycode and unicode alike', () => {
    assert.equal(blocklist.isBlocked('deep.sub.example.org'), true);
    const idn = createDomainBlocklist(['bücher.example']);
    assert.equal(idn.isBlocked('xn--bcher-kva.example'), true);
    assert.equal(idn.isBlocked('shop.BÜCHER.example'), true);
    const wildcard = createDomainBlocklist(['*.example.net', 'amazon.*']);
    assert.equal(wildcard.isBlocked('example.net'), true);
    assert.equal(wildcard.isBlocked('www.amazon.co.uk'), true);
  });

  test('a malformed entry is refused', () => {
    assert.throws(() => createDomainBlocklist(['not a domain']), /Invalid blocked domain/);
    assert.throws(() => createDomainBlocklist(['10.0.0.1']), /Invalid blocked domain/);
    assert.throws(() => createDomainBlocklist(['com']), /Invalid blocked domain/);
  });
});

describe('request headers', () => {
  test('hop-by-hop, Host, Content-Length, Accept-Encoding and every Proxy-* header are dropped', () => {
    const kept = forwardableRequestHeaders({
      'User-Agent': 'ua',
      Accept: 'text/html',
      Cookie: 'a=b',
      Host: 'internal.example',
      Connection: 'keep-alive, X-Secret',
      'X-Secret': 'x',
      'Keep-Alive': '5',
      'Transfer-Encoding': 'chunked',
      TE: 'trailers',
      Upgrade: 'websocket',
      'Proxy-Authorization': 'Basic Zm9vOmJhcg==',
      'Proxy-Connection': 'keep-alive',
      'Content-Length': '99',
      'Accept-Encoding': 'compress',
    });
    assert.deepEqual(kept, { 'user-agent': 'ua', accept: 'text/html', cookie: 'a=b' });
  });

  test('only objects of valid names and string values without line breaks are headers', () => {
    assert.equal(isHeaderObject({ 'X-A': 'b' }), true);
    assert.equal(isHeaderObject({ 'X-A': 1 }), false);
    assert.equal(isHeaderObject({ 'X-A': 'b\r\nHost: evil' }), false);
    assert.equal(isHeaderObject({ 'bad name': 'b' }), false);
    assert.equal(isHeaderObject(['a']), false);
  });

  test('a JSON body is sent as JSON, a string as is', () => {
    assert.deepEqual(plainRequestParts({ body: { a: 1 } }), { headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    assert.deepEqual(plainRequestParts({ body: 'a=1', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }), {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=1',
    });
  });

  test('transfer headers of the answer are left out', () => {
    assert.deepEqual(returnedResponseHeaders({ 'Content-Type': 'text/html', 'Transfer-Encoding': 'chunked', Connection: 'close', 'Set-Cookie': 'a=b' }), {
      'content-type': 'text/html',
      'set-cookie': 'a=b',
    });
  });
});

describe('charsets', () => {
  const cp1251 = Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]); // Привет
  const sjis = Buffer.from([0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]); // 日本語
  const gbk = Buffer.from([0xd6, 0xd0, 0xce, 0xc4]); // 中文

  test('the Content-Type charset', () => {
    assert.equal(decodePage(cp1251, 'text/html; charset=windows-1251').text, 'Привет');
    assert.equal(decodePage(sjis, 'text/html; charset="Shift_JIS"').text, '日本語');
    assert.equal(decodePage(gbk, 'text/plain;charset=gb2312').text, '中文');
    // Either quote; only the label's characters (the same reading as the adapter kit's decodeBody).
    assert.equal(decodePage(cp1251, "text/html; charset='windows-1251'").text, 'Привет');
    assert.equal(decodePage(cp1251, 'text/html; charset=windows-1251,text/plain').text, 'Привет');
  });

  test('a <meta charset> or http-equiv when the header has none', () => {
    const page = Buffer.concat([Buffer.from('<html><head><meta charset="windows-1251"></head><body>'), cp1251, Buffer.from('</body></html>')]);
    assert.match(decodePage(page, 'text/html').text, /Привет/);
    const equiv = Buffer.concat([Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'), sjis]);
    const decoded = decodePage(equiv, undefined);
    assert.equal(decoded.encoding, 'shift_jis');
    assert.match(decoded.text, /日本語/);
  });

  test('a byte-order mark: UTF-16 in either order, UTF-8', () => {
    const text = '<p>Grüße, 世界</p>';
    assert.equal(decodePage(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]), 'text/html').text, text);
    const be = Buffer.from(text, 'utf16le').swap16();
    assert.equal(decodePage(Buffer.concat([Buffer.from([0xfe, 0xff]), be]), undefined).text, text);
    assert.equal(decodePage(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), 'text/html; charset=iso-8859-1').text, text);
  });

  test('UTF-8 by default; an unknown label falls through', () => {
    assert.equal(decodePage(Buffer.from('héllo'), 'text/html').text, 'héllo');
    assert.equal(decodePage(Buffer.from('héllo'), 'text/html; charset=bogus-8').text, 'héllo');
  });
});

describe('content types', () => {
  const text = Buffer.from('<html></html>');
  test('text, JSON and XML are pages; images, PDFs and octet-stream are not', () => {
    for (const type of ['text/html; charset=utf-8', 'application/json', 'application/rss+xml', 'application/ld+json', 'text/plain']) assert.equal(isWebContent(type, text), true, type);
    for (const type of ['image/png', 'application/pdf', 'application/octet-stream', 'video/mp4', 'application/zip', 'font/woff2']) {
      assert.equal(isWebContent(type, Buffer.from([0x25, 0x50, 0x44, 0x46, 0x00, 0x01])), false, type);
    }
  });
  test('without a type the first bytes decide', () => {
    assert.equal(isWebContent(undefined, text), true);
    assert.equal(isWebContent(undefined, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00])), false);
  });
});

describe('output formats', () => {
  const page = articlePage();

  test('markdown keeps every heading and paragraph of the article and nothing from nav, aside or footer', () => {
    const markdown = renderContent(page, 'https://site.example/blog/post', { format: 'markdown' });
    for (const heading of ARTICLE_HEADINGS) assert.match(markdown, new RegExp(`^#{1,3} ${heading}$`, 'm'), heading);
    for (const paragraph of ARTICLE_PARAGRAPHS) assert.ok(markdown.includes(paragraph), paragraph.slice(0, 30));
    for (const chrome of CHROME_TEXTS) assert.ok(!markdown.includes(chrome), `"${chrome}" left out`);
    assert.match(markdown, /\[the second post\]\(https:\/\/site\.example\/blog\/second\)/, 'links are absolute');
    assert.match(markdown, /^- +first point$/m, 'lists');
    assert.match(markdown, /^\| Plan +\| Credits +\|\n\| -+ \| -+ \|\n\| Starter +\| 1000 +\|$/m, 'tables');
    assert.match(markdown, /^```\nconst answer = 42;\n```$/m, 'code blocks');
  });

  test('text keeps the article, one block a line', () => {
    const text = renderContent(page, 'https://site.example/blog/post', { format: 'text' });
    // The article's own heading comes first, once, as in the Markdown (docs/web.md).
    const [title, ...sections] = ARTICLE_HEADINGS;
    assert.ok(text.startsWith(`${title}\n`), 'text starts with the title, as the Markdown does');
    assert.equal(text.split(title).length, 2, 'the title once');
    const markdown = renderContent(page, 'https://site.example/blog/post', { format: 'markdown' });
    assert.ok(markdown.startsWith(`# ${title}\n`), 'the Markdown starts with the same heading');
    for (const heading of sections) assert.match(text, new RegExp(`^${heading}$`, 'm'));
    for (const paragraph of ARTICLE_PARAGRAPHS) assert.ok(text.includes(paragraph));
    for (const chrome of CHROME_TEXTS) assert.ok(!text.includes(chrome), `"${chrome}" left out`);
    assert.ok(!text.includes('<'), 'no markup');
  });

  test('a page without an article falls back to the body without scripts, styles and navigation', () => {
    const html = '<html><head><style>.a{color:red}</style></head><body><nav>Menu entry</nav><h1>Status</h1><p>All systems go.</p><script>var secret = 1;</script><footer>Legal</footer></body></html>';
    const markdown = renderContent(html, 'https://site.example/', { format: 'markdown' });
    assert.match(markdown, /# Status/);
    assert.match(markdown, /All systems go\./);
    for (const left of ['Menu entry', 'secret', 'color:red', 'Legal']) assert.ok(!markdown.includes(left), left);
  });

  test('links: absolute, deduplicated, in page order, http(s) only', () => {
    const html = '<base href="https://site.example/docs/"><a href="a">A</a><a href="/b#x">B</a><a href="a">again</a><a href="mailto:x@example.com">m</a><a href="javascript:void(0)">j</a><a href="https://other.example/c">C</a><a href="/b#y">B again</a>';
    assert.deepEqual(extractLinks(html, 'https://site.example/index.html'), ['https://site.example/docs/a', 'https://site.example/b', 'https://other.example/c']);
  });
});

describe('solver tasks', () => {
  const widget = { siteKey: 'key', pageUrl: 'https://site.example/form' };
  test('task types per flavour, v3 with action and score', () => {
    assert.deepEqual(captchaTask({ ...widget, kind: 'recaptcha_v2' }, 'anticaptcha'), { type: 'RecaptchaV2TaskProxyless', websiteURL: widget.pageUrl, websiteKey: 'key' });
    assert.equal(captchaTask({ ...widget, kind: 'turnstile' }, 'capsolver').type, 'AntiTurnstileTaskProxyLess');
    assert.deepEqual(captchaTask({ ...widget, kind: 'recaptcha_v3', action: 'login' }, 'anticaptcha'), {
      type: 'RecaptchaV3TaskProxyless',
      websiteURL: widget.pageUrl,
      websiteKey: 'key',
      pageAction: 'login',
      minScore: 0.7,
    });
    assert.equal(captchaTask({ ...widget, kind: 'hcaptcha' }, 'anticaptcha').type, 'HCaptchaTaskProxyless');
  });

  test("Turnstile's action and customer data, in each flavour's names", () => {
    const turnstile = { ...widget, kind: 'turnstile' as const, action: 'login', cData: 'c-42' };
    assert.deepEqual(captchaTask(turnstile, 'capsolver'), {
      type: 'AntiTurnstileTaskProxyLess',
      websiteURL: widget.pageUrl,
      websiteKey: 'key',
      metadata: { action: 'login', cdata: 'c-42' },
    });
    assert.deepEqual(captchaTask(turnstile, 'anticaptcha'), {
      type: 'TurnstileTaskProxyless',
      websiteURL: widget.pageUrl,
      websiteKey: 'key',
      action: 'login',
      cData: 'c-42',
      turnstileCData: 'c-42',
      data: 'c-42',
    });
    assert.deepEqual(captchaTask({ ...widget, kind: 'turnstile', cData: 'c-42' }, 'capsolver').metadata, { cdata: 'c-42' });
    assert.equal('metadata' in captchaTask({ ...widget, kind: 'turnstile' }, 'capsolver'), false);
  });
});
