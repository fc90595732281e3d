/**
 * `ChainClient`: one configured chain, as the blockchain endpoints and the wallet monitors' block
 * follower read it. Get one with `services.capabilities.chain(name)`, which is undefined when
 * the chain is not configured (`CHAIN_RPC_<NAME>` / `CHAIN_ESPLORA_BITCOIN` unset).
 *
 * Every method runs its upstream calls on the one upstream runtime (deadline, retry of network
 * failures, circuit breaker, logs, metrics), with the caller's `CallContext` (its abort signal
 * and logger). A call that does not come back with a usable answer (unreachable, timeout, a
 * JSON-RPC error, a rate limit, an answer the parser cannot read, an open circuit) rejects with
 * a `ChainCallError` carrying that non-ok outcome: endpoints turn it into a free 502, a follower
 * tries the same range again on its next poll. A caller that went away rejects with its
 * signal's reason, as every runtime call does.
 *
 * For followers (`head`, `block`, `transfersInBlocks`):
 * - `head` is the newest block number the node knows (not the newest final one: subtract
 *   `info.confirmations` for that);
 * - `block(n)` is null when block n does not exist yet;
 * - `transfersInBlocks(from, to)` (inclusive, `to - from < 1000`) is the blocks it read, as
 *   `BlockRef`s in order, and every transfer in them. The blocks run from `from` without a gap
 *   and end before the first one missing (past the node's head): a follower checks its parent
 *   hashes on them and needs no other header read. The transfers are for every address, so the
 *   cost per block does not depend on how many addresses are watched:
 *   EVM: every transaction of the blocks (native value, possibly 0, with status and fee from its
 *   receipt) plus every ERC-20 `Transfer` log (one `eth_getLogs` over the range, symbol and
 *   decimals read once per contract and cached); Bitcoin: one transfer per address a transaction
 *   pays that is not among its spenders (change is no payment), from the first input's address,
 *   `"coinbase"` for a block reward (see docs/blockchain.md). Ordered by block, then `log_index`
 *   (Bitcoin: transaction index × 1 000 000 + output index). Addresses are EIP-55 checksummed
 *   (EVM) or as Esplora writes them (Bitcoin).
 *
 * For the endpoints (`wallet`, `transactions`): see docs/blockchain.md for the sources and windows.
 */
import type { CallContext, CallOutcome } from '../kit/types.ts';
import type { ChainSettings } from './chains.ts';
import type { BlockRef, BlockTransfer, Transfer } from './types.ts';

/** What `POST /v1/chain/wallet` answers (contract §10), `chain` and `address` included. */
export interface WalletSummary {
  chain: string;
  address: string;
  native: { value: string; decimals: number; symbol: string };
  tokens: WalletToken[];
  /** EVM: the address's nonce (transactions it sent). Bitcoin: confirmed transactions touching it. */
  tx_count: number;
  /** ISO 8601 of the newest transfer found, or null when none is (within the window without an indexer). */
  last_activity_at: string | null;
}

export interface WalletToken {
  contract: string;
  symbol: string | null;
  name: string | null;
  decimals: number | null;
  value: string;
}

export type TransferDirection = 'in' | 'out' | 'all';
export type TransferAssetFilter = 'native' | 'token' | 'all';

/** Where a page of history starts: past this transfer (newest first), and where the window ends. */
export interface HistoryCursor {
  /** The last transfer of the previous page: its block, then its position in the block. */
  block: number;
  position: number;
  /** The head when the first page was read: the windows hang from it, so every page reads the same ones. */
  head: number;
  /** Bitcoin: the last transaction id seen, for Esplora's `/txs/chain/:last_seen`. */
  txid?: string;
}

export interface TransactionsQuery {
  /** Already validated and normalised (checksummed for EVM). */
  address: string;
  direction: TransferDirection;
  asset: TransferAssetFilter;
  limit: number;
  /** Absent for the first page. */
  cursor?: HistoryCursor;
}

export interface TransactionsPage {
  transfers: Transfer[];
  /** Where the next page starts; null when this page is the last. */
  next: HistoryCursor | null;
}

/** What `transfersInBlocks` read: the blocks from `from` up to the first one missing, and their transfers. */
export interface BlocksRead {
  blocks: BlockRef[];
  transfers: BlockTransfer[];
}

export interface ChainClient {
  /** The chain's definition and settings in force (finality, native asset, network). */
  readonly info: ChainSettings;
  head(context: CallContext): Promise<number>;
  block(number: number, context: CallContext): Promise<BlockRef | null>;
  transfersInBlocks(from: number, to: number, context: CallContext): Promise<BlocksRead>;
  wallet(address: string, context: CallContext): Promise<WalletSummary>;
  transactions(query: TransactionsQuery, context: CallContext): Promise<TransactionsPage>;
  /** One fixed, harmless call for `gleaner upstreams probe`: the head block number. */
  probe(context: CallContext): Promise<CallOutcome<unknown>>;
}

/** A block as followers see it: its four header fields alone, whatever else the upstream's block holds. */
export function blockRef({ number, hash, parent_hash, timestamp }: BlockRef): BlockRef {
  return { number, hash, parent_hash, timestamp };
}

/** The most blocks one `transfersInBlocks` call may span. */
export const MAX_BLOCK_SPAN = 1000;

/** An upstream call of a chain client that did not come back ok: the endpoint's 502. */
export class ChainCallError extends Error {
  readonly outcome: Exclude<CallOutcome<unknown>, { kind: 'ok' }>;

  constructor(outcome: Exclude<CallOutcome<unknown>, { kind: 'ok' }>, what: string) {
    super(`${what}: ${outcome.kind}${'reason' in outcome && outcome.reason ? ` (${outcome.reason})` : ''}`);
    this.name = 'ChainCallError';
    this.outcome = outcome;
  }
}

/** The value of an ok outcome, or a ChainCallError saying what failed. */
export function unwrap<T>(outcome: CallOutcome<T>, what: string): T {
  if (outcome.kind === 'ok') return outcome.value;
  throw new ChainCallError(outcome, what);
}
