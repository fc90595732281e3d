/**
 * The operator's monitor operations (src/operations/monitors.ts) and the monitors' metrics
 * (src/metrics/monitors.ts), on an embedded database against a scripted chain: what a follower
 * step reports (head, cursor, blocks, reorg) and how the metrics read it; a monitor the operator
 * paused is not matched, its owner cannot resume it, and the operator can.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Registry } from 'prom-client';
import { openDatabase, type Database } from '../../src/storage/db.ts';
import { migrate } from '../../src/storage/migrate.ts';
import { AccountStore } from '../../src/accounts/store.ts';
import { CreditLedger } from '../../src/credits/ledger.ts';
import { Prices, seedPrices } from '../../src/credits/prices.ts';
import type { BlockRef, BlockTransfer } from '../../src/adapters/chain/types.ts';
import { ChainFollower, type ChainReader } from '../../src/monitors/follower.ts';
import { addressKey } from '../../src/monitors/matching.ts';
import { MonitorStore } from '../../src/monitors/store.ts';
import { MonitorMetrics } from '../../src/metrics/monitors.ts';
import { listMonitors, pauseMonitor, resumeMonitor, showMonitor } from '../../src/operations/monitors.ts';
import { runOperatorCommand, UsageError } from '../../src/operator/commands.ts';
import type { OperationStores } from '../../src/operations/index.ts';

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-monitor-operations-'));
let db: Database;
let stores: OperationStores;

before(async () => {
  db = await openDatabase({ dataDir });
  await migrate(db);
  await seedPrices(db);
  stores = { db, accounts: new AccountStore(db), ledger: new CreditLedger(db, { holdTtlSeconds: 60 }), prices: new Prices(db) };
});
after(async () => {
  stores.ledger.stop();
  await db.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const context = { signal: new AbortController().signal };
const address = (n: number) => `0x${(0xa000 + n).toString(16).padStart(40, '0')}`;

/** A chain whose blocks carry one native transfer each, to the address given when mined. */
class Chain implements ChainReader {
  blocks: BlockRef[] = [];
  transfers = new Map<number, BlockTransfer[]>();

  constructor(length: number) {
    for (let n = 0; n < length; n++) this.mine();
  }

  mine(to?: number, branch = 'main'): number {
    const number = this.blocks.length;
    const block = { number, hash: `0x${branch}-${number}`, parent_hash: number === 0 ? '0x' : this.blocks[number - 1].hash, timestamp: new Date(Date.UTC(2026, 10, 26, 0, 0, number)).toISOString() };
    this.blocks.push(block);
    const transfer: BlockTransfer = {
      hash: `0x${branch}tx${number}`,
      block_number: number,
      block_hash: block.hash,
      log_index: 0,
      timestamp: block.timestamp,
      from: address(99),
      to: address(to ?? 98),
      value: '1000',
      asset: { type: 'native', contract: null, symbol: 'ETH', decimals: 18 },
      fee: '21000',
      status: 'success',
    };
    this.transfers.set(number, [transfer]);
    return number;
  }

  rewind(number: number): void {
    for (const block of this.blocks.splice(number + 1)) this.transfers.delete(block.number);
  }

  async head() {
    return this.blocks.length - 1;
  }
  async block(n: number) {
    return this.blocks[n] ?? null;
  }
  async transfersInBlocks(from: number, to: number) {
    const blocks = this.blocks.slice(from, to + 1);
    return { blocks, transfers: blocks.flatMap((block) => this.transfers.get(block.number) ?? []) };
  }
}

async function newMonitor(userId: number, chain: string, watched: number, fromBlock: number) {
  return db.transaction((tx) =>
    new MonitorStore(db).create(tx, {
      userId,
      chain,
      addresses: [address(watched)],
      keys: [addressKey('evm', address(watched))],
      webhookUrl: 'https://hooks.example.com/chain',
      asset: 'all',
      minValue: 0n,
      confirmations: 0,
      fromBlock,
    }),
  );
}

const transfersOf = async (monitorId: string) =>
  (await db.query<{ type: string }>('SELECT type FROM chain_monitor_events WHERE monitor_id = $1 ORDER BY seq', [monitorId])).map((row) => row.type);

