/**
 * Wallet monitors (contract §10, docs/blockchain.md "Monitors"): a monitor watches up to 100
 * addresses of one chain and POSTs a signed event to its webhook for every transfer touching them,
 * once it has the monitor's confirmations. The rows create, read, resume and delete monitors;
 * the follower and the deliveries (src/monitors) do the work and the billing: 1 credit per event
 * delivered and 5 per watched address per UTC day (prices `chain_event`, `chain_address_day`),
 * never here.
 */
import { Type } from '@sinclair/typebox';
import { httpErrors, type FieldErrors } from '../core/errors.ts';
import { between, custom, httpUrlOrNull, integer, isAbsent, min, oneOf, required, string, stringList, urlMessage } from '../validation/rules.ts';
import { defineEndpoint, type HandlerServices } from '../pipeline/endpoint.ts';
import { CHAIN_NAMES, CHAINS, MAX_CONFIRMATIONS, type ChainName } from '../adapters/chain/chains.ts';
import { ChainCallError } from '../adapters/chain/client.ts';
import { isAddressOfKind, normalizeAddress } from '../adapters/chain/addresses.ts';
import { addressKey, MONITOR_ASSETS } from '../monitors/matching.ts';
import type { MonitorRow } from '../monitors/store.ts';

/** Watched addresses per monitor, deliveries per answer. */
export const MONITOR_LIMITS = { maxAddresses: 100, eventsPerPage: 100 } as const;
/** `min_value`: base units, a whole number that fits 256 bits. */
const MIN_VALUE = /^\d{1,78}$/;

const minValueRule = custom(
  'min_value',
  (value) => (typeof value === 'string' && MIN_VALUE.test(value.trim())) || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0),
  (attr) => `The ${attr} must be a whole number of base units (wei, satoshis, token units), 0 or more.`,
  { describe: (s) => void Object.assign(s, { type: 'string', pattern: '^\\d+$' }) },
);

const Monitor = Type.Object({
  id: Type.String(),
  chain: Type.String(),
  addresses: Type.Array(Type.String()),
  webhook_url: Type.String(),
  status: Type.String({ description: '`active`, `paused_no_credits` (the balance could not pay; PATCH it back to active) or `paused` (by the operator, who alone resumes it).' }),
  asset: Type.String({ description: '`native`, `token` or `all`.' }),
  min_value: Type.String({ description: 'Smallest value matched, in base units.' }),
  confirmations: Type.Integer({ description: 'Blocks on top of a transfer’s (its own included) before it is sent.' }),
  created_at: Type.String(),
});

