/**
 * The six /v1/video* endpoints through the real server, against a fake YouTube on loopback
 * serving the recorded InnerTube answers of test/fixtures/video on the real paths: field values,
 * every error mapping, pagination round trips and billing (only a 2xx is charged).
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestService, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream, type UpstreamAnswer, type UpstreamHit } from '../support/fake-upstream.ts';

let service: TestService;
let upstream: FakeUpstream;

const fixture = (name: string) => readFileSync(new URL(`../fixtures/video/${name}`, import.meta.url), 'utf8');
const json = (body: string, status = 200): UpstreamAnswer => ({ status, headers: { 'content-type': 'application/json; charset=UTF-8' }, body });

const COMMENTS_TOP = 'Eg0SC3hhUUpib3pZX0lzGAYyJSIRIgt4YVFKYm96WV9JczAAeAJCEGNvbW1lbnRzLXNlY3Rpb24%3D';
const COMMENTS_NEWEST = 'Eg0SC3hhUUpib3pZX0lzGAYyJSIRIgt4YVFKYm96WV9JczABeAJCEGNvbW1lbnRzLXNlY3Rpb24%3D';
const load = (name: string) => JSON.parse(fixture(name));
const tokenOf = (item: any): string => item.continuationItemRenderer.continuationEndpoint.continuationCommand.token;
const COMMENTS_PAGE_2 = tokenOf(load('comments-view-model.json').onResponseReceivedEndpoints[1].reloadContinuationItemsCommand.continuationItems.at(-1));
const SEARCH_PAGE_2 = tokenOf(load('search-video-renderer.json').contents.twoColumnSearchResultsRenderer.primaryContents.sectionListRenderer.contents.at(-1));
const CHANNEL_PAGE_2 = tokenOf(load('channel-videos-lockup.json').contents.twoColumnBrowseResultsRenderer.tabs.find((tab: any) => tab.tabRenderer?.selected).tabRenderer.content.richGridRenderer.contents.at(-1));

const PLAYLIST = 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE';

/** Per-test replacements of the fake's answers, by InnerTube endpoint and key (video id, query…). */
const overrides = new Map<string, UpstreamAnswer>();

function players(videoId: string): UpstreamAnswer {
  const files: Record<string, string> = {
    '7PIMiDcwNvc': 'player-video.json',
    M4gD1WSo5mA: 'player-ok.json',
    '8VajtrESJzA': 'player-private.json',
    HsUATh_Nc2U: 'player-age-restricted.json',
    'aqz-KE-bpKQ': 'player-no-captions.json',
    xaQJbozY_Is: 'player-video.json',
    botbotbot01: 'player-bot-check.json',
    regionblock: 'player-region-blocked.json',
    tRanslate01: 'player-translatable.json',
    noDateVid01: 'player-no-date.json',
  };
  return json(files[videoId] ? fixture(files[videoId]) : fixture('player-unavailable.json'));
}

function youtube(hit: UpstreamHit): UpstreamAnswer {
  if (hit.path === '/api/timedtext') return json(fixture('timedtext-json3.json'));
  const body = hit.body ? JSON.parse(hit.body) : {};
  const endpoint = hit.path.replace('/youtubei/v1/', '');
  const key = `${endpoint}:${body.videoId ?? body.continuation ?? body.query ?? body.browseId ?? body.url ?? ''}`;
  const override = overrides.get(key);
  if (override) return override;
  switch (endpoint) {
    case 'player':
      return players(body.videoId);
    case 'next':
      if (body.videoId === '7PIMiDcwNvc') return json(fixture('next-primary-info.json'));
      if (body.videoId === 'M4gD1WSo5mA') return json(fixture('next-description-header.json'));
      if (body.videoId === 'xaQJbozY_Is') return json(fixture('next-comments-entry.json'));
      if (body.videoId === 'aqz-KE-bpKQ') return json(fixture('next-comments-off.json'));
      if (body.videoId === 'noDateVid01') return json(fixture('next-primary-info.json'));
      if (body.videoId === 'tRanslate01') return json(fixture('next-chaptered-bar.json'));
      if (body.continuation === COMMENTS_TOP) return json(fixture('comments-view-model.json'));
      if (body.continuation === COMMENTS_NEWEST || body.continuation === COMMENTS_PAGE_2) return json(fixture('comments-view-model-more.json'));
      return json('{"contents":{"twoColumnWatchNextResults":{"results":{"results":{"contents":[]}}}}}');
    case 'search':
      if (body.continuation === SEARCH_PAGE_2) return json(fixture('search-continuation.json'));
      if (body.query === 'test' && body.params === 'EgIQAg==') return json(fixture('search-channel-renderer.json'));
      if (body.query === 'test') return json(fixture('search-video-renderer.json'));
      if (body.query === 'lockup') return json(fixture('search-lockup.json'));
      if (body.query === 'drift') return json(fixture('search-unknown-layout.json'));
      return json(fixture('search-no-results.json'));
    case 'navigation/resolve_url':
      // Handles are case-insensitive on YouTube.
      return String(body.url).toLowerCase() === 'https://www.youtube.com/@creativecommons' ? json(fixture('resolve-url-channel.json')) : json(fixture('resolve-url-not-found.json'), 404);
    case 'browse':
      if (body.continuation === CHANNEL_PAGE_2) return json(fixture('channel-continuation.json'));
      if (body.browseId === 'UCTwECeGqMZee77BjdoYtI2Q') return json(fixture('channel-videos-lockup.json'));
      if (body.browseId === 'UCsXVk37bltHxD1rDPwtNM8Q') return json(fixture('channel-videos-renderer.json'));
      if (body.browseId === 'UCoaO4U_p7G7AwalqSbGCZOA') return json(fixture('channel-removed.json'));
      if (body.browseId === 'UCgridchannel00000000001') return json(fixture('channel-videos-grid.json'));
      if (body.continuation === 'GRID-CHANNEL-PAGE-2') return json(fixture('channel-continuation-grid.json'));
      if (body.browseId === 'UCunknownlayout000000001') return json(fixture('channel-unknown-layout.json'));
      if (body.browseId === `VL${PLAYLIST}`) return json(fixture('playlist-page-header.json'));
      if (body.continuation === 'PLAYLIST-PAGE-2') return json(fixture('playlist-continuation.json'));
      if (body.browseId === 'VLUUgridchannel00000000001') return json(fixture('playlist-header-renderer.json'));
      if (body.continuation === 'OLD-PLAYLIST-PAGE-2') return json(fixture('playlist-continuation-legacy.json'));
      if (body.browseId === 'VLPL11111111111111111111111111111111') return json(fixture('playlist-not-found.json'));
      if (body.browseId === 'VLPLunknownlayout0000000000000001') return json(fixture('playlist-unknown-layout.json'));
      return json(fixture('browse-invalid-argument.json'), 400);
    default:
      return { status: 404, body: 'no such path' };
  }
}

