/**
 * Crawls and batches as jobs, through the HTTP API against a loopback site (contract §9, §3):
 * what a crawl fetches (robots.txt, sitemaps, canonical URLs, each page once, crawl-delay,
 * same site only, no private address on any hop), what it answers (pages of 100 with `next`),
 * what it costs (1 scraping credit per delivered page, held page by page, `stopped_no_credits`
 * when the balance runs out, nothing after a cancel, no hold left, a clean ledger audit), and the
 * signed webhooks it sends (every event, at least once, the same id on every retry).
 *
 * Runs on embedded PGlite, and on PostgreSQL in the scaled tier (TEST_DATABASE_URL).
 *
 * The service exempts only the name `localhost` from the public-address rule, so the site is
 * reached as localhost while any hop to 127.0.0.1 (the site's /go/internal redirect) is refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService, type TestService } from '../support/service.ts';
import { startLoopbackSite, type LoopbackSite, type SiteHit } from '../support/web-site.ts';
import { FINAL_JOB_STATUSES, pageKey, readAllResults, readJob, startCrawlSite, TIMESTAMP, waitForJob, type CrawlSite, type JobKind, type JobPage } from '../support/crawl-site.ts';
import { runOperatorCommand } from '../../src/operator/commands.ts';
import { verifyWebhookSignature } from '../../src/webhooks/signature.ts';

const NOT_FOUND = { message: 'Not found.' };
/** A job that cannot pay its first page: the Laravel message, and the product, the page's credit and the balance (issue 40). */
const NO_CREDITS = { message: 'You do not have enough credits to perform this action.', product: 'scraping', required: 1, balance: 0 };
const INVALID = 'The given data was invalid.';
const DAY_MS = 86_400_000;

let service: TestService;
const sites: CrawlSite[] = [];
const receivers: LoopbackSite[] = [];

before(async () => {
  service = await startTestService({
    OUTBOUND_ALLOW_HOSTS: 'localhost',
    JOB_POLL_SECONDS: '0.5',
    WEBHOOK_RETRY_BASE_SECONDS: '1',
  });
});

after(async () => {
  await service?.close();
  await Promise.all([...sites.map((site) => site.close()), ...receivers.map((receiver) => receiver.close())]);
});

/** A fresh site per test, so the hit counts are that test's alone. */
async function site(options: Parameters<typeof startCrawlSite>[0] = {}): Promise<CrawlSite> {
  const started = await startCrawlSite(options);
  sites.push(started);
  return started;
}

async function balance(userId: number): Promise<number> {
  return (await service.services.ledger.balance(userId, 'scraping')) ?? 0;
}

async function holdsOf(userId: number): Promise<number> {
  const [row] = await service.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM credit_holds WHERE user_id = $1', [userId]);
  return row.n;
}

/** `gleaner credits audit --user <id>`: the balances agree with the ledger. */
async function assertCleanAudit(userId: number): Promise<void> {
  const audit = (await runOperatorCommand(service.services, ['credits', 'audit', '--user', String(userId)])) as { mismatches: unknown[] };
  assert.deepEqual(audit.mismatches, [], 'the ledger audit is clean');
}

