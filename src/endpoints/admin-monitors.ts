/**
 * Every user's wallet monitors, for an owner account's token (src/operations/monitors.ts):
 * `gleaner monitors list|show|pause|resume` are the same operations on the command line.
 * Unbilled, not recorded in history. An unknown monitor is 404 `Not found.`, as a user's own
 * monitor routes answer it.
 */
import { Type } from '@sinclair/typebox';
import { integer, max, min, oneOf, required, string } from '../validation/rules.ts';
import { field } from '../validation/schema.ts';
import { CHAIN_NAMES } from '../adapters/chain/chains.ts';
import { MONITOR_STATUSES } from '../monitors/store.ts';
import type { Endpoint } from '../pipeline/endpoint.ts';
import { DEFAULT_MONITOR_LIST_LIMIT, listMonitors, MAX_MONITOR_LIST_LIMIT, pauseMonitor, resumeMonitor, showMonitor } from '../operations/monitors.ts';
import { admin, adminRecordRows, deliveryAttempts, filled, literals, nullable, timestamp, userFilter } from './admin.ts';

const status = literals(MONITOR_STATUSES, '`active`, `paused_no_credits` (its owner’s balance could not pay; the owner resumes it) or `paused` (by the operator, who alone resumes it).');

const monitorFields = {
  id: Type.String({ description: 'The monitor id (a UUID).' }),
  user: Type.Integer({ description: 'The user the monitor belongs to.' }),
  chain: Type.String(),
  status,
  webhook_url: Type.String(),
  asset: Type.String({ description: '`native`, `token` or `all`.' }),
  min_value: Type.String({ description: 'Smallest value matched, in base units.' }),
  confirmations: Type.Integer(),
  from_block: Type.Integer({ description: 'The first block it watches.' }),
  created_at: timestamp,
  updated_at: timestamp,
};

const MonitorRow = Type.Object({ ...monitorFields, addresses: Type.Integer({ description: 'How many addresses it watches.' }) });

const MonitorEvent = Type.Object({
  id: Type.String({ description: 'The event id (`Gleaner-Event-Id`).' }),
  type: Type.String({ description: '`chain.transfer`, `chain.transfer_reverted` or `chain.monitor_paused`.' }),
  status: literals(['pending', 'delivered', 'failed'] as const, '`pending` (due or being retried), `delivered` (answered 2xx) or `failed` (given up).'),
  ...deliveryAttempts,
});

const MonitorDetail = Type.Object({
  ...monitorFields,
  addresses: Type.Array(Type.String(), { description: 'The watched addresses, in the chain’s form.' }),
  processed_block: nullable(Type.Integer(), 'The last block the chain’s follower processed (shared by every monitor of the chain); null before its first step.'),
  events: Type.Object({ pending: Type.Integer(), delivered: Type.Integer(), failed: Type.Integer() }, { description: 'Its events by delivery state (kept 7 days).' }),
  recent_events: Type.Array(MonitorEvent, { description: 'The newest 20 deliveries, newest first.' }),
});

const monitorExample = {
  id: '5f0c1b8e-2a4d-4c6e-8f10-3b2a1c0d9e8f',
  user: 2,
  chain: 'ethereum',
  status: 'active',
  addresses: 1,
  webhook_url: 'https://example.com/hooks/chain',
  asset: 'all',
  min_value: '0',
  confirmations: 12,
  from_block: 21_000_000,
  created_at: '2026-11-26T10:00:00.123000Z',
  updated_at: '2026-11-26T10:00:00.123000Z',
};

const monitorParam = field({ in: 'path', rules: [required(), string()], description: 'The monitor id (a UUID).', example: monitorExample.id });

const listFields = {
  user: userFilter,
  chain: field({ rules: [filled(), string(), oneOf(CHAIN_NAMES)], description: 'Only monitors of this chain.', example: 'ethereum' }),
  status: field({ rules: [filled(), string(), oneOf(MONITOR_STATUSES)], description: 'Only monitors in this status.', example: 'paused_no_credits' }),
  limit: field({ rules: [filled(), integer(), min(1), max(MAX_MONITOR_LIST_LIMIT)], default: DEFAULT_MONITOR_LIST_LIMIT, description: 'Monitors at most.', example: 20 }),
};

const statusChange = (action: 'pause' | 'resume') =>
  admin({
    method: 'POST',
    path: `/admin/monitors/{monitor}/${action}`,
    summary: action === 'pause' ? 'Pause a monitor' : 'Resume a monitor',
    description:
      action === 'pause'
        ? 'Pauses any user’s monitor (`paused`; one paused for want of credits too): new blocks are not matched for it and its paid events wait; its receiver is told by a free `chain.monitor_paused` event. Only the operator resumes it; its owner’s `PATCH` answers 409. A monitor already paused by the operator is answered as it is.'
        : 'Resumes a paused monitor, whichever way it was paused: its waiting events are delivered in order and new blocks are matched again (transfers mined while it was paused are not sent). An active monitor is answered as it is.',
    input: 'query',
    fields: { monitor: monitorParam },
    answer: 'The monitor’s status now.',
    schema: Type.Object({ id: Type.String(), status }),
    example: { id: monitorExample.id, status: action === 'pause' ? 'paused' : 'active' },
    errors: [404],
    ownRouteNotFound: true,
    handler: ({ input, stores }) => (action === 'pause' ? pauseMonitor : resumeMonitor)(stores, input),
  });

export const ADMIN_MONITOR_ENDPOINTS: readonly Endpoint[] = [
  ...adminRecordRows({
    path: '/admin/monitors',
    key: 'monitor',
    list: {
      summary: 'List wallet monitors',
      description: "Every user's wallet monitors, newest first; `user`, `chain` and `status` narrow the list. A field the route does not take is a 422.",
      fields: listFields,
      answer: 'The monitors.',
      row: MonitorRow,
      example: monitorExample,
      read: listMonitors,
    },
    show: {
      summary: 'A wallet monitor',
      description: 'Any user’s monitor, with its addresses, the block its chain’s follower has processed, its events by delivery state and its newest deliveries.',
      fields: { monitor: monitorParam },
      answer: 'The monitor.',
      detail: MonitorDetail,
      example: {
        ...monitorExample,
        addresses: ['0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045'],
        processed_block: 21_000_420,
        events: { pending: 0, delivered: 3, failed: 0 },
        recent_events: [],
      },
      read: showMonitor,
    },
  }),
  statusChange('pause'),
  statusChange('resume'),
];
