/**
 * Holds and settlements that share one statement (group commit) must answer exactly as if they
 * had run one by one. Runs on embedded PGlite, and on PostgreSQL in the scaled tier.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { CreditLedger, type HistoryRecord, type HoldRequest } from '../../src/credits/ledger.ts';

let service: TestService;
/** One statement at a time, so every call after the first is batched in submission order. */
let ledger: CreditLedger;

before(async () => {
  service = await startTestService();
  ledger = new CreditLedger(service.services.db, { holdTtlSeconds: 60, maxStatementsInFlight: 1 });
});
after(() => service.close());

async function ledgerAgrees(userId: number) {
  for (const row of await ledger.recompute(userId)) assert.equal(row.stored, row.ledger, `ledger and balance differ for ${row.product}`);
}

/** What holding the requests one by one gives, from the starting balances. */
function sequentialHolds(requests: HoldRequest[], balances: Map<string, number>): number[] {
  return requests.map((r) => {
    const key = `${r.userId}:${r.product}`;
    const available = balances.get(key) ?? 0;
    if (available < Math.max(1, r.min) || r.max <= 0) return 0;
    const take = Math.min(r.max, available);
    balances.set(key, available - take);
    return take;
  });
}

function history(userId: number, requestId: string, status = 200): HistoryRecord {
  return { userId, requestId, method: 'POST', endpoint: '/v1/test/work', product: 'scraping', status, durationMs: 5, params: { q: `it's "quoted"`, n: 1 } };
}

