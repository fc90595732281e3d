/**
 * Corpus tier: /v1/web's Markdown on real recorded result pages (CORPUS_DIR/serp). A results
 * page has no single article, so this checks what must hold on any real page: the conversion
 * finishes and leaves no script or style text behind, and the whole page (only_main_content
 * false) keeps the titles of the results the engine parsers read from the same page.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { corpusDir } from '../support/corpus.ts';
import { renderContent } from '../../src/adapters/web/formats.ts';
import { ENGINES, isEngineName } from '../../src/adapters/search/engines/index.ts';

const corpus = corpusDir('serp');

function pages(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return pages(full);
    return name.endsWith('.html') && !name.includes('NEGATIVE') ? [full] : [];
  });
}

test('markdown of recorded result pages: main content without code; the whole page keeps the result titles', { skip: corpus.skip }, () => {
  const files = pages(corpus.dir);
  assert.ok(files.length > 0);
  for (const file of files) {
    const html = readFileSync(file, 'utf8');
    const name = path.relative(corpus.dir, file);
    // Main content: a results page has no article, and since issue 24 it no longer falls back to
    // the whole page, so only "something, and no code" is asked of it.
    const main = renderContent(html, 'https://search.example/search?q=x', { format: 'markdown' });
    assert.ok(main.trim().length > 0, `${name}: empty`);
    assert.doesNotMatch(main, /<script|function\s*\(|\{\s*[a-z-]+\s*:\s*[^}]+;\s*\}/i, `${name}: script or style text`);
    // The whole page (only_main_content: false) keeps every result.
    const markdown = renderContent(html, 'https://search.example/search?q=x', { format: 'markdown', onlyMainContent: false });
    assert.doesNotMatch(markdown, /<script|function\s*\(|\{\s*[a-z-]+\s*:\s*[^}]+;\s*\}/i, `${name}: script or style text`);
    const engine = name.split(path.sep)[0];
    if (!isEngineName(engine)) continue;
    const outcome = ENGINES[engine].parse({ status: 200, url: 'https://search.example/search?q=x', headers: {}, body: html });
    if (outcome.kind !== 'ok') continue;
    const collapse = (text: string) => text.replace(/[\s\\*_`[\]]+/g, ' ').trim();
    const flat = collapse(markdown);
    const missing = outcome.value.filter((result) => !flat.includes(collapse(result.title)));
    assert.ok(missing.length <= Math.floor(outcome.value.length / 5), `${name}: ${missing.length}/${outcome.value.length} result titles missing, e.g. "${missing[0]?.title}"`);
  }
});
