/** Which URLs a crawl admits (src/jobs/crawl-rules.ts) and the job settings' arithmetic. */
import test from 'node:test';
import assert from 'node:assert/strict';
import { crawlRules, type CrawlParams } from '../../src/jobs/crawl-rules.ts';
import { readRobots } from '../../src/adapters/site/robots.ts';
import { webhookRetryLimit } from '../../src/jobs/settings.ts';
import { pageRequestId } from '../../src/jobs/worker.ts';

const ROBOTS = 'User-agent: *\nDisallow: /private/\nCrawl-delay: 2\nSitemap: https://example.com/sitemap_index.xml\n';

const BUDGET = { budgetMs: 10_000 };

function rules(params: Partial<CrawlParams> = {}, robots = ROBOTS) {
  return crawlRules({ url: 'https://example.com/docs/', limit: 100, max_depth: 3, ...params }, readRobots('https://example.com/robots.txt', robots, 'gleaner'));
}

test('admits same-site pages once by canonical form, never robots-disallowed or off-site ones', async () => {
  // The www. twin is the same site; its own robots.txt is read when it is fetched.
  const { pages: found, cut } = await rules().admit(
    [
      'https://example.com/docs/a?utm_source=news',
      'https://example.com/docs/a#section',
      'https://example.com/docs/a/',
      'https://www.example.com/docs/b',
      'https://example.com/private/secret',
      'https://www.example.com/private/secret-twin',
      'https://other.example.org/docs/c',
      'https://blog.example.com/post',
      'http://169.254.169.254/latest/meta-data/',
      'mailto:someone@example.com',
      'javascript:void(0)',
    ],
    2,
    BUDGET,
  );
  assert.equal(cut, 0);
  assert.deepEqual(
    found.map((page) => [page.url, page.depth]),
    [
      ['https://example.com/docs/a', 2],
      ['https://www.example.com/docs/b', 2],
      ['https://www.example.com/private/secret-twin', 2],
    ],
  );
});

test('subdomains join only when asked', async () => {
  const urls = ['https://blog.example.com/post'];
  assert.equal((await rules().admit(urls, 1, BUDGET)).pages.length, 0);
  assert.equal((await rules({ allow_subdomains: true }).admit(urls, 1, BUDGET)).pages.length, 1);
});

test('include and exclude patterns filter by path; the start page is fetched whatever they say', async () => {
  const r = rules({ include_paths: ['^/docs/guide/'], exclude_paths: ['/old$'] });
  const { pages: found } = await r.admit(['https://example.com/docs/guide/x', 'https://example.com/docs/guide/old', 'https://example.com/docs/api/y'], 1, BUDGET);
  assert.deepEqual(found.map((page) => page.url), ['https://example.com/docs/guide/x']);
  assert.deepEqual(r.start().map((page) => page.url), ['https://example.com/docs/']);
});

test('hostile patterns and a hostile robots.txt: every link judged, in slices that leave the event loop free', async () => {
  const robots = `User-agent: *\n${`Disallow: /${'*'.repeat(4000)}z\n`.repeat(127)}`;
  const r = rules({ include_paths: ['^/(a|a)*$', '^/a*a*a*a*a*a*a*a*b$', '^/(\\w|\\d)*$', '(x|x|x)*y'] }, robots);
  const links = Array.from({ length: 1000 }, (_, i) => `https://example.com/${'a'.repeat(2000)}${i % 2 ? 'z' : ''}?n=${i}`);
  let turns = 0;
  const ticker = setInterval(() => (turns += 1), 1);
  const { pages, cut } = await r.admit(links, 1, BUDGET);
  clearInterval(ticker);
  assert.equal(cut, 0);
  // `/aaa…` matches `^/(a|a)*$`; with a trailing z it is disallowed by `/*z`.
  assert.equal(pages.length, 500);
  assert.ok(pages.every((page) => !page.url.includes('z')));
  assert.ok(turns > 0, 'other work ran while the links were judged');
});

test('a budget spent leaves the rest of the links unjudged, and says how many', async () => {
  const r = rules();
  const links = Array.from({ length: 200_000 }, (_, i) => `https://example.com/docs/p${i}`);
  const { pages, cut } = await r.admit(links, 1, { budgetMs: 20 });
  assert.ok(cut > 0, 'the budget ran out');
  assert.equal(pages.length + cut, links.length);
});

test('the start origin alone is judged by the start robots.txt', () => {
  const r = rules();
  assert.equal(r.sameOrigin('https://example.com/x'), true);
  assert.equal(r.sameOrigin('https://www.example.com/x'), false);
  assert.equal(r.sameOrigin('http://example.com/x'), false);
});

test('robots.txt has the last word on the start page too, and its crawl-delay is read', () => {
  const r = rules({ url: 'https://example.com/private/start' });
  assert.deepEqual(r.start(), []);
  assert.equal(r.robots.crawlDelayMs, 2_000);
  assert.equal(rules({}, '').robots.crawlDelayMs, 0);
});

test('a redirect may end anywhere on the site, not elsewhere', () => {
  const r = rules();
  assert.equal(r.inScope('https://example.com/elsewhere'), true);
  assert.equal(r.inScope('https://evil.example.net/'), false);
  assert.equal(r.inScope('not a url'), false);
});

test('webhook retries span at least 24 hours whatever the first delay', () => {
  for (const base of [1, 5, 30, 600, 3_600]) {
    const limit = webhookRetryLimit(base);
    let total = 0;
    for (let retry = 0; retry < limit; retry++) total += Math.min(3_600, base * 2 ** retry);
    assert.ok(total >= 86_400, `base ${base}: ${total} s`);
    assert.ok(total - Math.min(3_600, base * 2 ** (limit - 1)) < 86_400, `base ${base}: one retry too many`);
  }
});

test("a page's hold id is fixed by its job and canonical URL, and short", () => {
  const id = pageRequestId('0b9f0d8e-3c1a-4f6e-9d2b-7a5c4e3f2a10', 'https://example.com/a');
  assert.equal(id, pageRequestId('0b9f0d8e-3c1a-4f6e-9d2b-7a5c4e3f2a10', 'https://example.com/a'));
  assert.notEqual(id, pageRequestId('0b9f0d8e-3c1a-4f6e-9d2b-7a5c4e3f2a10', 'https://example.com/b'));
  assert.ok(id.length < 80);
});
