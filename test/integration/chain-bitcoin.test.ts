/**
 * /v1/chain/wallet and /v1/chain/transactions on Bitcoin, through the real server, against an
 * Esplora fake on loopback (test/support/esplora-fake.ts) whose chain the test builds: a coinbase
 * paid to the watched address, payments to and from bech32, P2SH, P2PKH and taproot addresses, a
 * transaction with 50 inputs, and a block of 31 transactions (two pages of Esplora's block listing).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { startEsploraFake, type EsploraFake } from '../support/esplora-fake.ts';
import { COINBASE } from '../../src/adapters/chain/bitcoin/esplora.ts';

const WATCHED = 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq';
const P2SH = '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy';
const P2PKH = '1A1zP1eP5QGefi2DMPTfTL5SLmv7DivfNa';
const TAPROOT = 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0';
const MINER = 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4';
const COIN = 100_000_000;

let esplora: EsploraFake;
let service: TestService;

/** The watched address's movements, newest first, as the test made them. */
const expected: { txid: string; direction: 'in' | 'out'; counterparty: string; value: number; fee: number; height: number }[] = [];
let funded = 0;
let spent = 0;

before(async () => {
  esplora = await startEsploraFake();
  const reward = (to: string) => ({ outputs: [{ address: to, value: 50 * COIN }] });
  const [genesis] = esplora.mine([reward(MINER)]);
  // Block 1: the watched address mines a block.
  const [coinbase1] = esplora.mine([{ outputs: [{ address: WATCHED, value: 6.25 * COIN }, { address: null, value: 0, type: 'op_return' }] }]);
  expected.unshift({ txid: coinbase1!, direction: 'in', counterparty: COINBASE, value: 6.25 * COIN, fee: 0, height: 1 });
  // Block 2: the miner pays the watched address and a P2SH address, with change.
  const [coinbase2, payment] = esplora.mine([
    reward(MINER),
    { inputs: [{ txid: genesis!, vout: 0 }], outputs: [{ address: WATCHED, value: 1 * COIN }, { address: P2SH, value: 2 * COIN }, { address: MINER, value: 46.999 * COIN }], fee: 100_000 },
  ]);
  expected.unshift({ txid: payment!, direction: 'in', counterparty: MINER, value: 1 * COIN, fee: 100_000, height: 2 });
  // Block 3: the watched address spends both its coins to a P2PKH address, change back to itself.
  const [, spend] = esplora.mine([
    reward(MINER),
    { inputs: [{ txid: coinbase1!, vout: 0 }, { txid: payment!, vout: 0 }], outputs: [{ address: P2PKH, value: 3 * COIN }, { address: WATCHED, value: 4.2499 * COIN }], fee: 10_000 },
  ]);
  expected.unshift({ txid: spend!, direction: 'out', counterparty: P2PKH, value: 3 * COIN, fee: 10_000, height: 3 });
  // Block 4: a fan-out to 80 taproot outputs.
  const [, fanout] = esplora.mine([
    reward(MINER),
    { inputs: [{ txid: coinbase2!, vout: 0 }], outputs: [...Array.from({ length: 80 }, () => ({ address: TAPROOT, value: 0.1 * COIN })), { address: MINER, value: 41.99 * COIN }], fee: 1_000_000 },
  ]);
  // Block 5: 50 inputs in one transaction, to the watched address.
  const [, consolidation] = esplora.mine([
    reward(MINER),
    { inputs: Array.from({ length: 50 }, (_, vout) => ({ txid: fanout!, vout })), outputs: [{ address: WATCHED, value: 4.99 * COIN }], fee: 1_000_000 },
  ]);
  expected.unshift({ txid: consolidation!, direction: 'in', counterparty: TAPROOT, value: 4.99 * COIN, fee: 1_000_000, height: 5 });
  // Block 6: the P2SH address pays the watched one.
  const [, fromP2sh] = esplora.mine([
    reward(MINER),
    { inputs: [{ txid: payment!, vout: 1 }], outputs: [{ address: WATCHED, value: 1.5 * COIN }, { address: P2SH, value: 0.4999 * COIN }], fee: 10_000 },
  ]);
  expected.unshift({ txid: fromP2sh!, direction: 'in', counterparty: P2SH, value: 1.5 * COIN, fee: 10_000, height: 6 });
  // Block 7: 30 payments to the watched address, 31 transactions with the coinbase.
  const small = Array.from({ length: 30 }, (_, index) => ({ inputs: [{ txid: fanout!, vout: 50 + index }], outputs: [{ address: WATCHED, value: 0.09 * COIN }], fee: 1_000_000 }));
  const [, ...smallIds] = esplora.mine([reward(MINER), ...small]);
  for (const txid of smallIds) expected.unshift({ txid, direction: 'in', counterparty: TAPROOT, value: 0.09 * COIN, fee: 1_000_000, height: 7 });
  // Within one block Esplora lists a address's transactions newest (last) first, as `expected` has them.

  funded = 6.25 * COIN + 1 * COIN + 4.2499 * COIN + 4.99 * COIN + 1.5 * COIN + 30 * 0.09 * COIN;
  spent = 6.25 * COIN + 1 * COIN;

  service = await startTestService({ CHAIN_ESPLORA_BITCOIN: esplora.url, UPSTREAM_SUSPEND_MS: '0', CHAIN_TIMEOUT_MS: '5000' });
});

