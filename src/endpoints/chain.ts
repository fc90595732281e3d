/**
 * The blockchain product's two reads (docs/spec/contract.md §10, docs/blockchain.md):
 * `POST /v1/chain/wallet` (a wallet's balances) and `POST /v1/chain/transactions` (its transfers,
 * newest first, with opaque page tokens). Both are charged to the `blockchain` balance on success
 * only; a 422, a chain that is not configured (503) and an upstream failure (502) are free.
 *
 * Order of the answers, as the pipeline gives them: the schema's 422s; then `afterValidation`,
 * which needs the settings: a Bitcoin address of another network than the one configured (422),
 * a page token of another chain or address (422), and a known chain that is not configured (503,
 * the `available` check of this one chain, before any hold).
 */
import { httpErrors, type FieldErrors } from '../core/errors.ts';
import { between, integer, oneOf, required, string, type Rule } from '../validation/rules.ts';
import { defineEndpoint, type HandlerServices } from '../pipeline/endpoint.ts';
import { CHAINS, CHAIN_NAMES, ChainCallError, isChainName, normalizeAddress, type ChainName, type HistoryCursor } from '../adapters/chain/index.ts';
import { isAddressOfKind, normalizeEvmAddress, parseBitcoinAddress } from '../adapters/chain/addresses.ts';

export const CHAIN_MESSAGES = {
  invalidAddress: (chain: ChainName) => `The address is not a valid ${CHAINS[chain].label} address.`,
  invalidToken: 'The next page token is invalid.',
  otherScope: 'The next page token does not belong to this chain and address.',
} as const;

const BILLING_PRODUCT = 'blockchain' as const;
export const DIRECTIONS = ['in', 'out', 'all'] as const;
export const ASSET_FILTERS = ['native', 'token', 'all'] as const;

/** A known chain from the input, or undefined. */
function chainOf(input: Record<string, unknown>): ChainName | undefined {
  return isChainName(input.chain) ? input.chain : undefined;
}

/** The address in its canonical form for the chain's kind (any Bitcoin network), or null. */
function canonicalAddress(chain: ChainName, value: string): string | null {
  return CHAINS[chain].kind === 'evm' ? normalizeEvmAddress(value) : (parseBitcoinAddress(value)?.address ?? null);
}

const chainField = {
  rules: [required(), string(), oneOf(CHAIN_NAMES)],
  description: 'The chain: an EVM chain read over JSON-RPC, or `bitcoin` over Esplora.',
  example: 'ethereum',
} as const;

/** Checked against the chain named in the same request; an unknown chain is the chain field's error alone. */
const chainAddressRule: Rule<string> = {
  name: 'chain_address',
  needsValid: true,
  check(value, { input }) {
    const chain = chainOf(input);
    return chain === undefined || (typeof value === 'string' && isAddressOfKind(CHAINS[chain].kind, value.trim()));
  },
  // Only fails when the chain is known.
  message: (_attribute, _value, { input }) => CHAIN_MESSAGES.invalidAddress(chainOf(input) ?? 'ethereum'),
};

const addressField = {
  rules: [
    required(),
    string(),
    chainAddressRule,
  ],
  description: 'EVM: `0x` and 40 hex digits (a mixed-case one must carry its EIP-55 checksum). Bitcoin: P2PKH, P2SH, bech32 or bech32m of the configured network.',
  example: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045',
} as const;

/**
 * What the pipeline's `available` cannot see, since it does not get the input: whether this chain
 * is configured (503), and whether a Bitcoin address belongs to the configured network (422).
 */
async function checkChain(input: Record<string, unknown>, services: HandlerServices, errors: FieldErrors): Promise<void> {
  const chain = chainOf(input);
  if (chain === undefined || errors.chain || errors.address || typeof input.address !== 'string') return;
  const client = services.capabilities.chain(chain);
  if (!client) {
    // As `available` would answer, for this chain; a request that is invalid anyway gets its 422 first.
    if (Object.keys(errors).length === 0) throw httpErrors.notConfigured();
    return;
  }
  if (normalizeAddress(client.info, input.address.trim()) === null) (errors.address ??= []).push(CHAIN_MESSAGES.invalidAddress(chain));
}

/** No chain configured at all: the rows answer 503 before anything else is looked at. */
const anyChain = (services: HandlerServices) => services.capabilities.chains().configured().length > 0;

/** Settled or failed: a chain call that did not come back is the free 502. */
async function settle<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof ChainCallError) throw httpErrors.badGateway();
    throw error;
  }
}

function clientOf(services: HandlerServices, chain: ChainName, address: string) {
  const client = services.capabilities.chain(chain);
  if (!client) throw httpErrors.notConfigured();
  const normalized = normalizeAddress(client.info, address.trim());
  if (normalized === null) throw httpErrors.fieldInvalid('address', CHAIN_MESSAGES.invalidAddress(chain));
  return { client, address: normalized };
}

