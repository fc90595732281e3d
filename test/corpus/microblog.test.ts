/**
 * The microblog parsers on real X GraphQL answers recorded in the corpus (CORPUS_DIR/microblog:
 * SearchTimeline, TweetDetail, UserByScreenName, UserTweets, all of the 2026 schema generation).
 * Every field of every post item and of the user is checked against the recorded JSON, read
 * straight from its documented path; a few known values pin the reading down.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { corpusDir } from '../support/corpus.ts';
import { parseTweetResult, parseUserResult } from '../../src/adapters/x/parse.ts';
import { parseSearchTimeline, parseUserTweets, readTimeline } from '../../src/adapters/x/timeline.ts';
import type { UpstreamResponse } from '../../src/adapters/kit/types.ts';
import type { PostItem } from '../../src/adapters/x/types.ts';

const corpus = corpusDir('microblog');
const read = (name: string) => readFileSync(path.join(corpus.dir, `twscrape-raw_${name}.json`), 'utf8');
const answer = (body: string): UpstreamResponse => ({ status: 200, url: 'https://x.com/i/api/graphql/q/Op', headers: { 'content-type': 'application/json' }, body });

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `Fri Feb 06 21:09:45 +0000 2026` (always UTC in X's answers) → `2026-02-06T21:09:45.000000Z`. */
function expectedTimestamp(value: string): string {
  const [, month, day, time, offset, year] = value.split(' ');
  assert.equal(offset, '+0000');
  return `${year}-${String(MONTHS.indexOf(month) + 1).padStart(2, '0')}-${day}T${time}.000000Z`;
}

/** The post item as the contract defines it, read from the raw result's paths. */
function expectedPost(raw: any): PostItem {
  const tweet = raw.__typename === 'TweetWithVisibilityResults' ? raw.tweet : raw;
  const user = tweet.core.user_results.result;
  const screenName = user.core?.screen_name ?? user.legacy.screen_name;
  const legacy = tweet.legacy;
  return {
    id: tweet.rest_id,
    tweet_url: `https://x.com/${screenName}/status/${tweet.rest_id}`,
    text: tweet.note_tweet?.note_tweet_results?.result?.text ?? legacy.full_text,
    like_count: legacy.favorite_count,
    view_count: tweet.views?.count === undefined ? null : Number(tweet.views.count),
    source: tweet.source ? /<a [^>]*>(.*)<\/a>/.exec(tweet.source)![1] : null,
    sensitive: legacy.possibly_sensitive ?? false,
    media: (legacy.extended_entities?.media ?? []).map((m: any) => ({
      type: m.type,
      image_url: m.media_url_https,
      video_url:
        m.type === 'photo'
          ? null
          : [...m.video_info.variants].filter((v: any) => v.content_type === 'video/mp4').sort((a: any, b: any) => b.bitrate - a.bitrate)[0].url,
    })),
    created_at: expectedTimestamp(legacy.created_at),
    author: { id: user.rest_id, username: screenName, name: user.core?.name ?? user.legacy.name },
    reply_count: legacy.reply_count,
    retweet_count: legacy.retweet_count,
    quote_count: legacy.quote_count,
    lang: legacy.lang,
  };
}

/** The timeline's posts in the order the contract asks: pinned first, items and module items in order, no ads. */
function expectedTimeline(instructions: any[]): { posts: PostItem[]; top: string | null; bottom: string | null } {
  const pinned: PostItem[] = [];
  const posts: PostItem[] = [];
  let top: string | null = null;
  let bottom: string | null = null;
  const take = (content: any, into: PostItem[]) => {
    if (content?.itemType === 'TimelineTweet' && !content.promotedMetadata) into.push(expectedPost(content.tweet_results.result));
  };
  for (const instruction of instructions) {
    const entries = instruction.type === 'TimelineAddEntries' ? instruction.entries : instruction.entry ? [instruction.entry] : [];
    for (const entry of entries) {
      if (entry.entryId.startsWith('promoted-')) continue;
      if (entry.entryId.startsWith('cursor-top')) top = entry.content.value;
      else if (entry.entryId.startsWith('cursor-bottom')) bottom = entry.content.value;
      else if (entry.content.items) for (const item of entry.content.items) take(item.item.itemContent, posts);
      else take(entry.content.itemContent, instruction.type === 'TimelinePinEntry' ? pinned : posts);
    }
  }
  return { posts: [...pinned, ...posts], top, bottom };
}

