/**
 * The pure pieces of issue 33 defect 4: the adapter kit's list and number bounds, and every
 * adapter's parse cutting an upstream list to its page before reading it. Lists are built large
 * (thousands of items) so that a parser still reading them whole would show it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CappedList, firstItems, mapUpTo, MAX_PAGE_ITEMS, uint256FromDecimal, uint256FromHex } from '../../src/adapters/kit/limits.ts';
import { ShapeError } from '../../src/adapters/kit/parse.ts';
import type { UpstreamResponse } from '../../src/adapters/kit/types.ts';
import { rpcMethod, quantity } from '../../src/adapters/chain/evm/rpc.ts';
import { decodeTokenText } from '../../src/adapters/chain/evm/shapes.ts';
import { explorerTxlist, readTxlistRow } from '../../src/adapters/chain/evm/explorer.ts';
import { esploraAdapters, movements, readTransaction, MAX_TX_PARTS } from '../../src/adapters/chain/bitcoin/esplora.ts';
import { wrongChainReason } from '../../src/adapters/chain/evm/client.ts';
import { readChainSettings } from '../../src/adapters/chain/chains.ts';
import { EnvReader } from '../../src/core/env.ts';
import { parseSearch as parseFreelanceSearch } from '../../src/adapters/freelance/parse.ts';
import { readComments, readSearch as readVideoSearch } from '../../src/adapters/video/parse.ts';
import { mapCommentTree, mapPostPage, MAX_COMMENT_DEPTH, MAX_THREAD_COMMENTS } from '../../src/adapters/reddit/parse.ts';
import { readTimeline } from '../../src/adapters/x/timeline.ts';
import { ENGINES } from '../../src/adapters/search/engines/index.ts';
import type { EngineName } from '../../src/adapters/search/types.ts';
import { SERP_FIXTURES, fixtureResults } from '../support/search-fixtures.ts';
import { addEntries, cursorEntry, itemEntry, tweetResult } from '../support/microblog-fixtures.ts';

const json = (body: unknown, url = 'https://upstream.example/'): UpstreamResponse => ({
  status: 200,
  url,
  headers: { 'content-type': 'application/json' },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** Runs `work` and answers how long it took, in ms. */
function timed(work: () => void): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}

describe('the kit', () => {
  test('firstItems and mapUpTo stop at the cap; CappedList says when it is full', () => {
    const many = Array.from({ length: 10_000 }, (_, n) => n);
    assert.equal(firstItems(many).length, MAX_PAGE_ITEMS);
    assert.deepEqual(firstItems([1, 2, 3], 25), [1, 2, 3]);
    let mapped = 0;
    const odd = mapUpTo(many, 5, (n) => (mapped++, n % 2 === 1 ? n : undefined));
    assert.deepEqual(odd, [1, 3, 5, 7, 9]);
    assert.equal(mapped, 10, 'the walk stopped once five were kept');
    const list = new CappedList<number>(2);
    assert.equal(list.add(1), true);
    assert.equal(list.add(2), false);
    assert.equal(list.add(3), false);
    assert.equal(list.full, true);
    assert.deepEqual(list.items, [1, 2]);
  });

  test('256 bits at most, counted before any conversion', () => {
    const max = (1n << 256n) - 1n;
    assert.equal(uint256FromHex(`0x${'f'.repeat(64)}`, 'v'), max);
    assert.equal(uint256FromHex('0x0', 'v'), 0n);
    assert.equal(uint256FromDecimal(max.toString(), 'v'), max);
    assert.throws(() => uint256FromHex(`0x1${'0'.repeat(64)}`, 'balance'), (error: Error) => error instanceof ShapeError && /above 256 bits/.test(error.message));
    assert.throws(() => uint256FromDecimal((max + 1n).toString(), 'value'), ShapeError);
    assert.throws(() => uint256FromDecimal('9'.repeat(79), 'value'), /above 256 bits/);
    for (const bad of ['0x', '1a', '0xzz', 12, null]) assert.throws(() => uint256FromHex(bad, 'v'), ShapeError);
    for (const bad of ['', '-1', '1e3', '0x10', 12]) assert.throws(() => uint256FromDecimal(bad, 'v'), ShapeError);
    // Four million digits are refused at once: nothing reads them.
    const hex = `0x${'f'.repeat(4_000_000)}`;
    const digits = '9'.repeat(4_000_000);
    assert.ok(timed(() => assert.throws(() => uint256FromHex(hex, 'v'))) < 50);
    assert.ok(timed(() => assert.throws(() => uint256FromDecimal(digits, 'v'))) < 50);
  });
});

