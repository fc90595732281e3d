/**
 * The EVM chain client: JSON-RPC (batched where the node allows it) and, when configured, an
 * Etherscan-v2-compatible indexer for history. See ../client.ts for the contract and
 * docs/blockchain.md for what each endpoint reads.
 */
import { encodeFunctionData, erc20Abi, getAddress, type Hex } from 'viem';
import { raceAbort } from '../../../core/abort.ts';
import type { Adapter, CallContext, CallOutcome, UpstreamLogger } from '../../kit/types.ts';
import type { Upstream, UpstreamRuntime } from '../../kit/runtime.ts';
import { CHAINS, type ChainSettings, type ExplorerSettings } from '../chains.ts';
import {
  blockRef,
  ChainCallError,
  MAX_BLOCK_SPAN,
  unwrap,
  type BlocksRead,
  type ChainClient,
  type HistoryCursor,
  type TransactionsPage,
  type TransactionsQuery,
  type WalletSummary,
  type WalletToken,
} from '../client.ts';
import type { BlockRef, BlockTransfer, ChainAsset, Transfer } from '../types.ts';
import { explorerTokentx, explorerTxlist, type ExplorerEntry } from './explorer.ts';
import { TOO_LARGE, hexData, rpcBatch, rpcMethod, rpcTolerant, smallQuantity, quantity, toHex, type RpcItem, type RpcRequest } from './rpc.ts';
import {
  TRANSFER_TOPIC,
  addressTopic,
  decodeDecimals,
  decodeTokenText,
  decodeTransferLog,
  decodeUint,
  nativeTransfer,
  positionOf,
  readBlock,
  readLogs,
  readReceipt,
  tokenAsset,
  type RawBlock,
  type RawLog,
  type RawReceipt,
  type TokenInfo,
} from './shapes.ts';

export interface EvmClientOptions {
  timeoutMs: number;
  historyBlocks: number;
  historyLogBlocks: number;
  logRange: number;
  explorer?: ExplorerSettings;
}

/**
 * How long a node's chain id, once checked, is trusted. The node behind a URL can change without
 * the connection saying so (a provider's balancer, a DNS change), so it is asked again with the
 * first call after this, and after any call that got no answer.
 */
export const CHAIN_ID_TTL_MS = 10 * 60_000;
/** While the node answers another chain's id, calls fail at once; it is asked again after this. */
export const CHAIN_ID_RETRY_MS = 30_000;

/** What checking a node's chain id found. */
export type ChainIdCheck =
  | { kind: 'ok'; chain: string; expected: number; got: number }
  | { kind: 'wrong_chain'; chain: string; expected: number; got: number; reason: string }
  | { kind: 'failed'; chain: string; expected: number; outcome: Exclude<CallOutcome<number>, { kind: 'ok' }> };

/** "the node of ethereum answers chain id 137 (Polygon), not 1". */
export function wrongChainReason(chain: string, expected: number, got: number): string {
  const known = Object.values(CHAINS).find((definition) => definition.chainId === got);
  return `the node of ${chain} answers chain id ${got}${known ? ` (${known.label})` : ''}, not ${expected}`;
}

/** Calls per JSON-RPC batch: providers cap batches (50 to 1000); 50 passes everywhere. */
const BATCH_SIZE = 50;
/** Full blocks and block receipts are large (a busy Ethereum block's are hundreds of kB): fewer per batch. */
const HEAVY_BATCH_SIZE = 10;
/** Cap on one answer: a batch of full blocks is bigger than a web page. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** Batches (or single calls, without batches) in flight at once for one request. */
const CONCURRENCY = 4;
/** Token metadata kept per client; cleared when full (it is a cache, the chain is the truth). */
const TOKEN_CACHE_SIZE = 10_000;

/** A transfer touching the queried address, with where it sits (for ordering and cursors). */
interface HistoryEntry extends Transfer {
  position: number;
}

type Item = RpcItem;

