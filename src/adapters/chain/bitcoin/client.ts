/**
 * The Bitcoin chain client, on an Esplora-compatible REST API. See ../client.ts for the contract
 * and docs/blockchain.md for what each endpoint reads.
 */
import type { CallContext, CallOutcome } from '../../kit/types.ts';
import type { Upstream, UpstreamRuntime } from '../../kit/runtime.ts';
import type { ChainSettings } from '../chains.ts';
import { blockRef, MAX_BLOCK_SPAN, unwrap, type BlocksRead, type ChainClient, type HistoryCursor, type TransactionsPage, type TransactionsQuery, type WalletSummary } from '../client.ts';
import { mapLimit } from '../evm/client.ts';
import type { BlockRef, BlockTransfer, ChainAsset, Transfer } from '../types.ts';
import { blockTime } from '../time.ts';
import { ESPLORA_PAGE, esploraAdapters, flows, movements, type EsploraBlock, type EsploraTransaction } from './esplora.ts';

/** Position of a transfer in its block: its transaction's index, then its payee's output index. */
const PER_TRANSACTION = 1_000_000;
/** Esplora pages (25 transactions each) one history request may read to fill a filtered page. */
const MAX_HISTORY_PAGES = 20;
const CONCURRENCY = 4;

export interface BitcoinClientOptions {
  timeoutMs: number;
}

export class BitcoinChainClient implements ChainClient {
  readonly info: ChainSettings;
  readonly #upstream: Upstream;
  readonly #api: ReturnType<typeof esploraAdapters>;
  readonly #native: ChainAsset;

  constructor(runtime: UpstreamRuntime, info: ChainSettings, options: BitcoinClientOptions) {
    this.info = info;
    this.#upstream = runtime.upstream({ timeoutMs: options.timeoutMs, baseUrl: info.url });
    this.#api = esploraAdapters(`chain-${info.name}`);
    this.#native = { type: 'native', contract: null, symbol: info.native.symbol, decimals: info.native.decimals };
  }

  async head(context: CallContext): Promise<number> {
    return unwrap(await this.#upstream.call(this.#api.tipHeight, undefined, context), 'bitcoin tip height');
  }

  async #block(number: number, context: CallContext): Promise<EsploraBlock | null> {
    const hash = await this.#upstream.call(this.#api.blockHash, number, context);
    if (hash.kind === 'not_found') return null;
    const block = await this.#upstream.call(this.#api.block, unwrap(hash, 'bitcoin block-height'), context);
    // Replaced between the two calls (a reorg): as if not there yet; the follower asks again.
    if (block.kind === 'not_found') return null;
    return unwrap(block, 'bitcoin block');
  }

  async block(number: number, context: CallContext): Promise<BlockRef | null> {
    const block = await this.#block(number, context);
    return block ? blockRef(block) : null;
  }

  async transfersInBlocks(from: number, to: number, context: CallContext): Promise<BlocksRead> {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from || to - from >= MAX_BLOCK_SPAN) {
      throw new RangeError(`transfersInBlocks: a range of 1 to ${MAX_BLOCK_SPAN} blocks, from ≤ to (got ${from}..${to})`);
    }
    const blocks: BlockRef[] = [];
    const transfers: BlockTransfer[] = [];
    for (let height = from; height <= to; height += 1) {
      const block = await this.#block(height, context);
      if (!block) break;
      blocks.push(blockRef(block));
      const starts = Array.from({ length: Math.ceil(block.tx_count / ESPLORA_PAGE) }, (_, index) => index * ESPLORA_PAGE);
      const pages = await mapLimit(starts, CONCURRENCY, async (start) => unwrap(await this.#upstream.call(this.#api.blockTransactions, { hash: block.hash, start }, context), 'bitcoin block-txs'));
      pages.flat().forEach((tx, index) => {
        for (const flow of flows(tx)) {
          transfers.push({
            hash: tx.txid,
            block_number: block.number,
            block_hash: block.hash,
            timestamp: block.timestamp,
            from: flow.from,
            to: flow.to,
            value: flow.value.toString(),
            asset: this.#native,
            fee: tx.fee?.toString() ?? null,
            status: 'success',
            log_index: index * PER_TRANSACTION + flow.output,
          });
        }
      });
    }
    return { blocks, transfers };
  }

  async wallet(address: string, context: CallContext): Promise<WalletSummary> {
    const [stats, newest] = await Promise.all([
      this.#upstream.call(this.#api.address, address, context),
      this.#upstream.call(this.#api.addressTransactions, { address }, context),
    ]);
    const summary = unwrap(stats, 'bitcoin address');
    const transactions = unwrap(newest, 'bitcoin address-txs');
    const time = transactions[0]?.block?.time;
    return {
      chain: this.info.name,
      address,
      native: { value: (summary.funded - summary.spent).toString(), decimals: this.info.native.decimals, symbol: this.info.native.symbol },
      tokens: [],
      tx_count: summary.txCount,
      last_activity_at: time !== undefined ? blockTime(time) : null,
    };
  }

  async transactions(query: TransactionsQuery, context: CallContext): Promise<TransactionsPage> {
    // Bitcoin has no tokens.
    if (query.asset === 'token') return { transfers: [], next: null };
    const head = await this.head(context);
    const transfers: Transfer[] = [];
    let lastSeen = query.cursor?.txid;
    let exhausted = false;
    let lastTx: EsploraTransaction | undefined;
    for (let page = 0; page < MAX_HISTORY_PAGES && transfers.length < query.limit; page += 1) {
      const listed = unwrap(await this.#upstream.call(this.#api.addressTransactions, { address: query.address, lastSeen }, context), 'bitcoin address-txs');
      if (listed.length === 0) {
        exhausted = true;
        break;
      }
      for (const tx of listed) {
        lastSeen = tx.txid;
        lastTx = tx;
        const movement = movements(tx).find((entry) => entry.address === query.address);
        if (!movement || !tx.block) continue;
        if (query.direction !== 'all' && movement.direction !== query.direction) continue;
        transfers.push({
          hash: tx.txid,
          block_number: tx.block.height,
          timestamp: blockTime(tx.block.time),
          from: movement.direction === 'out' ? query.address : movement.counterparty,
          to: movement.direction === 'out' ? movement.counterparty : query.address,
          value: movement.value.toString(),
          asset: this.#native,
          fee: tx.fee?.toString() ?? null,
          status: 'success',
          confirmations: Math.max(0, head - tx.block.height + 1),
        });
        if (transfers.length === query.limit) break;
      }
      if (listed.length < ESPLORA_PAGE && lastSeen === listed.at(-1)!.txid) {
        exhausted = true;
        break;
      }
    }
    const next: HistoryCursor | null =
      !exhausted && lastTx?.block && lastSeen ? { block: lastTx.block.height, position: 0, head: query.cursor?.head ?? head, txid: lastSeen } : null;
    return { transfers, next };
  }

  probe(context: CallContext): Promise<CallOutcome<unknown>> {
    return this.#upstream.call(this.#api.tipHeight, undefined, context);
  }
}
