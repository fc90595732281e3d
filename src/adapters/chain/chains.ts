/**
 * The chain registry: which chains the blockchain product knows, what each one's native asset is,
 * how many confirmations count as final by default, and the settings that configure it.
 *
 * - EVM chains are read over JSON-RPC: `CHAIN_RPC_<NAME>` (e.g. `CHAIN_RPC_ETHEREUM`);
 * - Bitcoin over an Esplora-compatible REST API: `CHAIN_ESPLORA_BITCOIN`, its network from
 *   `CHAIN_BITCOIN_NETWORK` (mainnet, testnet, signet, regtest; default mainnet);
 * - `CHAIN_CONFIRMATIONS_<NAME>` (0..64) overrides a chain's default finality;
 * - `CHAIN_ID_<NAME>` (EVM): the chain id its node must answer, when not the chain's own (a
 *   private network, a local fork);
 * - `CHAIN_EXPLORER_URL` and `CHAIN_EXPLORER_KEY`: an optional Etherscan-v2-compatible indexer
 *   for EVM history (one API for every chain, told apart by `chainid`);
 * - `CHAIN_TIMEOUT_MS`, `CHAIN_HISTORY_BLOCKS`, `CHAIN_HISTORY_LOG_BLOCKS`, `CHAIN_LOG_RANGE`:
 *   the deadline of one call and the bounded windows history is read from without an indexer.
 *
 * Every variable is read at start-up through the one environment reader, so a bad value stops
 * the start naming the variable (docs/blockchain.md lists them all).
 */
import { ConfigError, type EnvReader } from '../../core/env.ts';
import type { ChainKind } from './types.ts';

export const CHAIN_NAMES = ['ethereum', 'base', 'polygon', 'arbitrum', 'optimism', 'bsc', 'bitcoin'] as const;
export type ChainName = (typeof CHAIN_NAMES)[number];

export const BITCOIN_NETWORKS = ['mainnet', 'testnet', 'signet', 'regtest'] as const;
export type BitcoinNetwork = (typeof BITCOIN_NETWORKS)[number];

/** The most confirmations a setting, or a monitor, may ask for (contract §10). */
export const MAX_CONFIRMATIONS = 64;

export interface ChainDefinition {
  name: ChainName;
  kind: ChainKind;
  /** How people write it: "Ethereum", "BNB Smart Chain" (the address error message uses it). */
  label: string;
  /** EIP-155 chain id (the indexer's `chainid`); null for Bitcoin. */
  chainId: number | null;
  native: { symbol: string; decimals: number };
  /** Confirmations after which a block is treated as final, unless `CHAIN_CONFIRMATIONS_<NAME>` says otherwise. */
  confirmations: number;
}

/**
 * Default finality, chosen where reorganisations stop being seen in practice: Ethereum's 12 blocks
 * (before checkpoint finality, which is 64), the OP-stack rollups' and Arbitrum's sequencer
 * ordering (a reorg there needs an L1 one), Polygon PoS's deeper reorgs, BNB Chain's 15 of fast
 * finality, and Bitcoin's customary 6.
 */
export const CHAINS: Record<ChainName, ChainDefinition> = {
  ethereum: { name: 'ethereum', kind: 'evm', label: 'Ethereum', chainId: 1, native: { symbol: 'ETH', decimals: 18 }, confirmations: 12 },
  base: { name: 'base', kind: 'evm', label: 'Base', chainId: 8453, native: { symbol: 'ETH', decimals: 18 }, confirmations: 10 },
  polygon: { name: 'polygon', kind: 'evm', label: 'Polygon', chainId: 137, native: { symbol: 'POL', decimals: 18 }, confirmations: 32 },
  arbitrum: { name: 'arbitrum', kind: 'evm', label: 'Arbitrum', chainId: 42161, native: { symbol: 'ETH', decimals: 18 }, confirmations: 20 },
  optimism: { name: 'optimism', kind: 'evm', label: 'Optimism', chainId: 10, native: { symbol: 'ETH', decimals: 18 }, confirmations: 10 },
  bsc: { name: 'bsc', kind: 'evm', label: 'BNB Smart Chain', chainId: 56, native: { symbol: 'BNB', decimals: 18 }, confirmations: 15 },
  bitcoin: { name: 'bitcoin', kind: 'bitcoin', label: 'Bitcoin', chainId: null, native: { symbol: 'BTC', decimals: 8 }, confirmations: 6 },
};

export function isChainName(value: unknown): value is ChainName {
  return typeof value === 'string' && (CHAIN_NAMES as readonly string[]).includes(value);
}

