/**
 * Issue 33, defects 1-3: one request or one crawled site must never stall the event loop for
 * everyone. Each case runs under the watchdog (test/support/health-watchdog.ts): `/health` is
 * asked every 200 ms, and an answer (or a poll) late by over 1 s fails the test. Each failed on
 * the code before its fix:
 * - a free `POST /v1/map` whose URL holds 240,000 slashes held `/health` for 41 s
 *   (`/\/+$/` in the canonical URL);
 * - crawl path patterns such as `^/(a|a)*$` ran on a backtracking engine: a link of 29 a's held
 *   the server 29 s, one of 2,000 a's for ever;
 * - a 500 KiB robots.txt of `*`-laden rules made each link check take most of a second, and a
 *   page of 1,000 links about 14 minutes.
 * Money stays exact throughout: what is refused is free, each delivered page costs its price once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { startLoopbackSite, type LoopbackSite } from '../support/web-site.ts';
import { waitForJob } from '../support/crawl-site.ts';
import { withoutStall } from '../support/health-watchdog.ts';
import { auditMismatches, historyRow, outstandingHolds } from '../support/reliability-harness.ts';

const TOO_LONG = 'must not be greater than 8192 characters.';

let service: TestService;
let site: LoopbackSite;

before(async () => {
  site = await startLoopbackSite();
  service = await startTestService({ OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost', JOB_POLL_SECONDS: '0.5' });
});

after(async () => {
  await service?.close();
  await site?.close();
});

async function balance(userId: number): Promise<number> {
  return (await service.services.ledger.balance(userId, 'scraping')) ?? 0;
}

async function assertMoneyExact(): Promise<void> {
  assert.deepEqual(await auditMismatches(service), [], 'the ledger audit is clean');
  // The last page's settlement may land just after the job's status turns final.
  const deadline = Date.now() + 10_000;
  while ((await outstandingHolds(service)) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(await outstandingHolds(service), 0, 'no credit is left held');
}

/** A page linking to each of `links` (paths of this site). */
function linkPage(links: readonly string[]): string {
  return `<!doctype html><html><head><title>Links</title></head><body><main><h1>Links</h1><p>A page of links for the crawler.</p><ul>${links.map((href, i) => `<li><a href="${href}">link ${i}</a></li>`).join('')}</ul></main></body></html>`;
}

describe('a URL of 240,000 slashes (defect 1)', () => {
  const hostileUrl = () => `${site.url()}/${'/'.repeat(240_000)}x`;

  for (const route of ['/v1/map', '/v1/crawl', '/v1/web']) {
    test(`POST ${route} at 0 credits: a free 422 on url, and /health never waits`, { timeout: 120_000 }, async () => {
      const user = await service.user({});
      const body = route === '/v1/map' ? { url: hostileUrl(), limit: 0 } : { url: hostileUrl() };
      const answer = await withoutStall(service.url, `POST ${route}`, () => service.call('POST', route, { token: user.token, body }));
      assert.equal(answer.status, 422, answer.text.slice(0, 200));
      assert.deepEqual(answer.body.errors.url, [`The url ${TOO_LONG}`]);
      const row = await historyRow(service, answer.headers.get('x-request-id')!);
      assert.deepEqual(row, { status: 422, credits: 0 });
    });
  }

  test('POST /v1/batch: every URL over 8 KB reported by its index', { timeout: 120_000 }, async () => {
    const user = await service.user({ scraping: 5 });
    const answer = await withoutStall(service.url, 'POST /v1/batch', () =>
      service.call('POST', '/v1/batch', { token: user.token, body: { urls: [`${site.url()}/fine`, hostileUrl(), hostileUrl()] } }),
    );
    assert.equal(answer.status, 422, answer.text.slice(0, 200));
    assert.deepEqual(answer.body.errors, { 'urls.1': [`The urls.1 ${TOO_LONG}`], 'urls.2': [`The urls.2 ${TOO_LONG}`] });
    assert.equal(await balance(user.id), 5);
  });
});

