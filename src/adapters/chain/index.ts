/**
 * Public entry of the blockchain product's chain adapters, and its capability: the settings of
 * chains.ts read at start-up, one client per configured chain made on first use.
 */
import type { Capability } from '../../core/capability.ts';
import type { Queryable } from '../../storage/db.ts';
import type { UpstreamRuntime } from '../kit/runtime.ts';
import type { PageTokens } from '../x/page-token.ts';
import { pageTokenSecretSetting, pageTokensFor } from '../x/secret.ts';
import { BitcoinChainClient } from './bitcoin/client.ts';
import { CHAIN_NAMES, isChainName, readChainSettings, type ChainCapabilitySettings, type ChainName } from './chains.ts';
import type { ChainClient } from './client.ts';
import { EvmChainClient, type ChainIdCheck } from './evm/client.ts';

export { CHAINS, CHAIN_NAMES, MAX_CONFIRMATIONS, isChainName, readChainSettings } from './chains.ts';
export type { BitcoinNetwork, ChainCapabilitySettings, ChainDefinition, ChainName, ChainSettings } from './chains.ts';
export { ChainCallError, MAX_BLOCK_SPAN } from './client.ts';
export { CHAIN_ID_RETRY_MS, CHAIN_ID_TTL_MS, wrongChainReason, type ChainIdCheck } from './evm/client.ts';
export type { BlocksRead, ChainClient, HistoryCursor, TransactionsPage, TransactionsQuery, TransferAssetFilter, TransferDirection, WalletSummary, WalletToken } from './client.ts';
export { normalizeAddress } from './addresses.ts';
export type { BlockRef, BlockTransfer, ChainAsset, ChainKind, Transfer } from './types.ts';

/** The name of the generated page-token key in `service_secrets`. */
export const CHAIN_PAGE_TOKEN_SECRET_NAME = 'chain_page_token';

export interface ChainDeps {
  runtime: UpstreamRuntime;
  /** Where the generated page-token key is kept (absent: one per process). */
  db?: Queryable;
}

/** The configured chains' clients, each made on first use, and the page tokens of /v1/chain/transactions. */
export class ChainRegistry {
  readonly settings: ChainCapabilitySettings & { pageTokenSecret?: Buffer };
  readonly pageTokens: PageTokens;
  readonly #runtime: UpstreamRuntime;
  readonly #clients = new Map<ChainName, ChainClient>();

  constructor(settings: ChainCapabilitySettings & { pageTokenSecret?: Buffer }, deps: ChainDeps) {
    this.settings = settings;
    this.#runtime = deps.runtime;
    this.pageTokens = pageTokensFor(settings.pageTokenSecret, deps.db, CHAIN_PAGE_TOKEN_SECRET_NAME);
  }

  /** The chain's client, or undefined when the chain is unknown or not configured. */
  client(name: string): ChainClient | undefined {
    if (!isChainName(name)) return undefined;
    const existing = this.#clients.get(name);
    if (existing) return existing;
    const info = this.settings.chains[name];
    if (!info) return undefined;
    const client =
      info.kind === 'evm'
        ? new EvmChainClient(this.#runtime, info, {
            timeoutMs: this.settings.timeoutMs,
            historyBlocks: this.settings.historyBlocks,
            historyLogBlocks: this.settings.historyLogBlocks,
            logRange: this.settings.logRange,
            explorer: this.settings.explorer,
          })
        : new BitcoinChainClient(this.#runtime, info, { timeoutMs: this.settings.timeoutMs });
    this.#clients.set(name, client);
    return client;
  }

  /**
   * Checks the chain id of every configured EVM chain's node now (at start): one line per chain
   * for the operator. A node of another chain leaves its chain unavailable (each call answers a
   * 502) until it answers the right id; one that cannot be asked is asked again before its first call.
   */
  async checkChainIds(): Promise<{ chain: ChainName; kind: ChainIdCheck['kind']; message: string }[]> {
    const evm = this.configured().filter((name) => this.settings.chains[name]!.kind === 'evm');
    return Promise.all(
      evm.map(async (name) => {
        const variable = `CHAIN_RPC_${name.toUpperCase()}`;
        const check = await (this.client(name) as EvmChainClient).checkChainId();
        if (check.kind === 'ok') return { chain: name, kind: check.kind, message: `chain ${name}: ${variable} answers chain id ${check.got}, as expected` };
        if (check.kind === 'wrong_chain') return { chain: name, kind: check.kind, message: `chain ${name}: ${check.reason} (${variable}): ${name} is unavailable (502) until its node answers chain id ${check.expected}` };
        const why = 'reason' in check.outcome ? `${check.outcome.kind}: ${check.outcome.reason}` : check.outcome.kind;
        return { chain: name, kind: check.kind, message: `chain ${name}: the chain id could not be checked (${why}); it is checked before the first call` };
      }),
    );
  }

  /** The configured chains, in the registry's order. */
  configured(): ChainName[] {
    return CHAIN_NAMES.filter((name) => this.settings.chains[name] !== undefined);
  }
}

export const chainCapability: Capability<ChainCapabilitySettings & { pageTokenSecret?: Buffer }, ChainRegistry, ChainDeps> = {
  name: 'chain',
  settings(env) {
    return { ...readChainSettings(env), pageTokenSecret: pageTokenSecretSetting(env) };
  },
  start: (settings, deps) => new ChainRegistry(settings, deps),
  // Nothing to close: connections belong to the outbound client.
  close: async () => {},
};
