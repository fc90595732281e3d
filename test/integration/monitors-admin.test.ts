/**
 * The operator's view of every user's wallet monitors: /admin/monitors (owner tokens only) and
 * `gleaner monitors list|show|pause|resume` (through the admin socket, or PostgreSQL directly in
 * the scaled tier), and the monitors' metrics on /metrics. The routes, the command line and the
 * monitors-by-status gauge need no chain: without a local EVM node the monitors are written to
 * the database directly. With one (test/support/evm-node.ts) and a receiver on loopback, a paused
 * monitor is shown to match and deliver nothing until resumed, and the follower's lag, blocks and
 * reorgs and the deliveries are counted per chain.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Address, Hash } from 'viem';
import { runGleaner, storageCliEnv } from '../support/cli.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { evmNodeUnavailable, HARDHAT_CHAIN_ID, startEvmNode, type EvmNode } from '../support/evm-node.ts';
import { waitUntil } from '../support/processes.ts';
import { addressKey } from '../../src/monitors/matching.ts';
import { MonitorStore } from '../../src/monitors/store.ts';

const unavailable = evmNodeUnavailable();
const METRICS_TOKEN = 'monitor-metrics-token-0123456789';

interface Delivery {
  type: string;
  monitor_id: string;
  data: any;
}

let node: EvmNode;
let service: TestService;
let receiver: http.Server;
let hook: string;
let owner: string;
const deliveries: Delivery[] = [];

let ada: { id: number; token: string };
let bob: { id: number; token: string };
/** Ada's monitor (watched address accounts[15]) and Bob's (accounts[16]). */
let adaMonitor: string;
let bobMonitor: string;

before(async () => {
  if (!unavailable) node = await startEvmNode();
  receiver = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    deliveries.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  service = await startTestService({
    OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
    ...(node ? { CHAIN_RPC_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: String(HARDHAT_CHAIN_ID) } : {}),
    CHAIN_POLL_MS: '100',
    WEBHOOK_RETRY_BASE_SECONDS: '1',
    METRICS_TOKEN,
  });
  assert.ok(service.owner, 'a fresh database creates the owner account');
  owner = service.owner.token;
  ada = await service.user({ blockchain: 1_000 });
  bob = await service.user({ blockchain: 1_000 });
  adaMonitor = await createMonitor(ada, node?.accounts[15] ?? '0x00000000000000000000000000000000000a0015');
  bobMonitor = await createMonitor(bob, node?.accounts[16] ?? '0x00000000000000000000000000000000000a0016');
});

after(async () => {
  await service?.close();
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  await node?.stop();
});

/** Through the API with a node; without one (the chain is not configured), written as the API would. */
async function createMonitor(user: { id: number; token: string }, address: string): Promise<string> {
  if (node) {
    const created = await service.call('POST', '/v1/chain/monitors', { token: user.token, body: { chain: 'ethereum', addresses: [address], webhook_url: hook, confirmations: 0 } });
    assert.equal(created.status, 201, created.text);
    return created.body.id;
  }
  const { db } = service.services;
  const row = await db.transaction((tx) =>
    new MonitorStore(db).create(tx, {
      userId: user.id,
      chain: 'ethereum',
      addresses: [address],
      keys: [addressKey('evm', address)],
      webhookUrl: hook,
      asset: 'all',
      minValue: 0n,
      confirmations: 0,
      fromBlock: 1,
    }),
  );
  return row.id;
}

const asOwner = (method: string, route: string) => service.call(method, route, { token: owner });
const received = (monitorId: string, type = 'chain.transfer') => deliveries.filter((d) => d.monitor_id === monitorId && d.type === type);

async function send(to: Address, value: bigint): Promise<Hash> {
  const hash = await node.sendNative({ from: node.accounts[0], to, value });
  await node.receipt(hash);
  return hash;
}

/** `gleaner <args>` against this server's storage: its admin socket (embedded), or PostgreSQL directly. */
const gleaner = (...args: string[]) => runGleaner(args, storageCliEnv(service.env));

/** One sample of /metrics: the value of the series whose name and labels are given, or undefined. */
async function metric(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const text = (await service.call('GET', '/metrics', { token: METRICS_TOKEN })).text;
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = match[2].split(',');
    if (wanted.every((label) => present.includes(label)) && present.length === wanted.length) return Number(match[3]);
  }
  return undefined;
}

