/**
 * Wallet monitors against a real EVM node (Hardhat's, test/support/evm-node.ts) and a webhook
 * receiver on loopback: the routes and their errors, 50 transfers across 3 monitors each
 * delivered once per monitor, in order, after its confirmations, signed; a reorg made with
 * snapshot/revert sends `chain.transfer_reverted`; an empty balance pauses a monitor until PATCH.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { getAddress, type Address, type Hash } from 'viem';
import { startTestService, type TestService } from '../support/service.ts';
import { evmNodeUnavailable, HARDHAT_CHAIN_ID, startEvmNode, type EvmNode } from '../support/evm-node.ts';
import { waitUntil } from '../support/processes.ts';
import { verifyWebhookSignature } from '../../src/webhooks/signature.ts';
import { auditCredits } from '../../src/operations/index.ts';

const unavailable = evmNodeUnavailable();

interface Delivery {
  id: string;
  type: string;
  monitor_id: string;
  data: any;
  /** The node's head when the event arrived. */
  headAtArrival: number;
  signed: boolean;
}

let node: EvmNode;
let service: TestService;
let receiver: http.Server;
let hookUrl: string;
const deliveries: Delivery[] = [];
/** Secrets per user token, to check signatures. */
const secrets = new Map<string, string>();
/** Paths answering an error, to exercise retries. */
let failing = new Set<string>();

before(async () => {
  if (unavailable) return;
  node = await startEvmNode();
  receiver = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    if (failing.has(req.url ?? '')) return res.writeHead(500).end();
    const event = JSON.parse(raw);
    const secret = secrets.get(req.url?.split('/')[2] ?? '');
    deliveries.push({
      ...event,
      headAtArrival: await node.blockNumber(),
      signed: secret !== undefined && verifyWebhookSignature(String(req.headers['gleaner-signature']), raw, secret) && req.headers['gleaner-event-id'] === event.id,
    });
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  service = await startTestService({
    OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
    CHAIN_RPC_ETHEREUM: node.url,
    CHAIN_ID_ETHEREUM: String(HARDHAT_CHAIN_ID),
    CHAIN_POLL_MS: '100',
    WEBHOOK_RETRY_BASE_SECONDS: '1',
    ...(process.env.MONITOR_TEST_LOG ? { LOG_LEVEL: 'warn' } : {}),
  }, process.env.MONITOR_TEST_LOG ? ({ logger: true } as object) : {});
});

after(async () => {
  await service?.close();
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  await node?.stop();
});

/** A user with blockchain credits whose webhook secret the receiver knows (by the path `/hooks/<name>`). */
async function user(name: string, credits: number) {
  const created = await service.user({ blockchain: credits });
  const secret = (await service.call('GET', '/me/webhook-secret', { token: created.token })).body.secret;
  secrets.set(name, secret);
  return { ...created, hook: `${hookUrl}/${name}` };
}

function createMonitor(token: string, body: Record<string, unknown>) {
  return service.call('POST', '/v1/chain/monitors', { token, body });
}

const received = (monitorId: string, type = 'chain.transfer') => deliveries.filter((d) => d.monitor_id === monitorId && d.type === type);