function assertPosts(actual: PostItem[], expected: PostItem[]) {
  assert.equal(actual.length, expected.length);
  actual.forEach((post, index) => assert.deepEqual(post, expected[index], `post ${index} (${expected[index].id})`));
}

describe('microblog corpus', { skip: corpus.skip }, () => {
  test('SearchTimeline: every post item, in order, and both cursors', () => {
    const raw = JSON.parse(read('search'));
    const outcome = parseSearchTimeline(answer(read('search')));
    assert.equal(outcome.kind, 'ok');
    if (outcome.kind !== 'ok') return;
    const expected = expectedTimeline(raw.data.search_by_raw_query.search_timeline.timeline.instructions);
    assert.equal(expected.posts.length, 20);
    assertPosts(outcome.value.posts, expected.posts);
    assert.deepEqual(outcome.value.cursors, { top: expected.top, bottom: expected.bottom });
    assert.ok(outcome.value.posts.some((p) => p.media.some((m) => m.type === 'video' && m.video_url?.includes('.mp4'))), 'a video with its mp4');
    assert.ok(outcome.value.posts.some((p) => p.text.length > 280), 'a long-form note text');
  });

  test('UserTweets: the pinned post first, module posts included, the who-to-follow module left out', () => {
    const raw = JSON.parse(read('user_tweets'));
    const outcome = parseUserTweets(answer(read('user_tweets')));
    assert.equal(outcome.kind, 'ok');
    if (outcome.kind !== 'ok') return;
    const expected = expectedTimeline(raw.data.user.result.timeline.timeline.instructions);
    assertPosts(outcome.value.posts, expected.posts);
    assert.deepEqual(outcome.value.cursors, { top: expected.top, bottom: expected.bottom });
    const pinned = outcome.value.posts[0];
    assert.equal(pinned.id, '2019881223666233717');
    assert.equal(pinned.tweet_url, 'https://x.com/XDevelopers/status/2019881223666233717');
    assert.equal(pinned.like_count, 5569);
    assert.equal(pinned.view_count, 2525462);
    assert.equal(pinned.source, 'Twitter Web App');
    assert.equal(pinned.created_at, '2026-02-06T21:09:45.000000Z');
    assert.ok(outcome.value.posts.some((p) => p.id === '2082640274845811115'), 'the profile-conversation module\'s post');
  });

  test('TweetDetail: the focal post through the TweetResultByRestId reader, and the conversation modules', () => {
    const raw = JSON.parse(read('tweet_details'));
    const instructions = raw.data.threaded_conversation_with_injections_v2.instructions;
    const focal = instructions.flatMap((i: any) => i.entries ?? []).find((e: any) => e.entryId === 'tweet-1649191520250245121').content.itemContent.tweet_results.result;
    const outcome = parseTweetResult(answer(JSON.stringify({ data: { tweetResult: { result: focal } } })));
    assert.equal(outcome.kind, 'ok');
    if (outcome.kind !== 'ok') return;
    assert.deepEqual(outcome.value, expectedPost(focal));
    const thread = readTimeline(instructions);
    assertPosts(thread.posts, expectedTimeline(instructions).posts);
    assert.ok(thread.posts.some((p) => p.media.some((m) => m.type === 'animated_gif' && m.video_url !== null)), 'an animated gif with its mp4');
  });

  test('UserByScreenName (2026 generation: no legacy): every field', () => {
    const raw = JSON.parse(read('user_by_login')).data.user.result;
    const outcome = parseUserResult(answer(read('user_by_login')));
    assert.equal(outcome.kind, 'ok');
    if (outcome.kind !== 'ok') return;
    assert.equal(raw.legacy, undefined);
    assert.deepEqual(outcome.value, {
      id: raw.rest_id,
      username: raw.core.screen_name,
      name: raw.core.name,
      description: raw.profile_bio.description,
      followers_count: raw.relationship_counts.followers,
      following_count: raw.relationship_counts.following,
      posts_count: raw.tweet_counts.tweets,
      verified: raw.is_blue_verified || raw.verification.verified,
      created_at: expectedTimestamp(raw.core.created_at),
      profile_image_url: raw.avatar.image_url,
      protected: raw.privacy.protected,
    });
    assert.deepEqual(
      { id: outcome.value.id, username: outcome.value.username, followers: outcome.value.followers_count, posts: outcome.value.posts_count, verified: outcome.value.verified, created: outcome.value.created_at },
      { id: '2244994945', username: 'XDevelopers', followers: 695695, posts: 4319, verified: true, created: '2013-12-14T04:35:55.000000Z' },
    );
  });
});
