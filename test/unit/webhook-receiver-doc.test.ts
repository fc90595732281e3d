/**
 * The receiver example of docs/webhooks.md works: its code block is taken from the document as
 * written, run in its own Node process on loopback, and sent events signed as the service signs them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { signWebhook } from '../../src/webhooks/signature.ts';
import { webhookEventBody } from '../../src/webhooks/events.ts';
import { jsBlock, postEvent, startDocReceiver, type DocReceiver } from '../support/doc-receiver.ts';

const DOC = new URL('../../docs/webhooks.md', import.meta.url);
const SECRET = 'whsec_ReceiverDocTestSecret0123456789ab';

/** The fenced `js` block under the "A receiver in plain Node" heading. */
function receiverExample(markdown: string): string {
  const section = markdown.split(/^#+ A receiver in plain Node\s*$/m)[1];
  assert.ok(section, 'docs/webhooks.md has a "A receiver in plain Node" section');
  return jsBlock(section, 'the section');
}

let receiver: DocReceiver;

before(async () => {
  receiver = await startDocReceiver(receiverExample(readFileSync(DOC, 'utf8')), SECRET, 'webhook-receiver');
});

after(async () => {
  await receiver?.stop();
});

const body = webhookEventBody({
  id: '9f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f',
  type: 'crawl.page',
  jobId: '3b2a1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9',
  createdAt: new Date(),
  data: { url: 'https://example.com/ünïcode', status_code: 200 },
});
const now = () => Math.floor(Date.now() / 1000);

const send = (payload: string, signature: string | undefined): Promise<number> => postEvent(receiver.url, payload, signature);

test('a correctly signed event is accepted (2xx) and handled', async () => {
  const status = await send(body, signWebhook(SECRET, body, now()));
  assert.ok(status >= 200 && status < 300, `status ${status}`);
  assert.match(await receiver.waitFor(/event crawl\.page 9f1c2d4e/), /event crawl\.page 9f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f/);
});

test('while a secret is rolled, one valid v1 among several is enough', async () => {
  const t = now();
  const v1 = (secret: string) => signWebhook(secret, body, t).split(',')[1];
  const status = await send(body, `t=${t},${v1('whsec_theOldSecretNoLongerInUse000000')},${v1(SECRET)}`);
  assert.ok(status >= 200 && status < 300, `status ${status}`);
});

test('badly signed events are refused (4xx), and the receiver stays up', async () => {
  const t = now();
  const refused = {
    'a wrong secret': await send(body, signWebhook('whsec_NotTheReceiversSecret000000000', body, t)),
    'a tampered body': await send(body.replace('200', '500'), signWebhook(SECRET, body, t)),
    'a stale timestamp': await send(body, signWebhook(SECRET, body, t - 600)),
    'a timestamp from the future': await send(body, signWebhook(SECRET, body, t + 600)),
    'no signature': await send(body, undefined),
    'no timestamp': await send(body, signWebhook(SECRET, body, t).replace(/^t=\d+,/, '')),
    'a v1 that is not hex': await send(body, `t=${t},v1=${'z'.repeat(64)}`),
    'a short v1': await send(body, `t=${t},v1=abc`),
  };
  for (const [what, status] of Object.entries(refused)) assert.ok(status >= 400 && status < 500, `${what}: status ${status}`);
  assert.equal(receiver.child.exitCode, null, `the receiver is still running:\n${receiver.output()}`);
  const status = await send(body, signWebhook(SECRET, body, now()));
  assert.ok(status >= 200 && status < 300, 'and still accepts a good event');
});
