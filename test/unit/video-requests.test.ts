/** The InnerTube requests as built (pure): paths on the configured base, the web client's context, the filters. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  channelAdapter,
  channelContinuationAdapter,
  commentsAdapter,
  nextAdapter,
  playerAdapter,
  playlistAdapter,
  playlistContinuationAdapter,
  resolveChannelAdapter,
  searchAdapter,
  timedTextAdapter,
} from '../../src/adapters/video/requests.ts';

const context = { baseUrl: 'http://127.0.0.1:9999/yt', now: new Date(0) };
const bodyOf = (request: { body?: string }) => JSON.parse(request.body ?? '{}');

test('InnerTube calls: POST /youtubei/v1/<endpoint> on the base URL, the web client in English, the consent cookie', () => {
  const request = playerAdapter.buildRequest({ videoId: 'dQw4w9WgXcQ' }, context);
  assert.equal(request.method, 'POST');
  assert.equal(request.url, 'http://127.0.0.1:9999/yt/youtubei/v1/player?prettyPrint=false');
  assert.equal(request.headers['content-type'], 'application/json');
  assert.equal(request.headers.cookie, 'SOCS=CAI');
  const body = bodyOf(request);
  assert.deepEqual({ ...body.context.client, clientVersion: typeof body.context.client.clientVersion }, { clientName: 'WEB', clientVersion: 'string', hl: 'en', gl: 'US' });
  assert.equal(body.videoId, 'dQw4w9WgXcQ');
  assert.equal(body.contentCheckOk, true);
  assert.equal(request.headers['x-youtube-client-version'], body.context.client.clientVersion);
  assert.ok(playerAdapter.idempotent, 'a read that is safe to repeat');

  assert.equal(nextAdapter.buildRequest({ videoId: 'dQw4w9WgXcQ' }, context).url, 'http://127.0.0.1:9999/yt/youtubei/v1/next?prettyPrint=false');
  assert.deepEqual(bodyOf(commentsAdapter.buildRequest({ continuation: 'TOKEN' }, context)).continuation, 'TOKEN');
  assert.equal(bodyOf(resolveChannelAdapter.buildRequest({ path: '/@creativecommons' }, context)).url, 'https://www.youtube.com/@creativecommons');
  assert.ok(resolveChannelAdapter.buildRequest({ path: '/@x' }, context).url.endsWith('/youtubei/v1/navigation/resolve_url?prettyPrint=false'));
  const browse = bodyOf(channelAdapter.buildRequest({ channelId: 'UCTwECeGqMZee77BjdoYtI2Q' }, context));
  assert.deepEqual([browse.browseId, browse.params], ['UCTwECeGqMZee77BjdoYtI2Q', 'EgZ2aWRlb3PyBgQKAjoA']);
  assert.equal(bodyOf(channelContinuationAdapter.buildRequest({ continuation: 'MORE' }, context)).continuation, 'MORE');
  const playlist = playlistAdapter.buildRequest({ playlistId: 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE' }, context);
  assert.equal(playlist.url, 'http://127.0.0.1:9999/yt/youtubei/v1/browse?prettyPrint=false');
  assert.deepEqual([bodyOf(playlist).browseId, bodyOf(playlist).params], ['VLPLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE', undefined]);
  assert.equal(bodyOf(playlistContinuationAdapter.buildRequest({ continuation: 'NEXT' }, context)).continuation, 'NEXT');
});

test('search: the query with its filter, or the continuation alone', () => {
  const plain = bodyOf(searchAdapter.buildRequest({ query: 'creative commons' }, context));
  assert.equal(plain.query, 'creative commons');
  assert.equal(plain.params, undefined);
  assert.equal(bodyOf(searchAdapter.buildRequest({ query: 'x', type: 'playlist', sort: 'views' }, context)).params, 'CAMSAhAD');
  const more = bodyOf(searchAdapter.buildRequest({ continuation: 'NEXT' }, context));
  assert.deepEqual([more.continuation, more.query], ['NEXT', undefined]);
});

test('a caption track: its path and query on the base URL, asking for json3', () => {
  const request = timedTextAdapter.buildRequest({ path: '/api/timedtext?v=M4gD1WSo5mA&lang=en&fmt=srv3&kind=asr' }, { ...context, baseUrl: 'http://127.0.0.1:9999' });
  assert.equal(request.method, 'GET');
  const url = new URL(request.url);
  assert.equal(url.origin, 'http://127.0.0.1:9999');
  assert.equal(url.pathname, '/api/timedtext');
  assert.deepEqual([url.searchParams.get('v'), url.searchParams.get('lang'), url.searchParams.get('kind'), url.searchParams.getAll('fmt')], ['M4gD1WSo5mA', 'en', 'asr', ['json3']]);
  assert.equal(url.searchParams.get('tlang'), null, 'no translation unless asked');
  const translated = new URL(timedTextAdapter.buildRequest({ path: '/api/timedtext?v=M4gD1WSo5mA&lang=de', translateTo: 'en' }, context).url);
  assert.deepEqual([translated.searchParams.get('lang'), translated.searchParams.get('tlang'), translated.searchParams.get('fmt')], ['de', 'en', 'json3']);
  // A base URL with a path prefix keeps it.
  assert.equal(new URL(timedTextAdapter.buildRequest({ path: '/api/timedtext?v=a' }, context).url).pathname, '/yt/api/timedtext');
});