export class EvmChainClient implements ChainClient {
  readonly info: ChainSettings;
  readonly #upstream: Upstream;
  readonly #explorerUpstream: Upstream | undefined;
  readonly #options: EvmClientOptions;
  readonly #name: string;
  readonly #native: ChainAsset;
  readonly #adapters = new Map<string, Adapter<unknown[], unknown>>();
  readonly #quantities = new Map<string, Adapter<unknown[], bigint>>();
  readonly #tolerant = new Map<string, Adapter<unknown[], RpcItem>>();
  readonly #batch: Adapter<RpcRequest[], RpcItem[]>;
  readonly #batchKeep: Adapter<RpcRequest[], RpcItem[]>;
  readonly #tokens = new Map<string, TokenInfo>();
  readonly #chainIdAdapter: Adapter<unknown[], number>;
  /** What `eth_chainId` must answer: the chain's id, or `CHAIN_ID_<NAME>`. */
  readonly #expectedChainId: number;
  readonly #log: UpstreamLogger;
  /** What the node answered to `eth_chainId` last, and when; undefined until checked, and after a call that got no answer. */
  #identity: { kind: 'verified'; at: number } | { kind: 'wrong'; got: number; at: number } | undefined;
  #checking: Promise<ChainIdCheck> | undefined;
  /** Learned from the node: undefined until tried. */
  #batches: boolean | undefined;
  #hasBlockReceipts: boolean | undefined;

  constructor(runtime: UpstreamRuntime, info: ChainSettings, options: EvmClientOptions) {
    this.info = info;
    this.#options = options;
    this.#name = `chain-${info.name}`;
    this.#native = { type: 'native', contract: null, symbol: info.native.symbol, decimals: info.native.decimals };
    this.#upstream = runtime.upstream({ timeoutMs: options.timeoutMs, baseUrl: info.url, maxBytes: MAX_ANSWER_BYTES });
    this.#explorerUpstream = options.explorer ? runtime.upstream({ timeoutMs: options.timeoutMs, baseUrl: options.explorer.url }) : undefined;
    this.#chainIdAdapter = rpcMethod<unknown[], number>(this.#name, 'eth_chainId', () => [], (result) => smallQuantity(result, 'chain id'));
    this.#log = runtime.log;
    this.#expectedChainId = info.rpcChainId ?? info.chainId!;
    this.#batch = rpcBatch(this.#name, 'batch');
    this.#batchKeep = rpcBatch(this.#name, 'batch');
  }

  // ---- JSON-RPC plumbing ---------------------------------------------------------------------

  #method(method: string): Adapter<unknown[], unknown> {
    let adapter = this.#adapters.get(method);
    if (!adapter) {
      adapter = rpcMethod<unknown[], unknown>(this.#name, method, (params) => params, (result) => result);
      this.#adapters.set(method, adapter);
    }
    return adapter;
  }

  async #call(method: string, params: unknown[], context: CallContext): Promise<unknown> {
    return unwrap(await this.#send(this.#method(method), params, context), `${this.info.name} ${method}`);
  }

  /** A method whose result is a quantity, read in the adapter's parse: one above 256 bits is the call's `changed` verdict. */
  async #quantity(method: string, params: unknown[], context: CallContext): Promise<bigint> {
    let adapter = this.#quantities.get(method);
    if (!adapter) this.#quantities.set(method, (adapter = rpcMethod<unknown[], bigint>(this.#name, method, (input) => input, (result) => quantity(result, method))));
    return unwrap(await this.#send(adapter, params, context), `${this.info.name} ${method}`);
  }