before(async () => {
  upstream = await startFakeUpstream();
  upstream.handle(youtube);
  service = await startTestService({ UPSTREAM_YOUTUBE_URL: upstream.url, YOUTUBE_TIMEOUT_MS: '3000' });
});
after(async () => {
  await service?.close();
  await upstream?.close();
});
beforeEach(async () => {
  // A bot check opens YouTube's circuit for the whole runtime: each test starts with it closed.
  const breaker = service.services.capabilities.runtime.breaker;
  await breaker.reset('youtube');
  for (let waited = 0; (await breaker.states()).has('youtube'); waited += 10) {
    if (waited > 2000) throw new Error("YouTube's circuit did not close");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  overrides.clear();
  upstream.hits.length = 0;
});

const call = (path: string, token: string, body: unknown) => service.call('POST', path, { token, body });
const balance = (id: number) => service.services.ledger.balance(id, 'scraping');
const innertube = () => upstream.hits.filter((hit) => hit.path.startsWith('/youtubei/'));
const UNAVAILABLE = { message: 'The upstream service is unavailable, please retry.' };
const NOT_FOUND = { message: 'Not found.' };
const history = async (token: string) =>
  (await service.call('GET', '/requests?per_page=20', { token })).body.data.map((row: { endpoint: string; status: number; credits: number }) => [row.endpoint, row.status, row.credits]);

/** The youtube calls' verdicts while `run` runs (what the metrics and the drift report count). */
async function verdictsOf(run: () => Promise<void>): Promise<string[]> {
  const verdicts: string[] = [];
  const stop = service.services.capabilities.observeUpstreams((event) => {
    if (event.type === 'call' && event.upstream === 'youtube') verdicts.push(`${event.operation}:${event.verdict}`);
  });
  try {
    await run();
  } finally {
    stop();
  }
  return verdicts;
}

describe('validation (422, nothing charged, YouTube not asked)', () => {
  test('url or id, exactly one, each readable', async () => {
    const u = await service.user({ scraping: 100 });
    const cases: Array<[string, unknown, Record<string, string[]>]> = [
      ['/v1/video', {}, { url: ['The url field is required when id is not present.'] }],
      ['/v1/video', { url: 'not a url' }, { url: ['The url must be a valid URL.'] }],
      ['/v1/video', { url: 'https://vimeo.com/watch?v=dQw4w9WgXcQ' }, { url: ['The url must be a YouTube video URL.'] }],
      ['/v1/video', { url: 'https://www.youtube.com/watch?v=short' }, { url: ['The url must be a YouTube video URL.'] }],
      ['/v1/video', { id: 'dQw4w9WgXc' }, { id: ['The id must be an 11-character YouTube video id.'] }],
      ['/v1/video', { url: 'https://youtu.be/dQw4w9WgXcQ', id: 'dQw4w9WgXcQ' }, { id: ['The id field prohibits url from being present.'] }],
      ['/v1/video/transcript', { id: 'dQw4w9WgXcQ', language: 'english please' }, { language: ['The language must be a language code such as en or pt-BR.'] }],
      ['/v1/video/transcript', { id: 'dQw4w9WgXcQ', translate_to: 'german' }, { translate_to: ['The translate to must be a language code such as en or pt-BR.'] }],
      ['/v1/video/playlist', {}, { url: ['The url field is required when id is not present.'] }],
      ['/v1/video/playlist', { url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' }, { url: ['The url must be a YouTube playlist URL (with list=PL…, UU… or OLAK5uy_…).'] }],
      ['/v1/video/playlist', { id: 'RDdQw4w9WgXcQ' }, { id: ['The id must be a YouTube playlist id (PL…, UU…, OLAK5uy_…).'] }],
      ['/v1/video/playlist', { url: `https://www.youtube.com/playlist?list=${PLAYLIST}`, id: PLAYLIST }, { id: ['The id field prohibits url from being present.'] }],
      ['/v1/video/comments', { id: 'dQw4w9WgXcQ', sort: 'oldest' }, { sort: ['The selected sort is invalid.'] }],
      ['/v1/video/search', {}, { query: ['The query field is required.'] }],
      ['/v1/video/search', { query: 'x', type: 'short', sort: 'hot' }, { type: ['The selected type is invalid.'], sort: ['The selected sort is invalid.'] }],
      ['/v1/video/channel', {}, { url: ['The url field is required when none of handle / id are present.'] }],
      ['/v1/video/channel', { url: 'https://www.youtube.com/watch?v=dQw4w9WgXcQ' }, { url: ['The url must be a YouTube channel URL (/channel/UC…, /@handle, /c/name or /user/name).'] }],
      ['/v1/video/channel', { handle: 'a b' }, { handle: ['The handle must be a YouTube handle such as @name.'] }],
      ['/v1/video/channel', { id: 'UCshort' }, { id: ['The id must be a YouTube channel id (UC followed by 22 characters).'] }],
      ['/v1/video/channel', { handle: '@creativecommons', id: 'UCTwECeGqMZee77BjdoYtI2Q' }, { handle: ['The handle field prohibits id from being present.'] }],
    ];
    for (const [path, body, errors] of cases) {
      const r = await call(path, u.token, body);
      assert.equal(r.status, 422, `${path} ${JSON.stringify(body)}: ${r.text}`);
      assert.deepEqual({ message: r.body.message, errors: r.body.errors }, { message: 'The given data was invalid.', errors }, `${path} ${JSON.stringify(body)}`);
    }
    assert.equal(innertube().length, 0);
    assert.equal(await balance(u.id), 100);
  });
});

describe('/v1/video', () => {
  test('player and watch page together: the §11 fields, exact counts, the channel, thumbnails, captions; 3 credits', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/video', u.token, { url: 'https://youtu.be/7PIMiDcwNvc?si=abc&t=12' });
    assert.equal(r.status, 200, r.text);
    const video = r.body.response;
    assert.equal(video.id, '7PIMiDcwNvc');
    assert.equal(video.url, 'https://www.youtube.com/watch?v=7PIMiDcwNvc');
    assert.equal(video.title, 'Marzia & Felix - Wedding 19.08.2019');
    assert.equal(video.duration_seconds, 381);
    assert.equal(video.view_count, 41613592);
    assert.equal(video.like_count, 5471574);
    assert.equal(video.published_at, '2019-08-24T15:39:57.000000Z');
    assert.equal(video.category, 'Entertainment');
    assert.deepEqual(video.channel, { id: 'UC-lHJZR3Gqxm24_Vd_AJ5Yw', name: 'PewDiePie', url: 'https://www.youtube.com/channel/UC-lHJZR3Gqxm24_Vd_AJ5Yw' });
    for (const field of ['id', 'url', 'title', 'description', 'channel', 'published_at', 'duration_seconds', 'view_count', 'like_count', 'comment_count', 'keywords', 'category', 'is_live', 'thumbnails', 'chapters', 'captions']) {
      assert.ok(field in video, `§11 field ${field}`);
    }
    assert.equal(video.comment_count, null, 'the recorded watch page shows no comment count');
    assert.deepEqual(video.chapters, []);
    assert.deepEqual(video.thumbnails, [{ url: 'https://i.ytimg.com/vi_webp/7PIMiDcwNvc/maxresdefault.webp', width: 1920, height: 1080 }]);
    assert.deepEqual(video.captions, [{ language: 'en', name: 'English (auto-generated)', auto_generated: true }]);
    assert.deepEqual(innertube().map((hit) => hit.path).sort(), ['/youtubei/v1/next', '/youtubei/v1/player']);
    const [player] = innertube().filter((hit) => hit.path === '/youtubei/v1/player');
    assert.equal(JSON.parse(player.body).context.client.clientName, 'WEB');
    assert.equal(player.headers.cookie, 'SOCS=CAI');
    assert.equal(await balance(u.id), 7);
  });

  test('the newer watch-page generation (description header, entity mutations) by bare id', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/video', u.token, { id: 'M4gD1WSo5mA' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.response.like_count, 5471574);
    assert.equal(r.body.response.view_count, 12916);
    assert.equal(await balance(u.id), 7);
  });

  test('the comment count and chapters from the watch page; chapters from the description when it has none', async () => {
    const u = await service.user({ scraping: 10 });
    const page = JSON.parse(fixture('next-primary-info.json'));
    page.engagementPanels.push({
      engagementPanelSectionListRenderer: { panelIdentifier: 'engagement-panel-comments-section', header: { engagementPanelTitleHeaderRenderer: { contextualInfo: { runs: [{ text: '153,208' }] } } } },
    });
    page.engagementPanels.push({
      engagementPanelSectionListRenderer: {
        panelIdentifier: 'engagement-panel-macro-markers-description-chapters',
        content: { macroMarkersListRenderer: { contents: [0, 95, 240].map((start, i) => ({ macroMarkersListItemRenderer: { title: { simpleText: `Part ${i + 1}` }, onTap: { watchEndpoint: { startTimeSeconds: start } } } })) } },
      },
    });
    overrides.set('next:7PIMiDcwNvc', json(JSON.stringify(page)));
    const r = await call('/v1/video', u.token, { id: '7PIMiDcwNvc' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.response.comment_count, 153208);
    assert.deepEqual(r.body.response.chapters, [{ title: 'Part 1', start_seconds: 0 }, { title: 'Part 2', start_seconds: 95 }, { title: 'Part 3', start_seconds: 240 }]);

    const player = JSON.parse(fixture('player-video.json'));
    player.videoDetails.shortDescription = 'Chapters:\n0:00 Ceremony\n2:10 Vows\n5:01 Party';
    overrides.set('player:M4gD1WSo5mA', json(JSON.stringify({ ...player, videoDetails: { ...player.videoDetails, videoId: 'M4gD1WSo5mA' } })));
    const described = await call('/v1/video', u.token, { id: 'M4gD1WSo5mA' });
    assert.equal(described.status, 200, described.text);
    assert.deepEqual(described.body.response.chapters, [{ title: 'Ceremony', start_seconds: 0 }, { title: 'Vows', start_seconds: 130 }, { title: 'Party', start_seconds: 301 }]);
    assert.equal(await balance(u.id), 4);
  });

  test('published_at from the watch page when the player gives no date; chapters from the older chaptered player bar', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/video', u.token, { id: 'noDateVid01' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.response.published_at, '2019-08-24');
    const chaptered = await call('/v1/video', u.token, { id: 'tRanslate01' });
    assert.equal(chaptered.status, 200, chaptered.text);
    assert.equal(chaptered.body.response.published_at, '2021-03-04T10:00:00.000000Z', "the player's exact time first");
    assert.deepEqual(chaptered.body.response.chapters, [{ title: 'Begrüßung', start_seconds: 0 }, { title: 'Hauptteil', start_seconds: 30 }, { title: 'Fragen', start_seconds: 75 }]);
    assert.deepEqual(chaptered.body.response.captions, [
      { language: 'de', name: 'German', auto_generated: false },
      { language: 'de', name: 'German (auto-generated)', auto_generated: true },
      { language: 'fr', name: 'French', auto_generated: false },
    ]);
    assert.equal(await balance(u.id), 4);
  });

  for (const [name, id] of [['private', '8VajtrESJzA'], ['age-restricted', 'HsUATh_Nc2U'], ['region-blocked', 'regionblock'], ['removed', 'gonegonegon']] as const) {
    test(`a ${name} video → 404, not charged`, async () => {
      const u = await service.user({ scraping: 10 });
      const r = await call('/v1/video', u.token, { id });
      assert.equal(r.status, 404, r.text);
      assert.deepEqual(r.body, NOT_FOUND);
      assert.equal(await balance(u.id), 10);
    });
  }

  test('a bot check → 502, not charged', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/video', u.token, { id: 'botbotbot01' });
    assert.equal(r.status, 502);
    assert.deepEqual(r.body, UNAVAILABLE);
    assert.equal(await balance(u.id), 10);
  });

  test('a consent wall (a redirect to the consent page) → 502, not charged', async () => {
    const u = await service.user({ scraping: 10 });
    upstream.handle((hit) => {
      if (hit.path === '/youtubei/v1/player') return { status: 302, headers: { location: `${upstream.url}/consent?continue=https%3A%2F%2Fwww.youtube.com` }, body: '' };
      if (hit.path === '/consent') return { status: 200, headers: { 'content-type': 'text/html' }, body: '<html><title>Before you continue to YouTube</title><form action="https://consent.youtube.com/save" method="POST"></form></html>' };
      return youtube(hit);
    });
    try {
      const r = await call('/v1/video', u.token, { id: '7PIMiDcwNvc' });
      assert.equal(r.status, 502, r.text);
      assert.deepEqual(r.body, UNAVAILABLE);
      assert.ok(upstream.hits.some((hit) => hit.path === '/consent'), 'the redirect was followed');
    } finally {
      upstream.handle(youtube);
    }
    assert.equal(await balance(u.id), 10);
  });

  test('a watch page in a layout the parser does not know → 502 (changed), never a 200 with nulls', async () => {
    const u = await service.user({ scraping: 10 });
    const verdicts: string[] = [];
    const stop = service.services.capabilities.observeUpstreams((event) => {
      if (event.type === 'call' && event.upstream === 'youtube') verdicts.push(`${event.operation}:${event.verdict}`);
    });
    try {
      overrides.set('next:7PIMiDcwNvc', json(fixture('next-unknown-layout.json')));
      const r = await call('/v1/video', u.token, { id: '7PIMiDcwNvc' });
      assert.equal(r.status, 502);
      assert.deepEqual(r.body, UNAVAILABLE);
      overrides.set('player:M4gD1WSo5mA', json('{"playabilityStatus":{"status":"SOMETHING_NEW"}}'));
      assert.equal((await call('/v1/video', u.token, { id: 'M4gD1WSo5mA' })).status, 502);
    } finally {
      stop();
    }
    // The runtime saw the drift (what the metrics and the drift report count).
    assert.ok(verdicts.includes('next:changed'), verdicts.join());
    assert.ok(verdicts.includes('player:changed'), verdicts.join());
    assert.equal(await balance(u.id), 10);
  });
});

