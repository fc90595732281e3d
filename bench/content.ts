/**
 * Main-content extraction quality of /v1/web's `text` and `markdown` (with its syntax stripped),
 * beside Mozilla's Readability.js alone on the same pages, on public evaluation sets kept outside
 * the repository (bench/README.md says where to get them and how to lay them out).
 *
 *   CONTENT_BENCH_DIR=/path/to/sets node bench/content.ts
 *
 * Metric: F1, precision and recall over 4-word shingles (bags of word 4-grams, lower case,
 * punctuation dropped, each CJK character a word), per page, averaged over the pages of a set.
 * trafilatura's own set has no full gold text, only snippets that must or must not appear: it is
 * scored as trafilatura scores it (a snippet found is a true or false positive), with its
 * published figure beside.
 *
 * CONTENT_BENCH_LIMIT=N scores an evenly spread N pages per set; CONTENT_BENCH_SETS=a,b picks sets.
 * CONTENT_BENCH_SAVE=file.json keeps gleaner's text of every page scored; a later run with
 * CONTENT_BENCH_COMPARE=file.json lists the pages whose text changed since, with the lines each
 * lost and gained: how a rule is checked page by page, beyond the averages.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import { convertPage } from '../src/adapters/web/formats.ts';
import { decodePage } from '../src/adapters/web/charset.ts';
import { blockText } from '../src/adapters/web/extract/text.ts';
import { parseDocument, type DomElement } from '../src/adapters/web/extract/dom.ts';

const root = process.env.CONTENT_BENCH_DIR;
if (!root || !existsSync(root)) {
  console.error('Set CONTENT_BENCH_DIR to the folder holding the evaluation sets (bench/README.md).');
  process.exit(2);
}
const limit = Number(process.env.CONTENT_BENCH_LIMIT ?? 0);
const wanted = process.env.CONTENT_BENCH_SETS?.split(',');
const worst = Number(process.env.CONTENT_BENCH_WORST ?? 0);
const saveTo = process.env.CONTENT_BENCH_SAVE;
const comparedWith = process.env.CONTENT_BENCH_COMPARE ? (JSON.parse(readFileSync(process.env.CONTENT_BENCH_COMPARE, 'utf8')) as Record<string, string>) : undefined;
/** gleaner's text of each page scored, by set and page name. */
const texts: Record<string, string> = {};

/** The lines of `after` that `before` lacks. */
const linesMissing = (before: string, after: string) => {
  const kept = new Set(after.split('\n'));
  return before.split('\n').filter((line) => line.trim() !== '' && !kept.has(line));
};

interface Page {
  name: string;
  html: string;
  /** Full gold text, or snippets that must and must not be in the extraction. */
  gold: string | { with: string[]; without: string[] };
}

const decoder = new TextDecoder('utf-8');
const read = (file: string) => decoder.decode(readFileSync(file));
/**
 * A file of a set as text. The sets converted most files to UTF-8 and kept their `<meta>`
 * charsets, so valid UTF-8 is read as UTF-8; other files (CleanEval's and trafilatura's pages as
 * they were served) are read as the service reads a page without a Content-Type (its `<meta>`
 * charset), else as windows-1252, a browser's default for Western pages.
 */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
function readPage(file: string): string {
  const bytes = readFileSync(file);
  try {
    return strictUtf8.decode(bytes);
  } catch {
    const decoded = decodePage(bytes, undefined);
    return decoded.source === 'default' ? new TextDecoder('windows-1252').decode(bytes) : decoded.text;
  }
}
const spread = <T>(items: T[]) => (limit > 0 && items.length > limit ? Array.from({ length: limit }, (_, i) => items[Math.floor((i * items.length) / limit)]) : items);

/** `input/<id>.html` beside `GoldStandard/<id>.txt` (CleanEval's layout). */
function pairedSet(dir: string, gold: (text: string) => string): Page[] {
  const inputs = path.join(dir, 'input');
  if (!existsSync(inputs)) return [];
  return spread(
    readdirSync(inputs)
      .filter((name) => name.endsWith('.html') && existsSync(path.join(dir, 'GoldStandard', name.replace(/\.html$/, '.txt'))))
      .sort(),
  ).map((name) => ({ name, html: readPage(path.join(inputs, name)), gold: gold(readPage(path.join(dir, 'GoldStandard', name.replace(/\.html$/, '.txt')))) }));
}

