/**
 * `extract_rules`, `include_selectors` and `exclude_selectors` of /v1/web run in the conversion
 * processes, on the page as fetched, in the same task as the conversion: the scraper never parses
 * a page on the event loop, the answers are the functions' own, and a page too large for them is
 * blamed on the option that asked for the work.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ConvertTask, type PageConverter } from '../../src/adapters/web/converter.ts';
import { convertersClosedAfter } from '../support/converters.ts';
import { convertPage } from '../../src/adapters/web/formats.ts';
import { extractRules, MAX_EXTRACT_ITEMS } from '../../src/adapters/web/extract-rules.ts';
import { applySelectorFilter } from '../../src/adapters/web/selectors.ts';
import { createDomainBlocklist, createWebScraper, type WebRequest } from '../../src/adapters/web/index.ts';
import type { UpstreamRuntime } from '../../src/adapters/kit/runtime.ts';
import { articlePage, largeArticlePage } from '../support/web-fixtures.ts';

const PAGE_URL = 'https://site.example/blog/post';
const small = articlePage();
/** Seconds of parsing on any machine: the orderings below have that much room. */
const large = largeArticlePage(4 * 1024 * 1024);
const RULES = { title: 'h1', sections: { selector: 'h2', all: true }, first: { selector: 'article a', type: 'attr', attr: 'href' } } as const;

const converter = convertersClosedAfter();

/** A scraper whose every fetch answers `html` (an HTML page unless told), converting with `pool`. */
function scraperServing(html: string, pool: PageConverter, contentType = 'text/html; charset=utf-8') {
  const runtime = {
    upstream: () => ({
      call: async () => ({ kind: 'ok', value: { kind: 'page', url: PAGE_URL, status: 200, headers: { 'content-type': contentType }, content: html } }),
    }),
  } as unknown as UpstreamRuntime;
  return createWebScraper({ timeoutMs: 10_000, browserTimeoutMs: 10_000, proxyConfigured: false }, { runtime, browser: async () => null, blocklist: createDomainBlocklist(), converter: pool });
}

const request = (options: Partial<WebRequest>): WebRequest => ({ url: PAGE_URL, method: 'GET', browser: false, format: 'raw', links: false, ...options });

/** The pool, with every task it is handed kept for the test to read. */
function recording(pool: PageConverter): { pool: PageConverter; tasks: ConvertTask[] } {
  const tasks: ConvertTask[] = [];
  return { tasks, pool: { ...pool, convert: (task, signal, ...rest) => (tasks.push(task), pool.convert(task, signal, ...rest)) } };
}

