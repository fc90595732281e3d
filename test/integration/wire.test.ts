/** Laravel 8 wire conventions, authentication and the account endpoints, on the real server. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { TEST_ENDPOINTS } from '../support/work-endpoint.ts';

const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
let service: TestService;

before(async () => {
  service = await startTestService({ BODY_LIMIT_BYTES: '2048' }, { endpoints: TEST_ENDPOINTS });
});
after(() => service.close());

describe('authentication', () => {
  test('missing, malformed, unknown and revoked tokens answer 401 Unauthenticated.', async () => {
    const user = await service.user();
    const [id, secret] = user.token.split('|');
    const wrong = [undefined, 'garbage', `${id}|${'x'.repeat(40)}`, `999999|${secret}`, `abc|${secret}`, `${id}|`];
    for (const token of wrong) {
      const r = await service.call('GET', '/me', { token });
      assert.equal(r.status, 401, `token ${token}`);
      assert.deepEqual(r.body, { message: 'Unauthenticated.' });
    }
    const basic = await service.call('GET', '/me', { headers: { authorization: `Basic ${user.token}` } });
    assert.equal(basic.status, 401);

    assert.equal((await service.call('GET', '/me', { token: user.token })).status, 200);
    // Sanctum also accepts the secret part alone, looked up by its hash.
    assert.equal((await service.call('GET', '/me', { token: secret })).status, 200);
    await service.services.accounts.revokeToken(Number(id));
    assert.equal((await service.call('GET', '/me', { token: user.token })).status, 401);
  });

  test('401 comes before validation and billing on /v1 routes', async () => {
    const r = await service.call('POST', '/v1/test/work', { body: { cost: 'x' } });
    assert.equal(r.status, 401);
  });
});

describe('GET /me', () => {
  test('returns the user with credits, balances and microsecond timestamps', async () => {
    const user = await service.user({ scraping: 120, extraction: 7 });
    const r = await service.call('GET', '/me', { token: user.token });
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^application\/json; charset=utf-8/);
    assert.deepEqual(Object.keys(r.body.user), ['id', 'name', 'email', 'credits', 'created_at', 'updated_at', 'balances']);
    assert.equal(r.body.user.id, user.id);
    assert.equal(r.body.user.credits, 120);
    assert.deepEqual(r.body.user.balances, { scraping: 120, extraction: 7, blockchain: 0 });
    assert.match(r.body.user.created_at, ISO_MICROS);
    assert.match(r.body.user.updated_at, ISO_MICROS);
  });
});

describe('PATCH /me', () => {
  test('validates, checks the secret key, refuses a taken e-mail and updates', async () => {
    const user = await service.user();
    const other = await service.user();
    const otherEmail = (await service.call('GET', '/me', { token: other.token })).body.user.email;

    let r = await service.call('PATCH', '/me', { token: user.token, body: {} });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, {
      message: 'The given data was invalid.',
      errors: { email: ['The email field is required.'], secret_key: ['The secret key field is required.'] },
    });

    r = await service.call('PATCH', '/me', { token: user.token, body: { email: 'not-an-email', secret_key: user.secret_key } });
    assert.deepEqual(r.body.errors, { email: ['The email must be a valid email address.'] });

    r = await service.call('PATCH', '/me', { token: user.token, body: { email: 'fresh@example.com', secret_key: 'wrong' } });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors, { secret_key: ['The secret key is incorrect.'] });

    r = await service.call('PATCH', '/me', { token: user.token, body: { email: otherEmail.toUpperCase(), secret_key: user.secret_key } });
    assert.deepEqual(r.body.errors, { email: ['The email has already been taken.'] });

    r = await service.call('PATCH', '/me', { token: user.token, body: { email: 'fresh@example.com', secret_key: user.secret_key } });
    assert.equal(r.status, 200);
    assert.equal(r.body.user.email, 'fresh@example.com');
    assert.match(r.body.user.updated_at, ISO_MICROS);
  });

  test('every failure in one answer: a malformed e-mail does not hide a wrong key; NUL is a malformed address', async () => {
    const user = await service.user();
    let r = await service.call('PATCH', '/me', { token: user.token, body: { email: 'not-an-email', secret_key: 'wrong' } });
    assert.deepEqual(r.body.errors, { email: ['The email must be a valid email address.'], secret_key: ['The secret key is incorrect.'] });
    r = await service.call('PATCH', '/me', { token: user.token, body: { secret_key: 'wrong' } });
    assert.deepEqual(r.body.errors, { email: ['The email field is required.'], secret_key: ['The secret key is incorrect.'] });
    r = await service.call('PATCH', '/me', { token: user.token, body: '{"email":"a\\u0000b@example.com","secret_key":"x"}' });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors, { email: ['The email must be a valid email address.'], secret_key: ['The secret key is incorrect.'] });
  });

  test('is throttled to 6 attempts a minute per token, with Laravel headers', async () => {
    const user = await service.user();
    for (let i = 1; i <= 6; i++) {
      const r = await service.call('PATCH', '/me', { token: user.token, body: { email: 'x' } });
      assert.equal(r.status, 422);
      assert.equal(r.headers.get('x-ratelimit-limit'), '6');
      assert.equal(r.headers.get('x-ratelimit-remaining'), String(6 - i));
    }
    const r = await service.call('PATCH', '/me', { token: user.token, body: { email: 'x' } });
    assert.equal(r.status, 429);
    assert.deepEqual(r.body, { message: 'Too Many Attempts.' });
    assert.equal(r.headers.get('x-ratelimit-remaining'), '0');
    const retryAfter = Number(r.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
    const reset = Number(r.headers.get('x-ratelimit-reset'));
    assert.ok(reset > Date.now() / 1000 && reset <= Date.now() / 1000 + 61);
    // Another token of another user is not affected.
    const other = await service.user();
    assert.equal((await service.call('PATCH', '/me', { token: other.token, body: { email: 'x' } })).status, 422);
  });
});

describe('Laravel wire conventions', () => {
  test('unknown route: 404 Not Found.', async () => {
    const r = await service.call('GET', '/v1/nothing-here');
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { message: 'Not Found.' });
    assert.ok(r.headers.get('x-request-id'));
  });

  test('wrong method: 405 with the supported methods and an Allow header', async () => {
    const r = await service.call('GET', '/v1/test/work');
    assert.equal(r.status, 405);
    assert.deepEqual(r.body, { message: 'The GET method is not supported for this route. Supported methods: POST.' });
    assert.equal(r.headers.get('allow'), 'POST');
    const me = await service.call('DELETE', '/me');
    assert.equal(me.status, 405);
    assert.equal(me.headers.get('allow'), 'GET, HEAD, PATCH');
  });

  test('malformed JSON: 400 and nothing charged', async () => {
    const user = await service.user({ scraping: 5 });
    const r = await service.call('POST', '/v1/test/work', { token: user.token, body: '{"cost": 1,' });
    assert.equal(r.status, 400);
    assert.deepEqual(r.body, { message: 'The request body is not valid JSON.' });
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 5);
    const history = await service.call('GET', '/requests', { token: user.token });
    assert.deepEqual(
      history.body.data.map((row: { endpoint: string; status: number; credits: number }) => [row.endpoint, row.status, row.credits]),
      [['/v1/test/work', 400, 0]],
      'recorded like any other refused /v1 call',
    );
  });

  test('malformed JSON with no or a wrong token: 401, as authentication comes first', async () => {
    for (const token of [undefined, '1|wrongwrongwrongwrongwrongwrongwrongwrong']) {
      const r = await service.call('POST', '/v1/test/work', { token, body: '{bad' });
      assert.equal(r.status, 401);
      assert.deepEqual(r.body, { message: 'Unauthenticated.' });
    }
  });

  test('a POST with a method override (Laravel): _method in the body or query, or X-HTTP-Method-Override', async () => {
    const user = await service.user();
    const viaBody = await service.call('POST', '/me', { token: user.token, body: { _method: 'PATCH', email: 'not-an-email', secret_key: user.secret_key } });
    assert.equal(viaBody.status, 422);
    assert.deepEqual(viaBody.body.errors, { email: ['The email must be a valid email address.'] });
    assert.equal(viaBody.headers.get('x-ratelimit-limit'), '6', 'the PATCH route ran, with its throttle');
    const viaHeader = await service.call('POST', '/me', {
      token: user.token,
      headers: { 'x-http-method-override': 'patch' },
      body: { email: 'moved@example.com', secret_key: user.secret_key },
    });
    assert.equal(viaHeader.status, 200);
    assert.equal(viaHeader.body.user.email, 'moved@example.com');
    const viaQuery = await service.call('POST', '/me?_method=GET', { token: user.token });
    assert.equal(viaQuery.status, 200);
    assert.equal(viaQuery.body.user.email, 'moved@example.com');

    const plain = await service.call('POST', '/me', { token: user.token });
    assert.equal(plain.status, 405);
    assert.equal(plain.headers.get('allow'), 'GET, HEAD, PATCH');
    const toMissing = await service.call('POST', '/v1/test/work', { token: user.token, headers: { 'x-http-method-override': 'GET' } });
    assert.equal(toMissing.status, 405);
    assert.deepEqual(toMissing.body, { message: 'The GET method is not supported for this route. Supported methods: POST.' });
  });

  test('a trailing slash reaches the same route (Laravel ignores it)', async () => {
    const user = await service.user({ scraping: 5 });
    const r = await service.call('POST', '/v1/test/work/', { token: user.token, body: { cost: 1 } });
    assert.equal(r.status, 200);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 4);
    const me = await service.call('GET', '/me/', { token: user.token });
    assert.equal(me.status, 200);
    const wrongMethod = await service.call('GET', '/v1/test/work/', { token: user.token });
    assert.equal(wrongMethod.status, 405);
  });

  test('a body over the limit: 413 with a JSON message', async () => {
    const user = await service.user({ scraping: 5 });
    const r = await service.call('POST', '/v1/test/work', { token: user.token, body: { pad: 'x'.repeat(4096) } });
    assert.equal(r.status, 413);
    assert.deepEqual(r.body, { message: 'The request body is too large.' });
  });

  test('an unexpected fault: 500 Server Error without the detail', async () => {
    const user = await service.user({ scraping: 5 });
    const r = await service.call('POST', '/v1/test/work', { token: user.token, body: { outcome: 'throw' } });
    assert.equal(r.status, 500);
    assert.deepEqual(r.body, { message: 'Server Error' });
    assert.doesNotMatch(r.text, /internal detail/);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 5);
  });

  test('every answer carries a unique X-Request-Id', async () => {
    const ids = new Set<string>();
    for (const route of ['/health', '/me', '/nope', '/openapi.json']) {
      const r = await service.call('GET', route);
      const id = r.headers.get('x-request-id');
      assert.ok(id && /^[0-9a-f-]{36}$/.test(id), `${route}: ${id}`);
      ids.add(id);
    }
    assert.equal(ids.size, 4);
  });

  test('health, readiness, OpenAPI and docs', async () => {
    assert.deepEqual((await service.call('GET', '/health')).body, { status: 'ok' });
    assert.deepEqual((await service.call('GET', '/ready')).body, { status: 'ready' });
    const doc = (await service.call('GET', '/openapi.json')).body;
    assert.equal(doc.openapi, '3.1.0');
    assert.ok(doc.paths['/me'].get && doc.paths['/me'].patch && doc.paths['/requests'].get);
    assert.deepEqual(doc.paths['/me'].patch.requestBody.content['application/json'].schema.required, ['email', 'secret_key']);
    const docs = await fetch(service.url + '/docs/');
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /swagger/i);
  });
});

describe('hostile input gets the house answers', () => {
  const historyOf = async (userId: number) =>
    (await service.services.db.query<{ status: number; params: unknown }>('SELECT status, params FROM request_history WHERE user_id = $1 ORDER BY id', [userId])).map(
      (row) => ({ status: Number(row.status), params: row.params }),
    );
  const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

  test('a field nested thousands of levels deep: the work is answered, charged and recorded', async () => {
    const user = await service.user({ scraping: 5 });
    const body = `{"cost":2,"extra":${deep(1000)}}`;
    const r = await fetch(service.url + '/v1/test/work', { method: 'POST', headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' }, body });
    assert.equal(r.status, 200);
    const bad = await fetch(service.url + '/v1/test/work', { method: 'POST', headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json' }, body: `{"cost":"x","extra":${deep(1000)}}` });
    assert.equal(bad.status, 422);
    assert.deepEqual((await historyOf(user.id)).map((row) => row.status), [200, 422]);
    assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 3);
  });

  test('a body over the limit on a table route: after authentication, throttled, recorded', async () => {
    const noToken = await service.call('POST', '/v1/test/work', { body: { pad: 'x'.repeat(4096) } });
    assert.equal(noToken.status, 401);
    const user = await service.user({ scraping: 5 });
    const r = await service.call('POST', '/v1/test/work', { token: user.token, body: { cost: 1, pad: 'x'.repeat(4096) } });
    assert.equal(r.status, 413);
    assert.deepEqual((await historyOf(user.id)).map((row) => row.status), [413]);
    const throttled = await service.call('PATCH', '/me', { token: user.token, body: { email: 'a@example.com', pad: 'x'.repeat(4096) } });
    assert.equal(throttled.status, 413);
    assert.equal(throttled.headers.get('x-ratelimit-limit'), '6');
    assert.ok(throttled.headers.get('x-request-id'));
  });

  test('headers too large: 431 in the house shape, with X-Request-Id', async () => {
    const { request } = await import('node:http');
    const url = new URL(service.url);
    const answer = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = request({ host: url.hostname, port: url.port, path: '/me', headers: { 'x-big': 'y'.repeat(100_000) } }, (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(answer.status, 431);
    assert.deepEqual(JSON.parse(answer.body), { message: 'The request headers are too large.' });
    assert.match(String(answer.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  test('an e-mail with a lone surrogate or a NUL is refused, never stored altered', async () => {
    const user = await service.user();
    for (const email of ['\ud800@example.com', 'a\u0000b@example.com']) {
      const r = await service.call('PATCH', '/me', { token: user.token, body: { email, secret_key: user.secret_key } });
      assert.equal(r.status, 422, JSON.stringify(email));
      assert.deepEqual(r.body.errors.email, ['The email must be a valid email address.']);
    }
  });
});