/** A configured chain: its definition, where it is read from, and its finality. */
export interface ChainSettings extends ChainDefinition {
  /** The JSON-RPC endpoint (EVM) or the Esplora base URL (Bitcoin). */
  url: string;
  /** The finality in force: the default or `CHAIN_CONFIRMATIONS_<NAME>`. */
  confirmations: number;
  /** Bitcoin only: which network its addresses must belong to. */
  network?: BitcoinNetwork;
  /**
   * EVM only: the chain id its node must answer to `eth_chainId`: the chain's own, or
   * `CHAIN_ID_<NAME>` for a private network or a local fork that keeps another id (Hardhat's
   * and Anvil's 31337). A node answering another id serves nothing.
   */
  rpcChainId?: number;
}

export interface ExplorerSettings {
  /** The Etherscan-v2-compatible API endpoint, e.g. https://api.etherscan.io/v2/api. */
  url: string;
  key?: string;
}

export interface ChainCapabilitySettings {
  chains: Partial<Record<ChainName, ChainSettings>>;
  explorer?: ExplorerSettings;
  timeoutMs: number;
  /** Blocks scanned for native transfers when there is no indexer (newest first). */
  historyBlocks: number;
  /** Blocks searched for ERC-20 Transfer logs when there is no indexer. */
  historyLogBlocks: number;
  /** Most blocks one `eth_getLogs` may span: wider windows are split (providers cap the range). */
  logRange: number;
}

export const DEFAULT_HISTORY_BLOCKS = 100;
export const DEFAULT_HISTORY_LOG_BLOCKS = 10_000;
export const DEFAULT_LOG_RANGE = 5_000;
export const DEFAULT_CHAIN_TIMEOUT_MS = 20_000;

function envName(chain: ChainName): string {
  return chain.toUpperCase();
}

/** Reads every chain setting; throws a ConfigError naming the variable at fault. */
export function readChainSettings(env: EnvReader): ChainCapabilitySettings {
  const chains: Partial<Record<ChainName, ChainSettings>> = {};
  const networkRaw = env.text('CHAIN_BITCOIN_NETWORK')?.toLowerCase();
  if (networkRaw !== undefined && !(BITCOIN_NETWORKS as readonly string[]).includes(networkRaw)) {
    throw new ConfigError(`CHAIN_BITCOIN_NETWORK must be one of ${BITCOIN_NETWORKS.join(', ')} (got "${env.text('CHAIN_BITCOIN_NETWORK')}").`, 'CHAIN_BITCOIN_NETWORK');
  }
  const network = (networkRaw ?? 'mainnet') as BitcoinNetwork;
  for (const name of CHAIN_NAMES) {
    const definition = CHAINS[name];
    const variable = definition.kind === 'evm' ? `CHAIN_RPC_${envName(name)}` : `CHAIN_ESPLORA_${envName(name)}`;
    const url = env.url(variable);
    const confirmationsVariable = `CHAIN_CONFIRMATIONS_${envName(name)}`;
    const confirmations = env.integer(confirmationsVariable, { min: 0 });
    if (confirmations !== undefined && confirmations > MAX_CONFIRMATIONS) {
      throw new ConfigError(`${confirmationsVariable} must be between 0 and ${MAX_CONFIRMATIONS} (got "${confirmations}").`, confirmationsVariable);
    }
    const chainIdVariable = `CHAIN_ID_${envName(name)}`;
    const rpcChainId = definition.kind === 'evm' ? env.positiveInteger(chainIdVariable) : undefined;
    if (url === undefined) continue;
    chains[name] = {
      ...definition,
      url,
      confirmations: confirmations ?? definition.confirmations,
      ...(definition.kind === 'bitcoin' ? { network } : { rpcChainId: rpcChainId ?? definition.chainId! }),
    };
  }
  const explorerUrl = env.url('CHAIN_EXPLORER_URL');
  const explorerKey = env.text('CHAIN_EXPLORER_KEY');
  if (explorerKey !== undefined && explorerUrl === undefined) {
    throw new ConfigError('CHAIN_EXPLORER_URL must be set when CHAIN_EXPLORER_KEY is (e.g. https://api.etherscan.io/v2/api).', 'CHAIN_EXPLORER_URL');
  }
  return {
    chains,
    explorer: explorerUrl !== undefined ? { url: explorerUrl, key: explorerKey } : undefined,
    timeoutMs: env.positiveInteger('CHAIN_TIMEOUT_MS') ?? DEFAULT_CHAIN_TIMEOUT_MS,
    historyBlocks: env.positiveInteger('CHAIN_HISTORY_BLOCKS') ?? DEFAULT_HISTORY_BLOCKS,
    historyLogBlocks: env.positiveInteger('CHAIN_HISTORY_LOG_BLOCKS') ?? DEFAULT_HISTORY_LOG_BLOCKS,
    logRange: env.positiveInteger('CHAIN_LOG_RANGE') ?? DEFAULT_LOG_RANGE,
  };
}

