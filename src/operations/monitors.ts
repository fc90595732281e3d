/**
 * Wallet monitors as the operator sees them, every user's: list, show (with its deliveries),
 * pause, resume. Read and changed through the tables alone, so the command line can do it from
 * another process: the follower matches new blocks for active monitors only and the deliveries
 * send a paused monitor's paid events only once it is active again (both read the status at each
 * step), so no process needs to be told.
 */
import { CHAIN_NAMES } from '../adapters/chain/chains.ts';
import { isoMicros } from '../core/time.ts';
import { pauseByOperator } from '../monitors/pause.ts';
import { MONITOR_STATUSES, MonitorStore, type MonitorEventView, type MonitorRow, type MonitorStatus } from '../monitors/store.ts';
import { OperationError } from './errors.ts';
import { filterIssue, idIssue, notOneOfIssue, oneOfIssue, ownedBy, wholeNumberIssue } from './rules.ts';
import { requireUser } from './users.ts';
import type { OperationStores } from './stores.ts';

export const DEFAULT_MONITOR_LIST_LIMIT = 50;
export const MAX_MONITOR_LIST_LIMIT = 500;
/** The newest deliveries `show` lists. */
export const MONITOR_SHOW_EVENTS = 20;

export interface MonitorListRow {
  id: string;
  user: number;
  chain: string;
  status: MonitorStatus;
  /** How many addresses it watches. */
  addresses: number;
  webhook_url: string;
  asset: MonitorRow['asset'];
  min_value: string;
  confirmations: number;
  from_block: number;
  created_at: string;
  updated_at: string;
}

export interface MonitorDetail extends Omit<MonitorListRow, 'addresses'> {
  addresses: string[];
  /** The last block the chain's follower processed (every monitor of the chain shares it); null before its first step. */
  processed_block: number | null;
  /** Its events by delivery state (kept 7 days). */
  events: Record<'pending' | 'delivered' | 'failed', number>;
  /** The newest deliveries, newest first. */
  recent_events: MonitorEventView[];
}

const noMonitor = (monitor: string) => OperationError.notFound(`There is no monitor ${monitor}.`);

function listRow(row: MonitorRow): MonitorListRow {
  return {
    ...ownedBy(row),
    chain: row.chain,
    status: row.status,
    addresses: row.addresses.length,
    webhook_url: row.webhook_url,
    asset: row.asset,
    min_value: row.min_value,
    confirmations: row.confirmations,
    from_block: row.from_block,
    created_at: isoMicros(row.created_at),
    updated_at: isoMicros(row.updated_at),
  };
}

const statusIssue = (value: unknown) => (typeof value === 'string' ? oneOfIssue('status', value, MONITOR_STATUSES) : notOneOfIssue('status', MONITOR_STATUSES));
const chainIssue = (value: unknown) => (typeof value === 'string' ? oneOfIssue('chain', value, CHAIN_NAMES) : notOneOfIssue('chain', CHAIN_NAMES));

/** Newest first; `user`, `chain` and `status` narrow it. */
export async function listMonitors(
  stores: OperationStores,
  input: { user?: number; chain?: string; status?: MonitorStatus; limit?: number } = {},
): Promise<MonitorListRow[]> {
  OperationError.throwIfAny([
    filterIssue('user', input.user, (value) => idIssue('user', value)),
    filterIssue('chain', input.chain, chainIssue),
    filterIssue('status', input.status, statusIssue),
    filterIssue('limit', input.limit, (value) => wholeNumberIssue('limit', value, 1, MAX_MONITOR_LIST_LIMIT)),
  ]);
  const user = input.user === undefined ? undefined : await requireUser(stores, input.user);
  const rows = await new MonitorStore(stores.db).listAll({ userId: user, chain: input.chain, status: input.status, limit: input.limit ?? DEFAULT_MONITOR_LIST_LIMIT });
  return rows.map(listRow);
}

/** One monitor, whoever it belongs to, with its addresses, where its chain is read, and its deliveries. */
export async function showMonitor(stores: OperationStores, input: { monitor: string }): Promise<MonitorDetail> {
  const store = new MonitorStore(stores.db);
  const row = await store.get(input.monitor);
  if (!row) throw noMonitor(input.monitor);
  const [summary, recent] = await Promise.all([store.summary(row.id), store.events(row.id, 0, MONITOR_SHOW_EVENTS)]);
  return { ...listRow(row), addresses: row.addresses, processed_block: summary.processed_block, events: summary.events, recent_events: recent };
}

/**
 * Pauses a monitor (`paused`, one paused for want of credits included): new blocks are not
 * matched for it and its paid events wait; its receiver is told by a free `chain.monitor_paused`
 * event. Only the operator resumes it. A monitor already paused by the operator is answered as it is.
 */
export async function pauseMonitor(stores: OperationStores, input: { monitor: string }): Promise<{ id: string; status: MonitorStatus }> {
  const row = await new MonitorStore(stores.db).get(input.monitor);
  if (!row) throw noMonitor(input.monitor);
  const paused = await pauseByOperator(stores.db, row.id);
  if (paused) return { id: paused.id, status: paused.status };
  // Paused meanwhile, or deleted by its owner.
  const now = await new MonitorStore(stores.db).get(row.id);
  if (!now) throw noMonitor(input.monitor);
  return { id: now.id, status: now.status };
}

/**
 * Resumes a paused monitor, whichever way it was paused: its waiting events are delivered in
 * order, and new blocks are matched again (transfers mined while it was paused are not sent). An
 * active monitor is answered as it is. One whose owner still cannot pay is paused again by its
 * next charge, as for any monitor.
 */
export async function resumeMonitor(stores: OperationStores, input: { monitor: string }): Promise<{ id: string; status: MonitorStatus }> {
  const store = new MonitorStore(stores.db);
  const row = await store.get(input.monitor);
  if (!row) throw noMonitor(input.monitor);
  const resumed = await store.resumeByOperator(row.id);
  if (resumed) return { id: resumed.id, status: resumed.status };
  const now = await store.get(row.id);
  if (!now) throw noMonitor(input.monitor);
  return { id: now.id, status: now.status };
}