describe('chains', () => {
  test('a JSON-RPC quantity above 256 bits is a changed verdict of the call', async () => {
    const balance = rpcMethod<unknown[], bigint>('chain-base', 'eth_getBalance', (p) => p, (result) => quantity(result, 'balance'));
    const huge = json({ jsonrpc: '2.0', id: 1, result: `0x${'f'.repeat(4_000_000)}` });
    let outcome: unknown;
    const ms = timed(() => {
      try {
        outcome = balance.parse(huge, []);
      } catch (error) {
        outcome = error;
      }
    });
    // The runtime reads a parser that throws as `changed` (and says so in its reason).
    assert.ok(outcome instanceof ShapeError, String(outcome));
    assert.match((outcome as Error).message, /balance is above 256 bits \(4000000 hex digits\)/);
    assert.ok(ms < 200, `refused in ${ms} ms`);
    assert.deepEqual(await balance.parse(json({ jsonrpc: '2.0', id: 1, result: '0x10' }), []), { kind: 'ok', value: 16n });
  });

  test('a token symbol of megabytes is not decoded', () => {
    assert.equal(decodeTokenText(`0x${'00'.repeat(1_000_000)}`), null);
  });

  test('the indexer: rows cut to the count asked for; values above 256 bits refused', async () => {
    const row = (n: number) => ({ hash: `0x${n}`, blockNumber: String(1000 - n), timeStamp: '1700000000', from: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045', to: '0x225E6a1A3C2C3C1C4f1F1bB27F8b0D6cF4E6FAf2', value: '1', gasUsed: '21000', gasPrice: '1' });
    const answer = json({ status: '1', message: 'OK', result: Array.from({ length: 5000 }, (_, n) => row(n)) });
    const outcome = await explorerTxlist.parse(answer, { chainId: 1, address: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045', count: 26 });
    assert.equal(outcome.kind, 'ok');
    assert.equal(outcome.kind === 'ok' && outcome.value.length, 26);
    assert.throws(() => readTxlistRow({ ...row(1), value: '1'.repeat(100) }), /above 256 bits/);
    assert.throws(() => readTxlistRow({ ...row(1), gasUsed: '9'.repeat(4_000_000) }), /above 256 bits/);
    assert.throws(() => readTxlistRow({ ...row(1), blockNumber: '9'.repeat(30) }), /blockNumber/);
  });

  test('Esplora: a page of 25 transactions at most, bounded transactions and blocks, movements in linear time', async () => {
    const api = esploraAdapters('chain-bitcoin');
    const tx = (n: number) => ({ txid: n.toString(16).padStart(64, '0'), vin: [{ is_coinbase: true, prevout: null }], vout: [{ scriptpubkey_address: 'bc1qpayee', value: 1 }], status: { confirmed: false } });
    const page = await api.addressTransactions.parse(json(Array.from({ length: 3000 }, (_, n) => tx(n))), { address: 'bc1qpayee' });
    assert.equal(page.kind === 'ok' && page.value.length, 25);
    assert.throws(() => readTransaction({ ...tx(1), vout: Array.from({ length: MAX_TX_PARTS + 1 }, () => ({ value: 1 })) }), /outputs/);
    assert.throws(() => readTransaction({ ...tx(1), vout: [{ scriptpubkey_address: 'bc1q', value: '9'.repeat(100) }] }), /above 256 bits/);
    assert.throws(() => api.block.parse(json({ id: 'a'.repeat(64), height: 5, timestamp: 1, previousblockhash: 'b'.repeat(64), tx_count: 1e12 }), 'a'.repeat(64)), /transactions/);
    // 40,000 outputs to distinct addresses from one sender: the old walk was quadratic.
    const wide = readTransaction({
      txid: 'c'.repeat(64),
      vin: [{ prevout: { scriptpubkey_address: 'bc1qsender', value: 100_000 } }],
      vout: Array.from({ length: 40_000 }, (_, n) => ({ scriptpubkey_address: `bc1qpayee${n}`, value: 1 })),
      fee: 10,
    });
    let count = 0;
    const ms = timed(() => (count = movements(wide).length));
    assert.equal(count, 40_001);
    assert.ok(ms < 1000, `movements of 40,000 outputs in ${ms} ms`);
  });

  test('the chain id: the message names both ids; CHAIN_ID_<NAME> for a devnet (EVM chains: Bitcoin has no such variable)', () => {
    assert.equal(wrongChainReason('ethereum', 1, 137), 'the node of ethereum answers chain id 137 (Polygon), not 1');
    assert.equal(wrongChainReason('base', 8453, 31337), 'the node of base answers chain id 31337, not 8453');
    const read = (vars: Record<string, string>) => readChainSettings(new EnvReader(vars));
    assert.equal(read({ CHAIN_RPC_ETHEREUM: 'https://rpc.example' }).chains.ethereum!.rpcChainId, 1);
    const devnet = read({ CHAIN_RPC_ETHEREUM: 'https://rpc.example', CHAIN_ID_ETHEREUM: '31337' }).chains.ethereum!;
    assert.equal(devnet.rpcChainId, 31337);
    assert.equal(devnet.chainId, 1, "the indexer's chainid stays the chain's own");
    assert.throws(() => read({ CHAIN_RPC_ETHEREUM: 'https://rpc.example', CHAIN_ID_ETHEREUM: 'one' }), /CHAIN_ID_ETHEREUM/);
    assert.equal(read({ CHAIN_ESPLORA_BITCOIN: 'https://esplora.example', CHAIN_ID_BITCOIN: '1' }).chains.bitcoin!.url, 'https://esplora.example', 'an unknown variable is not read');
  });
});

describe('list caps in each adapter', () => {
  test('freelance: the page asked for, the owners of the projects kept only', () => {
    const projects = Array.from({ length: 60_000 }, (_, n) => ({ id: n + 1, title: `Project ${n}`, owner_id: n === 0 ? 7 : 8 }));
    // A broken entry among users the kept projects do not name is never read.
    const answer = json({ status: 'success', result: { projects, total_count: 60_000, users: { 7: { location: { country: { name: 'Chile' } } }, 8: { location: {} }, 9: 'not a user' } } });
    const outcome = parseFreelanceSearch(answer, 25);
    assert.equal(outcome.kind, 'ok', JSON.stringify(outcome).slice(0, 200));
    if (outcome.kind !== 'ok') return;
    assert.equal(outcome.value.projects.length, 25);
    assert.equal(outcome.value.projects[0]!.country, 'Chile');
    assert.equal(outcome.value.total, 60_000);
    const skills = parseFreelanceSearch(json({ status: 'success', result: { projects: [{ id: 1, title: 't', jobs: Array.from({ length: 5000 }, () => ({ name: 'PHP' })) }] } }));
    assert.equal(skills.kind === 'ok' && skills.value.projects[0]!.skills.length, 100);
  });

  test('video: a search page and a comment page of 100 at most, the continuation still read', () => {
    const videos = Array.from({ length: 5000 }, (_, n) => ({ videoRenderer: { videoId: `v${String(n).padStart(10, '0')}`, title: { runs: [{ text: `Video ${n}` }] } } }));
    const more = { continuationItemRenderer: { continuationEndpoint: { continuationCommand: { token: 'NEXT' } } } };
    const search = readVideoSearch({ contents: { twoColumnSearchResultsRenderer: { primaryContents: { sectionListRenderer: { contents: [{ itemSectionRenderer: { contents: videos } }, more] } } } } });
    assert.equal(search.kind, 'ok');
    if (search.kind !== 'ok') return;
    assert.equal(search.value.items.length, 100);
    assert.equal(search.value.continuation, 'NEXT');
    const comments = Array.from({ length: 3000 }, (_, n) => ({ commentThreadRenderer: { comment: { commentRenderer: { commentId: `c${n}`, contentText: { simpleText: `comment ${n}` } } } } }));
    const page = readComments({ onResponseReceivedEndpoints: [{ appendContinuationItemsAction: { continuationItems: [...comments, more] } }] });
    assert.equal(page.kind, 'ok');
    if (page.kind !== 'ok') return;
    assert.equal(page.value.items.length, 100);
    assert.equal(page.value.continuation, 'NEXT');
  });

  test('forum: a listing of 100 posts and the pinned ones (110), a thread of 500 comments and 50 levels', () => {
    const post = (n: number) => ({ kind: 't3', data: { id: `p${n}`, name: `t3_p${n}`, subreddit: 's', title: 't', author: 'a', score: 1, num_comments: 0, created_utc: 1, url: 'https://x.example', permalink: `/r/s/comments/p${n}/`, selftext: '', over_18: false, is_self: true } });
    const listing = (children: unknown[]) => ({ kind: 'Listing', data: { children, after: null, before: null } });
    assert.equal(mapPostPage(listing(Array.from({ length: 20_000 }, (_, n) => post(n)))).posts.length, 110);

    const comment = (id: string, replies: unknown = '') => ({ kind: 't1', data: { id, name: `t1_${id}`, author: 'a', body: 'b', score: 1, created_utc: 1, parent_id: 't3_p', permalink: `/r/s/comments/p/_/${id}/`, replies } });
    const wide = mapCommentTree(listing(Array.from({ length: 20_000 }, (_, n) => comment(`c${n}`))));
    assert.equal(wide.comments.length, MAX_THREAD_COMMENTS);
    let deep: unknown = '';
    for (let level = 0; level < 400; level += 1) deep = listing([comment(`d${level}`, deep)]);
    let depth = 0;
    for (let node = mapCommentTree(deep).comments[0]; node; node = node.replies[0]) depth = node.depth;
    assert.equal(depth, MAX_COMMENT_DEPTH);
  });

  test('microblog: a timeline of 100 posts, its bottom cursor still read', () => {
    const user = { id: '11', screen_name: 'someone', name: 'Some One', generation: 'legacy' as const };
    const entries = Array.from({ length: 3000 }, (_, n) => itemEntry(tweetResult({ id: String(n + 1), user })));
    const page = readTimeline([addEntries([...entries, cursorEntry('bottom', 'MORE')])]);
    assert.equal(page.posts.length, 100);
    assert.equal(page.cursors.bottom, 'MORE');
  });

  for (const name of Object.keys(ENGINES) as EngineName[]) {
    test(`search engine ${name}: an upstream page of 100 results at most`, () => {
      const page = SERP_FIXTURES[name].results(fixtureResults('cap', 400));
      const origin = new URL(ENGINES[name].baseUrl ?? 'https://engine.example').origin;
      const outcome = ENGINES[name].parse({ status: page.status, url: origin + page.path, headers: { 'content-type': 'text/html; charset=utf-8' }, body: page.body });
      assert.equal(outcome.kind, 'ok');
      assert.equal(outcome.kind === 'ok' && outcome.value.length, 100);
    });
  }
});
