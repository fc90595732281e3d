/**
 * The typed client (client/) against the real server: typed methods, typed errors with the
 * Laravel message and field errors, opt-in Retry-After retries, and the history iterator.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGleanerClient, GleanerError, type GleanerClient } from '../../client/src/index.ts';
import { startTestService, type TestService } from '../support/service.ts';

let service: TestService;
let owner: GleanerClient;

before(async () => {
  service = await startTestService();
  owner = createGleanerClient({ baseUrl: service.url, token: service.owner!.token });
});
after(() => service?.close());

test('typed methods: admin creates a user and grants credits; the user reads profile and usage', async () => {
  const created = await owner.postAdminUsers({ name: 'Ada', email: 'ada-client@example.com' });
  assert.match(created.token, /^\d+\|/);
  const granted = await owner.postAdminUsersByUserCredits({ user: created.id, product: 'extraction', amount: 40 });
  assert.equal(granted.balance, 40);
  const set = await owner.putAdminUsersByUserCreditsByProduct({ user: created.id, product: 'scraping', amount: 7 });
  assert.equal(set.balance, 7);

  const ada = createGleanerClient({ baseUrl: service.url + '/', token: created.token });
  const me = await ada.getMe();
  assert.equal(me.user.name, 'Ada');
  assert.deepEqual(me.user.balances, { scraping: 7, extraction: 40, blockchain: 0 });
  const usage = await ada.getUsage({ days: 7 });
  assert.equal(usage.days, 7);
  assert.deepEqual(usage.data, []);
  const updated = await ada.updateMe({ email: 'ada-new@example.com', secret_key: created.secret_key });
  assert.equal(updated.user.email, 'ada-new@example.com');
});

test('errors carry the status, the Laravel message and the field errors', async () => {
  const user = await service.user({ extraction: 5 });
  const client = createGleanerClient({ baseUrl: service.url, token: user.token });
  const invalid = await client.extractPdf({ url: 'not a url' }).catch((error: unknown) => error);
  assert.ok(invalid instanceof GleanerError);
  assert.equal(invalid.status, 422);
  assert.equal(invalid.message, 'The given data was invalid.');
  assert.deepEqual(Object.keys(invalid.errors), ['url']);
  assert.equal(invalid.operation, 'extractPdf');

  const forbidden = await client.getAdminUsers().catch((error: unknown) => error);
  assert.ok(forbidden instanceof GleanerError);
  assert.equal(forbidden.status, 403);
  assert.equal(forbidden.message, 'This action is unauthorized.');

  const missing = await owner.getAdminUsersByUser({ user: 999_999 }).catch((error: unknown) => error);
  assert.ok(missing instanceof GleanerError && missing.status === 404);
  assert.equal(missing.message, 'There is no user 999999.');

  const stranger = createGleanerClient({ baseUrl: service.url, token: '1|nope' });
  await assert.rejects(stranger.getMe(), (error: unknown) => error instanceof GleanerError && error.status === 401 && error.message === 'Unauthenticated.');
});

test('requests() walks every history page, with filters', async () => {
  const user = await service.user({ extraction: 5 });
  const client = createGleanerClient({ baseUrl: service.url, token: user.token });
  // Refused calls are recorded in history too, and cost nothing.
  for (let i = 0; i < 5; i++) await client.extractPdf({ url: `https://example.com/${i}.txt` }).catch(() => {});
  await client.extractImage({ url: 'ftp://example.com/x.png' }).catch(() => {});
  const all = [];
  for await (const row of client.requests({ per_page: 2 })) all.push(row);
  assert.equal(all.length, 6);
  assert.deepEqual(all.map((r) => r.endpoint), ['/v1/image', '/v1/pdf', '/v1/pdf', '/v1/pdf', '/v1/pdf', '/v1/pdf']);
  assert.ok(all.every((r) => r.status === 422 && r.credits === 0));
  const pdf = [];
  for await (const row of client.requests({ endpoint: '/v1/pdf', per_page: 4 })) pdf.push(row.id);
  assert.equal(pdf.length, 5);
  assert.deepEqual(pdf, [...pdf].sort((a, b) => b - a), 'newest first');
});

test('a real 429 carries Retry-After; without retry (or with a shorter limit) it is thrown', async () => {
  const user = await service.user();
  const client = createGleanerClient({ baseUrl: service.url, token: user.token, retry: { maxWaitMs: 50 } });
  let throttled: GleanerError | undefined;
  for (let i = 0; i < 8 && !throttled; i++) {
    await client.updateMe({ email: 'x@example.com', secret_key: 'wrong' }).catch((error: GleanerError) => {
      if (error.status === 429) throttled = error;
    });
  }
  assert.ok(throttled, 'the 7th attempt within a minute is throttled');
  assert.equal(throttled.message, 'Too Many Attempts.');
  assert.ok(throttled.retryAfter! > 0);
});

test('opt-in retry waits for Retry-After, then succeeds', async () => {
  let hits = 0;
  const fake = http.createServer((request, response) => {
    hits++;
    if (hits < 3) {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' }).end(JSON.stringify({ message: 'Too Many Attempts.' }));
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user: { id: 1, name: 'R', email: 'r@example.com' } }));
  });
  await new Promise<void>((resolve) => fake.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  try {
    const plain = createGleanerClient({ baseUrl, token: 't' });
    await assert.rejects(plain.getMe(), (error: unknown) => error instanceof GleanerError && error.status === 429 && error.retryAfter === 0);
    assert.equal(hits, 1, 'no retry unless asked');
    hits = 0;
    const patient = createGleanerClient({ baseUrl, token: 't', retry: { attempts: 3 } });
    assert.equal((await patient.getMe()).user.name, 'R');
    assert.equal(hits, 3);
  } finally {
    fake.close();
  }
});
