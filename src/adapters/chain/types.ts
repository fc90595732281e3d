/**
 * The shared shapes of the blockchain product (contract §10): what the chain adapters answer, what
 * `/v1/chain/*` returns and what wallet monitors deliver. Amounts are decimal strings in base units
 * (wei, satoshis, token units), never floats.
 */

/** `evm` chains are read over JSON-RPC (and an Etherscan-v2-compatible indexer when configured); `bitcoin` over Esplora REST. */
export type ChainKind = 'evm' | 'bitcoin';

export interface ChainAsset {
  type: 'native' | 'erc20';
  /** The token contract (EIP-55 checksummed); null for the native asset. */
  contract: string | null;
  symbol: string | null;
  decimals: number | null;
}

/** One movement of value touching an address: the `transfer` object of §10. */
export interface Transfer {
  hash: string;
  block_number: number;
  /** ISO 8601 (UTC) of the block. */
  timestamp: string;
  from: string;
  to: string;
  /** Base units, as a decimal string. */
  value: string;
  asset: ChainAsset;
  /** The fee paid by the transaction's sender, in the native asset's base units; null when unknown. */
  fee: string | null;
  status: 'success' | 'failed';
  confirmations: number;
}

/**
 * A transfer as a block follower sees it: the transfer, plus where it sits, so a monitor can order
 * events, wait for confirmations and notice when its block is replaced (a reorg).
 */
export interface BlockTransfer extends Omit<Transfer, 'confirmations'> {
  block_hash: string;
  /** Position in the block: the log index for token transfers, the transaction index for native ones (Bitcoin: the vout/vin pairing's index). */
  log_index: number;
}

/** A block header as a follower needs it: enough to detect a reorg by parent hash. */
export interface BlockRef {
  number: number;
  hash: string;
  parent_hash: string;
  /** ISO 8601 (UTC). */
  timestamp: string;
}