/** The value of one series in the registry's text, or undefined. */
async function sample(registry: Registry, name: string, labels: string): Promise<number | undefined> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
}

describe('follower steps and the monitor metrics', () => {
  test('lag, blocks and reorgs per chain; a step that did not lead drops the lag', async () => {
    const user = await stores.accounts.createUser({ name: 'Metrics', email: 'monitor-metrics@example.com' });
    const chain = new Chain(3);
    await newMonitor(user.id, 'm1', 1, 3);
    const registry = new Registry();
    const metrics = new MonitorMetrics(registry, () => new MonitorStore(db).countByStatus());
    const follower = new ChainFollower({ db, chain: 'm1', kind: 'evm', reader: chain, owner: 'a', leaseMs: 60_000 });
    const step = async (f = follower) => {
      const result = await f.step(context);
      metrics.step({ ...result, chain: 'm1' });
      return result;
    };

    const start = await step();
    assert.deepEqual(start, { led: true, blocks: 0, events: 0, reorg: false, head: 2, processed: 2 }, 'the cursor starts right before the first watched block');
    for (let i = 0; i < 4; i++) chain.mine(1);
    assert.equal(await sample(registry, 'gleaner_monitor_head_lag_blocks', 'chain="m1"'), 0);
    const read = await step();
    assert.deepEqual(read, { led: true, blocks: 4, events: 4, reorg: false, head: 6, processed: 6 });
    assert.equal(await sample(registry, 'gleaner_monitor_blocks_total', 'chain="m1"'), 4);

    // More than a step's 50 blocks behind: the lag is what is left after the step.
    for (let i = 0; i < 60; i++) chain.mine();
    await step();
    assert.equal(await sample(registry, 'gleaner_monitor_head_lag_blocks', 'chain="m1"'), 10);
    await step();
    assert.equal(await sample(registry, 'gleaner_monitor_head_lag_blocks', 'chain="m1"'), 0);
    assert.equal(await sample(registry, 'gleaner_monitor_blocks_total', 'chain="m1"'), 64);

    // A reorg: counted once, the lag measured from the fork point it went back to.
    const top = chain.blocks.length - 1;
    chain.rewind(top - 2);
    chain.mine(undefined, 'fork');
    chain.mine(undefined, 'fork');
    chain.mine(undefined, 'fork');
    const reorg = await step();
    assert.equal(reorg.reorg, true);
    assert.equal(reorg.processed, top - 2);
    assert.equal(await sample(registry, 'gleaner_monitor_reorgs_total', 'chain="m1"'), 1);
    assert.equal(await sample(registry, 'gleaner_monitor_head_lag_blocks', 'chain="m1"'), 3);
    await step();
    assert.equal(await sample(registry, 'gleaner_monitor_head_lag_blocks', 'chain="m1"'), 0);

    // Another process holds the lease: this one's steps do not lead, and it reports no lag.
    const other = new ChainFollower({ db, chain: 'm1', kind: 'evm', reader: chain, owner: 'b', leaseMs: 60_000 });
    assert.equal((await step(other)).led, false);
    assert.equal(await sample(registry, 'gleaner_monitor_head_lag_blocks', 'chain="m1"'), undefined);

    metrics.delivery({ chain: 'm1', outcome: 'delivered' });
    metrics.delivery({ chain: 'm1', outcome: 'retry' });
    metrics.delivery({ chain: 'm1', outcome: 'refused' });
    metrics.delivery({ chain: 'm1', outcome: 'expired' });
    assert.equal(await sample(registry, 'gleaner_monitor_events_total', 'chain="m1",outcome="delivered"'), 1);
    assert.equal(await sample(registry, 'gleaner_monitor_events_total', 'chain="m1",outcome="retry"'), 1);
    assert.equal(await sample(registry, 'gleaner_monitor_events_total', 'chain="m1",outcome="failed"'), 2);
    assert.equal(await sample(registry, 'gleaner_monitors', 'chain="m1",status="active"'), 1);
  });
});