/** No credit of the user is still held (a job's holds are settled or released when it ends). */
async function assertNoHoldLeft(userId: number): Promise<void> {
  // The last page's settlement may land just after the status turns final.
  const deadline = Date.now() + 10_000;
  while ((await holdsOf(userId)) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(await holdsOf(userId), 0, 'no hold is left');
}

async function create(kind: JobKind, token: string, body: unknown) {
  return service.call('POST', `/v1/${kind}`, { token, body });
}

/** Creates a job and checks the 201 answer; returns its id. */
async function started(kind: JobKind, token: string, body: unknown): Promise<string> {
  const r = await create(kind, token, body);
  assert.equal(r.status, 201, r.text);
  assert.equal(typeof r.body.id, 'string');
  assert.equal(r.body.status, 'queued');
  assert.equal(r.body.url, `${service.url}/v1/${kind}/${r.body.id}`);
  return r.body.id;
}

/** Waits for a final status; then every site's log has every request that reached it. */
async function finished(kind: JobKind, id: string, token: string, timeoutMs = 240_000) {
  const job = await waitForJob(service.url, kind, id, token, timeoutMs);
  await Promise.all(sites.map((each) => each.flush()));
  return job;
}

/** Polls `read` until it gives a value `accept` takes; on timeout, says what was last seen. */
async function eventually<T>(read: () => Promise<T>, accept: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: { value?: T; error?: unknown } = {};
  while (Date.now() < deadline) {
    try {
      const value = await read();
      last = { value };
      if (accept(value)) return value;
    } catch (error) {
      last = { error };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const seen = 'error' in last ? `error: ${last.error instanceof Error ? last.error.message : String(last.error)}` : `last value: ${JSON.stringify(last.value)}`;
  throw new Error(`timed out waiting for ${what} (${seen})`);
}

/** Page keys of the results, checking on the way that each is on the site and canonical. */
function resultKeys(crawlSite: CrawlSite, data: JobPage[]): string[] {
  for (const page of data) {
    assert.ok(page.url.startsWith(`${crawlSite.url}/`), `${page.url} is on the site`);
    assert.ok(!page.url.includes('#'), `${page.url} carries no fragment`);
    assert.ok(!/[?&]utm_/i.test(page.url), `${page.url} carries no tracking parameter`);
  }
  return data.map((page) => pageKey(page.url));
}

/** Requests for the site's pages (robots.txt, sitemaps and redirect hops left out), in order of arrival. */
function pageFetches(crawlSite: CrawlSite) {
  const pages = new Set([...crawlSite.pagePaths, '/big']);
  return crawlSite.log.filter((hit) => pages.has(hit.key));
}

/**
 * What a crawl may fetch: each page, robots.txt and each sitemap at most once (whatever variant
 * of its URL was linked); nothing under /private/ (robots.txt) and never the canary. Pages that
 * cannot be read (the 10 MB page, the redirects off the site or into a loop) are bounded, not
 * held to once, in case the engine retries failures.
 */
async function assertPolite(crawlSite: CrawlSite): Promise<void> {
  await crawlSite.flush();
  assert.equal(crawlSite.privateHits(), 0, 'nothing under /private/ was fetched (robots.txt disallows it)');
  assert.equal(crawlSite.canaryHits(), 0, 'the metadata canary was never reached');
  const counts = new Map<string, number>();
  for (const hit of crawlSite.log) counts.set(hit.key, (counts.get(hit.key) ?? 0) + 1);
  const once = new Set([...crawlSite.pagePaths, ...crawlSite.metaPaths]);
  const twice = [...counts].filter(([key, n]) => once.has(key) && n > 1);
  assert.deepEqual(twice, [], 'no page, robots.txt or sitemap was fetched more than once');
  for (const key of ['/big', '/go/metadata', '/go/internal']) assert.ok((counts.get(key) ?? 0) <= 3, `${key} fetched ${counts.get(key)} times`);
  const loop = (counts.get('/loop/a') ?? 0) + (counts.get('/loop/b') ?? 0);
  assert.ok(loop <= 100, `the redirect loop was followed ${loop} times`);
}

describe('a crawl', () => {
  test('limit 250 of a 300-page site: 250 distinct pages, each fetched once, robots and crawl-delay obeyed, 250 credits', { timeout: 420_000 }, async () => {
    // 0.1 s between two page fetches: 250 pages take at least 25 s.
    const crawlSite = await site({ pages: 300, crawlDelay: 0.1 });
    const user = await service.user({ scraping: 1000 });
    const id = await started('crawl', user.token, { url: crawlSite.url, limit: 250, max_depth: 3, links: true });

    const early = await readJob(service.url, 'crawl', id, user.token);
    assert.ok(['queued', 'running', 'completed'].includes(early.status), early.status);

    const job = await finished('crawl', id, user.token, 360_000);
    assert.equal(job.status, 'completed');
    assert.equal(job.id, id);
    assert.equal(job.completed, 250);
    assert.equal(job.credits_used, 250);
    assert.ok(typeof job.total === 'number' && job.total >= job.completed, `total ${job.total}`);
    assert.match(job.created_at, TIMESTAMP);
    assert.match(job.expires_at, TIMESTAMP);
    const kept = Date.parse(job.expires_at) - Date.parse(job.created_at);
    assert.ok(kept >= 7 * DAY_MS - 60_000 && kept <= 7 * DAY_MS + 3_600_000, `results kept ${kept / DAY_MS} days (7)`);

    const { answers, data } = await readAllResults(service.url, 'crawl', id, user.token);
    assert.deepEqual(
      answers.map((answer) => answer.data.length),
      [100, 100, 50],
      'pages of 100 results',
    );
    assert.equal(answers.at(-1)!.next, null);
    assert.equal(data.length, 250);
    const keys = resultKeys(crawlSite, data);
    assert.equal(new Set(keys).size, 250, 'no page twice (tracking parameters, fragments and trailing slashes are one page)');
    const deliverable = new Set(crawlSite.pagePaths);
    for (const [index, page] of data.entries()) {
      const key = keys[index];
      assert.ok(deliverable.has(key), `${page.url} is one of the site's pages (not /private/, not a trap)`);
      assert.equal(page.status_code, 200, page.url);
      assert.equal(typeof page.content, 'string');
      assert.ok(page.content.includes(crawlSite.codeWord(key)), `${page.url}: its own text (${crawlSite.codeWord(key)})`);
      assert.ok(Array.isArray(page.links) && page.links.every((link) => typeof link === 'string'), `${page.url}: links asked for`);
    }
    const home = data[keys.indexOf('/')];
    if (home) assert.ok(home.links!.includes(`${crawlSite.url}/p/1`), 'the home page lists its links');

    // The site's side: each page once, nothing disallowed, the crawl-delay between page fetches.
    await assertPolite(crawlSite);
    assert.equal(crawlSite.hits('/robots.txt'), 1, 'robots.txt was read');
    const fetched = pageFetches(crawlSite);
    assert.ok(fetched.length >= 250, `${fetched.length} page fetches`);
    const delayMs = crawlSite.crawlDelay * 1000;
    // A lower bound only. Arrivals are timed on the site's own thread, so the service's busy event
    // loop does not skew them; 30 ms are allowed per gap for a thread the machine ran late, none
    // on the sum.
    const gaps = fetched.slice(1).map((hit, i) => ({ gap: hit.at - fetched[i].at, between: `${fetched[i].path} → ${hit.path}` }));
    const short = gaps.filter(({ gap }) => gap < delayMs - 30).map(({ gap, between }) => `${between}: ${gap.toFixed(1)} ms`);
    assert.deepEqual(short, [], `page fetches at least ${delayMs} ms apart (Crawl-delay)`);
    const span = fetched.at(-1)!.at - fetched[0].at;
    assert.ok(span >= (fetched.length - 1) * delayMs - 50, `${fetched.length} fetches in ${Math.round(span)} ms: the Crawl-delay was not honoured on average`);

    // The money.
    assert.equal(await balance(user.id), 750, 'the balance dropped by exactly the 250 pages');
    await assertNoHoldLeft(user.id);
    await assertCleanAudit(user.id);
  });

  test('max_depth 1, sitemap skip and exclude_paths: exactly the home page and its allowed links', { timeout: 240_000 }, async () => {
    const crawlSite = await site({ pages: 60, crawlDelay: 0 });
    const user = await service.user({ scraping: 100 });
    const id = await started('crawl', user.token, { url: crawlSite.url, limit: 100, max_depth: 1, sitemap: 'skip', exclude_paths: ['^/p/[2-4]/?$'], format: 'text' });
    const job = await finished('crawl', id, user.token);
    assert.equal(job.status, 'completed');
    const { data } = await readAllResults(service.url, 'crawl', id, user.token);
    const keys = resultKeys(crawlSite, data);
    // Depth counts links from the start page; the home page links /p/1–/p/8 and /about (the
    // others are the traps: private, a loop, too large, off the site or redirected off it).
    // The pattern allows the trailing slash: the home page links /p/2 as /p/2/.
    assert.deepEqual([...keys].sort(), ['/', '/about', '/p/1', '/p/5', '/p/6', '/p/7', '/p/8'].sort());
    for (const key of ['/p/2', '/p/3', '/p/4', '/p/9', '/p/41']) assert.equal(crawlSite.hits(key), 0, `${key} was not fetched`);
    for (const path of ['/sitemap_index.xml', '/sitemaps/pages-1.xml', '/sitemaps/pages-2.xml.gz', '/sitemap.xml']) assert.equal(crawlSite.hits(path), 0, `sitemap: "skip" reads no ${path}`);
    for (const page of data) assert.ok(page.content.includes(crawlSite.codeWord(pageKey(page.url))), `${page.url}: text format`);
    assert.ok(data.every((page) => page.links === undefined), 'no links unless asked');
    await assertPolite(crawlSite);
    assert.equal(job.credits_used, 7);
    assert.equal(await balance(user.id), 93);
    await assertNoHoldLeft(user.id);
    await assertCleanAudit(user.id);
  });

  test('sitemap "only": the pages the sitemaps list (index, plain and gzip children), nothing disallowed', { timeout: 240_000 }, async () => {
    const crawlSite = await site({ pages: 60, crawlDelay: 0 });
    const user = await service.user({ scraping: 200 });
    const id = await started('crawl', user.token, { url: crawlSite.url, limit: 200, sitemap: 'only', format: 'raw' });
    const job = await finished('crawl', id, user.token);
    assert.equal(job.status, 'completed');
    const { data } = await readAllResults(service.url, 'crawl', id, user.token);
    const keys = resultKeys(crawlSite, data);
    assert.equal(new Set(keys).size, keys.length, 'each page once');
    // Every listed page (both children of the index, the gzip one included); the /private/ one is
    // refused by robots.txt. Whether the start URL counts when unlisted is left open: it is listed here.
    assert.deepEqual([...keys].sort(), [...crawlSite.sitemapPaths].sort());
    assert.equal(crawlSite.hits('/p/10'), 0, 'a page the sitemaps do not list is not fetched');
    await assertPolite(crawlSite);
    assert.equal(job.credits_used, data.length);
    assert.equal(await balance(user.id), 200 - data.length);
    await assertNoHoldLeft(user.id);
  });

  test('a balance of 40 and limit 100: 40 pages, stopped_no_credits, balance 0, no page fetched unpaid', { timeout: 240_000 }, async () => {
    const crawlSite = await site({ pages: 300, crawlDelay: 0 });
    const user = await service.user({ scraping: 40 });
    const id = await started('crawl', user.token, { url: crawlSite.url, limit: 100, max_depth: 3 });
    const job = await finished('crawl', id, user.token);
    assert.equal(job.status, 'stopped_no_credits');
    assert.equal(job.completed, 40);
    assert.equal(job.credits_used, 40);
    const { data } = await readAllResults(service.url, 'crawl', id, user.token);
    assert.equal(data.length, 40);
    assert.equal(new Set(resultKeys(crawlSite, data)).size, 40);
    assert.equal(await balance(user.id), 0);
    // Held page by page before the fetch: a page that answers is a page paid for.
    const answered = new Set(crawlSite.log.filter((hit) => crawlSite.pagePaths.includes(hit.key)).map((hit) => hit.key));
    assert.equal(answered.size, 40, 'no page was fetched without a credit held for it');
    await assertPolite(crawlSite);
    await assertNoHoldLeft(user.id);
    await assertCleanAudit(user.id);
    // Still out of credits: a new crawl is refused at once.
    assert.deepEqual((await create('crawl', user.token, { url: crawlSite.url })).body, NO_CREDITS);
  });

  test('DELETE mid-crawl: cancelled; nothing more is fetched or billed', { timeout: 240_000 }, async () => {
    const crawlSite = await site({ pages: 300, latencyMs: 100, crawlDelay: 0 });
    const user = await service.user({ scraping: 1000 });
    const id = await started('crawl', user.token, { url: crawlSite.url, limit: 250 });
    await waitForJob(service.url, 'crawl', id, user.token, 120_000, (job) => job.completed >= 5 || (FINAL_JOB_STATUSES as readonly string[]).includes(job.status));

    const cancel = await service.call('DELETE', `/v1/crawl/${id}`, { token: user.token });
    const cancelledAt = performance.now();
    assert.equal(cancel.status, 200, cancel.text);
    assert.deepEqual(cancel.body, { status: 'cancelled' });

    // Pages already in flight when the cancel landed settle (captured or released); then nothing moves.
    await eventually(() => holdsOf(user.id), (n) => n === 0, 15_000, 'the holds of pages in flight to settle');
    const before = await readJob(service.url, 'crawl', id, user.token);
    const balanceBefore = await balance(user.id);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const after = await readJob(service.url, 'crawl', id, user.token);
    await crawlSite.flush();

    assert.equal(after.status, 'cancelled');
    assert.ok(after.completed < 250, `cancelled before the end (${after.completed} pages)`);
    assert.equal(after.credits_used, before.credits_used, 'nothing billed after the cancel');
    assert.equal(after.completed, before.completed);
    assert.equal(await balance(user.id), balanceBefore);
    const late = crawlSite.log.filter((hit) => hit.at > cancelledAt + 500);
    assert.deepEqual(
      late.map((hit) => hit.path),
      [],
      'nothing fetched after the cancel (a fetch already started when it landed may arrive within 500 ms)',
    );

    const { data } = await readAllResults(service.url, 'crawl', id, user.token);
    assert.equal(data.length, after.completed);
    assert.equal(after.credits_used, data.length, 'each delivered page billed, nothing else');
    assert.equal(await balance(user.id), 1000 - after.credits_used);
    assert.equal(new Set(resultKeys(crawlSite, data)).size, data.length);
    await assertNoHoldLeft(user.id);
    await assertCleanAudit(user.id);
  });

  test('no Crawl-delay: at most JOB_HOST_CONCURRENCY (default 2) pages in flight on the host', { timeout: 240_000 }, async () => {
    // Each answer takes 100 ms, so the site sees how many the service has in flight at once.
    const crawlSite = await site({ pages: 60, latencyMs: 100, crawlDelay: 0 });
    const user = await service.user({ scraping: 100 });
    const id = await started('crawl', user.token, { url: crawlSite.url, limit: 40, format: 'raw' });
    const job = await finished('crawl', id, user.token);
    assert.equal(job.status, 'completed');
    assert.equal(job.completed, 40);
    assert.ok(
      crawlSite.maxInFlight() <= 2,
      `at most 2 pages in flight on one host; saw ${crawlSite.maxInFlight()}: ${crawlSite.busiest().join(' ')}`,
    );
    assert.ok(crawlSite.maxInFlight() >= 1);
  });
});

describe('what is refused', () => {
  test('validation: 422 in the Laravel shape, nothing charged', async () => {
    const crawlSite = await site({ pages: 10 });
    const user = await service.user({ scraping: 10 });
    const invalid = async (kind: JobKind, body: unknown, fields: string[]) => {
      const r = await create(kind, user.token, body);
      assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
      assert.equal(r.body.message, INVALID);
      for (const field of fields) {
        const messages = r.body.errors?.[field];
        assert.ok(Array.isArray(messages) && messages.length > 0 && messages.every((m: unknown) => typeof m === 'string'), `errors.${field} in ${r.text}`);
      }
      return r.body.errors as Record<string, string[]>;
    };

    assert.deepEqual((await invalid('crawl', {}, ['url'])).url, ['The url field is required.']);
    assert.deepEqual((await invalid('crawl', { url: 'not a url' }, ['url'])).url, ['The url must be a valid URL.']);
    assert.deepEqual((await invalid('crawl', { url: 'ftp://example.com/' }, ['url'])).url, ['The url must be a valid URL.']);
    await invalid('crawl', { url: crawlSite.url, include_paths: ['(unclosed'] }, ['include_paths.0']);
    const second = await invalid('crawl', { url: crawlSite.url, exclude_paths: ['^/fine/', '[bad'] }, ['exclude_paths.1']);
    assert.equal(second['exclude_paths.0'], undefined, 'a valid pattern is not reported');
    await invalid('crawl', { url: crawlSite.url, limit: 0 }, ['limit']);
    await invalid('crawl', { url: crawlSite.url, limit: 10_001 }, ['limit']);
    await invalid('crawl', { url: crawlSite.url, max_depth: 21 }, ['max_depth']);
    assert.deepEqual((await invalid('crawl', { url: crawlSite.url, sitemap: 'sometimes' }, ['sitemap'])).sitemap, ['The selected sitemap is invalid.']);
    assert.deepEqual((await invalid('crawl', { url: crawlSite.url, format: 'pdf' }, ['format'])).format, ['The selected format is invalid.']);
    await invalid('crawl', { url: crawlSite.url, links: 'yes' }, ['links']);
    await invalid('batch', {}, ['urls']);
    await invalid('batch', { urls: [] }, ['urls']);
    await invalid('batch', { urls: Array.from({ length: 1001 }, (_, i) => `${crawlSite.url}/p/${i}`) }, ['urls']);
    await invalid('batch', { urls: [`${crawlSite.url}/p/1`, 'not a url'] }, ['urls.1']);

    assert.equal(await balance(user.id), 10, 'nothing charged');
    await crawlSite.flush();
    assert.equal(crawlSite.log.length, 0, 'nothing fetched');
  });

  test('no token: 401; a balance below 1: 403, nothing fetched', async () => {
    const crawlSite = await site({ pages: 10 });
    const anonymous = await service.call('POST', '/v1/crawl', { body: { url: crawlSite.url } });
    assert.equal(anonymous.status, 401);
    assert.deepEqual(anonymous.body, { message: 'Unauthenticated.' });
    const broke = await service.user({});
    for (const [kind, body] of [
      ['crawl', { url: crawlSite.url }],
      ['batch', { urls: [`${crawlSite.url}/p/1`] }],
    ] as const) {
      const r = await create(kind, broke.token, body);
      assert.equal(r.status, 403, r.text);
      assert.deepEqual(r.body, NO_CREDITS);
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await crawlSite.flush();
    assert.equal(crawlSite.log.length, 0);
  });

  test('unknown, malformed and other users\' ids: 404 Not found. (GET and DELETE)', { timeout: 120_000 }, async () => {
    const crawlSite = await site({ pages: 10, crawlDelay: 0 });
    const owner = await service.user({ scraping: 20 });
    const stranger = await service.user({ scraping: 20 });
    for (const kind of ['crawl', 'batch'] as const) {
      for (const id of [randomUUID(), 'not-a-job', '12345']) {
        for (const method of ['GET', 'DELETE']) {
          const r = await service.call(method, `/v1/${kind}/${id}`, { token: owner.token });
          assert.equal(r.status, 404, `${method} /v1/${kind}/${id}: ${r.text}`);
          assert.deepEqual(r.body, NOT_FOUND);
        }
      }
    }
    const crawl = await started('crawl', owner.token, { url: crawlSite.url, limit: 3, sitemap: 'skip' });
    const batch = await started('batch', owner.token, { urls: [`${crawlSite.url}/p/1`, `${crawlSite.url}/p/2`] });
    for (const [kind, id] of [
      ['crawl', crawl],
      ['batch', batch],
    ] as const) {
      for (const method of ['GET', 'DELETE']) {
        const r = await service.call(method, `/v1/${kind}/${id}`, { token: stranger.token });
        assert.equal(r.status, 404, `${method} another user's ${kind}: ${r.text}`);
        assert.deepEqual(r.body, NOT_FOUND);
      }
      const job = await finished(kind, id, owner.token, 60_000);
      assert.equal(job.status, 'completed', `the stranger's DELETE did not cancel the ${kind}`);
    }
    assert.equal(await balance(stranger.id), 20);
    assert.equal(await balance(owner.id), 20 - 3 - 2);
  });

  test('a start URL on a non-public address is never fetched, nor billed', { timeout: 120_000 }, async () => {
    const crawlSite = await site({ pages: 10, crawlDelay: 0 });
    const user = await service.user({ scraping: 10 });
    // The same site by address: only the name localhost is exempt from the public-address rule.
    const r = await create('crawl', user.token, { url: `http://127.0.0.1:${crawlSite.port}/` });
    if (r.status === 201) {
      // Accepted, then refused at the first hop: the job ends without a page (which final
      // status it ends in, failed or completed with nothing, the contract leaves open).
      const job = await finished('crawl', r.body.id, user.token, 60_000);
      assert.equal(job.completed, 0);
      assert.equal(job.credits_used, 0);
    } else {
      assert.equal(r.status, 422, r.text);
      assert.deepEqual(r.body.errors.url, ['The url must point to a public address.']);
    }
    await crawlSite.flush();
    assert.equal(crawlSite.log.filter((hit) => hit.host.startsWith('127.0.0.1')).length, 0, 'the address was never connected to');
    assert.equal(await balance(user.id), 10);
    await assertNoHoldLeft(user.id);
  });
});

describe('a batch', () => {
  test('20 URLs with a duplicate, a 404 and an unreachable one: one page per distinct URL, billed per delivered page', { timeout: 240_000 }, async () => {
    const crawlSite = await site({ pages: 30, crawlDelay: 0 });
    const deadPort = await closedPort();
    const pages = Array.from({ length: 17 }, (_, i) => `${crawlSite.url}/p/${i + 1}`);
    const missing = `${crawlSite.url}/missing`;
    const unreachable = `http://localhost:${deadPort}/nothing-listens-here`;
    const urls = [...pages.slice(0, 9), pages[2], missing, ...pages.slice(9), unreachable];
    assert.equal(urls.length, 20);
    const user = await service.user({ scraping: 100 });
    const id = await started('batch', user.token, { urls, format: 'markdown' });
    const job = await finished('batch', id, user.token);
    assert.equal(job.status, 'completed');

    const { data } = await readAllResults(service.url, 'batch', id, user.token);
    // A 404 is delivered and billed, as /v1/web; the unreachable URL has no page to deliver.
    const delivered = data.filter((page) => page.status_code === 404 || page.status_code === 410 || (page.status_code >= 200 && page.status_code < 300));
    assert.deepEqual(delivered.map((page) => page.url).sort(), [...pages, missing].sort(), 'one page per distinct reachable URL');
    assert.equal(new Set(data.map((page) => page.url)).size, data.length, 'the duplicate gives one page');
    assert.ok(!delivered.some((page) => page.url === unreachable));
    assert.equal(delivered.find((page) => page.url === missing)?.status_code, 404);
    for (const page of delivered.filter((p) => p.status_code === 200)) {
      assert.ok(page.content.includes(crawlSite.codeWord(pageKey(page.url))), `${page.url}: its own text`);
    }
    assert.equal(crawlSite.hits('/p/3'), 1, 'the duplicate URL is fetched once');
    for (const url of [...pages, missing]) assert.equal(crawlSite.hits(url), 1, `${url} fetched once`);

    assert.equal(job.credits_used, 18, '17 pages and the 404');
    assert.equal(await balance(user.id), 100 - 18);
    await assertNoHoldLeft(user.id);
    await assertCleanAudit(user.id);
  });
});

describe('webhooks', () => {
  interface Delivery {
    status: number;
    hit: SiteHit;
    /** Arrival, `performance.now()` ms. */
    at: number;
  }

  /** A receiver on loopback that answers `fail(id, attempt)` ? 500 : 200, and keeps every delivery. */
  async function receiver(fail: (id: string, attempt: number, first: boolean) => boolean) {
    const hooks = await startLoopbackSite();
    receivers.push(hooks);
    const deliveries: Delivery[] = [];
    const attempts = new Map<string, number>();
    let firstId: string | undefined;
    hooks.route('/hook', (hit) => {
      let id = '';
      try {
        id = String(JSON.parse(hit.body).id);
      } catch {
        // Recorded all the same; the assertions on the body say what was wrong.
      }
      firstId ??= id;
      const attempt = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, attempt);
      const status = fail(id, attempt, id === firstId) ? 500 : 200;
      deliveries.push({ status, hit, at: performance.now() });
      return { status, headers: { 'content-type': 'application/json' }, body: status === 200 ? '{"received":true}' : '{"error":"try again"}' };
    });
    return { url: `${hooks.url('localhost')}/hook`, deliveries, attempts, firstId: () => firstId };
  }

  const events = (deliveries: Delivery[]) => deliveries.filter((d) => d.hit.path === '/hook').map((d) => ({ ...d, event: JSON.parse(d.hit.body) }));

  test('every event arrives signed; failed deliveries are retried under the same id', { timeout: 240_000 }, async (t) => {
    const crawlSite = await site({ pages: 30, crawlDelay: 0 });
    // The first event's first three attempts fail, and the first attempt of every other event.
    const hooks = await receiver((_id, attempt, first) => attempt <= (first ? 3 : 1));
    const user = await service.user({ scraping: 100 });
    const secretAnswer = await service.call('GET', '/me/webhook-secret', { token: user.token });
    assert.equal(secretAnswer.status, 200, secretAnswer.text);
    const secret: string = secretAnswer.body.secret;
    assert.match(secret, /^whsec_\S+$/);

    const id = await started('crawl', user.token, {
      url: crawlSite.url,
      limit: 5,
      max_depth: 2,
      sitemap: 'skip',
      webhook: { url: hooks.url, events: ['started', 'page', 'completed', 'failed'] },
    });
    const job = await finished('crawl', id, user.token);
    assert.equal(job.status, 'completed');
    const { data } = await readAllResults(service.url, 'crawl', id, user.token);
    assert.equal(data.length, 5);

    // Every event acknowledged: started, a page event per delivered page, completed.
    const acknowledged = () => new Set(events(hooks.deliveries).filter((d) => d.status === 200).map((d) => d.event.id));
    await eventually(
      async () => events(hooks.deliveries).filter((d) => d.status === 200).map((d) => d.event.type as string),
      (types) => types.filter((t) => t === 'crawl.page').length >= 5 && types.includes('crawl.started') && types.includes('crawl.completed'),
      120_000,
      'every event to be delivered (the first one after three failures)',
    );

    const all = events(hooks.deliveries);
    const t0 = all[0].at;
    t.diagnostic(`deliveries: ${all.map((d) => `+${((d.at - t0) / 1000).toFixed(1)}s ${d.event.type} ${d.status}`).join(', ')}`);
    for (const { hit, event } of all) {
      assert.match(String(hit.headers['content-type']), /^application\/json/);
      const header = String(hit.headers['gleaner-signature'] ?? '');
      assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/, 'Gleaner-Signature: t=<unix s>,v1=<hex>');
      assert.ok(verifyWebhookSignature(header, hit.body, secret), `event ${event.id} (${event.type}) verifies`);
      // The scheme itself, as a receiver in any language computes it.
      const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header)!;
      assert.equal(createHmac('sha256', secret).update(`${t}.${hit.body}`).digest('hex'), v1);
      assert.ok(Math.abs(Number(t) - Date.now() / 1000) < 300, 'signed now');
      assert.ok(!verifyWebhookSignature(header, `${hit.body} `, secret), 'a changed body does not verify');

      assert.equal(typeof event.id, 'string');
      assert.equal(event.job_id, id);
      assert.match(event.type, /^crawl\.(started|page|completed|failed)$/);
      assert.match(event.created_at, TIMESTAMP);
      assert.equal(typeof event.data, 'object');
    }

    const byId = new Map<string, typeof all>();
    for (const delivery of all) byId.set(delivery.event.id, [...(byId.get(delivery.event.id) ?? []), delivery]);
    // At least once, one event: every attempt of an id carries the same event.
    for (const [eventId, attempts] of byId) {
      for (const attempt of attempts) assert.deepEqual(attempt.event, attempts[0].event, `every attempt of ${eventId} is the same event`);
    }
    const first = hooks.firstId()!;
    assert.ok(byId.get(first)!.length >= 4, `the first event (${byId.get(first)![0].event.type}) was retried under its id until it was taken`);
    for (const [eventId, attempts] of byId) assert.ok(attempts.length >= 2, `event ${eventId} (${attempts[0].event.type}) was retried after its 500`);
    assert.deepEqual([...acknowledged()].sort(), [...byId.keys()].sort(), 'every event was eventually taken');

    const distinct = [...byId.values()].map((attempts) => attempts[0].event);
    const ofType = (type: string) => distinct.filter((event) => event.type === type);
    assert.equal(ofType('crawl.started').length, 1);
    assert.equal(ofType('crawl.completed').length, 1);
    assert.equal(ofType('crawl.failed').length, 0);
    assert.equal(ofType('crawl.page').length, 5, 'one page event per delivered page');
    assert.equal(distinct.length, 7);
    assert.deepEqual(ofType('crawl.page').map((event) => pageKey(event.data.url)).sort(), data.map((page) => pageKey(page.url)).sort());
    for (const event of ofType('crawl.page')) assert.equal(event.data.status_code, 200);
    const completed = ofType('crawl.completed')[0].data;
    assert.equal(completed.status, 'completed');
    assert.equal(completed.completed, 5);
    assert.equal(completed.credits_used, 5);
    assert.equal(await balance(user.id), 95, 'webhooks cost nothing');
  });

  test('events: ["completed"] sends only crawl.completed', { timeout: 240_000 }, async () => {
    const crawlSite = await site({ pages: 30, crawlDelay: 0 });
    const hooks = await receiver(() => false);
    const user = await service.user({ scraping: 100 });
    const id = await started('crawl', user.token, { url: crawlSite.url, limit: 3, sitemap: 'skip', webhook: { url: hooks.url, events: ['completed'] } });
    assert.equal((await finished('crawl', id, user.token)).status, 'completed');
    await eventually(async () => events(hooks.deliveries).length, (n) => n >= 1, 60_000, 'the completed event');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    assert.deepEqual([...new Set(events(hooks.deliveries).map((d) => d.event.type))], ['crawl.completed']);
  });

  test('a webhook URL on a private address: the crawl completes and the job records why nothing was sent', { timeout: 240_000 }, async () => {
    const crawlSite = await site({ pages: 30, crawlDelay: 0 });
    const user = await service.user({ scraping: 100 });
    // Webhook URLs pass the public-address rule at delivery time (contract §9), so this is accepted.
    const id = await started('crawl', user.token, { url: crawlSite.url, limit: 3, sitemap: 'skip', webhook: { url: 'http://10.0.0.1/hook' } });
    const job = await finished('crawl', id, user.token);
    assert.equal(job.status, 'completed');
    assert.equal(job.credits_used, 3);
    assert.equal(await balance(user.id), 97);

    // The operator sees why (GET /v1/crawl/{id} does not say): `gleaner jobs show <id> --json`.
    // The field that says it, and what it must say: adjust these two to the command's output.
    const WEBHOOK_ERROR_FIELD = 'webhook_error';
    const WEBHOOK_ERROR_TEXT = /private address|public address/i;
    const shown = await eventually(
      async () => (await runOperatorCommand(service.services, ['jobs', 'show', '--job', id, '--json'])) as Record<string, unknown>,
      (value) => typeof value?.[WEBHOOK_ERROR_FIELD] === 'string' && value[WEBHOOK_ERROR_FIELD] !== '',
      60_000,
      `the job to record its ${WEBHOOK_ERROR_FIELD}`,
    );
    assert.match(String(shown[WEBHOOK_ERROR_FIELD]), WEBHOOK_ERROR_TEXT, `jobs show: ${WEBHOOK_ERROR_FIELD} says why the webhook was not sent`);
  });
});

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
