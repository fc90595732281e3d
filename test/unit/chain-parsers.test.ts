/**
 * The blockchain adapters' pure parts: JSON-RPC verdicts (single calls and batches), block,
 * receipt and log readers, token metadata decoding, the Etherscan-v2 indexer's lists, Esplora's
 * transactions and the per-address movements and payments made of them, and the settings.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeAbiParameters, stringToHex } from 'viem';
import type { UpstreamResponse } from '../../src/adapters/kit/types.ts';
import { rpcBatch, rpcMethod, rpcTolerant } from '../../src/adapters/chain/evm/rpc.ts';
import { TRANSFER_TOPIC, addressTopic, decodeDecimals, decodeTokenText, decodeTransferLog, readBlock, readLogs, readReceipt } from '../../src/adapters/chain/evm/shapes.ts';
import { explorerTokentx, explorerTxlist } from '../../src/adapters/chain/evm/explorer.ts';
import { COINBASE, esploraAdapters, flows, movements, readTransaction } from '../../src/adapters/chain/bitcoin/esplora.ts';
import { readChainSettings } from '../../src/adapters/chain/chains.ts';
import { ConfigError, envReader } from '../../src/core/env.ts';

const response = (body: unknown, status = 200): UpstreamResponse => ({ status, url: 'http://rpc.test/', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
const context = { baseUrl: 'http://rpc.test/', now: new Date(0) };

describe('JSON-RPC verdicts', () => {
  const blockNumber = rpcMethod<unknown[], unknown>('chain-test', 'eth_blockNumber', (params) => params, (result) => result);

  test('a request is one JSON-RPC call, safe to repeat', () => {
    const request = blockNumber.buildRequest([], context);
    assert.equal(request.method, 'POST');
    assert.deepEqual(JSON.parse(request.body!), { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
    assert.equal(blockNumber.idempotent, true);
  });

  test('result, errors, rate limits, missing methods, and answers that are not JSON-RPC', async () => {
    assert.deepEqual(await blockNumber.parse(response({ jsonrpc: '2.0', id: 1, result: '0x10' }), []), { kind: 'ok', value: '0x10' });
    assert.equal((await blockNumber.parse(response({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'internal error' } }), [])).kind, 'changed');
    assert.equal((await blockNumber.parse(response({ jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'limit exceeded' } }), [])).kind, 'blocked');
    assert.equal((await blockNumber.parse(response({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'daily request count exceeded, request rate limited' } }), [])).kind, 'blocked');
    assert.equal((await blockNumber.parse(response('Too Many Requests', 429), [])).kind, 'blocked');
    // Too many results is no refusal: the breaker must not suspend the chain for it.
    assert.equal((await blockNumber.parse(response({ jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'query returned more than 10000 results' } }), [])).kind, 'changed');
    assert.equal((await blockNumber.parse(response({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'block range is too wide' } }), [])).kind, 'changed');
    assert.equal((await blockNumber.parse(response('Unauthorized', 401), [])).kind, 'blocked');
    assert.equal((await blockNumber.parse(response({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'the method eth_getBlockReceipts does not exist/is not available' } }), [])).kind, 'not_found');
    assert.equal((await blockNumber.parse(response({ jsonrpc: '2.0', id: 1, error: { code: -32004, message: 'Method eth_getBlockReceipts is not supported' } }), [])).kind, 'not_found');
    assert.equal((await blockNumber.parse(response('<html>502 Bad Gateway</html>', 502), [])).kind, 'changed');
    assert.equal((await blockNumber.parse(response({ hello: 'world' }), [])).kind, 'changed');
  });

  test('batches: answers matched by id whatever their order; refusals and partial answers', async () => {
    const batch = rpcBatch('chain-test', 'batch');
    const calls = [
      { method: 'eth_blockNumber', params: [] },
      { method: 'eth_chainId', params: [] },
    ];
    const body = JSON.parse(batch.buildRequest(calls, context).body!);
    assert.deepEqual(body.map((call: { id: number }) => call.id), [0, 1]);
    assert.deepEqual(await batch.parse(response([{ jsonrpc: '2.0', id: 1, result: '0x1' }, { jsonrpc: '2.0', id: 0, result: '0x5' }]), calls), {
      kind: 'ok',
      value: [
        { ok: true, result: '0x5' },
        { ok: true, result: '0x1' },
      ],
    });
    // A node without batches answers one error object, or an HTTP error.
    assert.equal((await batch.parse(response({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } }), calls)).kind, 'not_found');
    assert.equal((await batch.parse(response('batch requests are not allowed', 405), calls)).kind, 'not_found');
    assert.equal((await batch.parse(response({ jsonrpc: '2.0', id: null, error: { code: 429, message: 'rate limit' } }), calls)).kind, 'blocked');
    assert.equal((await batch.parse(response([{ jsonrpc: '2.0', id: 0, result: '0x5' }]), calls)).kind, 'changed');
    assert.equal((await batch.parse(response([{ jsonrpc: '2.0', id: 0, result: '0x5' }, { jsonrpc: '2.0', id: 0, result: '0x5' }]), calls)).kind, 'changed');
    assert.equal((await batch.parse(response([{ jsonrpc: '2.0', id: 0, result: '0x5' }, { jsonrpc: '2.0', id: 1, error: { code: 3, message: 'execution reverted' } }]), calls)).kind, 'changed');
    const keeping = rpcBatch('chain-test', 'batch', true);
    assert.deepEqual(await keeping.parse(response([{ jsonrpc: '2.0', id: 0, result: '0x5' }, { jsonrpc: '2.0', id: 1, error: { code: 3, message: 'execution reverted' } }]), calls), {
      kind: 'ok',
      value: [
        { ok: true, result: '0x5' },
        { ok: false, code: 3, message: 'execution reverted' },
      ],
    });
  });

  test('a call that may revert keeps the revert as its answer, but a rate limit still blocks', async () => {
    const call = rpcTolerant('chain-test', 'eth_call');
    assert.deepEqual(await call.parse(response({ jsonrpc: '2.0', id: 1, error: { code: 3, message: 'execution reverted' } }), []), { kind: 'ok', value: { ok: false, code: 3, message: 'execution reverted' } });
    assert.equal((await call.parse(response('', 429), [])).kind, 'blocked');
  });
});

describe('EVM shapes', () => {
  test('a block with full transactions; a contract creation has no recipient; a missing block is null', () => {
    const block = readBlock({
      number: '0x10',
      hash: '0xaa',
      parentHash: '0xbb',
      timestamp: '0x6553f100',
      transactions: [
        { hash: '0x01', from: '0xd8da6bf26964af9d7eed9e03e53415d37aa96045', to: null, value: '0x0', transactionIndex: '0x0' },
        { hash: '0x02', from: '0xd8da6bf26964af9d7eed9e03e53415d37aa96045', to: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', value: '0xde0b6b3a7640000', transactionIndex: '0x1' },
      ],
    })!;
    assert.equal(block.number, 16);
    assert.equal(block.timestamp, '2023-11-14T22:13:20.000000Z');
    assert.equal(block.transactions[0]!.to, null);
    assert.equal(block.transactions[1]!.from, '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045');
    assert.equal(block.transactions[1]!.value, 10n ** 18n);
    assert.equal(readBlock(null), null);
    assert.throws(() => readBlock({ number: 'sixteen', hash: '0xaa', parentHash: '0xbb', timestamp: '0x1' }));
  });

  test('receipts: status, fee with the effective price, the L1 fee of OP-stack chains, pre-Byzantium roots', () => {
    const base = { transactionHash: '0x01', gasUsed: '0x5208', contractAddress: null };
    assert.deepEqual(readReceipt({ ...base, status: '0x0', effectiveGasPrice: '0x3b9aca00' }), { transactionHash: '0x01', status: 'failed', fee: 21_000n * 1_000_000_000n, contractAddress: null });
    assert.equal(readReceipt({ ...base, status: '0x1', effectiveGasPrice: '0x1', l1Fee: '0x64' }).fee, 21_000n + 100n);
    assert.equal(readReceipt({ ...base, root: '0x12', gasPrice: '0x2' }).status, 'success');
    assert.equal(readReceipt({ ...base, status: '0x1' }).fee, null);
  });

  test('Transfer logs: ERC-20 read; ERC-721 (four topics) and short data left out', () => {
    const from = '0xd8da6bf26964af9d7eed9e03e53415d37aa96045';
    const to = '0x225e9b54f41f44f42150b6aaa730da5f2d23faf2';
    const [erc20, erc721, odd] = readLogs([
      { address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', topics: [TRANSFER_TOPIC, addressTopic(from), addressTopic(to)], data: `0x${(2_500_000).toString(16).padStart(64, '0')}`, blockNumber: '0x1', blockHash: '0xaa', transactionHash: '0x01', transactionIndex: '0x0', logIndex: '0x3' },
      { address: '0xbc4ca0eda7647a8ab7c2061c2e118a18a936f13d', topics: [TRANSFER_TOPIC, addressTopic(from), addressTopic(to), `0x${'0'.repeat(63)}1`], data: '0x', blockNumber: '0x1', blockHash: '0xaa', transactionHash: '0x02', transactionIndex: '0x1', logIndex: '0x4' },
      { address: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48', topics: [TRANSFER_TOPIC, addressTopic(from), addressTopic(to)], data: '0x01', blockNumber: '0x1', blockHash: '0xaa', transactionHash: '0x03', transactionIndex: '0x2', logIndex: '0x5' },
    ]);
    assert.deepEqual(decodeTransferLog(erc20!), { from: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045', to: '0x225E9B54F41F44F42150b6aAA730Da5f2d23FAf2', value: 2_500_000n });
    assert.equal(erc20!.address, '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48');
    assert.equal(decodeTransferLog(erc721!), null);
    assert.equal(decodeTransferLog(odd!), null);
  });

  test('token symbols and names: ABI strings, bytes32 (MKR), nothing; decimals', () => {
    assert.equal(decodeTokenText(encodeAbiParameters([{ type: 'string' }], ['USD Coin'])), 'USD Coin');
    assert.equal(decodeTokenText(stringToHex('MKR', { size: 32 })), 'MKR');
    assert.equal(decodeTokenText('0x'), null);
    assert.equal(decodeTokenText(encodeAbiParameters([{ type: 'string' }], [''])), null);
    assert.equal(decodeDecimals(encodeAbiParameters([{ type: 'uint8' }], [6])), 6);
    assert.equal(decodeDecimals(encodeAbiParameters([{ type: 'uint256' }], [1000n])), null);
    assert.equal(decodeDecimals('0x'), null);
  });
});

describe('Etherscan-v2 indexer', () => {
  const query = { chainId: 8453, address: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045', count: 125, endBlock: 21_500_000, key: 'K' };

  test('requests carry the chain id, the window and the key, newest first', () => {
    const url = new URL(explorerTxlist.buildRequest(query, { baseUrl: 'https://api.etherscan.io/v2/api', now: new Date(0) }).url);
    assert.equal(url.pathname, '/v2/api');
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      chainid: '8453',
      module: 'account',
      action: 'txlist',
      address: query.address,
      startblock: '0',
      endblock: '21500000',
      page: '1',
      offset: '125',
      sort: 'desc',
      apikey: 'K',
    });
  });

  test('txlist and tokentx rows', async () => {
    const txlist = await explorerTxlist.parse(
      response({
        status: '1',
        message: 'OK',
        result: [
          { blockNumber: '14923678', timeStamp: '1654646411', hash: '0xc52783ad354aecc04c670047754f062e3d6d04e8f5b24774472651f9c3882c60', nonce: '1', blockHash: '0x7e1638fd2c6bdd05ffd83c1cf06c63e2f67d0f802084bef076d06bdcf86d1bb0', transactionIndex: '61', from: '0x9aa99c23f67c81701c772b106b4f83f6e858dd2e', to: '', value: '0', gas: '6000000', gasPrice: '83924748773', isError: '0', txreceipt_status: '1', input: '0x60806040', contractAddress: '0xc5102fe9359fd9a28f877a67e36b0f050d81a3cc', cumulativeGasUsed: '10450178', gasUsed: '4457269', confirmations: '122485' },
          { blockNumber: '14923692', timeStamp: '1654646640', hash: '0xaa45b4858ba44230a5fce5a29570a5dec2bf1f0ba95bacdec4fe8f2c4fa99338', nonce: '2', blockHash: '0x13ffc1ee2bec2c1a4a4b4da3c5f0da0c50a9d76fd5ee3e8aed6dc3ba7f1b4f08', transactionIndex: '40', from: '0x9aa99c23f67c81701c772b106b4f83f6e858dd2e', to: '0xc5102fe9359fd9a28f877a67e36b0f050d81a3cc', value: '1000000000000000000', gas: '21000', gasPrice: '2', isError: '1', txreceipt_status: '0', input: '0x', contractAddress: '', cumulativeGasUsed: '1', gasUsed: '21000', confirmations: '1' },
        ],
      }),
      query,
    );
    assert.equal(txlist.kind, 'ok');
    const [creation, failed] = (txlist as { value: any[] }).value;
    assert.equal(creation.to, '0xc5102fE9359FD9a28f877a67E36B0F050d81a3CC', 'a creation is addressed to the new contract');
    assert.equal(creation.fee, String(4457269n * 83924748773n));
    assert.equal(creation.timestamp, '2022-06-08T00:00:11.000000Z');
    assert.equal(failed.status, 'failed');
    assert.equal(failed.value, '1000000000000000000');

    const tokentx = await explorerTokentx.parse(
      response({
        status: '1',
        message: 'OK',
        result: [{ blockNumber: '4730207', timeStamp: '1513240363', hash: '0xe8c208398bd5ae8e4c237658580db56a2a94dfa0ca382c99b776fa6e7d31d5b4', nonce: '406', blockHash: '0x022c5e6a3d2487a8ccf8946a2ffb74938bf8e5c8a3f6d91b41c56378a02b5d56', from: '0x642ae78fafbb8032da552d619ad43f1d81e4dd7c', contractAddress: '0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2', to: '0x4e83362442b8d1bec281594cea3050c8eb01311c', value: '5901522149285533025181', tokenName: 'Maker', tokenSymbol: 'MKR', tokenDecimal: '18', transactionIndex: '81', gas: '940000', gasPrice: '32010000000', gasUsed: '77759', cumulativeGasUsed: '2523379', input: 'deprecated', confirmations: '7968350', logIndex: '12' }],
      }),
      query,
    );
    assert.equal(tokentx.kind, 'ok');
    const [transfer] = (tokentx as { value: any[] }).value;
    assert.deepEqual([transfer.contract, transfer.symbol, transfer.decimals, transfer.name, transfer.value], ['0x9f8F72aA9304c8B593d555F12eF6589cC3A579A2', 'MKR', 18, 'Maker', '5901522149285533025181']);
    assert.ok(transfer.position > 81 * 1_000_000);
  });

  test('nothing found, refusals and errors', async () => {
    assert.deepEqual(await explorerTxlist.parse(response({ status: '0', message: 'No transactions found', result: [] }), query), { kind: 'ok', value: [] });
    assert.equal((await explorerTxlist.parse(response({ status: '0', message: 'NOTOK', result: 'Max rate limit reached' }), query)).kind, 'blocked');
    assert.equal((await explorerTxlist.parse(response({ status: '0', message: 'NOTOK', result: 'Invalid API Key (#err2)|x' }), query)).kind, 'blocked');
    assert.equal((await explorerTxlist.parse(response({ status: '0', message: 'NOTOK', result: 'Error! Invalid address format' }), query)).kind, 'changed');
    assert.equal((await explorerTxlist.parse(response('<html></html>'), query)).kind, 'changed');
  });
});

describe('Esplora', () => {
  const api = esploraAdapters('chain-bitcoin');
  const out = (address: string | null, value: number) => ({ scriptpubkey: '00', scriptpubkey_asm: '', scriptpubkey_type: address ? 'v0_p2wpkh' : 'op_return', ...(address ? { scriptpubkey_address: address } : {}), value });
  const spend = (address: string, value: number) => ({ txid: 'a'.repeat(64), vout: 0, prevout: out(address, value), scriptsig: '', scriptsig_asm: '', witness: [], is_coinbase: false, sequence: 4294967293 });
  const status = { confirmed: true, block_height: 800_000, block_hash: 'b'.repeat(64), block_time: 1_690_168_629 };
  const tx = (vin: unknown[], vout: unknown[], fee: number) => readTransaction({ txid: 'c'.repeat(64), version: 2, locktime: 0, vin, vout, size: 200, weight: 800, fee, status });

  test('paths, the tip, a block height past the tip, blocks', async () => {
    assert.equal(api.addressTransactions.buildRequest({ address: 'bc1qx', lastSeen: 'd'.repeat(64) }, { baseUrl: 'https://blockstream.info/api', now: new Date(0) }).url, `https://blockstream.info/api/address/bc1qx/txs/chain/${'d'.repeat(64)}`);
    assert.deepEqual(await api.tipHeight.parse(response('871234\n'), undefined), { kind: 'ok', value: 871234 });
    assert.equal((await api.blockHash.parse(response('Block not found', 404), 900_000)).kind, 'not_found');
    assert.equal((await api.tipHeight.parse(response('Too Many Requests', 429), undefined)).kind, 'blocked');
    const block = await api.block.parse(response({ id: 'e'.repeat(64), height: 1, version: 1, timestamp: 1231469665, tx_count: 1, size: 215, weight: 536, merkle_root: 'f'.repeat(64), previousblockhash: '0'.repeat(64), mediantime: 1231469665, nonce: 2573394689, bits: 486604799, difficulty: 1 }), 'e'.repeat(64));
    assert.deepEqual(block, { kind: 'ok', value: { number: 1, hash: 'e'.repeat(64), parent_hash: '0'.repeat(64), timestamp: '2009-01-09T02:54:25.000000Z', tx_count: 1 } });
  });

  test('a coinbase has no prevout: received from "coinbase"', () => {
    const coinbase = readTransaction({
      txid: 'c'.repeat(64),
      vin: [{ txid: '0'.repeat(64), vout: 4294967295, prevout: null, scriptsig: '03', scriptsig_asm: '', witness: [], is_coinbase: true, sequence: 4294967295 }],
      vout: [out('bc1qminer', 625_000_000), out(null, 0)],
      fee: 0,
      status,
    });
    assert.deepEqual(movements(coinbase), [{ address: 'bc1qminer', direction: 'in', counterparty: COINBASE, value: 625_000_000n, ordinal: 0 }]);
    assert.deepEqual(flows(coinbase), [{ from: COINBASE, to: 'bc1qminer', value: 625_000_000n, output: 0 }]);
  });

  test('a payment with change: the sender moves the payment out (fee apart), the payee in', () => {
    const payment = tx([spend('bc1qalice', 100_000), spend('bc1qalice', 50_000)], [out('3Bob', 120_000), out('bc1qalice', 29_000)], 1_000);
    assert.deepEqual(movements(payment), [
      { address: 'bc1qalice', direction: 'out', counterparty: '3Bob', value: 120_000n, ordinal: 0 },
      { address: '3Bob', direction: 'in', counterparty: 'bc1qalice', value: 120_000n, ordinal: 1 },
    ]);
    assert.deepEqual(flows(payment), [{ from: 'bc1qalice', to: '3Bob', value: 120_000n, output: 0 }]);
  });

  test('50 inputs of two senders: the net movement of each, the fee kept in', () => {
    const inputs = [...Array.from({ length: 49 }, () => spend('bc1qmany', 10_000)), spend('1Other', 60_000)];
    const consolidation = tx(inputs, [out('bc1qdest', 540_000), out('1Other', 5_000)], 5_000);
    const byAddress = Object.fromEntries(movements(consolidation).map((entry) => [entry.address, [entry.direction, entry.value]]));
    assert.deepEqual(byAddress, { bc1qmany: ['out', 490_000n], '1Other': ['out', 55_000n], bc1qdest: ['in', 540_000n] });
    assert.deepEqual(flows(consolidation), [{ from: 'bc1qmany', to: 'bc1qdest', value: 540_000n, output: 0 }]);
  });

  test('a transaction paying only its own sender back is one flow to itself', () => {
    const self = tx([spend('bc1qself', 10_000), spend('bc1qself', 10_000)], [out('bc1qself', 19_000)], 1_000);
    assert.deepEqual(flows(self), [{ from: 'bc1qself', to: 'bc1qself', value: 19_000n, output: 0 }]);
    assert.deepEqual(movements(self), [{ address: 'bc1qself', direction: 'out', counterparty: 'bc1qself', value: 0n, ordinal: 0 }]);
  });

  test('an unreadable transaction throws (read as changed by the runtime)', () => {
    assert.throws(() => readTransaction({ txid: 'zz', vin: [], vout: [] }));
    assert.throws(() => tx([spend('bc1q', -1)], [], 0));
  });
});

describe('chain settings', () => {
  const read = (env: Record<string, string>) => readChainSettings(envReader(env));

  test('nothing configured; one chain; defaults and overrides', () => {
    assert.deepEqual(read({}).chains, {});
    const settings = read({ CHAIN_RPC_BASE: 'https://base.example/rpc', CHAIN_CONFIRMATIONS_BASE: '3', CHAIN_ESPLORA_BITCOIN: 'https://mempool.example/api', CHAIN_BITCOIN_NETWORK: 'Signet' });
    assert.deepEqual(Object.keys(settings.chains), ['base', 'bitcoin']);
    assert.equal(settings.chains.base!.confirmations, 3);
    assert.equal(settings.chains.base!.chainId, 8453);
    assert.equal(settings.chains.bitcoin!.confirmations, 6);
    assert.equal(settings.chains.bitcoin!.network, 'signet');
    assert.equal(settings.explorer, undefined);
    assert.equal(read({ CHAIN_EXPLORER_URL: 'https://api.etherscan.io/v2/api', CHAIN_EXPLORER_KEY: 'k' }).explorer?.key, 'k');
  });

  test('a bad value stops the start, naming the variable', () => {
    const cases: [Record<string, string>, string][] = [
      [{ CHAIN_RPC_ETHEREUM: 'not a url' }, 'CHAIN_RPC_ETHEREUM'],
      [{ CHAIN_RPC_POLYGON: 'ftp://rpc.example' }, 'CHAIN_RPC_POLYGON'],
      [{ CHAIN_CONFIRMATIONS_ETHEREUM: '65' }, 'CHAIN_CONFIRMATIONS_ETHEREUM'],
      [{ CHAIN_CONFIRMATIONS_BSC: '-1' }, 'CHAIN_CONFIRMATIONS_BSC'],
      [{ CHAIN_BITCOIN_NETWORK: 'litecoin' }, 'CHAIN_BITCOIN_NETWORK'],
      [{ CHAIN_EXPLORER_KEY: 'k' }, 'CHAIN_EXPLORER_URL'],
      [{ CHAIN_HISTORY_BLOCKS: '0' }, 'CHAIN_HISTORY_BLOCKS'],
      [{ CHAIN_TIMEOUT_MS: 'soon' }, 'CHAIN_TIMEOUT_MS'],
    ];
    for (const [env, variable] of cases) {
      assert.throws(() => read(env), (error: unknown) => error instanceof ConfigError && error.variable === variable && error.message.includes(variable), variable);
    }
  });
});
