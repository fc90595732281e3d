/**
 * The video parsers on recorded InnerTube answers (test/fixtures/video, origins in SOURCES.md)
 * and on hand-written ones for the cases no recording has: every generation they know, every
 * unavailable state, and drift answered as `changed`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { UpstreamResponse } from '../../src/adapters/kit/types.ts';
import {
  chaptersFromDescription,
  chooseTrack,
  parseChannel,
  parseChannelContinuation,
  parseComments,
  parseCommentsEntry,
  parseNext,
  parsePlayer,
  parsePlaylist,
  parsePlaylistContinuation,
  parseResolvedChannel,
  parseSearch,
  parseTimedText,
  planTranscript,
  shownDate,
} from '../../src/adapters/video/parse.ts';
import { exactCount } from '../../src/adapters/video/innertube.ts';
import type { CaptionTrack } from '../../src/adapters/video/types.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/video/${name}`, import.meta.url), 'utf8');
const answer = (body: string, status = 200, url = 'https://www.youtube.com/youtubei/v1/player?prettyPrint=false'): UpstreamResponse => ({ status, url, headers: { 'content-type': 'application/json' }, body });
const recorded = (name: string) => answer(fixture(name));

function ok<T>(outcome: { kind: string; value?: T; reason?: string }): T {
  assert.equal(outcome.kind, 'ok', `expected ok, got ${outcome.kind}: ${outcome.reason ?? ''}`);
  return outcome.value as T;
}

test('player: details, exact counts from raw values, the channel and the caption tracks', () => {
  const video = ok(parsePlayer(recorded('player-ok.json'), 'M4gD1WSo5mA'));
  assert.equal(video.title, 'William Fisher, CopyrightX: Lecture 3.2, The Subject Matter of Copyright: Drama and choreography');
  assert.equal(video.duration_seconds, 721);
  assert.equal(video.view_count, 12916);
  assert.equal(video.category, 'Education');
  assert.equal(video.published_at, '2015-01-28T05:14:36.000000Z');
  assert.deepEqual(video.channel, { id: 'UCuLGmD72gJDBwmLw06X58SA', name: 'The Berkman Klein Center for Internet & Society', url: 'https://www.youtube.com/channel/UCuLGmD72gJDBwmLw06X58SA' });
  assert.deepEqual(video.keywords, ['Copyright (Legal Subject)', 'Law (Industry)', 'William W. Fisher (Author)']);
  assert.deepEqual(video.tracks.map((t) => [t.language, t.name, t.auto_generated, t.is_default]), [['en', 'English', false, true], ['en', 'English (auto-generated)', true, false]]);
  assert.ok(video.tracks[0].path.startsWith('/api/timedtext?v=M4gD1WSo5mA&'), video.tracks[0].path);
  assert.equal(video.is_live, false);
  assert.equal(video.is_unlisted, false);
});

test('player: private, region-blocked, age-restricted and removed videos are not found; a bot check is a block', () => {
  assert.equal(parsePlayer(recorded('player-private.json'), '8VajtrESJzA').kind, 'not_found');
  assert.equal(parsePlayer(recorded('player-region-blocked.json'), 'x').kind, 'not_found');
  assert.equal(parsePlayer(recorded('player-age-restricted.json'), 'HsUATh_Nc2U').kind, 'not_found');
  assert.equal(parsePlayer(recorded('player-unavailable.json'), 'aaaaaaaaaaa').kind, 'not_found');
  assert.equal(parsePlayer(recorded('player-bot-check.json'), 'aaaaaaaaaaa').kind, 'blocked');
  // Another video in the answer: YouTube replaced the one asked for.
  assert.equal(parsePlayer(recorded('player-ok.json'), 'aaaaaaaaaaa').kind, 'not_found');
});

test('player: a consent wall, a rate limit and HTML are blocks or drift, never a video', () => {
  assert.equal(parsePlayer(answer('<html>Before you continue to YouTube</html>', 200, 'https://consent.youtube.com/m?continue=x'), 'a').kind, 'blocked');
  assert.equal(parsePlayer(answer('<html><form action="https://consent.youtube.com/save"></form></html>'), 'a').kind, 'blocked');
  assert.equal(parsePlayer(answer('<html>Our systems have detected unusual traffic</html>', 429), 'a').kind, 'blocked');
  assert.equal(parsePlayer(answer('<html><body>a new page</body></html>'), 'a').kind, 'changed');
  assert.equal(parsePlayer(answer('{"playabilityStatus":{"status":"SOMETHING_NEW"}}'), 'a').kind, 'changed');
  assert.equal(parsePlayer(answer('{"videoDetails":{"videoId":"a"}}'), 'a').kind, 'changed');
  assert.equal(parsePlayer(answer('{"playabilityStatus":{"status":"OK"}}'), 'a').kind, 'changed');
});

test('next: the like count from the primary-info generation (accessibility label) and from entity mutations (description-header generation)', () => {
  const primary = ok(parseNext(recorded('next-primary-info.json')));
  assert.deepEqual(primary, { like_count: 5471574, view_count: 41613595, comment_count: null, chapters: [], published_at: '2019-08-24', generation: 'primary-info' });
  const header = ok(parseNext(recorded('next-description-header.json')));
  assert.deepEqual(header, { like_count: 5471574, view_count: 41613595, comment_count: null, chapters: [], published_at: '2019-08-24', generation: 'description-header' });
});

test('player: thumbnails with their sizes as listed; the standard image when none is listed', () => {
  const video = ok(parsePlayer(recorded('player-ok.json'), 'M4gD1WSo5mA'));
  assert.equal(video.thumbnails.length, 1);
  assert.equal(video.thumbnails[0].width, 1920);
  assert.equal(video.thumbnails[0].height, 1080);
  assert.ok(video.thumbnails[0].url.startsWith('https://i.ytimg.com/vi/M4gD1WSo5mA/maxresdefault.jpg'));
  const json = JSON.parse(fixture('player-ok.json'));
  delete json.videoDetails.thumbnail;
  delete json.microformat.playerMicroformatRenderer.thumbnail;
  assert.deepEqual(ok(parsePlayer(answer(JSON.stringify(json)), 'M4gD1WSo5mA')).thumbnails, [{ url: 'https://i.ytimg.com/vi/M4gD1WSo5mA/hqdefault.jpg', width: 480, height: 360 }]);
});

const commentsPanel = (contextual: string) => ({
  engagementPanelSectionListRenderer: { panelIdentifier: 'engagement-panel-comments-section', header: { engagementPanelTitleHeaderRenderer: { title: { runs: [{ text: 'Comments' }] }, contextualInfo: { runs: [{ text: contextual }] } } } },
});

test('next: the comment count from the comments panel or the entry point, only when exact', () => {
  const json = JSON.parse(fixture('next-primary-info.json'));
  json.engagementPanels.push(commentsPanel('12,345'));
  assert.equal(ok(parseNext(answer(JSON.stringify(json)))).comment_count, 12345);
  json.engagementPanels.pop();
  json.engagementPanels.push(commentsPanel('1.2K'));
  assert.equal(ok(parseNext(answer(JSON.stringify(json)))).comment_count, null);
  json.contents.twoColumnWatchNextResults.results.results.contents.push({ itemSectionRenderer: { contents: [{ commentsEntryPointHeaderRenderer: { headerText: { simpleText: 'Comments' }, commentCount: { simpleText: '987' } } }] } });
  assert.equal(ok(parseNext(answer(JSON.stringify(json)))).comment_count, 987);
});

test('next: chapters from the player bar, else from the chapters panel; key moments are not chapters', () => {
  const json = JSON.parse(fixture('next-primary-info.json'));
  const chapter = (title: string, ms: number) => ({ chapterRenderer: { title: { simpleText: title }, timeRangeStartMillis: ms } });
  const item = (title: string, seconds: number) => ({ macroMarkersListItemRenderer: { title: { simpleText: title }, timeDescription: { simpleText: '0:00' }, onTap: { watchEndpoint: { videoId: 'x', startTimeSeconds: seconds } } } });
  const panel = (id: string, items: unknown[]) => ({ engagementPanelSectionListRenderer: { panelIdentifier: id, content: { macroMarkersListRenderer: { contents: items } } } });
  json.engagementPanels.push(panel('engagement-panel-macro-markers-key-moments', [item('A guess', 0)]));
  assert.deepEqual(ok(parseNext(answer(JSON.stringify(json)))).chapters, []);
  json.engagementPanels.push(panel('engagement-panel-macro-markers-description-chapters', [item('Intro', 0), item('Part one', 75)]));
  assert.deepEqual(ok(parseNext(answer(JSON.stringify(json)))).chapters, [{ title: 'Intro', start_seconds: 0 }, { title: 'Part one', start_seconds: 75 }]);
  json.playerOverlays = { playerOverlayRenderer: { decoratedPlayerBarRenderer: { decoratedPlayerBarRenderer: { playerBar: { multiMarkersPlayerBarRenderer: { markersMap: [{ key: 'DESCRIPTION_CHAPTERS', value: { chapters: [chapter('Start', 0), chapter('Middle', 61500)] } }] } } } } } };
  assert.deepEqual(ok(parseNext(answer(JSON.stringify(json)))).chapters, [{ title: 'Start', start_seconds: 0 }, { title: 'Middle', start_seconds: 61 }]);
});

test('description chapters: timestamps on their own lines, from 0:00, three or more, ascending', () => {
  assert.deepEqual(chaptersFromDescription('My video\n\n0:00 Intro\n1:05 - The setup\n(12:30) Results\nThe end 1:02:03\n\nThanks!'), [
    { title: 'Intro', start_seconds: 0 },
    { title: 'The setup', start_seconds: 65 },
    { title: 'Results', start_seconds: 750 },
    { title: 'The end', start_seconds: 3723 },
  ]);
  assert.deepEqual(chaptersFromDescription('0:10 Late start\n1:00 Two\n2:00 Three'), []);
  assert.deepEqual(chaptersFromDescription('0:00 One\n1:00 Two'), []);
  assert.deepEqual(chaptersFromDescription('0:00 One\n2:00 Two\n1:00 Three'), []);
  assert.deepEqual(chaptersFromDescription('No chapters here, see 3:45 for the good part.'), []);
});

test('next: only an abbreviated like count gives null, not a guess', () => {
  const json = JSON.parse(fixture('next-description-header.json'));
  delete json.frameworkUpdates;
  assert.equal(ok(parseNext(answer(JSON.stringify(json)))).like_count, null);
});

test('next: a layout without either generation is drift', () => {
  assert.equal(parseNext(recorded('next-unknown-layout.json')).kind, 'changed');
});

test('exact counts: digits with separators only', () => {
  assert.equal(exactCount('41,613,595 views'), 41613595);
  assert.equal(exactCount('327'), 327);
  assert.equal(exactCount('No views'), 0);
  assert.equal(exactCount('1 view'), 1);
  for (const rounded of ['41m views', '1.2M views', '9.8k', '8.84k subscribers', '25m subscribers', '1.2K watching']) assert.equal(exactCount(rounded), null, rounded);
});

test('transcripts: json3 and both XML forms give seconds and text', () => {
  const segments = ok(parseTimedText(recorded('timedtext-json3.json')));
  assert.deepEqual(segments, [
    { start: 1.2, duration: 3.4, text: 'In the last segment we considered' },
    { start: 4.6, duration: 2.95, text: 'the protection of dramatic works.' },
    { start: 7.56, duration: 4.12, text: 'Now we turn to choreography & pantomime.' },
  ]);
  const xml = '<?xml version="1.0" encoding="utf-8" ?><transcript><text start="0.5" dur="1.25">Hello &amp;amp; welcome</text><text start="1.75" dur="2">it&amp;#39;s here</text></transcript>';
  assert.deepEqual(ok(parseTimedText(answer(xml))), [{ start: 0.5, duration: 1.25, text: 'Hello & welcome' }, { start: 1.75, duration: 2, text: "it's here" }]);
  const srv3 = '<?xml version="1.0" encoding="utf-8" ?><timedtext format="3"><body><p t="1200" d="3400">First <s>line</s></p><p t="4600" d="100"></p></body></timedtext>';
  assert.deepEqual(ok(parseTimedText(answer(srv3))), [{ start: 1.2, duration: 3.4, text: 'First line' }]);
  assert.equal(parseTimedText(answer('')).kind, 'blocked');
  assert.equal(parseTimedText(answer('{"events":[]}')).kind, 'empty');
  assert.equal(parseTimedText(answer('{"something":"else"}')).kind, 'changed');
});

test('transcripts: the caller\'s language first (manual before auto-generated), else the default track', () => {
  const track = (language: string, auto: boolean, isDefault = false): CaptionTrack => ({ language, name: language, auto_generated: auto, path: `/t/${language}/${auto}`, is_default: isDefault, is_translatable: true });
  const tracks = [track('de', true), track('de', false, true), track('en', true), track('pt-BR', false)];
  assert.equal(chooseTrack(tracks, 'de')?.path, '/t/de/false');
  assert.equal(chooseTrack(tracks, 'en')?.path, '/t/en/true');
  assert.equal(chooseTrack(tracks, 'pt')?.path, '/t/pt-BR/false');
  assert.equal(chooseTrack(tracks, 'PT-br')?.path, '/t/pt-BR/false');
  assert.equal(chooseTrack(tracks, 'fr'), null);
  assert.equal(chooseTrack(tracks)?.path, '/t/de/false');
  assert.equal(chooseTrack([track('en', true), track('fr', false)])?.path, '/t/fr/false');
  assert.equal(chooseTrack([]), null);
});

test('search: videoRenderer results, exact view counts, the continuation', () => {
  const page = ok(parseSearch(recorded('search-video-renderer.json')));
  assert.equal(page.items.length, 3);
  assert.deepEqual(page.items[0], {
    type: 'video',
    id: 'Z8KYabgkMbw',
    url: 'https://www.youtube.com/watch?v=Z8KYabgkMbw',
    title: 'Blind Test TOUT GENRE | 140 extraits',
    channel: { id: 'UCuEBTg6pcG7s3PpPGRtFKQA', name: 'Blind Test & Chill', url: 'https://www.youtube.com/channel/UCuEBTg6pcG7s3PpPGRtFKQA' },
    duration_seconds: 2840,
    view_count: 390201,
    published_text: '9 months ago',
    description_snippet: null,
    thumbnail_url: 'https://i.ytimg.com/vi/Z8KYabgkMbw/hqdefault.jpg',
    is_live: false,
  });
  assert.ok(page.continuation?.startsWith('Ep0DEgR0ZXN0'));
  const next = ok(parseSearch(recorded('search-continuation.json')));
  assert.deepEqual(next.items.map((i) => i.id), ['JOHUZMTdgBY', 'E8Ssd5-86jw']);
  assert.ok(next.continuation);
});

test('search: channelRenderer results keep the handle and refuse rounded subscriber counts', () => {
  const page = ok(parseSearch(recorded('search-channel-renderer.json')));
  assert.deepEqual(page.items[0], {
    type: 'channel',
    id: 'UCZRcA_nO3Kt-SOml2mY8D9g',
    url: 'https://www.youtube.com/channel/UCZRcA_nO3Kt-SOml2mY8D9g',
    title: 'test',
    handle: '@tutorialismic',
    subscriber_count: null,
    video_count: null,
    description_snippet: 'Get your own difficulty faces! Get paid to create!: https://discord.gg/zWRmNYWS3v 2nd channel: "tespañol"',
  });
});

test('search: the lockupViewModel generation (videos, live, playlists), ads skipped', () => {
  const page = ok(parseSearch(recorded('search-lockup.json')));
  assert.deepEqual(page.items, [
    {
      type: 'video',
      id: 'dPZTh2NKTm4',
      url: 'https://www.youtube.com/watch?v=dPZTh2NKTm4',
      title: 'Creative Commons explained',
      channel: { id: 'UCTwECeGqMZee77BjdoYtI2Q', name: 'Creative Commons', url: 'https://www.youtube.com/channel/UCTwECeGqMZee77BjdoYtI2Q' },
      duration_seconds: 721,
      view_count: 1234567,
      published_text: '3 years ago',
      description_snippet: null,
      thumbnail_url: 'https://i.ytimg.com/vi/dPZTh2NKTm4/hqdefault.jpg',
      is_live: false,
    },
    {
      type: 'video',
      id: 'jfKfPfyJRdk',
      url: 'https://www.youtube.com/watch?v=jfKfPfyJRdk',
      title: 'A live stream',
      channel: null,
      duration_seconds: null,
      view_count: null,
      published_text: null,
      description_snippet: null,
      thumbnail_url: 'https://i.ytimg.com/vi/jfKfPfyJRdk/hqdefault.jpg',
      is_live: true,
    },
    {
      type: 'playlist',
      id: 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE',
      url: 'https://www.youtube.com/playlist?list=PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE',
      title: 'Licensing basics',
      channel: { id: 'UCTwECeGqMZee77BjdoYtI2Q', name: 'Creative Commons', url: 'https://www.youtube.com/channel/UCTwECeGqMZee77BjdoYtI2Q' },
      video_count: 42,
    },
  ]);
  assert.equal(page.continuation, 'LOCKUP-SEARCH-PAGE-2');
});

test('search: no results is an empty page; results only in an unknown layout are drift', () => {
  assert.deepEqual(ok(parseSearch(recorded('search-no-results.json'))), { items: [], continuation: null });
  assert.equal(parseSearch(recorded('search-unknown-layout.json')).kind, 'changed');
  assert.equal(parseSearch(answer('{"contents":{"somethingElse":{}}}')).kind, 'changed');
});

test('channel: resolve_url, the header and metadata, lockupViewModel and videoRenderer grids, a continuation', () => {
  assert.equal(ok(parseResolvedChannel(recorded('resolve-url-channel.json'))), 'UCTwECeGqMZee77BjdoYtI2Q');
  assert.equal(parseResolvedChannel(answer(fixture('resolve-url-not-found.json'), 404)).kind, 'not_found');

  const lockups = ok(parseChannel(recorded('channel-videos-lockup.json')));
  assert.deepEqual({ ...lockups.channel, description: lockups.channel.description.slice(0, 30) }, {
    id: 'UCTwECeGqMZee77BjdoYtI2Q',
    name: 'Creative Commons',
    handle: '@creativecommons',
    url: 'https://www.youtube.com/channel/UCTwECeGqMZee77BjdoYtI2Q',
    description: 'A nonprofit building a vibrant',
    subscriber_count: null,
    video_count: 258,
    avatar_url: lockups.channel.avatar_url,
  });
  assert.ok(lockups.channel.avatar_url?.startsWith('https://yt3.googleusercontent.com/'));
  assert.deepEqual(lockups.items.map((v) => [v.id, v.duration_seconds, v.view_count, v.published_text]), [
    ['BD-LB23rRBE', 4054, 28, '13 days ago'],
    ['ea1MAxH0KJc', 2032, 27, '13 days ago'],
    ['zXhTF-T24fw', lockups.items[2].duration_seconds, lockups.items[2].view_count, '13 days ago'],
  ]);
  assert.ok(lockups.continuation);

  const renderers = ok(parseChannel(recorded('channel-videos-renderer.json')));
  assert.equal(renderers.channel.handle, '@kurzgesagt');
  assert.equal(renderers.channel.video_count, 337);
  assert.deepEqual(renderers.items.slice(0, 2).map((v) => [v.id, v.title, v.duration_seconds, v.view_count]), [
    ['D0WQK7cMJn8', 'We Made A New Channel!', 183, 1545374],
    ['pHJIhxZEoxg', 'Why Are There No Holes Around Trees?', 681, 2989906],
  ]);

  const more = ok(parseChannelContinuation(recorded('channel-continuation.json')));
  assert.deepEqual(more.items.map((v) => v.id), ['CIFHx7_z3Vc', 's5jaFTP3tN8']);
  assert.ok(more.continuation);
});

test('channel: removed or invalid channels are not found; a page without metadata is drift', () => {
  assert.equal(parseChannel(recorded('channel-removed.json')).kind, 'not_found');
  assert.equal(parseChannel(answer(fixture('browse-invalid-argument.json'), 400)).kind, 'not_found');
  assert.equal(parseChannel(answer('{"contents":{"twoColumnBrowseResultsRenderer":{"tabs":[]}}}')).kind, 'changed');
  assert.equal(parseChannelContinuation(answer('{"contents":{}}')).kind, 'changed');
});

test('comments: the watch page\'s entry, or none when comments are off', () => {
  assert.deepEqual(ok(parseCommentsEntry(recorded('next-comments-entry.json'))), { continuation: 'Eg0SC3hhUUpib3pZX0lzGAYyJSIRIgt4YVFKYm96WV9JczAAeAJCEGNvbW1lbnRzLXNlY3Rpb24%3D', hasVideo: true });
  assert.deepEqual(ok(parseCommentsEntry(recorded('next-comments-off.json'))), { continuation: null, hasVideo: true });
  assert.equal(parseCommentsEntry(recorded('next-unknown-layout.json')).kind, 'changed');
});

test('comments: the commentViewModel generation read through its entity mutations', () => {
  const page = ok(parseComments(recorded('comments-view-model.json')));
  assert.equal(page.items.length, 4);
  assert.deepEqual(page.items[0], {
    id: 'UgwSOM0QHBLysE3vZE54AaABAg',
    text: 'The 12,022 Calendar is sold out check out more scienc-y products created with love here: https://kgs.link/shop-151',
    author: { name: '@kurzgesagt', channel_id: 'UCsXVk37bltHxD1rDPwtNM8Q' },
    like_count: null, // "9.8k": rounded
    reply_count: 327,
    published_text: '4 years ago (edited)',
    is_pinned: true,
    is_hearted: false,
    author_is_channel_owner: true,
  });
  assert.equal(page.items[3].like_count, 635);
  assert.ok(page.continuation);
  assert.ok(page.sorts?.top && page.sorts.newest && page.sorts.top !== page.sorts.newest);
  const more = ok(parseComments(recorded('comments-view-model-more.json')));
  assert.equal(more.items.length, 3);
  assert.equal(more.items[0].id, 'UgwaG5ZLOj86V_35uRJ4AaABAg');
  assert.equal(more.continuation, null);
});

test('comments: the commentRenderer generation, exact likes from the accessibility label', () => {
  const page = ok(parseComments(recorded('comments-renderer.json')));
  assert.deepEqual(page.items, [
    {
      id: 'UgzOldRendererComment1',
      text: 'Pinned note from the channel',
      author: { name: '@oldchannel', channel_id: 'UColdchannel000000000001' },
      like_count: 1214,
      reply_count: 14,
      published_text: '5 years ago',
      is_pinned: true,
      is_hearted: true,
      author_is_channel_owner: true,
    },
    {
      id: 'UgzOldRendererComment2',
      text: 'Second!',
      author: { name: '@viewer', channel_id: 'UCviewer00000000000000001' },
      like_count: 37,
      reply_count: 0,
      published_text: '5 years ago',
      is_pinned: false,
      is_hearted: false,
      author_is_channel_owner: false,
    },
  ]);
  assert.equal(page.continuation, 'RENDERER-PAGE-2');
  assert.deepEqual(page.sorts, { top: 'RENDERER-TOP', newest: 'RENDERER-NEWEST' });
});

test('comments: threads whose entities are missing are drift, not empty comments', () => {
  const json = JSON.parse(fixture('comments-view-model.json'));
  json.frameworkUpdates.entityBatchUpdate.mutations = [];
  assert.equal(parseComments(answer(JSON.stringify(json))).kind, 'changed');
  assert.equal(parseComments(answer('{"contents":{}}')).kind, 'changed');
});


// ---------------------------------------------------------------- layout generations (issue 39)

test('channel: the older grid generation (c4TabbedHeaderRenderer, gridRenderer of gridVideoRenderer) is read, not 0 videos', () => {
  const page = ok(parseChannel(recorded('channel-videos-grid.json')));
  assert.deepEqual(page.channel, {
    id: 'UCgridchannel00000000001',
    name: 'Old Grid Channel',
    handle: '@oldgridchannel',
    url: 'https://www.youtube.com/channel/UCgridchannel00000000001',
    description: 'Recordings from the grid years.',
    subscriber_count: null, // "48.2K subscribers": rounded
    video_count: 1024,
    avatar_url: 'https://yt3.ggpht.com/old-grid-avatar=s48-c-k-c0x00ffffff-no-rj',
  });
  assert.deepEqual(page.items, [
    {
      type: 'video',
      id: 'gRidVideo01',
      url: 'https://www.youtube.com/watch?v=gRidVideo01',
      title: 'How the old grid looked',
      channel: null,
      duration_seconds: 725,
      view_count: 12345,
      published_text: '2 years ago',
      description_snippet: null,
      thumbnail_url: 'https://i.ytimg.com/vi/gRidVideo01/hqdefault.jpg',
      is_live: false,
    },
    {
      type: 'video',
      id: 'gRidVideo02',
      url: 'https://www.youtube.com/watch?v=gRidVideo02',
      title: 'A longer talk',
      channel: null,
      duration_seconds: 3723,
      view_count: 1204551,
      published_text: '3 years ago',
      description_snippet: null,
      thumbnail_url: 'https://i.ytimg.com/vi/gRidVideo02/hqdefault.jpg',
      is_live: false,
    },
    {
      type: 'video',
      id: 'gRidVideo03',
      url: 'https://www.youtube.com/watch?v=gRidVideo03',
      title: 'Live now from the studio',
      channel: null,
      duration_seconds: null,
      view_count: null, // "87 watching" counts viewers, not views
      published_text: null,
      description_snippet: null,
      thumbnail_url: 'https://i.ytimg.com/vi/gRidVideo03/hqdefault.jpg',
      is_live: true,
    },
  ]);
  assert.equal(page.continuation, 'GRID-CHANNEL-PAGE-2');
});

test('channel: every generation of the Videos tab gives its videos (rich grid of lockups, rich grid of videoRenderers, grid)', () => {
  for (const [name, first] of [['channel-videos-lockup.json', 'BD-LB23rRBE'], ['channel-videos-renderer.json', 'D0WQK7cMJn8'], ['channel-videos-grid.json', 'gRidVideo01']]) {
    const page = ok(parseChannel(recorded(name)));
    assert.ok(page.items.length >= 3, name);
    assert.equal(page.items[0].id, first, name);
    assert.ok(page.continuation, name);
  }
});

test('channel: the older continuation (continuationContents.gridContinuation, nextContinuationData)', () => {
  const more = ok(parseChannelContinuation(recorded('channel-continuation-grid.json')));
  assert.deepEqual(more.items.map((v) => [v.id, v.duration_seconds, v.view_count, v.published_text]), [
    ['gRidVideo04', 42, 0, '4 years ago'],
    ['gRidVideo05', 213, 1, 'Streamed 5 years ago'],
  ]);
  assert.equal(more.continuation, 'GRID-CHANNEL-PAGE-3');
});

test('channel: a Videos tab in a layout no parser knows is drift, never the channel with 0 videos', () => {
  const outcome = parseChannel(recorded('channel-unknown-layout.json'));
  assert.equal(outcome.kind, 'changed');
  assert.match(outcome.kind === 'changed' ? outcome.reason ?? '' : '', /feedGridViewModel/);
  // A grid holding only items of an unknown kind is drift too.
  const grid = JSON.parse(fixture('channel-videos-grid.json'));
  const tab = grid.contents.twoColumnBrowseResultsRenderer.tabs[1].tabRenderer;
  tab.content.sectionListRenderer.contents[0].itemSectionRenderer.contents[0].gridRenderer.items = [{ gridVideoViewModel: { videoId: 'gRidVideo01' } }];
  assert.equal(parseChannel(answer(JSON.stringify(grid))).kind, 'changed');
  // A section with no grid and no video (only a continuation to load one) is not a tab we know.
  tab.content.sectionListRenderer.contents = [{ itemSectionRenderer: { contents: [{ continuationItemRenderer: { continuationEndpoint: { continuationCommand: { token: 'LAZY' } } } }] } }];
  assert.equal(parseChannel(answer(JSON.stringify(grid))).kind, 'changed');
  // Another tab than Videos answered while the channel has one: drift.
  const other = JSON.parse(fixture('channel-videos-grid.json'));
  other.contents.twoColumnBrowseResultsRenderer.tabs[1].tabRenderer.selected = false;
  other.contents.twoColumnBrowseResultsRenderer.tabs[0].tabRenderer.selected = true;
  assert.equal(parseChannel(answer(JSON.stringify(other))).kind, 'changed');
  // No tab selected at all: drift.
  other.contents.twoColumnBrowseResultsRenderer.tabs[0].tabRenderer.selected = false;
  assert.equal(parseChannel(answer(JSON.stringify(other))).kind, 'changed');
});

test('channel: no Videos tab (Home shown) and a Videos tab holding only its message are empty channels', () => {
  const home = JSON.parse(fixture('channel-videos-grid.json'));
  home.contents.twoColumnBrowseResultsRenderer.tabs.splice(1, 1);
  home.contents.twoColumnBrowseResultsRenderer.tabs[0].tabRenderer.selected = true;
  assert.deepEqual(ok(parseChannel(answer(JSON.stringify(home)))).items, []);
  const message = JSON.parse(fixture('channel-videos-grid.json'));
  message.contents.twoColumnBrowseResultsRenderer.tabs[1].tabRenderer.content.sectionListRenderer.contents = [
    { itemSectionRenderer: { contents: [{ messageRenderer: { text: { simpleText: 'This channel has no videos.' } } }] } },
  ];
  assert.deepEqual(ok(parseChannel(answer(JSON.stringify(message)))), { ...ok(parseChannel(answer(JSON.stringify(message)))), items: [], continuation: null });
});

test('comments: a generation no parser knows is drift, never an empty page', () => {
  const outcome = parseComments(recorded('comments-unknown-layout.json'));
  assert.equal(outcome.kind, 'changed');
  assert.match(outcome.kind === 'changed' ? outcome.reason ?? '' : '', /commentThreadViewModel/);
  // The header alone (a video without comments yet) is an empty page.
  const header = JSON.parse(fixture('comments-unknown-layout.json'));
  header.onResponseReceivedEndpoints.pop();
  assert.deepEqual(ok(parseComments(answer(JSON.stringify(header)))).items, []);
});

test('comments: both generations, and the older continuation (continuationContents.itemSectionContinuation)', () => {
  assert.equal(ok(parseComments(recorded('comments-view-model.json'))).items.length, 4);
  assert.equal(ok(parseComments(recorded('comments-renderer.json'))).items.length, 2);
  const renderer = JSON.parse(fixture('comments-renderer.json'));
  const actions: Array<Record<string, { continuationItems?: object[] }>> = renderer.onResponseReceivedEndpoints ?? renderer.onResponseReceivedActions;
  const threads = actions.flatMap((a) => Object.values(a).flatMap((v) => v.continuationItems ?? [])).filter((i) => 'commentThreadRenderer' in i);
  const legacy = { continuationContents: { itemSectionContinuation: { contents: threads, continuations: [{ nextContinuationData: { continuation: 'LEGACY-COMMENTS-2' } }] } } };
  const page = ok(parseComments(answer(JSON.stringify(legacy))));
  assert.deepEqual(page.items.map((c) => c.id), ['UgzOldRendererComment1', 'UgzOldRendererComment2']);
  assert.equal(page.continuation, 'LEGACY-COMMENTS-2');
});

test('comments entry: in the comments panel, off, a live chat, or drift when the section cannot be placed', () => {
  const entry = JSON.parse(fixture('next-comments-entry.json'));
  const section = entry.contents.twoColumnWatchNextResults.results.results.contents.pop();
  // The same section in the comments panel (newer watch pages).
  const panel = JSON.parse(JSON.stringify(entry));
  panel.engagementPanels = [{ engagementPanelSectionListRenderer: { panelIdentifier: 'engagement-panel-comments-section', content: { sectionListRenderer: { contents: [section] } } } }];
  assert.equal(ok(parseCommentsEntry(answer(JSON.stringify(panel)))).continuation, 'Eg0SC3hhUUpib3pZX0lzGAYyJSIRIgt4YVFKYm96WV9JczAAeAJCEGNvbW1lbnRzLXNlY3Rpb24%3D');
  // A section with neither a continuation nor a message: drift.
  const unknown = JSON.parse(fixture('next-comments-entry.json'));
  unknown.contents.twoColumnWatchNextResults.results.results.contents[0].itemSectionRenderer.contents = [{ commentsEntryPointViewModel: { key: 'x' } }];
  assert.equal(parseCommentsEntry(answer(JSON.stringify(unknown))).kind, 'changed');
  // A video page with no comment section anywhere: drift, unless a live chat stands in for it.
  const none = JSON.parse(fixture('next-primary-info.json'));
  none.contents.twoColumnWatchNextResults.results.results.contents = none.contents.twoColumnWatchNextResults.results.results.contents.filter((c: object) => !('itemSectionRenderer' in c));
  none.engagementPanels = [];
  assert.equal(parseCommentsEntry(answer(JSON.stringify(none))).kind, 'changed');
  none.contents.twoColumnWatchNextResults.conversationBar = { liveChatRenderer: { continuations: [] } };
  assert.deepEqual(ok(parseCommentsEntry(answer(JSON.stringify(none)))), { continuation: null, hasVideo: true });
});

test('playlist: the newer page header generation, its owner, exact counts, positions and the continuation', () => {
  const page = ok(parsePlaylist(recorded('playlist-page-header.json'), 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE'));
  assert.deepEqual(page.playlist, {
    id: 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE',
    url: 'https://www.youtube.com/playlist?list=PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE',
    title: 'Licensing basics',
    description: 'What the six licences allow, one video each.',
    channel: { id: 'UCTwECeGqMZee77BjdoYtI2Q', name: 'Creative Commons', url: 'https://www.youtube.com/channel/UCTwECeGqMZee77BjdoYtI2Q' },
    video_count: 42,
    view_count: 8402,
  });
  assert.deepEqual(page.items[0], {
    type: 'video',
    id: 'dPZTh2NKTm4',
    url: 'https://www.youtube.com/watch?v=dPZTh2NKTm4',
    title: 'Creative Commons explained',
    channel: { id: 'UCTwECeGqMZee77BjdoYtI2Q', name: 'Creative Commons', url: 'https://www.youtube.com/channel/UCTwECeGqMZee77BjdoYtI2Q' },
    duration_seconds: 721,
    view_count: 1234567,
    published_text: '3 years ago',
    description_snippet: null,
    thumbnail_url: 'https://i.ytimg.com/vi/dPZTh2NKTm4/hqdefault.jpg',
    is_live: false,
    position: 1,
  });
  assert.deepEqual(page.items.map((v) => [v.position, v.id, v.duration_seconds, v.view_count]), [[1, 'dPZTh2NKTm4', 721, 1234567], [2, 'BD-LB23rRBE', 4054, 28], [3, 'zXhTF-T24fw', 300, null]]);
  assert.equal(page.continuation, 'PLAYLIST-PAGE-2');
  // Only the view model's byline names the owner: read from it.
  const json = JSON.parse(fixture('playlist-page-header.json'));
  delete json.sidebar;
  assert.deepEqual(ok(parsePlaylist(answer(JSON.stringify(json)), 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE')).playlist.channel, page.playlist.channel);
});

test('playlist: the older playlistHeaderRenderer generation, an unavailable entry kept in its place', () => {
  const page = ok(parsePlaylist(recorded('playlist-header-renderer.json'), 'UUgridchannel00000000001'));
  assert.deepEqual(page.playlist, {
    id: 'UUgridchannel00000000001',
    url: 'https://www.youtube.com/playlist?list=UUgridchannel00000000001',
    title: 'Uploads from Old Grid Channel',
    description: 'Every upload, newest first.',
    channel: { id: 'UCgridchannel00000000001', name: 'Old Grid Channel', url: 'https://www.youtube.com/channel/UCgridchannel00000000001' },
    video_count: 1024,
    view_count: 0,
  });
  assert.deepEqual(page.items.map((v) => [v.position, v.id, v.title, v.duration_seconds, v.channel?.id ?? null]), [
    [1, 'gRidVideo01', 'How the old grid looked', 725, 'UCgridchannel00000000001'],
    [2, 'privVideo01', '[Private video]', null, null],
  ]);
  assert.equal(page.continuation, 'OLD-PLAYLIST-PAGE-2');
});

test('playlist: later pages (received actions, and the older playlistVideoListContinuation)', () => {
  const more = ok(parsePlaylistContinuation(recorded('playlist-continuation.json')));
  assert.deepEqual(more.items.map((v) => [v.position, v.id, v.view_count, v.published_text]), [[101, 'ea1MAxH0KJc', 27, '13 days ago'], [102, 'CIFHx7_z3Vc', 0, '2 weeks ago']]);
  assert.equal(more.continuation, null);
  const legacy = ok(parsePlaylistContinuation(recorded('playlist-continuation-legacy.json')));
  assert.deepEqual(legacy.items.map((v) => [v.position, v.id, v.duration_seconds]), [[101, 'gRidVideo04', 42]]);
  assert.equal(legacy.continuation, 'OLD-PLAYLIST-PAGE-3');
});

test('playlist: an error alert is not found; a list no parser knows, or no header at all, is drift', () => {
  assert.equal(parsePlaylist(recorded('playlist-not-found.json'), 'PL11111111111111111111111111111111').kind, 'not_found');
  const unknown = parsePlaylist(recorded('playlist-unknown-layout.json'), 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE');
  assert.equal(unknown.kind, 'changed');
  assert.match(unknown.kind === 'changed' ? unknown.reason ?? '' : '', /playlistPanelListViewModel/);
  const nameless = JSON.parse(fixture('playlist-page-header.json'));
  for (const key of ['header', 'metadata', 'sidebar', 'microformat']) delete nameless[key];
  assert.equal(parsePlaylist(answer(JSON.stringify(nameless)), 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE').kind, 'changed');
  const entries = JSON.parse(fixture('playlist-page-header.json'));
  entries.contents.twoColumnBrowseResultsRenderer.tabs[0].tabRenderer.content.sectionListRenderer.contents[0].itemSectionRenderer.contents[0].playlistVideoListRenderer.contents = [{ playlistVideoViewModel: { videoId: 'dPZTh2NKTm4' } }];
  assert.equal(parsePlaylist(answer(JSON.stringify(entries)), 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE').kind, 'changed');
  assert.equal(parsePlaylistContinuation(answer('{"contents":{}}')).kind, 'changed');
  // An empty playlist shows its message: an empty page.
  const empty = JSON.parse(fixture('playlist-page-header.json'));
  empty.contents.twoColumnBrowseResultsRenderer.tabs[0].tabRenderer.content.sectionListRenderer.contents = [{ itemSectionRenderer: { contents: [{ messageRenderer: { text: { simpleText: 'This playlist has no videos.' } } }] } }];
  assert.deepEqual(ok(parsePlaylist(answer(JSON.stringify(empty)), 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE')).items, []);
});

test('published_at: the player microformat, else the page microformat or a live start; the watch page shows the date as text', () => {
  assert.equal(ok(parsePlayer(recorded('player-no-date.json'), 'noDateVid01')).published_at, null);
  const page = JSON.parse(fixture('player-no-date.json'));
  page.microformat.microformatDataRenderer = { publishDate: '2019-08-24T08:39:57-07:00' };
  assert.equal(ok(parsePlayer(answer(JSON.stringify(page)), 'noDateVid01')).published_at, '2019-08-24T15:39:57.000000Z');
  const live = JSON.parse(fixture('player-no-date.json'));
  live.microformat.playerMicroformatRenderer.liveBroadcastDetails = { isLiveNow: true, startTimestamp: '2026-06-04T06:53:18+00:00' };
  assert.equal(ok(parsePlayer(answer(JSON.stringify(live)), 'noDateVid01')).published_at, '2026-06-04T06:53:18.000000Z');
  assert.equal(ok(parseNext(recorded('next-chaptered-bar.json'))).published_at, '2021-03-03');
  assert.equal(ok(parseNext(recorded('next-description-header.json'))).published_at, '2019-08-24');
  for (const [text, date] of [
    ['Aug 24, 2019', '2019-08-24'],
    ['24 Aug 2019', '2019-08-24'],
    ['Premiered Mar 3, 2021', '2021-03-03'],
    ['Streamed live on Dec 31, 2020', '2020-12-31'],
    ['Started streaming on 4 Jun 2026', '2026-06-04'],
    ['September 9, 2009', '2009-09-09'],
    ['Streamed live 3 hours ago', null],
    ['Feb 31, 2021', null],
    ['Aug 99, 2021', null],
    ['Sept 9, 2009', '2009-09-09'],
    ['4 years ago', null],
  ] as const) assert.equal(shownDate(text), date, text);
});

test('chapters: the older chaptered player bar; the uploader\'s markers before YouTube\'s automatic ones', () => {
  assert.deepEqual(ok(parseNext(recorded('next-chaptered-bar.json'))).chapters, [
    { title: 'Begrüßung', start_seconds: 0 },
    { title: 'Hauptteil', start_seconds: 30 },
    { title: 'Fragen', start_seconds: 75 },
  ]);
  const json = JSON.parse(fixture('next-description-header.json'));
  const chapter = (title: string, ms: number) => ({ chapterRenderer: { title: { simpleText: title }, timeRangeStartMillis: ms } });
  json.playerOverlays = {
    playerOverlayRenderer: {
      decoratedPlayerBarRenderer: {
        decoratedPlayerBarRenderer: {
          playerBar: {
            multiMarkersPlayerBarRenderer: {
              markersMap: [
                { key: 'AUTO_CHAPTERS', value: { chapters: [chapter('Auto one', 0), chapter('Auto two', 10000)] } },
                { key: 'HEATSEEKER', value: { heatmap: { heatmapRenderer: { heatMarkers: [{ heatMarkerRenderer: { timeRangeStartMillis: 0, markerDurationMillis: 5000 } }] } } } },
                { key: 'DESCRIPTION_CHAPTERS', value: { chapters: [chapter('Intro', 0), chapter('Main', 20000)] } },
              ],
            },
          },
        },
      },
    },
  };
  assert.deepEqual(ok(parseNext(answer(JSON.stringify(json)))).chapters, [{ title: 'Intro', start_seconds: 0 }, { title: 'Main', start_seconds: 20 }]);
  json.playerOverlays.playerOverlayRenderer.decoratedPlayerBarRenderer.decoratedPlayerBarRenderer.playerBar.multiMarkersPlayerBarRenderer.markersMap.pop();
  assert.deepEqual(ok(parseNext(answer(JSON.stringify(json)))).chapters, [{ title: 'Auto one', start_seconds: 0 }, { title: 'Auto two', start_seconds: 10 }]);
});

test('transcripts: no track in the language asked falls back to the original track; translations YouTube offers', () => {
  const player = ok(parsePlayer(recorded('player-translatable.json'), 'tRanslate01'));
  assert.deepEqual(player.tracks.map((t) => [t.language, t.auto_generated, t.is_default, t.is_translatable]), [['de', false, true, true], ['de', true, false, true], ['fr', false, false, false]]);
  assert.deepEqual(player.translation_languages.map((t) => `${t.language}:${t.name}`), ['en:English', 'fr:French', 'pt:Portuguese', 'zh-Hans:Chinese (Simplified)']);
  const plan = (language?: string, translateTo?: string) => {
    const chosen = planTranscript(player.tracks, player.translation_languages, language, translateTo);
    return chosen && [chosen.track.language, chosen.track.auto_generated, chosen.translation?.language ?? null];
  };
  // No Spanish track, no translation asked: the original (German, manual before auto-generated).
  assert.deepEqual(plan('es'), ['de', false, null]);
  assert.deepEqual(plan('fr'), ['fr', false, null]);
  assert.deepEqual(plan(), ['de', false, null]);
  // Translated from the track chosen; a track already in that language as it is.
  assert.deepEqual(plan(undefined, 'en'), ['de', false, 'en']);
  assert.deepEqual(plan('es', 'EN'), ['de', false, 'en']);
  assert.deepEqual(plan(undefined, 'zh'), ['de', false, 'zh-Hans']);
  assert.deepEqual(plan(undefined, 'pt-BR'), ['de', false, 'pt']);
  assert.deepEqual(plan(undefined, 'de-AT'), ['de', false, null]);
  // A track YouTube does not translate, or a language it does not offer: none.
  assert.equal(plan('fr', 'en'), null);
  assert.equal(plan(undefined, 'ja'), null);
  assert.equal(planTranscript([], player.translation_languages, 'en'), null);
});

/** A small seeded generator, so a failure names a reproducible case. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** Every [container, key] of a JSON tree. */
function slots(value: unknown, found: Array<[Record<string, unknown> | unknown[], string | number]> = []) {
  if (Array.isArray(value)) value.forEach((child, index) => (found.push([value, index]), slots(child, found)));
  else if (value && typeof value === 'object') for (const [key, child] of Object.entries(value)) (found.push([value as Record<string, unknown>, key]), slots(child, found));
  return found;
}

