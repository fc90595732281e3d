/** Pausing a monitor its owner's balance cannot pay: `paused_no_credits`, told by a free `chain.monitor_paused` event. */
import type { Database } from '../storage/db.ts';
import { MONITOR_EVENT_TYPES } from './matching.ts';
import { MonitorStore, recordMonitorEvent } from './store.ts';

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