const EXAMPLE_WALLET = {
  chain: 'ethereum',
  address: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045',
  native: { value: '1234500000000000000', decimals: 18, symbol: 'ETH' },
  tokens: [{ contract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', symbol: 'USDC', name: 'USD Coin', decimals: 6, value: '2500000' }],
  tx_count: 1523,
  last_activity_at: '2026-11-22T10:15:35.000000Z',
};

const EXAMPLE_TRANSFER = {
  hash: '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060',
  block_number: 21_500_123,
  timestamp: '2026-11-22T10:15:35.000000Z',
  from: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045',
  to: '0x225E9B54F41F44F42150b6aAA730Da5f2d23FAf2',
  value: '2500000',
  asset: { type: 'erc20', contract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', symbol: 'USDC', decimals: 6 },
  fee: '42000000000000',
  status: 'success',
  confirmations: 14,
};

export const chainWalletEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/chain/wallet',
  summary: 'A wallet\'s balances',
  description: ({ credits }) =>
    `The native balance of an address, its ERC-20 balances (the tokens seen in its transfers, read with \`balanceOf\`), its transaction count and its last activity. Amounts are decimal strings in base units. ${credits('chain_wallet')}; 422, 502 and 503 (chain not configured) are free.`,
  tag: 'Blockchain',
  input: 'body',
  schema: { fields: { chain: chainField, address: addressField } },
  afterValidation: ({ input, services }, errors) => checkChain(input, services, errors),
  available: anyChain,
  billing: { product: BILLING_PRODUCT, operation: 'chain_wallet' },
  history: true,
  success: { status: 200, description: 'The wallet.', example: { response: EXAMPLE_WALLET } },
  errors: [403, 502, 503],
  async handler({ input, services, upstream }) {
    const { client, address } = clientOf(services, input.chain, input.address);
    return { body: { response: await settle(client.wallet(address, upstream)) } };
  },
});

/** A page token's scope: the chain and the address, so a token of another query is refused. */
const tokenScope = (chain: ChainName, address: string) => `chain:${chain}:${address}`;

function readCursor(text: string): HistoryCursor | null {
  try {
    const value = JSON.parse(text) as HistoryCursor;
    if (!Number.isSafeInteger(value.block) || !Number.isSafeInteger(value.position) || !Number.isSafeInteger(value.head)) return null;
    if (value.txid !== undefined && typeof value.txid !== 'string') return null;
    return value;
  } catch {
    return null;
  }
}

async function verifyToken(services: HandlerServices, chain: ChainName, address: string, token: string): Promise<HistoryCursor | 'invalid' | 'other_scope'> {
  const check = await services.capabilities.chains().pageTokens.verify(token, tokenScope(chain, address), 'next');
  if (!check.ok) return check.reason;
  return readCursor(check.cursor) ?? 'invalid';
}

export const chainTransactionsEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/chain/transactions',
  summary: 'A wallet\'s transfers',
  description: ({ credits }) =>
    `Transfers touching an address, newest first: native transactions and ERC-20 transfers (EVM), or the address's net movement per transaction (Bitcoin). Filter by \`direction\` and \`asset\`; pass \`next_page_token\` back, with the same chain and address, for the next page. Without an indexer, EVM history covers a bounded window of recent blocks (docs/blockchain.md). ${credits('chain_transactions')}; 422, 502 and 503 are free.`,
  tag: 'Blockchain',
  input: 'body',
  schema: {
    fields: {
      chain: chainField,
      address: addressField,
      direction: { rules: [string(), oneOf(DIRECTIONS)], default: 'all', description: '`in`: received; `out`: sent; `all`.' },
      asset: { rules: [string(), oneOf(ASSET_FILTERS)], default: 'all', description: '`native`, `token` (ERC-20) or `all`.' },
      limit: { rules: [integer(), between(1, 100)], default: 25 },
      next_page_token: { rules: [string()], description: 'From the previous answer\'s pagination, with the same chain and address.' },
    },
  },
  async afterValidation({ input, services }, errors) {
    const token = typeof input.next_page_token === 'string' ? input.next_page_token.trim() : '';
    const chain = chainOf(input);
    if (token !== '' && !errors.next_page_token && chain !== undefined && !errors.address && typeof input.address === 'string') {
      const address = canonicalAddress(chain, input.address.trim());
      if (address !== null) {
        const cursor = await verifyToken(services, chain, address, token);
        if (cursor === 'invalid') (errors.next_page_token ??= []).push(CHAIN_MESSAGES.invalidToken);
        else if (cursor === 'other_scope') (errors.next_page_token ??= []).push(CHAIN_MESSAGES.otherScope);
      }
    }
    await checkChain(input, services, errors);
  },
  available: anyChain,
  billing: { product: BILLING_PRODUCT, operation: 'chain_transactions' },
  history: true,
  success: {
    status: 200,
    description: 'One page of transfers, newest first, and the token of the next page (null on the last).',
    example: { response: [EXAMPLE_TRANSFER], pagination: { next_page_token: 'eyJjIjoi…' } },
  },
  errors: [403, 502, 503],
  async handler({ input, services, upstream }) {
    const { client, address } = clientOf(services, input.chain, input.address);
    const tokens = services.capabilities.chains().pageTokens;
    const scope = tokenScope(input.chain, address);
    let cursor: HistoryCursor | undefined;
    const token = input.next_page_token?.trim();
    if (token) {
      const checked = await verifyToken(services, input.chain, address, token);
      if (typeof checked === 'string') throw httpErrors.fieldInvalid('next_page_token', checked === 'other_scope' ? CHAIN_MESSAGES.otherScope : CHAIN_MESSAGES.invalidToken);
      cursor = checked;
    }
    const page = await settle(client.transactions({ address, direction: input.direction, asset: input.asset, limit: input.limit, cursor }, upstream));
    return {
      body: {
        response: page.transfers,
        pagination: { next_page_token: page.next ? await tokens.sign(JSON.stringify(page.next), scope, 'next') : null },
      },
    };
  },
});

export const CHAIN_ENDPOINTS = [chainWalletEndpoint, chainTransactionsEndpoint];
