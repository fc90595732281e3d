/**
 * The wallet monitors' block follower on a real embedded database against a scripted chain (the
 * integration tests run it against a real node): matching, confirmations, order, stable ids,
 * a reorg's walk-back and `chain.transfer_reverted`, two followers on one chain, and the daily fee.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../../src/storage/db.ts';
import { migrate } from '../../src/storage/migrate.ts';
import { AccountStore } from '../../src/accounts/store.ts';
import { CreditLedger } from '../../src/credits/ledger.ts';
import { Prices, seedPrices } from '../../src/credits/prices.ts';
import type { BlockRef, BlockTransfer } from '../../src/adapters/chain/types.ts';
import { ChainCallError, type BlocksRead } from '../../src/adapters/chain/client.ts';
import { ChainFollower, type ChainReader } from '../../src/monitors/follower.ts';
import { addressKey, transferEventId } from '../../src/monitors/matching.ts';
import { MonitorStore } from '../../src/monitors/store.ts';
import { collectDailyFees, utcDay } from '../../src/monitors/fees.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-monitor-follower-'));
let db: Database;
let accounts: AccountStore;
let ledger: CreditLedger;
let prices: Prices;

before(async () => {
  db = await openDatabase({ dataDir });
  await migrate(db);
  await seedPrices(db);
  accounts = new AccountStore(db);
  ledger = new CreditLedger(db, { holdTtlSeconds: 60 });
  prices = new Prices(db);
});
after(async () => {
  ledger.stop();
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const context = { signal: new AbortController().signal };
const hex = (n: number, width = 40) => `0x${n.toString(16).padStart(width, '0')}`;
const address = (n: number) => hex(0xa000 + n);

/** A scripted chain: blocks with hashes that depend on their branch, and the transfers in each. */
class ScriptedChain implements ChainReader {
  blocks: BlockRef[] = [];
  transfers = new Map<number, BlockTransfer[]>();
  /** Calls per method, to check what a step reads. */
  calls = { head: 0, block: 0, transfersInBlocks: 0 };
  /** Replaces the next `transfersInBlocks` answer (a node answering mid-reorg), or throws instead. */
  nextRead?: (read: BlocksRead) => BlocksRead;

  constructor(length: number) {
    for (let n = 0; n < length; n++) this.#push('main');
  }

  #push(branch: string): BlockRef {
    const number = this.blocks.length;
    const block = { number, hash: `0x${branch}-${number}`, parent_hash: number === 0 ? '0x' : this.blocks[number - 1].hash, timestamp: new Date(Date.UTC(2026, 10, 26, 0, 0, number)).toISOString() };
    this.blocks.push(block);
    return block;
  }

  /** Mines a block with these transfers (from, to, value; native unless a token is named). */
  mine(transfers: Array<{ from: number; to: number; value?: bigint; token?: boolean }> = [], branch = 'main'): number {
    const block = this.#push(branch);
    this.transfers.set(
      block.number,
      transfers.map((t, index) => ({
        hash: hex(block.number * 1000 + index + (branch === 'main' ? 0 : 500), 64),
        block_number: block.number,
        block_hash: block.hash,
        log_index: index,
        timestamp: block.timestamp,
        from: address(t.from),
        to: address(t.to),
        value: String(t.value ?? 1000n),
        asset: t.token ? { type: 'erc20', contract: hex(0xbeef), symbol: 'TST', decimals: 6 } : { type: 'native', contract: null, symbol: 'ETH', decimals: 18 },
        fee: '21000',
        status: 'success',
      })),
    );
    return block.number;
  }

  /** Drops blocks above `number`, as a reorg does, before the new branch is mined. */
  rewind(number: number): void {
    for (const block of this.blocks.splice(number + 1)) this.transfers.delete(block.number);
  }

  async head() {
    this.calls.head++;
    return this.blocks.length - 1;
  }
  async block(n: number) {
    this.calls.block++;
    return this.blocks[n] ?? null;
  }
  async transfersInBlocks(from: number, to: number) {
    this.calls.transfersInBlocks++;
    const blocks = this.blocks.slice(from, to + 1);
    const read = { blocks, transfers: blocks.flatMap((block) => this.transfers.get(block.number) ?? []) };
    const replace = this.nextRead;
    this.nextRead = undefined;
    return replace ? replace(read) : read;
  }

  resetCalls(): void {
    this.calls = { head: 0, block: 0, transfersInBlocks: 0 };
  }
}

