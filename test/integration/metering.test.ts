/** The metered pipeline on the real server: holds, capture, release, concurrency, history. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { TEST_ENDPOINTS } from '../support/work-endpoint.ts';
import { CreditLedger } from '../../src/credits/ledger.ts';

let service: TestService;

before(async () => {
  service = await startTestService({}, { endpoints: TEST_ENDPOINTS });
});
after(() => service.close());

const work = (token: string, body: Record<string, unknown> = {}) => service.call('POST', '/v1/test/work', { token, body });

async function ledgerAgrees(userId: number) {
  for (const row of await service.services.ledger.recompute(userId)) {
    assert.equal(row.stored, row.ledger, `ledger and balance differ for ${row.product}`);
  }
}

async function holdsOf(userId: number): Promise<number> {
  const [row] = await service.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM credit_holds WHERE user_id = $1', [userId]);
  return row.n;
}

describe('charging', () => {
  test('a success charges its cost; the hold is gone', async () => {
    const user = await service.user({ scraping: 10 });
    const r = await work(user.token, { cost: 3 });
    assert.equal(r.status, 200);
    assert.equal(r.body.held, 3);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 7);
    assert.equal(await holdsOf(user.id), 0);
    await ledgerAgrees(user.id);
  });

  test('failures cost nothing: 400, 502 and 500 release the whole hold', async () => {
    const user = await service.user({ scraping: 10 });
    for (const outcome of ['fail', 'upstream', 'throw', 'overcharge']) {
      const r = await work(user.token, { cost: 4, outcome });
      assert.ok(r.status >= 400, `${outcome}: ${r.status}`);
      assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 10, outcome);
    }
    assert.equal(await holdsOf(user.id), 0);
    await ledgerAgrees(user.id);
  });

  test('validation failures cost nothing and hold nothing', async () => {
    const user = await service.user({ scraping: 10 });
    const r = await work(user.token, { cost: 0, outcome: 'nope', delay_ms: 'soon' });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors, {
      cost: ['The cost must be at least 1.'],
      outcome: ['The selected outcome is invalid.'],
      delay_ms: ['The delay ms must be an integer.'],
    });
    const ledger = await service.services.db.query('SELECT 1 FROM credit_ledger WHERE user_id = $1 AND kind = $2', [user.id, 'hold']);
    assert.equal(ledger.length, 0);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 10);
  });

  test('a balance below the cost: 403 and nothing charged; zero balance too', async () => {
    const user = await service.user({ scraping: 2 });
    let r = await work(user.token, { cost: 3 });
    assert.equal(r.status, 403);
    assert.deepEqual(r.body, { message: 'You do not have enough credits to perform this action.', product: 'scraping', required: 3, balance: 2 });
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 2);
    const broke = await service.user();
    r = await work(broke.token);
    assert.equal(r.status, 403);
  });

  test('products are separate: extraction credits do not pay for scraping', async () => {
    const user = await service.user({ extraction: 100 });
    assert.equal((await work(user.token)).status, 403);
  });

  test('a variable cost holds up to the maximum (or the balance) and captures the reported cost', async () => {
    const user = await service.user({ scraping: 12 });
    let r = await work(user.token, { cost: 1, max: 30, charge: 5 });
    assert.equal(r.status, 200);
    assert.equal(r.body.held, 12, 'held the whole balance, which is below the maximum');
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 7);
    r = await work(user.token, { cost: 1, max: 3, charge: 2 });
    assert.equal(r.body.held, 3);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 5);
    await ledgerAgrees(user.id);
  });

  /** Sends slow work, hangs up once its credits are held, and waits until they are settled. */
  async function abandon(user: { id: number; token: string }, body: Record<string, unknown>) {
    const controller = new AbortController();
    const pending = fetch(service.url + '/v1/test/work', {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: controller.signal,
    }).catch(() => null);
    await waitFor(async () => (await holdsOf(user.id)) === 1);
    controller.abort();
    await pending;
    await waitFor(async () => (await holdsOf(user.id)) === 0);
    const history = await service.call('GET', '/requests', { token: user.token });
    return history.body.data[0] as { status: number; credits: number };
  }

  test('a client that goes away is not charged', async () => {
    const user = await service.user({ scraping: 10 });
    const recorded = await abandon(user, { cost: 4, delay_ms: 2000 });
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 10);
    assert.deepEqual([recorded.status, recorded.credits], [499, 0]);
  });

  test('a client that goes away is recorded as 499 even when its work then fails with an answer of its own', async () => {
    const user = await service.user({ scraping: 10 });
    const recorded = await abandon(user, { cost: 4, delay_ms: 2000, outcome: 'fail' });
    assert.deepEqual([recorded.status, recorded.credits], [499, 0]);
  });

  test('a success whose credits cannot be captured is not answered as a success', async () => {
    const user = await service.user({ scraping: 10 });
    const ledger = service.services.ledger;
    const settle = ledger.settle;
    let failed = 0;
    ledger.settle = async (requestId, charge, history) => {
      if (charge > 0) {
        failed += 1;
        throw new Error('the database went away');
      }
      return settle.call(ledger, requestId, charge, history);
    };
    try {
      const r = await work(user.token, { cost: 3 });
      assert.equal(r.status, 500);
      assert.deepEqual(r.body, { message: 'Server Error' });
      assert.equal(failed, 1);
    } finally {
      ledger.settle = settle;
    }
    // The release that followed went through: nothing charged, nothing held.
    assert.equal(await ledger.balance(user.id, 'scraping'), 10);
    assert.equal(await holdsOf(user.id), 0);
  });

  test('a client that hangs up while its credits are being captured gets them back, recorded as 499', async () => {
    const user = await service.user({ scraping: 10 });
    const ledger = service.services.ledger;
    const settle = ledger.settle;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    // Captures wait at the gate: the client hangs up in that moment.
    ledger.settle = async (requestId, charge, history) => {
      if (charge > 0) await gate;
      return settle.call(ledger, requestId, charge, history);
    };
    try {
      const controller = new AbortController();
      const pending = fetch(service.url + '/v1/test/work', {
        method: 'POST',
        headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ cost: 3 }),
        signal: controller.signal,
      }).catch(() => null);
      await waitFor(async () => (await holdsOf(user.id)) === 1);
      controller.abort();
      await pending;
      await new Promise((resolve) => setTimeout(resolve, 300)); // the server sees the connection close
      open();
      await waitFor(async () => (await holdsOf(user.id)) === 0);
    } finally {
      ledger.settle = settle;
    }
    await waitFor(async () => (await ledger.balance(user.id, 'scraping')) === 10);
    const history = await service.call('GET', '/requests', { token: user.token });
    assert.deepEqual([history.body.data[0].status, history.body.data[0].credits], [499, 0]);
    const [refunds] = await service.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM credit_ledger WHERE user_id = $1 AND kind = 'refund'`, [user.id]);
    assert.equal(refunds.n, 1);
    await ledgerAgrees(user.id);
  });

  test('a refund is made once: sent again, it changes nothing', async () => {
    const user = await service.user({ scraping: 10 });
    const r = await work(user.token, { cost: 2 });
    assert.equal(r.status, 200);
    const [row] = await service.services.db.query<{ request_id: string }>('SELECT request_id FROM request_history WHERE user_id = $1', [user.id]);
    await service.services.ledger.refund(row.request_id, user.id, 'scraping', 2);
    await service.services.ledger.refund(row.request_id, user.id, 'scraping', 2);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 10);
    await ledgerAgrees(user.id);
  });

  test('parameters PostgreSQL cannot store as they are (NUL, a lone surrogate) are charged and recorded, cleaned', async () => {
    const user = await service.user({ scraping: 10 });
    // Written by hand: the escapes must reach the server as JSON escapes.
    const body = '{"cost": 2, "note": "a\\u0000b\\ud800x", "odd\\u0000key": "x"}';
    const r = await service.call('POST', '/v1/test/work', { token: user.token, body });
    assert.equal(r.status, 200);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 8);
    assert.equal(await holdsOf(user.id), 0);
    const history = await service.call('GET', '/requests', { token: user.token });
    assert.equal(history.body.data[0].credits, 2);
    // The undeclared field is not recorded (history keeps declared fields only).
    assert.deepEqual(history.body.data[0].params, { cost: 2, note: 'a\uFFFDb\uFFFDx' });
    await ledgerAgrees(user.id);
  });
});

describe('concurrency', () => {
  test('200 concurrent requests of cost 1 against a balance of 50: exactly 50 succeed', async () => {
    const user = await service.user({ scraping: 50 });
    const answers = await Promise.all(Array.from({ length: 200 }, () => work(user.token, { delay_ms: 5 })));
    const statuses = answers.map((a) => a.status);
    assert.equal(statuses.filter((s) => s === 200).length, 50);
    assert.equal(statuses.filter((s) => s === 403).length, 150);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 0);
    const [captured] = await service.services.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM credit_ledger WHERE user_id = $1 AND kind = 'capture'`,
      [user.id],
    );
    assert.equal(captured.n, 50);
    await ledgerAgrees(user.id);
  });
});

