/**
 * Pure parsers of InnerTube answers. Each reads the generations it knows (older renderers and the
 * newer view models with their entity mutations), survives missing fields, and answers `changed`
 * for a document it cannot place, never a value full of nulls.
 */
import { decodeEntities } from '../kit/html.ts';
import type { ParseOutcome, UpstreamResponse } from '../kit/types.ts';
import {
  arrayAt,
  channelUrl,
  clockSeconds,
  continuationItems,
  continuationToken,
  exactCount,
  findAll,
  isBotCheck,
  isObject,
  objectAt,
  openDocument,
  rawInteger,
  stringAt,
  textOf,
  thumbnailUrl,
  watchUrl,
  type Json,
} from './innertube.ts';
import type {
  CaptionTrack,
  Chapter,
  ChannelInfo,
  ChannelItem,
  ChannelPage,
  ChannelRefItem,
  Comment,
  CommentPage,
  CommentsEntry,
  ItemPage,
  NextInfo,
  PlayerInfo,
  PlaylistItem,
  SearchItem,
  Thumbnail,
  TranscriptSegment,
  VideoItem,
} from './types.ts';

type Outcome<T> = ParseOutcome<T>;
const changed = (reason: string): Outcome<never> => ({ kind: 'changed', reason });

/** Runs `read` on the answer's JSON document, or answers what replaced the document. */
function withDocument<T>(response: UpstreamResponse, read: (json: Json) => Outcome<T>): Outcome<T> {
  const opened = openDocument(response);
  return 'outcome' in opened ? opened.outcome : read(opened.json);
}

// ---------------------------------------------------------------- player

/**
 * The playability verdict: playable (or an upcoming/ended live) is readable; private, removed,
 * age-restricted, members-only and region-blocked videos are not found for us (as a protected
 * account is); a bot check is a block; a status we do not know is drift.
 */
export function playabilityVerdict(json: Json): Outcome<never> | null {
  const status = objectAt(json, 'playabilityStatus');
  if (!status) return changed('no playabilityStatus');
  const code = stringAt(status, 'status');
  const reason = [stringAt(status, 'reason'), ...arrayAt(status, 'messages').filter((m): m is string => typeof m === 'string'), textOf(objectAt(status, 'errorScreen', 'playerErrorMessageRenderer', 'subreason'))].filter(Boolean).join(' ');
  if (isBotCheck(reason)) return { kind: 'blocked', reason: 'bot check' };
  switch (code) {
    case 'OK':
    case 'LIVE_STREAM_OFFLINE':
      return null;
    case 'LOGIN_REQUIRED':
    case 'ERROR':
    case 'UNPLAYABLE':
    case 'CONTENT_CHECK_REQUIRED':
    case 'AGE_CHECK_REQUIRED':
    case 'AGE_VERIFICATION_REQUIRED':
      return { kind: 'not_found', reason: `${code}: ${reason || 'unavailable'}` };
    default:
      return changed(`unknown playability status ${String(code)}`);
  }
}

