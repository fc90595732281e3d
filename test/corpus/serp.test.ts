/**
 * Corpus tier: the engine parsers on real recorded result pages (CORPUS_DIR/serp, listed in
 * CORPUS_DIR/SOURCES.md). Organic counts are what a reader counts on each page; *.NEGATIVE.*
 * pages (captcha, challenge, JavaScript shell) must read as `blocked`.
 *
 * serp/duckduckgo/ddg-lite-trimmed.html comes from the lite endpoint (lite.duckduckgo.com),
 * not the html endpoint the adapter queries; its table layout is cheap to read, so the
 * DuckDuckGo parser supports both and is held to the lite page's 3 results too.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { corpusDir } from '../support/corpus.ts';
import { ENGINES, isEngineName } from '../../src/adapters/search/engines/index.ts';
import type { SearchResult } from '../../src/adapters/search/types.ts';

interface Expectation {
  /** The address the page was served from (block detection reads the final URL). */
  url: string;
  organic: number;
  /** Results allowed an empty field because the page shows none for them. */
  emptyDescriptions?: number;
  emptyMeta?: number;
  first?: { title: string; url: string; meta_data?: string };
}

const EXPECTED: Record<string, Expectation> = {
  'bing/bing-http.html': {
    url: 'https://www.bing.com/search?q=javascript+tutorial',
    organic: 10,
    first: { title: 'JavaScript Tutorial - W3Schools', url: 'https://www.w3schools.com/Js/', meta_data: 'https://www.w3schools.com › Js' },
  },
  'brave/brave.html': {
    url: 'https://search.brave.com/search?q=javascript+tutorial',
    organic: 20,
    first: { title: 'JavaScript Tutorial', url: 'https://www.w3schools.com/js/', meta_data: 'w3schools.com › js' },
  },
  'duckduckgo/ddg-html-openclaw.html': {
    url: 'https://html.duckduckgo.com/html/',
    organic: 10,
    first: { title: 'OpenClaw — Personal AI Assistant', url: 'https://openclaw.ai/', meta_data: 'openclaw.ai' },
  },
  'duckduckgo/ddg-lite-trimmed.html': {
    url: 'https://lite.duckduckgo.com/lite/',
    organic: 3,
    // The upstream trimmed the display-URL row of the third result.
    emptyMeta: 1,
    first: { title: 'Send | langgraph | LangChain Reference', url: 'https://reference.langchain.com/python/langgraph/types/Send' },
  },
  'google/google-desktop.html': {
    url: 'https://www.google.com/search?q=google',
    // 9 organic; "People also ask", "Top stories" and the knowledge panel are not results.
    organic: 9,
    first: { title: 'Google', url: 'https://google.com/', meta_data: 'https://google.com' },
  },
  'google/google-nojs.html': {
    url: 'https://www.google.com/search?q=google&gbv=1',
    // 10 organic; the knowledge panel block and related searches are not results.
    organic: 10,
    first: { title: 'Google', url: 'https://www.google.com/', meta_data: 'www.google.com' },
  },
  'mojeek/mojeek.html': {
    url: 'https://www.mojeek.com/search?q=javascript+tutorial',
    organic: 10,
    // The w3schools.com/js result is shown without a snippet.
    emptyDescriptions: 1,
    first: { title: 'The Modern JavaScript Tutorial', url: 'https://javascript.info/', meta_data: 'https://javascript.info/' },
  },
  'startpage/startpage-http.html': {
    url: 'https://www.startpage.com/sp/search',
    organic: 10,
    first: { title: 'JavaScript Tutorial - W3Schools', url: 'https://www.w3schools.com/js/', meta_data: 'https://www.w3schools.com › js' },
  },
};

const NEGATIVE_URLS: Record<string, string> = {
  'bing/bing-challenge.NEGATIVE.html': 'https://www.bing.com/search?q=javascript+tutorial',
  'duckduckgo/ddg-standard-jsshell.NEGATIVE.html': 'https://duckduckgo.com/?q=openclaw',
  'google/google-recaptcha.NEGATIVE.html': 'https://www.google.com/search?q=.com+domains',
};

const WRAPPED_REDIRECT = /google\.[a-z.]+\/url\?|bing\.com\/ck\/a|duckduckgo\.com\/l\//i;

const { dir, skip } = corpusDir('serp');

function serpPages(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.html'))
    .map((file) => file.split(path.sep).join('/'))
    .sort();
}

