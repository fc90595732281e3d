/**
 * The monitor receiver of docs/blockchain.md ("Monitors", "A receiver") works: its code block is
 * taken from the document as written, run in its own Node process on loopback, and sent monitor
 * events built and signed as the service builds and signs them.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { signWebhook } from '../../src/webhooks/signature.ts';
import { monitorEventBody } from '../../src/monitors/store.ts';
import { transferEventId } from '../../src/monitors/matching.ts';
import { jsBlock, postEvent, startDocReceiver, type DocReceiver } from '../support/doc-receiver.ts';

const DOC = new URL('../../docs/blockchain.md', import.meta.url);
const SECRET = 'whsec_MonitorReceiverDocTestSecret012';

/** The fenced `js` block under "### A receiver" of the "## Monitors" section. */
function receiverExample(markdown: string): string {
  const monitors = markdown.split(/^## Monitors\s*$/m)[1];
  assert.ok(monitors, 'docs/blockchain.md has a "Monitors" section');
  const section = monitors.split(/^### A receiver\s*$/m)[1];
  assert.ok(section, 'the section has an "A receiver" part');
  return jsBlock(section, 'the "A receiver" part');
}

let receiver: DocReceiver;

before(async () => {
  receiver = await startDocReceiver(receiverExample(readFileSync(DOC, 'utf8')), SECRET, 'monitor-receiver');
});

after(async () => {
  await receiver?.stop();
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

/** Signed with the receiver's secret unless another signature is given. */
const send = (payload: string, signature?: string): Promise<number> =>
  postEvent(receiver.url, payload, signature ?? signWebhook(SECRET, payload, Math.floor(Date.now() / 1000)));

test('transfers are applied once each; a repeat is ignored; a revert is taken back', async () => {
  const first = transferEvent('chain.transfer', `0x${'01'.repeat(32)}`, '1000');
  const second = transferEvent('chain.transfer', `0x${'02'.repeat(32)}`, '250');
  assert.equal(await send(first), 204);
  assert.equal(await send(second), 204);
  await receiver.waitFor(/total 1250\n/);
  assert.equal(await send(first), 204, 'a repeat is acknowledged');
  assert.equal(await send(transferEvent('chain.transfer_reverted', `0x${'02'.repeat(32)}`, '250')), 204);
  // The example handles one event after the other, so the revert's line comes after anything the
  // repeat printed: a repeat applied would have made the total 2250, then 2000.
  await receiver.waitFor(/chain\.transfer_reverted .* total \d+\n/);
  assert.match(receiver.output(), /chain\.transfer_reverted .* total 1000\n/);
  assert.equal((receiver.output().match(/^chain\.transfer /gm) ?? []).length, 2, 'the repeat is not applied');
});

test('a pause event is reported; a badly signed event is refused and the receiver stays up', async () => {
  const paused = monitorEventBody({ id: '7b1d2c3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e', type: 'chain.monitor_paused', monitorId: MONITOR, createdAt: new Date(), data: { chain: 'ethereum', status: 'paused_no_credits', reason: 'The balance cannot pay for an event (1 credits).' } });
  assert.equal(await send(paused), 204);
  await receiver.waitFor(new RegExp(`paused ${MONITOR}`));
  const event = transferEvent('chain.transfer', `0x${'03'.repeat(32)}`, '5');
  assert.equal(await send(event, signWebhook('whsec_NotTheReceiversSecret000000000', event, Math.floor(Date.now() / 1000))), 400);
  assert.equal(await send(event.replace('"5"', '"500"'), signWebhook(SECRET, event, Math.floor(Date.now() / 1000))), 400);
  assert.equal(receiver.child.exitCode, null);
});
