/**
 * Webhook delivery through the service's real outbound client, to receivers on loopback (the only
 * exempted address): delivered on 2xx, retried on another status, a redirect, a timeout or no
 * connection, refused for a private address without a connection; the signature verifies on the
 * receiver's side. Then the events store and the /me/webhook-secret routes on the real server.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { randomUUID } from 'node:crypto';
import { startTestService, type TestService } from '../support/service.ts';
import { outboundCapability } from '../../src/outbound/config.ts';
import type { ClosableOutboundClient } from '../../src/outbound/client.ts';
import { envReader } from '../../src/core/env.ts';
import { deliverWebhook, WEBHOOK_EVENT_ID_HEADER, type WebhookDelivery } from '../../src/webhooks/delivery.ts';
import { verifyWebhookSignature } from '../../src/webhooks/signature.ts';
import { WebhookEventStore } from '../../src/webhooks/events.ts';

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let service: TestService;
let receiver: http.Server;
let base: string;
let closedPort: number;
const received: Received[] = [];
const stalled: http.ServerResponse[] = [];

/** What each path answers; every request is recorded first. */
function answer(path: string, res: http.ServerResponse): void {
  switch (path) {
    case '/ok':
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
      return;
    case '/accepted':
      res.writeHead(202).end();
      return;
    case '/error':
      res.writeHead(500).end('boom');
      return;
    case '/gone':
      res.writeHead(410).end();
      return;
    case '/moved':
      res.writeHead(302, { location: '/ok' }).end();
      return;
    case '/huge':
      res.writeHead(200, { 'content-type': 'text/html' }).end('x'.repeat(200 * 1024));
      return;
    case '/stall':
      stalled.push(res);
      return;
    default:
      res.writeHead(404).end();
  }
}

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

before(async () => {
  // Loopback by its address only: a name that resolves to it is as private as any other.
  service = await startTestService({ OUTBOUND_ALLOW_HOSTS: '127.0.0.1' });
  receiver = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    answer(req.url ?? '', res);
  });
  base = `http://127.0.0.1:${await listen(receiver)}`;
  const spare = http.createServer();
  closedPort = await listen(spare);
  await new Promise((resolve) => spare.close(resolve));
});

after(async () => {
  for (const res of stalled) res.destroy();
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
  await service.close();
});

const SECRET = 'whsec_IntegrationTestSecret000000000';
const event = (url: string) => ({ id: randomUUID(), url, body: JSON.stringify({ id: 'e', type: 'crawl.page', data: { url: 'https://example.com/ü', status_code: 200 } }) });
const deliver = (url: string, options: Parameters<typeof deliverWebhook>[3] = {}) => deliverWebhook(service.services.outbound, event(url), SECRET, options);
const hitsOn = (path: string) => received.filter((request) => request.path === path).length;