after(async () => {
  await service?.close();
  await esplora?.close();
});

const balance = (id: number) => service.services.ledger.balance(id, 'blockchain');
const transactions = (token: string, body: Record<string, unknown>) => service.call('POST', '/v1/chain/transactions', { token, body: { chain: 'bitcoin', address: WATCHED, ...body } });

describe('bitcoin wallet', () => {
  test('balance, count and last activity from the address statistics; no tokens; 5 credits', async () => {
    const user = await service.user({ blockchain: 100 });
    const response = await service.call('POST', '/v1/chain/wallet', { token: user.token, body: { chain: 'bitcoin', address: WATCHED.toUpperCase() } });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual(response.body.response, {
      chain: 'bitcoin',
      address: WATCHED,
      native: { value: String(funded - spent), decimals: 8, symbol: 'BTC' },
      tokens: [],
      tx_count: 35,
      last_activity_at: new Date(esplora.block(7).timestamp * 1000).toISOString().replace('Z', '000Z'),
    });
    assert.equal(await balance(user.id), 95);
  });

  test('a P2SH and a P2PKH address', async () => {
    const user = await service.user({ blockchain: 100 });
    const p2sh = await service.call('POST', '/v1/chain/wallet', { token: user.token, body: { chain: 'bitcoin', address: P2SH } });
    assert.equal(p2sh.status, 200, p2sh.text);
    assert.equal(p2sh.body.response.native.value, String(0.4999 * COIN));
    assert.equal(p2sh.body.response.tx_count, 2);
    const p2pkh = await service.call('POST', '/v1/chain/wallet', { token: user.token, body: { chain: 'bitcoin', address: P2PKH } });
    assert.equal(p2pkh.body.response.native.value, String(3 * COIN));
  });

  test('an address that never moved: zero, no activity', async () => {
    const user = await service.user({ blockchain: 100 });
    const response = await service.call('POST', '/v1/chain/wallet', { token: user.token, body: { chain: 'bitcoin', address: 'bc1sw50qgdz25j' } });
    assert.equal(response.status, 200, response.text);
    assert.deepEqual([response.body.response.native.value, response.body.response.tx_count, response.body.response.last_activity_at], ['0', 0, null]);
  });
});