describe('admin monitors', () => {
  test('no token: 401; a token of a user who is not an owner: 403', async () => {
    assert.equal((await service.call('GET', '/admin/monitors')).status, 401);
    assert.equal((await service.call('GET', '/admin/monitors', { token: ada.token })).status, 403);
    assert.equal((await service.call('POST', `/admin/monitors/${adaMonitor}/pause`, { token: ada.token })).status, 403);
    assert.equal((await service.call('GET', `/v1/chain/monitors/${adaMonitor}`, { token: ada.token })).body.status, 'active');
  });

  test("GET /admin/monitors: every user's monitors, newest first; filters; a wrong filter is a 422 or a 404", async () => {
    const all = await asOwner('GET', '/admin/monitors');
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.body.data.map((row: any) => row.id), [bobMonitor, adaMonitor]);
    const row = all.body.data[1];
    assert.deepEqual(Object.keys(row).sort(), ['addresses', 'asset', 'chain', 'confirmations', 'created_at', 'from_block', 'id', 'min_value', 'status', 'updated_at', 'user', 'webhook_url']);
    assert.equal(row.user, ada.id);
    assert.equal(row.addresses, 1);
    assert.equal(row.status, 'active');
    assert.match(row.created_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);

    assert.deepEqual((await asOwner('GET', `/admin/monitors?user=${bob.id}`)).body.data.map((r: any) => r.id), [bobMonitor]);
    assert.deepEqual((await asOwner('GET', '/admin/monitors?chain=ethereum&status=active&limit=1')).body.data.map((r: any) => r.id), [bobMonitor]);
    assert.deepEqual((await asOwner('GET', '/admin/monitors?chain=bitcoin')).body.data, []);

    const status = await asOwner('GET', '/admin/monitors?status=stopped');
    assert.equal(status.status, 422);
    assert.deepEqual(status.body.errors, { status: ['The selected status is invalid.'] });
    assert.equal((await asOwner('GET', '/admin/monitors?user=')).status, 422);
    assert.equal((await asOwner('GET', '/admin/monitors?user_id=2')).status, 422);
    const unknownUser = await asOwner('GET', '/admin/monitors?user=999999');
    assert.equal(unknownUser.status, 404);
    assert.deepEqual(unknownUser.body, { message: 'There is no user 999999.' });
  });

  test('GET /admin/monitors/{monitor}: addresses, the follower’s block, events by state; an unknown or malformed id is 404', async () => {
    const shown = (await asOwner('GET', `/admin/monitors/${bobMonitor}`)).body.monitor;
    assert.equal(shown.id, bobMonitor);
    assert.equal(shown.user, bob.id);
    assert.equal(shown.addresses.length, 1);
    assert.deepEqual(Object.keys(shown).sort(), [
      'addresses', 'asset', 'chain', 'confirmations', 'created_at', 'events', 'from_block', 'id', 'min_value', 'processed_block', 'recent_events', 'status', 'updated_at', 'user', 'webhook_url',
    ]);
    assert.deepEqual(shown.events, { pending: 0, delivered: 0, failed: 0 });
    assert.deepEqual(shown.recent_events, []);

    for (const id of [randomUUID(), 'not-a-uuid']) {
      const missing = await asOwner('GET', `/admin/monitors/${id}`);
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.body, { message: 'Not found.' });
      assert.equal((await asOwner('POST', `/admin/monitors/${id}/pause`)).status, 404);
    }
  });

  test('pause and resume, by the API and the command line; the owner cannot resume what the operator paused', async () => {
    const paused = await asOwner('POST', `/admin/monitors/${bobMonitor}/pause`);
    assert.equal(paused.status, 200, paused.text);
    assert.deepEqual(paused.body, { id: bobMonitor, status: 'paused' });
    assert.equal((await service.call('GET', `/v1/chain/monitors/${bobMonitor}`, { token: bob.token })).body.status, 'paused');
    const refused = await service.call('PATCH', `/v1/chain/monitors/${bobMonitor}`, { token: bob.token, body: { status: 'active' } });
    assert.equal(refused.status, 409);
    assert.deepEqual(refused.body, { message: 'This monitor was paused by the operator.' });
    const events = (await service.call('GET', `/v1/chain/monitors/${bobMonitor}/events`, { token: bob.token })).body.data;
    assert.deepEqual(events.map((e: any) => e.type), ['chain.monitor_paused'], 'the receiver is told, free');

    const resumed = await gleaner('monitors', 'resume', '--monitor', bobMonitor, '--json');
    assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
    assert.deepEqual(resumed.json, { id: bobMonitor, status: 'active' });
    const cliPause = await gleaner('monitors', 'pause', '--monitor', bobMonitor, '--json');
    assert.deepEqual(cliPause.json, { id: bobMonitor, status: 'paused' });
    assert.deepEqual((await asOwner('POST', `/admin/monitors/${bobMonitor}/resume`)).body, { id: bobMonitor, status: 'active' });
    assert.deepEqual((await asOwner('POST', `/admin/monitors/${bobMonitor}/resume`)).body, { id: bobMonitor, status: 'active' }, 'an active monitor is answered as it is');
  });

  test('the monitors-by-status gauge follows the table', async () => {
    assert.equal(await metric('gleaner_monitors', { chain: 'ethereum', status: 'active' }), 2);
    await asOwner('POST', `/admin/monitors/${bobMonitor}/pause`);
    assert.equal(await metric('gleaner_monitors', { chain: 'ethereum', status: 'active' }), 1);
    assert.equal(await metric('gleaner_monitors', { chain: 'ethereum', status: 'paused' }), 1);
    await asOwner('POST', `/admin/monitors/${bobMonitor}/resume`);
    assert.equal(await metric('gleaner_monitors', { chain: 'ethereum', status: 'active' }), 2);
    assert.equal(await metric('gleaner_monitors', { chain: 'ethereum', status: 'paused' }), undefined);
  });

  test('on a chain: a paused monitor matches and delivers nothing until the operator resumes it', { skip: unavailable, timeout: 120_000 }, async () => {
    const first = await send(node.accounts[15], 5n);
    await waitUntil(async () => received(adaMonitor).some((e) => e.data.transfer.hash === first), 30_000, 'the transfer delivered');
    await waitUntil(async () => (await asOwner('GET', `/admin/monitors/${adaMonitor}`)).body.monitor.events.delivered === 1, 10_000, 'the delivery recorded');
    const shown = (await asOwner('GET', `/admin/monitors/${adaMonitor}`)).body.monitor;
    assert.ok(shown.processed_block >= Number((await node.publicClient.getTransactionReceipt({ hash: first })).blockNumber));
    assert.deepEqual(shown.recent_events.map((e: any) => [e.type, e.status]), [['chain.transfer', 'delivered']]);

    const paused = await asOwner('POST', `/admin/monitors/${adaMonitor}/pause`);
    assert.equal(paused.status, 200, paused.text);
    assert.deepEqual(paused.body, { id: adaMonitor, status: 'paused' });
    assert.deepEqual((await asOwner('POST', `/admin/monitors/${adaMonitor}/pause`)).body, { id: adaMonitor, status: 'paused' }, 'pausing twice answers it as it is');
    await waitUntil(async () => received(adaMonitor, 'chain.monitor_paused').length === 1, 30_000, 'the pause event');
    assert.deepEqual(received(adaMonitor, 'chain.monitor_paused')[0].data, { chain: 'ethereum', status: 'paused', reason: 'Paused by the operator.' });

    const refused = await service.call('PATCH', `/v1/chain/monitors/${adaMonitor}`, { token: ada.token, body: { status: 'active' } });
    assert.equal(refused.status, 409);
    assert.deepEqual(refused.body, { message: 'This monitor was paused by the operator.' });

    // Mined while paused: never sent. Bob's monitor goes on meanwhile.
    const missed = await send(node.accounts[15], 6n);
    const bobs = await send(node.accounts[16], 7n);
    await waitUntil(async () => received(bobMonitor).some((e) => e.data.transfer.hash === bobs), 30_000, "Bob's transfer");
    await waitUntil(async () => (await asOwner('GET', `/admin/monitors/${adaMonitor}`)).body.monitor.processed_block >= (await node.blockNumber()), 30_000, 'the follower past the paused block');

    const resumed = await gleaner('monitors', 'resume', '--monitor', adaMonitor, '--json');
    assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
    assert.deepEqual(resumed.json, { id: adaMonitor, status: 'active' });
    const after = await send(node.accounts[15], 8n);
    await waitUntil(async () => received(adaMonitor).some((e) => e.data.transfer.hash === after), 30_000, 'the transfer after the resume');
    assert.ok(!received(adaMonitor).some((e) => e.data.transfer.hash === missed), 'the transfer mined while paused is not sent');

  });
});