describe('/v1/video/transcript', () => {
  test('the default (manual) track in json3, segments in seconds and the joined text; 3 credits', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/video/transcript', u.token, { url: 'https://www.youtube.com/watch?v=M4gD1WSo5mA&list=PL123&t=5' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.response, {
      id: 'M4gD1WSo5mA',
      language: 'en',
      name: 'English',
      auto_generated: false,
      translated_from: null,
      segments: [
        { start: 1.2, duration: 3.4, text: 'In the last segment we considered' },
        { start: 4.6, duration: 2.95, text: 'the protection of dramatic works.' },
        { start: 7.56, duration: 4.12, text: 'Now we turn to choreography & pantomime.' },
      ],
      text: 'In the last segment we considered the protection of dramatic works. Now we turn to choreography & pantomime.',
      available_languages: [
        { language: 'en', name: 'English', auto_generated: false },
        { language: 'en', name: 'English (auto-generated)', auto_generated: true },
      ],
    });
    const [caption] = upstream.hits.filter((hit) => hit.path === '/api/timedtext');
    assert.equal(caption.query.get('fmt'), 'json3');
    assert.equal(caption.query.get('lang'), 'en');
    assert.equal(caption.query.get('kind'), null, 'the manual track, not the auto-generated one');
    assert.equal(await balance(u.id), 7);
  });

  test('an auto-generated track when it is the only one in that language', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/video/transcript', u.token, { id: '7PIMiDcwNvc', language: 'en' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.response.auto_generated, true);
    const [caption] = upstream.hits.filter((hit) => hit.path === '/api/timedtext');
    assert.equal(caption.query.get('kind'), 'asr');
  });

  test('no captions, or a translation YouTube does not offer → 404; an empty caption answer → 502; none charged', async () => {
    const u = await service.user({ scraping: 10 });
    for (const body of [{ id: 'aqz-KE-bpKQ' }, { id: 'tRanslate01', language: 'fr', translate_to: 'en' }, { id: 'tRanslate01', translate_to: 'ja' }, { id: '8VajtrESJzA' }]) {
      const r = await call('/v1/video/transcript', u.token, body);
      assert.equal(r.status, 404, JSON.stringify(body));
      assert.deepEqual(r.body, NOT_FOUND);
    }
    upstream.handle((hit) => (hit.path === '/api/timedtext' ? { status: 200, body: '' } : youtube(hit)));
    try {
      const r = await call('/v1/video/transcript', u.token, { id: 'M4gD1WSo5mA' });
      assert.equal(r.status, 502);
    } finally {
      upstream.handle(youtube);
    }
    assert.equal(await balance(u.id), 10);
  });
});

