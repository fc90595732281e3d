/**
 * Readers of the JSON-RPC shapes the EVM client uses (blocks, transactions, receipts, logs), and
 * the pure step that turns them into transfers. Each reader throws on a shape it cannot read, which
 * the client reports as a `changed` answer.
 */
import { decodeAbiParameters, getAddress, hexToString, isAddress, type Hex } from 'viem';
import type { BlockRef, BlockTransfer, ChainAsset } from '../types.ts';
import { blockTime } from '../time.ts';
import { hexData, quantity, smallQuantity } from './rpc.ts';

/** Most bytes of a `symbol()` or `name()` answer that are decoded (the ABI's offset and length words included). */
export const MAX_TOKEN_TEXT_BYTES = 4096;

/** keccak256("Transfer(address,address,uint256)"): ERC-20 (and ERC-721, told apart by topic count). */
export const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';

export interface RawTransaction {
  hash: string;
  from: string;
  /** Null for a contract creation. */
  to: string | null;
  value: bigint;
  index: number;
}

export interface RawBlock extends BlockRef {
  /** Full transactions, when the block was asked for with them. */
  transactions: RawTransaction[];
}

export interface RawReceipt {
  transactionHash: string;
  status: 'success' | 'failed';
  /** gasUsed × effectiveGasPrice, plus the L1 data fee on OP-stack chains; null when the receipt lacks the price. */
  fee: bigint | null;
  contractAddress: string | null;
}

export interface RawLog {
  address: string;
  topics: string[];
  data: Hex;
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  transactionIndex: number;
  logIndex: number;
  removed: boolean;
}

