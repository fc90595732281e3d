/**
 * Pausing a monitor, told to its receiver by a free `chain.monitor_paused` event in the same
 * commit: `paused_no_credits` when its owner's balance cannot pay, `paused` when the operator
 * stops it (`gleaner monitors pause`, `POST /admin/monitors/{monitor}/pause`).
 */
import type { Database } from '../storage/db.ts';
import { MONITOR_EVENT_TYPES } from './matching.ts';
import { MonitorStore, recordMonitorEvent, type MonitorRow } from './store.ts';

/** Pauses the monitor when it is active, with its event in the same commit; true when this call paused it. */
export async function pauseForCredits(db: Database, monitorId: string, reason: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const row = await new MonitorStore(tx).pause(tx, monitorId);
    if (!row) return false;
    await recordMonitorEvent(tx, {
      monitor: row,
      type: MONITOR_EVENT_TYPES.paused,
      data: { chain: row.chain, status: row.status, reason },
      billable: false,
    });
    return true;
  });
}

/** The operator's pause: any monitor not already `paused` (one paused for credits included); the row when this call paused it. */
export async function pauseByOperator(db: Database, monitorId: string): Promise<MonitorRow | undefined> {
  return db.transaction(async (tx) => {
    const row = await new MonitorStore(tx).pauseByOperator(tx, monitorId);
    if (!row) return undefined;
    await recordMonitorEvent(tx, {
      monitor: row,
      type: MONITOR_EVENT_TYPES.paused,
      data: { chain: row.chain, status: row.status, reason: 'Paused by the operator.' },
      billable: false,
    });
    return row;
  });
}
