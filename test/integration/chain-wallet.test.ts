/**
 * /v1/chain/wallet and /v1/chain/transactions on an EVM chain, through the real server, against a
 * real Hardhat node on loopback (test/support/evm-node.ts): an ERC-20 deployed, native and token
 * transfers made, one reverted call; balances compared with the node's own answers; every transfer
 * once, newest first; pagination; billing; and the chain client's follower methods (head, block,
 * transfersInBlocks, a reorg) that the wallet monitors use.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getAddress, type Address, type Hash } from 'viem';
import { startTestService, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { evmNodeUnavailable, HARDHAT_CHAIN_ID, startEvmNode, TEST_TOKEN_ABI, type EvmNode } from '../support/evm-node.ts';

const unavailable = evmNodeUnavailable();

let node: EvmNode;
let service: TestService;
let failingRpc: FakeUpstream;
let token: Address;
let bytes32Token: Address;
let wallet: Address;
let other: Address;
let funder: Address;

/** What the scenario did, for the assertions: each transfer touching `wallet`. */
const expected: { hash: Hash; type: 'native' | 'erc20'; contract: Address | null; status: 'success' | 'failed'; from: Address; to: Address; value: bigint }[] = [];
let failedHash: Hash;

const ONE_ETH = 10n ** 18n;

