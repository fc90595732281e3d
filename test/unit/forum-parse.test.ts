import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  isoFromEpochSeconds,
  parseCommentContext,
  parseCommentLocation,
  parsePostPage,
  parseSubredditAbout,
  parseThread,
  parseToken,
  parseUser,
  readAnswer,
} from '../../src/adapters/reddit/parse.ts';
import type { UpstreamResponse } from '../../src/adapters/kit/types.ts';
import { comment, listing, more, NETWORK_POLICY_PAGE, post, subredditAbout, suspendedUser, thread, user, WHOA_THERE_PAGE } from '../support/forum-fixtures.ts';

function answer(body: unknown, options: { status?: number; url?: string; contentType?: string } = {}): UpstreamResponse {
  return {
    status: options.status ?? 200,
    url: options.url ?? 'https://oauth.reddit.com/r/testsub/hot?raw_json=1',
    headers: { 'content-type': options.contentType ?? 'application/json; charset=UTF-8' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

function ok<T>(outcome: { kind: string; value?: T }): T {
  assert.equal(outcome.kind, 'ok', JSON.stringify(outcome));
  return outcome.value as T;
}

test('created_utc floats become ISO 8601 with microseconds and Z', () => {
  assert.equal(isoFromEpochSeconds(1410935671.0), '2014-09-17T06:34:31.000000Z');
  assert.equal(isoFromEpochSeconds(1699971200.25), '2023-11-14T14:13:20.250000Z');
  assert.equal(isoFromEpochSeconds(1699971200.123456), '2023-11-14T14:13:20.123456Z');
  assert.equal(isoFromEpochSeconds(0), '1970-01-01T00:00:00.000000Z');
  // A fraction that rounds up to the next second carries over.
  assert.equal(isoFromEpochSeconds(1.9999999), '1970-01-01T00:00:02.000000Z');
});

test('a listing of t3 things becomes posts; cursors pass through; other kinds are skipped', () => {
  const page = ok(parsePostPage(answer(listing([post('aaa111'), { kind: 't5', data: { display_name: 'x' } }, post('bbb222', { is_self: false, url: 'https://i.example/x.png', over_18: true })], { after: 't3_bbb222', before: 't3_zzz' }))));
  assert.equal(page.after, 't3_bbb222');
  assert.equal(page.before, 't3_zzz');
  assert.deepEqual(page.posts, [
    {
      id: 'aaa111',
      name: 't3_aaa111',
      subreddit: 'testsub',
      title: 'Post aaa111 & <friends>',
      author: 'author_aaa111',
      score: 42,
      num_comments: 3,
      created_at: '2023-11-14T14:13:20.250000Z',
      url: 'https://www.reddit.com/r/testsub/comments/aaa111/post_aaa111/',
      permalink: 'https://www.reddit.com/r/testsub/comments/aaa111/post_aaa111/',
      selftext: 'Body of aaa111',
      over_18: false,
      is_self: true,
    },
    {
      id: 'bbb222',
      name: 't3_bbb222',
      subreddit: 'testsub',
      title: 'Post bbb222 & <friends>',
      author: 'author_bbb222',
      score: 42,
      num_comments: 3,
      created_at: '2023-11-14T14:13:20.250000Z',
      url: 'https://i.example/x.png',
      permalink: 'https://www.reddit.com/r/testsub/comments/bbb222/post_bbb222/',
      selftext: 'Body of bbb222',
      over_18: true,
      is_self: false,
    },
  ]);
  const empty = ok(parsePostPage(answer(listing([]))));
  assert.deepEqual(empty, { posts: [], after: null, before: null });
});

test('a thread keeps nested replies, deleted and removed comments, and counts more stubs', () => {
  const body = thread(post('p1', { num_comments: 9 }), [
    comment('c1', {}, [
      comment('c2', { parent_id: 't1_c1' }, [comment('c3', { parent_id: 't1_c2' }), more([], 't1_c2')]),
      comment('c4', { parent_id: 't1_c1', author: '[deleted]', body: '[deleted]' }),
      more(['m1', 'm2'], 't1_c1'),
    ]),
    comment('c5', { author: '[deleted]', body: '[removed]', score: 1 }),
    more(['m3', 'm4', 'm5']),
  ]);
  const result = ok(parseThread(answer(body)));
  assert.equal(result.id, 'p1');
  assert.equal(result.num_comments, 9);
  assert.equal(result.more_count, 5); // 2 nested + 3 top-level; "continue this thread" holds none
  assert.deepEqual(
    result.comments.map((c) => [c.id, c.depth, c.replies.map((r) => [r.id, r.depth, r.replies.map((x) => [x.id, x.depth])])]),
    [
      ['c1', 0, [['c2', 1, [['c3', 2]]], ['c4', 1, []]]],
      ['c5', 0, []],
    ],
  );
  const deleted = result.comments[0].replies[1];
  assert.equal(deleted.author, '[deleted]');
  assert.equal(deleted.body, '[deleted]');
  assert.equal(result.comments[1].body, '[removed]');
  assert.deepEqual(result.comments[0].replies[0].replies[0], {
    id: 'c3',
    name: 't1_c3',
    author: 'user_c3',
    body: 'Comment c3',
    score: 5,
    created_at: '2023-11-14T14:15:00.000000Z',
    parent_id: 't1_c2',
    depth: 2,
    permalink: 'https://www.reddit.com/r/testsub/comments/p1/post_p1/c3/',
    replies: [],
  });
});

test('a comment without a permalink (older answers) gets the post permalink + its id', () => {
  const body = thread(post('p1'), [comment('c1', { permalink: undefined })]);
  const result = ok(parseThread(answer(body)));
  assert.equal(result.comments[0].permalink, 'https://www.reddit.com/r/testsub/comments/p1/post_p1/c1/');
});

test('a thread without its post is not found; a broken shape is changed, never ok', () => {
  assert.equal(parseThread(answer([listing([]), listing([])])).kind, 'not_found');
  assert.equal(parseThread(answer(listing([post('p1')]))).kind, 'changed');
  assert.equal(parseThread(answer([listing([post('p1', { created_utc: 'yesterday' })]), listing([])])).kind, 'changed');
  assert.equal(parseThread(answer([listing([post('p1')]), listing([{ kind: 't3', data: {} }])])).kind, 'changed');
  assert.equal(parsePostPage(answer({ kind: 'Listing', data: { children: 'none' } })).kind, 'changed');
  assert.equal(parsePostPage(answer('{"kind": "Listing", ')).kind, 'changed');
});

test('/api/info: a comment gives its post; an empty listing is not found', () => {
  assert.deepEqual(ok(parseCommentLocation(answer(listing([comment('c1', { link_id: 't3_p9', subreddit: 'other' })])))), { commentId: 'c1', postId: 'p9', subreddit: 'other' });
  assert.equal(parseCommentLocation(answer(listing([]))).kind, 'not_found');
});

test('a comment context: the comment at depth 0 with its replies, its subreddit and post', () => {
  const body = thread(post('p1'), [comment('c2', { parent_id: 't1_c1' }, [comment('c3', { parent_id: 't1_c2' })])]);
  const result = ok(parseCommentContext(answer(body), 'c2'));
  assert.equal(result.id, 'c2');
  assert.equal(result.depth, 0);
  assert.equal(result.parent_id, 't1_c1');
  assert.equal(result.subreddit, 'testsub');
  assert.equal(result.post_id, 'p1');
  assert.deepEqual(result.replies.map((r) => [r.id, r.depth]), [['c3', 1]]);
  assert.equal(parseCommentContext(answer(body), 'zzz').kind, 'not_found');
});

test('user about: a t2; a suspended account keeps its name and nulls what Reddit withholds', () => {
  assert.deepEqual(ok(parseUser(answer(user('someone')))), {
    id: 'u1abc',
    name: 'someone',
    created_at: '2011-11-29T07:49:13.000000Z',
    link_karma: 10,
    comment_karma: 20,
    is_suspended: false,
  });
  assert.deepEqual(ok(parseUser(answer(suspendedUser('gone')))), { id: null, name: 'gone', created_at: null, link_karma: null, comment_karma: null, is_suspended: true });
  assert.equal(parseUser(answer(subredditAbout('x'))).kind, 'changed');
  assert.equal(ok(parseSubredditAbout(answer(subredditAbout('testsub')))).name, 'testsub');
});

test('triage: not found, unreadable communities, block pages, rate limits, server errors', () => {
  const cases: Array<[UpstreamResponse, string]> = [
    [answer({ message: 'Not Found', error: 404 }, { status: 404 }), 'not_found'],
    [answer({ reason: 'banned', message: 'Not Found', error: 404 }, { status: 404 }), 'not_found'],
    [answer({ reason: 'private', message: 'Forbidden', error: 403 }, { status: 403 }), 'not_found'],
    [answer({ reason: 'quarantined', quarantine_message: 'x', message: 'Forbidden', error: 403 }, { status: 403 }), 'not_found'],
    [answer({ reason: 'gated', message: 'Forbidden', error: 403 }, { status: 403 }), 'not_found'],
    [answer(listing([]), { url: 'https://www.reddit.com/subreddits/search.json?q=nosuchsub' }), 'not_found'],
    [answer({ message: 'Forbidden', error: 403 }, { status: 403 }), 'blocked'],
    [answer(NETWORK_POLICY_PAGE, { status: 403, contentType: 'text/html; charset=utf-8' }), 'blocked'],
    [answer(WHOA_THERE_PAGE, { status: 429, contentType: 'text/html' }), 'blocked'],
    [answer(WHOA_THERE_PAGE, { contentType: 'text/html' }), 'blocked'],
    [answer({ message: 'Too Many Requests', error: 429 }, { status: 429 }), 'blocked'],
    [answer('upstream connect error', { status: 503, contentType: 'text/plain' }), 'blocked'],
    [answer({ message: 'Unauthorized', error: 401 }, { status: 401 }), 'blocked'],
    [answer('{}', { status: 302 }), 'changed'],
    [answer('not json', { contentType: 'application/json' }), 'changed'],
  ];
  for (const [response, kind] of cases) assert.equal(readAnswer(response).kind, kind, `${response.status} ${response.body.slice(0, 60)}`);
  const whoa = readAnswer(answer(WHOA_THERE_PAGE, { status: 429, contentType: 'text/html' }));
  assert.match((whoa as { reason: string }).reason, /whoa there, pardner/);
  const policy = readAnswer(answer(NETWORK_POLICY_PAGE, { status: 403, contentType: 'text/html' }));
  assert.match((policy as { reason: string }).reason, /network policy/);
});

test('token answers: a token and its lifetime; an error answer or a broken one is refused', () => {
  assert.deepEqual(ok(parseToken(answer({ access_token: 'abc', token_type: 'bearer', expires_in: 86400, scope: '*' }))), { accessToken: 'abc', expiresInSeconds: 86400 });
  assert.equal(parseToken(answer({ error: 'unsupported_grant_type' })).kind, 'blocked');
  assert.equal(parseToken(answer({ message: 'Unauthorized', error: 401 }, { status: 401 })).kind, 'blocked');
  assert.equal(parseToken(answer({ access_token: '', expires_in: 10 })).kind, 'changed');
});
