/**
 * Issue 33 defect 4, untrusted upstream values trusted too far. Each case runs against the real
 * server on loopback with fake upstreams written here, under the event-loop watchdog (`/health`
 * every 200 ms, none slower than 1 s), and checks the money: the balance, the history row and
 * the ledger audit.
 *
 * 1. The node behind CHAIN_RPC_ETHEREUM answered `eth_chainId` 0x89 (Polygon), and its data was
 *    served as Ethereum's (200, charged 5). Now the chain id is checked at start (the start
 *    names the chain and both ids) and before the first call: a free 502, the node's data never
 *    read.
 * 2. A node that answered the right id, then stopped answering (a dropped connection) and came
 *    back as another chain's node was still trusted. Now a call that gets no answer makes the
 *    next one check the chain id again.
 * 3. An `eth_getBalance` of 4,000,000 hex digits came back as a 200 with a 4.8 MB decimal value,
 *    charged 5, the event loop held for 2 s. Now anything above 256 bits is a `changed` verdict,
 *    a free 502, its digits counted before any conversion.
 * 4. A Freelancer answer of 60,000 projects came back whole (23.8 MB, charged 3). Now the page is
 *    cut to the `limit` asked for (25 by default) before the projects are read.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestService, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream, type UpstreamAnswer, type UpstreamHit } from '../support/fake-upstream.ts';
import { auditMismatches, historyRow, outstandingHolds } from '../support/reliability-harness.ts';
import { withoutStall } from '../support/health-watchdog.ts';

const WALLET = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';
const UNAVAILABLE = { message: 'The upstream service is unavailable, please retry.' };

interface RpcCall {
  id?: unknown;
  method: string;
  params: unknown[];
}

/** A JSON-RPC node of a chain that holds no transfers; `answer` may replace any method's result. */
function fakeNode(chainId: () => string, answer: (call: RpcCall) => unknown = () => undefined) {
  const result = (call: RpcCall): unknown => {
    const given = answer(call);
    if (given !== undefined) return given;
    switch (call.method) {
      case 'eth_chainId':
        return chainId();
      case 'eth_blockNumber':
        return '0x10';
      case 'eth_getBalance':
        return '0xde0b6b3a7640000';
      case 'eth_getTransactionCount':
        return '0x3';
      case 'eth_getLogs':
      case 'eth_getBlockReceipts':
        return [];
      case 'eth_getBlockByNumber': {
        const number = String(call.params[0]);
        const n = Number(number);
        const hash = (k: number) => `0x${k.toString(16).padStart(64, '0')}`;
        return { number, hash: hash(n + 1), parentHash: hash(n), timestamp: '0x6553f100', transactions: [] };
      }
      default:
        return undefined;
    }
  };
  const reply = (call: RpcCall) => {
    const value = result(call);
    return value === undefined ? { jsonrpc: '2.0', id: call.id, error: { code: -32601, message: 'the method does not exist' } } : { jsonrpc: '2.0', id: call.id, result: value };
  };
  return (hit: UpstreamHit): UpstreamAnswer => {
    const body = JSON.parse(hit.body) as RpcCall | RpcCall[];
    const answered = Array.isArray(body) ? body.map(reply) : reply(body);
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(answered) };
  };
}

