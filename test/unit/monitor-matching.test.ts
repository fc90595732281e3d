/** Matching transfers to monitors, and the monitors' stable event ids (src/monitors/matching.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BlockTransfer } from '../../src/adapters/chain/types.ts';
import { addressKey, matchTransfers, passesFilters, transferEventId, type MonitorFilter } from '../../src/monitors/matching.ts';

const A = '0xAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAaAa';
const B = '0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB';
const C = '0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC';

function transfer(overrides: Partial<BlockTransfer>): BlockTransfer {
  return {
    hash: `0x${'ab'.repeat(32)}`,
    block_number: 10,
    block_hash: `0x${'cd'.repeat(32)}`,
    log_index: 0,
    timestamp: '2026-11-26T00:00:00.000000Z',
    from: A,
    to: B,
    value: '1000',
    asset: { type: 'native', contract: null, symbol: 'ETH', decimals: 18 },
    fee: '1',
    status: 'success',
    ...overrides,
  };
}

const monitor = (id: string, addresses: string[], extra: Partial<MonitorFilter> = {}): MonitorFilter => ({
  id,
  addresses: new Set(addresses.map((a) => addressKey('evm', a))),
  asset: 'all',
  minValue: 0n,
  fromBlock: 0,
  ...extra,
});

test('addresses are matched case-insensitively on EVM and bech32, as written for base58', () => {
  assert.equal(addressKey('evm', A), A.toLowerCase());
  assert.equal(addressKey('bitcoin', 'BC1QAR0SRRR7XFKVY5L643LYDNW9RE59GTZZWF5MDQ'), 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq');
  assert.equal(addressKey('bitcoin', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2'), '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2');
});

test('each monitor gets one match per transfer, with its direction, in chain order', () => {
  const transfers = [transfer({ block_number: 11, log_index: 0, from: B, to: C }), transfer({ block_number: 10, log_index: 2 }), transfer({ block_number: 10, log_index: 1, from: A, to: A })];
  const matches = matchTransfers('evm', transfers, [monitor('m1', [A, B]), monitor('m2', [C]), monitor('m3', [A], { fromBlock: 11 })]);
  assert.deepEqual(
    matches.map((m) => [m.monitorId, m.transfer.block_number, m.transfer.log_index, m.direction, m.address]),
    [
      ['m1', 10, 1, 'self', A],
      ['m1', 10, 2, 'self', A],
      ['m1', 11, 0, 'out', B],
      ['m2', 11, 0, 'in', C],
    ],
  );
});

test('asset and min_value filters', () => {
  const token = { type: 'erc20' as const, contract: C, symbol: 'TST', decimals: 6 };
  assert.ok(passesFilters({ asset: 'token', minValue: 0n }, { asset: token, value: '1' }));
  assert.ok(!passesFilters({ asset: 'native', minValue: 0n }, { asset: token, value: '1' }));
  assert.ok(!passesFilters({ asset: 'token', minValue: 0n }, transfer({})));
  assert.ok(passesFilters({ asset: 'all', minValue: 1000n }, { asset: token, value: '1000' }));
  assert.ok(!passesFilters({ asset: 'all', minValue: 1001n }, { asset: token, value: '1000' }));
  assert.ok(passesFilters({ asset: 'all', minValue: 10n ** 30n }, { asset: token, value: (10n ** 31n).toString() }), 'values past 2^53 compare exactly');
});

test('event ids are UUIDs derived from (monitor, tx hash, log index, type, generation)', () => {
  const id = transferEventId('m1', `0x${'AB'.repeat(32)}`, 3, 'chain.transfer');
  assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.equal(id, transferEventId('m1', `0x${'ab'.repeat(32)}`, 3, 'chain.transfer'), 'the hash’s case does not count');
  const others = [
    transferEventId('m2', `0x${'ab'.repeat(32)}`, 3, 'chain.transfer'),
    transferEventId('m1', `0x${'ac'.repeat(32)}`, 3, 'chain.transfer'),
    transferEventId('m1', `0x${'ab'.repeat(32)}`, 4, 'chain.transfer'),
    transferEventId('m1', `0x${'ab'.repeat(32)}`, 3, 'chain.transfer_reverted'),
    transferEventId('m1', `0x${'ab'.repeat(32)}`, 3, 'chain.transfer', 1),
  ];
  assert.equal(new Set([id, ...others]).size, 6);
});
