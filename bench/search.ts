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
 * Requests are sequential (one in flight), after a warm-up, so each figure is one request's
 * latency and not a queueing effect; the three cases take turns, round by round. The server, the fake upstream and this client share one
 * process, as in the integration tests; with one request in flight they never compete for time.
 *
 * Usage: node bench/search.ts
 * Environment:
 *   BENCH_SEARCH_REQUESTS   measured requests per case (default 20)
 *   BENCH_SEARCH_WARMUP     warm-up requests per case (default 3)
 *   BENCH_UPSTREAM_DELAY_MS delay of every fake upstream page (default 300)
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

const QUERY = { query: 'javascript tutorial', country: 'us', language: 'en' } as const;


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
    return { status: page.status, body: page.body, delayMs };
  });
  const bingBaseUrl = `${upstream.url}/bing`;
  const service = await startTestService({ SEARCH_ENGINES: 'bing', UPSTREAM_BING_URL: bingBaseUrl });
  try {
    // per_page=100 costs 33 credits; this covers every request of the run many times over.
    const user = await service.user({ scraping: 1_000_000 });
    console.log(
      `Search bench: fake Bing answering each page after ${delayMs} ms, ${warmup} warm-up + ${requests} measured sequential requests per case, cases interleaved, ` +
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
