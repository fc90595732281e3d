/**
 * What a blocked first engine costs a search, with the circuit breaker: the real server on
 * loopback, the chain `duckduckgo,bing`, where the fake DuckDuckGo answers every page with its
 * anomaly (captcha) page and the fake Bing answers results, both after the same delay (default
 * 300 ms). Compared, round by round, with a server whose chain is `bing` alone:
 *
 *   blocked first   SEARCH_ENGINES=duckduckgo,bing: the first request waits for the block page,
 *                   opens DuckDuckGo's circuit, and the next ones skip it at once;
 *   without it      SEARCH_ENGINES=bing.
 *
 * Goal: the p50 of the first over the requests is within 1.2× of the second. Every request asks
 * a new query (the search cache is off by default, but a cached answer would make both instant).
 * With REDIS_URL-style scaling (BENCH_REDIS_URL set), the breaker's state lives in Redis: the same
 * figures for the scaled mode.
 *
 * Usage: node bench/search-breaker.ts
 * Environment:
 *   BENCH_SEARCH_REQUESTS   measured requests per case (default 20)
 *   BENCH_UPSTREAM_DELAY_MS delay of every fake upstream page (default 300)
 *   BENCH_REDIS_URL         run the scaled mode too, with the breaker's state in this Redis
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { startFakeUpstream } from '../test/support/fake-upstream.ts';
import { bingFixtures, duckduckgoFixtures, fixtureResults } from '../test/support/search-fixtures.ts';
import { startTestService, type TestService } from '../test/support/service.ts';
import { percentile, positive } from './support.ts';


const requests = positive('BENCH_SEARCH_REQUESTS', 20);
const delayMs = positive('BENCH_UPSTREAM_DELAY_MS', 300);


async function run(mode: 'embedded' | 'scaled'): Promise<void> {
  const [bing, duckduckgo] = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  bing.handle(() => {
    const page = bingFixtures.results(fixtureResults('bing', 10));
    return { status: page.status, body: page.body, delayMs };
  });
  const captcha = Object.values(duckduckgoFixtures.blocked)[0];
  duckduckgo.handle(() => ({ status: captcha.status, body: captcha.body, delayMs }));
  const scaled: Record<string, string> = mode === 'scaled' ? { REDIS_URL: process.env.BENCH_REDIS_URL ?? '', REDIS_PREFIX: `bench-${randomBytes(4).toString('hex')}:` } : {};
  const urls: Record<string, string> = { UPSTREAM_BING_URL: bing.url, UPSTREAM_DUCKDUCKGO_URL: duckduckgo.url, ...scaled };
  const services: TestService[] = [];
  try {
    const withBlocked = await startTestService({ SEARCH_ENGINES: 'duckduckgo,bing', ...urls });
    services.push(withBlocked);
    const without = await startTestService({ SEARCH_ENGINES: 'bing', ...urls });
    services.push(without);
    const users = await Promise.all(services.map((service) => service.user({ scraping: 1_000_000 })));
    let n = 0;
    const search = (service: TestService, token: string) => async () => {
      const r = await service.call('POST', '/v1/engine-search', { token, body: { query: `query ${n++}` } });
      if (r.status !== 200) throw new Error(`status ${r.status}: ${r.text.slice(0, 200)}`);
    };
    const cases = [search(withBlocked, users[0].token), search(without, users[1].token)];
    const samples: number[][] = [[], []];
    for (let i = 0; i < requests; i++) {
      for (const [index, once] of cases.entries()) {
        const started = performance.now();
        await once();
        samples[index].push(performance.now() - started);
      }
    }
    const [blocked, clean] = samples;
    const row = (label: string, s: number[]) => `${label.padEnd(34)} ${percentile(s, 50).toFixed(1).padStart(8)} ${percentile(s, 95).toFixed(1).padStart(8)} ${Math.max(...s).toFixed(1).padStart(8)}`;
    console.log(`\n${mode} mode (${requests} sequential requests per case, cases interleaved; ms)`);
    console.log(`${'case'.padEnd(34)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'max'.padStart(8)}`);
    console.log(row('duckduckgo (blocked), then bing', blocked));
    console.log(row('bing alone', clean));
    console.log(`p50 ratio: ${(percentile(blocked, 50) / percentile(clean, 50)).toFixed(2)} (goal ≤ 1.2); DuckDuckGo asked ${duckduckgo.hits.length} time(s) in ${requests} searches`);
  } finally {
    await Promise.all(services.map((service) => service.close()));
    await Promise.all([bing.close(), duckduckgo.close()]);
  }
}

console.log(`Search with a blocked first engine: fake engines answering after ${delayMs} ms, ${os.availableParallelism()} cores, load average ${os.loadavg().map((load) => load.toFixed(2)).join(' ')}`);
await run('embedded');
if (process.env.BENCH_REDIS_URL) await run('scaled');
else console.log('\nscaled mode: skipped (set BENCH_REDIS_URL=redis://127.0.0.1:6379 to run it)');
