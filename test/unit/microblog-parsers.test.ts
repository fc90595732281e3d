/** The microblog parsers on hand-written answers of both schema generations. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { graphqlData, isoTimestamp, mapTweet, mapUser, parseTweetResult, parseUserResult, sessionSignal, sourceName, windowExhausted } from '../../src/adapters/x/parse.ts';
import { parseSearchTimeline, parseUserTweets, readTimeline } from '../../src/adapters/x/timeline.ts';
import { parseSyndication, syndicationAdapter, syndicationToken } from '../../src/adapters/x/syndication.ts';
import type { UpstreamResponse } from '../../src/adapters/kit/types.ts';
import {
  addEntries, cursorEntry, itemEntry, moduleEntry, pinEntry, replaceEntry, searchBody, syndicationBody, tombstone, tweetResult, tweetResultBody,
  unavailable, userBody, userResult, userTweetsBody, type UserSpec,
} from '../support/microblog-fixtures.ts';

const json = (body: string, status = 200, headers: Record<string, string> = {}): UpstreamResponse => ({
  status, url: 'https://x.com/i/api/graphql/q/Op', headers: { 'content-type': 'application/json', ...headers }, body,
});

const legacyUser: UserSpec = { id: '11', screen_name: 'OldTimer', name: 'Old Timer', generation: 'legacy', description: 'old bio', followers: 1000, following: 20, posts: 300, legacyVerified: true };
const modernUser: UserSpec = { id: '22', screen_name: 'NewKid', name: 'New Kid', generation: '2026', description: 'new bio', followers: 50, following: 7, posts: 9, blueVerified: true, nullLegacy: true };

describe('post item mapping', () => {
  for (const user of [legacyUser, modernUser]) {
    test(`every field, ${user.generation} user generation`, () => {
      const item = mapTweet(tweetResult({ id: '100', user, text: 'short &amp; text', likes: 42, views: '9001', sensitive: true }));
      assert.deepEqual(item, {
        id: '100',
        tweet_url: `https://x.com/${user.screen_name}/status/100`,
        text: 'short &amp; text',
        like_count: 42,
        view_count: 9001,
        source: 'Twitter Web App',
        sensitive: true,
        media: [],
        created_at: '2026-02-06T21:09:45.000000Z',
        author: { id: user.id, username: user.screen_name, name: user.name },
        reply_count: 2,
        retweet_count: 3,
        quote_count: 4,
        lang: 'en',
      });
    });
  }

  test('note_tweet text wins over the truncated full_text', () => {
    const item = mapTweet(tweetResult({ id: '1', user: modernUser, text: 'truncated…', note: 'the whole long text' }));
    assert.equal(item?.text, 'the whole long text');
  });

  test('no view count is null; no possibly_sensitive is false; no source is null', () => {
    const item = mapTweet(tweetResult({ id: '1', user: modernUser, views: null, source: null }));
    assert.equal(item?.view_count, null);
    assert.equal(item?.sensitive, false);
    assert.equal(item?.source, null);
  });

  test('media: photo, video with the highest-bitrate mp4, animated gif, in upstream order', () => {
    const item = mapTweet(
      tweetResult({
        id: '1',
        user: legacyUser,
        media: [
          { type: 'video', image: 'https://pbs.twimg.com/v.jpg', variants: [[undefined, 'https://v/pl.m3u8', 'application/x-mpegURL'], [832000, 'https://v/mid.mp4', 'video/mp4'], [2176000, 'https://v/high.mp4', 'video/mp4'], [256000, 'https://v/low.mp4', 'video/mp4']] },
          { type: 'photo', image: 'https://pbs.twimg.com/p.jpg' },
          { type: 'animated_gif', image: 'https://pbs.twimg.com/g.jpg', variants: [[0, 'https://v/g.mp4', 'video/mp4']] },
        ],
      }),
    );
    assert.deepEqual(item?.media, [
      { type: 'video', image_url: 'https://pbs.twimg.com/v.jpg', video_url: 'https://v/high.mp4' },
      { type: 'photo', image_url: 'https://pbs.twimg.com/p.jpg', video_url: null },
      { type: 'animated_gif', image_url: 'https://pbs.twimg.com/g.jpg', video_url: 'https://v/g.mp4' },
    ]);
  });

  test('TweetWithVisibilityResults is unwrapped', () => {
    assert.equal(mapTweet(tweetResult({ id: '7', user: modernUser, limited: true }))?.id, '7');
  });

  test('source anchor text, entities decoded', () => {
    assert.equal(sourceName('<a href="http://x.com/download/android" rel="nofollow">Twitter for Android</a>'), 'Twitter for Android');
    assert.equal(sourceName('<a href="https://example.com">Tom &amp; Jerry&#39;s app</a>'), "Tom & Jerry's app");
    assert.equal(sourceName(''), null);
  });

  test('timestamps become ISO 8601 with microseconds', () => {
    assert.equal(isoTimestamp('Sat Dec 14 04:35:55 +0000 2013'), '2013-12-14T04:35:55.000000Z');
    assert.equal(isoTimestamp('Sat Dec 14 04:35:55 +0200 2013'), '2013-12-14T02:35:55.000000Z');
    assert.equal(isoTimestamp('2026-02-06T21:09:45.123Z'), '2026-02-06T21:09:45.123000Z');
    assert.equal(isoTimestamp('nonsense'), null);
  });
});

describe('TweetResultByRestId', () => {
  test('a post', () => {
    const outcome = parseTweetResult(json(tweetResultBody(tweetResult({ id: '5', user: modernUser }))));
    assert.equal(outcome.kind, 'ok');
  });
  for (const [name, result] of [['tombstone', tombstone()], ['unavailable', unavailable()], ['absent', undefined], ['wrapped tombstone', { __typename: 'TweetWithVisibilityResults', tweet: tombstone() }]] as const) {
    test(`${name} → not_found`, () => {
      assert.equal(parseTweetResult(json(tweetResultBody(result))).kind, 'not_found');
    });
  }
});

describe('user mapping', () => {
  test('legacy generation', () => {
    assert.deepEqual(mapUser(userResult(legacyUser)), {
      id: '11', username: 'OldTimer', name: 'Old Timer', description: 'old bio', followers_count: 1000, following_count: 20, posts_count: 300,
      verified: true, created_at: '2013-12-14T04:35:55.000000Z', profile_image_url: 'https://pbs.twimg.com/profile_images/11/a_normal.jpg', protected: false,
    });
  });
  test('2026 generation (legacy null, fields under core, avatar and counts)', () => {
    assert.deepEqual(mapUser(userResult({ ...modernUser, protected: true })), {
      id: '22', username: 'NewKid', name: 'New Kid', description: 'new bio', followers_count: 50, following_count: 7, posts_count: 9,
      verified: true, created_at: '2013-12-14T04:35:55.000000Z', profile_image_url: 'https://pbs.twimg.com/profile_images/22/a_normal.jpg', protected: true,
    });
  });
  test('verified is false without either check mark', () => {
    assert.equal(mapUser(userResult({ id: '1', screen_name: 'a' }))?.verified, false);
  });
  test('unknown user ({"data":{}}) and UserUnavailable (suspended) → not_found', () => {
    assert.equal(parseUserResult(json(userBody(undefined))).kind, 'not_found');
    assert.equal(parseUserResult(json(userBody({ __typename: 'UserUnavailable', reason: 'Suspended' }))).kind, 'not_found');
    assert.equal(parseUserResult(json(userBody(userResult(legacyUser)))).kind, 'ok');
  });
});

describe('timelines', () => {
  const post = (id: string, user = modernUser) => tweetResult({ id, user });

  test('items, modules, pin first, promoted skipped, cursors', () => {
    const page = readTimeline([
      { type: 'TimelineClearCache' },
      pinEntry(post('9')),
      addEntries([
        itemEntry(post('1')),
        itemEntry(post('666'), { promoted: true }),
        itemEntry(post('667'), { entryId: 'promoted-tweet-667' }),
        moduleEntry('m', [post('2'), post('3', legacyUser)], [userResult(legacyUser)]),
        itemEntry(post('4')),
        itemEntry(post('9')),
        cursorEntry('top', 'TOP-1'),
        cursorEntry('bottom', 'BOTTOM-1'),
      ]),
    ]);
    assert.deepEqual(page.posts.map((p) => p.id), ['9', '1', '2', '3', '4']);
    assert.deepEqual(page.cursors, { top: 'TOP-1', bottom: 'BOTTOM-1' });
  });

  test('cursors inside TimelineReplaceEntry replace the earlier ones', () => {
    const page = readTimeline([addEntries([itemEntry(post('1')), cursorEntry('bottom', 'OLD')]), replaceEntry(cursorEntry('bottom', 'NEW')), replaceEntry(cursorEntry('top', 'TOP'))]);
    assert.deepEqual(page.cursors, { top: 'TOP', bottom: 'NEW' });
  });

  test('search and user-tweets answers', () => {
    const search = parseSearchTimeline(json(searchBody([addEntries([itemEntry(post('1')), cursorEntry('bottom', 'B')])])));
    assert.equal(search.kind, 'ok');
    assert.deepEqual(search.kind === 'ok' && search.value.posts.map((p) => p.id), ['1']);
    const tweets = parseUserTweets(json(userTweetsBody([addEntries([itemEntry(post('2', legacyUser))])])));
    assert.deepEqual(tweets.kind === 'ok' && tweets.value.posts.map((p) => p.tweet_url), ['https://x.com/OldTimer/status/2']);
    assert.equal(parseUserTweets(json(userBody({ __typename: 'UserUnavailable' }))).kind, 'not_found');
    assert.equal(parseSearchTimeline(json('{"data":{"search_by_raw_query":{}}}')).kind, 'changed');
  });
});

describe('what an answer says about the upstream and the session', () => {
  test('HTML (a Cloudflare page) is blocked; a 404 with an empty body is a changed query id; errors without data are changed', () => {
    assert.equal(graphqlData({ ...json('<!DOCTYPE html><title>Just a moment...</title>', 403), headers: { 'content-type': 'text/html' } }).kind, 'blocked');
    assert.equal(graphqlData(json('', 404)).kind, 'changed');
    const errors = graphqlData(json('{"errors":[{"message":"Query: Unspecified","code":0}]}'));
    assert.equal(errors.kind, 'changed');
    assert.match(errors.kind === 'changed' ? errors.reason : '', /GraphQL errors/);
    assert.equal(graphqlData(json('{"errors":[{"message":"partial"}],"data":{"user":{}}}')).kind, 'ok');
  });

  test('session signals: 429 and code 88 rate-limit, 401/403/32/326 refuse', () => {
    assert.deepEqual(sessionSignal(json('{}', 429, { 'x-rate-limit-reset': '1900000000' })), { kind: 'rate_limited', resetAt: 1_900_000_000_000 });
    assert.deepEqual(sessionSignal(json('{"errors":[{"code":88,"message":"Rate limit exceeded"}]}', 200)), { kind: 'rate_limited', resetAt: null });
    assert.deepEqual(sessionSignal(json('{"errors":[{"code":326}]}', 403)), { kind: 'refused', status: 403, code: 326 });
    assert.deepEqual(sessionSignal(json('{"errors":[{"code":32}]}', 200)), { kind: 'refused', status: 200, code: 32 });
    assert.deepEqual(sessionSignal(json('', 401)), { kind: 'refused', status: 401, code: null });
    assert.equal(sessionSignal(json(userBody(userResult(legacyUser)))), null);
    assert.equal(windowExhausted(json('{}', 200, { 'x-rate-limit-remaining': '0' })), true);
    assert.equal(windowExhausted(json('{}', 200, { 'x-rate-limit-remaining': '12' })), false);
  });
});

describe('embed (syndication) source', () => {
  test('the token is derived from the id as the embed script does', () => {
    const id = '1649191520250245121';
    assert.equal(syndicationToken(id), ((Number(id) / 1e15) * Math.PI).toString(36).replace(/(0+|\.)/g, ''));
    assert.match(syndicationToken(id), /^[0-9a-z]+$/);
    const request = syndicationAdapter.buildRequest({ id }, { baseUrl: 'https://cdn.syndication.twimg.com', now: new Date() });
    const url = new URL(request.url);
    assert.equal(url.pathname, '/tweet-result');
    assert.equal(url.searchParams.get('id'), id);
    assert.equal(url.searchParams.get('token'), syndicationToken(id));
  });

  test('maps to the post item with view_count and source null', () => {
    const outcome = parseSyndication(json(syndicationBody({ id: '5', screen_name: 'Emb', likes: 3, media: 'video' })));
    assert.equal(outcome.kind, 'ok');
    if (outcome.kind !== 'ok') return;
    assert.equal(outcome.value.tweet_url, 'https://x.com/Emb/status/5');
    assert.equal(outcome.value.like_count, 3);
    assert.equal(outcome.value.view_count, null);
    assert.equal(outcome.value.source, null);
    assert.equal(outcome.value.sensitive, false);
    assert.deepEqual(outcome.value.media, [{ type: 'video', image_url: 'https://pbs.twimg.com/thumb/v.jpg', video_url: 'https://video.twimg.com/high.mp4' }]);
  });

  test('404, tombstone → not_found; HTML → blocked', () => {
    assert.equal(parseSyndication(json('', 404)).kind, 'not_found');
    assert.equal(parseSyndication(json('{"__typename":"TweetTombstone","tombstone":{}}')).kind, 'not_found');
    assert.equal(parseSyndication({ ...json('<html></html>'), headers: { 'content-type': 'text/html' } }).kind, 'blocked');
  });
});
