/**
 * Address checks per chain kind (contract §10).
 *
 * - EVM: `0x` + 40 hex digits; a mixed-case address must carry a valid EIP-55 checksum (an
 *   all-lowercase or all-uppercase one has none to check). Answered checksummed (viem).
 * - Bitcoin: base58check P2PKH and P2SH (version bytes 0x00/0x05 on mainnet, 0x6f/0xc4 on the
 *   test networks), and segwit bech32 (BIP-173, witness version 0, programs of 20 or 32 bytes) or
 *   bech32m (BIP-350, versions 1 to 16, programs of 2 to 40 bytes; taproot is version 1 with 32),
 *   with the network's prefix (bc, tb, bcrt). bech32 codecs from @scure/base; an address is
 *   answered in lowercase when bech32 (its canonical form), as given when base58.
 */
import { createHash } from 'node:crypto';
import { base58, bech32, bech32m } from '@scure/base';
import { getAddress, isAddress } from 'viem';
import type { BitcoinNetwork, ChainSettings } from './chains.ts';
import type { ChainKind } from './types.ts';

/** The EIP-55 form of a valid EVM address, or null. */
export function normalizeEvmAddress(value: string): string | null {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) return null;
  const body = value.slice(2);
  // No checksum to check in one case: lowercase or uppercase alike.
  if (body === body.toLowerCase() || body === body.toUpperCase()) return getAddress(value.toLowerCase());
  return isAddress(value, { strict: true }) ? value : null;
}

/** The networks a Bitcoin address can belong to ("testnet" and "signet" share their forms). */
export type AddressNetworks = readonly BitcoinNetwork[];

const TEST_NETWORKS: AddressNetworks = ['testnet', 'signet', 'regtest'];

export interface BitcoinAddress {
  address: string;
  type: 'p2pkh' | 'p2sh' | 'segwit';
  networks: AddressNetworks;
}

function sha256(bytes: Uint8Array): Buffer {
  return createHash('sha256').update(bytes).digest();
}

function base58check(value: string): Uint8Array | null {
  let bytes: Uint8Array;
  try {
    bytes = base58.decode(value);
  } catch {
    return null;
  }
  if (bytes.length < 5) return null;
  const payload = bytes.subarray(0, -4);
  const checksum = sha256(sha256(payload)).subarray(0, 4);
  return Buffer.from(bytes.subarray(-4)).equals(checksum) ? payload : null;
}

const BASE58_VERSIONS: Record<number, Omit<BitcoinAddress, 'address'>> = {
  0x00: { type: 'p2pkh', networks: ['mainnet'] },
  0x05: { type: 'p2sh', networks: ['mainnet'] },
  0x6f: { type: 'p2pkh', networks: TEST_NETWORKS },
  0xc4: { type: 'p2sh', networks: TEST_NETWORKS },
};

const PREFIXES: Record<string, AddressNetworks> = { bc: ['mainnet'], tb: ['testnet', 'signet'], bcrt: ['regtest'] };

/** What a Bitcoin address is and which networks it belongs to; null when it is none. */
export function parseBitcoinAddress(value: string): BitcoinAddress | null {
  if (value.length < 14 || value.length > 90) return null;
  if (/^[13mn2][1-9A-HJ-NP-Za-km-z]{25,34}$/.test(value)) {
    const payload = base58check(value);
    if (!payload || payload.length !== 21) return null;
    const kind = BASE58_VERSIONS[payload[0]!];
    return kind ? { address: value, ...kind } : null;
  }
  // bech32 is one case or the other, never mixed (BIP-173).
  if (value !== value.toLowerCase() && value !== value.toUpperCase()) return null;
  const lower = value.toLowerCase();
  const separator = lower.lastIndexOf('1');
  if (separator < 1) return null;
  const networks = PREFIXES[lower.slice(0, separator)];
  if (!networks) return null;
  // The checksum constant says which encoding it is; the witness version must match it.
  const decoded = bech32.decodeUnsafe(lower, 90) ?? undefined;
  const decodedM = decoded ? undefined : (bech32m.decodeUnsafe(lower, 90) ?? undefined);
  const words = (decoded ?? decodedM)?.words;
  if (!words || words.length === 0) return null;
  const version = words[0]!;
  if (version > 16) return null;
  if ((version === 0) !== (decoded !== undefined)) return null;
  const program = (decoded ? bech32 : bech32m).fromWordsUnsafe(words.slice(1));
  if (!program || program.length < 2 || program.length > 40) return null;
  if (version === 0 && program.length !== 20 && program.length !== 32) return null;
  return { address: lower, type: 'segwit', networks };
}

/**
 * The address in the form the chain's answers use (EIP-55, lowercase bech32), or null when it is
 * not an address of this chain (a Bitcoin address of another network included).
 */
export function normalizeAddress(chain: Pick<ChainSettings, 'kind' | 'network'>, value: string): string | null {
  if (chain.kind === 'evm') return normalizeEvmAddress(value);
  const parsed = parseBitcoinAddress(value);
  if (!parsed) return null;
  return parsed.networks.includes(chain.network ?? 'mainnet') ? parsed.address : null;
}

/** An address of this kind of chain on any of its networks: what a request's rule can check before the settings are known. */
export function isAddressOfKind(kind: ChainKind, value: string): boolean {
  return kind === 'evm' ? normalizeEvmAddress(value) !== null : parseBitcoinAddress(value) !== null;
}
