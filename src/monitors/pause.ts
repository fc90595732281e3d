/**
 * Pausing a monitor, told to its receiver by a free `chain.monitor_paused` event in the same
 * commit: `paused_no_credits` when its owner's balance cannot pay, `paused` when the operator
 * stops it (`gleaner monitors pause`, `POST /admin/monitors/{monitor}/pause`).
 */
import type { Database, Queryable } from '../storage/db.ts';
import { MONITOR_EVENT_TYPES } from './matching.ts';
import { MonitorStore, recordMonitorEvent, type MonitorRow } from './store.ts';

/** Pauses the monitor when it is active, with its event in the same commit; true when this call paused it. */
export async function pauseForCredits(db: Database, monitorId: string, reason: string): Promise<boolean> {
  return (await pauseWithEvent(db, reason, (store, tx) => store.pause(tx, monitorId))) !== undefined;
}

/** The operator's pause: any monitor not already `paused` (one paused for credits included); the row when this call paused it. */
export async function pauseByOperator(db: Database, monitorId: string): Promise<MonitorRow | undefined> {
  return pauseWithEvent(db, 'Paused by the operator.', (store, tx) => store.pauseByOperator(tx, monitorId));
}

/** Runs `pause`, and records the free `chain.monitor_paused` event in the same commit when it paused the monitor. */
async function pauseWithEvent(db: Database, reason: string, pause: (store: MonitorStore, tx: Queryable) => Promise<MonitorRow | undefined>): Promise<MonitorRow | undefined> {
  return db.transaction(async (tx) => {
    const row = await pause(new MonitorStore(tx), tx);
    if (!row) return undefined;
    await recordMonitorEvent(tx, {
      monitor: row,
      type: MONITOR_EVENT_TYPES.paused,
      data: { chain: row.chain, status: row.status, reason },
      billable: false,
    });
    return row;
  });
}