describe('holds left behind', () => {
  test('the sweeper returns expired holds to the balance, once', async () => {
    const user = await service.user({ scraping: 20 });
    // The hold of another process (one that stopped): this process's own live holds are never swept.
    const stopped = new CreditLedger(service.services.db, { holdTtlSeconds: service.services.ledger.holdTtlSeconds });
    const held = await stopped.hold({ requestId: 'crashed-request', userId: user.id, product: 'scraping', min: 1, max: 8 });
    stopped.stop();
    assert.equal(held, 8);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 12);
    await service.services.db.query(`UPDATE credit_holds SET expires_at = clock_timestamp() - interval '1 second' WHERE request_id = 'crashed-request'`);
    assert.ok((await service.services.ledger.sweepExpiredHolds()) >= 1);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 20);
    // A late settlement of the swept hold changes nothing.
    assert.equal(await service.services.ledger.settle('crashed-request', 8), 0);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 20);
    await ledgerAgrees(user.id);
  });

  test("a process's own live hold is not swept, even past its expiry (a stall longer than the TTL); it is captured as usual", async () => {
    const user = await service.user({ scraping: 20 });
    const ledger = service.services.ledger;
    assert.equal(await ledger.hold({ requestId: 'stalled-request', userId: user.id, product: 'scraping', min: 1, max: 3 }), 3);
    await service.services.db.query(`UPDATE credit_holds SET expires_at = clock_timestamp() - interval '1 second' WHERE request_id = 'stalled-request'`);
    await ledger.sweepExpiredHolds();
    assert.equal(await ledger.heldFor('stalled-request'), 3, 'still held by the live process');
    assert.equal(await ledger.settle('stalled-request', 3), 3);
    assert.equal(await ledger.balance(user.id, 'scraping'), 17);
    // Another process's sweep still returns it, were this process gone.
    assert.equal(await ledger.hold({ requestId: 'stalled-elsewhere', userId: user.id, product: 'scraping', min: 1, max: 2 }), 2);
    await service.services.db.query(`UPDATE credit_holds SET expires_at = clock_timestamp() - interval '1 second' WHERE request_id = 'stalled-elsewhere'`);
    const other = new CreditLedger(service.services.db, { holdTtlSeconds: ledger.holdTtlSeconds });
    assert.equal(await other.sweepExpiredHolds(), 1);
    assert.equal(await ledger.settle('stalled-elsewhere', 2), 0);
    assert.equal(await ledger.balance(user.id, 'scraping'), 17);
    await ledgerAgrees(user.id);
  });

  test('the same request reference is never held twice', async () => {
    const user = await service.user({ scraping: 20 });
    await service.services.ledger.hold({ requestId: 'dup-ref', userId: user.id, product: 'scraping', min: 1, max: 2 });
    await assert.rejects(service.services.ledger.hold({ requestId: 'dup-ref', userId: user.id, product: 'scraping', min: 1, max: 2 }));
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 18);
    await service.services.ledger.settle('dup-ref', 2);
    await ledgerAgrees(user.id);
  });
});