describe('batched holds', () => {
  test('a burst of holds over several balances answers as one-by-one holds would', async () => {
    const a = await service.user({ scraping: 10, extraction: 4 });
    const b = await service.user({ scraping: 3 });
    const shapes: Array<[number, 'scraping' | 'extraction', number, number]> = [
      [a.id, 'scraping', 3, 3],
      [a.id, 'scraping', 1, 30], // variable: takes what is left (7)
      [b.id, 'scraping', 2, 2],
      [a.id, 'scraping', 1, 1], // nothing left: refused
      [a.id, 'extraction', 5, 5], // more than the balance: refused
      [a.id, 'extraction', 2, 2],
      [b.id, 'scraping', 2, 2], // 1 left: refused
      [b.id, 'scraping', 1, 1], // a smaller one after a refusal still fits
      [a.id, 'extraction', 0, 2], // min 0 means at least 1
      [b.id, 'extraction', 1, 1], // no credits of that product at all
    ];
    const requests = shapes.map(([userId, product, min, max], i) => ({ requestId: `burst-${i}`, userId, product, min, max }));
    const expected = sequentialHolds(requests, new Map([[`${a.id}:scraping`, 10], [`${a.id}:extraction`, 4], [`${b.id}:scraping`, 3]]));
    const held = await Promise.all(requests.map((r) => ledger.hold(r)));
    assert.deepEqual(held, expected);
    assert.deepEqual(held, [3, 7, 2, 0, 0, 2, 0, 1, 2, 0]);
    assert.equal(await ledger.balance(a.id, 'scraping'), 0);
    assert.equal(await ledger.balance(a.id, 'extraction'), 0);
    assert.equal(await ledger.balance(b.id, 'scraping'), 0);
    const [holds] = await service.services.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM credit_holds WHERE request_id LIKE 'burst-%'`);
    assert.equal(holds.n, held.filter((h) => h > 0).length);
    await ledgerAgrees(a.id);
    await ledgerAgrees(b.id);
  });

  test('a bad hold in a batch fails alone: the others are held', async () => {
    const user = await service.user({ scraping: 20 });
    await ledger.hold({ requestId: 'taken-ref', userId: user.id, product: 'scraping', min: 1, max: 1 });
    const outcomes = await Promise.allSettled(
      ['mixed-1', 'taken-ref', 'mixed-2', 'mixed-3'].map((requestId) => ledger.hold({ requestId, userId: user.id, product: 'scraping', min: 2, max: 2 })),
    );
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
    );
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'fulfilled' ? o.value : null)),
      [2, null, 2, 2],
    );
    assert.equal(await ledger.balance(user.id, 'scraping'), 20 - 1 - 6);
    await ledgerAgrees(user.id);
  });
});

describe('batched settlements', () => {
  test('captures, partial captures, releases and history rows in one burst', async () => {
    const user = await service.user({ scraping: 100 });
    const ids = ['s-full', 's-part', 's-release', 's-over'];
    for (const requestId of ids) await ledger.hold({ requestId, userId: user.id, product: 'scraping', min: 10, max: 10 });
    assert.equal(await ledger.balance(user.id, 'scraping'), 60);

    const answers = await Promise.all([
      ledger.settle('s-full', 10, history(user.id, 's-full')),
      ledger.settle('s-part', 4, history(user.id, 's-part')),
      ledger.record(history(user.id, 'no-hold-422', 422)),
      ledger.settle('s-release', 0, history(user.id, 's-release', 502)),
      ledger.settle('s-over', 25), // capped at what was held, no history row
      ledger.settle('never-held', 5, history(user.id, 'never-held')),
      ledger.settle('s-full', 10, history(user.id, 's-full-again')), // already settled: nothing twice
    ]);
    assert.deepEqual(answers, [10, 4, undefined, 0, 10, 0, 0]);
    // 100 - 10 (full) - 4 (part) - 10 (over, capped)
    assert.equal(await ledger.balance(user.id, 'scraping'), 76);
    const [holds] = await service.services.db.query<{ n: number }>('SELECT count(*)::int AS n FROM credit_holds WHERE user_id = $1', [user.id]);
    assert.equal(holds.n, 0);

    const rows = await service.services.db.query<{ request_id: string; status: number; credits: number; params: unknown }>(
      'SELECT request_id, status, credits, params FROM request_history WHERE user_id = $1 ORDER BY id',
      [user.id],
    );
    assert.deepEqual(
      rows.map((r) => [r.request_id, r.status, r.credits]),
      [
        ['s-full', 200, 10],
        ['s-part', 200, 4],
        ['no-hold-422', 422, 0],
        ['s-release', 502, 0],
        ['never-held', 200, 0],
        ['s-full-again', 200, 0],
      ],
    );
    assert.deepEqual(rows[0].params, { q: `it's "quoted"`, n: 1 });
    await ledgerAgrees(user.id);
  });

  test('a settlement sent again (a batch retried after its commit) charges nothing more and keeps the first history row', async () => {
    const user = await service.user({ scraping: 20 });
    await ledger.hold({ requestId: 'retried', userId: user.id, product: 'scraping', min: 5, max: 5 });
    assert.equal(await ledger.settle('retried', 5, history(user.id, 'retried')), 5);
    assert.equal(await ledger.settle('retried', 5, history(user.id, 'retried')), 0);
    await ledger.record(history(user.id, 'retried', 500));
    assert.equal(await ledger.balance(user.id, 'scraping'), 15);
    const rows = await service.services.db.query<{ status: number; credits: number }>(
      'SELECT status, credits FROM request_history WHERE request_id = $1',
      ['retried'],
    );
    assert.deepEqual(rows.map((r) => [r.status, r.credits]), [[200, 5]]);
    await ledgerAgrees(user.id);
  });

  test('many concurrent hold-and-settle cycles on one balance never overdraw and the ledger agrees', async () => {
    const user = await service.user({ scraping: 50 });
    const shared = service.services.ledger; // the server's own ledger, with its default concurrency
    const outcomes = await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const requestId = `cycle-${i}`;
        const held = await shared.hold({ requestId, userId: user.id, product: 'scraping', min: 1, max: 1 });
        if (held === 0) return 0;
        return shared.settle(requestId, i % 5 === 0 ? 0 : 1, history(user.id, requestId)); // every fifth is released
      }),
    );
    const charged = outcomes.reduce((sum, c) => sum + c, 0);
    assert.equal(await shared.balance(user.id, 'scraping'), 50 - charged);
    assert.ok(charged >= 40, `released credits are held again by later requests (charged ${charged})`);
    await ledgerAgrees(user.id);
  });
});

describe('setting a balance while a hold commits', () => {
  const databaseUrl = () => service.env.DATABASE_URL;
  test(
    'a hold that commits while the set waits for the row counts against the new amount',
    { skip: process.env.TEST_DATABASE_URL ? false : 'needs two connections to one PostgreSQL server (the scaled tier sets TEST_DATABASE_URL)' },
    async () => {
      const pg = (await import('pg')).default;
      const user = await service.user({ scraping: 100 });
      const other = new pg.Client({ connectionString: databaseUrl() });
      await other.connect();
      try {
        // A hold batch that has locked the balance row and not yet committed.
        await other.query('BEGIN');
        await other.query(
          `SELECT * FROM gleaner_hold_batch(ARRAY['race-hold'], ARRAY[$1::bigint], ARRAY['scraping'], ARRAY[10::bigint], ARRAY[10::bigint], 60)`,
          [user.id],
        );
        const setting = ledger.setTo(user.id, 'scraping', 1000, 'set');
        await new Promise((resolve) => setTimeout(resolve, 200)); // the set now waits for the row lock
        await other.query('COMMIT');
        assert.equal(await setting, 990, 'the 10 credits held count as spent from the new amount');
      } finally {
        await other.end();
      }
      await ledger.settle('race-hold', 0); // the request fails: its 10 credits come back
      assert.equal(await ledger.balance(user.id, 'scraping'), 1000);
      await ledgerAgrees(user.id);
    },
  );
});
