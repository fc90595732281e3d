/**
 * The block follower of one chain (docs/blockchain.md, "Monitors"), shared by every monitor of
 * that chain. Each step:
 *
 * 1. takes the chain's lease (one process follows a chain at a time; another takes over when the
 *    lease lapses), and reads the cursor: the last block processed and its hash;
 * 2. reads the head, then the new blocks and their transfers in one `transfersInBlocks` (the
 *    calls per block do not depend on how many addresses are watched; the blocks it answers are
 *    the headers checked below, so no header is read on its own);
 * 3. checks the first block's parent hash against the stored hash of the block before: a mismatch
 *    is a reorg, and the follower walks back to the last block both branches share; blocks that
 *    do not link up with each other, or fewer than the head promised, mean the chain changed while
 *    it was read: the next step reads them again;
 * 4. commits in one transaction: the cursor (only if it is still where this step read it, so two
 *    processes can never both advance it), the blocks' hashes, the matched transfers, the events
 *    of transfers that now have their monitor's confirmations, and `chain.transfer_reverted` for
 *    sent transfers whose block was replaced and which the new branch does not carry.
 *
 * A process killed at any point leaves the cursor at the last committed step: the next one reads
 * the same blocks again and, events being keyed by stable ids, records nothing twice.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Queryable } from '../storage/db.ts';
import type { ChainClient } from '../adapters/chain/client.ts';
import type { ChainKind, BlockRef, BlockTransfer, Transfer } from '../adapters/chain/types.ts';
import type { CallContext } from '../adapters/kit/types.ts';
import { addressKey, matchTransfers, MONITOR_EVENT_TYPES, transferEventId, type Match, type MonitorAsset, type MonitorFilter } from './matching.ts';
import { recordMonitorEvent, type MonitorRow } from './store.ts';

/** What the follower reads a chain with: a `ChainClient`'s follower methods. */
export type ChainReader = Pick<ChainClient, 'head' | 'block' | 'transfersInBlocks'>;

/** Blocks read in one step at most (a follower catching up moves this far per commit). */
export const BLOCKS_PER_STEP = 50;
/** Hashes of processed blocks kept for reorg detection: deeper reorgs than this are not walked back. */
export const KEPT_BLOCKS = 128;

export interface FollowerOptions {
  db: Database;
  chain: string;
  kind: ChainKind;
  reader: ChainReader;
  /** This process's name in leases. */
  owner: string;
  leaseMs: number;
  logger?: FastifyBaseLogger;
}

export interface StepResult {
  /** The step held the chain's lease and ran. */
  led: boolean;
  /** Blocks processed (0 when the head did not move), and events recorded. */
  blocks: number;
  events: number;
  /** A reorg was found and walked back. */
  reorg: boolean;
  /** The chain's head as this step read it, and the last block processed after it (the cursor): absent when the step read no head. */
  head?: number;
  processed?: number;
}

interface Cursor {
  number: number | null;
  hash: string | null;
}

interface MatchRow {
  monitor_id: string;
  tx_hash: string;
  log_index: number;
  block_number: number;
  block_hash: string;
  transfer: StoredTransfer;
  generation: number;
}

/** A matched transfer as stored: the chain's transfer, plus the monitor's view of it. */
interface StoredTransfer {
  transfer: BlockTransfer;
  direction: Match['direction'];
  address: string;
}

type MonitorForEvent = Pick<MonitorRow, 'id' | 'user_id' | 'webhook_url' | 'confirmations'>;

export class ChainFollower {
  readonly #options: FollowerOptions;

  constructor(options: FollowerOptions) {
    this.#options = options;
  }

  get chain(): string {
    return this.#options.chain;
  }

