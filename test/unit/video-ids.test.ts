import { test } from 'node:test';
import assert from 'node:assert/strict';
import { channelHandle, channelIdOrNull, channelRefFromUrl, channelScopeKey, playlistId, playlistIdFromUrl, videoId, videoIdFromUrl } from '../../src/adapters/video/ids.ts';
import { searchParams } from '../../src/adapters/video/requests.ts';

test('every YouTube video URL form resolves to the video id', () => {
  const forms = [
    'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
    'https://youtube.com/watch?v=dQw4w9WgXcQ',
    'http://www.youtube.com/watch?v=dQw4w9WgXcQ',
    'https://m.youtube.com/watch?v=dQw4w9WgXcQ&feature=share',
    'https://music.youtube.com/watch?v=dQw4w9WgXcQ&list=RDAMVMdQw4w9WgXcQ',
    'https://www.youtube.com/watch?app=desktop&v=dQw4w9WgXcQ&t=42s',
    'https://www.youtube.com/watch?v=dQw4w9WgXcQ&list=PLFgquLnL59alCl_2TQvOiD5Vgm1hCaGSI&index=2',
    'https://www.youtube.com/watch?v=dQw4w9WgXcQ#t=1m2s',
    'https://youtu.be/dQw4w9WgXcQ',
    'https://youtu.be/dQw4w9WgXcQ?si=AbCdEfGhIjKlMnOp&t=10',
    'https://www.youtube.com/shorts/dQw4w9WgXcQ',
    'https://youtube.com/shorts/dQw4w9WgXcQ?si=xyz',
    'https://www.youtube.com/live/dQw4w9WgXcQ?feature=shared',
    'https://www.youtube.com/embed/dQw4w9WgXcQ?start=30',
    'https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ',
    'https://www.youtube.com/v/dQw4w9WgXcQ',
    'https://M.YouTube.com/watch?v=dQw4w9WgXcQ',
  ];
  for (const url of forms) assert.equal(videoIdFromUrl(url), 'dQw4w9WgXcQ', url);
});

test('URLs that name no video, or another site, resolve to nothing', () => {
  const refused = [
    'https://www.youtube.com/',
    'https://www.youtube.com/watch',
    'https://www.youtube.com/watch?v=short',
    'https://www.youtube.com/watch?v=dQw4w9WgXcQextra',
    'https://www.youtube.com/@creativecommons',
    'https://www.youtube.com/playlist?list=PLFgquLnL59alCl_2TQvOiD5Vgm1hCaGSI',
    'https://www.youtube.com/shorts/',
    'https://youtube.com.evil.example/watch?v=dQw4w9WgXcQ',
    'https://notyoutube.com/watch?v=dQw4w9WgXcQ',
    'https://youtu.be/',
    'ftp://youtu.be/dQw4w9WgXcQ',
    'youtube.com/watch?v=dQw4w9WgXcQ',
    'dQw4w9WgXcQ',
  ];
  for (const url of refused) assert.equal(videoIdFromUrl(url), null, url);
});

test('a bare id is 11 characters of the id alphabet', () => {
  assert.equal(videoId('dQw4w9WgXcQ'), 'dQw4w9WgXcQ');
  assert.equal(videoId('a-b_C123456'), 'a-b_C123456');
  for (const bad of ['dQw4w9WgXc', 'dQw4w9WgXcQQ', 'dQw4w9WgX!Q', '', 12345678901, null]) assert.equal(videoId(bad), null, String(bad));
});

