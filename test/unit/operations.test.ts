/**
 * The operator's operations on a real embedded database, without any front end: their rules,
 * both wordings of each broken rule, and the failures each front end maps (not_found, conflict,
 * invalid). A filter that is present but empty or wrong-typed never means "every user".
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/storage/db.ts';
import { migrate } from '../../src/storage/migrate.ts';
import { AccountStore } from '../../src/accounts/store.ts';
import { CreditLedger } from '../../src/credits/ledger.ts';
import { OPERATION_DEFAULTS, Prices, seedPrices } from '../../src/credits/prices.ts';
import * as operations from '../../src/operations/index.ts';
import { OperationError, rules, type OperationStores } from '../../src/operations/index.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-operations-'));
let stores: OperationStores;

before(async () => {
  const db = await openDatabase({ dataDir });
  await migrate(db);
  stores = { db, accounts: new AccountStore(db), ledger: new CreditLedger(db, { holdTtlSeconds: 60 }), prices: new Prices(db) };
});
after(async () => {
  stores.ledger.stop();
  await stores.db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

/** The OperationError a call fails with. */
async function failure(call: () => Promise<unknown>): Promise<OperationError> {
  try {
    await call();
  } catch (error) {
    if (error instanceof OperationError) return error;
    throw error;
  }
  assert.fail('the operation succeeded');
}

let emails = 0;
const newUser = () => operations.createUser(stores, { name: 'User', email: `user${++emails}@example.com` });

describe('OperationError', () => {
  test('invalid: every issue by field in Laravel\'s wording; the message names the first', () => {
    const error = OperationError.invalid(
      { field: 'amount', message: 'The amount must be at least 1.', predicate: 'must be at least 1.' },
      { field: 'amount', message: 'The amount must be an integer.', predicate: 'must be a whole number.' },
      { field: 'product', message: 'The selected product is invalid.', predicate: 'must be one of a, b.' },
    );
    assert.equal(error.kind, 'invalid');
    assert.equal(error.message, 'The amount must be at least 1.');
    assert.deepEqual(error.errors, { amount: ['The amount must be at least 1.', 'The amount must be an integer.'], product: ['The selected product is invalid.'] });
  });

  test('throwIfAny throws only when a check found something', () => {
    assert.doesNotThrow(() => OperationError.throwIfAny([undefined, rules.amountIssue('amount', 5, 1)]));
    assert.throws(() => OperationError.throwIfAny([undefined, rules.amountIssue('amount', 0, 1)]), (e: OperationError) => e.kind === 'invalid' && e.issues.length === 1);
  });
});

describe('rules', () => {
  test('whole numbers: type, minimum and maximum, in both wordings', () => {
    assert.deepEqual(rules.amountIssue('amount', 1.5, 1), { field: 'amount', message: 'The amount must be an integer.', predicate: 'must be a whole number (got "1.5").' });
    assert.deepEqual(rules.amountIssue('amount', 0, 1), { field: 'amount', message: 'The amount must be at least 1.', predicate: 'must be at least 1.' });
    assert.deepEqual(rules.amountIssue('amount', rules.MAX_AMOUNT + 1, 0), {
      field: 'amount',
      message: `The amount must not be greater than ${rules.MAX_AMOUNT}.`,
      predicate: `must be at most ${rules.MAX_AMOUNT}.`,
    });
    assert.equal(rules.idIssue('user', Number.MAX_SAFE_INTEGER), undefined);
    assert.equal(rules.idIssue('user', '3')?.message, 'The user must be an integer.', 'a string is not an id');
  });

  test('a filter: left out is "every one"; empty, blank or null is an issue; present is checked', () => {
    const check = (value: unknown) => rules.idIssue('user', value);
    assert.equal(rules.filterIssue('user', undefined, check), undefined);
    for (const empty of ['', '  ', null]) assert.equal(rules.filterIssue('user', empty, check)?.message, 'The user field must have a value.', JSON.stringify(empty));
    assert.equal(rules.filterIssue('user', 'abc', check)?.message, 'The user must be an integer.');
    assert.equal(rules.filterIssue('user', 3, check), undefined);
  });

  test('Stripe customers, products and texts', () => {
    assert.equal(rules.stripeCustomerIssue('cus_Abc123'), undefined);
    assert.equal(rules.stripeCustomerIssue('sk_live_1')?.predicate, 'must be a Stripe customer id such as cus_NffrFeUfNV2Hib (got "sk_live_1").');
    assert.equal(rules.productIssue('gold')?.predicate, 'must be one of scraping, extraction, blockchain (got "gold").');
    assert.equal(rules.textIssue('name', 'x'.repeat(256), { required: true })?.message, 'The name must not be greater than 255 characters.');
    assert.equal(rules.textIssue('name', ' ', { required: true })?.predicate, 'is required.');
    assert.equal(rules.textIssue('name', undefined, { required: false }), undefined);
  });
});