/** CleanEval gold: a `URL:` line, then text with `<p>`, `<h>`, `<l>` block marks. */
const cleanEvalGold = (text: string) => text.replace(/^\s*URL:.*$/m, '').replace(/<\/?[phl]>/gi, '\n');
/** L3S-GN1 gold: the page with its headline and full text marked `x-nc-sel1` and `x-nc-sel2`. */
const l3sGold = (html: string) => {
  const { document } = parseHTML(html);
  return [...document.querySelectorAll('.x-nc-sel1, .x-nc-sel2')].filter((element) => !element.parentElement?.closest('.x-nc-sel1, .x-nc-sel2')).map((element) => element.textContent).join('\n');
};

const SETS: Record<string, () => Page[]> = {
  cleaneval: () => [...pairedSet(path.join(root, 'cleaneval-dev'), cleanEvalGold), ...pairedSet(path.join(root, 'cleaneval-final'), cleanEvalGold)],
  cleanportaleval: () => pairedSet(path.join(root, 'CleanPortalEval-master'), cleanEvalGold),
  dragnet: () => pairedSet(path.join(root, 'dragnet_data'), (text) => text),
  'l3s-gn1': () => pairedSet(path.join(root, 'page-signal-master'), l3sGold),
  'readability-tests': () => {
    const dir = path.join(root, 'readability');
    if (!existsSync(dir)) return [];
    return spread(readdirSync(dir).filter((name) => existsSync(path.join(dir, name, 'expected.html'))).sort()).map((name) => ({
      name,
      html: readPage(path.join(dir, name, 'source.html')),
      gold: blockText(parseDocument(read(path.join(dir, name, 'expected.html'))).body!),
    }));
  },
  trafilatura: () => {
    const dir = path.join(root, 'trafilatura');
    if (!existsSync(path.join(dir, 'evaldata.json'))) return [];
    const data = JSON.parse(read(path.join(dir, 'evaldata.json'))) as Record<string, { file: string; with: string[]; without: string[] }>;
    return spread(Object.entries(data).filter(([, entry]) => existsSync(path.join(dir, 'eval', entry.file)))).map(([url, entry]) => ({
      name: url,
      html: readPage(path.join(dir, 'eval', entry.file)),
      gold: { with: entry.with, without: entry.without },
    }));
  },
};

/** trafilatura's published figures on its own set (docs/evaluation.rst of its repository, version 2.2.0, standard). */
const PUBLISHED: Record<string, { f1: number; precision: number; recall: number }> = {
  trafilatura: { f1: 0.924, precision: 0.906, recall: 0.943 },
};

// ---- metric ------------------------------------------------------------------------------------
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;
function words(text: string): string[] {
  const out: string[] = [];
  for (const token of text.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (token === '') continue;
    if (CJK.test(token)) out.push(...[...token]);
    else out.push(token);
  }
  return out;
}
function shingles(text: string): Map<string, number> {
  const tokens = words(text);
  const size = Math.min(4, tokens.length);
  const bag = new Map<string, number>();
  for (let i = 0; size > 0 && i + size <= tokens.length; i += 1) {
    const key = tokens.slice(i, i + size).join(' ');
    bag.set(key, (bag.get(key) ?? 0) + 1);
  }
  return bag;
}
function score(predicted: string, gold: string): { precision: number; recall: number; f1: number } {
  const p = shingles(predicted);
  const g = shingles(gold);
  let common = 0;
  let pn = 0;
  let gn = 0;
  for (const [key, count] of p) {
    pn += count;
    common += Math.min(count, g.get(key) ?? 0);
  }
  for (const count of g.values()) gn += count;
  if (pn === 0 && gn === 0) return { precision: 1, recall: 1, f1: 1 };
  const precision = pn === 0 ? 0 : common / pn;
  const recall = gn === 0 ? 0 : common / gn;
  return { precision, recall, f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall) };
}

/** Markdown with its syntax dropped: what a reader of the rendered page would see. */
export function stripMarkdown(markdown: string): string {
  return markdown
    .replace(/!\[((?:\\.|[^\]\\])*)\]\([^)]*\)/g, '')
    .replace(/\[((?:\\.|[^\]\\])*)\]\([^)\s]*(?: "[^"]*")?\)/g, '$1')
    .replace(/^```.*$/gm, '')
    .replace(/^\s*\|?\s*:?-{3,}.*$/gm, '')
    .replace(/^#{1,6}\s+/gm, '')
    .replace(/^\s*(?:[-*+]|\d+\.)\s+/gm, '')
    .replace(/^>\s?/gm, '')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>~])/g, '$1')
    .replace(/(\*\*|__|~~|`)/g, '')
    .replace(/(^|\W)[_*](\S[^_*]*?)[_*](?=\W|$)/g, '$1$2')
    .replace(/\|/g, ' ');
}

