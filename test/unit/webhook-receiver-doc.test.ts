/**
 * The receiver example of docs/webhooks.md works: its code block is taken from the document as
 * written, run in its own Node process on loopback, and sent events signed as the service signs them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signWebhook, WEBHOOK_SIGNATURE_HEADER } from '../../src/webhooks/signature.ts';
import { webhookEventBody } from '../../src/webhooks/events.ts';

const DOC = new URL('../../docs/webhooks.md', import.meta.url);
const SECRET = 'whsec_ReceiverDocTestSecret0123456789ab';

/** The fenced `js` block under the "A receiver in plain Node" heading. */
function receiverExample(markdown: string): string {
  const section = markdown.split(/^#+ A receiver in plain Node\s*$/m)[1];
  assert.ok(section, 'docs/webhooks.md has a "A receiver in plain Node" section');
  const block = /^```js\n([\s\S]*?)^```$/m.exec(section);
  assert.ok(block, 'the section has a ```js block');
  return block[1];
}

let dir: string;
let child: ChildProcess;
let output = '';
let url: string;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-webhook-receiver-'));
  const file = path.join(dir, 'receiver.mjs');
  writeFileSync(file, receiverExample(readFileSync(DOC, 'utf8')));
  child = spawn(process.execPath, [file], { env: { ...process.env, PORT: '0', GLEANER_WEBHOOK_SECRET: SECRET }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk));
  const port = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the example did not start:\n${output}`)), 15_000);
    child.stdout?.on('data', () => {
      const match = /listening on (\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the example exited with ${code}:\n${output}`));
    });
  });
  // The example listens on every interface; the test speaks to it on loopback only.
  url = `http://127.0.0.1:${port}/`;
});

after(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const body = webhookEventBody({
  id: '9f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f',
  type: 'crawl.page',
  jobId: '3b2a1c0d-9e8f-4a7b-b6c5-d4e3f2a1b0c9',
  createdAt: new Date(),
  data: { url: 'https://example.com/ünïcode', status_code: 200 },
});
const now = () => Math.floor(Date.now() / 1000);

async function send(payload: string, signature: string | undefined): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (signature !== undefined) headers[WEBHOOK_SIGNATURE_HEADER] = signature;
  const response = await fetch(url, { method: 'POST', headers, body: payload });
  await response.arrayBuffer();
  return response.status;
}

test('a correctly signed event is accepted (2xx) and handled', async () => {
  const status = await send(body, signWebhook(SECRET, body, now()));
  assert.ok(status >= 200 && status < 300, `status ${status}`);
  assert.match(output, /event crawl\.page 9f1c2d4e-5b6a-4c7d-8e9f-0a1b2c3d4e5f/);
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
  assert.equal(child.exitCode, null, `the receiver is still running:\n${output}`);
  const status = await send(body, signWebhook(SECRET, body, now()));
  assert.ok(status >= 200 && status < 300, 'and still accepts a good event');
});
