/**
 * The daily address fee: `chain_address_day` credits per watched address per UTC day, taken at the
 * day's first poll of the monitor's chain, through the ledger (hold, then capture) as every charge.
 * Each try holds under its own id, `chain-day:<monitor>:<day>:<try>`; a capture under any of them
 * means the day is paid, so a follower that died between the capture and marking the day pays
 * nothing twice, and a try that died with its hold has it released by the next.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../storage/db.ts';
import type { CreditLedger } from '../credits/ledger.ts';
import { price, type Prices } from '../credits/prices.ts';
import { pauseForCredits } from './pause.ts';

export interface FeeDeps {
  db: Database;
  ledger: CreditLedger;
  prices: Prices;
  logger?: FastifyBaseLogger;
}

/** The UTC day of `now`, as YYYY-MM-DD. */
export function utcDay(now: Date): string {
  return now.toISOString().slice(0, 10);
}

export function dayFeePrefix(monitorId: string, day: string): string {
  return `chain-day:${monitorId}:${day}:`;
}

/** Takes today's fee of every active monitor of `chain` that has not paid it; pauses those that cannot. */
export async function collectDailyFees(deps: FeeDeps, chain: string, now = new Date()): Promise<number> {
  const { db, ledger, prices } = deps;
  const day = utcDay(now);
  const due = await db.query<{ id: string; user_id: number; addresses: number }>(
    `SELECT id, user_id::int AS user_id, cardinality(addresses) AS addresses FROM chain_monitors
      WHERE chain = $1 AND status = 'active' AND (billed_day IS NULL OR billed_day < $2::date)`,
    [chain, day],
  );
  if (due.length === 0) return 0;
  const unitPrice = price(await prices.current(), 'chain_address_day');
  let paused = 0;
  for (const monitor of due) {
    const cost = unitPrice * Number(monitor.addresses);
    const prefix = dayFeePrefix(monitor.id, day);
    const [{ captured }] = await db.query<{ captured: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM credit_ledger WHERE reference LIKE $1 AND kind = 'capture') AS captured`,
      [`${prefix}%`],
    );
    if (cost === 0 || captured) {
      await markPaid(db, monitor.id, day);
      continue;
    }
    const [{ tries }] = await db.query<{ tries: number }>('UPDATE chain_monitors SET fee_tries = fee_tries + 1 WHERE id = $1 RETURNING fee_tries AS tries', [monitor.id]);
    // The try before this one died holding: give its credits back first.
    if (tries > 1) await ledger.settle(`${prefix}${tries - 1}`, 0);
    const requestId = `${prefix}${tries}`;
    const held = await ledger.hold({ requestId, userId: monitor.user_id, product: 'blockchain', min: cost, max: cost });
    if (held === 0) {
      if (await pauseForCredits(db, monitor.id, `The balance cannot pay today's fee for ${monitor.addresses} watched addresses (${cost} credits).`)) paused++;
      continue;
    }
    // Paid before it is marked: a process dying in between leaves a capture the next try finds.
    await ledger.settle(requestId, held);
    await markPaid(db, monitor.id, day);
  }
  if (paused) deps.logger?.info({ chain, paused }, 'monitors paused: the balance cannot pay the daily fee');
  return paused;
}

async function markPaid(db: Database, monitorId: string, day: string): Promise<void> {
  await db.query('UPDATE chain_monitors SET billed_day = $2::date WHERE id = $1 AND (billed_day IS NULL OR billed_day < $2::date)', [monitorId, day]);
}
