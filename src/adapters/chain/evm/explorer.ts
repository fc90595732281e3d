/**
 * An Etherscan-v2-compatible indexer (Etherscan, or any API answering its `module=account` calls)
 * as pure pairs: `txlist` (the address's transactions) and `tokentx` (its ERC-20 transfers), newest
 * first. One API serves every chain, told apart by `chainid`.
 *
 * Answers: `{"status":"1","message":"OK","result":[...]}`; nothing found is `status "0"` with an
 * empty list ("No transactions found"); a refusal is `status "0"`, `message "NOTOK"` and the
 * reason in `result` ("Max rate limit reached", "Invalid API Key"): `blocked`.
 */
import { getAddress } from 'viem';
import type { Adapter, ParseOutcome } from '../../kit/types.ts';
import { jsonOrUndefined } from '../../kit/decode.ts';
import { MAX_UINT256_DECIMAL_DIGITS, firstItems, uint256FromDecimal } from '../../kit/limits.ts';
import { isoSeconds, positionOf } from './shapes.ts';
import type { Transfer } from '../types.ts';

export interface ExplorerQuery {
  chainId: number;
  address: string;
  /** Newest block to include (the page cursor's block); undefined for the newest. */
  endBlock?: number;
  /** How many entries (newest first). */
  count: number;
  key?: string;
}

/** One entry of either list, as the client merges them: a transfer's fields, its asset's apart. */
export interface ExplorerEntry extends Pick<Transfer, 'hash' | 'block_number' | 'timestamp' | 'from' | 'to' | 'value' | 'fee' | 'status'> {
  kind: 'native' | 'erc20';
  contract: string | null;
  symbol: string | null;
  decimals: number | null;
  name: string | null;
  position: number;
}

/**
 * An indexer's words for a refused key or rate, as the regular expression
 * `rate limit|invalid api key|missing.*api.?key|api key|forbidden|banned|too many` (case-insensitive)
 * finds them, in linear time: `api.?key` after `missing` on the same line is looked for after the
 * first `missing` of each line (a later one finds no more).
 */
export function refused(reason: string): boolean {
  if (/rate limit|invalid api key|api key|forbidden|banned|too many/i.test(reason)) return true;
  return reason.split(/[\n\r\u2028\u2029]/).some((line) => {
    const missing = /missing/i.exec(line);
    return missing !== null && /api.?key/i.test(line.slice(missing.index + missing[0].length));
  });
}

/** The rows of an answer, at most the `count` asked for (the `offset` sent): an indexer answering more is cut before its rows are read. */
function parseList(body: string, status: number, count: number, read: (row: Record<string, string>) => ExplorerEntry): ParseOutcome<ExplorerEntry[]> {
  if (status === 429) return { kind: 'blocked', reason: 'rate limited (HTTP 429)' };
  if (status === 401 || status === 403) return { kind: 'blocked', reason: `refused (HTTP ${status})` };
  const json = jsonOrUndefined(body) as { status?: unknown; message?: unknown; result?: unknown } | undefined;
  if (!json || typeof json !== 'object') return { kind: 'changed', reason: `not an indexer answer (HTTP ${status})` };
  if (json.status === '1' && Array.isArray(json.result)) return { kind: 'ok', value: firstItems(json.result, count).map((row) => read(row as Record<string, string>)) };
  if (json.status === '0' && Array.isArray(json.result) && json.result.length === 0) return { kind: 'ok', value: [] };
  const reason = typeof json.result === 'string' ? json.result : String(json.message ?? 'unknown');
  if (refused(reason)) return { kind: 'blocked', reason: `indexer refused: ${reason.slice(0, 200)}` };
  return { kind: 'changed', reason: `indexer error: ${reason.slice(0, 200)}` };
}

/** A decimal amount of at most 256 bits, its digits counted before it is converted; anything else is `changed`. */
function amount(value: string, what: string): bigint {
  return uint256FromDecimal(value, what);
}

