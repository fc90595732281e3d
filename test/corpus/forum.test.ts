/**
 * Corpus tier: the forum parsers on real Reddit answers recorded by PRAW's test suite
 * (CORPUS_DIR/forum, listed in CORPUS_DIR/SOURCES.md). Every mapped field is checked against the
 * recorded JSON, read independently of the parser, so a parser that drops, renames or
 * misconverts a field fails here.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { corpusDir } from '../support/corpus.ts';
import type { UpstreamResponse } from '../../src/adapters/kit/types.ts';
import { mapComment, parseCommentLocation, parsePostPage, parseThread, parseUser } from '../../src/adapters/reddit/parse.ts';
import type { ForumComment, ForumPost } from '../../src/adapters/reddit/types.ts';

const corpus = corpusDir('forum');
type Raw = Record<string, any>;

/** The recorded answer as the runner would hand it over: status, URI and content type from the .meta.txt sidecar. */
function recorded(name: string): { response: UpstreamResponse; json: any } {
  const body = readFileSync(path.join(corpus.dir, `${name}.json`), 'utf8');
  const meta = Object.fromEntries(
    readFileSync(path.join(corpus.dir, `${name}.meta.txt`), 'utf8')
      .split('\n')
      .filter((line) => line.includes(': '))
      .map((line) => [line.slice(0, line.indexOf(': ')), line.slice(line.indexOf(': ') + 2)]),
  );
  return {
    response: { status: Number(meta.status), url: meta.uri, headers: { 'content-type': meta['content-type'] }, body },
    json: JSON.parse(body),
  };
}

/** Written apart from the parser: seconds since the epoch → ISO 8601 with six fraction digits. */
function iso(seconds: number): string {
  const date = new Date(Math.round(seconds * 1000));
  return date.toISOString().replace(/\.(\d{3})Z$/, (_, ms) => `.${ms}${String(Math.round(seconds * 1e6) % 1000).padStart(3, '0')}Z`);
}

function expectPost(post: ForumPost, raw: Raw) {
  assert.deepEqual(post, {
    id: raw.id,
    name: raw.name,
    subreddit: raw.subreddit,
    title: raw.title,
    author: raw.author,
    score: raw.score,
    num_comments: raw.num_comments,
    created_at: iso(raw.created_utc),
    url: raw.url,
    permalink: `https://www.reddit.com${raw.permalink}`,
    selftext: raw.selftext,
    over_18: raw.over_18,
    is_self: raw.is_self,
  });
}

function expectComments(comments: ForumComment[], rawListing: Raw, postPermalink: string, depth: number) {
  const raw = rawListing.data.children.filter((child: Raw) => child.kind === 't1').map((child: Raw) => child.data);
  assert.equal(comments.length, raw.length);
  comments.forEach((comment, index) => {
    const source = raw[index];
    const { replies, ...fields } = comment;
    assert.deepEqual(fields, {
      id: source.id,
      name: source.name,
      author: source.author,
      body: source.body,
      score: source.score,
      created_at: iso(source.created_utc),
      parent_id: source.parent_id,
      depth,
      // These 2016 recordings carry no comment permalink: it is the post's permalink + the id.
      permalink: source.permalink ? `https://www.reddit.com${source.permalink}` : `${postPermalink}${source.id}/`,
    });
    if (source.replies === '') assert.deepEqual(replies, []);
    else expectComments(replies, source.replies, postPermalink, depth + 1);
  });
}

describe('forum parsers on recorded Reddit answers', { skip: corpus.skip }, () => {
  test('r/askreddit hot: every t3 becomes a post, fields as recorded, cursors passed through', () => {
    const { response, json } = recorded('reddit-r-askreddit-hot');
    const outcome = parsePostPage(response);
    assert.equal(outcome.kind, 'ok');
    if (outcome.kind !== 'ok') return;
    const raw = json.data.children.filter((child: Raw) => child.kind === 't3');
    assert.ok(raw.length > 50, `only ${raw.length} posts recorded`);
    assert.equal(outcome.value.posts.length, raw.length);
    outcome.value.posts.forEach((post, index) => expectPost(post, raw[index].data));
    assert.equal(outcome.value.after, json.data.after);
    assert.equal(outcome.value.before, json.data.before);
    assert.equal(outcome.value.after, 't3_48dlnt');
  });

  test('search "praw oauth search": every result as recorded', () => {
    const { response, json } = recorded('reddit-search-praw-oauth-search');
    const outcome = parsePostPage(response);
    assert.equal(outcome.kind, 'ok');
    if (outcome.kind !== 'ok') return;
    assert.equal(outcome.value.posts.length, json.data.children.length);
    assert.ok(outcome.value.posts.length > 0);
    outcome.value.posts.forEach((post, index) => expectPost(post, json.data.children[index].data));
    assert.equal(outcome.value.after, json.data.after);
  });

  test('thread 2gmzqe: the post, its nested comments, more_count from the stubs', () => {
    const { response, json } = recorded('reddit-comments-2gmzqe');
    const outcome = parseThread(response);
    assert.equal(outcome.kind, 'ok');
    if (outcome.kind !== 'ok') return;
    const { comments, more_count, ...post } = outcome.value;
    expectPost(post, json[0].data.children[0].data);
    expectComments(comments, json[1], post.permalink, 0);
    const stubs = (listing: Raw): number =>
      listing.data.children.reduce(
        (sum: number, child: Raw) => sum + (child.kind === 'more' ? child.data.children.length : child.data.replies ? stubs(child.data.replies) : 0),
        0,
      );
    assert.equal(more_count, stubs(json[1]));
    // The recording holds one top-level comment with one reply.
    assert.deepEqual(comments.map((c) => [c.id, c.replies.map((r) => r.id)]), [['cklfmye', ['cklhv0f']]]);
  });

  test('/api/info t1_cklhv0f: where the comment lives, and the comment mapped with a built permalink', () => {
    const { response, json } = recorded('reddit-api-info-t1_cklhv0f');
    const raw = json.data.children[0].data;
    const outcome = parseCommentLocation(response);
    assert.deepEqual(outcome, { kind: 'ok', value: { commentId: raw.id, postId: raw.link_id.replace('t3_', ''), subreddit: raw.subreddit } });
    const { comment } = mapComment(raw);
    assert.deepEqual(comment, {
      id: raw.id,
      name: raw.name,
      author: raw.author,
      body: raw.body,
      score: raw.score,
      created_at: iso(raw.created_utc),
      parent_id: raw.parent_id,
      depth: 0,
      permalink: `https://www.reddit.com/r/${raw.subreddit}/comments/${raw.link_id.slice(3)}/_/${raw.id}/`,
      replies: [],
    });
  });

  test('user PyAPITestUser3 about: the profile fields as recorded', () => {
    const { response, json } = recorded('reddit-user-PyAPITestUser3-about');
    const outcome = parseUser(response);
    assert.deepEqual(outcome, {
      kind: 'ok',
      value: {
        id: json.data.id,
        name: json.data.name,
        created_at: iso(json.data.created_utc),
        link_karma: json.data.link_karma,
        comment_karma: json.data.comment_karma,
        is_suspended: false,
      },
    });
  });
});