  /** Many calls: batched when the node takes batches, else one by one; items in the calls' order. */
  async #many(calls: RpcRequest[], context: CallContext, keepErrors = false, batchSize = BATCH_SIZE): Promise<Item[]> {
    if (calls.length === 0) return [];
    if (this.#batches !== false) {
      const chunks: RpcRequest[][] = [];
      for (let start = 0; start < calls.length; start += batchSize) chunks.push(calls.slice(start, start + batchSize));
      const adapter = keepErrors ? this.#batchKeep : this.#batch;
      const first = await this.#send(adapter, chunks[0]!, context);
      // Refused as a batch (unless batches worked before: then it is this batch's own failure).
      if (first.kind === 'not_found' && this.#batches !== true) {
        this.#batches = false;
      } else {
        this.#batches = true;
        const rest = await mapLimit(chunks.slice(1), CONCURRENCY, async (chunk) => unwrap(await this.#send(adapter, chunk, context), `${this.info.name} batch`));
        return [unwrap(first, `${this.info.name} batch`), ...rest].flat();
      }
    }
    return mapLimit(calls, CONCURRENCY, async (call) => {
      if (keepErrors) {
        let adapter = this.#tolerant.get(call.method);
        if (!adapter) this.#tolerant.set(call.method, (adapter = rpcTolerant(this.#name, call.method)));
        return unwrap(await this.#send(adapter, call.params, context), `${this.info.name} ${call.method}`);
      }
      return { ok: true as const, result: await this.#call(call.method, call.params, context) };
    });
  }

  /** Reads a result; a shape it cannot read is the node's answer changing, reported as such. */
  #read<T>(what: string, read: () => T): T {
    try {
      return read();
    } catch (error) {
      throw new ChainCallError({ kind: 'changed', reason: `${what}: ${(error as Error).message}` }, `${this.info.name} ${what}`);
    }
  }

  #results(items: Item[], what: string): unknown[] {
    return items.map((item) => {
      if (!item.ok) throw new ChainCallError({ kind: 'changed', reason: `${what}: ${item.message}` }, `${this.info.name} ${what}`);
      return item.result;
    });
  }

  // ---- for followers -------------------------------------------------------------------------

  async head(context: CallContext): Promise<number> {
    const result = await this.#quantity('eth_blockNumber', [], context);
    return this.#read('eth_blockNumber', () => safeNumber(result, 'block number'));
  }

  async block(number: number, context: CallContext): Promise<BlockRef | null> {
    const result = await this.#call('eth_getBlockByNumber', [toHex(number), false], context);
    const block = this.#read('eth_getBlockByNumber', () => readBlock(result));
    return block ? blockRef(block) : null;
  }

  async transfersInBlocks(from: number, to: number, context: CallContext): Promise<BlocksRead> {
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to) || from < 0 || to < from || to - from >= MAX_BLOCK_SPAN) {
      throw new RangeError(`transfersInBlocks: a range of 1 to ${MAX_BLOCK_SPAN} blocks, from ≤ to (got ${from}..${to})`);
    }
    const numbers = range(from, to);
    const [read, logs] = await Promise.all([
      this.#fullBlocks(numbers, context),
      this.#logs([{ fromBlock: toHex(from), toBlock: toHex(to), topics: [TRANSFER_TOPIC] }], context),
    ]);
    // The range read ends before the first block missing (past the head): blocks stay contiguous from `from`.
    const gap = read.findIndex((block, index) => block.number !== from + index);
    const blocks = gap < 0 ? read : read.slice(0, gap);
    const last = blocks.at(-1)?.number ?? from - 1;
    const byNumber = new Map(blocks.map((block) => [block.number, block]));
    const receipts = await this.#blockReceipts(blocks, context);
    // Logs of blocks past the last one read (mined meanwhile) belong to a later read.
    const tokenLogs = logs.filter((log) => !log.removed && log.blockNumber <= last && decodeTransferLog(log) !== null);
    for (const log of tokenLogs) {
      // A log from a block we did not read (the chain moved between the calls): read the range again later.
      if (byNumber.get(log.blockNumber)?.hash !== log.blockHash) {
        throw new ChainCallError({ kind: 'changed', reason: 'the chain reorganised during the read' }, `${this.info.name} transfersInBlocks`);
      }
    }
    const tokens = await this.#tokenInfo(unique(tokenLogs.map((log) => log.address)), context);
    const transfers: (BlockTransfer & { position: number })[] = [];
    for (const block of blocks) {
      for (const tx of block.transactions) {
        transfers.push({ ...nativeTransfer(block, tx, receipts.get(tx.hash), this.#native), position: positionOf(tx.index, null) });
      }
    }
    for (const log of tokenLogs) {
      const block = byNumber.get(log.blockNumber)!;
      const decoded = decodeTransferLog(log)!;
      const receipt = receipts.get(log.transactionHash);
      transfers.push({
        hash: log.transactionHash,
        block_number: log.blockNumber,
        block_hash: log.blockHash,
        timestamp: block.timestamp,
        from: decoded.from,
        to: decoded.to,
        value: decoded.value.toString(),
        asset: tokenAsset(log.address, tokens.get(log.address)),
        fee: receipt?.fee?.toString() ?? null,
        status: 'success',
        log_index: log.logIndex,
        position: positionOf(log.transactionIndex, log.logIndex),
      });
    }
    transfers.sort((a, b) => a.block_number - b.block_number || a.position - b.position);
    return {
      blocks: blocks.map(blockRef),
      transfers: transfers.map(({ position: _position, ...transfer }) => transfer),
    };
  }

  // ---- blocks, receipts, logs, tokens --------------------------------------------------------

  async #fullBlocks(numbers: number[], context: CallContext): Promise<RawBlock[]> {
    const items = await this.#many(numbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [toHex(n), true] })), context, false, HEAVY_BATCH_SIZE);
    const results = this.#results(items, 'eth_getBlockByNumber');
    // A block past the head does not exist yet: absent from the answer.
    return this.#read('eth_getBlockByNumber', () => results.map((result) => readBlock(result)).filter((block): block is RawBlock => block !== null));
  }

  async #headers(numbers: number[], context: CallContext): Promise<Map<number, RawBlock>> {
    const items = await this.#many(numbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [toHex(n), false] })), context);
    const results = this.#results(items, 'eth_getBlockByNumber');
    const blocks = this.#read('eth_getBlockByNumber', () => results.map((result) => readBlock(result)));
    return new Map(blocks.filter((block): block is RawBlock => block !== null).map((block) => [block.number, block]));
  }