describe('/v1/video/transcript: fallback and translation', () => {
  test('no track in the language asked: the original track (manual before auto-generated), not 404; 3 credits', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/video/transcript', u.token, { id: 'tRanslate01', language: 'es' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.body.response.language, r.body.response.name, r.body.response.auto_generated, r.body.response.translated_from], ['de', 'German', false, null]);
    const [caption] = upstream.hits.filter((hit) => hit.path === '/api/timedtext');
    assert.deepEqual([caption.query.get('lang'), caption.query.get('kind'), caption.query.get('tlang')], ['de', null, null]);
    const english = await call('/v1/video/transcript', u.token, { id: 'M4gD1WSo5mA', language: 'fr' });
    assert.equal(english.status, 200, english.text);
    assert.deepEqual([english.body.response.language, english.body.response.auto_generated], ['en', false]);
    assert.equal(await balance(u.id), 4);
  });

  test('translate_to: the track translated by YouTube (tlang), named in that language, its source said', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/video/transcript', u.token, { url: 'https://youtu.be/tRanslate01', translate_to: 'en' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual([r.body.response.language, r.body.response.name, r.body.response.auto_generated, r.body.response.translated_from], ['en', 'English', false, 'de']);
    assert.equal(r.body.response.segments.length, 3);
    assert.deepEqual(r.body.response.available_languages.map((l: { language: string }) => l.language), ['de', 'de', 'fr']);
    const [caption] = upstream.hits.filter((hit) => hit.path === '/api/timedtext');
    assert.deepEqual([caption.query.get('lang'), caption.query.get('tlang'), caption.query.get('fmt')], ['de', 'en', 'json3']);
    // A track already in that language is read as it is.
    upstream.hits.length = 0;
    const same = await call('/v1/video/transcript', u.token, { id: 'tRanslate01', language: 'fr', translate_to: 'fr' });
    assert.equal(same.status, 200, same.text);
    assert.deepEqual([same.body.response.language, same.body.response.translated_from], ['fr', null]);
    assert.equal(upstream.hits.find((hit) => hit.path === '/api/timedtext')?.query.get('tlang'), null);
    assert.equal(await balance(u.id), 4);
  });
});

