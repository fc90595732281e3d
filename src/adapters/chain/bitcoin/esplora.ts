/**
 * Esplora's REST API (Blockstream's electrs/esplora, mempool.space) as pure pairs, and the pure
 * step from its transactions to transfers.
 *
 * - `GET /blocks/tip/height` → a number as text;
 * - `GET /block-height/:h` → the block hash as text (404 "Block not found");
 * - `GET /block/:hash` → `{id, height, timestamp, previousblockhash, tx_count, ...}`;
 * - `GET /block/:hash/txs/:start` → 25 transactions from index `start` (a multiple of 25);
 * - `GET /address/:a` → `{address, chain_stats: {funded_txo_sum, spent_txo_sum, tx_count, ...}, mempool_stats}`;
 * - `GET /address/:a/txs/chain[/:last_seen_txid]` → 25 confirmed transactions, newest first.
 *
 * A transaction: `{txid, vin: [{txid, vout, prevout: {scriptpubkey_address, value} | null, is_coinbase}],
 * vout: [{scriptpubkey_address?, value}], fee, status: {confirmed, block_height, block_hash, block_time}}`.
 */
import type { Adapter, ParseOutcome, UpstreamResponse } from '../../kit/types.ts';
import { jsonOrUndefined } from '../../kit/decode.ts';
import { firstItems, uint256FromDecimal } from '../../kit/limits.ts';
import { buildUrl } from '../../kit/request.ts';
import type { BlockRef } from '../types.ts';
import { blockTime } from '../time.ts';

/** Transactions per page of Esplora's block and address listings. */
export const ESPLORA_PAGE = 25;
/**
 * Most inputs, or outputs, one transaction may have: a block's 4 million weight units hold about
 * 24,000 inputs or 32,000 outputs at the smallest; more is no Bitcoin transaction.
 */
export const MAX_TX_PARTS = 50_000;
/** Most transactions a block may hold (about 24,000 fit in 4 million weight units). */
export const MAX_BLOCK_TRANSACTIONS = 100_000;

export interface EsploraInput {
  /** Null for a coinbase input, which spends nothing. */
  address: string | null;
  value: bigint;
  coinbase: boolean;
}

export interface EsploraOutput {
  /** Null for outputs without an address (OP_RETURN, bare multisig). */
  address: string | null;
  value: bigint;
}

export interface EsploraTransaction {
  txid: string;
  inputs: EsploraInput[];
  outputs: EsploraOutput[];
  fee: bigint | null;
  block: { height: number; hash: string; time: number } | null;
}

export interface EsploraBlock extends BlockRef {
  tx_count: number;
}

export interface EsploraAddress {
  funded: bigint;
  spent: bigint;
  txCount: number;
}

function verdict(response: UpstreamResponse): ParseOutcome<never> | undefined {
  if (response.status === 429) return { kind: 'blocked', reason: 'rate limited (HTTP 429)' };
  if (response.status === 401 || response.status === 403) return { kind: 'blocked', reason: `refused (HTTP ${response.status})` };
  if (response.status >= 500) return { kind: 'changed', reason: `server error (HTTP ${response.status})` };
  return undefined;
}