/** A gas figure: null when absent or not written in digits (some compatible indexers), `changed` when above 256 bits. */
function optionalAmount(value: string | undefined, what: string): bigint | null {
  if (!value || !/^\d+$/.test(value.slice(0, MAX_UINT256_DECIMAL_DIGITS + 1))) return null;
  return amount(value, what);
}

function int(value: string | undefined, what: string): number {
  if (value === undefined || value.length > 16 || !/^\d+$/.test(value)) throw new Error(`${what} is not a whole number`);
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new Error(`${what} is too large`);
  return number;
}

/** Position in the block; compatible indexers that omit `transactionIndex` sort by log index alone. */
function txIndex(row: Record<string, string>): number {
  return row.transactionIndex !== undefined && /^\d+$/.test(row.transactionIndex) ? Number(row.transactionIndex) : 0;
}

function address(value: string | undefined): string {
  return value ? getAddress(value) : '';
}

/** The configured URL is the API endpoint itself (…/v2/api): parameters are added, no path. */
function withParams(base: string, params: Record<string, string | undefined>): string {
  const url = new URL(base);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

function request(action: string, query: ExplorerQuery, baseUrl: string) {
  return {
    url: withParams(baseUrl, {
      chainid: String(query.chainId),
      module: 'account',
      action,
      address: query.address,
      startblock: '0',
      endblock: query.endBlock !== undefined ? String(query.endBlock) : '99999999',
      page: '1',
      offset: String(query.count),
      sort: 'desc',
      apikey: query.key,
    }),
    method: 'GET' as const,
    headers: { accept: 'application/json' },
  };
}

/** What a row of either list says alike: its transaction and block, the sender, the value, and the fee the sender paid. */
function rowTransfer(row: Record<string, string>) {
  const gasUsed = optionalAmount(row.gasUsed, 'gasUsed');
  const gasPrice = optionalAmount(row.gasPrice, 'gasPrice');
  return {
    hash: row.hash ?? '',
    block_number: int(row.blockNumber, 'blockNumber'),
    timestamp: isoSeconds(int(row.timeStamp, 'timeStamp')),
    from: address(row.from),
    value: amount(row.value ?? '0', 'value').toString(),
    fee: gasUsed !== null && gasPrice !== null ? (gasUsed * gasPrice).toString() : null,
  };
}

export function readTxlistRow(row: Record<string, string>): ExplorerEntry {
  const failed = row.isError === '1' || row.txreceipt_status === '0';
  return {
    kind: 'native',
    ...rowTransfer(row),
    // A contract creation has no recipient: the new contract is it.
    to: row.to ? address(row.to) : address(row.contractAddress),
    contract: null,
    symbol: null,
    decimals: null,
    name: null,
    status: failed ? 'failed' : 'success',
    position: positionOf(txIndex(row), null),
  };
}

export function readTokentxRow(row: Record<string, string>): ExplorerEntry {
  const decimals = row.tokenDecimal !== undefined && /^\d+$/.test(row.tokenDecimal) ? Number(row.tokenDecimal) : null;
  return {
    kind: 'erc20',
    ...rowTransfer(row),
    to: address(row.to),
    contract: address(row.contractAddress),
    symbol: row.tokenSymbol || null,
    decimals,
    name: row.tokenName || null,
    status: 'success',
    position: positionOf(txIndex(row), row.logIndex !== undefined && /^\d+$/.test(row.logIndex) ? Number(row.logIndex) : 0),
  };
}

export const explorerTxlist: Adapter<ExplorerQuery, ExplorerEntry[]> = {
  upstream: 'chain-explorer',
  operation: 'txlist',
  buildRequest: (query, { baseUrl }) => request('txlist', query, baseUrl),
  parse: (response, query) => parseList(response.body, response.status, query.count, readTxlistRow),
};

export const explorerTokentx: Adapter<ExplorerQuery, ExplorerEntry[]> = {
  upstream: 'chain-explorer',
  operation: 'tokentx',
  buildRequest: (query, { baseUrl }) => request('tokentx', query, baseUrl),
  parse: (response, query) => parseList(response.body, response.status, query.count, readTokentxRow),
};
