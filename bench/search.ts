/**
 * Search latency through the real server, against a fake Bing on loopback that answers every
 * upstream page after a fixed delay (default 300 ms), serving the page numbered by `first`:
 *
 *   fan-out    POST /v1/engine-search at per_page=10 (one upstream page) vs per_page=100 (ten
 *              upstream pages, fetched concurrently): p50/p95 of each and the ratio
 *              per_page=100 / per_page=10. With concurrent fetches the ratio stays near 1
 *              (target ≤ 1.5); fetched one after another it would be near 10.
 *   overhead   the same upstream request (the Bing adapter's own URL and headers for page 1)
 *              made directly with fetch(), vs the server's answer at per_page=10: the p50 of both
 *              and the difference, i.e. what auth, validation, the credit hold and capture, the
 *              history row, parsing and serialising add on top of the upstream wait.
 *
 * Each fake page carries the weight of a real one: the fixture's ten results plus generated
 * inline scripts and sidebar markup up to BENCH_SEARCH_PAGE_BYTES (default 115 000, the size of a
 * results page Bing serves a desktop browser, about half of it inline script). Parsing is the
 * part of a fan-out that does not overlap: the ten pages arrive together and are read one after
 * another on the event loop, so a page's parse time counts ten times at per_page=100.
 *
 * Requests are sequential (one in flight), after a warm-up, so each figure is one request's
 * latency and not a queueing effect; the three cases take turns, round by round. The server, the fake upstream and this client share one
 * process, as in the integration tests; with one request in flight they never compete for time.
 *
 * Usage: node bench/search.ts
 * Environment:
 *   BENCH_SEARCH_REQUESTS   measured requests per case (default 20)
 *   BENCH_SEARCH_WARMUP     warm-up requests per case (default 3)
 *   BENCH_UPSTREAM_DELAY_MS delay of every fake upstream page (default 300)
 *   BENCH_SEARCH_PAGE_BYTES size of every fake results page (default 115000; 0 = the bare fixture)
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { bing } from '../src/adapters/search/engines/index.ts';
import { startFakeUpstream } from '../test/support/fake-upstream.ts';
import { bingFixtures, fixtureResults } from '../test/support/search-fixtures.ts';
import { startTestService } from '../test/support/service.ts';
import { percentile, positive } from './support.ts';


const requests = positive('BENCH_SEARCH_REQUESTS', 20);
const warmup = positive('BENCH_SEARCH_WARMUP', 3);
const delayMs = positive('BENCH_UPSTREAM_DELAY_MS', 300);
const pageBytes = Number(process.env.BENCH_SEARCH_PAGE_BYTES ?? 115_000);
if (!Number.isInteger(pageBytes) || pageBytes < 0) throw new Error('BENCH_SEARCH_PAGE_BYTES must be a whole number of bytes');

const QUERY = { query: 'javascript tutorial', country: 'us', language: 'en' } as const;


/**
 * `body` grown to about `bytes` the way a real results page is: inline scripts in the head (half
 * the added weight) and, after the results, a sidebar of cards with long tracking links (about
 * as many elements per kilobyte as a real page: few, with long attributes).
 */
function weighted(body: string, bytes: number): string {
  const missing = bytes - Buffer.byteLength(body);
  if (missing <= 0) return body;
  const scripts: string[] = [];
  let scriptBytes = 0;
  for (let i = 0; scriptBytes < missing / 2; i += 1) {
    const script = `<script type="text/javascript" nonce="n${i}">//<![CDATA[\n_w.rms=_w.rms||[];(function(n,t){var i=n.getElementById("b_${i}");if(i&&t.length>${i}){i.setAttribute("data-tag","${'x'.repeat(24)}");for(var r=0;r<t.length;r++){t[r]&&t[r].call(i,"${i}")}}})(document,_w.rms);\n//]]></script>`;
    scripts.push(script);
    scriptBytes += script.length;
  }
  const cards: string[] = [];
  let cardBytes = 0;
  for (let i = 0; cardBytes < missing - scriptBytes; i += 1) {
    const link = `https://www.bing.com/ck/a?!&&p=${'0123456789abcdef'.repeat(6)}${i}&ptn=3&ver=2&hsh=4&fclid=${i}&u=a1aHR0cHM6Ly9leGFtcGxlLmNvbS8${i}&ntb=1`;
    const card = `<li class="b_ans"><a href="${link.replace(/&/g, '&amp;')}" h="ID=SERP,${5000 + i}.1" data-tags="${'b_entityTP b_clearfix b_vList '.repeat(6)}${i}">Related ${i}</a> <span class="b_secondaryText">${'A sentence of sidebar text. '.repeat(8)}</span></li>`;
    cards.push(card);
    cardBytes += card.length;
  }
  return body.replace('</head>', `${scripts.join('\n')}</head>`).replace('</body>', `<aside id="b_context"><ol>${cards.join('\n')}</ol></aside></body>`);
}