async function newMonitor(userId: number, chain: string, watched: number[], options: { confirmations?: number; asset?: 'native' | 'token' | 'all'; minValue?: bigint; fromBlock: number }) {
  const addresses = watched.map(address);
  return db.transaction((tx) =>
    new MonitorStore(db).create(tx, {
      userId,
      chain,
      addresses,
      keys: addresses.map((a) => addressKey('evm', a)),
      webhookUrl: 'https://hooks.example.com/chain',
      asset: options.asset ?? 'all',
      minValue: options.minValue ?? 0n,
      confirmations: options.confirmations ?? 0,
      fromBlock: options.fromBlock,
    }),
  );
}

async function eventsOf(monitorId: string) {
  const rows = await db.query<{ id: string; type: string; body: string }>(
    `SELECT w.id, w.type, w.body FROM chain_monitor_events e JOIN webhook_events w ON w.id = e.event_id WHERE e.monitor_id = $1 ORDER BY e.seq`,
    [monitorId],
  );
  return rows.map((row) => ({ ...row, event: JSON.parse(row.body) }));
}

function follower(chain: string, reader: ChainReader, owner = 'test-process') {
  return new ChainFollower({ db, chain, kind: 'evm', reader, owner, leaseMs: 60_000 });
}

async function runUntilIdle(f: ChainFollower) {
  for (let i = 0; i < 20; i++) {
    const result = await f.step(context);
    if (result.blocks === 0 && !result.reorg) return;
  }
}