function object(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${what} is not an object`);
  return value as Record<string, unknown>;
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new Error(`${what} is missing`);
  return value;
}

export function checksummed(value: unknown, what: string): string {
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) throw new Error(`${what} is not an address`);
  return getAddress(value);
}

export { blockTime as isoSeconds };

export function readBlock(value: unknown): RawBlock | null {
  if (value === null) return null;
  const block = object(value, 'block');
  const transactions = Array.isArray(block.transactions) ? block.transactions : [];
  return {
    number: smallQuantity(block.number, 'block number'),
    hash: text(block.hash, 'block hash'),
    parent_hash: text(block.parentHash, 'parent hash'),
    timestamp: blockTime(smallQuantity(block.timestamp, 'block timestamp')),
    // Without full transactions the list holds hashes: nothing to read.
    transactions: transactions.filter((tx) => typeof tx === 'object').map((tx) => readTransaction(tx)),
  };
}

export function readTransaction(value: unknown): RawTransaction {
  const tx = object(value, 'transaction');
  return {
    hash: text(tx.hash, 'transaction hash'),
    from: checksummed(tx.from, 'transaction sender'),
    to: tx.to === null || tx.to === undefined ? null : checksummed(tx.to, 'transaction recipient'),
    value: quantity(tx.value, 'transaction value'),
    index: smallQuantity(tx.transactionIndex, 'transaction index'),
  };
}

export function readReceipt(value: unknown): RawReceipt {
  const receipt = object(value, 'receipt');
  // Receipts before Byzantium have a state root instead of a status: those transactions succeeded.
  const status = receipt.status === undefined || receipt.status === null ? 'success' : quantity(receipt.status, 'receipt status') === 1n ? 'success' : 'failed';
  const gasUsed = quantity(receipt.gasUsed, 'gas used');
  const price = receipt.effectiveGasPrice ?? receipt.gasPrice;
  let fee = price === undefined || price === null ? null : gasUsed * quantity(price, 'gas price');
  // OP-stack rollups (Base, Optimism) charge the L1 data fee on top.
  if (fee !== null && typeof receipt.l1Fee === 'string') fee += quantity(receipt.l1Fee, 'L1 fee');
  return {
    transactionHash: text(receipt.transactionHash, 'receipt transaction hash'),
    status,
    fee,
    contractAddress: receipt.contractAddress === null || receipt.contractAddress === undefined ? null : checksummed(receipt.contractAddress, 'contract address'),
  };
}

export function readLogs(value: unknown): RawLog[] {
  if (!Array.isArray(value)) throw new Error('logs are not a list');
  return value.map((entry) => {
    const log = object(entry, 'log');
    if (!Array.isArray(log.topics)) throw new Error('log topics are not a list');
    return {
      address: checksummed(log.address, 'log address'),
      topics: log.topics.map((topic) => hexData(topic, 'log topic').toLowerCase()),
      data: hexData(log.data, 'log data'),
      blockNumber: smallQuantity(log.blockNumber, 'log block number'),
      blockHash: text(log.blockHash, 'log block hash'),
      transactionHash: text(log.transactionHash, 'log transaction hash'),
      transactionIndex: smallQuantity(log.transactionIndex, 'log transaction index'),
      logIndex: smallQuantity(log.logIndex, 'log index'),
      removed: log.removed === true,
    };
  });
}

/** An ERC-20 Transfer log's parties and value; null for ERC-721 (tokenId indexed, four topics) and other shapes. */
export function decodeTransferLog(log: RawLog): { from: string; to: string; value: bigint } | null {
  if (log.topics.length !== 3 || log.topics[0] !== TRANSFER_TOPIC) return null;
  if (log.data.length !== 66) return null;
  return { from: topicAddress(log.topics[1]!), to: topicAddress(log.topics[2]!), value: BigInt(log.data) };
}

function topicAddress(topic: string): string {
  return getAddress(`0x${topic.slice(-40)}`);
}

/** An address as a 32-byte topic, for `eth_getLogs` filters. */
export function addressTopic(address: string): string {
  return `0x${'0'.repeat(24)}${address.slice(2).toLowerCase()}`;
}

/**
 * A token's `symbol()` or `name()`: an ABI string, or a bytes32 (early tokens such as MKR), null
 * characters trimmed. Null when neither reads.
 */
export function decodeTokenText(data: Hex): string | null {
  // An ABI string of a few hundred bytes is every real symbol and name; a longer answer is not decoded.
  if (data === '0x' || data.length > 2 + 2 * MAX_TOKEN_TEXT_BYTES) return null;
  try {
    const [value] = decodeAbiParameters([{ type: 'string' }], data);
    return cleanText(value);
  } catch {
    // Not an ABI string: maybe bytes32.
  }
  if (data.length === 66) {
    try {
      return cleanText(hexToString(data, { size: 32 }));
    } catch {
      return null;
    }
  }
  return null;
}

function cleanText(value: string): string | null {
  const cleaned = value.replace(/\u0000+/g, '').trim();
  return cleaned === '' ? null : cleaned.slice(0, 100);
}

/** A token's `decimals()`: a uint8 in practice; null when absent or absurd. */
export function decodeDecimals(data: Hex): number | null {
  if (data.length !== 66) return null;
  const value = BigInt(data);
  return value <= 255n ? Number(value) : null;
}

export function decodeUint(data: Hex): bigint | null {
  if (data.length < 66) return null;
  return BigInt(data.slice(0, 66));
}

export interface TokenInfo {
  symbol: string | null;
  name: string | null;
  decimals: number | null;
}

export function tokenAsset(contract: string, info: TokenInfo | undefined): ChainAsset {
  return { type: 'erc20', contract, symbol: info?.symbol ?? null, decimals: info?.decimals ?? null };
}

/** Position of a transfer within its block, for ordering and page cursors: the transaction first, its native value before its logs. */
export function positionOf(transactionIndex: number, logIndex: number | null): number {
  return transactionIndex * 1_000_000 + (logIndex === null ? 0 : logIndex + 1);
}

/** The native transfer of one transaction, as a follower sees it. */
export function nativeTransfer(block: RawBlock, tx: RawTransaction, receipt: RawReceipt | undefined, native: ChainAsset): BlockTransfer {
  return {
    hash: tx.hash,
    block_number: block.number,
    block_hash: block.hash,
    timestamp: block.timestamp,
    from: tx.from,
    to: tx.to ?? receipt?.contractAddress ?? '',
    value: tx.value.toString(),
    asset: native,
    fee: receipt?.fee?.toString() ?? null,
    status: receipt?.status ?? 'success',
    log_index: tx.index,
  };
}
