/**
 * What the hostile inputs of issue 33 cost now, on the event loop: each case prints the total
 * time, the longest the event loop went without a turn (a 1 ms interval timer's largest gap) and
 * what the old code would have needed where it can be told without running it for minutes.
 *
 *   node bench/hostile-input.ts
 *   BENCH_ROUNDS=5 node bench/hostile-input.ts
 *
 * Cases:
 * - `canonical 240k slashes`: `canonicalUrl` of a URL of 240,000 slashes (refused: over 8 KB) and
 *   of 8,000 trailing slashes (read);
 * - `patterns × 1000 links`: a crawl's admission of 1,000 links of 2,000 a's under the four
 *   patterns of the issue, on RE2;
 * - `robots 500 KiB × 1000 links`: the same admission under a robots.txt of 127 rules of 4,000 `*`;
 * - `robots 5,000 wildcard rules`: one check of an 8 KB path against the most `*` rules read;
 * - `sitemap 10 MB`: a sitemap of 50,000 URLs, read and admitted.
 */
import { canonicalUrl } from '../src/adapters/site/urls.ts';
import { MAX_ROBOTS_WILDCARD_RULES, readRobots } from '../src/adapters/site/robots.ts';
import { parseSitemap } from '../src/adapters/site/sitemap.ts';
import { ADMISSION_BUDGET_MS, crawlRules } from '../src/jobs/crawl-rules.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const ORIGIN = 'https://example.com';

interface Figure {
  totalMs: number;
  /** The longest gap between two turns of a 1 ms interval timer while the case ran. */
  longestGapMs: number;
}

async function measure(work: () => unknown): Promise<Figure> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  const start = performance.now();
  await work();
  const totalMs = performance.now() - start;
  // The gap still open when the work ends counts too.
  longest = Math.max(longest, performance.now() - last);
  clearInterval(timer);
  return { totalMs, longestGapMs: longest };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const hostileRobots = () => {
  const rule = `Disallow: /${'*'.repeat(4000)}z\n`;
  let body = 'User-agent: *\n';
  while (body.length + rule.length <= 500 * 1024) body += rule;
  return body;
};

const longLinks = Array.from({ length: 1000 }, (_, i) => `${ORIGIN}/${'a'.repeat(2000)}${i % 2 ? 'z' : ''}?n=${i}`);
const sitemap = (() => {
  let body = '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">';
  for (let i = 0; i < 50_000; i++) body += `<url><loc>${ORIGIN}/products/category-${i % 100}/item-${i}</loc><lastmod>2024-01-01</lastmod></url>\n`;
  return Buffer.from(`${body}</urlset>`);
})();
const robotsText = hostileRobots();
const wildcardRobots = `User-agent: *\n${Array.from({ length: MAX_ROBOTS_WILDCARD_RULES }, (_, i) => `Disallow: /*${i.toString(36)}q\n`).join('')}`;

const params = { url: `${ORIGIN}/`, limit: 100, max_depth: 3 };
const cases: Array<{ name: string; before?: string; run: () => unknown }> = [
  {
    name: 'canonical 240k slashes',
    before: '41 s (a free POST /v1/map, issue 33)',
    run: () => {
      canonicalUrl(`${ORIGIN}/${'/'.repeat(240_000)}x`);
      canonicalUrl(`${ORIGIN}/a${'/'.repeat(8000)}`);
    },
  },
  {
    name: 'patterns × 1000 links',
    before: 'never ends (2,000 a\'s under ^/(a|a)*$)',
    run: () =>
      crawlRules({ ...params, include_paths: ['^/(a|a)*$', '^/a*a*a*a*a*a*a*a*b$', '^/(\\w|\\d)*$', '(x|x|x)*y'] }, readRobots(`${ORIGIN}/robots.txt`, '', 'gleaner')).admit(longLinks, 1, {
        budgetMs: ADMISSION_BUDGET_MS.page,
      }),
  },
  {
    name: 'robots 500 KiB × 1000 links',
    before: 'about 14 minutes (861 ms a check)',
    run: () => crawlRules(params, readRobots(`${ORIGIN}/robots.txt`, robotsText, 'gleaner')).admit(longLinks, 1, { budgetMs: ADMISSION_BUDGET_MS.page }),
  },
  {
    name: 'robots 5,000 wildcard rules, 1 check',
    run: () => readRobots(`${ORIGIN}/robots.txt`, wildcardRobots, 'gleaner').isAllowed(`${ORIGIN}/${'a'.repeat(8100)}`),
  },
  {
    name: 'sitemap 10 MB, 50,000 URLs',
    before: '7-9 s at once (fast-xml-parser)',
    run: async () => {
      const file = await parseSitemap(sitemap);
      if (file.kind !== 'urlset') throw new Error(`the sitemap read as ${file.kind}`);
      await crawlRules(params, readRobots(`${ORIGIN}/robots.txt`, '', 'gleaner')).admit(file.urls, 1, { budgetMs: ADMISSION_BUDGET_MS.start });
    },
  },
];

console.log(`# hostile input on the event loop (${ROUNDS} rounds, medians)`);
console.log('| case | total ms | longest loop gap ms | before |');
console.log('|---|---|---|---|');
for (const each of cases) {
  const figures: Figure[] = [];
  for (let round = 0; round < ROUNDS; round++) figures.push(await measure(each.run));
  const total = median(figures.map((f) => f.totalMs)).toFixed(0);
  const gap = median(figures.map((f) => f.longestGapMs)).toFixed(0);
  console.log(`| ${each.name} | ${total} | ${gap} | ${each.before ?? '—'} |`);
}