describe('the block follower', () => {
  test('matches every monitor watching either end, applies filters and confirmations, in chain order, with stable ids', async () => {
    const user = await accounts.createUser({ name: 'Watcher', email: 'watcher-1@example.com' });
    const chain = new ScriptedChain(5);
    const all = await newMonitor(user.id, 'c1', [1, 2], { fromBlock: 5 });
    const tokensOnly = await newMonitor(user.id, 'c1', [2], { fromBlock: 5, asset: 'token' });
    const big = await newMonitor(user.id, 'c1', [1], { fromBlock: 5, minValue: 5000n, confirmations: 3 });
    const f = follower('c1', chain);
    await runUntilIdle(f); // starts right before block 5
    const b5 = chain.mine([{ from: 1, to: 9 }, { from: 9, to: 2, token: true }, { from: 1, to: 2, value: 9000n }]);
    chain.mine([{ from: 7, to: 8 }]); // nobody's
    await runUntilIdle(f);

    const allEvents = await eventsOf(all.id);
    assert.deepEqual(allEvents.map((e) => [e.event.data.transfer.block_number, e.event.data.log_index, e.event.data.direction]), [[b5, 0, 'out'], [b5, 1, 'in'], [b5, 2, 'self']]);
    assert.equal(allEvents[0].id, transferEventId(all.id, allEvents[0].event.data.transfer.hash, 0, 'chain.transfer'), 'the id derives from (monitor, tx, log index, type)');
    assert.equal(allEvents[0].event.monitor_id, all.id);
    assert.equal(allEvents[0].event.data.transfer.confirmations, 2, 'head 6, block 5');
    assert.ok(!('block_hash' in allEvents[0].event.data.transfer), 'the transfer object is the §10 one');
    assert.deepEqual((await eventsOf(tokensOnly.id)).map((e) => e.event.data.transfer.asset.type), ['erc20']);
    assert.equal((await eventsOf(big.id)).length, 0, 'two confirmations of three: not yet');

    chain.mine();
    await runUntilIdle(f);
    const bigEvents = await eventsOf(big.id);
    assert.deepEqual(bigEvents.map((e) => e.event.data.transfer.value), ['9000'], 'only the transfer over min_value, once it has 3 confirmations');
    assert.equal(bigEvents[0].event.data.transfer.confirmations, 3);
    assert.equal((await eventsOf(all.id)).length, 3, 'nothing twice');
  });

  test('a reorg walks back, keeps what the new branch carries and reverts what it dropped; unsent transfers vanish quietly', async () => {
    const user = await accounts.createUser({ name: 'Reorged', email: 'watcher-2@example.com' });
    const chain = new ScriptedChain(3);
    const fast = await newMonitor(user.id, 'c2', [1], { fromBlock: 3, confirmations: 1 });
    const slow = await newMonitor(user.id, 'c2', [1], { fromBlock: 3, confirmations: 5 });
    const f = follower('c2', chain);
    await runUntilIdle(f);
    chain.mine([{ from: 1, to: 5, value: 1n }]); // block 3: kept by the new branch
    const kept = chain.transfers.get(3)![0];
    chain.mine([{ from: 1, to: 6, value: 2n }]); // block 4: dropped by the reorg
    const dropped = chain.transfers.get(4)![0];
    await runUntilIdle(f);
    assert.equal((await eventsOf(fast.id)).length, 2);

    // The end of the chain is replaced: block 4 differs, block 3 is the same.
    chain.rewind(3);
    chain.mine([{ from: 1, to: 7, value: 3n }], 'fork');
    chain.mine([], 'fork');
    await runUntilIdle(f);

    const events = await eventsOf(fast.id);
    assert.deepEqual(
      events.map((e) => [e.type, e.event.data.transfer.value]),
      [['chain.transfer', '1'], ['chain.transfer', '2'], ['chain.transfer_reverted', '2'], ['chain.transfer', '3']],
      'the revert comes first: it is known as soon as the new branch is read past the dropped block',
    );
    const reverted = events.find((e) => e.type === 'chain.transfer_reverted')!;
    assert.equal(reverted.event.data.transfer.hash, dropped.hash);
    assert.equal(reverted.id, transferEventId(fast.id, dropped.hash, dropped.log_index, 'chain.transfer_reverted'));
    assert.ok(!events.some((e) => e.type === 'chain.transfer_reverted' && e.event.data.transfer.hash === kept.hash));

    for (let i = 0; i < 3; i++) chain.mine([], 'fork');
    await runUntilIdle(f);
    const slowEvents = await eventsOf(slow.id);
    assert.deepEqual(slowEvents.map((e) => [e.type, e.event.data.transfer.value]), [['chain.transfer', '1'], ['chain.transfer', '3']], 'the dropped transfer was never sent, so nothing is reverted');
  });

  test('a step reads its new blocks with one transfersInBlocks and no header on its own; a reorg is seen in the blocks it answers', async () => {
    const user = await accounts.createUser({ name: 'Counted', email: 'watcher-6@example.com' });
    const chain = new ScriptedChain(3);
    const monitor = await newMonitor(user.id, 'c5', [1], { fromBlock: 3 });
    const f = follower('c5', chain);
    await runUntilIdle(f); // the start reads the block before the first watched one
    for (let i = 0; i < 20; i++) chain.mine([{ from: 1, to: 2, value: BigInt(i + 1) }]);
    chain.resetCalls();
    const caughtUp = await f.step(context);
    assert.deepEqual([caughtUp.blocks, caughtUp.processed, caughtUp.events], [20, 22, 20]);
    assert.deepEqual(chain.calls, { head: 1, block: 0, transfersInBlocks: 1 }, '20 blocks: one read, no header read one by one');

    // Blocks 21 and 22 are replaced: the new block 23's parent is not the stored block 22.
    chain.rewind(20);
    chain.mine([], 'fork');
    chain.mine([], 'fork');
    chain.mine([], 'fork');
    chain.resetCalls();
    const reorg = await f.step(context);
    assert.deepEqual([reorg.reorg, reorg.processed], [true, 20]);
    assert.deepEqual(chain.calls, { head: 1, block: 3, transfersInBlocks: 1 }, 'found in the read; block() only walks back (22, 21, 20)');
    await runUntilIdle(f);
    const events = await eventsOf(monitor.id);
    assert.deepEqual(events.filter((e) => e.type === 'chain.transfer_reverted').map((e) => e.event.data.transfer.value), ['19', '20']);
    assert.equal(events.length, 22, 'nothing twice');
  });

  test('a read the chain changed under is read again at the next step: mixed branches, a short answer, a ChainCallError', async () => {
    const user = await accounts.createUser({ name: 'Moving', email: 'watcher-7@example.com' });
    const chain = new ScriptedChain(3);
    const monitor = await newMonitor(user.id, 'c6', [1], { fromBlock: 3 });
    const f = follower('c6', chain);
    await runUntilIdle(f);
    for (let i = 0; i < 4; i++) chain.mine([{ from: 1, to: 2, value: BigInt(i + 1) }]);

    // Block 5 of another branch between blocks 4 and 6 of this one.
    chain.nextRead = ({ blocks, transfers }) => ({ blocks: blocks.map((b) => (b.number === 5 ? { ...b, hash: '0xother-5' } : b)), transfers });
    assert.deepEqual([(await f.step(context)).blocks, (await eventsOf(monitor.id)).length], [0, 0], 'blocks that do not link up');
    // The node answers fewer blocks than its head promised.
    chain.nextRead = ({ blocks, transfers }) => ({ blocks: blocks.slice(0, 2), transfers: transfers.filter((t) => t.block_number < 5) });
    assert.deepEqual([(await f.step(context)).blocks, (await eventsOf(monitor.id)).length], [0, 0], 'a short answer');
    // The read itself failed as the chain moved between its calls.
    chain.nextRead = () => {
      throw new ChainCallError({ kind: 'changed', reason: 'the chain reorganised during the read' }, 'c6 transfersInBlocks');
    };
    await assert.rejects(f.step(context), ChainCallError);
    assert.equal((await eventsOf(monitor.id)).length, 0);

    await runUntilIdle(f);
    assert.deepEqual((await eventsOf(monitor.id)).map((e) => e.event.data.transfer.value), ['1', '2', '3', '4'], 'each once, in order');
  });

  test('two followers on one chain: one leads, and the cursor never moves twice', async () => {
    const user = await accounts.createUser({ name: 'Twice', email: 'watcher-3@example.com' });
    const chain = new ScriptedChain(2);
    const monitor = await newMonitor(user.id, 'c3', [1], { fromBlock: 2 });
    const first = follower('c3', chain, 'process-a');
    const second = follower('c3', chain, 'process-b');
    await runUntilIdle(first);
    for (let i = 0; i < 10; i++) chain.mine([{ from: 1, to: 2, value: BigInt(i + 1) }]);
    const [a, b] = await Promise.all([first.step(context), second.step(context)]);
    assert.equal([a.led, b.led].filter(Boolean).length, 1, 'one of them holds the lease');
    await runUntilIdle(first);
    await runUntilIdle(second);
    assert.deepEqual((await eventsOf(monitor.id)).map((e) => e.event.data.transfer.value), ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
  });

  test('the daily fee is taken once a day through the ledger; a balance that cannot pay pauses the monitor with an event', async () => {
    const rich = await accounts.createUser({ name: 'Rich', email: 'watcher-4@example.com' });
    const poor = await accounts.createUser({ name: 'Poor', email: 'watcher-5@example.com' });
    await ledger.grant(rich.id, 'blockchain', 100);
    await ledger.grant(poor.id, 'blockchain', 4);
    const paid = await newMonitor(rich.id, 'c4', [1, 2, 3], { fromBlock: 1 });
    const unpaid = await newMonitor(poor.id, 'c4', [1], { fromBlock: 1 });
    const deps = { db, ledger, prices };
    const now = new Date(Date.UTC(2026, 10, 26, 8));
    assert.equal(await collectDailyFees(deps, 'c4', now), 1);
    assert.equal(await collectDailyFees(deps, 'c4', now), 0);
    assert.equal(await ledger.balance(rich.id, 'blockchain'), 85, '3 addresses × 5 credits, once');
    assert.equal(await ledger.balance(poor.id, 'blockchain'), 4, 'nothing taken from a balance that cannot pay it all');
    const store = new MonitorStore(db);
    assert.equal((await store.get(unpaid.id))!.status, 'paused_no_credits');
    assert.deepEqual((await eventsOf(unpaid.id)).map((e) => [e.type, e.event.data.status]), [['chain.monitor_paused', 'paused_no_credits']]);
    assert.equal((await store.get(paid.id))!.status, 'active');
    await collectDailyFees(deps, 'c4', new Date(Date.UTC(2026, 10, 27, 0, 0, 1)));
    assert.equal(await ledger.balance(rich.id, 'blockchain'), 70, 'the next UTC day is charged again');
    assert.equal(utcDay(now), '2026-11-26');
  });
});