/** Until the pool has a page in a process, or `done` says the work is over (were it done on this thread). */
async function busy(pool: PageConverter, done: () => boolean): Promise<void> {
  while (pool.stats().busy === 0 && !done()) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('rules and selectors in the conversion processes', () => {
  test('a process answers what the functions answer, and what the rules and selectors gave on the request thread before', async () => {
    const pool = converter({ processes: 1 });
    for (const options of [
      { format: 'raw', links: false, extractRules: RULES, includeSelectors: ['article'], excludeSelectors: ['ul'] },
      { format: 'markdown', links: true, extractRules: RULES, includeSelectors: ['article'] },
      { format: 'text', links: false, excludeSelectors: ['nav', 'footer'] },
      { format: 'raw', links: true, extractRules: RULES },
    ] as const) {
      const outcome = await pool.convert({ html: small, pageUrl: PAGE_URL, ...options });
      const expected = convertPage(small, PAGE_URL, options);
      assert.deepEqual(outcome, { kind: 'ok', page: expected }, JSON.stringify(options));
      const filter = { include: 'includeSelectors' in options ? options.includeSelectors : undefined, exclude: 'excludeSelectors' in options ? options.excludeSelectors : undefined };
      const rules = 'extractRules' in options ? options.extractRules : undefined;
      if (rules !== undefined) assert.deepEqual(expected.extracted, extractRules(small, rules));
      if (options.format === 'raw' && filter.include !== undefined) assert.equal(expected.content, applySelectorFilter(small, filter));
      if (options.format !== 'raw') assert.deepEqual(expected.content, convertPage(applySelectorFilter(small, filter), PAGE_URL, { format: options.format, links: false }).content);
    }
  });

  test('the scraper hands the page as fetched to the converter: rules, selectors and conversion are one task, and the answer comes from it', async () => {
    const { pool, tasks } = recording(converter({ processes: 1 }));
    const outcome = await scraperServing(small, pool).scrape(request({ format: 'markdown', extractRules: RULES, includeSelectors: ['article'], excludeSelectors: ['ul'] }), {});
    assert.equal(tasks.length, 1);
    assert.equal(tasks[0]!.html, small, 'the page went to the process untouched: the scraper did not trim it');
    assert.deepEqual([tasks[0]!.extractRules, tasks[0]!.includeSelectors, tasks[0]!.excludeSelectors], [RULES, ['article'], ['ul']]);
    assert.equal(outcome.kind, 'ok');
    const page = outcome.kind === 'ok' ? outcome.page : undefined;
    assert.deepEqual(page?.extracted, extractRules(small, RULES));
    assert.equal(page?.content, convertPage(applySelectorFilter(small, { include: ['article'], exclude: ['ul'] }), PAGE_URL, { format: 'markdown', links: false }).content);
    // The answer's fields keep their order: the content, then what the rules read, then the metadata.
    assert.deepEqual(Object.keys(page ?? {}), ['url', 'status_code', 'headers', 'content', 'extracted', 'metadata']);
    // Raw with only a selector is a task too; a page that is no HTML is never sent.
    const raw = await scraperServing(small, pool).scrape(request({ excludeSelectors: ['nav'] }), {});
    assert.equal(raw.kind === 'ok' && raw.page.content, applySelectorFilter(small, { exclude: ['nav'] }));
    assert.equal(tasks.length, 2);
    const json = await scraperServing('{"a": 1}', pool, 'application/json').scrape(request({ extractRules: RULES }), {});
    assert.equal(json.kind === 'ok' && json.page.extracted, null);
  });

  test('the event loop keeps running while a 4 MB page has its rules read and its selectors applied', async () => {
    const pool = converter({ processes: 1 });
    const order: string[] = [];
    const scraping = scraperServing(large, pool)
      .scrape(request({ extractRules: { sections: { selector: 'h2', all: true } }, includeSelectors: ['article'], excludeSelectors: ['ul'] }), {})
      .then((outcome) => {
        order.push('scraped');
        return outcome;
      });
    // The page is in its process: on the request thread, cheerio would hold the event loop from
    // before this point until the page is done, and the timer below could not fire first.
    await busy(pool, () => order.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 0));
    order.push('timer');
    assert.equal(pool.stats().busy, 1, 'the page was still in its process when the timer fired');
    const outcome = await scraping;
    assert.deepEqual(order, ['timer', 'scraped']);
    assert.equal(outcome.kind, 'ok');
    const page = outcome.kind === 'ok' ? outcome.page : undefined;
    assert.deepEqual((page?.extracted as { sections: string[] }).sections.slice(0, 2), ['Section 0', 'Section 1']);
    assert.equal((page?.extracted as { sections: string[] }).sections.length, Math.min(MAX_EXTRACT_ITEMS, large.match(/<h2>/g)!.length));
    assert.ok(page?.content.includes('<article><h1>Big</h1><h2>Section 0</h2>'));
    assert.doesNotMatch(page?.content ?? '', /<ul>|<nav>/);
  });

  test('a page past the time limit is blamed on what asked for the work: the format, the links, the rules, else the selectors', async () => {
    const pool = converter({ processes: 1, timeoutMs: 50 });
    const web = scraperServing(large, pool);
    const blamed = async (options: Partial<WebRequest>) => {
      const outcome = await web.scrape(request(options), {});
      return outcome.kind === 'not_converted' ? outcome.what : outcome.kind;
    };
    assert.equal(await blamed({ format: 'text', links: true, extractRules: RULES }), 'text');
    assert.equal(await blamed({ links: true, extractRules: RULES, includeSelectors: ['p'] }), 'links');
    assert.equal(await blamed({ extractRules: RULES, includeSelectors: ['p'] }), 'extract_rules');
    assert.equal(await blamed({ excludeSelectors: ['p'] }), 'selectors');
    // Nothing asked of the page: no task, the page as it came.
    assert.equal(await blamed({ includeSelectors: [], excludeSelectors: [] }), 'ok');
  });
});