describe('chain wallet and transactions (Hardhat node)', { skip: unavailable }, () => {
  before(async () => {
    node = await startEvmNode();
    [funder, , , , , wallet, other] = node.accounts.map((account) => getAddress(account)) as Address[];
    token = getAddress(await node.deployToken({ name: 'Test Token', symbol: 'TST', decimals: 6 }));
    bytes32Token = getAddress(await node.deployBytes32Token());

    const run = async (hash: Promise<Hash>) => {
      const receipt = await node.receipt(await hash);
      return receipt.transactionHash;
    };
    const native = (hash: Hash, from: Address, to: Address, value: bigint, status: 'success' | 'failed' = 'success') =>
      expected.push({ hash, type: 'native', contract: null, status, from, to, value });
    const erc20 = (hash: Hash, contract: Address, from: Address, to: Address, value: bigint) => expected.push({ hash, type: 'erc20', contract, status: 'success', from, to, value });
    const zero = getAddress('0x0000000000000000000000000000000000000000');

    erc20(await run(node.mint(token, wallet, 1_000_000n)), token, zero, wallet, 1_000_000n);
    native(await run(node.sendNative({ from: wallet, to: other, value: ONE_ETH })), wallet, other, ONE_ETH);
    native(await run(node.sendNative({ from: funder, to: wallet, value: 2n * ONE_ETH })), funder, wallet, 2n * ONE_ETH);
    const sent = await run(node.transferToken(token, { from: wallet, to: other, value: 250n }));
    native(sent, wallet, token, 0n);
    erc20(sent, token, wallet, other, 250n);
    native(await run(node.approve(token, { owner: wallet, spender: funder, value: 100n })), wallet, token, 0n);
    erc20(await run(node.transferFrom(token, { spender: funder, from: wallet, to: other, value: 100n })), token, wallet, other, 100n);
    failedHash = await run(node.failingCall(token, wallet));
    native(failedHash, wallet, token, 0n, 'failed');
    erc20(await run(node.mint(bytes32Token, wallet, 5n * ONE_ETH)), bytes32Token, zero, wallet, 5n * ONE_ETH);

    // An RPC endpoint that answers every call with a JSON-RPC error.
    failingRpc = await startFakeUpstream();
    failingRpc.handle(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'internal error' } }),
    }));

    service = await startTestService({
      CHAIN_RPC_ETHEREUM: node.url,
      CHAIN_ID_ETHEREUM: String(HARDHAT_CHAIN_ID),
      CHAIN_RPC_BASE: failingRpc.url,
      CHAIN_TIMEOUT_MS: '10000',
      UPSTREAM_SUSPEND_MS: '0',
    });
  });

  after(async () => {
    await service?.close();
    await failingRpc?.close();
    await node?.stop();
  });

  const balance = (id: number) => service.services.ledger.balance(id, 'blockchain');
  const history = async (token: string, body: Record<string, unknown>) => service.call('POST', '/v1/chain/transactions', { token, body: { chain: 'ethereum', address: wallet, ...body } });

  test('wallet: balances equal eth_getBalance and balanceOf, tokens seen in its logs, 5 credits', async () => {
    const user = await service.user({ blockchain: 100 });
    const response = await service.call('POST', '/v1/chain/wallet', { token: user.token, body: { chain: 'ethereum', address: wallet.toLowerCase() } });
    assert.equal(response.status, 200, response.text);
    const body = response.body.response;
    assert.equal(body.chain, 'ethereum');
    assert.equal(body.address, wallet, 'answered EIP-55 checksummed');
    assert.equal(body.native.value, (await node.publicClient.getBalance({ address: wallet })).toString());
    assert.deepEqual([body.native.decimals, body.native.symbol], [18, 'ETH']);
    const onChain = (await node.publicClient.readContract({ address: token, abi: TEST_TOKEN_ABI, functionName: 'balanceOf', args: [wallet] })) as bigint;
    assert.equal(onChain, 1_000_000n - 350n);
    const tokens = Object.fromEntries(body.tokens.map((entry: { contract: string }) => [entry.contract, entry]));
    assert.deepEqual(tokens[token], { contract: token, symbol: 'TST', name: 'Test Token', decimals: 6, value: onChain.toString() });
    // bytes32 symbol and name, as early tokens have them.
    assert.deepEqual(tokens[bytes32Token], { contract: bytes32Token, symbol: 'MKR', name: 'Maker', decimals: 18, value: (5n * ONE_ETH).toString() });
    assert.equal(body.tokens.length, 2);
    assert.equal(body.tx_count, await node.publicClient.getTransactionCount({ address: wallet }));
    const newest = await node.publicClient.getBlock({ blockNumber: BigInt(await node.blockNumber()) });
    assert.equal(body.last_activity_at, new Date(Number(newest.timestamp) * 1000).toISOString().replace('Z', '000Z'));
    assert.equal(await balance(user.id), 95);
  });

  test('transactions: every transfer once, newest first, the reverted call failed, 10 credits', async () => {
    const user = await service.user({ blockchain: 100 });
    const response = await history(user.token, { limit: 100 });
    assert.equal(response.status, 200, response.text);
    const transfers = response.body.response as Record<string, any>[];
    assert.equal(response.body.pagination.next_page_token, null);
    const keys = transfers.map((transfer) => `${transfer.hash}:${transfer.asset.type}:${transfer.asset.contract}`);
    assert.equal(new Set(keys).size, keys.length, 'no transfer twice');
    assert.deepEqual(
      [...keys].sort(),
      expected.map((entry) => `${entry.hash}:${entry.type}:${entry.contract}`).sort(),
    );
    for (let index = 1; index < transfers.length; index += 1) {
      assert.ok(transfers[index - 1]!.block_number >= transfers[index]!.block_number, 'newest first');
    }
    const head = await node.blockNumber();
    for (const transfer of transfers) {
      const entry = expected.find((candidate) => candidate.hash === transfer.hash && candidate.type === transfer.asset.type)!;
      assert.equal(transfer.from, entry.from);
      assert.equal(transfer.to, entry.to);
      assert.equal(transfer.value, entry.value.toString());
      assert.equal(transfer.status, entry.status);
      assert.equal(transfer.confirmations, head - transfer.block_number + 1);
      assert.match(transfer.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      const receipt = await node.publicClient.getTransactionReceipt({ hash: transfer.hash });
      assert.equal(transfer.fee, (receipt.gasUsed * receipt.effectiveGasPrice).toString());
    }
    const failed = transfers.find((transfer) => transfer.hash === failedHash)!;
    assert.equal(failed.status, 'failed');
    assert.deepEqual(transfers.find((transfer) => transfer.asset.contract === token)!.asset, { type: 'erc20', contract: token, symbol: 'TST', decimals: 6 });
    assert.equal(await balance(user.id), 90);
  });

  test('transactions: direction and asset filter', async () => {
    const user = await service.user({ blockchain: 100 });
    const incoming = (await history(user.token, { direction: 'in', limit: 100 })).body.response as Record<string, any>[];
    assert.deepEqual(incoming.map((t) => t.hash).sort(), expected.filter((e) => e.to === wallet).map((e) => e.hash).sort());
    const outgoingTokens = (await history(user.token, { direction: 'out', asset: 'token', limit: 100 })).body.response as Record<string, any>[];
    assert.deepEqual(outgoingTokens.map((t) => `${t.hash}:${t.value}`).sort(), expected.filter((e) => e.from === wallet && e.type === 'erc20').map((e) => `${e.hash}:${e.value}`).sort());
    const native = (await history(user.token, { asset: 'native', limit: 100 })).body.response as Record<string, any>[];
    assert.ok(native.length > 0 && native.every((t) => t.asset.type === 'native' && t.asset.symbol === 'ETH'));
    assert.equal(native.length, expected.filter((e) => e.type === 'native').length);
  });

  test('transactions: pages of 2 walk the whole list once; a token is bound to its chain and address', async () => {
    const user = await service.user({ blockchain: 1000 });
    const whole = ((await history(user.token, { limit: 100 })).body.response as Record<string, any>[]).map((t) => `${t.hash}:${t.asset.type}:${t.asset.contract}`);
    const walked: string[] = [];
    let next: string | null = null;
    let pages = 0;
    do {
      const response = await history(user.token, { limit: 2, ...(next ? { next_page_token: next } : {}) });
      assert.equal(response.status, 200, response.text);
      assert.ok(response.body.response.length <= 2);
      walked.push(...response.body.response.map((t: Record<string, any>) => `${t.hash}:${t.asset.type}:${t.asset.contract}`));
      next = response.body.pagination.next_page_token;
      pages += 1;
    } while (next && pages < 20);
    assert.deepEqual(walked, whole);
    assert.equal(pages, Math.ceil(whole.length / 2));

    const first = await history(user.token, { limit: 2 });
    const pageToken = first.body.pagination.next_page_token as string;
    const credits = (await balance(user.id))!;
    const otherAddress = await history(user.token, { address: other, next_page_token: pageToken });
    assert.equal(otherAddress.status, 422);
    assert.deepEqual(otherAddress.body.errors, { next_page_token: ['The next page token does not belong to this chain and address.'] });
    const forged = await history(user.token, { next_page_token: `${pageToken.slice(0, -3)}abc` });
    assert.equal(forged.status, 422);
    assert.deepEqual(forged.body.errors, { next_page_token: ['The next page token is invalid.'] });
    // The same address in lowercase is the same address.
    const lower = await history(user.token, { address: wallet.toLowerCase(), next_page_token: pageToken, limit: 2 });
    assert.equal(lower.status, 200, lower.text);
    // The two 422s were free; the lowercase page cost 10.
    assert.equal(await balance(user.id), credits - 10);
  });

  test('422s are free: bad checksum, unknown chain, a Bitcoin address on an EVM chain, bad filters', async () => {
    const user = await service.user({ blockchain: 100 });
    // The wallet's address with the case of its first letter flipped: mixed case, wrong checksum.
    const letter = wallet.slice(2).search(/[a-fA-F]/) + 2;
    const flipped = wallet[letter] === wallet[letter]!.toUpperCase() ? wallet[letter]!.toLowerCase() : wallet[letter]!.toUpperCase();
    const badChecksum = wallet.slice(0, letter) + flipped + wallet.slice(letter + 1);
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{ chain: 'ethereum', address: badChecksum }, { address: ['The address is not a valid Ethereum address.'] }],
      [{ chain: 'ethereum', address: '0x1234' }, { address: ['The address is not a valid Ethereum address.'] }],
      [{ chain: 'ethereum', address: 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq' }, { address: ['The address is not a valid Ethereum address.'] }],
      [{ chain: 'dogecoin', address: wallet }, { chain: ['The selected chain is invalid.'] }],
      [{ address: wallet }, { chain: ['The chain field is required.'] }],
      [{ chain: 'ethereum' }, { address: ['The address field is required.'] }],
    ];
    for (const [body, errors] of cases) {
      for (const route of ['/v1/chain/wallet', '/v1/chain/transactions']) {
        const response = await service.call('POST', route, { token: user.token, body });
        assert.equal(response.status, 422, `${route} ${JSON.stringify(body)}: ${response.text}`);
        assert.equal(response.body.message, 'The given data was invalid.');
        assert.deepEqual(response.body.errors, errors, JSON.stringify(body));
      }
    }
    const filters = await history(user.token, { direction: 'sideways', asset: 'nft', limit: 101 });
    assert.equal(filters.status, 422);
    assert.deepEqual(filters.body.errors, {
      direction: ['The selected direction is invalid.'],
      asset: ['The selected asset is invalid.'],
      limit: ['The limit must be between 1 and 100.'],
    });
    assert.equal(await balance(user.id), 100);
  });

  test('a chain that is not configured is 503, free, even for a caller without credits', async () => {
    const broke = await service.user({});
    for (const [chain, address] of [['polygon', wallet], ['bitcoin', 'bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq']] as const) {
      for (const route of ['/v1/chain/wallet', '/v1/chain/transactions']) {
        const response = await service.call('POST', route, { token: broke.token, body: { chain, address } });
        assert.equal(response.status, 503, response.text);
        assert.deepEqual(response.body, { message: 'This endpoint is not configured.' });
      }
    }
    const user = await service.user({ blockchain: 100 });
    const response = await service.call('POST', '/v1/chain/wallet', { token: user.token, body: { chain: 'polygon', address: wallet } });
    assert.equal(response.status, 503);
    assert.equal(await balance(user.id), 100);
  });

  test('an RPC that answers errors is 502, uncharged', async () => {
    const user = await service.user({ blockchain: 100 });
    for (const route of ['/v1/chain/wallet', '/v1/chain/transactions']) {
      const response = await service.call('POST', route, { token: user.token, body: { chain: 'base', address: wallet } });
      assert.equal(response.status, 502, response.text);
      assert.deepEqual(response.body, { message: 'The upstream service is unavailable, please retry.' });
    }
    assert.ok(failingRpc.hits.length > 0);
    assert.equal(await balance(user.id), 100);
  });

  test('a node that refuses batches and wide log queries: asked call by call, ranges split, the same transfers', async () => {
    // In front of the Hardhat node: an array is refused as a batch-less provider does; a log query
    // over more than 3 blocks gets Infura's "too many results"; other single calls pass.
    const proxy = await startFakeUpstream();
    const refuse = (error: { code: number; message: string }) => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, error }) });
    proxy.handle(async (hit) => {
      if (hit.body.trim().startsWith('[')) return refuse({ code: -32600, message: 'batch requests are not supported' });
      const call = JSON.parse(hit.body) as { method: string; params: { fromBlock: string; toBlock: string }[] };
      if (call.method === 'eth_getLogs' && Number(call.params[0]!.toBlock) - Number(call.params[0]!.fromBlock) > 2) {
        return refuse({ code: -32005, message: 'query returned more than 10000 results' });
      }
      const answer = await fetch(node.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: hit.body });
      return { status: answer.status, headers: { 'content-type': 'application/json' }, body: await answer.text() };
    });
    const single = await startTestService({ CHAIN_RPC_OPTIMISM: proxy.url, CHAIN_ID_OPTIMISM: String(HARDHAT_CHAIN_ID), CHAIN_RPC_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: String(HARDHAT_CHAIN_ID) });
    try {
      const user = await single.user({ blockchain: 100 });
      const keys = (response: { body: any }) => (response.body.response as Record<string, any>[]).map((t) => `${t.hash}:${t.asset.type}:${t.value}:${t.status}:${t.fee}`);
      const viaProxy = await single.call('POST', '/v1/chain/transactions', { token: user.token, body: { chain: 'optimism', address: wallet, limit: 100 } });
      assert.equal(viaProxy.status, 200, viaProxy.text);
      const direct = await single.call('POST', '/v1/chain/transactions', { token: user.token, body: { chain: 'ethereum', address: wallet, limit: 100 } });
      assert.deepEqual(keys(viaProxy), keys(direct));
      assert.ok(proxy.hits.some((hit) => hit.body.includes('eth_getLogs') && Number(JSON.parse(hit.body).params[0].toBlock) - Number(JSON.parse(hit.body).params[0].fromBlock) <= 2), 'ranges were split');
      // Learned once (the first request's parallel reads may each have tried): not tried again.
      const tried = proxy.hits.filter((hit) => hit.body.startsWith('[')).length;
      assert.ok(tried >= 1);
      const again = await single.call('POST', '/v1/chain/wallet', { token: user.token, body: { chain: 'optimism', address: wallet } });
      assert.equal(again.status, 200, again.text);
      assert.equal(proxy.hits.filter((hit) => hit.body.startsWith('[')).length, tried);
    } finally {
      await single.close();
      await proxy.close();
    }
  });

  test('a caller without enough credits gets 403 and the chain is not read', async () => {
    const user = await service.user({ blockchain: 4 });
    const response = await service.call('POST', '/v1/chain/wallet', { token: user.token, body: { chain: 'ethereum', address: wallet } });
    assert.equal(response.status, 403);
    assert.equal(await balance(user.id), 4);
  });

  describe('with an Etherscan-v2-compatible indexer', () => {
    let indexer: FakeUpstream;
    let indexed: TestService;

    /** A fake indexer over the Hardhat chain: txlist and tokentx rows as Etherscan writes them, newest first. */
    async function indexRows(action: string, address: string, endBlock: number, offset: number): Promise<Record<string, string>[]> {
      const head = await node.blockNumber();
      const rows: Record<string, string>[] = [];
      for (let number = 1; number <= Math.min(head, endBlock); number += 1) {
        const block = await node.publicClient.getBlock({ blockNumber: BigInt(number), includeTransactions: true });
        for (const tx of block.transactions) {
          const receipt = await node.publicClient.getTransactionReceipt({ hash: tx.hash });
          const common = {
            blockNumber: String(number),
            timeStamp: String(block.timestamp),
            hash: tx.hash,
            nonce: String(tx.nonce),
            blockHash: block.hash,
            transactionIndex: String(tx.transactionIndex),
            gas: String(tx.gas),
            gasPrice: String(receipt.effectiveGasPrice),
            gasUsed: String(receipt.gasUsed),
            cumulativeGasUsed: String(receipt.cumulativeGasUsed),
            confirmations: String(head - number + 1),
          };
          if (action === 'txlist' && (tx.from === address.toLowerCase() || tx.to === address.toLowerCase())) {
            rows.push({ ...common, from: tx.from, to: tx.to ?? '', value: String(tx.value), isError: receipt.status === 'success' ? '0' : '1', txreceipt_status: receipt.status === 'success' ? '1' : '0', input: tx.input, contractAddress: receipt.contractAddress ?? '' });
          }
          if (action === 'tokentx') {
            for (const log of receipt.logs) {
              if (log.topics.length !== 3 || log.topics[0] !== '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef') continue;
              const [from, to] = [`0x${log.topics[1]!.slice(26)}`, `0x${log.topics[2]!.slice(26)}`];
              if (from !== address.toLowerCase() && to !== address.toLowerCase()) continue;
              const isBytes32 = getAddress(log.address) === bytes32Token;
              rows.push({ ...common, from, to, value: String(BigInt(log.data)), contractAddress: log.address, tokenName: isBytes32 ? 'Maker' : 'Test Token', tokenSymbol: isBytes32 ? 'MKR' : 'TST', tokenDecimal: isBytes32 ? '18' : '6', logIndex: String(log.logIndex), input: 'deprecated' });
            }
          }
        }
      }
      rows.sort((a, b) => Number(b.blockNumber) - Number(a.blockNumber) || Number(b.transactionIndex) - Number(a.transactionIndex) || Number(b.logIndex ?? 0) - Number(a.logIndex ?? 0));
      return rows.slice(0, offset);
    }

    before(async () => {
      indexer = await startFakeUpstream();
      indexer.handle(async (hit) => {
        const query = Object.fromEntries(hit.query);
        const answer = (body: unknown) => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
        if (hit.path !== '/v2/api' || query.chainid !== '1' || query.module !== 'account' || query.apikey !== 'test-key' || query.sort !== 'desc') {
          return answer({ status: '0', message: 'NOTOK', result: 'Error! Missing Or invalid Module name' });
        }
        const rows = await indexRows(query.action!, query.address!, Number(query.endblock), Number(query.offset));
        return answer(rows.length > 0 ? { status: '1', message: 'OK', result: rows } : { status: '0', message: 'No transactions found', result: [] });
      });
      indexed = await startTestService({ CHAIN_RPC_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: String(HARDHAT_CHAIN_ID), CHAIN_EXPLORER_URL: `${indexer.url}/v2/api`, CHAIN_EXPLORER_KEY: 'test-key' });
    });

    after(async () => {
      await indexed?.close();
      await indexer?.close();
    });

    test('transactions come from txlist and tokentx: the same transfers, newest first, pages of 3', async () => {
      const user = await indexed.user({ blockchain: 1000 });
      const walked: Record<string, any>[] = [];
      let next: string | null = null;
      let pages = 0;
      do {
        const response = await indexed.call('POST', '/v1/chain/transactions', { token: user.token, body: { chain: 'ethereum', address: wallet, limit: 3, ...(next ? { next_page_token: next } : {}) } });
        assert.equal(response.status, 200, response.text);
        walked.push(...response.body.response);
        next = response.body.pagination.next_page_token;
        pages += 1;
      } while (next && pages < 20);
      assert.deepEqual(
        walked.map((t) => `${t.hash}:${t.asset.type}:${t.asset.contract}`).sort(),
        expected.map((e) => `${e.hash}:${e.type}:${e.contract}`).sort(),
      );
      for (let index = 1; index < walked.length; index += 1) assert.ok(walked[index - 1]!.block_number >= walked[index]!.block_number);
      assert.equal(walked.find((t) => t.hash === failedHash)!.status, 'failed');
      assert.deepEqual(walked.find((t) => t.asset.contract === bytes32Token)!.asset, { type: 'erc20', contract: bytes32Token, symbol: 'MKR', decimals: 18 });
      assert.ok(indexer.hits.some((hit) => hit.query.get('action') === 'tokentx'));
    });

    test('wallet: tokens from tokentx, balances from the node', async () => {
      const user = await indexed.user({ blockchain: 100 });
      const response = await indexed.call('POST', '/v1/chain/wallet', { token: user.token, body: { chain: 'ethereum', address: wallet } });
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(response.body.response.tokens.map((t: { contract: string }) => t.contract).sort(), [token, bytes32Token].sort());
      assert.equal(response.body.response.native.value, (await node.publicClient.getBalance({ address: wallet })).toString());
    });

    test('an indexer that refuses us is 502, free', async () => {
      const user = await indexed.user({ blockchain: 100 });
      indexer.handle(() => ({ status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: '0', message: 'NOTOK', result: 'Invalid API Key' }) }));
      const response = await indexed.call('POST', '/v1/chain/transactions', { token: user.token, body: { chain: 'ethereum', address: wallet } });
      assert.equal(response.status, 502, response.text);
      assert.equal(await indexed.services.ledger.balance(user.id, 'blockchain'), 100);
    });
  });

  describe('the chain client, as a block follower uses it', () => {
    const context = {};
    const client = () => service.services.capabilities.chain('ethereum')!;

    test('head and block agree with the node; a block past the head is null', async () => {
      const head = await client().head(context);
      assert.equal(head, await node.blockNumber());
      const block = await client().block(head, context);
      const onNode = await node.publicClient.getBlock({ blockNumber: BigInt(head) });
      assert.deepEqual(block && [block.number, block.hash, block.parent_hash], [head, onNode.hash, onNode.parentHash]);
      assert.equal(await client().block(head + 1, context), null);
      assert.equal(service.services.capabilities.chain('polygon'), undefined);
      assert.equal(client().info.confirmations, 12);
    });

    test('transfersInBlocks: the blocks read, and every transfer of the range for every address, ordered, with block hashes', async () => {
      const head = await client().head(context);
      const { blocks, transfers } = await client().transfersInBlocks(1, head, context);
      // Every block of the range, as block() answers it: the follower checks parent hashes on these.
      assert.deepEqual(blocks.map((block) => block.number), Array.from({ length: head }, (_, index) => index + 1));
      assert.deepEqual(blocks.at(-1), await client().block(head, context));
      for (let index = 1; index < blocks.length; index += 1) assert.equal(blocks[index]!.parent_hash, blocks[index - 1]!.hash);
      // Past the head: the blocks end at the head, the transfers with them.
      const past = await client().transfersInBlocks(head - 1, head + 3, context);
      assert.deepEqual(past.blocks.map((block) => block.number), [head - 1, head]);
      assert.deepEqual(past.transfers, transfers.filter((transfer) => transfer.block_number >= head - 1));
      assert.deepEqual(await client().transfersInBlocks(head + 1, head + 2, context), { blocks: [], transfers: [] });
      for (const entry of expected) {
        const found = transfers.filter((transfer) => transfer.hash === entry.hash && transfer.asset.type === entry.type);
        assert.equal(found.length, 1, `${entry.hash} ${entry.type}`);
        assert.equal(found[0]!.value, entry.value.toString());
        assert.equal(found[0]!.status, entry.status);
      }
      // Transfers of other addresses too: the mint to nobody we watch is there as its native call.
      assert.ok(transfers.length > expected.length);
      for (let index = 1; index < transfers.length; index += 1) {
        const [a, b] = [transfers[index - 1]!, transfers[index]!];
        assert.ok(a.block_number < b.block_number || (a.block_number === b.block_number && (a.hash !== b.hash || a.asset.type === 'native' || a.log_index < b.log_index)));
      }
      for (const transfer of transfers) {
        const block = await node.publicClient.getBlock({ blockNumber: BigInt(transfer.block_number) });
        assert.equal(transfer.block_hash, block.hash);
      }
    });

    test('two transactions in one block (automine off), and a reorg that replaces the block', async () => {
      const snapshot = await node.snapshot();
      await node.setAutomine(false);
      try {
        const first = await node.sendNative({ from: funder, to: other, value: 3n });
        const second = await node.transferToken(token, { from: wallet, to: funder, value: 7n });
        await node.mine(1);
        const height = await node.blockNumber();
        const original = await client().block(height, context);
        const { blocks, transfers } = await client().transfersInBlocks(height, height, context);
        assert.deepEqual(blocks, [original]);
        assert.deepEqual(
          transfers.map((t) => [t.hash, t.asset.type, t.value]),
          [
            [first, 'native', '3'],
            [second, 'native', '0'],
            [second, 'erc20', '7'],
          ],
        );
        // The chain forgets that block and grows another at the same height.
        await node.revert(snapshot);
        const replacement = await node.sendNative({ from: funder, to: other, value: 4n });
        await node.mine(1);
        assert.equal(await node.blockNumber(), height);
        const after = await client().block(height, context);
        assert.notEqual(after!.hash, original!.hash);
        assert.equal(after!.parent_hash, original!.parent_hash);
        const replaced = await client().transfersInBlocks(height, height, context);
        assert.deepEqual(replaced.blocks, [after], 'the new block, whose parent hash a follower checks');
        assert.deepEqual(
          replaced.transfers.map((t) => [t.hash, t.value, t.block_hash]),
          [[replacement, '4', after!.hash]],
        );
      } finally {
        await node.setAutomine(true);
      }
    });

    test('a range too wide is refused', async () => {
      await assert.rejects(client().transfersInBlocks(1, 5000, context), RangeError);
    });
  });
});

if (unavailable) test('chain wallet tests need a Hardhat node', { skip: unavailable }, () => {});
