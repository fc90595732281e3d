/**
 * The typed client (client/) against the real server: typed methods, typed errors with the
 * Laravel message and field errors, opt-in Retry-After retries, the history iterator, a crawl
 * followed to its end through `crawlPages`, and `verifyWebhook` on what the server signs.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { crawlPages, createGleanerClient, GleanerError, verifyWebhook, type GleanerClient, type JobPage, type WebhookEvent } from '../../client/src/index.ts';
import { signWebhook } from '../../src/webhooks/signature.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { startLoopbackSite, type LoopbackSite } from '../support/web-site.ts';

let service: TestService;
let owner: GleanerClient;
const sites: LoopbackSite[] = [];

before(async () => {
  service = await startTestService();
  owner = createGleanerClient({ baseUrl: service.url, token: service.owner!.token });
});
after(async () => {
  await service?.close();
  await Promise.all(sites.map((site) => site.close()));
});

async function loopbackSite(): Promise<LoopbackSite> {
  const site = await startLoopbackSite();
  sites.push(site);
  return site;
}

const html = (title: string, links: string[]) => ({
  body: `<!doctype html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>The ${title} page.</p>${links.map((href) => `<a href="${href}">${href}</a>`).join(' ')}</main></body></html>`,
});

test('typed methods: admin creates a user and grants credits; the user reads profile and usage', async () => {
  const created = await owner.postAdminUsers({ name: 'Ada', email: 'ada-client@example.com' });
  assert.match(created.token, /^\d+\|/);
  const granted = await owner.postAdminUsersByUserCredits({ user: created.id, product: 'extraction', amount: 40 });
  assert.equal(granted.balance, 40);
  const set = await owner.putAdminUsersByUserCreditsByProduct({ user: created.id, product: 'scraping', amount: 7 });
  assert.equal(set.balance, 7);

  const ada = createGleanerClient({ baseUrl: service.url + '/', token: created.token });
  const me = await ada.getMe();
  assert.equal(me.user.name, 'Ada');
  assert.deepEqual(me.user.balances, { scraping: 7, extraction: 40, blockchain: 0 });
  const usage = await ada.getUsage({ days: 7 });
  assert.equal(usage.days, 7);
  assert.deepEqual(usage.data, []);
  const updated = await ada.updateMe({ email: 'ada-new@example.com', secret_key: created.secret_key });
  assert.equal(updated.user.email, 'ada-new@example.com');
});

test('errors carry the status, the Laravel message and the field errors', async () => {
  const user = await service.user({ extraction: 5 });
  const client = createGleanerClient({ baseUrl: service.url, token: user.token });
  const invalid = await client.extractPdf({ url: 'not a url' }).catch((error: unknown) => error);
  assert.ok(invalid instanceof GleanerError);
  assert.equal(invalid.status, 422);
  assert.equal(invalid.message, 'The given data was invalid.');
  assert.deepEqual(Object.keys(invalid.errors), ['url']);
  assert.equal(invalid.operation, 'extractPdf');

  const forbidden = await client.getAdminUsers().catch((error: unknown) => error);
  assert.ok(forbidden instanceof GleanerError);
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.message, 'This action is unauthorized.');

  const missing = await owner.getAdminUsersByUser({ user: 999_999 }).catch((error: unknown) => error);
  assert.ok(missing instanceof GleanerError && missing.status === 404);
  assert.equal(missing.message, 'There is no user 999999.');

  const stranger = createGleanerClient({ baseUrl: service.url, token: '1|nope' });
  await assert.rejects(stranger.getMe(), (error: unknown) => error instanceof GleanerError && error.status === 401 && error.message === 'Unauthenticated.');
});

test('requests() walks every history page, with filters', async () => {
  const user = await service.user({ extraction: 5 });
  const client = createGleanerClient({ baseUrl: service.url, token: user.token });
  // Refused calls are recorded in history too, and cost nothing.
  for (let i = 0; i < 5; i++) await client.extractPdf({ url: `https://example.com/${i}.txt` }).catch(() => {});
  await client.extractImage({ url: 'ftp://example.com/x.png' }).catch(() => {});
  const all = [];
  for await (const row of client.requests({ per_page: 2 })) all.push(row);
  assert.equal(all.length, 6);
  assert.deepEqual(all.map((r) => r.endpoint), ['/v1/image', '/v1/pdf', '/v1/pdf', '/v1/pdf', '/v1/pdf', '/v1/pdf']);
  assert.ok(all.every((r) => r.status === 422 && r.credits === 0));
  const pdf = [];
  for await (const row of client.requests({ endpoint: '/v1/pdf', per_page: 4 })) pdf.push(row.id);
  assert.equal(pdf.length, 5);
  assert.deepEqual(pdf, [...pdf].sort((a, b) => b - a), 'newest first');
});

test('a real 429 carries Retry-After; without retry (or with a shorter limit) it is thrown', async () => {
  const user = await service.user();
  const client = createGleanerClient({ baseUrl: service.url, token: user.token, retry: { maxWaitMs: 50 } });
  let throttled: GleanerError | undefined;
  for (let i = 0; i < 8 && !throttled; i++) {
    await client.updateMe({ email: 'x@example.com', secret_key: 'wrong' }).catch((error: GleanerError) => {
      if (error.status === 429) throttled = error;
    });
  }
  assert.ok(throttled, 'the 7th attempt within a minute is throttled');
  assert.equal(throttled.message, 'Too Many Attempts.');
  assert.ok(throttled.retryAfter! > 0);
});

test('opt-in retry waits for Retry-After, then succeeds', async () => {
  let hits = 0;
  const fake = http.createServer((request, response) => {
    hits++;
    if (hits < 3) {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' }).end(JSON.stringify({ message: 'Too Many Attempts.' }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user: { id: 1, name: 'R', email: 'r@example.com' } }));
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  try {
    const plain = createGleanerClient({ baseUrl, token: 't' });
    await assert.rejects(plain.getMe(), (error: unknown) => error instanceof GleanerError && error.status === 429 && error.retryAfter === 0);
    assert.equal(hits, 1, 'no retry unless asked');
    hits = 0;
    const patient = createGleanerClient({ baseUrl, token: 't', retry: { attempts: 3 } });
    assert.equal((await patient.getMe()).user.name, 'R');
    assert.equal(hits, 3);
  } finally {
    fake.close();
  }
});

test('crawlPages follows a crawl to its end: all 5 pages, each once; the completed webhook verifies', { timeout: 120_000 }, async () => {
  const site = await loopbackSite();
  // Five pages, two levels of links and a link back home; robots.txt and sitemaps are 404s (no rules, no sitemap).
  site.route('/', () => html('Home', ['/a', '/b']));
  site.route('/a', () => html('Alpha', ['/c', '/']));
  site.route('/b', () => html('Beta', ['/d', '/a']));
  site.route('/c', () => html('Gamma', ['/']));
  site.route('/d', () => html('Delta', ['/b']));
  const receiver = await loopbackSite();
  receiver.route('/hook', () => ({ status: 204 }));

  const user = await service.user({ scraping: 20 });
  const client = createGleanerClient({ baseUrl: service.url, token: user.token });
  const { secret } = await client.getWebhookSecret();
  // Typed from the OpenAPI document: a webhook without its url would not compile.
  const created = await client.crawl({ url: site.url() + '/', limit: 10, webhook: { url: `${receiver.url()}/hook`, events: ['completed'] } });
  assert.equal(created.status, 'queued');

  const pages: JobPage[] = [];
  for await (const page of crawlPages(client, created.id, { intervalMs: 100 })) pages.push(page);
  const paths = pages.map((page) => new URL(page.url).pathname);
  assert.deepEqual([...paths].sort(), ['/', '/a', '/b', '/c', '/d'], 'every page, each once');
  assert.ok(pages.every((page) => page.status_code === 200 && page.content.includes('page.')));
  const job = await client.getCrawl({ id: created.id });
  assert.equal(job.status, 'completed', 'the iterator ends once the crawl has');
  assert.equal(job.completed, 5);
  assert.equal(job.credits_used, 5);

  // Resuming from a saved position yields only what follows it.
  const rest: JobPage[] = [];
  for await (const page of crawlPages(client, created.id, { skip: 3 })) rest.push(page);
  assert.deepEqual(rest, pages.slice(3));

  const deadline = Date.now() + 30_000;
  while (!receiver.log.some((hit) => hit.path === '/hook') && Date.now() < deadline) await delay(100);
  const hook = receiver.log.find((hit) => hit.path === '/hook');
  assert.ok(hook, 'the completed event arrived');
  const header = hook.headers['gleaner-signature'];
  assert.equal(await verifyWebhook(hook.body, header, secret), true);
  assert.equal(await verifyWebhook(Buffer.from(hook.body), header, secret), true, 'raw bytes as well as text');
  assert.equal(await verifyWebhook(hook.body, header, secret.replace(/.$/, (c) => (c === 'x' ? 'y' : 'x'))), false, 'another secret');
  assert.equal(await verifyWebhook(hook.body.replace('"completed":5', '"completed":6'), header, secret), false, 'another body');
  const event = JSON.parse(hook.body) as WebhookEvent;
  assert.equal(event.type, 'crawl.completed');
  assert.equal(event.job_id, created.id);
  assert.deepEqual(event.data, { status: 'completed', completed: 5, credits_used: 5 });
});

test('crawlPages follows next at once, waits while pages may still come, and stops once the job has settled', async () => {
  // The server's answers, one per poll: pages arrive across polls and across `next` links.
  const page = (n: number) => ({ url: `https://example.com/${n}`, status_code: 200, content: `page ${n}` });
  const answers = [
    { status: 'running', data: [page(0), page(1)], next: 2 },
    { status: 'running', data: [page(2)], next: null },
    { status: 'running', data: [], next: null },
    // Out of credits, with one page that held its credit still being fetched: not over yet.
    { status: 'stopped_no_credits', total: 5, completed: 4, data: [page(3)], next: null },
    { status: 'stopped_no_credits', data: [page(4)], next: 5 },
    { status: 'stopped_no_credits', data: [], next: null },
  ];
  const asked: Array<{ path: string; at: number }> = [];
  const fake = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://fake');
    asked.push({ path: url.pathname + url.search, at: Date.now() });
    const answer = answers[asked.length - 1];
    const base = `http://${request.headers.host}${url.pathname}`;
    const body = { id: 'j1', total: 5, completed: 5, credits_used: 5, created_at: '', expires_at: '', ...answer, next: answer.next === null ? null : `${base}?skip=${answer.next}` };
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  try {
    const client = createGleanerClient({ baseUrl: `http://127.0.0.1:${(fake.address() as AddressInfo).port}`, token: 't' });
    const pages: string[] = [];
    for await (const item of crawlPages(client, 'j1', { intervalMs: 150 })) pages.push(item.content);
    assert.deepEqual(pages, ['page 0', 'page 1', 'page 2', 'page 3', 'page 4']);
    assert.deepEqual(asked.map((a) => a.path), ['/v1/crawl/j1?skip=0', '/v1/crawl/j1?skip=2', '/v1/crawl/j1?skip=3', '/v1/crawl/j1?skip=3', '/v1/crawl/j1?skip=4', '/v1/crawl/j1?skip=5']);
    const gaps = asked.slice(1).map((a, i) => a.at - asked[i].at);
    assert.ok(gaps[0] < 100 && gaps[4] < 100, `next is followed at once (${gaps})`);
    assert.ok(gaps[1] >= 140 && gaps[2] >= 140 && gaps[3] >= 140, `a poll that brought nothing more waits intervalMs (${gaps})`);
  } finally {
    fake.close();
  }
});

test('crawlPages honours its AbortSignal while the job runs', { timeout: 60_000 }, async () => {
  const site = await loopbackSite();
  // The start page takes its time, so the job is still running when the iteration is aborted.
  site.route('/', async () => {
    await delay(5_000);
    return html('Slow', []);
  });
  const user = await service.user({ scraping: 5 });
  const client = createGleanerClient({ baseUrl: service.url, token: user.token });
  const { id } = await client.crawl({ url: site.url() + '/', sitemap: 'skip' });
  const started = Date.now();
  await assert.rejects(
    async () => {
      for await (const page of crawlPages(client, id, { intervalMs: 50, signal: AbortSignal.timeout(300) })) assert.fail(`no page yet, got ${page.url}`);
    },
    (error: unknown) => error instanceof DOMException && error.name === 'TimeoutError',
  );
  assert.ok(Date.now() - started < 3_000, 'stopped at the abort, not at the end of the job');
  assert.equal((await client.cancelCrawl({ id })).status, 'cancelled');
});

test('verifyWebhook accepts what the server signs, and nothing else', async () => {
  const secret = 'whsec_0123456789abcdefghijklmnopqrstuv';
  const body = JSON.stringify({ id: 'e1', type: 'batch.page', job_id: 'j1', created_at: '2026-11-22T10:15:30.123000Z', data: { url: 'https://example.com/', status_code: 200 } });
  const now = 1_764_000_000;
  const header = signWebhook(secret, body, now);
  assert.equal(await verifyWebhook(body, header, secret, { now }), true);
  assert.equal(await verifyWebhook(new TextEncoder().encode(body).buffer, header, secret, { now: now + 300 }), true, 'an ArrayBuffer, at the edge of the tolerance');
  assert.equal(await verifyWebhook(body, header, secret, { now: now + 301 }), false, 'too old');
  assert.equal(await verifyWebhook(body, header, secret, { now: now - 301 }), false, 'from the future');
  assert.equal(await verifyWebhook(body, header, secret, { now: now + 3_600, toleranceSeconds: 3_600 }), true, 'a wider tolerance');
  // During a secret roll several v1 entries may come; one match is enough.
  const other = signWebhook('whsec_someoneelsesecretsomeoneelsesecr', body, now).split(',')[1];
  assert.equal(await verifyWebhook(body, `${header},${other}`, secret, { now }), true);
  assert.equal(await verifyWebhook(body, `t=${now},${other}`, secret, { now }), false);
  assert.equal(await verifyWebhook(body, `${header},t=${now}`, secret, { now }), false, 'two timestamps');
  assert.equal(await verifyWebhook(body, `t=${now}`, secret, { now }), false, 'no v1');
  assert.equal(await verifyWebhook(body, 'garbage', secret, { now }), false);
  assert.equal(await verifyWebhook(body, undefined, secret, { now }), false);
});