describe('deliverWebhook', () => {
  test('a 2xx is delivered; the receiver gets the body as is, signed, with the event id', async () => {
    const sent = event(`${base}/ok`);
    const sentAt = 1_764_000_000_000;
    assert.deepEqual(await deliverWebhook(service.services.outbound, sent, SECRET, { now: () => sentAt }), { kind: 'delivered', status: 200 });
    const request = received.at(-1);
    assert.ok(request);
    assert.equal(request.body, sent.body);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.equal(request.headers['user-agent'], 'gleaner-webhooks/1');
    assert.equal(request.headers[WEBHOOK_EVENT_ID_HEADER.toLowerCase()], sent.id);
    const signature = request.headers['gleaner-signature'];
    assert.equal(typeof signature, 'string');
    assert.match(signature as string, /^t=1764000000,v1=[0-9a-f]{64}$/);
    assert.equal(verifyWebhookSignature(signature as string, request.body, SECRET, { now: sentAt / 1000 }), true);
    assert.equal(verifyWebhookSignature(signature as string, request.body, 'whsec_other', { now: sentAt / 1000 }), false);
    assert.deepEqual(await deliver(`${base}/accepted`), { kind: 'delivered', status: 202 });
  });

  test('another status is retried, with the status', async () => {
    assert.deepEqual(await deliver(`${base}/error`), { kind: 'retry', status: 500, error: 'The receiver answered 500.' });
    assert.deepEqual(await deliver(`${base}/gone`), { kind: 'retry', status: 410, error: 'The receiver answered 410.' });
  });

  test('a redirect is not followed: a failed attempt', async () => {
    const before = hitsOn('/ok');
    const outcome = await deliver(`${base}/moved`);
    assert.equal(outcome.kind, 'retry');
    assert.equal(outcome.kind === 'retry' && outcome.status, 302);
    assert.match(outcome.kind === 'retry' ? outcome.error : '', /redirects are not followed/);
    assert.equal(hitsOn('/ok'), before, 'the redirect target was never asked');
  });

  test('no answer within the timeout is retried', async () => {
    const started = Date.now();
    const outcome = await deliver(`${base}/stall`, { timeoutMs: 300 });
    assert.deepEqual(outcome, { kind: 'retry', error: 'The receiver did not answer within 0.3 s.' });
    assert.ok(Date.now() - started < 5_000);
  });

  test('no connection is retried, saying why', async () => {
    const outcome = await deliver(`http://127.0.0.1:${closedPort}/hook`);
    assert.equal(outcome.kind, 'retry');
    assert.match(outcome.kind === 'retry' ? outcome.error : '', /^The receiver could not be reached: /);
  });

  test('an answer too long to read is a failed attempt, not a delivery', async () => {
    const outcome = await deliver(`${base}/huge`);
    assert.equal(outcome.kind, 'retry');
    assert.match(outcome.kind === 'retry' ? outcome.error : '', /longer than 64 KB/);
  });

  test('a private address is refused without a connection, and never said', async () => {
    const count = received.length;
    const refused: WebhookDelivery = { kind: 'refused', error: 'The webhook URL resolves to a private address; webhooks are only sent to public addresses.' };
    for (const url of ['http://10.0.0.1/hook', 'http://169.254.169.254/latest/meta-data/', 'http://[::1]/hook', `http://localhost:${new URL(base).port}/ok`, 'http://192.168.1.1:8080/']) {
      assert.deepEqual(await deliver(url), refused, url);
    }
    assert.equal(received.length, count, 'the receiver on loopback, reached by name, was never hit');
  });

  test('a public name that resolves to a private address at delivery time is refused', async () => {
    // A name that was public when the job was created and resolves inward now (DNS rebinding).
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if (options.all) callback(null, [{ address: '10.1.2.3', family: 4 }]);
      else callback(null, '10.1.2.3', 4);
    };
    const rebinding: ClosableOutboundClient = outboundCapability.start({ ...outboundCapability.settings(envReader({ OUTBOUND_ALLOW_HOSTS: '127.0.0.1' })), lookup });
    try {
      const outcome = await deliverWebhook(rebinding, event('https://hooks.example.com/gleaner'), SECRET);
      assert.equal(outcome.kind, 'refused');
      assert.doesNotMatch(outcome.kind === 'refused' ? outcome.error : '', /10\.1\.2\.3/, 'the resolved address is not told');
    } finally {
      await outboundCapability.close(rebinding);
    }
  });

  test('a URL that is not http(s) is refused', async () => {
    for (const url of ['ftp://example.com/hook', 'file:///etc/passwd', 'not a url']) {
      assert.deepEqual(await deliver(url), { kind: 'refused', error: 'The webhook URL is not a valid http or https URL.' }, url);
    }
  });

  test('a worker that stops abandons the attempt: the call rejects with its reason', async () => {
    const controller = new AbortController();
    const stopping = new Error('worker stopping');
    setTimeout(() => controller.abort(stopping), 100);
    await assert.rejects(deliver(`${base}/stall`, { signal: controller.signal }), (error) => error === stopping);
  });
});

