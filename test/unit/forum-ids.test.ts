import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bareId, commentIdsFromUrl, isFullname, postIdFromUrl, subredditName, userName } from '../../src/adapters/reddit/ids.ts';

test('every reddit.com post URL form resolves to the post id', () => {
  const forms = [
    'https://www.reddit.com/r/redditdev/comments/2gmzqe/praw_https_enabled_praw_testing_needed/',
    'https://www.reddit.com/r/redditdev/comments/2gmzqe/praw_https_enabled_praw_testing_needed',
    'https://old.reddit.com/r/redditdev/comments/2gmzqe/praw_https/',
    'https://new.reddit.com/r/redditdev/comments/2gmzqe/',
    'https://np.reddit.com/r/redditdev/comments/2gmzqe/x/?context=3',
    'https://reddit.com/comments/2gmzqe',
    'http://m.reddit.com/r/redditdev/comments/2gmzqe/slug/?utm_source=share&utm_medium=web',
    'https://www.reddit.com/user/bboe/comments/2gmzqe/slug/',
    'https://www.reddit.com/r/redditdev/comments/2GMZQE/slug/#top',
    'https://redd.it/2gmzqe',
    'https://redd.it/2gmzqe/',
    'https://redd.it/2gmzqe?share=1',
    'https://www.reddit.com/gallery/2gmzqe',
    'https://www.reddit.com/r/redditdev/comments/2gmzqe/slug/cklhv0f/',
  ];
  for (const url of forms) assert.equal(postIdFromUrl(url), '2gmzqe', url);
});

test('other sites and Reddit URLs that name no post resolve to nothing', () => {
  const refused = [
    'https://example.com/r/redditdev/comments/2gmzqe/',
    'https://notreddit.com/comments/2gmzqe',
    'https://reddit.com.evil.example/comments/2gmzqe',
    'https://www.reddit.com/r/redditdev/',
    'https://www.reddit.com/r/redditdev/comments/',
    'https://www.reddit.com/r/redditdev/s/AbCdEf123', // a share link needs a redirect to resolve
    'https://www.reddit.com/r/redditdev/comments/not-an-id/',
    'https://redd.it/',
    'https://redd.it/a/b',
    'ftp://reddit.com/comments/2gmzqe',
    'not a url',
  ];
  for (const url of refused) assert.equal(postIdFromUrl(url), null, url);
});

test('a comment permalink resolves to its post and comment, in every host form', () => {
  for (const host of ['www.reddit.com', 'old.reddit.com', 'new.reddit.com', 'np.reddit.com', 'reddit.com']) {
    assert.deepEqual(commentIdsFromUrl(`https://${host}/r/redditdev/comments/2gmzqe/slug/cklhv0f/?context=3`), { postId: '2gmzqe', commentId: 'cklhv0f' }, host);
    assert.deepEqual(commentIdsFromUrl(`https://${host}/r/redditdev/comments/2gmzqe/slug/cklhv0f`), { postId: '2gmzqe', commentId: 'cklhv0f' }, host);
  }
  assert.deepEqual(commentIdsFromUrl('https://www.reddit.com/comments/2gmzqe/_/cklhv0f/'), { postId: '2gmzqe', commentId: 'cklhv0f' });
  // A post URL names no comment.
  assert.equal(commentIdsFromUrl('https://www.reddit.com/r/redditdev/comments/2gmzqe/slug/'), null);
  assert.equal(commentIdsFromUrl('https://redd.it/2gmzqe'), null);
  assert.equal(commentIdsFromUrl('https://example.com/r/x/comments/2gmzqe/slug/cklhv0f/'), null);
});

test('ids are taken with or without their prefix, any case; anything else is refused', () => {
  assert.equal(bareId('1cebxh', 't3'), '1cebxh');
  assert.equal(bareId('t3_1cebxh', 't3'), '1cebxh');
  assert.equal(bareId('T3_1CEBXH', 't3'), '1cebxh');
  assert.equal(bareId('t1_c9ftsjg', 't1'), 'c9ftsjg');
  assert.equal(bareId('t1_c9ftsjg', 't3'), null);
  assert.equal(bareId('abc-def', 't3'), null);
  assert.equal(bareId('', 't3'), null);
  assert.equal(bareId('x'.repeat(14), 't3'), null);
});

test('subreddit and user names, with or without their prefixes', () => {
  assert.equal(subredditName('AskReddit'), 'AskReddit');
  assert.equal(subredditName('r/AskReddit'), 'AskReddit');
  assert.equal(subredditName('/r/AskReddit/'), 'AskReddit');
  assert.equal(subredditName('pics+funny'), 'pics+funny');
  assert.equal(subredditName('bad name'), null);
  assert.equal(subredditName('a'), null);
  assert.equal(subredditName('../../api'), null);
  assert.equal(userName('spez'), 'spez');
  assert.equal(userName('u/spez'), 'spez');
  assert.equal(userName('/user/Some-User_1/'), 'Some-User_1');
  assert.equal(userName('no/slash'), null);
  assert.equal(userName('x'.repeat(21)), null);
  assert.equal(isFullname('t3_48dlnt'), true);
  assert.equal(isFullname('48dlnt'), false);
  assert.equal(isFullname('t3_48dl&nt'), false);
});