describe('/v1/video/search', () => {
  test('a page, its token, the next page; 10 credits a page; a token for another query → 422', async () => {
    const u = await service.user({ scraping: 100 });
    const first = await call('/v1/video/search', u.token, { query: 'test' });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.response.map((item: { id: string }) => item.id), ['Z8KYabgkMbw', '0YWt4Ai8q_g', 'UEQSkaqrMZA']);
    assert.equal(first.body.response[0].view_count, 390201);
    const token = first.body.pagination.next_page_token;
    assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    assert.ok(!token.includes(SEARCH_PAGE_2.slice(0, 20)), 'the token is opaque');

    const second = await call('/v1/video/search', u.token, { query: 'test', next_page_token: token });
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.body.response.map((item: { id: string }) => item.id), ['JOHUZMTdgBY', 'E8Ssd5-86jw']);
    assert.equal(JSON.parse(innertube().at(-1)!.body).continuation, SEARCH_PAGE_2);
    assert.equal(await balance(u.id), 80);

    const hitsBefore = innertube().length;
    const other = await call('/v1/video/search', u.token, { query: 'another query', next_page_token: token });
    assert.equal(other.status, 422);
    assert.deepEqual(other.body.errors, { next_page_token: ['The next page token does not belong to this query.'] });
    const otherSort = await call('/v1/video/search', u.token, { query: 'test', sort: 'date', next_page_token: token });
    assert.deepEqual(otherSort.body.errors, { next_page_token: ['The next page token does not belong to this query.'] });
    const forged = await call('/v1/video/search', u.token, { query: 'test', next_page_token: 'abc.def' });
    assert.deepEqual(forged.body.errors, { next_page_token: ['The next page token is invalid.'] });
    const elsewhere = await call('/v1/video/channel', u.token, { handle: 'creativecommons', next_page_token: token });
    assert.deepEqual(elsewhere.body.errors, { next_page_token: ['The next page token does not belong to this channel.'] });
    assert.equal(innertube().length, hitsBefore);
    assert.equal(await balance(u.id), 80);
  });

  test('type and sort become the search filter; the lockup generation; no results is an empty page', async () => {
    const u = await service.user({ scraping: 100 });
    const channels = await call('/v1/video/search', u.token, { query: 'test', type: 'channel' });
    assert.equal(channels.status, 200, channels.text);
    assert.deepEqual(channels.body.response.map((item: { type: string; handle: string }) => [item.type, item.handle]), [['channel', '@tutorialismic'], ['channel', '@MXTEST2020']]);
    assert.equal(JSON.parse(innertube().at(-1)!.body).params, 'EgIQAg==');
    await call('/v1/video/search', u.token, { query: 'nothing', sort: 'date', type: 'video' });
    assert.equal(JSON.parse(innertube().at(-1)!.body).params, 'CAISAhAB');

    const lockups = await call('/v1/video/search', u.token, { query: 'lockup' });
    assert.deepEqual(lockups.body.response.map((item: { type: string; id: string }) => `${item.type}:${item.id}`), ['video:dPZTh2NKTm4', 'video:jfKfPfyJRdk', 'playlist:PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE']);
    const none = await call('/v1/video/search', u.token, { query: 'nothing' });
    assert.equal(none.status, 200);
    assert.deepEqual(none.body, { response: [], pagination: { next_page_token: null } });
    assert.equal(await balance(u.id), 60);
  });

  test('results only in an unknown layout → 502 (changed), not charged', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/video/search', u.token, { query: 'drift' });
    assert.equal(r.status, 502);
    assert.deepEqual(r.body, UNAVAILABLE);
    assert.equal(await balance(u.id), 10);
  });
});

