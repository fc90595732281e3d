/**
 * POST /v1/pdf end to end through the real server: the document downloaded from a fake upstream
 * on loopback (a generated 3-page PDF), its pages counted and held, its text extracted on the PDF
 * threads, the credits captured and the history row written. Prints requests per second and
 * latency percentiles at a fixed number of requests in flight: the figure to compare before and
 * after a change on the request path (the download, the pipeline), run in the same session.
 *
 * Usage: node bench/pdf-route.ts
 * Environment:
 *   BENCH_PDF_ROUTE_REQUESTS   measured requests (default 200)
 *   BENCH_PDF_ROUTE_INFLIGHT   requests in flight (default 4)
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { startFakeUpstream } from '../test/support/fake-upstream.ts';
import { numberedPagesPdf } from '../test/support/pdf-fixtures.ts';
import { startTestService } from '../test/support/service.ts';
import { percentile, positive } from './support.ts';

const requests = positive('BENCH_PDF_ROUTE_REQUESTS', 200);
const inFlight = positive('BENCH_PDF_ROUTE_INFLIGHT', 4);

const pdf = await numberedPagesPdf(3);
const upstream = await startFakeUpstream();
upstream.handle(() => ({ headers: { 'content-type': 'application/pdf' }, body: pdf }));
const service = await startTestService();
try {
  const user = await service.user({ extraction: 10_000_000 });
  const once = async () => {
    const r = await service.call('POST', '/v1/pdf', { token: user.token, body: { url: `${upstream.url}/doc.pdf` } });
    if (r.status !== 200) throw new Error(`status ${r.status}: ${r.text.slice(0, 200)}`);
  };
  // Warm-up: the PDF threads' engines, the database's plans.
  for (let i = 0; i < 20; i++) await once();
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < requests) {
        const t = performance.now();
        await once();
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const at = (p: number) => percentile(latencies, p).toFixed(1);
  console.log(
    `POST /v1/pdf (3-page PDF from loopback), ${requests} requests, ${inFlight} in flight, ${os.availableParallelism()} cores, load ${os.loadavg()[0].toFixed(2)}: ` +
      `${(requests / seconds).toFixed(1)} req/s, p50 ${at(50)} ms, p95 ${at(95)} ms`,
  );
} finally {
  await service.close();
  await upstream.close();
}