// ---- systems -----------------------------------------------------------------------------------
const PAGE_URL = 'https://bench.example/page';
const SYSTEMS: Record<string, (html: string) => string> = {
  'gleaner text': (html) => convertPage(html, PAGE_URL, { format: 'text', links: false }).content ?? '',
  'gleaner markdown': (html) => stripMarkdown(convertPage(html, PAGE_URL, { format: 'markdown', links: false }).content ?? ''),
  'Readability.js alone': (html) => {
    const document = parseDocument(html);
    try {
      const article = new Readability(document as never, { serializer: (element) => element }).parse();
      return article?.content ? blockText(article.content as unknown as DomElement) : '';
    } catch {
      return '';
    }
  },
};

const SNIPPET_SPACE = /\s+/g;
const cell = (value: number) => value.toFixed(3);
console.log('set                 pages  system                   F1     precision  recall   s/page');
for (const [setName, load] of Object.entries(SETS)) {
  if (wanted && !wanted.includes(setName)) continue;
  const pages = load();
  if (pages.length === 0) {
    console.log(`${setName.padEnd(19)} missing`);
    continue;
  }
  for (const [systemName, extract] of Object.entries(SYSTEMS)) {
    const started = performance.now();
    let f1 = 0;
    let precision = 0;
    let recall = 0;
    const snippets = { tp: 0, fp: 0, fn: 0 };
    const perPage: Array<{ name: string; f1: number; precision: number; recall: number }> = [];
    for (const page of pages) {
      let output = '';
      try {
        output = extract(page.html);
      } catch (error) {
        console.error(`${setName} ${page.name} ${systemName}: ${(error as Error).message}`);
      }
      if (systemName === 'gleaner text') {
        const key = `${setName}/${page.name}`;
        texts[key] = output;
        const earlier = comparedWith?.[key];
        if (earlier !== undefined && earlier !== output) {
          console.log(`    changed ${key}`);
          for (const line of linesMissing(earlier, output).slice(0, 8)) console.log(`      - ${line.slice(0, 160)}`);
          for (const line of linesMissing(output, earlier).slice(0, 8)) console.log(`      + ${line.slice(0, 160)}`);
        }
      }
      if (typeof page.gold === 'string') {
        const result = score(output, page.gold);
        perPage.push({ name: page.name, ...result });
        f1 += result.f1;
        precision += result.precision;
        recall += result.recall;
      } else {
        const flat = output.replace(SNIPPET_SPACE, ' ');
        for (const text of page.gold.with) flat.includes(text.replace(SNIPPET_SPACE, ' ')) ? (snippets.tp += 1) : (snippets.fn += 1);
        for (const text of page.gold.without) {
          if (!flat.includes(text.replace(SNIPPET_SPACE, ' '))) continue;
          snippets.fp += 1;
          if (worst > 0 && systemName === 'gleaner text') console.log(`    unwanted ${page.name}: ${text}`);
        }
        if (worst > 0 && systemName === 'gleaner text') for (const text of page.gold.with) if (!flat.includes(text.replace(SNIPPET_SPACE, ' '))) console.log(`    missing ${page.name}: ${text}`);
      }
    }
    if (typeof pages[0].gold !== 'string') {
      precision = snippets.tp / (snippets.tp + snippets.fp);
      recall = snippets.tp / (snippets.tp + snippets.fn);
      f1 = (2 * precision * recall) / (precision + recall);
    } else {
      f1 /= pages.length;
      precision /= pages.length;
      recall /= pages.length;
    }
    if (worst > 0 && systemName === 'gleaner text') {
      for (const page of perPage.sort((a, b) => a.f1 - b.f1).slice(0, worst)) console.log(`    worst ${page.name}: F1 ${cell(page.f1)} P ${cell(page.precision)} R ${cell(page.recall)}`);
    }
    const seconds = (performance.now() - started) / 1000 / pages.length;
    console.log(`${setName.padEnd(19)} ${String(pages.length).padStart(5)}  ${systemName.padEnd(22)}  ${cell(f1)}  ${cell(precision)}      ${cell(recall)}    ${seconds.toFixed(3)}`);
  }
  const published = PUBLISHED[setName];
  if (published) console.log(`${setName.padEnd(19)} ${String(pages.length).padStart(5)}  ${'trafilatura (published)'.padEnd(22)}  ${cell(published.f1)}  ${cell(published.precision)}      ${cell(published.recall)}`);
}
if (saveTo) writeFileSync(saveTo, JSON.stringify(texts));
