/** robots.txt (src/adapters/site/robots.ts): its rules for our user agent, and the pure adapter that fetches it. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodedResponse } from '../../src/adapters/kit/runtime.ts';
import fc from 'fast-check';
import robotsParser from 'robots-parser';
import { MAX_CRAWL_DELAY_MS, MAX_ROBOTS_WILDCARD_RULES, readRobots, robotsAdapter, robotsProductToken, robotsUrlFor, ROBOTS_PARSE_LIMIT_BYTES } from '../../src/adapters/site/robots.ts';
import { MAX_URL_LENGTH } from '../../src/core/limits.ts';

// The package's types declare an ES default export; at run time the CommonJS module is the function itself.
const referenceParser = robotsParser as unknown as typeof robotsParser.default;

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

describe('readRobots on hostile files (issue 33: one link check took 861 ms)', () => {
  test('127 rules of 4,000 `*` each, on 2,000-character paths: every check linear, the verdicts right', () => {
    const body = `User-agent: *\n${`Disallow: /${'*'.repeat(4000)}z\n`.repeat(127)}`;
    const robots = readRobots(ROBOTS_URL, body, UA);
    // A quadratic matcher needs about a minute for these; the test finishing is the proof.
    for (let i = 0; i < 100; i++) {
      assert.equal(robots.isAllowed(`https://example.com/${'a'.repeat(2000)}`), true);
      assert.equal(robots.isAllowed(`https://example.com/${'a'.repeat(2000)}z`), false);
    }
  });

  test('`*` and a final `$`: any run, the end of the path; a `$` elsewhere is a character', () => {
    const robots = readRobots(ROBOTS_URL, 'User-agent: *\nDisallow: /a*b*c$\nDisallow: /x$y\nDisallow: /*.json$\nAllow: /a*b*c$x\nDisallow: /q**', UA);
    const allowed = (path: string) => robots.isAllowed(`https://example.com${path}`);
    assert.equal(allowed('/abc'), false);
    assert.equal(allowed('/a-b-b-c'), false);
    assert.equal(allowed('/abcc'), false, 'the last c at the end');
    assert.equal(allowed('/abcd'), true);
    assert.equal(allowed('/acb'), true);
    assert.equal(allowed('/x$y/z'), false);
    assert.equal(allowed('/x'), true);
    assert.equal(allowed('/data/a.json'), false);
    assert.equal(allowed('/data/a.json?x=1'), true);
    assert.equal(allowed('/q'), false);
    assert.equal(allowed('/robots.txt'), true);
  });

  test('characters a URL escapes are compared escaped on both sides', () => {
    const robots = readRobots(ROBOTS_URL, 'User-agent: *\nDisallow: /caf\u00e9\nDisallow: /a|b\nDisallow: /%7euser', UA);
    assert.equal(robots.isAllowed('https://example.com/caf%C3%A9/menu'), false);
    assert.equal(robots.isAllowed('https://example.com/café'), false);
    assert.equal(robots.isAllowed('https://example.com/a|b'), false);
    assert.equal(robots.isAllowed('https://example.com/%7Euser'), false);
  });

  test(`more than ${MAX_ROBOTS_WILDCARD_RULES} rules with \`*\` for us: read as "disallow everything"; literal rules have no such limit`, () => {
    const wildcards = (n: number) => `User-agent: *\n${Array.from({ length: n }, (_, i) => `Disallow: /*${i.toString(36)}qq\n`).join('')}`;
    assert.equal(readRobots(ROBOTS_URL, wildcards(MAX_ROBOTS_WILDCARD_RULES), UA).isAllowed('https://example.com/fine'), true);
    assert.equal(readRobots(ROBOTS_URL, wildcards(MAX_ROBOTS_WILDCARD_RULES + 1), UA).isAllowed('https://example.com/fine'), false);
    const literal = `User-agent: *\n${Array.from({ length: 20_000 }, (_, i) => `Disallow: /p${i}\n`).join('')}`;
    const robots = readRobots(ROBOTS_URL, literal, UA);
    assert.equal(robots.isAllowed('https://example.com/fine'), true);
    assert.equal(robots.isAllowed('https://example.com/p19999'), false);
  });

  test('a rule longer than any URL fetched is ignored: it could match none', () => {
    const robots = readRobots(ROBOTS_URL, `User-agent: *\nDisallow: /${'a'.repeat(MAX_URL_LENGTH)}\nDisallow: /${'*'.repeat(MAX_URL_LENGTH * 2)}b`, UA);
    assert.equal(robots.isAllowed(`https://example.com/${'a'.repeat(MAX_URL_LENGTH - 40)}`), true);
    assert.equal(robots.isAllowed('https://example.com/ab'), false, 'the run of `*` is one `*`');
  });
});

describe('readRobots against robots-parser (the package it replaces)', () => {
  // Ordinary files: every group has a rule, paths of a small alphabet. The two differ only where
  // RFC 9309 says more than the package does (an agent's group with no rule; /robots.txt itself).
  const piece = fc.constantFrom('/', 'a', 'b', 'ab', '.html', '?', '=', '-', '%2F', 'é');
  const rulePath = fc
    .tuple(fc.array(fc.oneof(piece, fc.constant('*')), { minLength: 0, maxLength: 6 }), fc.boolean())
    .map(([pieces, anchored]) => `/${pieces.join('')}${anchored ? '$' : ''}`);
  const rule = fc.tuple(fc.constantFrom('Allow', 'Disallow', 'disallow'), rulePath).map(([key, path]) => `${key}: ${path}`);
  const group = fc.tuple(fc.array(fc.constantFrom('*', 'gleaner', 'Gleaner/1.0', 'otherbot'), { minLength: 1, maxLength: 2 }), fc.array(rule, { minLength: 1, maxLength: 6 }));
  const file = fc.array(group, { minLength: 0, maxLength: 4 }).map((groups) => groups.map(([agents, rules]) => [...agents.map((a) => `User-agent: ${a}`), ...rules].join('\n')).join('\n\n'));
  const urlPath = fc.array(piece, { minLength: 0, maxLength: 8 }).map((pieces) => `/${pieces.join('')}`);

  test('the same verdict on every generated file and URL', () => {
    fc.assert(
      fc.property(file, fc.array(urlPath, { minLength: 1, maxLength: 8 }), (body, paths) => {
        const ours = readRobots(ROBOTS_URL, body, UA);
        const reference = referenceParser(ROBOTS_URL, body);
        for (const path of paths) {
          const url = `https://example.com${path}`;
          if (new URL(url).pathname === '/robots.txt') continue;
          assert.equal(ours.isAllowed(url), reference.isAllowed(url, 'gleaner') === true, `${url}\n${body}`);
        }
      }),
      { seed: 3309, numRuns: 2000 },
    );
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

  test('2xx: the text; 4xx and unfollowed redirects: no file (allow all); 5xx and 429: blocked', async () => {
    assert.deepEqual(await answer(200, 'User-agent: *\nDisallow: /'), { kind: 'ok', value: 'User-agent: *\nDisallow: /' });
    for (const status of [400, 401, 403, 404, 410, 301]) assert.deepEqual(await answer(status), { kind: 'ok', value: null }, String(status));
    for (const status of [429, 500, 502, 503]) {
      const outcome = await answer(status);
      assert.equal(outcome.kind, 'blocked', String(status));
    }
  });
});
