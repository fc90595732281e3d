/**
 * The monitor receiver of docs/blockchain.md ("Monitors", "A receiver") works: its code block is
 * taken from the document as written, run in its own Node process on loopback, and sent monitor
 * events built and signed as the service builds and signs them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { signWebhook, WEBHOOK_SIGNATURE_HEADER } from '../../src/webhooks/signature.ts';
import { monitorEventBody } from '../../src/monitors/store.ts';
import { transferEventId } from '../../src/monitors/matching.ts';

const DOC = new URL('../../docs/blockchain.md', import.meta.url);
const SECRET = 'whsec_MonitorReceiverDocTestSecret012';

/** The fenced `js` block under "### A receiver" of the "## Monitors" section. */
function receiverExample(markdown: string): string {
  const monitors = markdown.split(/^## Monitors\s*$/m)[1];
  assert.ok(monitors, 'docs/blockchain.md has a "Monitors" section');
  const section = monitors.split(/^### A receiver\s*$/m)[1];
  assert.ok(section, 'the section has an "A receiver" part');
  const block = /^```js\n([\s\S]*?)^```$/m.exec(section);
  assert.ok(block, 'with a ```js block');
  return block[1];
}

let dir: string;
let child: ChildProcess;
let output = '';
let url: string;

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-monitor-receiver-'));
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
  url = `http://127.0.0.1:${port}/`;
});

after(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const MONITOR = '5f0c1b8e-2a4d-4c6e-8f10-3b2a1c0d9e8f';
const WATCHED = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';

function transferEvent(type: 'chain.transfer' | 'chain.transfer_reverted', hash: string, value: string): string {
  return monitorEventBody({
    id: transferEventId(MONITOR, hash, 0, type),
    type,
    monitorId: MONITOR,
    createdAt: new Date(),
    data: {
      chain: 'ethereum',
      address: WATCHED,
      direction: 'in',
      block_hash: `0x${'ab'.repeat(32)}`,
      log_index: 0,
      transfer: { hash, block_number: 100, timestamp: '2026-11-26T10:00:00.000000Z', from: `0x${'11'.repeat(20)}`, to: WATCHED, value, asset: { type: 'native', contract: null, symbol: 'ETH', decimals: 18 }, fee: '21000', status: 'success', ...(type === 'chain.transfer' ? { confirmations: 12 } : {}) },
    },
  });
}

async function send(payload: string, signature?: string): Promise<number> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  headers[WEBHOOK_SIGNATURE_HEADER] = signature ?? signWebhook(SECRET, payload, Math.floor(Date.now() / 1000));
  const response = await fetch(url, { method: 'POST', headers, body: payload });
  await response.arrayBuffer();
  return response.status;
}

async function settled(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 100));
}

test('transfers are applied once each; a repeat is ignored; a revert is taken back', async () => {
  const first = transferEvent('chain.transfer', `0x${'01'.repeat(32)}`, '1000');
  const second = transferEvent('chain.transfer', `0x${'02'.repeat(32)}`, '250');
  assert.equal(await send(first), 204);
  assert.equal(await send(second), 204);
  assert.equal(await send(first), 204, 'a repeat is acknowledged');
  await settled();
  assert.match(output, /total 1250\n/);
  assert.equal((output.match(/^chain\.transfer /gm) ?? []).length, 2, 'the repeat is not applied');
  assert.equal(await send(transferEvent('chain.transfer_reverted', `0x${'02'.repeat(32)}`, '250')), 204);
  await settled();
  assert.match(output, /chain\.transfer_reverted .* total 1000\n/);
});

test('a pause event is reported; a badly signed event is refused and the receiver stays up', async () => {
  const paused = monitorEventBody({ id: '7b1d2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e', type: 'chain.monitor_paused', monitorId: MONITOR, createdAt: new Date(), data: { chain: 'ethereum', status: 'paused_no_credits', reason: 'The balance cannot pay for an event (1 credits).' } });
  assert.equal(await send(paused), 204);
  await settled();
  assert.match(output, new RegExp(`paused ${MONITOR}`));
  const event = transferEvent('chain.transfer', `0x${'03'.repeat(32)}`, '5');
  assert.equal(await send(event, signWebhook('whsec_NotTheReceiversSecret000000000', event, Math.floor(Date.now() / 1000))), 400);
  assert.equal(await send(event.replace('"5"', '"500"'), signWebhook(SECRET, event, Math.floor(Date.now() / 1000))), 400);
  assert.equal(child.exitCode, null);
});