describe('wallet monitors', { skip: unavailable }, () => {
  test('routes: create, list, read, delete; another user’s monitor is 404; the 422s and the 503', async () => {
    const owner = await user('crud', 1_000);
    const other = await user('crud-other', 1_000);
    const watched = getAddress(node.accounts[15]);
    const created = await createMonitor(owner.token, { chain: 'ethereum', addresses: [watched.toLowerCase()], webhook_url: owner.hook, confirmations: 2 });
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), ['addresses', 'asset', 'chain', 'confirmations', 'created_at', 'id', 'min_value', 'status', 'webhook_url']);
    assert.equal(created.body.status, 'active');
    assert.deepEqual(created.body.addresses, [watched], 'stored checksummed');
    assert.equal(created.body.confirmations, 2);
    assert.match(created.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    const id = created.body.id;

    const defaults = await createMonitor(owner.token, { chain: 'ethereum', addresses: [watched, watched.toLowerCase()], webhook_url: owner.hook });
    assert.equal(defaults.status, 201);
    assert.equal(defaults.body.confirmations, 12, "the chain's finality");
    assert.deepEqual(defaults.body.addresses, [watched], 'the same address twice is watched once');
    assert.equal(defaults.body.asset, 'all');

    assert.deepEqual((await service.call('GET', '/v1/chain/monitors', { token: owner.token })).body.data.map((m: any) => m.id), [id, defaults.body.id]);
    assert.deepEqual((await service.call('GET', '/v1/chain/monitors', { token: other.token })).body.data, []);
    assert.equal((await service.call('GET', `/v1/chain/monitors/${id}`, { token: owner.token })).body.id, id);
    for (const [method, route, body] of [
      ['GET', `/v1/chain/monitors/${id}`],
      ['GET', `/v1/chain/monitors/${id}/events`],
      ['PATCH', `/v1/chain/monitors/${id}`, { status: 'active' }],
      ['DELETE', `/v1/chain/monitors/${id}`],
      ['GET', '/v1/chain/monitors/not-a-uuid'],
    ] as const) {
      const answer = await service.call(method, route, { token: other.token, body });
      assert.equal(answer.status, 404, `${method} ${route}`);
      assert.deepEqual(answer.body, { message: 'Not found.' });
    }
    assert.deepEqual((await service.call('GET', `/v1/chain/monitors/${id}/events`, { token: owner.token })).body, { data: [], next: null });
    assert.deepEqual((await service.call('DELETE', `/v1/chain/monitors/${id}`, { token: owner.token })).body, { id, deleted: true });
    assert.equal((await service.call('GET', `/v1/chain/monitors/${id}`, { token: owner.token })).status, 404);

    const tooMany = Array.from({ length: 101 }, (_, i) => `0x${(i + 1).toString(16).padStart(40, '0')}`);
    const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [{}, { chain: ['The chain field is required.'], addresses: ['The addresses field is required.'], webhook_url: ['The webhook url field is required.'] }],
      [{ chain: 'dogecoin', addresses: [watched], webhook_url: owner.hook }, { chain: ['The selected chain is invalid.'] }],
      [{ chain: 'ethereum', addresses: [], webhook_url: owner.hook }, { addresses: ['The addresses field is required.'] }],
      [{ chain: 'ethereum', addresses: tooMany, webhook_url: owner.hook }, { addresses: ['The addresses must have between 1 and 100 items.'] }],
      [{ chain: 'ethereum', addresses: [watched, '0x123', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'], webhook_url: owner.hook }, { 'addresses.1': ['The addresses.1 is not a valid Ethereum address.'], 'addresses.2': ['The addresses.2 is not a valid Ethereum address.'] }],
      [{ chain: 'ethereum', addresses: 'nope', webhook_url: owner.hook }, { addresses: ['The addresses must be an array.'] }],
      [{ chain: 'ethereum', addresses: [watched], webhook_url: 'ftp://example.com/x' }, { webhook_url: ['The webhook url must be a valid URL.'] }],
      [{ chain: 'ethereum', addresses: [watched], webhook_url: owner.hook, confirmations: 65 }, { confirmations: ['The confirmations must be between 0 and 64.'] }],
      [{ chain: 'ethereum', addresses: [watched], webhook_url: owner.hook, asset: 'nft' }, { asset: ['The selected asset is invalid.'] }],
      [{ chain: 'ethereum', addresses: [watched], webhook_url: owner.hook, min_value: '1.5' }, { min_value: ['The min value must be a whole number of base units (wei, satoshis, token units), 0 or more.'] }],
    ];
    for (const [body, errors] of cases) {
      const answer = await createMonitor(owner.token, body);
      assert.equal(answer.status, 422, JSON.stringify(body).slice(0, 200));
      assert.deepEqual(answer.body.errors, errors, JSON.stringify(body).slice(0, 200));
    }
    const bitcoin = await createMonitor(owner.token, { chain: 'bitcoin', addresses: ['bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq'], webhook_url: owner.hook });
    assert.equal(bitcoin.status, 503, 'a chain that is not configured');
    assert.deepEqual(bitcoin.body, { message: 'This endpoint is not configured.' });
    const patchBad = await service.call('PATCH', `/v1/chain/monitors/${defaults.body.id}`, { token: owner.token, body: { status: 'paused_no_credits' } });
    assert.equal(patchBad.status, 422);
    assert.deepEqual(patchBad.body.errors, { status: ['The selected status is invalid.'] });
    const poor = await user('crud-poor', 4);
    const refused = await createMonitor(poor.token, { chain: 'ethereum', addresses: [watched], webhook_url: poor.hook });
    assert.equal(refused.status, 403, 'the first day of one address costs 5');
    await service.call('DELETE', `/v1/chain/monitors/${defaults.body.id}`, { token: owner.token });
  });

  test('50 transfers, native and token, across 3 monitors: each delivered once per monitor, in order, signed, after its confirmations', { timeout: 300_000 }, async () => {
    const owner = await user('stream', 10_000);
    const watched = node.accounts.slice(1, 11);
    const funder = node.accounts[0];
    const token = await node.deployToken({ symbol: 'TST', decimals: 6 });
    for (const account of [funder, ...watched]) await node.receipt(await node.mint(token, account, 1_000_000n));

    const specs = [
      { name: 'm1', addresses: watched.slice(0, 5), asset: 'all', min_value: '1', confirmations: 0 },
      { name: 'm2', addresses: watched.slice(3, 8), asset: 'token', confirmations: 2 },
      { name: 'm3', addresses: [...watched.slice(5, 10), watched[0]], asset: 'native', min_value: '1', confirmations: 3 },
    ];
    const monitors: Array<{ id: string; set: Set<string>; asset: string; confirmations: number }> = [];
    for (const spec of specs) {
      const { name, ...body } = spec;
      const answer = await createMonitor(owner.token, { chain: 'ethereum', webhook_url: owner.hook, ...body });
      assert.equal(answer.status, 201, answer.text);
      monitors.push({ id: answer.body.id, set: new Set(spec.addresses.map((a) => a.toLowerCase())), asset: spec.asset, confirmations: spec.confirmations });
    }

    // 50 transfers: every third one from the funder, the others between watched addresses; tokens on even ones.
    const sent: Array<{ hash: Hash; from: Address; to: Address; token: boolean }> = [];
    for (let i = 0; i < 50; i++) {
      const from = i % 3 === 0 ? funder : watched[i % 10];
      const to = watched[(i * 7 + 3) % 10];
      const isToken = i % 2 === 0;
      const hash = isToken ? await node.transferToken(token, { from, to, value: BigInt(100 + i) }) : await node.sendNative({ from, to, value: BigInt(1_000 + i) });
      sent.push({ hash, from, to, token: isToken });
    }
    const blocks = new Map<Hash, number>();
    for (const transfer of sent) blocks.set(transfer.hash, Number((await node.receipt(transfer.hash)).blockNumber));
    // The slowest monitor asks for 3 confirmations.
    await node.mine(3);

    const expected = monitors.map((monitor) =>
      sent.filter((t) => (monitor.set.has(t.from.toLowerCase()) || monitor.set.has(t.to.toLowerCase())) && (monitor.asset === 'all' || (monitor.asset === 'token') === t.token)).map((t) => t.hash),
    );
    assert.ok(expected.every((hashes) => hashes.length >= 10), `each monitor sees a good share: ${expected.map((h) => h.length)}`);
    const total = expected.reduce((sum, hashes) => sum + hashes.length, 0);
    await waitUntil(async () => monitors.every((m, i) => received(m.id).length >= expected[i].length), 120_000, 'every expected event');
    // A moment more: nothing else may arrive.
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    monitors.forEach((monitor, i) => {
      const events = received(monitor.id);
      assert.equal(new Set(events.map((e) => e.id)).size, events.length, 'no event twice');
      assert.deepEqual(events.map((e) => e.data.transfer.hash), expected[i], `monitor ${i + 1}: exactly its transfers, in chain order`);
      for (const event of events) {
        assert.ok(event.signed, 'signed with the owner’s secret, Gleaner-Event-Id its id');
        assert.equal(event.data.transfer.block_number, blocks.get(event.data.transfer.hash));
        assert.ok(event.data.transfer.confirmations >= monitor.confirmations, 'sent with its confirmations');
        assert.ok(event.headAtArrival - event.data.transfer.block_number + 1 >= monitor.confirmations, 'never before the confirmations were there');
        assert.equal(event.data.chain, 'ethereum');
        assert.equal(event.data.transfer.asset.type, sent.find((t) => t.hash === event.data.transfer.hash)!.token ? 'erc20' : 'native');
      }
    });
    // 1 credit per event delivered.
    // 5 credits per watched address for the day (5 + 5 + 6 addresses), 1 per event delivered.
    await waitUntil(async () => (await service.services.ledger.balance(owner.id, 'blockchain')) === 10_000 - 5 * 16 - total, 30_000, 'every event billed');
    const events = (await service.call('GET', `/v1/chain/monitors/${monitors[0].id}/events`, { token: owner.token })).body.data;
    assert.equal(events.length, expected[0].length);
    assert.ok(events.every((e: any) => e.status === 'delivered' && e.attempts === 1 && e.last_status === 204 && e.last_error === null));
    for (const monitor of monitors) await service.call('DELETE', `/v1/chain/monitors/${monitor.id}`, { token: owner.token });
    assert.deepEqual((await auditCredits(service.services.operations)).mismatches, []);
  });

  test('a reorg made with snapshot/revert sends chain.transfer_reverted for the transfer it dropped', { timeout: 120_000 }, async () => {
    const owner = await user('reorg', 1_000);
    const watched = node.accounts[12];
    const created = await createMonitor(owner.token, { chain: 'ethereum', addresses: [watched], webhook_url: owner.hook, confirmations: 1 });
    assert.equal(created.status, 201);
    const id = created.body.id;
    await node.mine(1);
    const snapshot = await node.snapshot();
    const doomed = await node.sendNative({ from: node.accounts[0], to: watched, value: 7_777n });
    await node.receipt(doomed);
    await waitUntil(async () => received(id).some((e) => e.data.transfer.hash === doomed), 30_000, 'the transfer delivered before the reorg');

    // The chain goes back to the snapshot and grows another way, longer than before.
    await node.revert(snapshot);
    const replacement = await node.sendNative({ from: node.accounts[13], to: watched, value: 8_888n });
    await node.receipt(replacement);
    await node.mine(3);
    await waitUntil(async () => received(id, 'chain.transfer_reverted').length > 0 && received(id).some((e) => e.data.transfer.hash === replacement), 60_000, 'the revert and the new transfer');
    const reverted = received(id, 'chain.transfer_reverted');
    assert.deepEqual(reverted.map((e) => e.data.transfer.hash), [doomed]);
    assert.equal(reverted[0].data.transfer.value, '7777');
    assert.notEqual(reverted[0].id, received(id).find((e) => e.data.transfer.hash === doomed)!.id);
    assert.ok(reverted[0].signed);
    assert.equal(received(id).filter((e) => e.data.transfer.hash === replacement).length, 1);
    await service.call('DELETE', `/v1/chain/monitors/${id}`, { token: owner.token });
  });

  test('an empty balance pauses the monitor with chain.monitor_paused; PATCH resumes it and the waiting events follow', { timeout: 120_000 }, async () => {
    // 5 for the day's one address, then 2 events.
    const owner = await user('pause', 7);
    const watched = node.accounts[14];
    const created = await createMonitor(owner.token, { chain: 'ethereum', addresses: [watched], webhook_url: owner.hook, confirmations: 0 });
    assert.equal(created.status, 201);
    const id = created.body.id;
    const hashes: Hash[] = [];
    for (let i = 0; i < 3; i++) {
      hashes.push(await node.sendNative({ from: node.accounts[0], to: watched, value: BigInt(10 + i) }));
      await node.receipt(hashes[i]);
    }
    await waitUntil(async () => received(id, 'chain.monitor_paused').length === 1, 60_000, 'the pause event');
    assert.deepEqual(received(id).map((e) => e.data.transfer.hash), hashes.slice(0, 2), 'the two events paid for');
    const paused = received(id, 'chain.monitor_paused')[0];
    assert.equal(paused.data.status, 'paused_no_credits');
    assert.equal((await service.call('GET', `/v1/chain/monitors/${id}`, { token: owner.token })).body.status, 'paused_no_credits');
    assert.equal(await service.services.ledger.balance(owner.id, 'blockchain'), 0);

    // No credits: PATCH is refused; with credits it resumes, and the third transfer follows.
    const refused = await service.call('PATCH', `/v1/chain/monitors/${id}`, { token: owner.token, body: { status: 'active' } });
    assert.equal(refused.status, 403);
    await service.services.ledger.grant(owner.id, 'blockchain', 10);
    const resumed = await service.call('PATCH', `/v1/chain/monitors/${id}`, { token: owner.token, body: { status: 'active' } });
    assert.equal(resumed.status, 200, resumed.text);
    assert.equal(resumed.body.status, 'active');
    await waitUntil(async () => received(id).length === 3, 30_000, 'the waiting event');
    assert.deepEqual(received(id).map((e) => e.data.transfer.hash), hashes);
    await waitUntil(async () => (await service.services.ledger.balance(owner.id, 'blockchain')) === 9, 10_000, 'the third event billed');
    const events = (await service.call('GET', `/v1/chain/monitors/${id}/events`, { token: owner.token })).body.data;
    // Newest first: the third transfer was recorded before the hold for it found the balance empty.
    assert.deepEqual(events.map((e: any) => e.type), ['chain.monitor_paused', 'chain.transfer', 'chain.transfer', 'chain.transfer']);
    assert.deepEqual(events.map((e: any) => e.status), ['delivered', 'delivered', 'delivered', 'delivered']);
    assert.deepEqual((await auditCredits(service.services.operations)).mismatches, []);
    await service.call('DELETE', `/v1/chain/monitors/${id}`, { token: owner.token });
  });

  test('a receiver that fails is retried with the same id and body; the event is billed once, when delivered', { timeout: 120_000 }, async () => {
    const owner = await user('retry', 100);
    const watched = node.accounts[16];
    const created = await createMonitor(owner.token, { chain: 'ethereum', addresses: [watched], webhook_url: owner.hook, confirmations: 0 });
    const id = created.body.id;
    failing = new Set(['/hooks/retry']);
    const hash = await node.sendNative({ from: node.accounts[0], to: watched, value: 5n });
    await node.receipt(hash);
    await waitUntil(async () => {
      const [event] = (await service.call('GET', `/v1/chain/monitors/${id}/events`, { token: owner.token })).body.data;
      return event?.attempts >= 1 && event.status === 'pending' && event.last_status === 500;
    }, 30_000, 'a failed attempt');
    assert.equal(await service.services.ledger.balance(owner.id, 'blockchain'), 95, 'the day’s fee only: a failed attempt is not billed');
    failing = new Set();
    await waitUntil(async () => received(id).length === 1, 30_000, 'the retry');
    const [event] = (await service.call('GET', `/v1/chain/monitors/${id}/events`, { token: owner.token })).body.data;
    assert.equal(event.status, 'delivered');
    assert.ok(event.attempts >= 2);
    assert.equal(event.id, received(id)[0].id);
    await waitUntil(async () => (await service.services.ledger.balance(owner.id, 'blockchain')) === 94, 10_000, 'billed once');
    await service.call('DELETE', `/v1/chain/monitors/${id}`, { token: owner.token });
  });
});