const MonitorEvent = Type.Object({
  id: Type.String({ description: 'The event id (`Gleaner-Event-Id`).' }),
  type: Type.String({ description: '`chain.transfer`, `chain.transfer_reverted` or `chain.monitor_paused`.' }),
  status: Type.String({ description: '`pending`, `delivered` or `failed` (refused address, or 24 hours of failures).' }),
  attempts: Type.Integer(),
  last_status: Type.Union([Type.Integer(), Type.Null()], { description: 'The receiver’s last HTTP status, if it answered.' }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  delivered_at: Type.Union([Type.String(), Type.Null()]),
});

const monitorExample = {
  id: '5f0c1b8e-2a4d-4c6e-8f10-3b2a1c0d9e8f',
  chain: 'ethereum',
  addresses: ['0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045'],
  webhook_url: 'https://example.com/hooks/chain',
  status: 'active',
  asset: 'all',
  min_value: '0',
  confirmations: 12,
  created_at: '2026-11-26T10:00:00.123000Z',
};

export function monitorView(row: MonitorRow) {
  return {
    id: row.id,
    chain: row.chain,
    addresses: row.addresses,
    webhook_url: row.webhook_url,
    status: row.status,
    asset: row.asset,
    min_value: row.min_value,
    confirmations: row.confirmations,
    created_at: row.created_at,
  };
}

/** Contract §10's wording (`The address is not a valid <Chain> address.`), for each item of the list. */
const addressMessage = (chain: ChainName, index: number) => `The addresses.${index} is not a valid ${CHAINS[chain].label} address.`;

/**
 * Each address by its chain's rules (any of the chain's networks: which one is configured is
 * checked by the handler); errors keyed `addresses.<n>`, as Laravel keys array items.
 */
function checkAddresses(chain: unknown, addresses: unknown, errors: FieldErrors): void {
  if (typeof chain !== 'string' || !(CHAIN_NAMES as readonly string[]).includes(chain) || !Array.isArray(addresses)) return;
  const name = chain as ChainName;
  addresses.forEach((value, index) => {
    if (typeof value !== 'string' || !isAddressOfKind(CHAINS[name].kind, value.trim())) errors[`addresses.${index}`] = [addressMessage(name, index)];
  });
}

/** The caller's monitor of that id; another user's, or an unknown id, is 404. */
async function ownMonitor(services: HandlerServices, id: string, userId: number): Promise<MonitorRow> {
  const row = await services.jobs.monitors.store.get(id, userId);
  if (!row) throw httpErrors.notFound();
  return row;
}

const idField = { in: 'path' as const, rules: [required(), string()], description: 'The monitor id.', example: monitorExample.id };

export const createMonitorEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/chain/monitors',
  operationId: 'createChainMonitor',
  summary: 'Watch addresses of a chain',
  description: ({ credits }) =>
    `Watches 1 to ${MONITOR_LIMITS.maxAddresses} addresses from the next block on: every transfer touching one of them (native or token, filtered by \`asset\` and \`min_value\`) is POSTed to \`webhook_url\` as a signed \`chain.transfer\` event once it has \`confirmations\` blocks (the chain's finality by default). ${credits('chain_event')} per event delivered and ${credits('chain_address_day')} per watched address per UTC day; a balance that cannot pay pauses the monitor (\`paused_no_credits\`). 503 when the chain is not configured.`,
  tag: 'Blockchain',
  input: 'body',
  objectBody: true,
  schema: {
    fields: {
      chain: { rules: [required(), string(), oneOf(CHAIN_NAMES)], example: 'ethereum' },
      addresses: { rules: [required(), stringList(), between(1, MONITOR_LIMITS.maxAddresses)], description: 'Addresses in the chain’s own format.', example: monitorExample.addresses },
      webhook_url: { rules: [required(), string()], description: 'Where events are POSTed: http(s), a public address when each event is delivered.', example: monitorExample.webhook_url },
      asset: { rules: [string(), oneOf(MONITOR_ASSETS)], default: 'all', description: '`native` (the chain’s coin), `token` (ERC-20) or `all`.' },
      min_value: { rules: [minValueRule], description: 'Smallest transfer value matched, in base units. Default 0.', example: '1000000' },
      confirmations: { rules: [integer(), between(0, MAX_CONFIRMATIONS)], description: 'Blocks before a transfer is sent (its own included). Default: the chain’s finality.' },
    },
    refine(input, errors) {
      if (typeof input.webhook_url === 'string' && input.webhook_url.trim() !== '' && !httpUrlOrNull(input.webhook_url.trim())) {
        errors.webhook_url = [urlMessage('webhook url', input.webhook_url)];
      }
      checkAddresses(input.chain, input.addresses, errors);
    },
  },
  billing: { product: 'blockchain', operation: 'chain_address_day', units: () => 0 },
  history: true,
  success: { status: 201, description: 'The monitor, active.', schema: Monitor, example: monitorExample },
  errors: [403, 502, 503],
  async handler({ input, services, user, meter, upstream }) {
    const client = services.capabilities.chain(input.chain);
    if (!client) throw httpErrors.notConfigured();
    const chain = input.chain;
    const kind = CHAINS[chain].kind;
    const addresses: string[] = [];
    const keys: string[] = [];
    for (const [index, raw] of input.addresses.entries()) {
      // The configured network's form (a testnet address on a mainnet node is refused here).
      const address = normalizeAddress(client.info, raw.trim());
      if (address === null) throw httpErrors.fieldInvalid(`addresses.${index}`, addressMessage(chain, index));
      const key = addressKey(kind, address);
      if (keys.includes(key)) continue;
      addresses.push(address);
      keys.push(key);
    }
    // The first day's fee must be payable: a monitor that would pause at once is refused.
    if ((await meter.affordable()) < addresses.length) throw await meter.shortOf(addresses.length);
    let head: number;
    try {
      head = await client.head(upstream);
    } catch (error) {
      if (error instanceof ChainCallError) throw httpErrors.badGateway();
      throw error;
    }
    const row = await services.jobs.monitors.create({
      userId: user.id,
      chain,
      addresses,
      keys,
      webhookUrl: input.webhook_url.trim(),
      asset: input.asset,
      minValue: isAbsent(input.min_value) ? 0n : BigInt(String(input.min_value).trim()),
      confirmations: input.confirmations ?? client.info.confirmations,
      fromBlock: head + 1,
    });
    return { status: 201, body: monitorView(row) };
  },
});

export const listMonitorsEndpoint = defineEndpoint({
  method: 'GET',
  path: '/v1/chain/monitors',
  operationId: 'listChainMonitors',
  summary: 'Your wallet monitors',
  description: 'Every monitor of yours, oldest first.',
  tag: 'Blockchain',
  input: 'query',
  schema: { fields: {} },
  history: false,
  success: { status: 200, description: 'The monitors.', schema: Type.Object({ data: Type.Array(Monitor) }), example: { data: [monitorExample] } },
  async handler({ services, user }) {
    return { body: { data: (await services.jobs.monitors.store.list(user.id)).map(monitorView) } };
  },
});