describe('/v1/video/channel', () => {
  test('by handle: resolved, the channel and its videos, the next page with the channel too; 10 credits a page', async () => {
    const u = await service.user({ scraping: 100 });
    const first = await call('/v1/video/channel', u.token, { handle: 'creativecommons' });
    assert.equal(first.status, 200, first.text);
    const { channel, videos } = first.body.response;
    assert.equal(channel.id, 'UCTwECeGqMZee77BjdoYtI2Q');
    assert.equal(channel.handle, '@creativecommons');
    assert.equal(channel.subscriber_count, null, '"8.84k subscribers" is rounded');
    assert.equal(channel.video_count, 258);
    assert.deepEqual(videos.map((v: { id: string; duration_seconds: number }) => [v.id, v.duration_seconds]).slice(0, 2), [['BD-LB23rRBE', 4054], ['ea1MAxH0KJc', 2032]]);
    const browse = innertube().find((hit) => hit.path === '/youtubei/v1/browse')!;
    assert.deepEqual(JSON.parse(browse.body).params, 'EgZ2aWRlb3PyBgQKAjoA');

    const second = await call('/v1/video/channel', u.token, { url: 'https://www.youtube.com/@CreativeCommons/videos', next_page_token: first.body.pagination.next_page_token });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.response.channel.id, 'UCTwECeGqMZee77BjdoYtI2Q');
    assert.equal(second.body.response.channel.video_count, 258);
    assert.deepEqual(second.body.response.videos.map((v: { id: string }) => v.id), ['CIFHx7_z3Vc', 's5jaFTP3tN8']);
    assert.equal(await balance(u.id), 80);

    const other = await call('/v1/video/channel', u.token, { id: 'UCsXVk37bltHxD1rDPwtNM8Q', next_page_token: first.body.pagination.next_page_token });
    assert.deepEqual(other.body.errors, { next_page_token: ['The next page token does not belong to this channel.'] });
    assert.equal(await balance(u.id), 80);
  });

  test('by id and by /channel/ URL: the videoRenderer generation, no resolve call', async () => {
    const u = await service.user({ scraping: 100 });
    const r = await call('/v1/video/channel', u.token, { url: 'https://www.youtube.com/channel/UCsXVk37bltHxD1rDPwtNM8Q' });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.response.channel.name, 'Kurzgesagt – In a Nutshell');
    assert.equal(r.body.response.videos[0].title, 'We Made A New Channel!');
    assert.ok(!innertube().some((hit) => hit.path === '/youtubei/v1/navigation/resolve_url'));
  });

  test('an unknown handle, a removed channel, an id YouTube rejects → 404, not charged', async () => {
    const u = await service.user({ scraping: 10 });
    for (const body of [{ handle: '@nobody-here' }, { id: 'UCoaO4U_p7G7AwalqSbGCZOA' }, { id: 'UC0000000000000000000000' }]) {
      const r = await call('/v1/video/channel', u.token, body);
      assert.equal(r.status, 404, JSON.stringify(body));
      assert.deepEqual(r.body, NOT_FOUND);
    }
    assert.equal(await balance(u.id), 10);
  });
});