  /** One step; throws when the chain could not be read (the next step tries again). */
  async step(context: CallContext, beforeRead?: () => Promise<unknown>): Promise<StepResult> {
    const { db, chain, reader } = this.#options;
    const idle: StepResult = { led: false, blocks: 0, events: 0, reorg: false };
    const cursor = await this.#lease();
    if (!cursor) return idle;
    const [{ first }] = await db.query<{ first: number | null }>(
      `SELECT min(from_block)::int AS first FROM chain_monitors WHERE chain = $1 AND status = 'active'`,
      [chain],
    );
    if (first === null) {
      // Paused monitors may still have transfers waiting for confirmations: sent once resumed.
      return { ...idle, led: true };
    }
    // The day's address fees are taken at its first poll, before anything is matched.
    await beforeRead?.();
    const head = await reader.head(context);

    // No cursor yet, or every monitor starts past it: start right before the first watched block.
    if (cursor.number === null || cursor.hash === null || cursor.number < first - 1) {
      const start = Math.min(first - 1, head);
      const block = await this.#block(start, context);
      const moved = await db.transaction(async (tx) => {
        if (!(await this.#moveCursor(tx, cursor, { number: start, hash: block.hash }))) return false;
        await this.#storeBlocks(tx, [block]);
        return true;
      });
      return moved ? { ...idle, led: true, head, processed: start } : { ...idle, led: true };
    }

    const at = { number: cursor.number, hash: cursor.hash };
    if (head < at.number) {
      // The node's chain is shorter than what was processed: its end was replaced.
      const fork = await this.#walkBack(cursor, head, context);
      return { ...idle, led: true, reorg: true, head, processed: fork ?? at.number };
    }

    const from = at.number + 1;
    const to = Math.min(head, at.number + BLOCKS_PER_STEP);
    // One read gives the blocks' headers and their transfers (a ChainCallError, such as the chain
    // moving between its calls, fails the step: the next one reads the range again).
    const { blocks, transfers } = from <= to ? await reader.transfersInBlocks(from, to, context) : { blocks: [], transfers: [] };
    if (blocks.length > 0 && blocks[0].parent_hash !== at.hash) {
      const fork = await this.#walkBack(cursor, at.number, context);
      return { ...idle, led: true, reorg: true, head, processed: fork ?? at.number };
    }
    // The chain changed while it was being read (the head went back, or blocks of two branches): the next step reads it again.
    const unread: StepResult = { ...idle, led: true, head, processed: at.number };
    if (blocks.length !== Math.max(0, to - from + 1)) return unread;
    for (let i = 0; i < blocks.length; i++) {
      if (blocks[i].number !== from + i || (i > 0 && blocks[i].parent_hash !== blocks[i - 1].hash)) return unread;
    }
    const hashes = new Map(blocks.map((block) => [block.number, block.hash]));
    if (transfers.some((transfer) => hashes.get(transfer.block_number) !== transfer.block_hash)) return unread;

    const monitors = await this.#filters(transfers, to);
    const matches = matchTransfers(this.#options.kind, transfers, monitors);
    const last = blocks.at(-1) ?? at;
    const events = await db.transaction(async (tx) => {
      if (!(await this.#moveCursor(tx, cursor, { number: last.number, hash: last.hash }))) return -1;
      await this.#storeBlocks(tx, blocks);
      await this.#storeMatches(tx, matches);
      const reverted = await this.#revertGone(tx, last.number);
      const sent = await this.#sendConfirmed(tx, head, last.number);
      // Settled matches below the reorg window are of no more use.
      if (blocks.length > 0 && last.number % 100 === 0) {
        await tx.query(`DELETE FROM chain_matches WHERE chain = $1 AND state IN ('sent', 'reverted', 'dropped') AND block_number < $2`, [this.#options.chain, last.number - KEPT_BLOCKS]);
      }
      return reverted + sent;
    });
    // Another process moved the cursor meanwhile: nothing of this step was committed, and where the chain is is that process's to say.
    if (events < 0) return { ...idle, led: true };
    return { led: true, blocks: blocks.length, events, reorg: false, head, processed: last.number };
  }

  /** Gives the lease up (a clean shutdown): another process may follow at once. */
  async release(): Promise<void> {
    await this.#options.db.query('UPDATE chain_cursors SET lease_owner = NULL, lease_until = NULL WHERE chain = $1 AND lease_owner = $2', [
      this.#options.chain,
      this.#options.owner,
    ]);
  }

  /** Takes or renews the chain's lease; the cursor when this process holds it. */
  async #lease(): Promise<Cursor | undefined> {
    const { db, chain, owner, leaseMs } = this.#options;
    await db.query('INSERT INTO chain_cursors (chain) VALUES ($1) ON CONFLICT (chain) DO NOTHING', [chain]);
    const [row] = await db.query<{ number: number | null; hash: string | null }>(
      `UPDATE chain_cursors SET lease_owner = $2, lease_until = clock_timestamp() + make_interval(secs => $3)
        WHERE chain = $1 AND (lease_owner = $2 OR lease_owner IS NULL OR lease_until < clock_timestamp())
        RETURNING block_number::int AS number, block_hash AS hash`,
      [chain, owner, leaseMs / 1000],
    );
    return row;
  }

  /** Moves the cursor from where this step found it; false when another process moved it meanwhile. */
  async #moveCursor(tx: Queryable, from: Cursor, to: { number: number; hash: string }): Promise<boolean> {
    const rows = await tx.query(
      `UPDATE chain_cursors SET block_number = $4, block_hash = $5, updated_at = clock_timestamp()
        WHERE chain = $1 AND lease_owner = $2 AND block_number IS NOT DISTINCT FROM $3::bigint AND block_hash IS NOT DISTINCT FROM $6
        RETURNING chain`,
      [this.#options.chain, this.#options.owner, from.number, to.number, to.hash, from.hash],
    );
    return rows.length > 0;
  }

  async #block(number: number, context: CallContext): Promise<BlockRef> {
    const block = await this.#options.reader.block(number, context);
    if (!block) throw new Error(`block ${number} of ${this.#options.chain} is not available yet`);
    return block;
  }

  async #storeBlocks(tx: Queryable, blocks: BlockRef[]): Promise<void> {
    if (blocks.length === 0) return;
    const { chain } = this.#options;
    await tx.query(
      `INSERT INTO chain_blocks (chain, number, hash, parent_hash)
       SELECT $1, n, h, p FROM unnest($2::bigint[], $3::text[], $4::text[]) AS b(n, h, p)
       ON CONFLICT (chain, number) DO UPDATE SET hash = EXCLUDED.hash, parent_hash = EXCLUDED.parent_hash`,
      [chain, blocks.map((b) => b.number), blocks.map((b) => b.hash), blocks.map((b) => b.parent_hash)],
    );
    await tx.query('DELETE FROM chain_blocks WHERE chain = $1 AND number <= $2', [chain, blocks.at(-1)!.number - KEPT_BLOCKS]);
  }

  /** The active monitors watching an address of these transfers. */
  async #filters(transfers: BlockTransfer[], to: number): Promise<MonitorFilter[]> {
    if (transfers.length === 0) return [];
    const { db, chain, kind } = this.#options;
    const keys = [...new Set(transfers.flatMap((t) => [addressKey(kind, t.from ?? ''), addressKey(kind, t.to ?? '')]))];
    const rows = await db.query<{ id: string; asset: MonitorAsset; min_value: string; from_block: number; addresses: string[] }>(
      `SELECT m.id, m.asset, m.min_value::text AS min_value, m.from_block::int AS from_block,
              array(SELECT address FROM chain_monitor_addresses x WHERE x.monitor_id = m.id) AS addresses
         FROM chain_monitors m
        WHERE m.chain = $1 AND m.status = 'active' AND m.from_block <= $3
          AND EXISTS (SELECT 1 FROM chain_monitor_addresses a WHERE a.monitor_id = m.id AND a.chain = $1 AND a.address = ANY($2::text[]))`,
      [chain, keys, to],
    );
    return rows.map((row) => ({ id: row.id, asset: row.asset, minValue: BigInt(row.min_value), fromBlock: row.from_block, addresses: new Set(row.addresses) }));
  }

  /**
   * Stores matches as waiting for confirmations. One seen before keeps its state; one that was
   * orphaned by a reorg and is carried by the new branch too stays sent; one whose block was
   * replaced before it was sent, or that was reverted, waits again (a reverted one with a new
   * generation, so its new events have new ids).
   */
  async #storeMatches(tx: Queryable, matches: Match[]): Promise<void> {
    for (const match of matches) {
      const stored: StoredTransfer = { transfer: match.transfer, direction: match.direction, address: match.address };
      await tx.query(
        `INSERT INTO chain_matches (monitor_id, chain, tx_hash, log_index, block_number, block_hash, transfer)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)
         ON CONFLICT (monitor_id, tx_hash, log_index) DO UPDATE SET
           block_number = EXCLUDED.block_number, block_hash = EXCLUDED.block_hash, transfer = EXCLUDED.transfer,
           state = CASE chain_matches.state WHEN 'orphaned' THEN 'sent' WHEN 'sent' THEN 'sent' ELSE 'waiting' END,
           generation = chain_matches.generation + CASE chain_matches.state WHEN 'reverted' THEN 1 ELSE 0 END`,
        [match.monitorId, this.#options.chain, match.transfer.hash, match.transfer.log_index, match.transfer.block_number, match.transfer.block_hash, JSON.stringify(stored)],
      );
    }
  }

  /** Sent transfers orphaned by a reorg that the new branch, now read past their height, does not carry. */
  async #revertGone(tx: Queryable, processed: number): Promise<number> {
    const rows = await tx.query<MatchRow & MonitorForEvent & { id: string }>(
      `UPDATE chain_matches x SET state = 'reverted'
         FROM chain_monitors m
        WHERE m.id = x.monitor_id AND x.chain = $1 AND x.state = 'orphaned' AND x.block_number <= $2
        RETURNING x.monitor_id, x.tx_hash, x.log_index, x.block_number::int AS block_number, x.block_hash, x.transfer, x.generation,
                  m.id, m.user_id::int AS user_id, m.webhook_url, m.confirmations`,
      [this.#options.chain, processed],
    );
    rows.sort((a, b) => a.block_number - b.block_number || a.log_index - b.log_index);
    for (const row of rows) {
      await recordMonitorEvent(tx, {
        id: transferEventId(row.monitor_id, row.tx_hash, row.log_index, MONITOR_EVENT_TYPES.reverted, row.generation),
        monitor: row,
        type: MONITOR_EVENT_TYPES.reverted,
        data: this.#eventData(row.transfer, null),
        billable: false,
      });
    }
    return rows.length;
  }

  /** Records `chain.transfer` for every waiting match of an active monitor that has its confirmations now, in chain order. */
  async #sendConfirmed(tx: Queryable, head: number, processed: number): Promise<number> {
    const rows = await tx.query<MatchRow & MonitorForEvent & { id: string }>(
      `UPDATE chain_matches x SET state = 'sent'
         FROM chain_monitors m
        WHERE m.id = x.monitor_id AND x.chain = $1 AND x.state = 'waiting' AND m.status = 'active'
          AND x.block_number <= $3 AND $2::bigint - x.block_number + 1 >= m.confirmations
        RETURNING x.monitor_id, x.tx_hash, x.log_index, x.block_number::int AS block_number, x.block_hash, x.transfer, x.generation,
                  m.id, m.user_id::int AS user_id, m.webhook_url, m.confirmations`,
      [this.#options.chain, head, processed],
    );
    rows.sort((a, b) => a.block_number - b.block_number || a.log_index - b.log_index);
    let recorded = 0;
    for (const row of rows) {
      const created = await recordMonitorEvent(tx, {
        id: transferEventId(row.monitor_id, row.tx_hash, row.log_index, MONITOR_EVENT_TYPES.transfer, row.generation),
        monitor: row,
        type: MONITOR_EVENT_TYPES.transfer,
        data: this.#eventData(row.transfer, head - row.block_number + 1),
        billable: true,
      });
      if (created) recorded++;
    }
    return recorded;
  }

  /** The `data` of a transfer's event: the watched address, the direction and the §10 transfer object. */
  #eventData(stored: StoredTransfer, confirmations: number | null): Record<string, unknown> {
    const { block_hash, log_index, ...rest } = stored.transfer;
    const transfer: Omit<Transfer, 'confirmations'> & { confirmations?: number } = rest;
    if (confirmations !== null) transfer.confirmations = confirmations;
    return { chain: this.#options.chain, address: stored.address, direction: stored.direction, block_hash, log_index, transfer };
  }

  /**
   * A reorg: walks back from `top` to the newest stored block the node still has with the same
   * hash, and moves the cursor there. Transfers of the blocks above it are orphaned (sent ones) or
   * dropped (waiting ones); the next steps read the new branch and revert what it does not carry.
   */
  async #walkBack(cursor: Cursor, top: number, context: CallContext): Promise<number | undefined> {
    const { db, chain, reader, logger } = this.#options;
    const stored = await db.query<{ number: number; hash: string }>(
      'SELECT number::int AS number, hash FROM chain_blocks WHERE chain = $1 AND number <= $2 ORDER BY number DESC',
      [chain, top],
    );
    let fork: { number: number; hash: string } | undefined;
    for (const block of stored) {
      const now = await reader.block(block.number, context);
      if (now?.hash === block.hash) {
        fork = block;
        break;
      }
    }
    if (!fork) {
      // Deeper than the hashes kept: start again below the oldest one kept.
      const number = Math.max(0, (stored.at(-1)?.number ?? top) - 1);
      fork = { number, hash: (await this.#block(number, context)).hash };
      logger?.error({ chain, from: cursor.number, to: number }, 'chain reorganisation deeper than the blocks kept');
    }
    logger?.warn({ chain, from: cursor.number, fork: fork.number }, 'chain reorganisation: reading the new branch');
    const forkAt = fork.number;
    return db.transaction(async (tx) => {
      if (!(await this.#moveCursor(tx, cursor, fork))) return undefined;
      await tx.query('DELETE FROM chain_blocks WHERE chain = $1 AND number > $2', [chain, fork.number]);
      await tx.query(
        `UPDATE chain_matches SET state = CASE state WHEN 'sent' THEN 'orphaned' ELSE 'dropped' END
          WHERE chain = $1 AND block_number > $2 AND state IN ('waiting', 'sent')`,
        [chain, fork.number],
      );
      return forkAt;
    });
  }
}