test('missing fields: with any field removed, every parser answers an outcome (never throws), and an ok one keeps its types', () => {
  const cases: Array<[string, (response: UpstreamResponse) => { kind: string; value?: unknown }]> = [
    ['player-ok.json', (r) => parsePlayer(r, 'M4gD1WSo5mA')],
    ['next-primary-info.json', parseNext],
    ['next-description-header.json', parseNext],
    ['search-video-renderer.json', parseSearch],
    ['search-lockup.json', parseSearch],
    ['channel-videos-lockup.json', parseChannel],
    ['channel-videos-renderer.json', parseChannel],
    ['comments-view-model.json', parseComments],
    ['comments-renderer.json', parseComments],
    ['channel-videos-grid.json', parseChannel],
    ['channel-continuation-grid.json', parseChannelContinuation],
    ['playlist-page-header.json', (r) => parsePlaylist(r, 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE')],
    ['playlist-header-renderer.json', (r) => parsePlaylist(r, 'UUgridchannel00000000001')],
    ['playlist-continuation-legacy.json', parsePlaylistContinuation],
    ['player-translatable.json', (r) => parsePlayer(r, 'tRanslate01')],
    ['next-chaptered-bar.json', parseNext],
    ['next-comments-entry.json', parseCommentsEntry],
    ['timedtext-json3.json', parseTimedText],
  ];
  const kinds = new Set(['ok', 'empty', 'not_found', 'blocked', 'changed']);
  for (const [name, parse] of cases) {
    const random = seeded(name.length * 7919);
    for (let round = 0; round < 60; round += 1) {
      const json = JSON.parse(fixture(name));
      const all = slots(json);
      for (let cut = 0; cut < 1 + Math.floor(random() * 3); cut += 1) {
        const [container, key] = all[Math.floor(random() * all.length)];
        if (Array.isArray(container)) container.splice(Number(key), 1);
        else delete container[key as string];
      }
      const outcome = parse(answer(JSON.stringify(json)));
      assert.ok(kinds.has(outcome.kind), `${name} round ${round}: ${outcome.kind}`);
      if (outcome.kind !== 'ok') continue;
      // Whatever was removed, an ok value never carries undefined where the shape promises a value.
      assert.ok(!JSON.stringify(outcome.value, (_k, v) => (v === undefined ? '__undefined__' : v)).includes('__undefined__'), `${name} round ${round}: undefined in the value`);
      for (const item of ((outcome.value as { items?: Array<{ id: unknown }> }).items ?? [])) assert.equal(typeof item.id, 'string', `${name} round ${round}`);
    }
  }
});