describe('/v1/video/channel: layout generations', () => {
  test('the older grid layout (c4TabbedHeaderRenderer, gridVideoRenderer) gives its videos and its next page; 10 credits a page', async () => {
    const u = await service.user({ scraping: 100 });
    const first = await call('/v1/video/channel', u.token, { id: 'UCgridchannel00000000001' });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.response.channel.name, 'Old Grid Channel');
    assert.equal(first.body.response.channel.handle, '@oldgridchannel');
    assert.equal(first.body.response.channel.video_count, 1024);
    assert.deepEqual(first.body.response.videos.map((v: { id: string; duration_seconds: number; view_count: number; is_live: boolean }) => [v.id, v.duration_seconds, v.view_count, v.is_live]), [
      ['gRidVideo01', 725, 12345, false],
      ['gRidVideo02', 3723, 1204551, false],
      ['gRidVideo03', null, null, true],
    ]);
    const second = await call('/v1/video/channel', u.token, { id: 'UCgridchannel00000000001', next_page_token: first.body.pagination.next_page_token });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.response.channel.id, 'UCgridchannel00000000001');
    assert.deepEqual(second.body.response.videos.map((v: { id: string }) => v.id), ['gRidVideo04', 'gRidVideo05']);
    assert.ok(second.body.pagination.next_page_token);
    assert.equal(await balance(u.id), 80);
  });

  test('a Videos tab no parser knows → 502 (changed), not charged, recorded with 0 credits', async () => {
    const u = await service.user({ scraping: 10 });
    const verdicts = await verdictsOf(async () => {
      const r = await call('/v1/video/channel', u.token, { id: 'UCunknownlayout000000001' });
      assert.equal(r.status, 502, r.text);
      assert.deepEqual(r.body, UNAVAILABLE);
    });
    assert.deepEqual(verdicts, ['browse:changed']);
    assert.equal(await balance(u.id), 10);
    assert.deepEqual(await history(u.token), [['/v1/video/channel', 502, 0]]);
  });
});

describe('/v1/video/playlist', () => {
  test('by URL: the playlist and its videos in order, the next page by id with the playlist too; 10 credits a page', async () => {
    const u = await service.user({ scraping: 100 });
    const first = await call('/v1/video/playlist', u.token, { url: `https://www.youtube.com/watch?v=dPZTh2NKTm4&list=${PLAYLIST}&index=1` });
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.response.playlist, {
      id: PLAYLIST,
      url: `https://www.youtube.com/playlist?list=${PLAYLIST}`,
      title: 'Licensing basics',
      description: 'What the six licences allow, one video each.',
      channel: { id: 'UCTwECeGqMZee77BjdoYtI2Q', name: 'Creative Commons', url: 'https://www.youtube.com/channel/UCTwECeGqMZee77BjdoYtI2Q' },
      video_count: 42,
      view_count: 8402,
    });
    assert.deepEqual(first.body.response.videos.map((v: { position: number; id: string; duration_seconds: number }) => [v.position, v.id, v.duration_seconds]), [[1, 'dPZTh2NKTm4', 721], [2, 'BD-LB23rRBE', 4054], [3, 'zXhTF-T24fw', 300]]);
    const browse = innertube().find((hit) => hit.path === '/youtubei/v1/browse')!;
    assert.equal(JSON.parse(browse.body).browseId, `VL${PLAYLIST}`);
    const token = first.body.pagination.next_page_token;
    assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);

    const second = await call('/v1/video/playlist', u.token, { id: PLAYLIST, next_page_token: token });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.response.playlist.title, 'Licensing basics');
    assert.deepEqual(second.body.response.videos.map((v: { position: number; id: string }) => [v.position, v.id]), [[101, 'ea1MAxH0KJc'], [102, 'CIFHx7_z3Vc']]);
    assert.deepEqual(second.body.pagination, { next_page_token: null });
    assert.equal(await balance(u.id), 80);

    const hitsBefore = innertube().length;
    const other = await call('/v1/video/playlist', u.token, { id: 'UUgridchannel00000000001', next_page_token: token });
    assert.equal(other.status, 422);
    assert.deepEqual(other.body.errors, { next_page_token: ['The next page token does not belong to this playlist.'] });
    const channelToken = await call('/v1/video/channel', u.token, { id: 'UCTwECeGqMZee77BjdoYtI2Q', next_page_token: token });
    assert.deepEqual(channelToken.body.errors, { next_page_token: ['The next page token does not belong to this channel.'] });
    assert.equal(innertube().length, hitsBefore);
    assert.equal(await balance(u.id), 80);
  });

  test('the older playlistHeaderRenderer generation and its older continuation', async () => {
    const u = await service.user({ scraping: 100 });
    const first = await call('/v1/video/playlist', u.token, { id: 'UUgridchannel00000000001' });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.response.playlist.title, 'Uploads from Old Grid Channel');
    assert.equal(first.body.response.playlist.video_count, 1024);
    assert.deepEqual(first.body.response.videos.map((v: { id: string }) => v.id), ['gRidVideo01', 'privVideo01']);
    const second = await call('/v1/video/playlist', u.token, { url: 'https://www.youtube.com/playlist?list=UUgridchannel00000000001', next_page_token: first.body.pagination.next_page_token });
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.body.response.videos.map((v: { id: string }) => v.id), ['gRidVideo04']);
    assert.equal(await balance(u.id), 80);
  });

  test('a playlist that does not exist → 404; one no parser knows → 502 (changed); neither charged, both recorded with 0 credits', async () => {
    const u = await service.user({ scraping: 10 });
    const gone = await call('/v1/video/playlist', u.token, { id: 'PL11111111111111111111111111111111' });
    assert.equal(gone.status, 404, gone.text);
    assert.deepEqual(gone.body, NOT_FOUND);
    const verdicts = await verdictsOf(async () => {
      const drift = await call('/v1/video/playlist', u.token, { id: 'PLunknownlayout0000000000000001' });
      assert.equal(drift.status, 502, drift.text);
      assert.deepEqual(drift.body, UNAVAILABLE);
    });
    assert.deepEqual(verdicts, ['browse:changed']);
    assert.equal(await balance(u.id), 10);
    assert.deepEqual(await history(u.token), [['/v1/video/playlist', 502, 0], ['/v1/video/playlist', 404, 0]]);
  });
});

