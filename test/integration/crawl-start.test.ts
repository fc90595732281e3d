/**
 * A crawl's start when the site cannot be read (RFC 9309: a robots.txt that cannot be fetched
 * means "crawl nothing" for now): a site down for a moment costs nothing and the start is tried
 * again; a site that stays down fails the crawl, free, with the reason.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestService, type TestService } from '../support/service.ts';
import { startLoopbackSite, type LoopbackSite } from '../support/web-site.ts';

let service: TestService;
let site: LoopbackSite;

before(async () => {
  service = await startTestService({ JOB_POLL_SECONDS: '0.5' });
  site = await startLoopbackSite();
});

after(async () => {
  await service?.close();
  await site?.close();
});

const PAGE = (text: string) => ({ body: `<html><body><article><h1>${text}</h1><p>${text} is a page of this small site with some words.</p></article></body></html>` });

async function finished(id: string, token: string) {
  for (let waited = 0; waited < 120_000; waited += 250) {
    const job = await service.call('GET', `/v1/crawl/${id}`, { token });
    if (!['queued', 'running'].includes(job.body.status)) return job.body;
    await sleep(250);
  }
  throw new Error(`crawl ${id} did not end`);
}

test('robots.txt answering 503 once: the start is tried again and the crawl completes', { timeout: 180_000 }, async () => {
  let robotsAsked = 0;
  site.route('/robots.txt', () => (++robotsAsked === 1 ? { status: 503, body: 'down for a moment' } : { status: 200, body: 'User-agent: *\nAllow: /\n' }));
  site.route('/', () => PAGE('Home'));
  const user = await service.user({ scraping: 10 });
  const created = await service.call('POST', '/v1/crawl', { token: user.token, body: { url: `${site.url()}/`, limit: 5, sitemap: 'skip' } });
  assert.equal(created.status, 201);
  const job = await finished(created.body.id, user.token);
  assert.equal(job.status, 'completed');
  assert.equal(job.completed, 1);
  assert.ok(robotsAsked >= 2, `robots.txt asked again (${robotsAsked} times)`);
});

test('robots.txt that keeps answering 503: the crawl fails with the reason, nothing fetched, nothing charged', { timeout: 180_000 }, async () => {
  const other = await startLoopbackSite();
  try {
    let pagesAsked = 0;
    other.route('/robots.txt', () => ({ status: 503, body: 'down' }));
    other.route('/', () => {
      pagesAsked++;
      return PAGE('Never');
    });
    const user = await service.user({ scraping: 10 });
    const created = await service.call('POST', '/v1/crawl', { token: user.token, body: { url: `${other.url()}/`, limit: 5 } });
    assert.equal(created.status, 201);
    const job = await finished(created.body.id, user.token);
    assert.equal(job.status, 'failed');
    assert.match(job.error, /robots\.txt could not be read \(it answered 503\)/);
    assert.equal(job.completed, 0);
    assert.equal(job.credits_used, 0);
    assert.equal(pagesAsked, 0, 'no page fetched while robots.txt could not be read');
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 10);
  } finally {
    await other.close();
  }
});