describe('untrusted upstream values (issue 33 defect 4)', () => {
  let service: TestService;
  let wrongChain: FakeUpstream;
  let swapped: FakeUpstream;
  let huge: FakeUpstream;
  let freelancer: FakeUpstream;
  const notices: string[] = [];
  /** The optimism node: what it answers to eth_chainId now, and whether it hangs (a dropped connection). */
  const optimism = { chainId: '0xa', hang: false };

  before(async () => {
    wrongChain = await startFakeUpstream();
    wrongChain.handle(fakeNode(() => '0x89'));
    swapped = await startFakeUpstream();
    const optimismNode = fakeNode(() => optimism.chainId);
    swapped.handle((hit) => (optimism.hang ? { delayMs: 2500, status: 200, body: '{}' } : optimismNode(hit)));
    huge = await startFakeUpstream();
    // Four million hex digits: a 2-MB-bit number, and 4.8 MB once written in decimal.
    const hugeBalance = `0x${'f'.repeat(4_000_000)}`;
    huge.handle(fakeNode(() => '0x2105', (call) => (call.method === 'eth_getBalance' ? hugeBalance : undefined)));
    freelancer = await startFakeUpstream();
    // 60,000 projects, about 3.5 MB: within the 10 MB an answer may weigh.
    const projects = Array.from({ length: 60_000 }, (_, n) => ({ id: 1_000_000 + n, title: `Project ${n}`, owner_id: 7 }));
    const page = JSON.stringify({ status: 'success', result: { projects, total_count: 60_000, users: { 7: { id: 7, location: { country: { name: 'Chile' } } } } } });
    freelancer.handle((hit) =>
      hit.path === '/api/projects/0.1/projects/active/' ? { status: 200, headers: { 'content-type': 'application/json' }, body: page } : { status: 404, body: '{"status":"error","error_code":"NOT_FOUND"}' },
    );
    service = await startTestService(
      {
        CHAIN_RPC_ETHEREUM: wrongChain.url,
        CHAIN_RPC_OPTIMISM: swapped.url,
        CHAIN_RPC_BASE: huge.url,
        CHAIN_TIMEOUT_MS: '1500',
        UPSTREAM_FREELANCER_URL: freelancer.url,
        UPSTREAM_SUSPEND_MS: '0',
      },
      { notice: (message) => notices.push(message) },
    );
    // The embedded database's first queries compile on the event loop: done here, before any watchdog.
    const warm = await service.user({ blockchain: 1, scraping: 1 });
    await service.call('GET', '/me', { token: warm.token });
    await historyRow(service, 'warm-up');
    await auditMismatches(service);
  });

  after(async () => {
    await service?.close();
    await Promise.all([wrongChain, swapped, huge, freelancer].map((upstream) => upstream?.close()));
  });

  /** The request, its answer, and what it cost: the balance after, the history row. */
  async function charged(route: string, body: unknown, product: 'blockchain' | 'scraping') {
    const user = await service.user({ [product]: 100 });
    const answer = await service.call('POST', route, { token: user.token, body });
    const history = await historyRow(service, answer.headers.get('x-request-id') ?? '');
    return { answer, history, balance: await service.services.ledger.balance(user.id, product) };
  }

  async function assertMoneyClean() {
    assert.equal(await outstandingHolds(service), 0, 'no credit is left held');
    assert.deepEqual(await auditMismatches(service), [], 'gleaner credits audit is clean');
  }

  test('a node of another chain: named at start, a free 502 for wallet and transactions, its data never read', async () => {
    // The start checks each EVM node in the background: its line names the chain and both ids.
    for (let waited = 0; !notices.some((line) => line.includes('chain ethereum')) && waited < 10_000; waited += 100) await sleep(100);
    const line = notices.find((entry) => entry.includes('chain ethereum'));
    assert.ok(line, `a start line about ethereum (got ${JSON.stringify(notices)})`);
    assert.match(line, /137 \(Polygon\)/);
    assert.match(line, /not 1\b/);
    assert.match(line, /CHAIN_RPC_ETHEREUM/);
    assert.ok(notices.some((entry) => /chain base: .*8453, as expected/.test(entry)), `base was checked (got ${JSON.stringify(notices)})`);

    await withoutStall(service.url, 'a wrong-chain node', async () => {
      for (const [route, body] of [
        ['/v1/chain/wallet', { chain: 'ethereum', address: WALLET }],
        ['/v1/chain/transactions', { chain: 'ethereum', address: WALLET }],
      ] as const) {
        const { answer, history, balance } = await charged(route, body, 'blockchain');
        assert.equal(answer.status, 502, `${route}: ${answer.text}`);
        assert.deepEqual(answer.body, UNAVAILABLE);
        assert.equal(balance, 100, `${route} is free`);
        assert.deepEqual(history, { status: 502, credits: 0 });
      }
    });
    const read = wrongChain.hits.flatMap((hit) => [JSON.parse(hit.body)].flat() as RpcCall[]).map((call) => call.method);
    assert.ok(read.length > 0 && read.every((method) => method === 'eth_chainId'), `only the chain id was asked (asked: ${[...new Set(read)].join(', ')})`);
    await assertMoneyClean();
  });

  test('a node that drops and comes back as another chain: the chain id is checked again on reconnect', async () => {
    await withoutStall(service.url, 'a node swapped behind its URL', async () => {
      const first = await charged('/v1/chain/wallet', { chain: 'optimism', address: WALLET }, 'blockchain');
      assert.equal(first.answer.status, 200, first.answer.text);
      assert.equal(first.balance, 95);

      // The connection drops (no answer within the deadline): a free 502.
      optimism.hang = true;
      const dropped = await charged('/v1/chain/wallet', { chain: 'optimism', address: WALLET }, 'blockchain');
      assert.equal(dropped.answer.status, 502, dropped.answer.text);
      assert.equal(dropped.balance, 100);

      // It comes back as a Polygon node: never served as Optimism.
      optimism.hang = false;
      optimism.chainId = '0x89';
      const asked = swapped.hits.length;
      const after = await charged('/v1/chain/wallet', { chain: 'optimism', address: WALLET }, 'blockchain');
      assert.equal(after.answer.status, 502, after.answer.text);
      assert.deepEqual(after.answer.body, UNAVAILABLE);
      assert.equal(after.balance, 100);
      assert.deepEqual(after.history, { status: 502, credits: 0 });
      const methods = swapped.hits.slice(asked).flatMap((hit) => [JSON.parse(hit.body)].flat() as RpcCall[]).map((call) => call.method);
      assert.deepEqual([...new Set(methods)], ['eth_chainId']);
    });
    await assertMoneyClean();
  });

  test('a balance of four million hex digits: a free 502 (changed), nothing converted, no stall', async () => {
    const verdicts: string[] = [];
    const stop = service.services.capabilities.runtime.observe((event) => {
      if (event.type === 'call' && event.upstream === 'chain-base') verdicts.push(event.verdict);
    });
    try {
      await withoutStall(service.url, 'a 4,000,000-digit balance', async () => {
        // Three times, and a moment after: the watchdog sees the loop during and after the work.
        for (let round = 0; round < 3; round += 1) {
          const started = performance.now();
          const { answer, history, balance } = await charged('/v1/chain/wallet', { chain: 'base', address: WALLET }, 'blockchain');
          assert.equal(answer.status, 502, answer.text.slice(0, 200));
          assert.deepEqual(answer.body, UNAVAILABLE);
          assert.ok(answer.text.length < 1000, `a short answer (${answer.text.length} bytes)`);
          assert.equal(balance, 100);
          assert.deepEqual(history, { status: 502, credits: 0 });
          assert.ok(performance.now() - started < 5000, 'answered quickly');
        }
        await sleep(300);
      });
    } finally {
      stop();
    }
    assert.ok(verdicts.includes('changed'), `a changed verdict (got ${verdicts.join(', ')})`);
    await assertMoneyClean();
  });

  test('60,000 projects from Freelancer: the page asked for (25 by default), charged 3, a small answer', async () => {
    await withoutStall(service.url, 'a 60,000-project answer', async () => {
      const byDefault = await charged('/v1/freelance/search', { query: 'python' }, 'scraping');
      assert.equal(byDefault.answer.status, 200, byDefault.answer.text.slice(0, 200));
      assert.equal(byDefault.answer.body.response.length, 25);
      assert.equal(byDefault.answer.body.response[0].id, 1_000_000);
      assert.equal(byDefault.answer.body.response[0].country, 'Chile');
      assert.equal(typeof byDefault.answer.body.pagination.next_page_token, 'string');
      assert.ok(byDefault.answer.text.length < 64 * 1024, `a bounded answer (${byDefault.answer.text.length} bytes)`);
      assert.equal(byDefault.balance, 97);
      assert.deepEqual(byDefault.history, { status: 200, credits: 3 });

      const most = await charged('/v1/freelance/search', { query: 'python', limit: 100 }, 'scraping');
      assert.equal(most.answer.status, 200);
      assert.equal(most.answer.body.response.length, 100);
      assert.ok(most.answer.text.length < 256 * 1024, `a bounded answer (${most.answer.text.length} bytes)`);
      assert.equal(most.balance, 97);
    });
    await assertMoneyClean();
  });
});