export const getMonitorEndpoint = defineEndpoint({
  method: 'GET',
  path: '/v1/chain/monitors/{id}',
  operationId: 'getChainMonitor',
  summary: 'A wallet monitor',
  description: 'The monitor; another user’s or an unknown id is 404.',
  tag: 'Blockchain',
  input: 'query',
  schema: { fields: { id: idField } },
  history: false,
  success: { status: 200, description: 'The monitor.', schema: Monitor, example: monitorExample },
  errors: [404],
  handler: async ({ input, services, user }) => ({ body: monitorView(await ownMonitor(services, input.id, user.id)) }),
});

export const resumeMonitorEndpoint = defineEndpoint({
  method: 'PATCH',
  path: '/v1/chain/monitors/{id}',
  operationId: 'resumeChainMonitor',
  summary: 'Resume a paused monitor',
  description:
    '`{"status":"active"}` resumes a monitor paused for want of credits: its waiting events are delivered, oldest first, and it watches new blocks again (transfers mined while it was paused are not sent). 403 when the balance cannot pay one event; 409 when the operator paused it (only the operator resumes it).',
  tag: 'Blockchain',
  input: 'body',
  objectBody: true,
  schema: { fields: { id: idField, status: { rules: [required(), string(), oneOf(['active'] as const)], description: 'Only `active`.', example: 'active' } } },
  billing: { product: 'blockchain', operation: 'chain_event', units: () => 0 },
  history: true,
  success: { status: 200, description: 'The monitor as it is now.', schema: Monitor, example: monitorExample },
  errors: [403, 404, 409],
  async handler({ input, services, user, meter }) {
    const row = await ownMonitor(services, input.id, user.id);
    if (row.status === 'active') return { body: monitorView(row) };
    if (row.status === 'paused') throw httpErrors.conflict('This monitor was paused by the operator.');
    if ((await meter.affordable()) < 1) throw await meter.shortOf(1);
    const resumed = await services.jobs.monitors.resume(row.id, user.id);
    if (!resumed) throw httpErrors.notFound();
    return { body: monitorView(resumed) };
  },
});

export const deleteMonitorEndpoint = defineEndpoint({
  method: 'DELETE',
  path: '/v1/chain/monitors/{id}',
  operationId: 'deleteChainMonitor',
  summary: 'Delete a wallet monitor',
  description: 'Stops watching at once; events not delivered yet are dropped, and nothing more is billed.',
  tag: 'Blockchain',
  input: 'query',
  schema: { fields: { id: idField } },
  history: true,
  success: { status: 200, description: 'Deleted.', schema: Type.Object({ id: Type.String(), deleted: Type.Boolean() }), example: { id: monitorExample.id, deleted: true } },
  errors: [404],
  async handler({ input, services, user }) {
    if (!(await services.jobs.monitors.delete(input.id, user.id))) throw httpErrors.notFound();
    return { body: { id: input.id, deleted: true } };
  },
});

export const monitorEventsEndpoint = defineEndpoint({
  method: 'GET',
  path: '/v1/chain/monitors/{id}/events',
  operationId: 'listChainMonitorEvents',
  summary: 'A monitor’s deliveries',
  description: `The monitor’s events, newest first, ${MONITOR_LIMITS.eventsPerPage} per answer, each with its delivery status, attempts and last error. Kept 7 days.`,
  tag: 'Blockchain',
  input: 'query',
  schema: {
    fields: {
      id: idField,
      skip: { rules: [integer(), min(0)], default: 0, description: 'Events to skip (what `next` sets).' },
    },
  },
  history: false,
  success: {
    status: 200,
    description: 'The deliveries.',
    schema: Type.Object({ data: Type.Array(MonitorEvent), next: Type.Union([Type.String(), Type.Null()]) }),
    example: {
      data: [{ id: '0f8e7d6c-5b4a-5c3d-9e2f-1a0b9c8d7e6f', type: 'chain.transfer', status: 'delivered', attempts: 1, last_status: 204, last_error: null, created_at: '2026-11-26T10:01:00.000000Z', delivered_at: '2026-11-26T10:01:00.250000Z' }],
      next: null,
    },
  },
  errors: [404],
  async handler({ input, services, user, routeUrl }) {
    const monitors = services.jobs.monitors;
    const row = await monitors.store.get(input.id, user.id);
    if (!row) throw httpErrors.notFound();
    const events = await monitors.store.events(row.id, input.skip, MONITOR_LIMITS.eventsPerPage + 1);
    const data = events.slice(0, MONITOR_LIMITS.eventsPerPage);
    const next = events.length > data.length ? `${routeUrl.replace('{id}', row.id)}?skip=${input.skip + data.length}` : null;
    return { body: { data, next } };
  },
});

export const CHAIN_MONITOR_ENDPOINTS = [createMonitorEndpoint, listMonitorsEndpoint, getMonitorEndpoint, resumeMonitorEndpoint, deleteMonitorEndpoint, monitorEventsEndpoint];