function json(response: UpstreamResponse): unknown {
  const body = jsonOrUndefined(response.body);
  if (body === undefined) throw new Error(`not JSON (HTTP ${response.status})`);
  return body;
}

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} is not an object`);
  return value as Record<string, unknown>;
}

function whole(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new Error(`${what} is not a whole number`);
  return value;
}

/** An amount in satoshis: a JSON number, or digits (at most 256 bits, counted before they are converted). */
function satoshis(value: unknown, what: string): bigint {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  if (typeof value === 'string') return uint256FromDecimal(value, what);
  throw new Error(`${what} is not an amount`);
}

/** A block's transaction count: the pages of its listing are read from it, so an absurd one is `changed`. */
function blockTxCount(value: unknown): number {
  const count = whole(value, 'tx_count');
  if (count > MAX_BLOCK_TRANSACTIONS) throw new Error(`a block of ${count} transactions (at most ${MAX_BLOCK_TRANSACTIONS})`);
  return count;
}

function hash(value: unknown, what: string): string {
  if (typeof value !== 'string' || !/^[0-9a-f]{64}$/i.test(value)) throw new Error(`${what} is not a hash`);
  return value.toLowerCase();
}

export function readTransaction(value: unknown): EsploraTransaction {
  const tx = record(value, 'transaction');
  if (!Array.isArray(tx.vin) || !Array.isArray(tx.vout)) throw new Error('transaction without vin/vout');
  if (tx.vin.length > MAX_TX_PARTS || tx.vout.length > MAX_TX_PARTS) throw new Error(`a transaction of ${tx.vin.length} inputs and ${tx.vout.length} outputs (at most ${MAX_TX_PARTS} each)`);
  const status = tx.status === undefined ? undefined : record(tx.status, 'transaction status');
  return {
    txid: hash(tx.txid, 'txid'),
    inputs: tx.vin.map((entry) => {
      const input = record(entry, 'input');
      const coinbase = input.is_coinbase === true;
      // A coinbase input has no prevout: it creates the block's reward.
      if (coinbase || input.prevout === null || input.prevout === undefined) return { address: null, value: 0n, coinbase };
      const prevout = record(input.prevout, 'prevout');
      return { address: typeof prevout.scriptpubkey_address === 'string' ? prevout.scriptpubkey_address : null, value: satoshis(prevout.value, 'prevout value'), coinbase };
    }),
    outputs: tx.vout.map((entry) => {
      const output = record(entry, 'output');
      return { address: typeof output.scriptpubkey_address === 'string' ? output.scriptpubkey_address : null, value: satoshis(output.value, 'output value') };
    }),
    fee: tx.fee === undefined ? null : satoshis(tx.fee, 'fee'),
    block:
      status?.confirmed === true
        ? { height: whole(status.block_height, 'block height'), hash: hash(status.block_hash, 'block hash'), time: whole(status.block_time, 'block time') }
        : null,
  };
}

function readTransactions(response: UpstreamResponse): ParseOutcome<EsploraTransaction[]> {
  const refused = verdict(response);
  if (refused) return refused;
  if (response.status === 404) return { kind: 'not_found' };
  if (response.status !== 200) return { kind: 'changed', reason: `unexpected HTTP ${response.status}` };
  const body = json(response);
  if (!Array.isArray(body)) throw new Error('transactions are not a list');
  // Esplora pages hold 25 transactions: more is cut before it is read (the page cursors count on 25).
  return { kind: 'ok', value: firstItems(body, ESPLORA_PAGE).map(readTransaction) };
}

const JSON_HEADERS = { accept: 'application/json' };

export function esploraAdapters(upstream: string) {
  const tipHeight: Adapter<void, number> = {
    upstream,
    operation: 'tip-height',
    buildRequest: (_params, { baseUrl }) => ({ url: buildUrl(baseUrl, 'blocks/tip/height', {}), method: 'GET', headers: { accept: 'text/plain' } }),
    parse(response) {
      const refused = verdict(response);
      if (refused) return refused;
      const text = response.body.trim();
      if (response.status !== 200 || !/^\d+$/.test(text)) return { kind: 'changed', reason: `not a block height (HTTP ${response.status})` };
      return { kind: 'ok', value: Number(text) };
    },
  };
  const blockHash: Adapter<number, string> = {
    upstream,
    operation: 'block-height',
    buildRequest: (height, { baseUrl }) => ({ url: buildUrl(baseUrl, `block-height/${height}`, {}), method: 'GET', headers: { accept: 'text/plain' } }),
    parse(response) {
      const refused = verdict(response);
      if (refused) return refused;
      // Past the tip: "Block not found".
      if (response.status === 404) return { kind: 'not_found' };
      const text = response.body.trim();
      if (response.status !== 200 || !/^[0-9a-f]{64}$/i.test(text)) return { kind: 'changed', reason: `not a block hash (HTTP ${response.status})` };
      return { kind: 'ok', value: text.toLowerCase() };
    },
  };
  const block: Adapter<string, EsploraBlock> = {
    upstream,
    operation: 'block',
    buildRequest: (id, { baseUrl }) => ({ url: buildUrl(baseUrl, `block/${id}`, {}), method: 'GET', headers: JSON_HEADERS }),
    parse(response) {
      const refused = verdict(response);
      if (refused) return refused;
      if (response.status === 404) return { kind: 'not_found' };
      const body = record(json(response), 'block');
      const height = whole(body.height, 'block height');
      return {
        kind: 'ok',
        value: {
          number: height,
          hash: hash(body.id, 'block id'),
          // The genesis block has no parent.
          parent_hash: height === 0 ? '0'.repeat(64) : hash(body.previousblockhash, 'previous block hash'),
          timestamp: blockTime(whole(body.timestamp, 'block timestamp')),
          tx_count: blockTxCount(body.tx_count),
        },
      };
    },
  };
  const blockTransactions: Adapter<{ hash: string; start: number }, EsploraTransaction[]> = {
    upstream,
    operation: 'block-txs',
    buildRequest: ({ hash: id, start }, { baseUrl }) => ({ url: buildUrl(baseUrl, `block/${id}/txs/${start}`, {}), method: 'GET', headers: JSON_HEADERS }),
    parse: readTransactions,
  };
  const address: Adapter<string, EsploraAddress> = {
    upstream,
    operation: 'address',
    buildRequest: (id, { baseUrl }) => ({ url: buildUrl(baseUrl, `address/${encodeURIComponent(id)}`, {}), method: 'GET', headers: JSON_HEADERS }),
    parse(response) {
      const refused = verdict(response);
      if (refused) return refused;
      if (response.status === 400) return { kind: 'changed', reason: 'the address was refused (HTTP 400): another network?' };
      if (response.status !== 200) return { kind: 'changed', reason: `unexpected HTTP ${response.status}` };
      const body = record(json(response), 'address');
      const stats = record(body.chain_stats, 'chain_stats');
      return {
        kind: 'ok',
        value: { funded: satoshis(stats.funded_txo_sum, 'funded_txo_sum'), spent: satoshis(stats.spent_txo_sum, 'spent_txo_sum'), txCount: whole(stats.tx_count, 'tx_count') },
      };
    },
  };
  const addressTransactions: Adapter<{ address: string; lastSeen?: string }, EsploraTransaction[]> = {
    upstream,
    operation: 'address-txs',
    buildRequest: ({ address: id, lastSeen }, { baseUrl }) => ({
      url: buildUrl(baseUrl, `address/${encodeURIComponent(id)}/txs/chain${lastSeen ? `/${lastSeen}` : ''}`, {}),
      method: 'GET',
      headers: JSON_HEADERS,
    }),
    parse: readTransactions,
  };
  return { tipHeight, blockHash, block, blockTransactions, address, addressTransactions };
}

/** One address's movement in one transaction. */
export interface AddressMovement {
  address: string;
  direction: 'in' | 'out';
  /** The counterparty shown: for `in`, the first input's address ("coinbase" for a block reward); for `out`, the first output paid to another address. */
  counterparty: string;
  value: bigint;
  /** Order of the address's first appearance in the transaction (inputs, then outputs). */
  ordinal: number;
}

/** What a block reward's `from` is: it has no sending address. */
export const COINBASE = 'coinbase';

/**
 * Each address's movement in a transaction, summed from its inputs and outputs: an address that
 * spent in it moved `spent − received` out (minus the fee when it is the only sender, since the fee
 * is reported apart); one that only received moved `received` in. An address that spent but got
 * more back than it put in is reported as receiving the difference.
 */
export function movements(tx: EsploraTransaction): AddressMovement[] {
  const spent = new Map<string, bigint>();
  const received = new Map<string, bigint>();
  // A set keeps the order of first appearance, and finds an address at once in a transaction of thousands of parts.
  const order = new Set<string>();
  const note = (address: string) => {
    order.add(address);
  };
  for (const input of tx.inputs) {
    if (!input.address) continue;
    note(input.address);
    spent.set(input.address, (spent.get(input.address) ?? 0n) + input.value);
  }
  for (const output of tx.outputs) {
    if (!output.address) continue;
    note(output.address);
    received.set(output.address, (received.get(output.address) ?? 0n) + output.value);
  }
  const coinbase = tx.inputs.some((input) => input.coinbase);
  const firstSender = tx.inputs.find((input) => input.address)?.address ?? (coinbase ? COINBASE : '');
  const soleSender = spent.size === 1;
  // The first output paid to an address that did not spend: the same for every sender, found once.
  const firstPayee = tx.outputs.find((output) => output.address && !spent.has(output.address))?.address;
  const result: AddressMovement[] = [];
  [...order].forEach((address, ordinal) => {
    const out = spent.get(address) ?? 0n;
    const back = received.get(address) ?? 0n;
    if (out > 0n) {
      let value = out - back;
      if (value > 0n && soleSender && tx.fee !== null) value = value > tx.fee ? value - tx.fee : 0n;
      if (out - back >= 0n) {
        const payee = firstPayee ?? address;
        result.push({ address, direction: 'out', counterparty: payee, value, ordinal });
        return;
      }
      result.push({ address, direction: 'in', counterparty: firstSender, value: back - out, ordinal });
      return;
    }
    result.push({ address, direction: 'in', counterparty: firstSender, value: back, ordinal });
  });
  return result;
}

/** One payment inside a transaction, as a block follower sees it. */
export interface Flow {
  /** The first input's address ("coinbase" for a block reward). */
  from: string;
  to: string;
  value: bigint;
  /** The index of the payee's first output: its position in the transaction. */
  output: number;
}

/**
 * The payments of a transaction: one per address paid that is not among the spenders (the sum of
 * its outputs), from the first input's address. Change (outputs back to a spender) is not a
 * payment; a transaction that only pays its spenders back (a consolidation) is one flow to the
 * first such output. Outputs without an address (OP_RETURN) carry no payment.
 */
export function flows(tx: EsploraTransaction): Flow[] {
  const spenders = new Set(tx.inputs.map((input) => input.address).filter((address): address is string => address !== null));
  const coinbase = tx.inputs.some((input) => input.coinbase);
  const from = tx.inputs.find((input) => input.address)?.address ?? (coinbase ? COINBASE : '');
  const byPayee = new Map<string, Flow>();
  tx.outputs.forEach((output, index) => {
    if (!output.address || spenders.has(output.address)) return;
    const flow = byPayee.get(output.address);
    if (flow) flow.value += output.value;
    else byPayee.set(output.address, { from, to: output.address, value: output.value, output: index });
  });
  if (byPayee.size > 0) return [...byPayee.values()];
  const back = tx.outputs.findIndex((output) => output.address !== null);
  if (back === -1) return [];
  const total = tx.outputs.reduce((sum, output) => (output.address ? sum + output.value : sum), 0n);
  return [{ from, to: tx.outputs[back]!.address!, value: total, output: back }];
}
