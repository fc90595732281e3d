/**
 * Money at the edges, with the fault injected: a statement that commits but whose answer is lost
 * (the connection drops after the commit), and a hold swept while its request still works.
 * Runs on embedded PGlite, and on PostgreSQL in the scaled tier.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { CreditLedger, type HistoryRecord } from '../../src/credits/ledger.ts';
import type { Database } from '../../src/storage/db.ts';
import { TEST_ENDPOINTS } from '../support/work-endpoint.ts';

let service: TestService;

before(async () => {
  service = await startTestService({}, { endpoints: TEST_ENDPOINTS });
});
after(() => service.close());

/** The database, except that statements matching `pattern` run and commit, then report a failure. */
function losingAnswers(db: Database, pattern: RegExp, times: number): Database {
  let left = times;
  return new Proxy(db, {
    get(target, property, receiver) {
      if (property !== 'query') return Reflect.get(target, property, receiver);
      return async (sql: string, params?: unknown[]) => {
        const rows = await target.query(sql, params as never);
        if (pattern.test(sql) && left > 0) {
          left--;
          throw new Error('Connection terminated unexpectedly (after the commit)');
        }
        return rows;
      };
    },
  });
}

function history(userId: number, requestId: string): HistoryRecord {
  return { userId, requestId, method: 'POST', endpoint: '/v1/test/work', product: 'scraping', status: 200, durationMs: 5, params: {} };
}

async function audit(userId: number) {
  for (const row of await service.services.ledger.recompute(userId)) assert.equal(row.stored, row.ledger, `ledger and balance differ for ${row.product}`);
}

describe('a statement that commits but loses its answer', () => {
  test('a hold: the request keeps the hold it really took (no 500, nothing left to the sweeper)', async () => {
    const user = await service.user({ scraping: 10 });
    const ledger = new CreditLedger(losingAnswers(service.services.db, /gleaner_hold_batch/, 1), { holdTtlSeconds: 60 });
    try {
      // Two holds in one batch: the batch commits and reports failure; the one-by-one retry of
      // each then meets its own hold's primary key, and the hold row answers.
      const held = await Promise.all([
        ledger.hold({ requestId: 'lost-hold-1', userId: user.id, product: 'scraping', min: 3, max: 3 }),
        ledger.hold({ requestId: 'lost-hold-2', userId: user.id, product: 'scraping', min: 2, max: 2 }),
      ]);
      assert.deepEqual(held, [3, 2]);
      assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 5);
      assert.equal(await ledger.settle('lost-hold-1', 3, history(user.id, 'lost-hold-1')), 3);
      assert.equal(await ledger.settle('lost-hold-2', 0, history(user.id, 'lost-hold-2')), 0);
      assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 7);
      await audit(user.id);
    } finally {
      ledger.stop();
    }
  });

  test('a capture: the charge that committed is reported, so the success is answered, not a 500', async () => {
    const user = await service.user({ scraping: 10 });
    const ledger = new CreditLedger(losingAnswers(service.services.db, /gleaner_settle_batch/, 2), { holdTtlSeconds: 60 });
    try {
      assert.equal(await ledger.hold({ requestId: 'lost-capture', userId: user.id, product: 'scraping', min: 4, max: 4 }), 4);
      // The settlement commits, its answer is lost; the recovery reads the capture row.
      assert.equal(await ledger.settle('lost-capture', 4, history(user.id, 'lost-capture')), 4);
      assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 6);
      const rows = await service.services.db.query<{ status: number; credits: number }>('SELECT status, credits FROM request_history WHERE request_id = $1', ['lost-capture']);
      assert.deepEqual(rows.map((row) => ({ status: Number(row.status), credits: Number(row.credits) })), [{ status: 200, credits: 4 }]);
      await audit(user.id);
    } finally {
      ledger.stop();
    }
  });

  test('a settlement that never committed still fails (and the hold is left to the sweeper)', async () => {
    const user = await service.user({ scraping: 10 });
    const failing = new Proxy(service.services.db, {
      get(target, property, receiver) {
        if (property !== 'query') return Reflect.get(target, property, receiver);
        return async (sql: string, params?: unknown[]) => {
          if (/gleaner_settle_batch/.test(sql)) throw new Error('connection refused');
          return target.query(sql, params as never);
        };
      },
    });
    const ledger = new CreditLedger(failing, { holdTtlSeconds: 60 });
    try {
      assert.equal(await ledger.hold({ requestId: 'never-settled', userId: user.id, product: 'scraping', min: 2, max: 2 }), 2);
      await assert.rejects(ledger.settle('never-settled', 2, history(user.id, 'never-settled')), /connection refused/);
      assert.equal(await ledger.heldFor('never-settled'), 2);
    } finally {
      ledger.stop();
    }
  });
});

describe('a hold swept while its request still works', () => {
  test('the request answers 500, history says 500, and nothing is charged', async () => {
    const user = await service.user({ scraping: 10 });
    const pending = service.call('POST', '/v1/test/work', { token: user.token, body: { cost: 3, delay_ms: 400 } });
    // Sweep the hold from under the running request, as a sweeper would after a renewal failure.
    let swept = 0;
    for (let attempt = 0; attempt < 50 && swept === 0; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      swept = (
        await service.services.db.query(
          `WITH h AS (DELETE FROM credit_holds WHERE user_id = $1 RETURNING request_id, user_id, product, amount),
           b AS (UPDATE balances SET balance = balances.balance + h.amount FROM h WHERE balances.user_id = h.user_id AND balances.product = h.product),
           l AS (INSERT INTO credit_ledger (user_id, product, kind, delta, reference) SELECT user_id, product, 'expire', amount, request_id FROM h)
           SELECT request_id FROM h`,
          [user.id],
        )
      ).length;
    }
    assert.equal(swept, 1);
    const response = await pending;
    assert.equal(response.status, 500);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 10);
    const rows = await service.services.db.query<{ status: number; credits: number }>('SELECT status, credits FROM request_history WHERE user_id = $1', [user.id]);
    assert.deepEqual(rows.map((row) => ({ status: Number(row.status), credits: Number(row.credits) })), [{ status: 500, credits: 0 }]);
    await audit(user.id);
  });
});