  /** Every receipt of the blocks: eth_getBlockReceipts when the node has it, else one per transaction. */
  async #blockReceipts(blocks: RawBlock[], context: CallContext): Promise<Map<string, RawReceipt>> {
    const withTransactions = blocks.filter((block) => block.transactions.length > 0);
    const receipts = new Map<string, RawReceipt>();
    if (withTransactions.length === 0) return receipts;
    let pending = withTransactions;
    if (this.#hasBlockReceipts === undefined) {
      const first = await this.#send(this.#method('eth_getBlockReceipts'), [toHex(pending[0]!.number)], context);
      if (first.kind === 'not_found') {
        this.#hasBlockReceipts = false;
      } else {
        const value = unwrap(first, `${this.info.name} eth_getBlockReceipts`);
        this.#hasBlockReceipts = true;
        this.#addReceipts(receipts, value);
        pending = pending.slice(1);
      }
    }
    if (this.#hasBlockReceipts) {
      const items = await this.#many(pending.map((block) => ({ method: 'eth_getBlockReceipts', params: [toHex(block.number)] })), context, false, HEAVY_BATCH_SIZE);
      for (const result of this.#results(items, 'eth_getBlockReceipts')) this.#addReceipts(receipts, result);
      return receipts;
    }
    const hashes = pending.flatMap((block) => block.transactions.map((tx) => tx.hash));
    for (const [hash, receipt] of await this.#receipts(hashes, context)) receipts.set(hash, receipt);
    return receipts;
  }

  #addReceipts(into: Map<string, RawReceipt>, result: unknown): void {
    this.#read('eth_getBlockReceipts', () => {
      if (!Array.isArray(result)) throw new Error('block receipts are not a list');
      for (const entry of result) {
        const receipt = readReceipt(entry);
        into.set(receipt.transactionHash, receipt);
      }
    });
  }

  async #receipts(hashes: string[], context: CallContext): Promise<Map<string, RawReceipt>> {
    const items = await this.#many(hashes.map((hash) => ({ method: 'eth_getTransactionReceipt', params: [hash] })), context);
    const results = this.#results(items, 'eth_getTransactionReceipt');
    return this.#read('eth_getTransactionReceipt', () => {
      const receipts = new Map<string, RawReceipt>();
      for (const result of results) {
        // A receipt not there yet (a transaction just seen) stays unknown: status success, fee null.
        if (result === null) continue;
        const receipt = readReceipt(result);
        receipts.set(receipt.transactionHash, receipt);
      }
      return receipts;
    });
  }

  /** Log queries one by one: one the provider finds too big is split in halves until it fits. */
  async #logs(filters: { fromBlock: string; toBlock: string; topics: (string | null)[] }[], context: CallContext): Promise<RawLog[]> {
    const results = await mapLimit(filters, CONCURRENCY, (filter) => this.#logRange(filter, context));
    return results.flat();
  }

  async #logRange(filter: { fromBlock: string; toBlock: string; topics: (string | null)[] }, context: CallContext): Promise<RawLog[]> {
    let adapter = this.#tolerant.get('eth_getLogs');
    if (!adapter) this.#tolerant.set('eth_getLogs', (adapter = rpcTolerant(this.#name, 'eth_getLogs')));
    const item = unwrap(await this.#send(adapter, [filter], context), `${this.info.name} eth_getLogs`);
    if (item.ok) return this.#read('eth_getLogs', () => readLogs(item.result));
    const [from, to] = [Number(filter.fromBlock), Number(filter.toBlock)];
    if (!TOO_LARGE.test(item.message) || from >= to) {
      throw new ChainCallError({ kind: 'changed', reason: `eth_getLogs: ${item.message.slice(0, 200)}` }, `${this.info.name} eth_getLogs`);
    }
    const middle = Math.floor((from + to) / 2);
    const [older, newer] = await Promise.all([
      this.#logRange({ ...filter, fromBlock: toHex(from), toBlock: toHex(middle) }, context),
      this.#logRange({ ...filter, fromBlock: toHex(middle + 1), toBlock: toHex(to) }, context),
    ]);
    return [...older, ...newer];
  }

  /** Symbol, name and decimals of each contract, read once and cached; a call that reverts leaves the field null. */
  async #tokenInfo(contracts: string[], context: CallContext): Promise<Map<string, TokenInfo>> {
    const missing = contracts.filter((contract) => !this.#tokens.has(contract));
    if (missing.length > 0) {
      const selectors = (['symbol', 'name', 'decimals'] as const).map((functionName) => encodeFunctionData({ abi: erc20Abi, functionName }));
      const calls = missing.flatMap((contract) => selectors.map((data) => ({ method: 'eth_call', params: [{ to: contract, data }, 'latest'] })));
      const items = await this.#many(calls, context, true);
      if (this.#tokens.size + missing.length > TOKEN_CACHE_SIZE) this.#tokens.clear();
      missing.forEach((contract, index) => {
        const [symbol, name, decimals] = items.slice(index * 3, index * 3 + 3).map((item) => (item.ok && typeof item.result === 'string' && /^0x[0-9a-fA-F]*$/.test(item.result) ? (item.result as Hex) : null));
        this.#tokens.set(contract, {
          symbol: symbol ? decodeTokenText(symbol) : null,
          name: name ? decodeTokenText(name) : null,
          decimals: decimals ? decodeDecimals(decimals) : null,
        });
      });
    }
    return new Map(contracts.map((contract) => [contract, this.#tokens.get(contract)!]));
  }

  // ---- for the endpoints ---------------------------------------------------------------------

  async wallet(given: string, context: CallContext): Promise<WalletSummary> {
    const address = getAddress(given);
    const [balance, nonce, activity] = await Promise.all([
      this.#quantity('eth_getBalance', [address, 'latest'], context),
      this.#quantity('eth_getTransactionCount', [address, 'latest'], context),
      this.#activity(address, context),
    ]);
    const tokens = await this.#tokenBalances(address, activity.contracts, context);
    return {
      chain: this.info.name,
      address,
      native: { value: balance.toString(), decimals: this.info.native.decimals, symbol: this.info.native.symbol },
      tokens,
      tx_count: this.#read('eth_getTransactionCount', () => safeNumber(nonce, 'nonce')),
      last_activity_at: activity.lastActivityAt,
    };
  }

  /** The token contracts seen in the address's transfers, and its newest transfer's time. */
  async #activity(address: string, context: CallContext): Promise<{ contracts: string[]; lastActivityAt: string | null }> {
    if (this.#explorerUpstream) {
      const [native, tokens] = await Promise.all([this.#explorer('txlist', address, 1, undefined, context), this.#explorer('tokentx', address, 1000, undefined, context)]);
      const newest = [...native, ...tokens].sort((a, b) => b.block_number - a.block_number)[0];
      return { contracts: unique(tokens.map((entry) => entry.contract!).filter(Boolean)), lastActivityAt: newest?.timestamp ?? null };
    }
    const head = await this.head(context);
    const entries = await this.#window(address, head, head, 'all', context);
    return {
      contracts: unique(entries.filter((entry) => entry.asset.type === 'erc20').map((entry) => entry.asset.contract!)),
      lastActivityAt: entries[0]?.timestamp ?? null,
    };
  }

  async #tokenBalances(address: string, contracts: string[], context: CallContext): Promise<WalletToken[]> {
    if (contracts.length === 0) return [];
    const data = (contract: string) => ({ to: contract, data: encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [address as `0x${string}`] }) });
    const [items, infos] = await Promise.all([
      this.#many(contracts.map((contract) => ({ method: 'eth_call', params: [data(contract), 'latest'] })), context, true),
      this.#tokenInfo(contracts, context),
    ]);
    const tokens: WalletToken[] = [];
    contracts.forEach((contract, index) => {
      const item = items[index]!;
      const value = item.ok && typeof item.result === 'string' ? decodeUint(hexData(item.result, 'balance')) : null;
      // A contract whose balanceOf reverts or answers nothing is not an ERC-20 we can report.
      if (value === null) return;
      const info = infos.get(contract);
      tokens.push({ contract, symbol: info?.symbol ?? null, name: info?.name ?? null, decimals: info?.decimals ?? null, value: value.toString() });
    });
    return tokens;
  }

  async transactions(given: TransactionsQuery, context: CallContext): Promise<TransactionsPage> {
    const query = { ...given, address: getAddress(given.address) };
    const head = await this.head(context);
    const cursor = query.cursor;
    const windowHead = cursor?.head ?? head;
    const top = cursor ? Math.min(cursor.block, windowHead) : head;
    let entries: HistoryEntry[];
    let more = false;
    if (this.#explorerUpstream) {
      // Enough past the cursor's block to fill the page even when that block held many of ours.
      const count = query.limit + 100;
      const [native, tokens] = await Promise.all([
        query.asset === 'token' ? [] : this.#explorer('txlist', query.address, count, top, context),
        query.asset === 'native' ? [] : this.#explorer('tokentx', query.address, count, top, context),
      ]);
      more = native.length === count || tokens.length === count;
      entries = [...native, ...tokens].map((entry) => this.#fromExplorer(entry, head));
    } else {
      entries = await this.#window(query.address, top, windowHead, query.asset, context);
    }
    const filtered = entries
      .filter((entry) => !cursor || entry.block_number < cursor.block || (entry.block_number === cursor.block && entry.position < cursor.position))
      .filter((entry) => query.direction === 'all' || (query.direction === 'in' ? entry.to === query.address : entry.from === query.address))
      .filter((entry) => query.asset === 'all' || (query.asset === 'native') === (entry.asset.type === 'native'));
    filtered.sort(newestFirst);
    const page = filtered.slice(0, query.limit);
    const last = page.at(-1);
    const next: HistoryCursor | null = last && (filtered.length > query.limit || more) ? { block: last.block_number, position: last.position, head: windowHead } : null;
    return {
      transfers: page.map(({ position: _position, ...transfer }) => ({ ...transfer, confirmations: Math.max(0, head - transfer.block_number + 1) })),
      next,
    };
  }

  async #explorer(action: 'txlist' | 'tokentx', address: string, count: number, endBlock: number | undefined, context: CallContext): Promise<ExplorerEntry[]> {
    const explorer = this.#options.explorer!;
    const adapter = action === 'txlist' ? explorerTxlist : explorerTokentx;
    const outcome = await this.#explorerUpstream!.call(adapter, { chainId: this.info.chainId!, address, count, endBlock, key: explorer.key }, context);
    return unwrap(outcome, `${this.info.name} ${action}`);
  }

  #fromExplorer(entry: ExplorerEntry, head: number): HistoryEntry {
    const asset: ChainAsset = entry.kind === 'native' ? this.#native : { type: 'erc20', contract: entry.contract, symbol: entry.symbol, decimals: entry.decimals };
    return {
      hash: entry.hash,
      block_number: entry.block_number,
      timestamp: entry.timestamp,
      from: entry.from,
      to: entry.to,
      value: entry.value,
      asset,
      fee: entry.fee,
      status: entry.status,
      confirmations: Math.max(0, head - entry.block_number + 1),
      position: entry.position,
    };
  }

  /**
   * The address's transfers without an indexer, newest first, up to block `top`: its ERC-20
   * Transfer logs over the last CHAIN_HISTORY_LOG_BLOCKS blocks before `windowHead` (two filtered
   * `eth_getLogs` per CHAIN_LOG_RANGE blocks: as sender, as recipient), and its transactions in the
   * last CHAIN_HISTORY_BLOCKS blocks (full blocks in batches of 10, filtered here), each with its receipt.
   */
  async #window(address: string, top: number, windowHead: number, asset: TransactionsQuery['asset'], context: CallContext): Promise<HistoryEntry[]> {
    const logFloor = Math.max(0, windowHead - this.#options.historyLogBlocks + 1);
    const nativeFloor = Math.max(0, windowHead - this.#options.historyBlocks + 1);
    const topic = addressTopic(address);
    const filters: { fromBlock: string; toBlock: string; topics: (string | null)[] }[] = [];
    if (asset !== 'native') {
      for (let end = top; end >= logFloor; end -= this.#options.logRange) {
        const start = Math.max(logFloor, end - this.#options.logRange + 1);
        filters.push({ fromBlock: toHex(start), toBlock: toHex(end), topics: [TRANSFER_TOPIC, topic] });
        filters.push({ fromBlock: toHex(start), toBlock: toHex(end), topics: [TRANSFER_TOPIC, null, topic] });
      }
    }
    const blockNumbers = asset !== 'token' && top >= nativeFloor ? range(nativeFloor, top) : [];
    const [logs, blocks] = await Promise.all([this.#logs(filters, context), this.#fullBlocks(blockNumbers, context)]);

    const seen = new Set<string>();
    const tokenLogs = logs.filter((log) => {
      const key = `${log.transactionHash}:${log.logIndex}`;
      if (log.removed || seen.has(key) || decodeTransferLog(log) === null) return false;
      seen.add(key);
      return true;
    });
    const ours = blocks.flatMap((block) => block.transactions.filter((tx) => tx.from === address || tx.to === address).map((tx) => ({ block, tx })));
    const fetched = new Map(blocks.map((block) => [block.number, block]));
    const [receipts, headers, tokens] = await Promise.all([
      this.#receipts(unique([...ours.map(({ tx }) => tx.hash), ...tokenLogs.map((log) => log.transactionHash)]), context),
      this.#headers(unique(tokenLogs.map((log) => log.blockNumber).filter((n) => !fetched.has(n))), context),
      this.#tokenInfo(unique(tokenLogs.map((log) => log.address)), context),
    ]);
    const entries: HistoryEntry[] = [];
    for (const { block, tx } of ours) {
      const { block_hash: _hash, log_index: _index, ...transfer } = nativeTransfer(block, tx, receipts.get(tx.hash), this.#native);
      entries.push({ ...transfer, confirmations: 0, position: positionOf(tx.index, null) });
    }
    for (const log of tokenLogs) {
      const decoded = decodeTransferLog(log)!;
      const block = fetched.get(log.blockNumber) ?? headers.get(log.blockNumber);
      // A log whose block is gone (reorganised meanwhile) is left out rather than given a wrong time.
      if (!block) continue;
      entries.push({
        hash: log.transactionHash,
        block_number: log.blockNumber,
        timestamp: block.timestamp,
        from: decoded.from,
        to: decoded.to,
        value: decoded.value.toString(),
        asset: tokenAsset(log.address, tokens.get(log.address)),
        fee: receipts.get(log.transactionHash)?.fee?.toString() ?? null,
        status: 'success',
        confirmations: 0,
        position: positionOf(log.transactionIndex, log.logIndex),
      });
    }
    return entries.sort(newestFirst);
  }

  /** `gleaner upstreams probe`: the chain id checked first (a node of another chain is `changed`), then the head block number. */
  async probe(context: CallContext): Promise<CallOutcome<unknown>> {
    const check = await this.checkChainId(context);
    if (check.kind === 'wrong_chain') return { kind: 'changed', reason: check.reason };
    if (check.kind === 'failed') return check.outcome;
    return this.#upstream.call(this.#method('eth_blockNumber'), [], context);
  }

  // ---- the chain id --------------------------------------------------------------------------

  /**
   * Asks the node its `eth_chainId` now and records the answer: every call waits for a check
   * that is due (the first call, the first after a failed one, one more than CHAIN_ID_TTL_MS
   * after the last check), and fails at once, as `changed`, while the node answers another chain
   * (asking again after CHAIN_ID_RETRY_MS). A change of answer is logged once.
   */
  async checkChainId(context: CallContext = {}): Promise<ChainIdCheck> {
    const expected = this.#expectedChainId;
    const outcome = await this.#upstream.call(this.#chainIdAdapter, [], context);
    if (outcome.kind !== 'ok') {
      this.#identity = undefined;
      return { kind: 'failed', chain: this.info.name, expected, outcome };
    }
    const got = outcome.value;
    const log = context.log ?? this.#log;
    if (got !== expected) {
      const reason = wrongChainReason(this.info.name, expected, got);
      if (this.#identity?.kind !== 'wrong' || this.#identity.got !== got) {
        log.warn({ upstream: this.#name, chain: this.info.name, expectedChainId: expected, chainId: got }, `${reason}: ${this.info.name} is unavailable until its node answers ${expected}`);
      }
      this.#identity = { kind: 'wrong', got, at: Date.now() };
      return { kind: 'wrong_chain', chain: this.info.name, expected, got, reason };
    }
    if (this.#identity?.kind === 'wrong') log.warn({ upstream: this.#name, chain: this.info.name, chainId: got }, `${this.info.name}: the node answers chain id ${got} again; the chain is served`);
    this.#identity = { kind: 'verified', at: Date.now() };
    return { kind: 'ok', chain: this.info.name, expected, got };
  }

  /** Resolves once the node is known to serve this chain; rejects with a ChainCallError otherwise. */
  async #ensureChain(context: CallContext): Promise<void> {
    const identity = this.#identity;
    const now = Date.now();
    if (identity?.kind === 'verified' && now - identity.at < CHAIN_ID_TTL_MS) return;
    if (identity?.kind === 'wrong' && now - identity.at < CHAIN_ID_RETRY_MS) {
      throw new ChainCallError({ kind: 'changed', reason: wrongChainReason(this.info.name, this.#expectedChainId, identity.got) }, `${this.info.name} eth_chainId`);
    }
    // One check for every call waiting on it, tied to none of them: a caller that leaves stops waiting, not the check.
    this.#checking ??= this.checkChainId({ log: context.log ?? this.#log }).finally(() => (this.#checking = undefined));
    const check = await (context.signal ? raceAbort(this.#checking, context.signal) : this.#checking);
    if (check.kind === 'failed') throw new ChainCallError(check.outcome as Exclude<CallOutcome<unknown>, { kind: 'ok' }>, `${this.info.name} eth_chainId`);
    if (check.kind === 'wrong_chain') throw new ChainCallError({ kind: 'changed', reason: check.reason }, `${this.info.name} eth_chainId`);
  }

  /**
   * Every call to the node: the chain id checked first when a check is due. A call that got no
   * answer (unreachable, timed out, or not made while the circuit is open) means the connection
   * is re-established by the next one, which checks the chain id again.
   */
  async #send<P, T>(adapter: Adapter<P, T>, params: P, context: CallContext): Promise<CallOutcome<T>> {
    await this.#ensureChain(context);
    const outcome = await this.#upstream.call(adapter, params, context);
    if (outcome.kind === 'unreachable' || outcome.kind === 'timeout' || outcome.kind === 'suspended') this.#identity = undefined;
    return outcome;
  }
}

function safeNumber(value: bigint, what: string): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`${what} is too large`);
  return Number(value);
}

function newestFirst(a: { block_number: number; position: number }, b: { block_number: number; position: number }): number {
  return b.block_number - a.block_number || b.position - a.position;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, index) => from + index);
}

function unique<T>(values: T[]): T[] {
  return [...new Set(values)];
}

/** `map` with at most `limit` calls in flight, results in order. */
export async function mapLimit<T, R>(items: T[], limit: number, map: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await map(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
