/**
 * Which monitors a transfer concerns, and the ids of the events it gives (docs/blockchain.md,
 * "Monitors"). Pure: the follower reads a block's transfers once and matches them here against
 * every active monitor of the chain.
 */
import { createHash } from 'node:crypto';
import type { BlockTransfer, ChainKind } from '../adapters/chain/types.ts';

export const MONITOR_ASSETS = ['native', 'token', 'all'] as const;
export type MonitorAsset = (typeof MONITOR_ASSETS)[number];

export const MONITOR_EVENT_TYPES = {
  transfer: 'chain.transfer',
  reverted: 'chain.transfer_reverted',
  paused: 'chain.monitor_paused',
} as const;

/** What a monitor matches on, as the follower loads it. */
export interface MonitorFilter {
  id: string;
  /** Matching form of its addresses (see `addressKey`). */
  addresses: ReadonlySet<string>;
  asset: MonitorAsset;
  /** Base units; 0 matches everything. */
  minValue: bigint;
  fromBlock: number;
}

export interface Match {
  monitorId: string;
  transfer: BlockTransfer;
  /** `in`: to a watched address; `out`: from one; `self`: both ends watched. */
  direction: 'in' | 'out' | 'self';
  /** The watched end (the sender when both are). */
  address: string;
}

/**
 * The form an address is matched in. EVM addresses and Bitcoin's bech32 ones are case-insensitive,
 * so they are lowercased; base58 Bitcoin addresses are case-sensitive and kept as they are.
 */
export function addressKey(kind: ChainKind, address: string): string {
  const trimmed = address.trim();
  if (kind === 'evm') return trimmed.toLowerCase();
  return /^(bc|tb|bcrt)1/i.test(trimmed) ? trimmed.toLowerCase() : trimmed;
}

/** Whether `transfer` passes a monitor's asset and value filters. */
export function passesFilters(filter: Pick<MonitorFilter, 'asset' | 'minValue'>, transfer: Pick<BlockTransfer, 'asset' | 'value'>): boolean {
  if (filter.asset === 'native' && transfer.asset.type !== 'native') return false;
  if (filter.asset === 'token' && transfer.asset.type === 'native') return false;
  if (filter.minValue > 0n) {
    let value: bigint;
    try {
      value = BigInt(transfer.value);
    } catch {
      return false;
    }
    if (value < filter.minValue) return false;
  }
  return true;
}

/**
 * Every (monitor, transfer) pair the transfers give, in chain order (block, then position): one
 * match per monitor even when both ends of a transfer are watched by it.
 */
export function matchTransfers(kind: ChainKind, transfers: readonly BlockTransfer[], monitors: readonly MonitorFilter[]): Match[] {
  const byAddress = new Map<string, MonitorFilter[]>();
  for (const monitor of monitors) {
    for (const address of monitor.addresses) {
      let list = byAddress.get(address);
      if (!list) byAddress.set(address, (list = []));
      list.push(monitor);
    }
  }
  const ordered = [...transfers].sort((a, b) => a.block_number - b.block_number || a.log_index - b.log_index);
  const matches: Match[] = [];
  for (const transfer of ordered) {
    const from = addressKey(kind, transfer.from ?? '');
    const to = addressKey(kind, transfer.to ?? '');
    const seen = new Set<string>();
    for (const monitor of [...(byAddress.get(from) ?? []), ...(byAddress.get(to) ?? [])]) {
      if (seen.has(monitor.id)) continue;
      seen.add(monitor.id);
      if (transfer.block_number < monitor.fromBlock || !passesFilters(monitor, transfer)) continue;
      const sends = monitor.addresses.has(from);
      const receives = monitor.addresses.has(to);
      matches.push({ monitorId: monitor.id, transfer, direction: sends && receives ? 'self' : sends ? 'out' : 'in', address: sends ? transfer.from : transfer.to });
    }
  }
  return matches;
}

/**
 * The id of a transfer's event for one monitor: the same whoever computes it and however often
 * (a follower that restarts, a second process), so a receiver can drop repeats. A transfer mined
 * again after it was reverted counts its generation in, so its new events get new ids.
 */
export function transferEventId(monitorId: string, txHash: string, logIndex: number, type: string, generation = 0): string {
  const name = [monitorId, txHash.toLowerCase(), String(logIndex), type, ...(generation > 0 ? [String(generation)] : [])].join('\n');
  const bytes = createHash('sha256').update(name).digest().subarray(0, 16);
  // Shaped as a name-based UUID (version 5 bits, RFC 4122 variant), as every other event id is a UUID.
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