/**
 * Runs every case `warmup` times unmeasured, then `requests` rounds of one request per case, one
 * request at a time. Interleaving the cases round by round keeps a shared machine's changing load
 * from favouring whichever case would have run in a quiet moment. Returns ms per case.
 */
async function timeInterleaved(cases: Array<() => Promise<void>>): Promise<number[][]> {
  for (let i = 0; i < warmup; i += 1) for (const once of cases) await once();
  const samples = cases.map((): number[] => []);
  for (let i = 0; i < requests; i += 1) {
    for (const [index, once] of cases.entries()) {
      const started = performance.now();
      await once();
      samples[index].push(performance.now() - started);
    }
  }
  return samples;
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ')).join('\n');
}

const ms = (value: number): string => value.toFixed(1);

async function main(): Promise<void> {
  const upstream = await startFakeUpstream();
  upstream.handle((hit) => {
    const first = Number(hit.query.get('first') ?? '1');
    const page = bingFixtures.results(fixtureResults('bing', 10, first));
    return { status: page.status, body: weighted(page.body, pageBytes), delayMs };
  });
  const bingBaseUrl = `${upstream.url}/bing`;
  const service = await startTestService({ SEARCH_ENGINES: 'bing', UPSTREAM_BING_URL: bingBaseUrl });
  try {
    // per_page=100 costs 33 credits; this covers every request of the run many times over.
    const user = await service.user({ scraping: 1_000_000 });
    console.log(
      `Search bench: fake Bing answering each page (${Math.round(Buffer.byteLength(weighted(bingFixtures.results(fixtureResults('bing', 10)).body, pageBytes)) / 1000)} KB) after ${delayMs} ms, ${warmup} warm-up + ${requests} measured sequential requests per case, cases interleaved, ` +
        `${os.availableParallelism()} cores, load average ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}`,
    );

    const search = (perPage: number) => async () => {
      const hitsBefore = upstream.hits.length;
      const r = await service.call('POST', '/v1/engine-search', { token: user.token, body: { ...QUERY, per_page: perPage } });
      if (r.status !== 200 || r.body.response.length !== perPage) throw new Error(`per_page=${perPage}: status ${r.status}, ${r.text.slice(0, 200)}`);
      const pages = upstream.hits.length - hitsBefore;
      if (pages !== perPage / 10) throw new Error(`per_page=${perPage}: expected ${perPage / 10} upstream pages, saw ${pages}`);
    };
    const upstreamRequest = bing.buildRequest({ ...QUERY, page: 1 }, { baseUrl: bingBaseUrl, now: new Date() });
    const direct = async () => {
      const response = await fetch(upstreamRequest.url, { method: upstreamRequest.method, headers: upstreamRequest.headers });
      await response.text();
      if (response.status !== 200) throw new Error(`direct upstream fetch: status ${response.status}`);
    };

    const [perPage10, perPage100, raw] = await timeInterleaved([search(10), search(100), direct]);

    console.log('\nfan-out: POST /v1/engine-search through the server (ms)');
    console.log(
      table([
        ['case', 'upstream pages', 'p50', 'p95', 'min', 'max'],
        ...([
          ['per_page=10', '1', perPage10],
          ['per_page=100', '10', perPage100],
        ] as const).map(([label, pages, samples]) => [label, pages, ms(percentile(samples, 50)), ms(percentile(samples, 95)), ms(Math.min(...samples)), ms(Math.max(...samples))]),
      ]),
    );
    console.log(`ratio per_page=100 / per_page=10: p50 ${(percentile(perPage100, 50) / percentile(perPage10, 50)).toFixed(2)}, p95 ${(percentile(perPage100, 95) / percentile(perPage10, 95)).toFixed(2)} (target ≤ 1.5)`);

    const serverP50 = percentile(perPage10, 50);
    const rawP50 = percentile(raw, 50);
    console.log('\noverhead: the same upstream page fetched directly vs through the server at per_page=10 (ms)');
    console.log(
      table([
        ['path', 'p50', 'p95'],
        ['direct fetch() of the upstream page', ms(rawP50), ms(percentile(raw, 95))],
        ['server, per_page=10', ms(serverP50), ms(percentile(perPage10, 95))],
        ['added by the server (p50 difference)', ms(serverP50 - rawP50), ''],
      ]),
    );
  } finally {
    await service.close();
    await upstream.close();
  }
}

await main();