/** The serp/ rows of SOURCES.md: relative path → description. */
function sourcesRows(root: string): Map<string, string> {
  const sources = path.join(root, '..', 'SOURCES.md');
  const rows = new Map<string, string>();
  if (!existsSync(sources)) return rows;
  for (const line of readFileSync(sources, 'utf8').split('\n')) {
    const cells = line.split(' | ');
    if (cells[0]?.startsWith('serp/')) rows.set(cells[0].slice('serp/'.length), cells.at(-1) ?? '');
  }
  return rows;
}

function parsePage(file: string, url: string) {
  const engine = file.split('/')[0];
  assert.ok(isEngineName(engine), `no engine for folder ${engine}`);
  const body = readFileSync(path.join(dir, file), 'utf8');
  return ENGINES[engine].parse({ status: 200, url, headers: { 'content-type': 'text/html; charset=utf-8' }, body });
}

function isNormalised(text: string): boolean {
  return text === text.trim() && !/\s{2,}|[\n\t\r]/.test(text);
}

describe('SERP corpus', { skip }, () => {
  test('every page is listed in SOURCES.md and has an expectation here', () => {
    const rows = sourcesRows(dir);
    const pages = serpPages(dir);
    assert.ok(pages.length > 0);
    for (const page of pages) {
      assert.ok(rows.has(page), `${page} is not in SOURCES.md`);
      assert.ok(page.includes('.NEGATIVE.') ? NEGATIVE_URLS[page] : EXPECTED[page], `${page} has no expectation in this test`);
    }
  });

  test('counts stated in SOURCES.md agree with the expectations', () => {
    for (const [page, description] of sourcesRows(dir)) {
      const stated = /(\d+) (?:b_algo )?results/.exec(description);
      if (stated && EXPECTED[page]) assert.equal(EXPECTED[page].organic, Number(stated[1]), page);
    }
  });

  for (const [page, expectation] of Object.entries(EXPECTED)) {
    test(`${page}: ${expectation.organic} organic results with clean fields and direct URLs`, () => {
      const outcome = parsePage(page, expectation.url);
      assert.equal(outcome.kind, 'ok', JSON.stringify(outcome));
      const results: SearchResult[] = outcome.kind === 'ok' ? outcome.value : [];
      assert.equal(results.length, expectation.organic);

      for (const result of results) {
        assert.ok(result.title !== '', `empty title: ${JSON.stringify(result)}`);
        const url = new URL(result.url);
        assert.ok(url.protocol === 'https:' || url.protocol === 'http:', result.url);
        assert.doesNotMatch(result.url, WRAPPED_REDIRECT);
        for (const field of [result.title, result.description, result.meta_data]) assert.ok(isNormalised(field), JSON.stringify(field));
      }
      const emptyDescriptions = results.filter((result) => result.description === '').length;
      const emptyMeta = results.filter((result) => result.meta_data === '').length;
      assert.equal(emptyDescriptions, expectation.emptyDescriptions ?? 0, 'results without description');
      assert.equal(emptyMeta, expectation.emptyMeta ?? 0, 'results without meta_data');

      if (expectation.first) {
        const { meta_data, ...identity } = expectation.first;
        assert.deepEqual({ title: results[0].title, url: results[0].url }, identity);
        if (meta_data !== undefined) assert.equal(results[0].meta_data, meta_data);
      }
    });
  }

  for (const [page, url] of Object.entries(NEGATIVE_URLS)) {
    test(`${page}: blocked, never no_results`, () => {
      const outcome = parsePage(page, url);
      assert.equal(outcome.kind, 'blocked', JSON.stringify(outcome));
    });
  }

  test('the DuckDuckGo JavaScript shell is named as such', () => {
    const outcome = parsePage('duckduckgo/ddg-standard-jsshell.NEGATIVE.html', NEGATIVE_URLS['duckduckgo/ddg-standard-jsshell.NEGATIVE.html']);
    assert.match(outcome.kind === 'blocked' ? outcome.reason : '', /JavaScript/);
  });

  test('Google desktop: no result comes from "People also ask", "Top stories" or the knowledge panel', () => {
    const outcome = parsePage('google/google-desktop.html', EXPECTED['google/google-desktop.html'].url);
    const urls = outcome.kind === 'ok' ? outcome.value.map((result) => result.url) : [];
    assert.ok(urls.every((url) => !/wikipedia\.org|news|theverge|cnbc/i.test(url)), urls.join('\n'));
  });
});