describe('a crawled site built to be slow (defects 1-3)', () => {
  test('hostile path patterns: accepted, matched in linear time, the crawl finishes and charges its pages', { timeout: 300_000 }, async () => {
    // Links the old engine needed seconds (26-28 a's) or for ever (2,000 a's) to judge, and a run
    // of 100,000 slashes for the old canonical form.
    const links = [
      ...Array.from({ length: 3 }, (_, i) => `/${'a'.repeat(26 + i)}!`),
      ...Array.from({ length: 50 }, (_, i) => `/${'a'.repeat(2000 + i)}!`),
      `/${'/'.repeat(100_000)}x`,
      '/aaaa',
      '/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxy',
    ];
    site.route('/patterns/', () => ({ body: linkPage(links) }));
    site.route('/aaaa', () => ({ body: linkPage([]) }));
    site.route('/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxy', () => ({ body: linkPage([]) }));
    const user = await service.user({ scraping: 10 });
    const body = {
      url: `${site.url()}/patterns/`,
      limit: 10,
      max_depth: 1,
      sitemap: 'skip',
      include_paths: ['^/(a|a)*$', '^/a*a*a*a*a*a*a*a*b$', '^/(\\w|\\d)*$', '(x|x|x)*y'],
      format: 'text',
    };
    const job = await withoutStall(service.url, 'a crawl with hostile patterns', async () => {
      const created = await service.call('POST', '/v1/crawl', { token: user.token, body });
      assert.equal(created.status, 201, created.text);
      return waitForJob(service.url, 'crawl', created.body.id, user.token, 240_000);
    });
    assert.equal(job.status, 'completed');
    // The start page, and the two links the patterns take: /aaaa and the x…y one.
    assert.equal(job.completed, 3);
    assert.equal(job.credits_used, 3);
    assert.equal(await balance(user.id), 7);
    await assertMoneyExact();
  });

  test('a 500 KiB robots.txt of `*`-laden rules and a page of 1,000 long links: judged without a stall', { timeout: 300_000 }, async () => {
    const rule = `Disallow: /${'*'.repeat(4000)}z\n`;
    let robots = 'User-agent: *\n';
    while (robots.length + rule.length <= 500 * 1024) robots += rule;
    site.route('/robots.txt', () => ({ headers: { 'content-type': 'text/plain' }, body: robots }));
    // Every other link ends in z: disallowed by `/*z`. The others are pages of their own.
    const links = Array.from({ length: 1000 }, (_, i) => `/robots-trap/${'a'.repeat(2000)}${i % 2 ? 'z' : 'y'}${i}`);
    site.route('/robots-trap/', () => ({ body: linkPage(links) }));
    for (const link of links.filter((_, i) => i % 2 === 0)) site.route(link, () => ({ body: linkPage([]) }));
    const user = await service.user({ scraping: 10 });
    const job = await withoutStall(service.url, 'a crawl under a hostile robots.txt', async () => {
      const created = await service.call('POST', '/v1/crawl', { token: user.token, body: { url: `${site.url()}/robots-trap/`, limit: 3, max_depth: 1, sitemap: 'skip', format: 'text' } });
      assert.equal(created.status, 201, created.text);
      return waitForJob(service.url, 'crawl', created.body.id, user.token, 240_000);
    });
    site.route('/robots.txt', () => ({ status: 404 }));
    assert.equal(job.status, 'completed');
    // The start page and the first two allowed links.
    assert.equal(job.completed, 3);
    assert.equal(job.credits_used, 3);
    assert.equal(await balance(user.id), 7);
    const disallowed = site.log.filter((hit) => hit.path.startsWith('/robots-trap/a') && /z\d+$/.test(hit.path));
    assert.deepEqual(disallowed, [], 'no disallowed link was fetched');
    await assertMoneyExact();
  });
});