describe('operator pause and resume', () => {
  test('a paused monitor is not matched; its owner cannot resume it; the operator can, whichever way it was paused', async () => {
    const user = await stores.accounts.createUser({ name: 'Paused', email: 'monitor-paused@example.com' });
    const chain = new Chain(2);
    const paused = await newMonitor(user.id, 'm2', 1, 2);
    const running = await newMonitor(user.id, 'm2', 2, 2);
    const follower = new ChainFollower({ db, chain: 'm2', kind: 'evm', reader: chain, owner: 'a', leaseMs: 60_000 });
    await follower.step(context);

    assert.deepEqual(await pauseMonitor(stores, { monitor: paused.id }), { id: paused.id, status: 'paused' });
    assert.deepEqual(await pauseMonitor(stores, { monitor: paused.id }), { id: paused.id, status: 'paused' }, 'twice: as it is, one event');
    assert.deepEqual(await transfersOf(paused.id), ['chain.monitor_paused']);
    chain.mine(1);
    chain.mine(2);
    await follower.step(context);
    assert.deepEqual(await transfersOf(paused.id), ['chain.monitor_paused'], 'nothing matched while paused');
    assert.deepEqual(await transfersOf(running.id), ['chain.transfer']);

    const store = new MonitorStore(db);
    assert.equal((await store.resume(paused.id, user.id))!.status, 'paused', "the owner's resume leaves an operator's pause alone");
    assert.deepEqual(await resumeMonitor(stores, { monitor: paused.id }), { id: paused.id, status: 'active' });
    assert.deepEqual(await resumeMonitor(stores, { monitor: paused.id }), { id: paused.id, status: 'active' });
    chain.mine(1);
    await follower.step(context);
    assert.deepEqual(await transfersOf(paused.id), ['chain.monitor_paused', 'chain.transfer']);

    // One paused for want of credits: the operator's pause takes it over, the operator's resume ends either.
    await db.transaction((tx) => store.pause(tx, running.id));
    assert.equal((await showMonitor(stores, { monitor: running.id })).status, 'paused_no_credits');
    assert.deepEqual(await pauseMonitor(stores, { monitor: running.id }), { id: running.id, status: 'paused' });
    assert.deepEqual(await resumeMonitor(stores, { monitor: running.id }), { id: running.id, status: 'active' });

    const shown = await showMonitor(stores, { monitor: paused.id });
    assert.deepEqual(shown.events, { pending: 2, delivered: 0, failed: 0 });
    assert.equal(shown.processed_block, chain.blocks.length - 1);
    assert.deepEqual(shown.recent_events.map((e) => e.type), ['chain.transfer', 'chain.monitor_paused']);
  });

  test('list filters; unknown monitors and wrong filters are refused', async () => {
    const rows = await listMonitors(stores);
    assert.deepEqual(rows.map((row) => row.chain), ['m2', 'm2', 'm1'], 'newest first');
    assert.deepEqual((await listMonitors(stores, { user: rows[0].user })).length, 2);
    assert.deepEqual(await listMonitors(stores, { chain: 'ethereum' }), []);
    await assert.rejects(listMonitors(stores, { chain: 'm2' }), { kind: 'invalid', message: /^The chain must be one of ethereum, / });
    await assert.rejects(listMonitors(stores, { status: 'stopped' as never }), { kind: 'invalid', message: /^The status must be one of active, paused_no_credits, paused/ });
    await assert.rejects(listMonitors(stores, { user: 999_999 }), { kind: 'not_found' });
    await assert.rejects(showMonitor(stores, { monitor: 'nope' }), { kind: 'not_found', message: 'There is no monitor nope.' });
    await assert.rejects(resumeMonitor(stores, { monitor: '00000000-0000-4000-8000-000000000000' }), { kind: 'not_found' });

    const listed = (await runOperatorCommand(stores, ['monitors', 'list', '--status', 'active', '--limit', '1'])) as unknown[];
    assert.equal(listed.length, 1);
    await assert.rejects(runOperatorCommand(stores, ['monitors', 'pause']), (error) => error instanceof UsageError && error.message === '--monitor is required.');
    await assert.rejects(runOperatorCommand(stores, ['monitors', 'list', '--status', 'gone']), (error) => error instanceof UsageError && /^--status must be one of active, paused_no_credits, paused/.test(error.message));
  });
});
