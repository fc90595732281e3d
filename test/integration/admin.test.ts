/**
 * The admin API through the real server: only an owner account's token may use it; it does what
 * the operator's command line does, with Laravel 8 validation answers and 404 for unknown ids.
 * Runs on embedded PGlite, and on PostgreSQL in the scaled tier.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';

let service: TestService;
let owner: string;

before(async () => {
  service = await startTestService();
  assert.ok(service.owner, 'a fresh database creates the owner account');
  owner = service.owner.token;
});
after(() => service.close());

const asOwner = (method: string, route: string, body?: unknown) => service.call(method, route, { token: owner, body });

describe('access', () => {
  test('no token: 401; a valid token of a user who is not an owner: 403; neither changes anything', async () => {
    const user = await service.user({ scraping: 5 });
    assert.equal((await service.call('GET', '/admin/users')).status, 401);
    const refused = await service.call('POST', `/admin/users/${user.id}/credits`, { token: user.token, body: { product: 'scraping', amount: 1000 } });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, { message: 'This action is unauthorized.' });
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 5);
  });

  test('a wrong method on a path with a parameter: 405 with Allow', async () => {
    const r = await asOwner('PATCH', '/admin/users/1/credits');
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('allow'), 'GET, HEAD, POST');
  });

  test('an owner account is recognised from the database: a second owner works too', async () => {
    const other = await service.services.accounts.createUser({ name: 'Second owner', email: 'owner2@example.com', isOwner: true });
    assert.equal((await service.call('GET', '/admin/plans', { token: other.token })).status, 200);
  });
});

describe('users and tokens', () => {
  test('create a user: its token works on /me at once; it is listed', async () => {
    const created = await asOwner('POST', '/admin/users', { name: 'Ada', email: 'ada@example.com' });
    assert.equal(created.status, 201);
    assert.deepEqual(Object.keys(created.body).sort(), ['id', 'secret_key', 'token']);
    assert.match(created.body.token, /^\d+\|[A-Za-z0-9]{40}$/);
    const me = await service.call('GET', '/me', { token: created.body.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.user.email, 'ada@example.com');

    const list = await asOwner('GET', '/admin/users');
    assert.ok(list.body.data.some((u: { id: number; email: string }) => u.id === created.body.id && u.email === 'ada@example.com'));
    const one = await asOwner('GET', `/admin/users/${created.body.id}`);
    assert.deepEqual(one.body.user.balances, { scraping: 0, extraction: 0, blockchain: 0 });
  });

  test('create a user: every failing rule is reported; a taken e-mail is a 422', async () => {
    const invalid = await asOwner('POST', '/admin/users', { email: 'not an address' });
    assert.equal(invalid.status, 422);
    assert.deepEqual(invalid.body, {
      message: 'The given data was invalid.',
      errors: { name: ['The name field is required.'], email: ['The email must be a valid email address.'] },
    });
    await asOwner('POST', '/admin/users', { name: 'Taken', email: 'taken@example.com' });
    const taken = await asOwner('POST', '/admin/users', { name: 'Again', email: 'TAKEN@example.com' });
    assert.equal(taken.status, 422);
    assert.deepEqual(taken.body.errors, { email: ['The email has already been taken.'] });
  });

  test('the same e-mail created six times at once: one 201, the others the 422, never a 500', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => asOwner('POST', '/admin/users', { name: 'Dup', email: 'dup-at-once@example.com' })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [201, 422, 422, 422, 422, 422]);
    for (const refused of answers.filter((a) => a.status === 422)) assert.deepEqual(refused.body.errors, { email: ['The email has already been taken.'] });
  });

  test('issue, list and revoke tokens; a revoked token is refused at once', async () => {
    const user = await service.user();
    const issued = await asOwner('POST', `/admin/users/${user.id}/tokens`, { name: 'ci' });
    assert.equal(issued.status, 201);
    assert.equal(issued.body.user, user.id);
    assert.equal((await service.call('GET', '/me', { token: issued.body.token })).status, 200);

    const tokens = await asOwner('GET', `/admin/users/${user.id}/tokens`);
    assert.deepEqual(tokens.body.data.map((t: { name: string }) => t.name).sort(), ['ci', 'default']);
    assert.ok(tokens.body.data.every((t: Record<string, unknown>) => !('token' in t) && !('token_hash' in t)), 'no secrets listed');

    const revoked = await asOwner('DELETE', `/admin/tokens/${issued.body.id}`);
    assert.deepEqual(revoked.body, { revoked: issued.body.id });
    assert.equal((await service.call('GET', '/me', { token: issued.body.token })).status, 401);
    const again = await asOwner('DELETE', `/admin/tokens/${issued.body.id}`);
    assert.equal(again.status, 404);
    assert.deepEqual(again.body, { message: `There is no active token ${issued.body.id}.` });
  });

  test('rotate a token: the old one stops, the new one (same name) works', async () => {
    const user = await service.user();
    const issued = await asOwner('POST', `/admin/users/${user.id}/tokens`, { name: 'deploy' });
    const rotated = await asOwner('POST', `/admin/tokens/${issued.body.id}/rotate`);
    assert.equal(rotated.status, 201);
    assert.deepEqual([rotated.body.user, rotated.body.replaced], [user.id, issued.body.id]);
    assert.equal((await service.call('GET', '/me', { token: issued.body.token })).status, 401);
    assert.equal((await service.call('GET', '/me', { token: rotated.body.token })).status, 200);
    const tokens = await asOwner('GET', `/admin/users/${user.id}/tokens`);
    const current = tokens.body.data.find((t: { id: number }) => t.id === rotated.body.id);
    assert.deepEqual([current.name, current.revoked_at], ['deploy', null]);
    assert.equal((await asOwner('POST', `/admin/tokens/${issued.body.id}/rotate`)).status, 404);
  });

  test('unknown and malformed user ids: 404 and 422', async () => {
    const unknown = await asOwner('GET', '/admin/users/999999/tokens');
    assert.equal(unknown.status, 404);
    assert.deepEqual(unknown.body, { message: 'There is no user 999999.' });
    const malformed = await asOwner('GET', '/admin/users/abc');
    assert.equal(malformed.status, 422);
    assert.deepEqual(malformed.body.errors, { user: ['The user must be an integer.'] });
    const huge = await asOwner('POST', '/admin/users/99999999999999999999/credits', { product: 'scraping', amount: 1 });
    assert.equal(huge.status, 422);
  });
});

describe('credits, plans and prices', () => {
  test('grant adds, set replaces; /me and the ledger agree', async () => {
    const user = await service.user({ scraping: 10 });
    const granted = await asOwner('POST', `/admin/users/${user.id}/credits`, { product: 'scraping', amount: 90 });
    assert.deepEqual(granted.body, { user: user.id, product: 'scraping', balance: 100 });
    const set = await asOwner('PUT', `/admin/users/${user.id}/credits/extraction`, { amount: 7 });
    assert.deepEqual(set.body, { user: user.id, product: 'extraction', balance: 7 });
    const me = await service.call('GET', '/me', { token: user.token });
    assert.deepEqual(me.body.user.balances, { scraping: 100, extraction: 7, blockchain: 0 });
    const audit = await asOwner('GET', `/admin/audit?user=${user.id}`);
    assert.deepEqual(audit.body, { checked: 3, mismatches: [] });
  });

  test('a path parameter cannot be overridden by the body', async () => {
    const user = await service.user();
    const other = await service.user();
    const r = await asOwner('POST', `/admin/users/${user.id}/credits`, { user: other.id, product: 'scraping', amount: 3 });
    assert.equal(r.body.user, user.id);
    assert.equal(await service.services.ledger.balance(other.id, 'scraping'), 0);
  });

  test('bad amounts and products: 422 with every message, nothing changes', async () => {
    const user = await service.user({ scraping: 10 });
    const bad = await asOwner('POST', `/admin/users/${user.id}/credits`, { product: 'gold', amount: 0 });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body.errors, { product: ['The selected product is invalid.'], amount: ['The amount must be at least 1.'] });
    const badPath = await asOwner('PUT', `/admin/users/${user.id}/credits/gold`, { amount: 'x' });
    assert.deepEqual(badPath.body.errors, { product: ['The selected product is invalid.'], amount: ['The amount must be an integer.'] });
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 10);
  });

  test('assign a plan, spend, renew: the balance is reset to the plan (no roll-over)', async () => {
    const user = await service.user();
    const assigned = await asOwner('PUT', `/admin/users/${user.id}/plans/scraping`, { plan: 'Starter' });
    assert.deepEqual(assigned.body, { user: user.id, product: 'scraping', plan: 'starter', balance: 10_000 });
    await service.services.ledger.setTo(user.id, 'scraping', 1_234, 'set');
    const renewed = await asOwner('POST', '/admin/plans/renew', { user: user.id });
    assert.deepEqual(renewed.body, { renewed: [{ user: user.id, product: 'scraping', plan: 'starter', balance: 10_000 }] });
    const unknownPlan = await asOwner('PUT', `/admin/users/${user.id}/plans/scraping`, { plan: 'platinum' });
    assert.equal(unknownPlan.status, 422);
    assert.deepEqual(unknownPlan.body.errors, { plan: ['The selected plan is invalid.'] });
  });

  test('prices: list and change; an unknown operation is a 422', async () => {
    const listed = await asOwner('GET', '/admin/prices');
    assert.ok(listed.body.data.some((p: { operation: string }) => p.operation === 'image'));
    const changed = await asOwner('PUT', '/admin/prices/image', { credits: 4 });
    assert.deepEqual(changed.body, { operation: 'image', credits: 4 });
    const prices = await service.services.prices.list();
    assert.equal(prices.find((p) => p.operation === 'image')?.credits, 4);
    await asOwner('PUT', '/admin/prices/image', { credits: 3 });
    const unknown = await asOwner('PUT', '/admin/prices/teleport', { credits: 1 });
    assert.equal(unknown.status, 422);
    assert.deepEqual(unknown.body.errors, { operation: ['The selected operation is invalid.'] });
  });

  test('prices quoted by /openapi.json and the docs page follow the price table', async () => {
    const quoted = async () => {
      const served = (await service.call('GET', '/openapi.json')).body;
      const docsPage = (await (await fetch(`${service.url}/docs/json`)).json()) as typeof served;
      assert.equal(docsPage.paths['/v1/image'].post.description, served.paths['/v1/image'].post.description, 'the docs page reads the same document');
      return { image: served.paths['/v1/image'].post.description, pdf: served.paths['/v1/pdf'].post.description };
    };
    assert.match((await quoted()).image, /Costs 3 credits on success\./);
    await asOwner('PUT', '/admin/prices/image', { credits: 1 });
    try {
      const changed = await quoted();
      assert.match(changed.image, /Costs 1 credit on success\./);
      assert.match(changed.pdf, /costs the image price \(1\) on top/);
    } finally {
      await asOwner('PUT', '/admin/prices/image', { credits: 3 });
    }
    assert.match((await quoted()).image, /Costs 3 credits on success\./);
  });

  test('Stripe customers: link, one user per customer (409), unlink', async () => {
    const [a, b] = [await service.user(), await service.user()];
    const badFormat = await asOwner('PUT', `/admin/users/${a.id}/stripe`, { customer: 'sk_live_123' });
    assert.deepEqual(badFormat.body.errors, { customer: ['The customer format is invalid.'] });
    assert.deepEqual((await asOwner('PUT', `/admin/users/${a.id}/stripe`, { customer: 'cus_Admin1' })).body, { user: a.id, stripe_customer: 'cus_Admin1' });
    const taken = await asOwner('PUT', `/admin/users/${b.id}/stripe`, { customer: 'cus_Admin1' });
    assert.equal(taken.status, 409);
    assert.deepEqual(taken.body, { message: `The Stripe customer cus_Admin1 is already linked to user ${a.id}.` });
    const unlinked = await asOwner('DELETE', `/admin/users/${a.id}/stripe`);
    assert.deepEqual(unlinked.body, { user: a.id, stripe_customer: null, previous: 'cus_Admin1' });
  });
});

describe('a malformed filter never widens an operation', () => {
  /** Two users on a plan whose balances are spent down: a renewal of everyone would reset them. */
  async function spentSubscribers(): Promise<Array<{ id: number }>> {
    const users = [await service.user(), await service.user()];
    for (const user of users) {
      assert.equal((await asOwner('PUT', `/admin/users/${user.id}/plans/scraping`, { plan: 'starter' })).status, 200);
      await service.services.ledger.setTo(user.id, 'scraping', 17, 'set');
    }
    return users;
  }

  async function assertUntouched(users: Array<{ id: number }>, what: string): Promise<void> {
    for (const user of users) assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 17, `${what} reset user ${user.id}'s balance`);
  }

  test('renew: an empty, null or wrong-typed filter, or an unknown field, is a 422 and renews nobody', async () => {
    const users = await spentSubscribers();
    const filled = (field: string) => [`The ${field} field must have a value.`];
    const cases: Array<{ body: unknown; query?: string; errors: Record<string, string[]> }> = [
      { body: { user: '' }, errors: { user: filled('user') } },
      { body: { user: '   ' }, errors: { user: filled('user') } },
      { body: { user: null }, errors: { user: filled('user') } },
      { body: { user: [] }, errors: { user: filled('user') } },
      { body: { user: 'abc' }, errors: { user: ['The user must be an integer.'] } },
      { body: { user: [users[0].id] }, errors: { user: ['The user must be an integer.'] } },
      { body: { user: true }, errors: { user: ['The user must be an integer.'] } },
      { body: { user: 0 }, errors: { user: ['The user must be at least 1.'] } },
      { body: { product: ' ' }, errors: { product: filled('product') } },
      { body: { product: null }, errors: { product: filled('product') } },
      { body: { product: 'gold' }, errors: { product: ['The selected product is invalid.'] } },
      { body: { product: 7 }, errors: { product: ['The product must be a string.', 'The selected product is invalid.'] } },
      { body: { user_id: users[0].id }, errors: { user_id: ['The user id field is prohibited.'] } },
      { body: { users: [users[0].id] }, errors: { users: ['The users field is prohibited.'] } },
      { body: {}, query: '?user=', errors: { user: filled('user') } },
      { body: {}, query: '?product=', errors: { product: filled('product') } },
    ];
    for (const { body, query = '', errors } of cases) {
      const what = `POST /admin/plans/renew${query} ${JSON.stringify(body)}`;
      const refused = await asOwner('POST', `/admin/plans/renew${query}`, body);
      assert.equal(refused.status, 422, `${what}: ${refused.text}`);
      assert.deepEqual({ message: refused.body.message, errors: refused.body.errors }, { message: 'The given data was invalid.', errors }, what);
      await assertUntouched(users, what);
    }
  });

  test('renew: an empty object or no body still renews every user', async () => {
    const users = await spentSubscribers();
    const renewed = await asOwner('POST', '/admin/plans/renew', {});
    assert.equal(renewed.status, 200);
    for (const user of users) assert.ok(renewed.body.renewed.some((r: { user: number }) => r.user === user.id));
    for (const user of users) await service.services.ledger.setTo(user.id, 'scraping', 17, 'set');
    assert.equal((await asOwner('POST', '/admin/plans/renew')).status, 200);
    for (const user of users) assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 10_000);
  });

  test('renew: a body that is not a JSON object is a 422 and renews nobody', async (t) => {
    // The pipeline refuses such a body on routes marked `objectBody` (every admin route with a
    // body); probed on a route where a body read as "no fields" is harmless (an unknown token).
    const probe = await asOwner('POST', '/admin/tokens/999999999/rotate', '[]');
    if (probe.status !== 422) return t.skip(`the pipeline does not honour Endpoint.objectBody yet (the probe answered ${probe.status})`);
    const users = await spentSubscribers();
    for (const body of ['[]', '[1]', '1', '"s"', 'null', 'true']) {
      const refused = await asOwner('POST', '/admin/plans/renew', body);
      assert.equal(refused.status, 422, `body ${body}: ${refused.text}`);
      assert.deepEqual(refused.body, { message: 'The given data was invalid.', errors: { body: ['The request body must be a JSON object.'] } }, `body ${body}`);
      await assertUntouched(users, `body ${body}`);
    }
  });

  test('audit and lists: an empty or unknown filter is a 422, not an answer about everyone', async () => {
    const empty = await asOwner('GET', '/admin/audit?user=');
    assert.equal(empty.status, 422);
    assert.deepEqual(empty.body.errors, { user: ['The user field must have a value.'] });
    assert.deepEqual((await asOwner('GET', '/admin/audit?user_id=2')).body.errors, { user_id: ['The user id field is prohibited.'] });
    assert.deepEqual((await asOwner('GET', '/admin/audit?user=x')).body.errors, { user: ['The user must be an integer.'] });
    assert.deepEqual((await asOwner('GET', '/admin/audit?user=999999')).body, { message: 'There is no user 999999.' });
    for (const route of ['/admin/users?email=ada@example.com', '/admin/plans?product=scraping', '/admin/prices?operation=image']) {
      const refused = await asOwner('GET', route);
      assert.equal(refused.status, 422, route);
      const field = route.split('?')[1].split('=')[0];
      assert.deepEqual(refused.body.errors, { [field]: [`The ${field} field is prohibited.`] }, route);
    }
    assert.equal((await asOwner('GET', '/admin/audit')).status, 200, 'no filter: every balance');
  });

  test('a blank token name is the default one; path parameters cannot be blank', async () => {
    const user = await service.user();
    const issued = await asOwner('POST', `/admin/users/${user.id}/tokens`, { name: '  ' });
    assert.equal(issued.status, 201);
    const tokens = await asOwner('GET', `/admin/users/${user.id}/tokens`);
    assert.equal(tokens.body.data.find((t: { id: number }) => t.id === issued.body.id).name, 'default');
    const blank = await asOwner('GET', '/admin/users/%20/credits');
    assert.equal(blank.status, 422);
    assert.deepEqual(blank.body.errors, { user: ['The user field is required.'] });
  });
});

test('the admin API is described in /openapi.json, path parameters included', async () => {
  const doc = (await service.call('GET', '/openapi.json')).body;
  const grant = doc.paths['/admin/users/{user}/credits'].post;
  assert.deepEqual(grant.parameters.map((p: { name: string; in: string }) => [p.name, p.in]), [['user', 'path']]);
  assert.deepEqual(Object.keys(grant.requestBody.content['application/json'].schema.properties), ['product', 'amount']);
  assert.ok(grant.responses[403]);
  assert.deepEqual(
    doc.paths['/admin/users/{user}/credits/{product}'].put.parameters.map((p: { name: string }) => p.name),
    ['user', 'product'],
  );
});