/** "2015-01-27T21:14:36-08:00" → "2015-01-28T05:14:36.000000Z"; a bare date stays a date. */
export function isoDate(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return value;
  const time = Date.parse(value);
  return Number.isNaN(time) ? null : new Date(time).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function captionTracks(json: Json): CaptionTrack[] {
  const list = objectAt(json, 'captions', 'playerCaptionsTracklistRenderer');
  const tracks = arrayAt(list, 'captionTracks');
  const defaults = new Set(arrayAt(list, 'audioTracks').map((audio) => (isObject(audio) && typeof audio.defaultCaptionTrackIndex === 'number' ? audio.defaultCaptionTrackIndex : -1)));
  const found: CaptionTrack[] = [];
  tracks.forEach((track, index) => {
    const baseUrl = stringAt(track, 'baseUrl');
    const language = stringAt(track, 'languageCode');
    if (!baseUrl || !language) return;
    let path: string;
    try {
      const url = new URL(baseUrl, 'https://www.youtube.com');
      path = `${url.pathname}${url.search}`;
    } catch {
      return;
    }
    const kind = stringAt(track, 'kind');
    const vssId = stringAt(track, 'vssId') ?? '';
    found.push({ language, name: textOf(objectAt(track, 'name')) ?? language, auto_generated: kind === 'asr' || vssId.startsWith('a.'), path, is_default: defaults.has(index) });
  });
  return found;
}

/** The player's thumbnail list (all sizes, as sent); the standard one when the player lists none. */
function playerThumbnails(details: Json | undefined, micro: Json | undefined, id: string): Thumbnail[] {
  const listed = [...arrayAt(details, 'thumbnail', 'thumbnails'), ...(arrayAt(details, 'thumbnail', 'thumbnails').length === 0 ? arrayAt(micro, 'thumbnail', 'thumbnails') : [])];
  const found: Thumbnail[] = [];
  for (const entry of listed) {
    const url = stringAt(entry, 'url');
    if (!url) continue;
    found.push({ url, width: rawInteger(isObject(entry) ? entry.width : undefined), height: rawInteger(isObject(entry) ? entry.height : undefined) });
  }
  // Every video has the 480×360 "hq" image at a fixed address.
  return found.length > 0 ? found : [{ url: thumbnailUrl(id), width: 480, height: 360 }];
}

/**
 * Chapters written into a description, as YouTube itself reads them: lines holding a timestamp
 * (`0:00 Intro`, `Intro - 1:02:03`), the first at 0:00, at least three, in ascending order.
 * Anything else is not a chapter list, and gives none.
 */
export function chaptersFromDescription(description: string): Chapter[] {
  const chapters: Chapter[] = [];
  for (const line of description.split(/\r?\n/)) {
    const leading = /^\s*(?:[-*•▶►]\s*)?[([]?((?:\d{1,2}:)?\d{1,2}:\d{2})[)\]]?\s*(?:[-–—:|]\s*)?(.*?)\s*$/u.exec(line);
    const trailing = leading ? null : /^\s*(.+?)\s*(?:[-–—:|]\s*)?[([]?((?:\d{1,2}:)?\d{1,2}:\d{2})[)\]]?\s*$/u.exec(line);
    const [stamp, title] = leading ? [leading[1], leading[2]] : trailing ? [trailing[2], trailing[1]] : [undefined, ''];
    const start = clockSeconds(stamp);
    if (start === null || title.trim() === '') continue;
    chapters.push({ title: title.trim(), start_seconds: start });
  }
  if (chapters.length < 3 || chapters[0].start_seconds !== 0) return [];
  for (let i = 1; i < chapters.length; i += 1) if (chapters[i].start_seconds <= chapters[i - 1].start_seconds) return [];
  return chapters;
}

export function readPlayer(json: Json, videoId: string): Outcome<PlayerInfo> {
  const verdict = playabilityVerdict(json);
  if (verdict) return verdict;
  const details = objectAt(json, 'videoDetails');
  const micro = objectAt(json, 'microformat', 'playerMicroformatRenderer');
  const id = stringAt(details, 'videoId');
  const title = stringAt(details, 'title') ?? textOf(objectAt(micro, 'title'));
  if (!id || title === undefined) return changed('player answer without videoDetails');
  // A different id is a redirect we did not ask for (a removed video replaced by another).
  if (id !== videoId) return { kind: 'not_found', reason: `asked ${videoId}, answered ${id}` };
  const channelId = stringAt(details, 'channelId') ?? stringAt(micro, 'externalChannelId') ?? null;
  const liveDetails = objectAt(micro, 'liveBroadcastDetails');
  return {
    kind: 'ok',
    value: {
      id,
      title,
      description: stringAt(details, 'shortDescription') ?? textOf(objectAt(micro, 'description')) ?? '',
      duration_seconds: rawInteger(stringAt(details, 'lengthSeconds') ?? stringAt(micro, 'lengthSeconds')),
      view_count: rawInteger(stringAt(details, 'viewCount') ?? stringAt(micro, 'viewCount')),
      keywords: arrayAt(details, 'keywords').filter((k): k is string => typeof k === 'string'),
      category: stringAt(micro, 'category') ?? null,
      published_at: isoDate(stringAt(micro, 'publishDate') ?? stringAt(micro, 'uploadDate')),
      is_live: details?.isLive === true || liveDetails?.isLiveNow === true,
      is_family_safe: typeof micro?.isFamilySafe === 'boolean' ? micro.isFamilySafe : null,
      is_unlisted: typeof micro?.isUnlisted === 'boolean' ? micro.isUnlisted : null,
      thumbnails: playerThumbnails(details, micro, id),
      channel: { id: channelId, name: stringAt(details, 'author') ?? stringAt(micro, 'ownerChannelName') ?? null, url: channelId ? channelUrl(channelId) : null },
      tracks: captionTracks(json),
    },
  };
}

export const parsePlayer = (response: UpstreamResponse, videoId: string): Outcome<PlayerInfo> => withDocument(response, (json) => readPlayer(json, videoId));

// ---------------------------------------------------------------- watch page (/next)

/** "like this video along with 5,471,574 other people" / "1,234 likes" → the exact number, or null. */
function likesFromLabel(label: string | undefined): number | null {
  if (label === undefined) return null;
  const along = /along with ([\d,.\u00a0\u202f ]+?) other (?:people|person)/i.exec(label);
  if (along) return exactCount(along[1]);
  const plain = /^([\d,.\u00a0\u202f ]+) likes?$/i.exec(label.trim());
  return plain ? exactCount(plain[1]) : null;
}

/** Like counts in the generations known: entity mutations, the like button's labels, the factoid. */
function likeCount(json: Json): number | null {
  for (const entity of findAll(objectAt(json, 'frameworkUpdates'), 'likeCountEntity')) {
    const exact = rawInteger(entity.likeCountIfIndifferentNumber) ?? rawInteger(entity.expandedLikeCountIfIndifferent);
    if (exact !== null) return exact;
  }
  const primary = findAll(json, 'videoPrimaryInfoRenderer')[0];
  for (const button of findAll(primary, 'likeButtonViewModel')) {
    for (const model of findAll(button, 'buttonViewModel')) {
      const count = likesFromLabel(stringAt(model, 'accessibilityText'));
      if (count !== null) return count;
    }
  }
  for (const toggle of findAll(primary, 'toggleButtonRenderer')) {
    const label = stringAt(toggle, 'defaultText', 'accessibility', 'accessibilityData', 'label') ?? stringAt(toggle, 'accessibilityData', 'accessibilityData', 'label');
    const count = likesFromLabel(label);
    if (count !== null) return count;
  }
  for (const header of findAll(json, 'videoDescriptionHeaderRenderer')) {
    for (const factoid of findAll(header, 'factoidRenderer')) {
      if (!/likes?/i.test(textOf(objectAt(factoid, 'label')) ?? '')) continue;
      const count = likesFromLabel(stringAt(factoid, 'accessibilityText')) ?? exactCount(textOf(objectAt(factoid, 'value')));
      if (count !== null) return count;
    }
  }
  return null;
}

/**
 * The comment count the watch page shows: the comments panel's header (`contextualInfo`) or the
 * entry point under the video (`commentsEntryPointHeaderRenderer.commentCount`). Only a number
 * spelled out in full counts; "1.2K" is null.
 */
function commentCount(json: Json): number | null {
  const texts: (string | undefined)[] = [];
  for (const panel of findAll(json.engagementPanels, 'engagementPanelSectionListRenderer')) {
    if (stringAt(panel, 'panelIdentifier') !== 'engagement-panel-comments-section' && stringAt(panel, 'targetId') !== 'engagement-panel-comments-section') continue;
    texts.push(textOf(objectAt(panel, 'header', 'engagementPanelTitleHeaderRenderer', 'contextualInfo')));
  }
  for (const header of findAll(objectAt(json, 'contents'), 'commentsEntryPointHeaderRenderer')) texts.push(textOf(objectAt(header, 'commentCount')));
  for (const header of findAll(objectAt(json, 'contents'), 'commentsHeaderRenderer')) texts.push(textOf(objectAt(header, 'countText')), textOf(objectAt(header, 'commentsCount')));
  for (const text of texts) {
    const count = exactCount(text);
    if (count !== null) return count;
  }
  return null;
}

/** Chapters the watch page marks: the player bar's `chapterRenderer`s, else a chapters panel's markers. */
function chaptersOfNext(json: Json): Chapter[] {
  const fromBar: Chapter[] = [];
  for (const chapter of findAll(objectAt(json, 'playerOverlays'), 'chapterRenderer')) {
    const title = textOf(objectAt(chapter, 'title'));
    const start = rawInteger(chapter.timeRangeStartMillis);
    if (title !== undefined && start !== null) fromBar.push({ title, start_seconds: Math.floor(start / 1000) });
  }
  if (fromBar.length > 0) return fromBar;
  for (const panel of findAll(json.engagementPanels, 'engagementPanelSectionListRenderer')) {
    const identifier = stringAt(panel, 'panelIdentifier') ?? stringAt(panel, 'targetId') ?? '';
    // Only a chapters panel (the uploader's, or YouTube's own chapters): "key moments" are not chapters.
    if (!/chapters/.test(identifier)) continue;
    const chapters: Chapter[] = [];
    for (const item of findAll(panel, 'macroMarkersListItemRenderer')) {
      const title = textOf(objectAt(item, 'title'));
      const start = rawInteger(objectAt(item, 'onTap', 'watchEndpoint')?.startTimeSeconds) ?? clockSeconds(textOf(objectAt(item, 'timeDescription')));
      if (title !== undefined && start !== null) chapters.push({ title, start_seconds: start });
    }
    if (chapters.length > 0) return chapters;
  }
  return [];
}

export function readNext(json: Json): Outcome<NextInfo> {
  const primary = findAll(json, 'videoPrimaryInfoRenderer')[0];
  const header = findAll(json, 'videoDescriptionHeaderRenderer')[0];
  if (!primary && !header) return changed('watch page without videoPrimaryInfoRenderer or videoDescriptionHeaderRenderer');
  const viewText = textOf(objectAt(primary, 'viewCount', 'videoViewCountRenderer', 'viewCount')) ?? textOf(objectAt(header, 'views'));
  return {
    kind: 'ok',
    value: { like_count: likeCount(json), view_count: exactCount(viewText), comment_count: commentCount(json), chapters: chaptersOfNext(json), generation: primary ? 'primary-info' : 'description-header' },
  };
}

export const parseNext = (response: UpstreamResponse): Outcome<NextInfo> => withDocument(response, readNext);

// ---------------------------------------------------------------- transcripts (timedtext)

const seconds = (ms: number) => Math.round(ms) / 1000;
const cleanText = (text: string) => text.replace(/\s+/g, ' ').trim();

/** The json3 form: `events[]` with `tStartMs`, `dDurationMs` and `segs[].utf8`. */
function json3Segments(json: Json): TranscriptSegment[] | null {
  if (!Array.isArray(json.events)) return null;
  const segments: TranscriptSegment[] = [];
  for (const event of json.events) {
    if (!isObject(event) || !Array.isArray(event.segs)) continue;
    const text = cleanText(event.segs.map((seg) => (isObject(seg) && typeof seg.utf8 === 'string' ? seg.utf8 : '')).join(''));
    const start = typeof event.tStartMs === 'number' ? event.tStartMs : null;
    if (text === '' || start === null) continue;
    segments.push({ start: seconds(start), duration: seconds(typeof event.dDurationMs === 'number' ? event.dDurationMs : 0), text });
  }
  return segments;
}

/** The XML forms: `<text start dur>` (seconds) and format 3's `<p t d>` (milliseconds). */
function xmlSegments(body: string): TranscriptSegment[] | null {
  const segments: TranscriptSegment[] = [];
  let matched = false;
  for (const match of body.matchAll(/<text\b([^>]*)>([\s\S]*?)<\/text>/g)) {
    matched = true;
    const start = Number(/\bstart="([\d.]+)"/.exec(match[1])?.[1]);
    const duration = Number(/\bdur="([\d.]+)"/.exec(match[1])?.[1] ?? 0);
    const text = cleanText(decodeEntities(decodeEntities(match[2].replace(/<[^>]+>/g, ''))));
    if (text !== '' && Number.isFinite(start)) segments.push({ start, duration: Number.isFinite(duration) ? duration : 0, text });
  }
  for (const match of body.matchAll(/<p\b([^>]*)>([\s\S]*?)<\/p>/g)) {
    matched = true;
    const start = Number(/\bt="(\d+)"/.exec(match[1])?.[1]);
    const duration = Number(/\bd="(\d+)"/.exec(match[1])?.[1] ?? 0);
    const text = cleanText(decodeEntities(match[2].replace(/<[^>]+>/g, '')));
    if (text !== '' && Number.isFinite(start)) segments.push({ start: seconds(start), duration: seconds(Number.isFinite(duration) ? duration : 0), text });
  }
  if (!matched && !/<(transcript|timedtext)\b/.test(body)) return null;
  return segments;
}

export function parseTimedText(response: UpstreamResponse): Outcome<TranscriptSegment[]> {
  if (response.status === 404) return { kind: 'not_found', reason: 'caption track gone' };
  if (response.status === 429 || response.status === 403) return { kind: 'blocked', reason: `caption track refused (${response.status})` };
  if (response.status !== 200) return changed(`caption track answered ${response.status}`);
  const body = response.body.trim();
  // An empty 200 is how the caption server refuses a request without a proof-of-origin token.
  if (body === '') return { kind: 'blocked', reason: 'empty caption answer' };
  let segments: TranscriptSegment[] | null = null;
  if (body.startsWith('{')) {
    try {
      const json = JSON.parse(body) as unknown;
      segments = isObject(json) ? json3Segments(json) : null;
    } catch {
      segments = null;
    }
  } else if (body.startsWith('<')) {
    if (/<html\b/i.test(body)) return isBotCheck(body) ? { kind: 'blocked', reason: 'bot check' } : changed('caption track answered a web page');
    segments = xmlSegments(body);
  }
  if (segments === null) return changed('unknown caption format');
  return segments.length === 0 ? { kind: 'empty' } : { kind: 'ok', value: segments };
}

/**
 * The track to read: the caller's language (a manual track before an auto-generated one; `en`
 * also matches `en-GB`), else the player's default track, else the first manual track, else the
 * first. Null when the language asked for has no track.
 */
export function chooseTrack(tracks: CaptionTrack[], language?: string): CaptionTrack | null {
  const byManual = (list: CaptionTrack[]) => list.find((t) => !t.auto_generated) ?? list[0] ?? null;
  if (language !== undefined) {
    const wanted = language.toLowerCase();
    const exact = tracks.filter((t) => t.language.toLowerCase() === wanted);
    if (exact.length > 0) return byManual(exact);
    const base = wanted.split('-')[0];
    const related = tracks.filter((t) => t.language.toLowerCase().split('-')[0] === base);
    return related.length > 0 ? byManual(related) : null;
  }
  const defaults = tracks.filter((t) => t.is_default);
  if (defaults.length > 0) {
    // The default track's language, read from a manual track when there is one.
    return byManual(tracks.filter((t) => t.language === defaults[0].language));
  }
  return byManual(tracks);
}

// ---------------------------------------------------------------- items (search, channel)

function runOwner(value: unknown): ChannelRefItem | null {
  const runs = arrayAt(value, 'runs');
  const run = runs.find((r) => isObject(r) && objectAt(r, 'navigationEndpoint', 'browseEndpoint'));
  if (!run) return null;
  const id = stringAt(run, 'navigationEndpoint', 'browseEndpoint', 'browseId') ?? null;
  return { id, name: stringAt(run, 'text') ?? null, url: id ? channelUrl(id) : null };
}

function isLiveBadge(renderer: Json): boolean {
  return findAll(renderer, 'metadataBadgeRenderer').some((b) => stringAt(b, 'style') === 'BADGE_STYLE_TYPE_LIVE_NOW') || findAll(renderer, 'thumbnailOverlayTimeStatusRenderer').some((o) => stringAt(o, 'style') === 'LIVE');
}

export function videoFromRenderer(renderer: Json): VideoItem | null {
  const id = stringAt(renderer, 'videoId');
  if (!id) return null;
  const snippet = findAll(renderer, 'snippetText')[0];
  return {
    type: 'video',
    id,
    url: watchUrl(id),
    title: textOf(objectAt(renderer, 'title')) ?? textOf(objectAt(renderer, 'headline')) ?? '',
    channel: runOwner(objectAt(renderer, 'ownerText')) ?? runOwner(objectAt(renderer, 'longBylineText')) ?? runOwner(objectAt(renderer, 'shortBylineText')),
    duration_seconds: clockSeconds(textOf(objectAt(renderer, 'lengthText'))),
    view_count: exactCount(textOf(objectAt(renderer, 'viewCountText'))),
    published_text: textOf(objectAt(renderer, 'publishedTimeText')) ?? null,
    description_snippet: textOf(objectAt(renderer, 'descriptionSnippet')) ?? (snippet ? textOf(snippet) ?? null : null),
    thumbnail_url: thumbnailUrl(id),
    is_live: isLiveBadge(renderer),
  };
}

/** The metadata rows' parts of a view model (`contentMetadataViewModel`), as texts. */
function metadataParts(model: Json): string[] {
  const parts: string[] = [];
  for (const meta of findAll(model, 'contentMetadataViewModel')) {
    for (const row of arrayAt(meta, 'metadataRows')) for (const part of arrayAt(row, 'metadataParts')) {
      const text = textOf(objectAt(part, 'text'));
      if (text) parts.push(text);
    }
  }
  return parts;
}

export function itemFromLockup(model: Json): VideoItem | PlaylistItem | null {
  const id = stringAt(model, 'contentId');
  const type = stringAt(model, 'contentType');
  const meta = objectAt(model, 'metadata', 'lockupMetadataViewModel');
  if (!id || !meta) return null;
  const title = textOf(objectAt(meta, 'title')) ?? '';
  const parts = metadataParts(meta);
  const channelRun = findAll(meta, 'browseEndpoint')[0];
  const channelId = stringAt(channelRun, 'browseId') ?? null;
  const channel = channelId ? { id: channelId, name: parts.find((p) => !/\bviews?\b|\bago\b|\bwatching\b/i.test(p)) ?? null, url: channelUrl(channelId) } : null;
  if (type === 'LOCKUP_CONTENT_TYPE_PLAYLIST' || type === 'LOCKUP_CONTENT_TYPE_PODCAST') {
    const countBadge = findAll(model, 'thumbnailBadgeViewModel').map((b) => stringAt(b, 'text')).find((t) => t && /videos?|episodes?/i.test(t));
    return { type: 'playlist', id, url: `https://www.youtube.com/playlist?list=${id}`, title, channel, video_count: countBadge ? exactCount(countBadge) : null };
  }
  if (type !== 'LOCKUP_CONTENT_TYPE_VIDEO') return null;
  const badges = findAll(model, 'thumbnailBadgeViewModel').map((b) => stringAt(b, 'text') ?? '');
  const duration = badges.map((b) => clockSeconds(b)).find((s) => s !== null) ?? null;
  const live = findAll(model, 'thumbnailBadgeViewModel').some((b) => /LIVE/.test(stringAt(b, 'badgeStyle') ?? '') || /^live$/i.test(stringAt(b, 'text') ?? ''));
  const views = parts.find((p) => /\bviews?\b/i.test(p));
  return {
    type: 'video',
    id,
    url: watchUrl(id),
    title,
    channel,
    duration_seconds: duration,
    view_count: views ? exactCount(views) : null,
    published_text: parts.find((p) => /\bago\b|^streamed\b|^premiered?\b/i.test(p)) ?? null,
    description_snippet: null,
    thumbnail_url: thumbnailUrl(id),
    is_live: live,
  };
}

function channelFromRenderer(renderer: Json): ChannelItem | null {
  const id = stringAt(renderer, 'channelId');
  if (!id) return null;
  // The handle sits in subscriberCountText on newer pages, in its own field on older ones.
  const texts = [textOf(objectAt(renderer, 'subscriberCountText')), textOf(objectAt(renderer, 'videoCountText'))].filter((t): t is string => t !== undefined);
  const handle = texts.find((t) => t.startsWith('@')) ?? stringAt(renderer, 'navigationEndpoint', 'browseEndpoint', 'canonicalBaseUrl')?.replace(/^\//, '').replace(/^(?!@).*/, '') ?? null;
  const subscribers = texts.find((t) => /subscribers?/i.test(t));
  const videos = texts.find((t) => /videos?/i.test(t));
  return {
    type: 'channel',
    id,
    url: channelUrl(id),
    title: textOf(objectAt(renderer, 'title')) ?? '',
    handle: handle || null,
    subscriber_count: subscribers ? exactCount(subscribers) : null,
    video_count: videos ? exactCount(videos) : null,
    description_snippet: textOf(objectAt(renderer, 'descriptionSnippet')) ?? null,
  };
}

function playlistFromRenderer(renderer: Json): PlaylistItem | null {
  const id = stringAt(renderer, 'playlistId');
  if (!id) return null;
  return {
    type: 'playlist',
    id,
    url: `https://www.youtube.com/playlist?list=${id}`,
    title: textOf(objectAt(renderer, 'title')) ?? '',
    channel: runOwner(objectAt(renderer, 'longBylineText')) ?? runOwner(objectAt(renderer, 'shortBylineText')),
    video_count: rawInteger(stringAt(renderer, 'videoCount')),
  };
}

/** Items that carry no result (ads, shelves of shorts, spelling hints): skipped, not drift. */
const NOT_RESULTS = new Set([
  'adSlotRenderer', 'reelShelfRenderer', 'horizontalCardListRenderer', 'didYouMeanRenderer', 'showingResultsForRenderer', 'messageRenderer',
  'backgroundPromoRenderer', 'searchPyvRenderer', 'promotedSparklesWebRenderer', 'radioRenderer', 'movieRenderer', 'gridShelfViewModel',
  'continuationItemRenderer', 'clarificationRenderer', 'exploreCategoryRenderer', 'universalWatchCardRenderer', 'shortsLockupViewModel',
  'reelItemRenderer', 'emergencyOneboxRenderer', 'searchRefinementCardRenderer', 'horizontalListRenderer', 'chipCloudRenderer', 'feedFilterChipBarRenderer',
  'showingResultsForRenderer', 'includingResultsForRenderer', 'infoPanelContainerRenderer', 'channelVideoPlayerRenderer', 'sectionHeaderViewModel',
]);

/** Reads result items in document order; `unknown` counts items of a kind we do not know. */
function readItems(items: unknown[]): { results: SearchItem[]; unknown: string[] } {
  const results: SearchItem[] = [];
  const unknown: string[] = [];
  for (const entry of items) {
    if (!isObject(entry)) continue;
    const [kind, value] = Object.entries(entry)[0] ?? [];
    if (!kind || !isObject(value)) continue;
    let item: SearchItem | null = null;
    if (kind === 'itemSectionRenderer') {
      const inner = readItems(arrayAt(value, 'contents'));
      results.push(...inner.results);
      unknown.push(...inner.unknown);
      continue;
    }
    if (kind === 'richItemRenderer' || kind === 'richSectionRenderer') {
      const inner = readItems([objectAt(value, 'content') ?? {}]);
      results.push(...inner.results);
      unknown.push(...inner.unknown);
      continue;
    }
    if (kind === 'shelfRenderer') {
      const inner = readItems([...arrayAt(value, 'content', 'verticalListRenderer', 'items'), ...arrayAt(value, 'content', 'expandedShelfContentsRenderer', 'items')]);
      results.push(...inner.results);
      continue;
    }
    if (kind === 'videoRenderer' || kind === 'gridVideoRenderer') item = videoFromRenderer(value);
    else if (kind === 'lockupViewModel') item = itemFromLockup(value);
    else if (kind === 'channelRenderer') item = channelFromRenderer(value);
    else if (kind === 'playlistRenderer') item = playlistFromRenderer(value);
    else if (!NOT_RESULTS.has(kind)) unknown.push(kind);
    if (item) results.push(item);
  }
  return { results, unknown };
}

function itemPage<T extends SearchItem>(items: unknown[], keep: (item: SearchItem) => item is T, container: unknown): Outcome<ItemPage<T>> {
  const { results, unknown } = readItems(items);
  if (results.length === 0 && unknown.length > 0) return changed(`no known result among ${[...new Set(unknown)].join(', ')}`);
  return { kind: 'ok', value: { items: results.filter(keep), continuation: continuationToken(container) } };
}

const anyItem = (_item: SearchItem): _item is SearchItem => true;
const videoItem = (item: SearchItem): item is VideoItem => item.type === 'video';

/** A search page: the first (two-column results) or a continuation. */
export function readSearch(json: Json): Outcome<ItemPage<SearchItem>> {
  const sections = objectAt(json, 'contents', 'twoColumnSearchResultsRenderer', 'primaryContents', 'sectionListRenderer');
  if (sections) {
    const contents = arrayAt(sections, 'contents');
    return itemPage(contents, anyItem, contents.filter((c) => isObject(c) && 'continuationItemRenderer' in c));
  }
  const continuation = continuationItems(json);
  if (continuation.found) return itemPage(continuation.items, anyItem, continuation.items.filter((c) => isObject(c) && 'continuationItemRenderer' in c));
  return changed('search answer without twoColumnSearchResultsRenderer or continuation items');
}

export const parseSearch = (response: UpstreamResponse): Outcome<ItemPage<SearchItem>> => withDocument(response, readSearch);

// ---------------------------------------------------------------- channels

/** `/navigation/resolve_url`: the channel id a handle or custom URL points to. */
export function parseResolvedChannel(response: UpstreamResponse): Outcome<string> {
  return withDocument(response, (json) => {
    const browse = objectAt(json, 'endpoint', 'browseEndpoint');
    const id = stringAt(browse, 'browseId');
    if (id && id.startsWith('UC')) return { kind: 'ok', value: id };
    if (objectAt(json, 'endpoint', 'urlEndpoint') || objectAt(json, 'endpoint', 'watchEndpoint') || browse) return { kind: 'not_found', reason: 'not a channel' };
    return changed('resolve_url answer without an endpoint');
  });
}

function channelInfo(json: Json): ChannelInfo | null {
  const meta = objectAt(json, 'metadata', 'channelMetadataRenderer');
  const id = stringAt(meta, 'externalId');
  if (!meta || !id) return null;
  const texts: string[] = [];
  const header = objectAt(json, 'header', 'pageHeaderRenderer', 'content', 'pageHeaderViewModel');
  if (header) texts.push(...metadataParts(header));
  const c4 = objectAt(json, 'header', 'c4TabbedHeaderRenderer');
  if (c4) for (const key of ['channelHandleText', 'subscriberCountText', 'videosCountText']) {
    const text = textOf(objectAt(c4, key));
    if (text) texts.push(text);
  }
  const ownerUrl = arrayAt(meta, 'ownerUrls').find((u): u is string => typeof u === 'string' && u.includes('/@'));
  const handle = texts.find((t) => t.startsWith('@')) ?? (ownerUrl ? decodeURIComponent(ownerUrl.slice(ownerUrl.indexOf('/@') + 1)) : null);
  const subscribers = texts.find((t) => /subscribers?/i.test(t));
  const videos = texts.find((t) => /\bvideos?\b/i.test(t));
  const avatar = arrayAt(meta, 'avatar', 'thumbnails').map((t) => stringAt(t, 'url')).find((u) => u !== undefined) ?? null;
  return {
    id,
    name: stringAt(meta, 'title') ?? '',
    handle,
    url: channelUrl(id),
    description: stringAt(meta, 'description') ?? '',
    subscriber_count: subscribers ? exactCount(subscribers) : null,
    video_count: videos ? exactCount(videos) : null,
    avatar_url: avatar,
  };
}

/** A channel's Videos tab (first page): the channel and its newest uploads. */
export function readChannel(json: Json): Outcome<ChannelPage> {
  const alert = arrayAt(json, 'alerts').map((a) => objectAt(a, 'alertRenderer') ?? objectAt(a, 'alertWithButtonRenderer')).find((a) => stringAt(a, 'type') === 'ERROR');
  if (alert) return { kind: 'not_found', reason: textOf(objectAt(alert, 'text')) ?? 'channel unavailable' };
  const channel = channelInfo(json);
  if (!channel) return changed('browse answer without channelMetadataRenderer');
  const tabs = arrayAt(json, 'contents', 'twoColumnBrowseResultsRenderer', 'tabs');
  if (tabs.length === 0) return changed('channel page without tabs');
  const selected = tabs.map((t) => objectAt(t, 'tabRenderer')).find((t) => t?.selected === true);
  // A channel without uploads has no Videos tab: YouTube then selects Home.
  const grid = objectAt(selected, 'content', 'richGridRenderer');
  if (!selected || !grid) return { kind: 'ok', value: { channel, items: [], continuation: null } };
  const contents = arrayAt(grid, 'contents');
  const page = itemPage(contents, videoItem, contents.filter((c) => isObject(c) && 'continuationItemRenderer' in c));
  return page.kind === 'ok' ? { kind: 'ok', value: { channel, ...page.value } } : page;
}

export const parseChannel = (response: UpstreamResponse): Outcome<ChannelPage> => withDocument(response, readChannel);

export function readChannelContinuation(json: Json): Outcome<ItemPage<VideoItem>> {
  const continuation = continuationItems(json);
  if (!continuation.found) return changed('channel continuation without continuation items');
  return itemPage(continuation.items, videoItem, continuation.items.filter((c) => isObject(c) && 'continuationItemRenderer' in c));
}

export const parseChannelContinuation = (response: UpstreamResponse): Outcome<ItemPage<VideoItem>> => withDocument(response, readChannelContinuation);

// ---------------------------------------------------------------- comments

/** The watch page's way into its comments: the comment section's continuation. */
export function readCommentsEntry(json: Json): Outcome<CommentsEntry> {
  const results = arrayAt(json, 'contents', 'twoColumnWatchNextResults', 'results', 'results', 'contents');
  if (!objectAt(json, 'contents', 'twoColumnWatchNextResults')) return changed('watch page without twoColumnWatchNextResults');
  const section = results.map((r) => objectAt(r, 'itemSectionRenderer')).find((s) => stringAt(s, 'sectionIdentifier') === 'comment-item-section' || stringAt(s, 'targetId') === 'comments-section');
  const hasVideo = findAll(json, 'videoPrimaryInfoRenderer').length > 0 || findAll(json, 'videoDescriptionHeaderRenderer').length > 0 || section !== undefined;
  if (!section) return { kind: 'ok', value: { continuation: null, hasVideo } };
  return { kind: 'ok', value: { continuation: continuationToken(section), hasVideo: true } };
}

export const parseCommentsEntry = (response: UpstreamResponse): Outcome<CommentsEntry> => withDocument(response, readCommentsEntry);

function likeCountOfComment(shown: string | undefined, label: string | undefined): number | null {
  if (shown !== undefined && shown.trim() === '') return 0;
  return exactCount(shown) ?? likesFromLabel(label);
}

/** The old generation: everything inline in `commentRenderer`. */
function commentFromRenderer(renderer: Json): Comment | null {
  const id = stringAt(renderer, 'commentId');
  if (!id) return null;
  const likeLabel = findAll(renderer, 'likeButton').flatMap((b) => findAll(b, 'accessibilityData')).map((a) => stringAt(a, 'label')).find((l) => l !== undefined);
  const vote = objectAt(renderer, 'voteCount');
  return {
    id,
    text: textOf(objectAt(renderer, 'contentText')) ?? '',
    author: { name: textOf(objectAt(renderer, 'authorText')) ?? null, channel_id: stringAt(renderer, 'authorEndpoint', 'browseEndpoint', 'browseId') ?? null },
    like_count: vote ? likeCountOfComment(textOf(vote), likeLabel) : likeLabel ? likesFromLabel(likeLabel) : 0,
    reply_count: typeof renderer.replyCount === 'number' ? renderer.replyCount : 0,
    published_text: textOf(objectAt(renderer, 'publishedTimeText')) ?? null,
    is_pinned: objectAt(renderer, 'pinnedCommentBadge') !== undefined,
    is_hearted: findAll(renderer, 'creatorHeartRenderer').some((h) => h.isHearted === true),
    author_is_channel_owner: renderer.authorIsChannelOwner === true,
  };
}

/** The new generation: `commentViewModel` holds keys; the content is in the entity mutations. */
function commentFromViewModel(model: Json, entities: Map<string, Json>): Comment | null {
  const key = stringAt(model, 'commentKey');
  const payload = key ? entities.get(key) : undefined;
  const entity = objectAt(payload, 'commentEntityPayload');
  const properties = objectAt(entity, 'properties');
  const id = stringAt(properties, 'commentId') ?? stringAt(model, 'commentId');
  if (!entity || !properties || !id) return null;
  const toolbar = objectAt(entity, 'toolbar');
  const stateKey = stringAt(model, 'toolbarStateKey');
  const state = stateKey ? objectAt(entities.get(stateKey), 'engagementToolbarStateEntityPayload') : undefined;
  const author = objectAt(entity, 'author');
  const replies = stringAt(toolbar, 'replyCount');
  return {
    id,
    text: stringAt(properties, 'content', 'content') ?? '',
    author: { name: stringAt(author, 'displayName') ?? null, channel_id: stringAt(author, 'channelId') ?? null },
    like_count: likeCountOfComment(stringAt(toolbar, 'likeCountNotliked'), stringAt(toolbar, 'likeButtonA11y')),
    // The toolbar leaves the reply count out (or empty) when there is none.
    reply_count: !toolbar ? null : replies === undefined || replies.trim() === '' ? 0 : exactCount(replies),
    published_text: stringAt(properties, 'publishedTime') ?? null,
    is_pinned: stringAt(model, 'pinnedText') !== undefined,
    is_hearted: stringAt(state, 'heartState') === 'TOOLBAR_HEART_STATE_HEARTED',
    author_is_channel_owner: author?.isCreator === true,
  };
}

function sortTokens(items: unknown[]): CommentPage['sorts'] {
  const header = items.map((i) => objectAt(i, 'commentsHeaderRenderer')).find((h) => h !== undefined);
  const menu = arrayAt(header, 'sortMenu', 'sortFilterSubMenuRenderer', 'subMenuItems');
  if (menu.length === 0) return null;
  const token = (item: unknown) => stringAt(item, 'serviceEndpoint', 'continuationCommand', 'token') ?? null;
  // The menu's order is fixed (top first, newest second); the titles are localised.
  return { top: token(menu[0]), newest: menu[1] !== undefined ? token(menu[1]) : null };
}

export function readComments(json: Json): Outcome<CommentPage> {
  const continuation = continuationItems(json);
  if (!continuation.found) return changed('comments answer without continuation items');
  const entities = new Map<string, Json>();
  for (const mutation of arrayAt(json, 'frameworkUpdates', 'entityBatchUpdate', 'mutations')) {
    const key = stringAt(mutation, 'entityKey');
    const payload = objectAt(mutation, 'payload');
    if (key && payload) entities.set(key, payload);
  }
  const comments: Comment[] = [];
  let unreadable = 0;
  let next: string | null = null;
  for (const item of continuation.items) {
    const thread = objectAt(item, 'commentThreadRenderer');
    if (thread) {
      const model = objectAt(thread, 'commentViewModel', 'commentViewModel');
      const renderer = objectAt(thread, 'comment', 'commentRenderer');
      const comment = model ? commentFromViewModel(model, entities) : renderer ? commentFromRenderer(renderer) : null;
      if (comment) comments.push(comment);
      else unreadable += 1;
      continue;
    }
    const loose = objectAt(item, 'commentViewModel') ?? objectAt(item, 'commentRenderer');
    if (loose) {
      const comment = 'commentKey' in loose ? commentFromViewModel(loose, entities) : commentFromRenderer(loose);
      if (comment) comments.push(comment);
      else unreadable += 1;
      continue;
    }
    const more = objectAt(item, 'continuationItemRenderer');
    if (more) next = continuationToken({ continuationItemRenderer: more }) ?? next;
  }
  if (comments.length === 0 && unreadable > 0) return changed(`${unreadable} comment threads in an unknown layout`);
  return { kind: 'ok', value: { items: comments, continuation: next, sorts: sortTokens(continuation.items) } };
}

export const parseComments = (response: UpstreamResponse): Outcome<CommentPage> => withDocument(response, readComments);