describe('bitcoin transactions', () => {
  test('newest first, one transfer per transaction: net movement, counterparty, fee, confirmations', async () => {
    const user = await service.user({ blockchain: 100 });
    const response = await transactions(user.token, { limit: 100 });
    assert.equal(response.status, 200, response.text);
    const tip = esplora.tipHeight();
    assert.deepEqual(
      response.body.response.map((t: Record<string, any>) => [t.hash, t.from, t.to, t.value, t.fee, t.block_number, t.confirmations, t.status]),
      expected.map((e) => [e.txid, e.direction === 'in' ? e.counterparty : WATCHED, e.direction === 'in' ? WATCHED : e.counterparty, String(e.value), String(e.fee), e.height, tip - e.height + 1, 'success']),
    );
    assert.deepEqual(response.body.response[0].asset, { type: 'native', contract: null, symbol: 'BTC', decimals: 8 });
    assert.equal(response.body.pagination.next_page_token, null);
    assert.equal(await balance(user.id), 90);
  });

  test('direction and asset filters; Bitcoin has no tokens', async () => {
    const user = await service.user({ blockchain: 100 });
    const out = await transactions(user.token, { direction: 'out' });
    assert.deepEqual(out.body.response.map((t: Record<string, any>) => t.hash), expected.filter((e) => e.direction === 'out').map((e) => e.txid));
    const incoming = await transactions(user.token, { direction: 'in', limit: 100 });
    assert.equal(incoming.body.response.length, expected.filter((e) => e.direction === 'in').length);
    const tokens = await transactions(user.token, { asset: 'token' });
    assert.deepEqual(tokens.body, { response: [], pagination: { next_page_token: null } });
  });

  test('pages of 10 walk the whole history once, across Esplora pages of 25', async () => {
    const user = await service.user({ blockchain: 1000 });
    const walked: string[] = [];
    let next: string | null = null;
    let pages = 0;
    do {
      const response = await transactions(user.token, { limit: 10, ...(next ? { next_page_token: next } : {}) });
      assert.equal(response.status, 200, response.text);
      walked.push(...response.body.response.map((t: Record<string, any>) => t.hash));
      next = response.body.pagination.next_page_token;
      pages += 1;
    } while (next && pages < 10);
    assert.deepEqual(walked, expected.map((e) => e.txid));
    const other = await service.call('POST', '/v1/chain/transactions', { token: user.token, body: { chain: 'bitcoin', address: P2SH, next_page_token: (await transactions(user.token, { limit: 10 })).body.pagination.next_page_token } });
    assert.equal(other.status, 422);
    assert.deepEqual(other.body.errors, { next_page_token: ['The next page token does not belong to this chain and address.'] });
  });
});