describe('/v1/video/comments', () => {
  test('top comments through the watch page, then the next page; 3 credits a page', async () => {
    const u = await service.user({ scraping: 10 });
    const first = await call('/v1/video/comments', u.token, { url: 'https://www.youtube.com/watch?v=xaQJbozY_Is' });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.response.length, 4);
    assert.deepEqual(first.body.response[0], {
      id: 'UgwSOM0QHBLysE3vZE54AaABAg',
      text: 'The 12,022 Calendar is sold out check out more scienc-y products created with love here: https://kgs.link/shop-151',
      author: { name: '@kurzgesagt', channel_id: 'UCsXVk37bltHxD1rDPwtNM8Q' },
      like_count: null,
      reply_count: 327,
      published_text: '4 years ago (edited)',
      is_pinned: true,
      is_hearted: false,
      author_is_channel_owner: true,
    });
    const second = await call('/v1/video/comments', u.token, { id: 'xaQJbozY_Is', next_page_token: first.body.pagination.next_page_token });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.response[0].id, 'UgwaG5ZLOj86V_35uRJ4AaABAg');
    assert.equal(second.body.pagination.next_page_token, null);
    assert.equal(JSON.parse(innertube().at(-1)!.body).continuation, COMMENTS_PAGE_2);
    assert.equal(await balance(u.id), 4);
  });

  test('newest first follows the sort menu; a top token is refused for newest', async () => {
    const u = await service.user({ scraping: 10 });
    const newest = await call('/v1/video/comments', u.token, { id: 'xaQJbozY_Is', sort: 'newest' });
    assert.equal(newest.status, 200, newest.text);
    assert.deepEqual(innertube().map((hit) => JSON.parse(hit.body).videoId ?? JSON.parse(hit.body).continuation), ['xaQJbozY_Is', COMMENTS_TOP, COMMENTS_NEWEST]);
    assert.equal(newest.body.response[0].id, 'UgwaG5ZLOj86V_35uRJ4AaABAg');

    const top = await call('/v1/video/comments', u.token, { id: 'xaQJbozY_Is' });
    const mixed = await call('/v1/video/comments', u.token, { id: 'xaQJbozY_Is', sort: 'newest', next_page_token: top.body.pagination.next_page_token });
    assert.equal(mixed.status, 422);
    assert.deepEqual(mixed.body.errors, { next_page_token: ['The next page token does not belong to this video and sort order.'] });
    const otherVideo = await call('/v1/video/comments', u.token, { id: '7PIMiDcwNvc', next_page_token: top.body.pagination.next_page_token });
    assert.equal(otherVideo.status, 422);
    assert.equal(await balance(u.id), 4);
  });

  test('comments turned off → an empty page; an unavailable video → 404, not charged', async () => {
    const u = await service.user({ scraping: 10 });
    const off = await call('/v1/video/comments', u.token, { id: 'aqz-KE-bpKQ' });
    assert.equal(off.status, 200, off.text);
    assert.deepEqual(off.body, { response: [], pagination: { next_page_token: null } });
    const gone = await call('/v1/video/comments', u.token, { id: '8VajtrESJzA' });
    assert.equal(gone.status, 404);
    assert.deepEqual(gone.body, NOT_FOUND);
    assert.equal(await balance(u.id), 7);
  });

  test('comments in a generation no parser knows → 502 (changed), not 200 []; not charged, recorded with 0 credits', async () => {
    const u = await service.user({ scraping: 10 });
    overrides.set(`next:${COMMENTS_TOP}`, json(fixture('comments-unknown-layout.json')));
    const verdicts = await verdictsOf(async () => {
      const r = await call('/v1/video/comments', u.token, { id: 'xaQJbozY_Is' });
      assert.equal(r.status, 502, r.text);
      assert.deepEqual(r.body, UNAVAILABLE);
    });
    assert.deepEqual(verdicts, ['next:ok', 'comments:changed']);
    assert.equal(await balance(u.id), 10);
    assert.deepEqual(await history(u.token), [['/v1/video/comments', 502, 0]]);
  });

  test('comment threads in an unknown layout → 502, not charged', async () => {
    const u = await service.user({ scraping: 10 });
    const broken = JSON.parse(fixture('comments-view-model.json'));
    broken.frameworkUpdates.entityBatchUpdate.mutations = [];
    overrides.set(`next:${COMMENTS_TOP}`, json(JSON.stringify(broken)));
    const r = await call('/v1/video/comments', u.token, { id: 'xaQJbozY_Is' });
    assert.equal(r.status, 502);
    assert.deepEqual(r.body, UNAVAILABLE);
    assert.equal(await balance(u.id), 10);
  });
});

describe('history', () => {
  test('successes are recorded with their credits, failures with none', async () => {
    const u = await service.user({ scraping: 10 });
    await call('/v1/video', u.token, { id: '7PIMiDcwNvc' });
    await call('/v1/video', u.token, { id: '8VajtrESJzA' });
    const r = await service.call('GET', '/requests?per_page=10', { token: u.token });
    const rows = r.body.data.map((row: { endpoint: string; status: number; credits: number }) => [row.endpoint, row.status, row.credits]);
    assert.deepEqual(rows, [['/v1/video', 404, 0], ['/v1/video', 200, 3]]);
  });
});