describe('gleaner monitors', () => {
  test('list --json answers what the admin API answers; filters; a table without --json', async () => {
    const listed = await gleaner('monitors', 'list', '--user', String(ada.id), '--chain', 'ethereum', '--json');
    assert.equal(listed.code, 0, listed.stdout + listed.stderr);
    assert.deepEqual(listed.json, (await asOwner('GET', `/admin/monitors?user=${ada.id}&chain=ethereum`)).body.data);
    assert.deepEqual(listed.json.map((row: any) => row.id), [adaMonitor]);

    const table = await gleaner('monitors', 'list', '--status', 'active');
    assert.equal(table.code, 0, table.stdout + table.stderr);
    // One aligned table (issue 40): no index column, no quotes.
    assert.doesNotMatch(table.stdout, /\(index\)|'/);
    assert.match(table.stdout, new RegExp(`^${adaMonitor} .* ethereum +active `, 'm'));
  });

  test('show --json answers the monitor; an unknown id exits 1, a wrong status or chain 2', async () => {
    const shown = await gleaner('monitors', 'show', '--monitor', bobMonitor, '--json');
    assert.equal(shown.code, 0, shown.stdout + shown.stderr);
    assert.deepEqual(shown.json, (await asOwner('GET', `/admin/monitors/${bobMonitor}`)).body.monitor);

    const unknown = randomUUID();
    const missing = await gleaner('monitors', 'pause', '--monitor', unknown, '--json');
    assert.equal(missing.code, 1);
    assert.deepEqual(missing.json, { error: `There is no monitor ${unknown}.` });

    const status = await gleaner('monitors', 'list', '--status', 'stopped', '--json');
    assert.equal(status.code, 2);
    assert.match(status.json.error, /^--status must be one of active, paused_no_credits, paused/);
    const chain = await gleaner('monitors', 'list', '--chain', 'dogecoin', '--json');
    assert.equal(chain.code, 2);
    assert.match(chain.json.error, /^--chain must be one of ethereum, /);
    const noMonitor = await gleaner('monitors', 'show', '--json');
    assert.equal(noMonitor.code, 2);
    assert.deepEqual(noMonitor.json, { error: '--monitor is required.' });
  });
});

describe('monitor metrics', { skip: unavailable }, () => {
  test('per chain: the follower’s lag, blocks, reorgs and deliveries', { timeout: 120_000 }, async () => {
    const blocksBefore = (await metric('gleaner_monitor_blocks_total', { chain: 'ethereum' })) ?? 0;
    const snapshot = await node.snapshot();
    const doomed = await send(node.accounts[16], 9n);
    await waitUntil(async () => received(bobMonitor).some((e) => e.data.transfer.hash === doomed), 30_000, 'the transfer before the reorg');
    await node.revert(snapshot);
    await send(node.accounts[16], 10n);
    await node.mine(3);
    await waitUntil(async () => received(bobMonitor, 'chain.transfer_reverted').length > 0, 60_000, 'the reorg walked back');
    await waitUntil(async () => (await metric('gleaner_monitor_head_lag_blocks', { chain: 'ethereum' })) === 0, 30_000, 'the follower at the head');

    assert.ok(((await metric('gleaner_monitor_blocks_total', { chain: 'ethereum' })) ?? 0) > blocksBefore);
    assert.ok(((await metric('gleaner_monitor_reorgs_total', { chain: 'ethereum' })) ?? 0) >= 1);
    assert.ok(((await metric('gleaner_monitor_events_total', { chain: 'ethereum', outcome: 'delivered' })) ?? 0) >= received(bobMonitor).length);
  });
});
