/**
 * `POST /webhooks/stripe` on the real server: signed `invoice.paid` events renew the linked user's
 * plans once per event id, in one transaction; anything unsigned changes nothing.
 */
import { pino } from 'pino';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestService, type TestService } from '../support/service.ts';
import { stripeSignatureHeader } from '../../src/billing/stripe-signature.ts';
import { buildServer } from '../../src/http/server.ts';
import { runOperatorCommand } from '../../src/operator/commands.ts';
import type { Database, Queryable } from '../../src/storage/db.ts';
import type { Product } from '../../src/credits/products.ts';

const SECRET = 'whsec_test_3gRkQz8Wc1pX0vYb';
const PATH = '/webhooks/stripe';

let service: TestService;

before(async () => {
  service = await startTestService({ STRIPE_WEBHOOK_SECRET: SECRET, STRIPE_WEBHOOK_TOLERANCE_SECONDS: '300' });
});
after(() => service.close());

const eventId = () => `evt_${randomBytes(12).toString('hex')}`;
const customerId = () => `cus_${randomBytes(8).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);

/** A line as Stripe sends it (API versions before 2025-03-31: the price on the line). */
function line(metadata: Record<string, string> = {}, amount = 5000) {
  return { id: `il_${randomBytes(6).toString('hex')}`, object: 'line_item', amount, metadata: {}, price: { id: 'price_x', object: 'price', metadata } };
}

function invoicePaid(options: { id?: string; customer: unknown; lines?: unknown[] }) {
  return {
    id: options.id ?? eventId(),
    object: 'event',
    api_version: '2024-06-20',
    created: now(),
    type: 'invoice.paid',
    data: {
      object: {
        id: `in_${randomBytes(8).toString('hex')}`,
        object: 'invoice',
        customer: options.customer,
        paid: true,
        status: 'paid',
        lines: { object: 'list', data: options.lines ?? [line()], has_more: false },
      },
    },
  };
}

/** Sends a body signed as Stripe signs it (or with the header given). */
function deliver(event: unknown, options: { secret?: string; timestamp?: number; header?: string | null } = {}) {
  const body = typeof event === 'string' ? event : JSON.stringify(event);
  const header = options.header === undefined ? stripeSignatureHeader(body, options.secret ?? SECRET, options.timestamp ?? now()) : options.header;
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (header !== null) headers['stripe-signature'] = header;
  return service.call('POST', PATH, { body, headers });
}

/** A user linked to a fresh Stripe customer through the operator command (as the CLI runs it). */
async function linkedUser(plans: Partial<Record<Product, string>> = {}) {
  const user = await service.user();
  const customer = customerId();
  await runOperatorCommand(service.services, ['users', 'link-stripe', '--user', String(user.id), '--customer', customer]);
  for (const [product, plan] of Object.entries(plans)) {
    await runOperatorCommand(service.services, ['plans', 'assign', '--user', String(user.id), '--product', product, '--plan', plan]);
  }
  return { ...user, customer };
}

async function balances(userId: number): Promise<Record<string, { balance: number; plan: string | null }>> {
  const rows = await service.services.ledger.balances(userId);
  return Object.fromEntries(rows.map((r) => [r.product, { balance: r.balance, plan: r.plan }]));
}

async function ledgerAgrees(userId: number): Promise<void> {
  const rows = await service.services.ledger.recompute(userId);
  assert.equal(rows.length, 3);
  for (const row of rows) assert.equal(row.stored, row.ledger, `ledger and balance differ for ${row.product}`);
}

async function recorded(id: string): Promise<{ type: string; outcome: string } | undefined> {
  const [row] = await service.services.db.query<{ type: string; outcome: string }>('SELECT type, outcome FROM stripe_events WHERE event_id = $1', [id]);
  return row;
}

/** Spends credits as requests would: the balance drops below the plan's credits. */
const spend = (userId: number, product: Product, left: number) => service.services.ledger.setTo(userId, product, left, 'set');

describe('invoice.paid renews', () => {
  test('a signed invoice.paid for a linked customer resets every plan of the user to its credits (no roll-over)', async () => {
    const user = await linkedUser({ scraping: 'growth', extraction: 'starter' });
    await spend(user.id, 'scraping', 1_234);
    await service.services.ledger.grant(user.id, 'extraction', 777); // unspent extra credits do not roll over
    const event = invoicePaid({ customer: user.customer });

    const r = await deliver(event);
    assert.equal(r.status, 200, r.text);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(r.body, {
      received: true,
      renewed: [
        { user: user.id, product: 'extraction', plan: 'starter', balance: 10_000 },
        { user: user.id, product: 'scraping', plan: 'growth', balance: 55_000 },
      ],
    });
    assert.deepEqual(await balances(user.id), {
      blockchain: { balance: 0, plan: null },
      extraction: { balance: 10_000, plan: 'starter' },
      scraping: { balance: 55_000, plan: 'growth' },
    });
    await ledgerAgrees(user.id);
    const audit = (await runOperatorCommand(service.services, ['credits', 'audit', '--user', String(user.id)])) as { mismatches: unknown[] };
    assert.deepEqual(audit.mismatches, []);
    assert.deepEqual(await recorded(event.id), {
      type: 'invoice.paid',
      outcome: `renewed for user ${user.id}: extraction starter 10000 credits; scraping growth 55000 credits`,
    });
    const renewals = await service.services.db.query('SELECT 1 FROM credit_ledger WHERE user_id = $1 AND kind = $2', [user.id, 'renew']);
    assert.equal(renewals.length, 4, 'two assignments, two renewals');
  });

  test('the same event delivered twice renews once: credits granted in between survive the second delivery', async () => {
    const user = await linkedUser({ scraping: 'starter' });
    await spend(user.id, 'scraping', 10);
    const event = invoicePaid({ customer: user.customer });

    assert.equal((await deliver(event)).status, 200);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 10_000);
    await service.services.ledger.grant(user.id, 'scraping', 500);

    const again = await deliver(event); // Stripe retries, with a fresh signature and timestamp
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, { received: true, duplicate: true });
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 10_500);
    await ledgerAgrees(user.id);

    // The next month's invoice is another event: it renews.
    assert.equal((await deliver(invoicePaid({ customer: user.customer }))).status, 200);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 10_000);
    await ledgerAgrees(user.id);
  });

  test('two deliveries of one event at the same moment: exactly one renews', async () => {
    const user = await linkedUser({ blockchain: 'starter' });
    await spend(user.id, 'blockchain', 3);
    const event = invoicePaid({ customer: user.customer });
    const answers = await Promise.all([deliver(event), deliver(event), deliver(event)]);
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
    assert.equal(answers.filter((a) => a.body.duplicate === true).length, 2);
    assert.equal(answers.filter((a) => Array.isArray(a.body.renewed)).length, 1);
    const renewals = await service.services.db.query('SELECT 1 FROM credit_ledger WHERE user_id = $1 AND product = $2 AND kind = $3', [
      user.id,
      'blockchain',
      'renew',
    ]);
    assert.equal(renewals.length, 2, 'the assignment and one renewal');
    await ledgerAgrees(user.id);
  });

  test('price metadata on a line assigns that plan (and only that product is touched); an expanded customer object works', async () => {
    const user = await linkedUser({ extraction: 'growth' });
    await spend(user.id, 'extraction', 5);
    const event = invoicePaid({
      customer: { id: user.customer, object: 'customer', email: 'payer@example.com' },
      lines: [line({ gleaner_product: 'scraping', gleaner_plan: 'Business' }), line({}, 250)],
    });
    const r = await deliver(event);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, { received: true, renewed: [{ user: user.id, product: 'scraping', plan: 'business', balance: 115_000 }] });
    assert.deepEqual(await balances(user.id), {
      blockchain: { balance: 0, plan: null },
      extraction: { balance: 5, plan: 'growth' },
      scraping: { balance: 115_000, plan: 'business' },
    });
    await ledgerAgrees(user.id);
  });

  test('a plan change: the newer line shape (line metadata), the credit line for the old plan skipped', async () => {
    const user = await linkedUser({ scraping: 'starter' });
    const event = invoicePaid({
      customer: user.customer,
      lines: [
        { id: 'il_old', amount: -800, proration: true, metadata: { gleaner_product: 'scraping', gleaner_plan: 'starter' }, pricing: { price_details: { price: 'price_a' } } },
        { id: 'il_new', amount: 4200, proration: true, metadata: { gleaner_product: 'scraping', gleaner_plan: 'growth' }, pricing: { price_details: { price: 'price_b' } } },
      ],
    });
    const r = await deliver(event);
    assert.deepEqual(r.body.renewed, [{ user: user.id, product: 'scraping', plan: 'growth', balance: 55_000 }]);
    assert.equal((await balances(user.id)).scraping.plan, 'growth');
  });

  test('credits held by a request in flight count against the renewed balance, as with plans renew', async () => {
    const user = await linkedUser({ scraping: 'starter' });
    const held = await service.services.ledger.hold({ requestId: `req-${randomBytes(6).toString('hex')}`, userId: user.id, product: 'scraping', min: 1, max: 400 });
    assert.equal(held, 400);
    const r = await deliver(invoicePaid({ customer: user.customer }));
    assert.deepEqual(r.body.renewed, [{ user: user.id, product: 'scraping', plan: 'starter', balance: 9_600 }]);
    await ledgerAgrees(user.id);
  });
});

describe('invoice.paid that renews nothing', () => {
  test('a customer linked to no user: 200, ignored, not recorded; linked afterwards, the resent event renews', async () => {
    const user = await service.user();
    await runOperatorCommand(service.services, ['plans', 'assign', '--user', String(user.id), '--product', 'scraping', '--plan', 'starter']);
    await spend(user.id, 'scraping', 42);
    const customer = customerId();
    const event = invoicePaid({ customer });

    const r = await deliver(event);
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { received: true, ignored: `customer ${customer} is not linked to a user` });
    assert.equal(await recorded(event.id), undefined);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 42);

    await runOperatorCommand(service.services, ['users', 'link-stripe', '--user', String(user.id), '--customer', customer]);
    const resent = await deliver(event);
    assert.deepEqual(resent.body.renewed, [{ user: user.id, product: 'scraping', plan: 'starter', balance: 10_000 }]);
    await ledgerAgrees(user.id);
  });

  test('an invoice without a customer: 200, ignored, not recorded', async () => {
    const event = invoicePaid({ customer: null });
    const r = await deliver(event);
    assert.deepEqual(r.body, { received: true, ignored: 'the invoice names no customer' });
    assert.equal(await recorded(event.id), undefined);
  });

  test('unknown product or plan in the metadata: 200, nothing renewed, the configuration error recorded', async () => {
    const user = await linkedUser({ scraping: 'growth' });
    await spend(user.id, 'scraping', 99);
    const misnamed = line({ gleaner_product: 'extraction', gleaner_plan: 'platinum' });
    const event = invoicePaid({ customer: user.customer, lines: [line({ gleaner_product: 'scraping', gleaner_plan: 'growth' }), misnamed] });
    const r = await deliver(event);
    assert.equal(r.status, 200);
    const reason = `configuration error, nothing renewed for user ${user.id}: line 2 (${misnamed.id}): extraction has no plan "platinum" (starter, growth, business, enterprise)`;
    assert.deepEqual(r.body, { received: true, ignored: reason });
    assert.deepEqual(await recorded(event.id), { type: 'invoice.paid', outcome: reason });
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 99, 'not even the valid line is applied');
    assert.deepEqual((await deliver(event)).body, { received: true, duplicate: true });
  });

  test('a linked user without any plan: 200, nothing renewed, recorded', async () => {
    const user = await linkedUser();
    const event = invoicePaid({ customer: user.customer });
    const r = await deliver(event);
    assert.deepEqual(r.body, { received: true, renewed: [] });
    assert.deepEqual(await recorded(event.id), { type: 'invoice.paid', outcome: `nothing to renew: user ${user.id} has no plan` });
  });

  test('other event types: 200, ignored, nothing touched', async () => {
    const user = await linkedUser({ scraping: 'starter' });
    await spend(user.id, 'scraping', 7);
    for (const type of ['invoice.payment_failed', 'customer.subscription.deleted', 'invoice.created']) {
      const event = { ...invoicePaid({ customer: user.customer }), type };
      const r = await deliver(event);
      assert.equal(r.status, 200);
      assert.deepEqual(r.body, { received: true, ignored: `event type ${type}` });
      assert.equal(await recorded(event.id), undefined);
    }
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 7);
  });
});

describe('refused deliveries change nothing', () => {
  test('bad, missing, garbled or stale signatures: 400 with a clear message', async () => {
    const user = await linkedUser({ scraping: 'starter' });
    await spend(user.id, 'scraping', 11);
    const event = invoicePaid({ customer: user.customer });
    const body = JSON.stringify(event);
    const cases: Array<{ r: Promise<Awaited<ReturnType<typeof deliver>>>; message: string }> = [
      { r: deliver(event, { secret: 'whsec_not_the_right_one' }), message: 'Invalid Stripe signature.' },
      { r: deliver(body.replace('"paid":true', '"paid":false'), { header: stripeSignatureHeader(body, SECRET) }), message: 'Invalid Stripe signature.' },
      { r: deliver(event, { header: null }), message: 'Missing Stripe-Signature header.' },
      { r: deliver(event, { header: 'v1=deadbeef' }), message: 'Malformed Stripe-Signature header.' },
      { r: deliver(event, { header: `t=${now()}` }), message: 'The Stripe-Signature header carries no v1 signature.' },
      { r: deliver(event, { timestamp: now() - 3_600 }), message: 'The Stripe signature timestamp is outside the tolerance.' },
      { r: deliver(event, { timestamp: now() + 3_600 }), message: 'The Stripe signature timestamp is outside the tolerance.' },
    ];
    for (const { r, message } of cases) {
      const answer = await r;
      assert.equal(answer.status, 400, message);
      assert.deepEqual(answer.body, { message });
    }
    assert.equal(await recorded(event.id), undefined);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 11);
    // The genuine delivery still goes through afterwards.
    assert.equal((await deliver(event)).body.renewed[0].balance, 10_000);
  });

  test('a correctly signed body that is not JSON, or not an event: 400', async () => {
    let r = await deliver('{"id": "evt_1", "type": ');
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: 'The request body is not valid JSON.' });
    r = await deliver({ hello: 'world' });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: 'The body is not a Stripe event (no id or type).' });
    r = await deliver({ id: eventId(), type: 'invoice.paid', data: {} });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: 'The invoice.paid event carries no invoice (data.object).' });
  });

  test('the route takes any content type as raw bytes; the API keeps its JSON parser', async () => {
    const user = await linkedUser({ scraping: 'starter' });
    const body = JSON.stringify(invoicePaid({ customer: user.customer }));
    const r = await service.call('POST', PATH, { body, headers: { 'content-type': 'text/plain', 'stripe-signature': stripeSignatureHeader(body, SECRET) } });
    assert.equal(r.status, 200, r.text);
    const me = await service.call('PATCH', '/me', { token: user.token, body: '{not json', headers: { 'content-type': 'application/json' } });
    assert.equal(me.status, 400);
    assert.deepEqual(me.body, { message: 'The request body is not valid JSON.' });
  });

  test('a database failure: 500 so Stripe retries, and nothing half-done (no renewal, no event recorded)', async () => {
    const user = await linkedUser({ scraping: 'growth', extraction: 'growth' });
    await spend(user.id, 'scraping', 1);
    await spend(user.id, 'extraction', 2);
    const event = invoicePaid({ customer: user.customer });
    // The last statement of the transaction fails, after both balances were renewed in it.
    const real = service.services.db;
    const failing: Database = {
      ...real,
      transaction: (fn) =>
        real.transaction((tx) =>
          fn({
            query: (sql: string, params?: unknown[]) => (sql.startsWith('UPDATE stripe_events') ? Promise.reject(new Error('disk full')) : tx.query(sql, params)),
          } as Queryable),
        ),
    };
    const server = await buildServer({ ...service.services, db: failing }, { endpoints: [], version: 'test', logger: pino({ level: 'silent' }) });
    try {
      const body = JSON.stringify(event);
      const r = await server.app.inject({
        method: 'POST',
        url: PATH,
        headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignatureHeader(body, SECRET) },
        payload: body,
      });
      assert.equal(r.statusCode, 500);
      assert.deepEqual(r.json(), { message: 'Server Error' });
    } finally {
      await server.app.close();
    }
    assert.equal(await recorded(event.id), undefined);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 1);
    assert.equal(await service.services.ledger.balance(user.id, 'extraction'), 2);
    await ledgerAgrees(user.id);
    // Stripe's retry, once the database is back, renews.
    assert.equal((await deliver(event)).body.renewed.length, 2);
  });
});

describe('the route', () => {
  test('GET answers 405 with Allow: POST', async () => {
    const r = await service.call('GET', PATH);
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('allow'), 'POST');
    assert.deepEqual(r.body, { message: 'The GET method is not supported for this route. Supported methods: POST.' });
  });

  test('no bearer token is needed and no history is written', async () => {
    const user = await linkedUser({ scraping: 'starter' });
    assert.equal((await deliver(invoicePaid({ customer: user.customer }))).status, 200);
    const history = await service.services.db.query('SELECT 1 FROM request_history WHERE user_id = $1', [user.id]);
    assert.equal(history.length, 0);
  });

  test('without STRIPE_WEBHOOK_SECRET the route does not exist: 404 for POST and GET', async () => {
    const { stripeWebhook: _configured, ...config } = service.services.config;
    const server = await buildServer({ ...service.services, config }, { endpoints: [], version: 'test', logger: pino({ level: 'silent' }) });
    try {
      const body = JSON.stringify(invoicePaid({ customer: customerId() }));
      for (const method of ['POST', 'GET'] as const) {
        const r = await server.app.inject({ method, url: PATH, headers: { 'content-type': 'application/json', 'stripe-signature': stripeSignatureHeader(body, SECRET) }, payload: method === 'POST' ? body : undefined });
        assert.equal(r.statusCode, 404, method);
        assert.deepEqual(r.json(), { message: 'Not Found.' });
      }
    } finally {
      await server.app.close();
    }
  });
});