describe('users and tokens', () => {
  test('an unknown user is not_found, with the message both front ends show', async () => {
    const error = await failure(() => operations.showCredits(stores, { user: 999_999 }));
    assert.deepEqual([error.kind, error.message], ['not_found', 'There is no user 999999.']);
  });

  test('an e-mail already taken is a conflict on the field email, in both wordings', async () => {
    const created = await operations.createUser(stores, { name: ' Ada ', email: ' ada@example.com ' });
    assert.deepEqual(Object.keys(created), ['id', 'token', 'secret_key']);
    const error = await failure(() => operations.createUser(stores, { name: 'Again', email: 'ADA@example.com' }));
    assert.equal(error.kind, 'conflict');
    assert.equal(error.message, 'The e-mail ADA@example.com is already taken.');
    assert.deepEqual(error.errors, { email: ['The email has already been taken.'] });
  });

  test('an invalid e-mail and a name too long are invalid', async () => {
    const error = await failure(() => operations.createUser(stores, { name: 'x'.repeat(300), email: 'not an address' }));
    assert.deepEqual(Object.keys(error.errors), ['name', 'email']);
    assert.equal(error.issues[1].predicate, 'must be a valid e-mail address (got "not an address").');
  });

  test('a token issued with a blank name gets the default one; an unknown token is not_found', async () => {
    const user = await newUser();
    const issued = await operations.createToken(stores, { user: user.id, name: '   ' });
    const tokens = await operations.listTokens(stores, { user: user.id });
    assert.equal(tokens.find((t) => Number(t.id) === issued.id)?.name, 'default');
    assert.deepEqual(await operations.revokeToken(stores, { token: issued.id }), { revoked: issued.id });
    const again = await failure(() => operations.rotateToken(stores, { token: issued.id }));
    assert.deepEqual([again.kind, again.message], ['not_found', `There is no active token ${issued.id}.`]);
  });

  test('a Stripe customer linked to another user is a conflict without a field (409, exit 1)', async () => {
    const [a, b] = [await newUser(), await newUser()];
    assert.deepEqual(await operations.linkStripeCustomer(stores, { user: a.id, customer: ' cus_Ops1 ' }), { user: a.id, stripe_customer: 'cus_Ops1' });
    const error = await failure(() => operations.linkStripeCustomer(stores, { user: b.id, customer: 'cus_Ops1' }));
    assert.deepEqual([error.kind, error.message, error.issues], ['conflict', `The Stripe customer cus_Ops1 is already linked to user ${a.id}.`, []]);
    const missing = await failure(() => operations.linkStripeCustomer(stores, { user: b.id, customer: '' }));
    assert.equal(missing.issues[0].predicate, 'is required.');
  });
});

