/**
 * Wallet monitors against a local EVM node (Hardhat's, as the tests use):
 *   latency   from a block being mined (the transaction's send returning, automine on) to its
 *             `chain.transfer` webhook arriving at a receiver on loopback, over BENCH_TRANSFERS
 *             transfers sent one after the other; p50, p99, max
 *   rpc       JSON-RPC calls the follower makes per new block, counted by a proxy between the
 *             service and the node, with 1 and with 1,000 watched addresses: head polls apart
 *             (they depend on CHAIN_POLL_MS and time, not on blocks)
 *   catch-up  BENCH_CATCHUP blocks, one watched transfer each, mined while the proxy hides them
 *             (it answers the head as it was); then, from the head poll that shows them all, to
 *             the first webhook (one step's reads and commit) and to the last; median of 5 rounds
 *
 * The service runs in this process (embedded PGlite), with confirmations 0 so that the latency
 * is the follower's and the delivery's own.
 *
 * Usage: node bench/chain.ts
 * Environment:
 *   BENCH_TRANSFERS   transfers timed (default 200)
 *   BENCH_BLOCKS      blocks mined for each RPC count (default 40)
 *   BENCH_CATCHUP     blocks of the catch-up (default 50, one follower step)
 *   BENCH_RPC_DELAY_MS  added by the proxy to every HTTP request, as a node farther away would (default 0)
 *   CHAIN_POLL_MS     the follower's poll interval (default 250 here)
 */
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestService } from '../test/support/service.ts';
import { evmNodeUnavailable, HARDHAT_CHAIN_ID, startEvmNode } from '../test/support/evm-node.ts';

const TRANSFERS = Number(process.env.BENCH_TRANSFERS ?? 200);
const BLOCKS = Number(process.env.BENCH_BLOCKS ?? 40);
const CATCHUP = Number(process.env.BENCH_CATCHUP ?? 50);
const CATCHUP_ROUNDS = 5;
const RPC_DELAY_MS = Number(process.env.BENCH_RPC_DELAY_MS ?? 0);
const POLL_MS = process.env.CHAIN_POLL_MS ?? '250';

const unavailable = evmNodeUnavailable();
if (unavailable) {
  console.error(`cannot run: ${unavailable}`);
  process.exit(1);
}

const node = await startEvmNode();

// The counting proxy: every JSON-RPC call the service makes, by method (a batch counts each call).
const calls = new Map<string, number>();
// While set, the head the proxy answers (blocks mined meanwhile stay hidden from the follower).
let frozenHead: number | undefined;
// When the first head poll showing the hidden blocks was answered.
let revealedAt: number | undefined;
const proxy = http.createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const parsed = JSON.parse(body.toString('utf8')) as { id: number; method: string } | Array<{ method: string }>;
  for (const call of Array.isArray(parsed) ? parsed : [parsed]) calls.set(call.method, (calls.get(call.method) ?? 0) + 1);
  if (RPC_DELAY_MS > 0) await sleep(RPC_DELAY_MS);
  if (!Array.isArray(parsed) && parsed.method === 'eth_blockNumber' && frozenHead !== undefined) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: parsed.id, result: `0x${frozenHead.toString(16)}` }));
    return;
  }
  const upstream = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const answer = Buffer.from(await upstream.arrayBuffer());
  if (!Array.isArray(parsed) && parsed.method === 'eth_blockNumber' && revealedAt === undefined) revealedAt = performance.now();
  res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(answer);
});
proxy.listen(0, '127.0.0.1');
await once(proxy, 'listening');

// The receiver: when each transfer's event arrived.
const arrivedAt = new Map<string, number>();
const waiters = new Map<string, () => void>();
const receiver = http.createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const hash = event.data?.transfer?.hash as string | undefined;
  if (hash && !arrivedAt.has(hash)) {
    arrivedAt.set(hash, performance.now());
    waiters.get(hash)?.();
  }
  res.writeHead(204).end();
});
receiver.listen(0, '127.0.0.1');
await once(receiver, 'listening');
const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

const service = await startTestService({
  OUTBOUND_ALLOW_HOSTS: '127.0.0.1',
  CHAIN_RPC_ETHEREUM: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
  CHAIN_ID_ETHEREUM: String(HARDHAT_CHAIN_ID),
  CHAIN_POLL_MS: POLL_MS,
});

