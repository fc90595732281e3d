/** GET /usage, the dashboard chart's source: per UTC day and product, from history and ledger. */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { TEST_ENDPOINTS } from '../support/work-endpoint.ts';

let service: TestService;
before(async () => {
  service = await startTestService({}, { endpoints: TEST_ENDPOINTS });
});
after(() => service?.close());

const day = (offset: number) => new Date(Date.now() - offset * 86_400_000).toISOString().slice(0, 10);

test('credits and request counts per day and product, refunds deducted, unbilled and not in history', async () => {
  const user = await service.user({ scraping: 100 });
  assert.equal((await service.call('POST', '/v1/test/work', { token: user.token, body: { cost: 5, charge: 3 } })).status, 200);
  assert.equal((await service.call('POST', '/v1/test/work', { token: user.token, body: { outcome: 'fail' } })).status, 400);
  // Older history, written as the pipeline writes it: 3 days ago (in the window) and 40 days ago (out of it).
  const insert = (requestId: string, credits: number, daysAgo: number, product = 'extraction') =>
    service.services.db.query(
      `INSERT INTO request_history (user_id, request_id, method, endpoint, product, status, credits, duration_ms, created_at)
       VALUES ($1, $2, 'POST', '/v1/pdf', $3, 200, $4, 10, now() - make_interval(days => $5))`,
      [user.id, requestId, product, credits, daysAgo],
    );
  await insert(`old-a-${user.id}`, 7, 3);
  await insert(`old-b-${user.id}`, 5, 3);
  await insert(`old-c-${user.id}`, 9, 40);
  // The second was refunded (its client hung up during capture).
  await service.services.db.query(
    `INSERT INTO credit_ledger (user_id, product, kind, delta, reference) VALUES ($1, 'extraction', 'refund', 5, $2)`,
    [user.id, `old-b-${user.id}`],
  );

  const before = (await service.call('GET', '/me', { token: user.token })).body.user.balances.scraping;
  const usage = await service.call('GET', '/usage', { token: user.token });
  assert.equal(usage.status, 200);
  assert.equal(usage.body.days, 30);
  assert.equal(usage.body.to, day(0));
  assert.equal(usage.body.from, day(29));
  assert.deepEqual(usage.body.data, [
    { date: day(3), product: 'extraction', requests: 2, credits: 7 },
    { date: day(0), product: 'scraping', requests: 2, credits: 3 },
  ]);
  const scraping = usage.body.products.find((p: { product: string }) => p.product === 'scraping');
  assert.equal(scraping.balance, 97);

  const wide = await service.call('GET', '/usage?days=60', { token: user.token });
  assert.equal(wide.body.data.length, 3);
  assert.equal((await service.call('GET', '/me', { token: user.token })).body.user.balances.scraping, before, 'unbilled');
  const history = await service.call('GET', '/requests', { token: user.token });
  assert.ok(history.body.data.every((row: { endpoint: string }) => row.endpoint !== '/usage'), 'not recorded in history');
});

test("a wallet monitor's charges (no request of their own) count as blockchain credits, not requests", async () => {
  const user = await service.user({ blockchain: 100 });
  const capture = (reference: string, charged: number, daysAgo: number) =>
    service.services.db.query(
      `INSERT INTO credit_ledger (user_id, product, kind, delta, charged, reference, created_at)
       VALUES ($1, 'blockchain', 'capture', 0, $2, $3, now() - make_interval(days => $4))`,
      [user.id, charged, reference, daysAgo],
    );
  await capture(`chain-day:m-${user.id}:${day(1)}:1`, 10, 1);
  await capture(`chain-event:e1-${user.id}:1`, 1, 1);
  await capture(`chain-event:e2-${user.id}:2`, 1, 0);
  // A crawl page's capture is not counted here: its credits reach the crawl request's history row.
  await capture(`job:j-${user.id}:abc:1`, 1, 0);
  const { body } = await service.call('GET', '/usage?days=7', { token: user.token });
  assert.deepEqual(body.data, [
    { date: day(1), product: 'blockchain', requests: 0, credits: 11 },
    { date: day(0), product: 'blockchain', requests: 0, credits: 1 },
  ]);
});

test('the plan and its monthly credits come with each balance', async () => {
  const user = await service.user({ extraction: 10 });
  await service.services.db.query(`UPDATE balances SET plan = 'growth' WHERE user_id = $1 AND product = 'extraction'`, [user.id]);
  const { body } = await service.call('GET', '/usage?days=1', { token: user.token });
  assert.deepEqual(body.products.find((p: { product: string }) => p.product === 'extraction'), { product: 'extraction', balance: 10, plan: 'growth', monthly_credits: 55_000 });
  assert.deepEqual(body.data, []);
  assert.equal(body.from, body.to);
});

test('bad days → 422; no token → 401', async () => {
  const user = await service.user();
  const bad = await service.call('GET', '/usage?days=0', { token: user.token });
  assert.equal(bad.status, 422);
  assert.deepEqual(bad.body.errors, { days: ['The days must be between 1 and 366.'] });
  assert.equal((await service.call('GET', '/usage')).status, 401);
});

test('migration 0006 creates the usage index', async () => {
  const indexes = await service.services.db.query<{ indexname: string }>(`SELECT indexname FROM pg_indexes WHERE tablename = 'request_history'`);
  assert.ok(indexes.some((i) => i.indexname === 'request_history_user_time'));
});