describe('credits, plans and prices', () => {
  /** Two users on a plan, spent down to 17: a renewal of everyone would reset them. */
  async function spentSubscribers() {
    const users = [await newUser(), await newUser()];
    for (const user of users) {
      await operations.assignPlan(stores, { user: user.id, product: 'scraping', plan: 'Starter' });
      await operations.setCredits(stores, { user: user.id, product: 'scraping', amount: 17 });
    }
    return users;
  }

  test('renew: a filter that is present but empty, null or wrong-typed is invalid and renews nobody', async () => {
    const users = await spentSubscribers();
    // What a JavaScript caller (or a decoded body) may pass despite the types.
    const bad: Array<Record<string, unknown>> = [{ user: '' }, { user: null }, { user: 'abc' }, { user: Number.NaN }, { user: 0 }, { product: ' ' }, { product: null }, { product: 'gold' }];
    for (const input of bad) {
      const error = await failure(() => operations.renewPlans(stores, input as never));
      assert.equal(error.kind, 'invalid', JSON.stringify(input));
    }
    for (const user of users) assert.equal(await stores.ledger.balance(user.id, 'scraping'), 17);
    const narrowed = await operations.renewPlans(stores, { user: users[0].id });
    assert.deepEqual(narrowed, { renewed: [{ user: users[0].id, product: 'scraping', plan: 'starter', balance: 10_000 }] });
    assert.equal(await stores.ledger.balance(users[1].id, 'scraping'), 17, 'the other user is untouched');
    const everyone = await operations.renewPlans(stores, {});
    assert.ok(everyone.renewed.some((r) => r.user === users[1].id), 'left out, the filters mean every user');
  });

  test('audit: an empty user is invalid; left out, every balance is checked', async () => {
    assert.equal((await failure(() => operations.auditCredits(stores, { user: '' as never }))).kind, 'invalid');
    const all = await operations.auditCredits(stores);
    assert.ok(all.checked >= 3);
    assert.deepEqual(all.mismatches, []);
  });

  test('grant, set and assign check their amounts and plans', async () => {
    const user = await newUser();
    assert.deepEqual(await operations.grantCredits(stores, { user: user.id, product: 'extraction', amount: 5 }), { user: user.id, product: 'extraction', balance: 5 });
    assert.equal((await failure(() => operations.grantCredits(stores, { user: user.id, product: 'extraction', amount: 0 }))).issues[0].predicate, 'must be at least 1.');
    assert.deepEqual(await operations.setCredits(stores, { user: user.id, product: 'extraction', amount: 0 }), { user: user.id, product: 'extraction', balance: 0 });
    const plan = await failure(() => operations.assignPlan(stores, { user: user.id, product: 'scraping', plan: 'platinum' }));
    assert.deepEqual(plan.errors, { plan: ['The selected plan is invalid.'] });
    assert.equal(plan.issues[0].predicate, 'must be one of starter, growth, business, enterprise, scale for scraping.');
  });

  test('prices: only known operations, within range', async () => {
    assert.deepEqual(await operations.setPrice(stores, { operation: ' image ', credits: 4 }), { operation: 'image', credits: 4 });
    assert.equal((await operations.listPrices(stores)).find((p) => p.operation === 'image')?.credits, 4);
    const unknown = await failure(() => operations.setPrice(stores, { operation: 'teleport', credits: 1 }));
    assert.deepEqual(unknown.errors, { operation: ['The selected operation is invalid.'] });
    assert.match(unknown.issues[0].predicate, /^must be one of .*\bimage\b.*\.$/);
  });
});

describe('default prices (seedPrices, run after every migration)', () => {
  const seededDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-prices-'));
  let prices: Prices;
  before(async () => {
    const db = await openDatabase({ dataDir: seededDir });
    await migrate(db);
    prices = new Prices(db);
  });
  after(async () => {
    await prices.db.close();
    rmSync(seededDir, { recursive: true, force: true });
  });
  const table = async () => Object.fromEntries((await prices.list()).map((p) => [p.operation, Number(p.credits)]));

  test('a new database holds every operation at its default', async () => {
    await seedPrices(prices.db);
    // Migration 0001 inserted the first operations' prices before seeding existed: they must be the defaults.
    assert.deepEqual(await table(), { ...OPERATION_DEFAULTS });
  });

  test('an operation the table lacks appears at its default; a price the operator set is kept', async () => {
    await prices.set('search', 4);
    await prices.db.query('DELETE FROM prices WHERE operation = $1', ['mb_user']); // as in a database older than the operation
    const added = await seedPrices(prices.db, { ...OPERATION_DEFAULTS, teleport: 7 });
    assert.deepEqual(added.sort(), ['mb_user', 'teleport']);
    assert.deepEqual(await table(), { ...OPERATION_DEFAULTS, search: 4, teleport: 7 });
    assert.deepEqual(await seedPrices(prices.db, { ...OPERATION_DEFAULTS, teleport: 9 }), [], 'a second run adds nothing and changes nothing');
    assert.equal((await table()).teleport, 7);
  });
});
