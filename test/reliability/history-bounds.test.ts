/**
 * Request history stays small whatever a client sends (issue 19 item 3): a user with no credits
 * sends requests carrying an unknown 880 KB field. Each is refused (403) and recorded, but what is
 * recorded is the bounded summary of the declared fields (src/history/params.ts), so the table
 * grows by kilobytes, not by the megabytes sent, and a page of 100 rows stays small.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestService, type TestService } from '../support/service.ts';
import { houseRuleViolation, runPool } from '../support/reliability-harness.ts';
import { HISTORY_PARAMS_MAX_BYTES } from '../../src/history/params.ts';
import { fileWatchdog } from '../support/health-watchdog.ts';

const REQUESTS = 50;
const UNKNOWN_FIELD_BYTES = 880 * 1024;
/** The table's growth allowed over all the requests: their 44 MB sent would be far past it. */
const GROWTH_BOUND_BYTES = 2 * 1024 * 1024;
/** A page of 100 rows: each row's params within their budget, plus the row's own columns. */
const PAGE_BOUND_BYTES = 100 * (HISTORY_PARAMS_MAX_BYTES + 512);

let service: TestService;

const watchdog = fileWatchdog('bounded history');

before(async () => {
  service = await startTestService();
  watchdog.start(service.url);
});

after(async () => {
  await service?.close();
});

async function historyBytes(): Promise<{ table: number; params: number }> {
  const [row] = await service.services.db.query<{ table: string; params: string }>(
    `SELECT pg_total_relation_size('request_history')::text AS table, coalesce(sum(pg_column_size(params)), 0)::text AS params FROM request_history`,
  );
  return { table: Number(row.table), params: Number(row.params) };
}

test(`${REQUESTS} refused requests with an unknown ${UNKNOWN_FIELD_BYTES / 1024} KB field: history grows by kilobytes, a page stays small`, async () => {
  const user = await service.user({ scraping: 0 });
  // Random, as a hostile client's would be: a repeated character compresses to almost nothing.
  const padding = randomBytes((UNKNOWN_FIELD_BYTES * 3) / 4).toString('base64');
  const before = await historyBytes();
  const answers = await runPool(Array.from({ length: REQUESTS }, (_, i) => i), 4, async (i) =>
    service.call('POST', '/v1/web', { token: user.token, body: { url: `http://127.0.0.1:9/page-${i}`, format: 'text', padding } }),
  );
  for (const answer of answers) {
    assert.equal(answer.status, 403, answer.text.slice(0, 200));
    assert.equal(houseRuleViolation(answer), null);
  }
  const grown = await historyBytes();
  const growth = { table: grown.table - before.table, params: grown.params - before.params };
  console.log(`# history growth over ${REQUESTS} refused requests of ${UNKNOWN_FIELD_BYTES} bytes: ${JSON.stringify(growth)}`);
  assert.ok(growth.table < GROWTH_BOUND_BYTES, `request_history grew ${growth.table} bytes`);
  assert.ok(growth.params < REQUESTS * HISTORY_PARAMS_MAX_BYTES, `params take ${growth.params} bytes`);

  const page = await service.call('GET', '/requests?per_page=100', { token: user.token });
  assert.equal(page.status, 200);
  assert.equal(page.body.data.length, REQUESTS);
  console.log(`# GET /requests?per_page=100: ${page.text.length} bytes`);
  assert.ok(page.text.length < PAGE_BOUND_BYTES, `the page is ${page.text.length} bytes`);
  // The declared fields are kept; the unknown one is not.
  assert.deepEqual(page.body.data[0].params, { url: `http://127.0.0.1:9/page-${REQUESTS - 1}`, format: 'text' });
});

test('rows stored before the summary (unbounded params) are cut when a page is read', async () => {
  const user = await service.user({ scraping: 0 });
  const huge = { url: 'https://example.com/', padding: 'y'.repeat(UNKNOWN_FIELD_BYTES), list: Array.from({ length: 20_000 }, (_, i) => i) };
  for (let i = 0; i < 20; i++) {
    await service.services.db.query(
      `INSERT INTO request_history (user_id, request_id, method, endpoint, product, status, credits, duration_ms, params)
       VALUES ($1, $2, 'POST', '/v1/web', 'scraping', 403, 0, 1, $3::jsonb)`,
      [user.id, `legacy-${user.id}-${i}`, JSON.stringify(huge)],
    );
  }
  const page = await service.call('GET', '/requests?per_page=100', { token: user.token });
  assert.equal(page.status, 200);
  assert.equal(page.body.data.length, 20);
  assert.ok(page.text.length < 20 * (HISTORY_PARAMS_MAX_BYTES + 512), `the page is ${page.text.length} bytes`);
  const params = page.body.data[0].params;
  assert.equal(params.url, 'https://example.com/');
  assert.match(params.padding, /^y{1000}…\[cut\]$/);
});

test('no hostile input of this file stalled the event loop: /health answered within 1 s throughout (issue 33)', async () => {
  await watchdog.assertClean();
});