try {
  const user = await service.user({ blockchain: 1_000_000 });
  const create = async (addresses: string[]) => {
    const answer = await service.call('POST', '/v1/chain/monitors', { token: user.token, body: { chain: 'ethereum', addresses, webhook_url: hook, confirmations: 0 } });
    if (answer.status !== 201) throw new Error(`monitor refused: ${answer.status} ${answer.text}`);
    return answer.body.id as string;
  };
  const [sender, watched] = [node.accounts[0], node.accounts[1]];
  let monitors = [await create([watched])];

  // Latency: one transfer at a time, from mined to delivered.
  const latencies: number[] = [];
  for (let i = 0; i < TRANSFERS; i++) {
    const hash = await node.sendNative({ from: sender, to: watched, value: BigInt(1 + i) });
    const minedAt = performance.now();
    const arrived = new Promise<void>((resolve) => waiters.set(hash, resolve));
    if (!arrivedAt.has(hash)) await arrived;
    waiters.delete(hash);
    latencies.push(arrivedAt.get(hash)! - minedAt);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))];
  console.log(`latency, mined → webhook received (${TRANSFERS} transfers, CHAIN_POLL_MS=${POLL_MS}, confirmations 0):`);
  console.log(`  p50 ${at(0.5).toFixed(0)} ms   p99 ${at(0.99).toFixed(0)} ms   max ${latencies.at(-1)!.toFixed(0)} ms`);

  // RPC calls per new block, with 1 and with 1,000 watched addresses.
  const rpcPerBlock = async (label: string) => {
    await sleep(Number(POLL_MS) * 4);
    calls.clear();
    const start = await node.blockNumber();
    for (let i = 0; i < BLOCKS; i++) {
      // Each block carries one transfer to a watched address, so matching has work to do.
      await node.receipt(await node.sendNative({ from: sender, to: watched, value: 1n }));
    }
    const end = await node.blockNumber();
    // Until the follower has processed the last block: its event arrives.
    const last = await node.publicClient.getBlock({ blockNumber: BigInt(end), includeTransactions: true });
    const lastHash = (last.transactions as Array<{ hash: string }>).at(-1)!.hash;
    while (!arrivedAt.has(lastHash)) await sleep(20);
    const blocks = end - start;
    const heads = calls.get('eth_blockNumber') ?? 0;
    const perBlock = [...calls.entries()].filter(([method]) => method !== 'eth_blockNumber');
    const total = perBlock.reduce((sum, [, n]) => sum + n, 0);
    console.log(`${label}: ${(total / blocks).toFixed(2)} calls per new block (${blocks} blocks), plus ${heads} head polls`);
    console.log(`  ${perBlock.map(([method, n]) => `${method} ${(n / blocks).toFixed(2)}`).join(', ')}`);
  };
  await rpcPerBlock('1 watched address');
  for (const id of monitors) await service.call('DELETE', `/v1/chain/monitors/${id}`, { token: user.token });
  // 1,000 addresses: ten monitors of 100, the first one with the address that receives.
  monitors = [];
  for (let m = 0; m < 10; m++) {
    const addresses = Array.from({ length: 100 }, (_, i) => `0x${(0xabc000000 + m * 100 + i).toString(16).padStart(40, '0')}`);
    if (m === 0) addresses[0] = watched;
    monitors.push(await create(addresses));
  }
  await rpcPerBlock('1,000 watched addresses');

  // Catch-up: blocks the follower has not seen, all read in one step. Their events are committed
  // together, so the first webhook marks the step's end; the last one adds the deliveries.
  const firsts: number[] = [];
  const lasts: number[] = [];
  for (let round = 0; round < CATCHUP_ROUNDS; round++) {
    await sleep(Number(POLL_MS) * 4);
    frozenHead = await node.blockNumber();
    const hashes: `0x${string}`[] = [];
    for (let i = 0; i < CATCHUP; i++) {
      hashes.push(await node.sendNative({ from: sender, to: watched, value: 1n }));
      await node.receipt(hashes.at(-1)!);
    }
    revealedAt = undefined;
    frozenHead = undefined;
    while (!hashes.every((hash) => arrivedAt.has(hash))) await sleep(5);
    firsts.push(Math.min(...hashes.map((hash) => arrivedAt.get(hash)!)) - revealedAt!);
    lasts.push(Math.max(...hashes.map((hash) => arrivedAt.get(hash)!)) - revealedAt!);
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  console.log(`catch-up of ${CATCHUP} blocks, RPC delay ${RPC_DELAY_MS} ms per request (median of ${CATCHUP_ROUNDS}), from the head poll that shows them:`);
  console.log(`  first webhook ${median(firsts).toFixed(0)} ms (the step's reads and commit), last ${median(lasts).toFixed(0)} ms`);
} finally {
  await service.close();
  proxy.close();
  receiver.close();
  await node.stop();
}