describe('GET /requests', () => {
  test('records every authenticated /v1 request without secrets, newest first, per user', async () => {
    const user = await service.user({ scraping: 5 });
    const other = await service.user({ scraping: 5 });
    await work(user.token, { cost: 2, secret_key: 'hunter2' });
    await work(user.token, { cost: 9 }); // 403
    await work(user.token, { cost: 'x' }); // 422
    await work(other.token, { cost: 1 });
    await service.call('GET', '/me', { token: user.token }); // not a /v1 route

    const r = await service.call('GET', '/requests', { token: user.token });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body), ['current_page', 'data', 'first_page_url', 'from', 'next_page_url', 'path', 'per_page', 'prev_page_url', 'to']);
    assert.equal(r.body.data.length, 3);
    assert.deepEqual(
      r.body.data.map((d: any) => [d.status, d.credits]),
      [
        [422, 0],
        [403, 0],
        [200, 2],
      ],
    );
    const first = r.body.data[2];
    assert.equal(first.method, 'POST');
    assert.equal(first.endpoint, '/v1/test/work');
    assert.equal(first.product, 'scraping');
    assert.deepEqual(first.params, { cost: 2 });
    assert.ok(Number.isInteger(first.duration_ms) && first.duration_ms >= 0);
    assert.match(first.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    assert.doesNotMatch(r.text, /hunter2/);
    assert.equal(r.body.from, 1);
    assert.equal(r.body.to, 3);
    assert.equal(r.body.next_page_url, null);
    assert.equal(r.body.path, `${service.url.replace('127.0.0.1', '127.0.0.1')}/requests`);

    const others = await service.call('GET', '/requests', { token: other.token });
    assert.equal(others.body.data.length, 1);
  });

  test('a filter no row can match (a NUL character) is an empty page, not a fault', async () => {
    const user = await service.user({ scraping: 5 });
    await work(user.token);
    const r = await service.call('GET', '/requests?endpoint=%2Fv1%2Ftest%2Fwork%00', { token: user.token });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body.data, []);
  });

  test('paginates simply and filters by endpoint and status', async () => {
    const user = await service.user({ scraping: 100 });
    for (let i = 0; i < 5; i++) await work(user.token);
    await work(user.token, { outcome: 'fail' });

    const page1 = await service.call('GET', '/requests?per_page=2', { token: user.token });
    assert.equal(page1.body.data.length, 2);
    assert.equal(page1.body.per_page, 2);
    assert.equal(page1.body.prev_page_url, null);
    assert.match(page1.body.next_page_url, /[?&]page=2/);
    const page3 = await service.call('GET', '/requests?per_page=2&page=3', { token: user.token });
    assert.equal(page3.body.from, 5);
    assert.equal(page3.body.to, 6);
    assert.equal(page3.body.next_page_url, null);
    assert.match(page3.body.prev_page_url, /[?&]page=2/);

    const failed = await service.call('GET', '/requests?status=400', { token: user.token });
    assert.deepEqual(failed.body.data.map((d: any) => d.status), [400]);
    const byEndpoint = await service.call('GET', '/requests?endpoint=/v1/pdf', { token: user.token });
    assert.equal(byEndpoint.body.data.length, 0);

    const bad = await service.call('GET', '/requests?per_page=500&page=0', { token: user.token });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors, { page: ['The page must be at least 1.'], per_page: ['The per page must be between 1 and 100.'] });
  });
});

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('condition not met in time');
}