describe('webhook events and secrets together', () => {
  test('an event recorded in a transaction is delivered signed with the user’s secret, and its deliveries are listed for the job', async () => {
    const user = await service.user();
    const { db } = service.services;
    const store = new WebhookEventStore(db, { now: () => Date.parse('2026-11-22T10:15:30.123Z') });
    const jobId = randomUUID();
    // The job row, reduced to the columns that have no default.
    await db.query(
      `INSERT INTO jobs (id, user_id, kind, status, params, page_limit, request_id, expires_at)
       VALUES ($1, $2, 'crawl', 'running', '{}'::jsonb, 10, $3, clock_timestamp() + interval '7 days')`,
      [jobId, user.id, randomUUID()],
    );
    const { id } = await db.transaction((tx) => store.record(tx, { userId: user.id, jobId, source: 'job', url: `${base}/ok`, type: 'crawl.completed', data: { status: 'completed', completed: 3, credits_used: 3 } }));
    const second = await db.transaction((tx) => store.record(tx, { userId: user.id, jobId, source: 'job', url: `${base}/error`, type: 'crawl.page', data: { url: 'https://example.com/', status_code: 200 } }));

    const loaded = await store.load(id);
    assert.ok(loaded);
    assert.deepEqual(
      { ...loaded },
      {
        id,
        userId: user.id,
        jobId,
        source: 'job',
        url: `${base}/ok`,
        type: 'crawl.completed',
        body: `{"id":"${id}","type":"crawl.completed","job_id":"${jobId}","created_at":"2026-11-22T10:15:30.123000Z","data":{"status":"completed","completed":3,"credits_used":3}}`,
        state: 'pending',
        attempts: 0,
        lastStatus: null,
        lastError: null,
        createdAt: '2026-11-22T10:15:30.123000Z',
        deliveredAt: null,
        expiresAt: '2026-11-29T10:15:30.123000Z',
      },
    );

    const secret = await service.services.webhookSecrets.get(user.id);
    const outcome = await deliverWebhook(service.services.outbound, loaded, secret);
    assert.deepEqual(outcome, { kind: 'delivered', status: 200 });
    const request = received.at(-1);
    assert.ok(request);
    assert.equal(request.body, loaded.body, 'the stored body, byte for byte');
    // What the user's receiver does: verify with the secret GET /me/webhook-secret shows.
    const shown = await service.call('GET', '/me/webhook-secret', { token: user.token });
    assert.equal(verifyWebhookSignature(String(request.headers['gleaner-signature']), request.body, shown.body.secret), true);
    assert.equal(await store.markDelivered(id, outcome.kind === 'delivered' ? outcome.status : 0), true);
    assert.equal(await store.markDelivered(id, 200), false, 'a duplicate delivery changes nothing');
    assert.equal(await store.markAttempt(id, { error: 'late' }), false, 'nor does a late failure');

    assert.equal(await store.markAttempt(second.id, { status: 500, error: 'The receiver answered 500.' }), true);
    assert.equal(await store.markAttempt(second.id, { error: 'The receiver did not answer within 10 s.' }), true);
    assert.equal(await store.markFailed(second.id, 'Given up after 24 h.'), true);
    assert.equal(await store.markAttempt(second.id, { error: 'after' }), false, 'a failed event stays failed');

    const listed = await store.listForJob(jobId);
    assert.equal(listed.length, 2);
    assert.deepEqual(
      listed.map(({ delivered_at, ...rest }) => ({ ...rest, delivered: delivered_at !== null })),
      [
        { id, type: 'crawl.completed', state: 'delivered', attempts: 1, last_status: 200, last_error: null, created_at: '2026-11-22T10:15:30.123000Z', delivered: true },
        { id: second.id, type: 'crawl.page', state: 'failed', attempts: 2, last_status: null, last_error: 'Given up after 24 h.', created_at: '2026-11-22T10:15:30.123000Z', delivered: false },
      ].sort((a, b) => (a.id < b.id ? -1 : 1)),
    );
    assert.match(String(listed[0].delivered_at ?? listed[1].delivered_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.deepEqual(await store.listForJob(randomUUID()), []);
    assert.equal(await store.load(randomUUID()), null);
    assert.equal(await store.load('not-a-uuid'), null);
  });

  test('an event without a job (a monitor’s) is recorded with job_id null', async () => {
    const user = await service.user();
    const store = new WebhookEventStore(service.services.db);
    const { id } = await service.services.db.transaction((tx) => store.record(tx, { userId: user.id, jobId: null, source: 'monitor', url: `${base}/ok`, type: 'chain.transfer', data: { hash: '0xabc' } }));
    const loaded = await store.load(id);
    assert.equal(loaded?.jobId, null);
    assert.equal(JSON.parse(loaded?.body ?? '{}').job_id, null);
  });

  test('an event recorded in a transaction that rolls back does not exist', async () => {
    const user = await service.user();
    const store = new WebhookEventStore(service.services.db);
    let id = '';
    await assert.rejects(
      service.services.db.transaction(async (tx) => {
        id = (await store.record(tx, { userId: user.id, jobId: null, source: 'job', url: `${base}/ok`, type: 'crawl.started', data: { status: 'running' } })).id;
        throw new Error('the job could not be started');
      }),
      /could not be started/,
    );
    assert.equal(await store.load(id), null);
  });
});

describe('/me/webhook-secret', () => {
  test('the secret is created on first request and the same afterwards', async () => {
    const user = await service.user();
    const first = await service.call('GET', '/me/webhook-secret', { token: user.token });
    assert.equal(first.status, 200);
    assert.deepEqual(Object.keys(first.body), ['secret']);
    assert.match(first.body.secret, /^whsec_[A-Za-z0-9]{32}$/);
    const again = await service.call('GET', '/me/webhook-secret', { token: user.token });
    assert.equal(again.body.secret, first.body.secret);
    assert.equal(await service.services.webhookSecrets.get(user.id), first.body.secret);
    const other = await service.user();
    assert.notEqual((await service.call('GET', '/me/webhook-secret', { token: other.token })).body.secret, first.body.secret, 'each user has their own');
  });

  test('first uses at once agree on one secret', async () => {
    const user = await service.user();
    const secrets = await Promise.all(Array.from({ length: 8 }, () => service.services.webhookSecrets.get(user.id)));
    assert.equal(new Set(secrets).size, 1);
  });

  test('rotate answers a new secret, which GET then shows', async () => {
    const user = await service.user();
    const before = (await service.call('GET', '/me/webhook-secret', { token: user.token })).body.secret;
    const rotated = await service.call('POST', '/me/webhook-secret/rotate', { token: user.token });
    assert.equal(rotated.status, 200);
    assert.match(rotated.body.secret, /^whsec_[A-Za-z0-9]{32}$/);
    assert.notEqual(rotated.body.secret, before);
    assert.equal((await service.call('GET', '/me/webhook-secret', { token: user.token })).body.secret, rotated.body.secret);
    const never = await service.user();
    const first = await service.call('POST', '/me/webhook-secret/rotate', { token: never.token });
    assert.equal(first.status, 200, 'rotating before any secret exists creates one');
    assert.match(first.body.secret, /^whsec_/);
  });

  test('401 without a valid token; neither route is billed nor kept in the history', async () => {
    for (const [method, route] of [['GET', '/me/webhook-secret'], ['POST', '/me/webhook-secret/rotate']] as const) {
      const anonymous = await service.call(method, route);
      assert.equal(anonymous.status, 401);
      assert.deepEqual(anonymous.body, { message: 'Unauthenticated.' });
      assert.equal((await service.call(method, route, { token: '1|nottherighttoken' })).status, 401);
    }
    const user = await service.user({ scraping: 5 });
    await service.call('GET', '/me/webhook-secret', { token: user.token });
    await service.call('POST', '/me/webhook-secret/rotate', { token: user.token });
    const me = await service.call('GET', '/me', { token: user.token });
    assert.equal(me.body.user.credits, 5);
    const history = await service.call('GET', '/requests', { token: user.token });
    assert.deepEqual(history.body.data, []);
  });
});