test('channels by URL, handle or id', () => {
  assert.deepEqual(channelRefFromUrl('https://www.youtube.com/channel/UCTwECeGqMZee77BjdoYtI2Q/videos'), { kind: 'id', id: 'UCTwECeGqMZee77BjdoYtI2Q' });
  assert.deepEqual(channelRefFromUrl('https://youtube.com/@creativecommons'), { kind: 'path', path: '/@creativecommons' });
  assert.deepEqual(channelRefFromUrl('https://m.youtube.com/@creativecommons/shorts?si=x'), { kind: 'path', path: '/@creativecommons' });
  assert.deepEqual(channelRefFromUrl('https://www.youtube.com/c/creativecommons'), { kind: 'path', path: '/c/creativecommons' });
  assert.deepEqual(channelRefFromUrl('https://www.youtube.com/user/creativecommons'), { kind: 'path', path: '/user/creativecommons' });
  for (const bad of ['https://www.youtube.com/channel/UCshort', 'https://www.youtube.com/watch?v=dQw4w9WgXcQ', 'https://example.com/@creativecommons', 'https://www.youtube.com/']) {
    assert.equal(channelRefFromUrl(bad), null, bad);
  }
  assert.equal(channelHandle('creativecommons'), '@creativecommons');
  assert.equal(channelHandle('@creativecommons'), '@creativecommons');
  assert.equal(channelHandle('@a'), null);
  assert.equal(channelHandle('has space'), null);
  assert.equal(channelIdOrNull('UCTwECeGqMZee77BjdoYtI2Q'), 'UCTwECeGqMZee77BjdoYtI2Q');
  assert.equal(channelIdOrNull('UUTwECeGqMZee77BjdoYtI2Q'), null);
  // The token scope ignores the case of a handle, not of an id.
  assert.equal(channelScopeKey({ kind: 'path', path: '/@CreativeCommons' }), '/@creativecommons');
  assert.equal(channelScopeKey({ kind: 'id', id: 'UCTwECeGqMZee77BjdoYtI2Q' }), 'UCTwECeGqMZee77BjdoYtI2Q');
});

test('playlists: the list= of any YouTube URL, and bare ids of the playlists one can page through', () => {
  const id = 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE';
  for (const form of [
    `https://www.youtube.com/playlist?list=${id}`,
    `https://youtube.com/playlist?list=${id}&si=abc`,
    `https://m.youtube.com/playlist?list=${id}`,
    `https://music.youtube.com/playlist?list=${id}`,
    `https://www.youtube.com/watch?v=dQw4w9WgXcQ&list=${id}&index=2`,
    `https://youtu.be/dQw4w9WgXcQ?list=${id}`,
    `https://www.youtube.com/embed/videoseries?list=${id}`,
  ]) assert.equal(playlistIdFromUrl(form), id, form);
  for (const refused of [
    'https://www.youtube.com/playlist',
    'https://www.youtube.com/watch?v=dQw4w9WgXcQ',
    `https://vimeo.com/playlist?list=${id}`,
    'https://www.youtube.com/watch?v=dQw4w9WgXcQ&list=RDdQw4w9WgXcQ',
    'https://www.youtube.com/playlist?list=PL<script>',
    `ftp://www.youtube.com/playlist?list=${id}`,
  ]) assert.equal(playlistIdFromUrl(refused), null, refused);
  assert.equal(playlistId(` ${id} `), id);
  assert.equal(playlistId('UUTwECeGqMZee77BjdoYtI2Q'), 'UUTwECeGqMZee77BjdoYtI2Q');
  assert.equal(playlistId('OLAK5uy_kOeV6E1uuOBDkq6aYYEbfwgDzzcJ3jDw8'), 'OLAK5uy_kOeV6E1uuOBDkq6aYYEbfwgDzzcJ3jDw8');
  assert.equal(playlistId('RDdQw4w9WgXcQ'), null, 'a mix has no pages');
  assert.equal(playlistId('PLshort'), null);
  assert.equal(playlistId('dQw4w9WgXcQ'), null);
  assert.equal(playlistId(42), null);
});

test('search filters encode as the web client sends them', () => {
  assert.equal(searchParams(), undefined);
  assert.equal(searchParams('video'), 'EgIQAQ==');
  assert.equal(searchParams('channel'), 'EgIQAg==');
  assert.equal(searchParams('playlist'), 'EgIQAw==');
  assert.equal(searchParams(undefined, 'date'), 'CAI=');
  assert.equal(searchParams(undefined, 'views'), 'CAM=');
  assert.equal(searchParams('video', 'date'), 'CAISAhAB');
});