describe('bitcoin errors', () => {
  test('a testnet address on mainnet, a bad checksum and an EVM address are 422, free', async () => {
    const user = await service.user({ blockchain: 100 });
    for (const address of ['tb1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3q0sl5k7', 'mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdp', '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045']) {
      for (const route of ['/v1/chain/wallet', '/v1/chain/transactions']) {
        const response = await service.call('POST', route, { token: user.token, body: { chain: 'bitcoin', address } });
        assert.equal(response.status, 422, `${address}: ${response.text}`);
        assert.deepEqual(response.body.errors, { address: ['The address is not a valid Bitcoin address.'] });
      }
    }
    assert.equal(await balance(user.id), 100);
  });

  test('a rate-limited or failing Esplora is 502, free; an EVM chain here is 503', async () => {
    const user = await service.user({ blockchain: 100 });
    for (const answer of [{ status: 429, body: 'Too Many Requests' }, { status: 500, body: 'oops' }, { status: 200, body: '<html>maintenance</html>' }]) {
      esplora.failWith(answer);
      try {
        for (const route of ['/v1/chain/wallet', '/v1/chain/transactions']) {
          const response = await service.call('POST', route, { token: user.token, body: { chain: 'bitcoin', address: WATCHED } });
          assert.equal(response.status, 502, `${answer.status} ${route}: ${response.text}`);
        }
      } finally {
        esplora.failWith(null);
      }
    }
    const evm = await service.call('POST', '/v1/chain/wallet', { token: user.token, body: { chain: 'ethereum', address: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045' } });
    assert.equal(evm.status, 503);
    assert.equal(await balance(user.id), 100);
  });
});

describe('the Bitcoin client, as a block follower uses it', () => {
  const context = {};
  const client = () => service.services.capabilities.chain('bitcoin')!;

  test('head, blocks, and a block past the tip', async () => {
    assert.equal(await client().head(context), esplora.tipHeight());
    const block = await client().block(3, context);
    assert.deepEqual(block, { number: 3, hash: esplora.block(3).hash, parent_hash: esplora.block(2).hash, timestamp: new Date(esplora.block(3).timestamp * 1000).toISOString().replace('Z', '000Z') });
    assert.equal(await client().block(esplora.tipHeight() + 1, context), null);
    assert.equal(client().info.confirmations, 6);
  });

  test('transfersInBlocks: the blocks read; every address of every transaction, a coinbase, a 31-transaction block', async () => {
    const { blocks, transfers } = await client().transfersInBlocks(1, 7, context);
    assert.deepEqual(blocks, await Promise.all([1, 2, 3, 4, 5, 6, 7].map((height) => client().block(height, context))), 'as block() answers them, in order');
    const coinbase = transfers.find((t) => t.hash === expected.at(-1)!.txid)!;
    assert.deepEqual([coinbase.from, coinbase.to, coinbase.value, coinbase.block_number], [COINBASE, WATCHED, String(6.25 * COIN), 1]);
    // The spend: one payment to the payee; the change back to the spender is no transfer.
    const spend = transfers.filter((t) => t.hash === expected.find((e) => e.direction === 'out')!.txid);
    assert.deepEqual(spend.map((t) => [t.from, t.to, t.value, t.fee]), [[WATCHED, P2PKH, String(3 * COIN), '10000']]);
    // 50 inputs: one payment, from the first input's address.
    const consolidation = transfers.filter((t) => t.hash === expected.find((e) => e.height === 5)!.txid);
    assert.deepEqual(consolidation.map((t) => [t.from, t.to, t.value]), [[TAPROOT, WATCHED, String(4.99 * COIN)]]);
    // Two payees and change: two payments.
    const payment = transfers.filter((t) => t.hash === expected.find((e) => e.height === 2)!.txid);
    assert.deepEqual(payment.map((t) => [t.from, t.to, t.value]), [[MINER, WATCHED, String(1 * COIN)], [MINER, P2SH, String(2 * COIN)]]);
    const block7 = transfers.filter((t) => t.block_number === 7);
    // The coinbase and 30 payments: two pages of Esplora's block listing.
    assert.equal(block7.length, 31);
    assert.equal(block7.filter((t) => t.from === TAPROOT && t.to === WATCHED).length, 30);
    assert.ok(block7.every((t) => t.block_hash === esplora.block(7).hash));
    for (let index = 1; index < transfers.length; index += 1) {
      const [a, b] = [transfers[index - 1]!, transfers[index]!];
      assert.ok(a.block_number < b.block_number || (a.block_number === b.block_number && a.log_index < b.log_index), 'ordered by block, then position');
    }
  });

  test('a reorg replaces a block: its hash changes and its transfers with it', async () => {
    const height = esplora.tipHeight() + 1;
    esplora.mine([{ outputs: [{ address: P2SH, value: 3.125 * COIN }] }]);
    const original = await client().block(height, context);
    esplora.truncate(height);
    esplora.mine([{ outputs: [{ address: P2PKH, value: 3.125 * COIN }] }], { timestamp: esplora.block(height - 1).timestamp + 1 });
    const after = await client().block(height, context);
    assert.notEqual(after!.hash, original!.hash);
    assert.equal(after!.parent_hash, original!.parent_hash);
    const { blocks, transfers } = await client().transfersInBlocks(height, height + 2, context);
    assert.deepEqual(blocks, [after], 'the new block, and none past the tip');
    assert.deepEqual(transfers.map((t) => [t.from, t.to, t.block_hash]), [[COINBASE, P2PKH, after!.hash]]);
    esplora.truncate(height);
  });
});
