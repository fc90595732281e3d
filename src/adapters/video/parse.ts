/**
 * Pure parsers of InnerTube answers. Each reads the generations it knows (older renderers and the
 * newer view models with their entity mutations), survives missing fields, and answers `changed`
 * for a document it cannot place, never a value full of nulls.
 */
import { CappedList, firstItems, MAX_NESTED_ITEMS, MAX_PAGE_ITEMS } from '../kit/limits.ts';
import { decodeEntities } from '../kit/html.ts';
import type { ParseOutcome, UpstreamResponse } from '../kit/types.ts';
import { elements, replaceTags } from '../../core/text.ts';
import { chapterLine } from './chapter-line.ts';
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
  legacyContinuation,
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
  PlaylistInfo,
  PlaylistItem,
  PlaylistPage,
  PlaylistVideoItem,
  SearchItem,
  Thumbnail,
  TranscriptSegment,
  TranslationLanguage,
  VideoItem,
} from './types.ts';

type Outcome<T> = ParseOutcome<T>;

/** Chapters kept from a watch page or a description: more than any real video marks (YouTube's editor allows about 100). */
export const MAX_CHAPTERS = 500;
/** Transcript lines kept: a 24-hour stream captioned every 2 seconds. */
export const MAX_TRANSCRIPT_SEGMENTS = 50_000;
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
  const tracks = firstItems(arrayAt(list, 'captionTracks'), MAX_NESTED_ITEMS);
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
    found.push({
      language,
      name: textOf(objectAt(track, 'name')) ?? language,
      auto_generated: kind === 'asr' || vssId.startsWith('a.'),
      path,
      is_default: defaults.has(index),
      is_translatable: isObject(track) && track.isTranslatable === true,
    });
  });
  return found;
}

/** The languages YouTube translates the translatable tracks into (one list for the whole player). */
function translationLanguages(json: Json): TranslationLanguage[] {
  const found: TranslationLanguage[] = [];
  for (const entry of arrayAt(json, 'captions', 'playerCaptionsTracklistRenderer', 'translationLanguages')) {
    const language = stringAt(entry, 'languageCode');
    if (language) found.push({ language, name: textOf(objectAt(entry, 'languageName')) ?? language });
  }
  return found;
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/**
 * The date a watch page shows in English ("Aug 24, 2019", "24 Aug 2019", "Premiered Aug 24, 2019",
 * "Streamed live on …", "Started streaming on …") as YYYY-MM-DD; null for a relative text
 * ("Streamed live 3 hours ago") or anything else.
 */
export function shownDate(text: string | undefined): string | null {
  if (text === undefined) return null;
  const monthFirst = /\b([A-Za-z]{3})[a-z]*\.? (\d{1,2}), (\d{4})\b/.exec(text);
  const dayFirst = monthFirst ? null : /\b(\d{1,2}) ([A-Za-z]{3})[a-z]*\.? (\d{4})\b/.exec(text);
  const parts = monthFirst ? [monthFirst[1], monthFirst[2], monthFirst[3]] : dayFirst ? [dayFirst[2], dayFirst[1], dayFirst[3]] : null;
  if (!parts) return null;
  const [month, day, year] = parts;
  const index = MONTHS.indexOf(month.toLowerCase());
  const date = `${year}-${String(index + 1).padStart(2, '0')}-${day.padStart(2, '0')}`;
  if (index < 0) return null;
  // A real calendar day only (no 31 Feb, no 99 Aug).
  const time = Date.parse(`${date}T00:00:00Z`);
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(date) ? date : null;
}

/** The player's thumbnail list (all sizes, as sent); the standard one when the player lists none. */
function playerThumbnails(details: Json | undefined, micro: Json | undefined, id: string): Thumbnail[] {
  const fromDetails = arrayAt(details, 'thumbnail', 'thumbnails');
  const listed = firstItems(fromDetails.length > 0 ? fromDetails : arrayAt(micro, 'thumbnail', 'thumbnails'), MAX_NESTED_ITEMS);
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
    const { stamp, title } = chapterLine(line) ?? { stamp: undefined, title: '' };
    const start = clockSeconds(stamp);
    if (start === null || title.trim() === '') continue;
    chapters.push({ title: title.trim(), start_seconds: start });
  }
  if (chapters.length < 3 || chapters[0].start_seconds !== 0 || chapters.length > MAX_CHAPTERS) return [];
  for (let i = 1; i < chapters.length; i += 1) if (chapters[i].start_seconds <= chapters[i - 1].start_seconds) return [];
  return chapters;
}

/**
 * The publication time the player gives, in every place it has been seen: the player microformat's
 * `publishDate`, then its `uploadDate`, the page microformat's (`microformatDataRenderer`), and a
 * live stream's start.
 */
function publishedAt(json: Json): string | null {
  const player = objectAt(json, 'microformat', 'playerMicroformatRenderer');
  const page = objectAt(json, 'microformat', 'microformatDataRenderer');
  const candidates = [
    stringAt(player, 'publishDate'),
    stringAt(player, 'uploadDate'),
    stringAt(page, 'publishDate'),
    stringAt(page, 'uploadDate'),
    stringAt(player, 'liveBroadcastDetails', 'startTimestamp'),
  ];
  for (const candidate of candidates) {
    const date = isoDate(candidate);
    if (date) return date;
  }
  return null;
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
      keywords: firstItems(arrayAt(details, 'keywords'), MAX_NESTED_ITEMS).filter((k): k is string => typeof k === 'string'),
      category: stringAt(micro, 'category') ?? null,
      published_at: publishedAt(json),
      is_live: details?.isLive === true || liveDetails?.isLiveNow === true,
      is_family_safe: typeof micro?.isFamilySafe === 'boolean' ? micro.isFamilySafe : null,
      is_unlisted: typeof micro?.isUnlisted === 'boolean' ? micro.isUnlisted : null,
      thumbnails: playerThumbnails(details, micro, id),
      channel: { id: channelId, name: stringAt(details, 'author') ?? stringAt(micro, 'ownerChannelName') ?? null, url: channelId ? channelUrl(channelId) : null },
      tracks: captionTracks(json),
      translation_languages: translationLanguages(json),
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

function chaptersOfBar(list: unknown): Chapter[] {
  const chapters: Chapter[] = [];
  for (const chapter of firstItems(findAll(list, 'chapterRenderer'), MAX_CHAPTERS)) {
    const title = textOf(objectAt(chapter, 'title'));
    const start = rawInteger(chapter.timeRangeStartMillis);
    if (title !== undefined && start !== null) chapters.push({ title, start_seconds: Math.floor(start / 1000) });
  }
  return chapters;
}

/**
 * Chapters the watch page marks, in each generation: the player bar's markers map (the uploader's
 * `DESCRIPTION_CHAPTERS` before YouTube's `AUTO_CHAPTERS`), the older `chapteredPlayerBarRenderer`,
 * any other `chapterRenderer` of the player overlays; else a chapters panel's markers.
 */
function chaptersOfNext(json: Json): Chapter[] {
  const overlays = objectAt(json, 'playerOverlays');
  const markers = findAll(overlays, 'multiMarkersPlayerBarRenderer').flatMap((bar) => arrayAt(bar, 'markersMap'));
  for (const key of ['DESCRIPTION_CHAPTERS', 'AUTO_CHAPTERS']) {
    const entry = markers.find((marker) => stringAt(marker, 'key') === key);
    const chapters = chaptersOfBar(objectAt(entry, 'value'));
    if (chapters.length > 0) return chapters;
  }
  for (const bar of findAll(overlays, 'chapteredPlayerBarRenderer')) {
    const chapters = chaptersOfBar(arrayAt(bar, 'chapters'));
    if (chapters.length > 0) return chapters;
  }
  // Markers under another key (not the heat map, which holds no chapterRenderer).
  const fromBar = chaptersOfBar(overlays);
  if (fromBar.length > 0) return fromBar;
  for (const panel of findAll(json.engagementPanels, 'engagementPanelSectionListRenderer')) {
    const identifier = stringAt(panel, 'panelIdentifier') ?? stringAt(panel, 'targetId') ?? '';
    // Only a chapters panel (the uploader's, or YouTube's own chapters): "key moments" are not chapters.
    if (!/chapters/.test(identifier)) continue;
    const chapters: Chapter[] = [];
    for (const item of firstItems(findAll(panel, 'macroMarkersListItemRenderer'), MAX_CHAPTERS)) {
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
  const page = objectAt(json, 'microformat', 'microformatDataRenderer');
  const published = shownDate(textOf(objectAt(primary, 'dateText'))) ?? shownDate(textOf(objectAt(header, 'publishDate'))) ?? isoDate(stringAt(page, 'publishDate') ?? stringAt(page, 'uploadDate'));
  return {
    kind: 'ok',
    value: {
      like_count: likeCount(json),
      view_count: exactCount(viewText),
      comment_count: commentCount(json),
      chapters: chaptersOfNext(json),
      published_at: published,
      generation: primary ? 'primary-info' : 'description-header',
    },
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
    if (segments.length >= MAX_TRANSCRIPT_SEGMENTS) break;
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
  for (const match of elements(body, /<text\b/g, /<\/text>/g)) {
    matched = true;
    if (segments.length >= MAX_TRANSCRIPT_SEGMENTS) break;
    const start = Number(/\bstart="([\d.]+)"/.exec(match[1])?.[1]);
    const duration = Number(/\bdur="([\d.]+)"/.exec(match[1])?.[1] ?? 0);
    const text = cleanText(decodeEntities(decodeEntities(replaceTags(match[2], '', { nonEmpty: true }))));
    if (text !== '' && Number.isFinite(start)) segments.push({ start, duration: Number.isFinite(duration) ? duration : 0, text });
  }
  for (const match of elements(body, /<p\b/g, /<\/p>/g)) {
    matched = true;
    if (segments.length >= MAX_TRANSCRIPT_SEGMENTS) break;
    const start = Number(/\bt="(\d+)"/.exec(match[1])?.[1]);
    const duration = Number(/\bd="(\d+)"/.exec(match[1])?.[1] ?? 0);
    const text = cleanText(decodeEntities(replaceTags(match[2], '', { nonEmpty: true })));
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

const baseLanguage = (code: string) => code.toLowerCase().split('-')[0];

/** What a transcript request reads: a track, and the language YouTube translates it into (or none). */
export interface TranscriptPlan {
  track: CaptionTrack;
  translation: TranslationLanguage | null;
}

/**
 * The track to read and its translation, as youtube-transcript-api chooses them: the track in
 * `language` (see `chooseTrack`), else the original track (the default one, manual before
 * auto-generated). With `translateTo`, a track already in that language is read as it is; any
 * other is translated when YouTube offers it (the track is translatable and the language is in
 * the player's list: an exact code first, else the same base language). Null when there is no
 * track at all, or no such translation.
 */
export function planTranscript(tracks: CaptionTrack[], translations: TranslationLanguage[], language?: string, translateTo?: string): TranscriptPlan | null {
  const track = (language !== undefined ? chooseTrack(tracks, language) : null) ?? chooseTrack(tracks);
  if (!track) return null;
  if (translateTo === undefined || baseLanguage(track.language) === baseLanguage(translateTo)) return { track, translation: null };
  if (!track.is_translatable) return null;
  const wanted = translateTo.toLowerCase();
  const translation = translations.find((t) => t.language.toLowerCase() === wanted) ?? translations.find((t) => baseLanguage(t.language) === baseLanguage(wanted));
  return translation ? { track, translation } : null;
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

/** The duration badge on a thumbnail (`gridVideoRenderer` has no `lengthText`). */
function overlayDuration(renderer: Json): number | null {
  for (const overlay of findAll(arrayAt(renderer, 'thumbnailOverlays'), 'thumbnailOverlayTimeStatusRenderer')) {
    const seconds = clockSeconds(textOf(objectAt(overlay, 'text')));
    if (seconds !== null) return seconds;
  }
  return null;
}

/** Views from a count text; a live stream's "87 watching" counts viewers, not views. */
const viewsOf = (text: string | undefined) => (text !== undefined && /\bwatching\b/i.test(text) ? null : exactCount(text));

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
    duration_seconds: clockSeconds(textOf(objectAt(renderer, 'lengthText'))) ?? overlayDuration(renderer),
    view_count: viewsOf(textOf(objectAt(renderer, 'viewCountText'))),
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

/** What one page's walk collects: the items kept (up to the cap), how many known items it read, the kinds it did not know. */
interface ItemWalk<T extends SearchItem> {
  keep: (item: SearchItem) => item is T;
  results: CappedList<T>;
  known: number;
  unknown: Set<string>;
}

/**
 * Reads result items in document order into `walk.results` (those `keep` accepts) until it is
 * full: what is left of a longer answer is not read (issue 33). Kinds we do not know are noted,
 * except inside a shelf (`countUnknown` false).
 */
function readItems<T extends SearchItem>(items: unknown[], walk: ItemWalk<T>, countUnknown = true): void {
  for (const entry of items) {
    if (walk.results.full) return;
    if (!isObject(entry)) continue;
    const [kind, value] = Object.entries(entry)[0] ?? [];
    if (!kind || !isObject(value)) continue;
    let item: SearchItem | null = null;
    if (kind === 'itemSectionRenderer') {
      readItems(arrayAt(value, 'contents'), walk, countUnknown);
      continue;
    }
    if (kind === 'richItemRenderer' || kind === 'richSectionRenderer') {
      readItems([objectAt(value, 'content') ?? {}], walk, countUnknown);
      continue;
    }
    if (kind === 'gridRenderer') {
      readItems(arrayAt(value, 'items'), walk, countUnknown);
      continue;
    }
    if (kind === 'shelfRenderer') {
      readItems(arrayAt(value, 'content', 'verticalListRenderer', 'items'), walk, false);
      readItems(arrayAt(value, 'content', 'expandedShelfContentsRenderer', 'items'), walk, false);
      continue;
    }
    if (kind === 'videoRenderer' || kind === 'gridVideoRenderer') item = videoFromRenderer(value);
    else if (kind === 'lockupViewModel') item = itemFromLockup(value);
    else if (kind === 'channelRenderer') item = channelFromRenderer(value);
    else if (kind === 'playlistRenderer') item = playlistFromRenderer(value);
    else if (!NOT_RESULTS.has(kind) && countUnknown) walk.unknown.add(kind);
    if (item) {
      walk.known += 1;
      if (walk.keep(item)) walk.results.add(item);
    }
  }
}

/** One page of items, at most MAX_PAGE_ITEMS (YouTube's own pages hold 20 to 30). */
function itemPage<T extends SearchItem>(items: unknown[], keep: (item: SearchItem) => item is T, continuation: string | null): Outcome<ItemPage<T>> {
  const walk: ItemWalk<T> = { keep, results: new CappedList<T>(MAX_PAGE_ITEMS), known: 0, unknown: new Set() };
  readItems(items, walk);
  if (walk.known === 0 && walk.unknown.size > 0) return changed(`no known result among ${[...walk.unknown].join(', ')}`);
  return { kind: 'ok', value: { items: walk.results.items, continuation } };
}

const anyItem = (_item: SearchItem): _item is SearchItem => true;

/** The items of `items` (at most a page of them) and the kinds not known. */
function collectItems(items: unknown[]): { results: SearchItem[]; unknown: Set<string> } {
  const walk: ItemWalk<SearchItem> = { keep: anyItem, results: new CappedList<SearchItem>(MAX_PAGE_ITEMS), known: 0, unknown: new Set() };
  readItems(items, walk);
  return { results: walk.results.items, unknown: walk.unknown };
}
const videoItem = (item: SearchItem): item is VideoItem => item.type === 'video';

/** A search page: the first (two-column results) or a continuation. */
export function readSearch(json: Json): Outcome<ItemPage<SearchItem>> {
  const sections = objectAt(json, 'contents', 'twoColumnSearchResultsRenderer', 'primaryContents', 'sectionListRenderer');
  if (sections) {
    const contents = arrayAt(sections, 'contents');
    return itemPage(contents, anyItem, listContinuation(contents, sections));
  }
  const continuation = continuationItems(json);
  if (continuation.found) return itemPage(continuation.items, anyItem, listContinuation(continuation.items, undefined));
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
  const c4 = objectAt(json, 'header', 'c4TabbedHeaderRenderer');
  // The older header carries the id and name itself when the metadata is missing.
  const id = stringAt(meta, 'externalId') ?? stringAt(c4, 'channelId');
  if (!id || (!meta && !c4)) return null;
  const texts: string[] = [];
  const header = objectAt(json, 'header', 'pageHeaderRenderer', 'content', 'pageHeaderViewModel');
  if (header) texts.push(...metadataParts(header));
  if (c4) for (const key of ['channelHandleText', 'subscriberCountText', 'videosCountText']) {
    const text = textOf(objectAt(c4, key));
    if (text) texts.push(text);
  }
  const ownerUrl = arrayAt(meta, 'ownerUrls').find((u): u is string => typeof u === 'string' && u.includes('/@'));
  const canonical = stringAt(c4, 'navigationEndpoint', 'browseEndpoint', 'canonicalBaseUrl');
  const handle = texts.find((t) => t.startsWith('@')) ?? (ownerUrl ? decodeURIComponent(ownerUrl.slice(ownerUrl.indexOf('/@') + 1)) : canonical?.startsWith('/@') ? decodeURIComponent(canonical.slice(1)) : null);
  const subscribers = texts.find((t) => /subscribers?/i.test(t));
  const videos = texts.find((t) => /\bvideos?\b/i.test(t));
  const avatar = [...arrayAt(meta, 'avatar', 'thumbnails'), ...arrayAt(c4, 'avatar', 'thumbnails')].map((t) => stringAt(t, 'url')).find((u) => u !== undefined) ?? null;
  return {
    id,
    name: stringAt(meta, 'title') ?? textOf(objectAt(c4, 'title')) ?? '',
    handle,
    url: channelUrl(id),
    description: stringAt(meta, 'description') ?? '',
    subscriber_count: subscribers ? exactCount(subscribers) : null,
    video_count: videos ? exactCount(videos) : null,
    avatar_url: avatar,
  };
}

/** Whether a channel tab is its Videos tab: its title (we ask in English), URL or browse params ("videos"). */
function isVideosTab(tab: Json): boolean {
  return (
    textOf(tab.title) === 'Videos' ||
    /\/videos$/.test(stringAt(tab, 'endpoint', 'commandMetadata', 'webCommandMetadata', 'url') ?? '') ||
    (stringAt(tab, 'endpoint', 'browseEndpoint', 'params') ?? '').startsWith('EgZ2aWRlb3')
  );
}

/** A list's continuation: its trailing `continuationItemRenderer`, else the older `continuations` of its renderer. */
function listContinuation(items: unknown[], owner: Json | undefined): string | null {
  return continuationToken(items.filter((c) => isObject(c) && 'continuationItemRenderer' in c)) ?? continuationToken({ continuations: owner?.continuations });
}

/**
 * The uploads of a Videos tab, in the generations known: the rich grid (`richGridRenderer` of
 * `richItemRenderer`s holding `videoRenderer`s or `lockupViewModel`s) and the older grid
 * (`sectionListRenderer` → `itemSectionRenderer` → `gridRenderer` of `gridVideoRenderer`s). A tab
 * holding only a message ("This channel has no videos.") is empty; anything else is drift.
 */
function videosTab(content: Json | undefined): Outcome<ItemPage<VideoItem>> {
  const rich = objectAt(content, 'richGridRenderer');
  if (rich) {
    const contents = arrayAt(rich, 'contents');
    return itemPage(contents, videoItem, listContinuation(contents, rich));
  }
  const sections = arrayAt(content, 'sectionListRenderer', 'contents');
  if (sections.length > 0) {
    const entries = sections.flatMap((section) => arrayAt(section, 'itemSectionRenderer', 'contents'));
    const grids = entries.map((entry) => objectAt(entry, 'gridRenderer')).filter((grid): grid is Json => grid !== undefined);
    if (grids.length > 0) {
      const items = grids.flatMap((grid) => arrayAt(grid, 'items'));
      const continuation = grids.map((grid) => listContinuation(arrayAt(grid, 'items'), grid)).find((token) => token !== null) ?? listContinuation(sections, undefined);
      return itemPage(items, videoItem, continuation);
    }
    if (entries.length > 0 && entries.every((entry) => objectAt(entry, 'messageRenderer'))) return { kind: 'ok', value: { items: [], continuation: null } };
    // Videos straight in the section (no grid) are read; a section with none is not a tab we know.
    if (collectItems(entries).results.some(videoItem)) return itemPage(entries, videoItem, listContinuation(entries, undefined));
  }
  return changed(`Videos tab in an unknown layout (${Object.keys(content ?? {}).join(', ') || 'no content'})`);
}

/** A channel's Videos tab (first page): the channel and its newest uploads. */
export function readChannel(json: Json): Outcome<ChannelPage> {
  const alert = arrayAt(json, 'alerts').map((a) => objectAt(a, 'alertRenderer') ?? objectAt(a, 'alertWithButtonRenderer')).find((a) => stringAt(a, 'type') === 'ERROR');
  if (alert) return { kind: 'not_found', reason: textOf(objectAt(alert, 'text')) ?? 'channel unavailable' };
  const channel = channelInfo(json);
  if (!channel) return changed('browse answer without channelMetadataRenderer or c4TabbedHeaderRenderer');
  const tabs = arrayAt(json, 'contents', 'twoColumnBrowseResultsRenderer', 'tabs')
    .map((t) => objectAt(t, 'tabRenderer'))
    .filter((t): t is Json => t !== undefined);
  if (tabs.length === 0) return changed('channel page without tabs');
  const selected = tabs.find((t) => t.selected === true);
  if (!selected) return changed('channel page without a selected tab');
  if (!isVideosTab(selected)) {
    // A channel without uploads has no Videos tab: YouTube then shows Home. One that has the tab
    // but answered another is not a page we know.
    return tabs.some(isVideosTab) ? changed('the Videos tab was asked, another was answered') : { kind: 'ok', value: { channel, items: [], continuation: null } };
  }
  const page = videosTab(objectAt(selected, 'content'));
  return page.kind === 'ok' ? { kind: 'ok', value: { channel, ...page.value } } : page;
}

export const parseChannel = (response: UpstreamResponse): Outcome<ChannelPage> => withDocument(response, readChannel);

/** A later page of a list: the received actions' continuation items, or the older `continuationContents`. */
function continuationPage<T extends SearchItem>(json: Json, keep: (item: SearchItem) => item is T, what: string): Outcome<ItemPage<T>> {
  const continuation = continuationItems(json);
  if (continuation.found) return itemPage(continuation.items, keep, listContinuation(continuation.items, undefined));
  const legacy = legacyContinuation(json);
  if (legacy) return itemPage(legacy.items, keep, listContinuation(legacy.items, undefined) ?? legacy.next);
  return changed(`${what} continuation without continuation items`);
}

export function readChannelContinuation(json: Json): Outcome<ItemPage<VideoItem>> {
  return continuationPage(json, videoItem, 'channel');
}

export const parseChannelContinuation = (response: UpstreamResponse): Outcome<ItemPage<VideoItem>> => withDocument(response, readChannelContinuation);

// ---------------------------------------------------------------- playlists

export const playlistUrl = (id: string) => `https://www.youtube.com/playlist?list=${id}`;

/** A `playlistVideoRenderer`: a video with its position, its exact length and its "views • age" line. */
function playlistVideo(renderer: Json): PlaylistVideoItem | null {
  const video = videoFromRenderer(renderer);
  if (!video) return null;
  const info = arrayAt(renderer, 'videoInfo', 'runs').map((run) => stringAt(run, 'text') ?? '');
  const views = info.find((part) => /\bviews?\b/i.test(part));
  return {
    ...video,
    duration_seconds: rawInteger(renderer.lengthSeconds) ?? video.duration_seconds,
    view_count: video.view_count ?? (views ? exactCount(views) : null),
    published_text: video.published_text ?? info.find((part) => /\bago\b|^streamed\b|^premiered?\b/i.test(part.trim()))?.trim() ?? null,
    position: rawInteger(textOf(objectAt(renderer, 'index'))),
  };
}

/** A playlist's entries: `playlistVideoRenderer`s, or the video items the other lists hold. */
function playlistItems(items: unknown[], continuation: string | null): Outcome<ItemPage<PlaylistVideoItem>> {
  const videos: PlaylistVideoItem[] = [];
  const unknown = new Set<string>();
  let unreadable = 0;
  for (const entry of items) {
    if (videos.length >= MAX_PAGE_ITEMS) break;
    const renderer = objectAt(entry, 'playlistVideoRenderer');
    if (renderer) {
      const video = playlistVideo(renderer);
      if (video) videos.push(video);
      else unreadable += 1;
      continue;
    }
    const other = collectItems([entry]);
    videos.push(...other.results.filter(videoItem).map((item) => ({ ...item, position: null })));
    for (const kind of other.unknown) unknown.add(kind);
  }
  if (videos.length === 0 && (unreadable > 0 || unknown.size > 0)) return changed(`no known playlist entry among ${[...unknown].join(', ') || `${unreadable} entries without a video id`}`);
  return { kind: 'ok', value: { items: videos, continuation } };
}

/** The owner's run (a channel link) of a header, sidebar or view model. */
function ownerOf(...values: unknown[]): ChannelRefItem | null {
  for (const value of values) {
    const owner = runOwner(value);
    if (owner) return owner;
  }
  return null;
}

/**
 * The playlist itself, from the headers of each generation (`playlistHeaderRenderer`, the newer
 * `pageHeaderRenderer` view model), the sidebar and the metadata; null when none names it.
 */
function playlistInfo(json: Json, id: string): PlaylistInfo | null {
  const old = objectAt(json, 'header', 'playlistHeaderRenderer');
  const page = objectAt(json, 'header', 'pageHeaderRenderer');
  const model = objectAt(page, 'content', 'pageHeaderViewModel');
  const sidebar = arrayAt(json, 'sidebar', 'playlistSidebarRenderer', 'items');
  const primary = sidebar.map((item) => objectAt(item, 'playlistSidebarPrimaryInfoRenderer')).find((item) => item !== undefined);
  const secondary = sidebar.map((item) => objectAt(item, 'playlistSidebarSecondaryInfoRenderer')).find((item) => item !== undefined);
  const meta = objectAt(json, 'metadata', 'playlistMetadataRenderer');
  const micro = objectAt(json, 'microformat', 'microformatDataRenderer');
  const title =
    stringAt(meta, 'title') ?? textOf(objectAt(old, 'title')) ?? textOf(objectAt(model, 'title', 'dynamicTextViewModel', 'text')) ?? stringAt(page, 'pageTitle') ?? textOf(objectAt(primary, 'title')) ?? stringAt(micro, 'title');
  if (title === undefined) return null;
  const texts = [
    ...arrayAt(old, 'stats').map(textOf),
    textOf(objectAt(old, 'numVideosText')),
    textOf(objectAt(old, 'viewCountText')),
    ...(model ? metadataParts(model) : []),
    ...arrayAt(primary, 'stats').map(textOf),
  ].filter((text): text is string => text !== undefined);
  const videos = texts.find((t) => /\b(?:videos?|episodes?)\b/i.test(t));
  const views = texts.find((t) => /\bviews?\b/i.test(t));
  // The view model's "by <owner>" names the channel through a command run.
  const byline = findAll(model, 'avatarStackViewModel')[0];
  const ownerId = stringAt(findAll(byline, 'browseEndpoint')[0], 'browseId');
  const bylineOwner = ownerId ? { id: ownerId, name: textOf(objectAt(byline, 'text'))?.replace(/^by\s+/i, '') ?? null, url: channelUrl(ownerId) } : null;
  return {
    id,
    url: playlistUrl(id),
    title,
    description: stringAt(meta, 'description') ?? textOf(objectAt(old, 'descriptionText')) ?? textOf(objectAt(primary, 'description')) ?? textOf(objectAt(model, 'description', 'descriptionPreviewViewModel', 'description')) ?? stringAt(micro, 'description') ?? '',
    channel: ownerOf(objectAt(old, 'ownerText'), objectAt(secondary, 'videoOwner', 'videoOwnerRenderer', 'title')) ?? bylineOwner,
    video_count: videos ? exactCount(videos) : null,
    view_count: views ? exactCount(views) : null,
  };
}

/**
 * A playlist's first page (`browse` of `VL<id>`): the playlist and its first entries, in the
 * `playlistVideoListRenderer` of its tab (or a rich grid). An error alert is not found; a page
 * without a known list, or that names no playlist, is drift.
 */
export function readPlaylist(json: Json, id: string): Outcome<PlaylistPage> {
  const alert = arrayAt(json, 'alerts').map((a) => objectAt(a, 'alertRenderer') ?? objectAt(a, 'alertWithButtonRenderer')).find((a) => stringAt(a, 'type') === 'ERROR');
  if (alert) return { kind: 'not_found', reason: textOf(objectAt(alert, 'text')) ?? 'playlist unavailable' };
  const playlist = playlistInfo(json, id);
  if (!playlist) return changed('playlist page without a header or metadata');
  const tabs = arrayAt(json, 'contents', 'twoColumnBrowseResultsRenderer', 'tabs').map((t) => objectAt(t, 'tabRenderer')).filter((t): t is Json => t !== undefined);
  const content = objectAt(tabs.find((t) => t.selected === true) ?? tabs[0], 'content');
  const list = findAll(content, 'playlistVideoListRenderer')[0];
  if (list) {
    const contents = arrayAt(list, 'contents');
    const page = playlistItems(contents, listContinuation(contents, list));
    return page.kind === 'ok' ? { kind: 'ok', value: { playlist, ...page.value } } : page;
  }
  const rich = objectAt(content, 'richGridRenderer');
  if (rich) {
    const contents = arrayAt(rich, 'contents');
    const page = playlistItems(contents, listContinuation(contents, rich));
    return page.kind === 'ok' ? { kind: 'ok', value: { playlist, ...page.value } } : page;
  }
  // An empty playlist shows a message ("This playlist has no videos.") where the list would be.
  const entries = findAll(content, 'itemSectionRenderer').flatMap((section) => arrayAt(section, 'contents'));
  if (entries.length > 0 && entries.every((entry) => objectAt(entry, 'messageRenderer'))) return { kind: 'ok', value: { playlist, items: [], continuation: null } };
  return changed(`playlist page in an unknown layout (${Object.keys(content ?? {}).join(', ') || 'no content'})`);
}

export const parsePlaylist = (response: UpstreamResponse, id: string): Outcome<PlaylistPage> => withDocument(response, (json) => readPlaylist(json, id));

/** A later page of a playlist (received actions, or the older `playlistVideoListContinuation`). */
export function readPlaylistContinuation(json: Json): Outcome<ItemPage<PlaylistVideoItem>> {
  const continuation = continuationItems(json);
  if (continuation.found) return playlistItems(continuation.items, listContinuation(continuation.items, undefined));
  const legacy = legacyContinuation(json);
  if (legacy) return playlistItems(legacy.items, listContinuation(legacy.items, undefined) ?? legacy.next);
  return changed('playlist continuation without continuation items');
}

export const parsePlaylistContinuation = (response: UpstreamResponse): Outcome<ItemPage<PlaylistVideoItem>> => withDocument(response, readPlaylistContinuation);

// ---------------------------------------------------------------- comments

const isCommentSection = (section: Json | undefined) => stringAt(section, 'sectionIdentifier') === 'comment-item-section' || stringAt(section, 'targetId') === 'comments-section';

/**
 * The watch page's way into its comments: the comment section's continuation, under the video
 * or in the comments panel. A section holding only a message ("Comments are turned off") and a
 * live stream's chat in place of comments have none; a section or page we cannot place is drift.
 */
export function readCommentsEntry(json: Json): Outcome<CommentsEntry> {
  const results = arrayAt(json, 'contents', 'twoColumnWatchNextResults', 'results', 'results', 'contents');
  if (!objectAt(json, 'contents', 'twoColumnWatchNextResults')) return changed('watch page without twoColumnWatchNextResults');
  const panel = findAll(json.engagementPanels, 'engagementPanelSectionListRenderer').find(
    (p) => stringAt(p, 'panelIdentifier') === 'engagement-panel-comments-section' || stringAt(p, 'targetId') === 'engagement-panel-comments-section',
  );
  const sections = [...results.map((r) => objectAt(r, 'itemSectionRenderer')), ...findAll(objectAt(panel, 'content'), 'itemSectionRenderer')].filter(
    (s): s is Json => s !== undefined && isCommentSection(s),
  );
  const hasVideo = findAll(json, 'videoPrimaryInfoRenderer').length > 0 || findAll(json, 'videoDescriptionHeaderRenderer').length > 0 || sections.length > 0;
  if (!hasVideo) return { kind: 'ok', value: { continuation: null, hasVideo } };
  for (const section of sections) {
    const token = continuationToken(section);
    if (token) return { kind: 'ok', value: { continuation: token, hasVideo: true } };
  }
  const off = sections.some((section) => arrayAt(section, 'contents').some((entry) => objectAt(entry, 'messageRenderer')));
  const liveChat = objectAt(json, 'contents', 'twoColumnWatchNextResults', 'conversationBar', 'liveChatRenderer') !== undefined;
  if (off || (sections.length === 0 && liveChat)) return { kind: 'ok', value: { continuation: null, hasVideo: true } };
  return changed(sections.length === 0 ? 'watch page without a comment section' : 'comment section in an unknown layout');
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
  const received = continuationItems(json);
  // The older answer: `continuationContents.itemSectionContinuation` with its own `continuations`.
  const legacy = received.found ? null : legacyContinuation(json);
  if (!received.found && !legacy) return changed('comments answer without continuation items');
  // Its header (the sort menu) is the section's `header`, not an item.
  const legacyHeader = objectAt(json, 'continuationContents', 'itemSectionContinuation', 'header');
  const continuation = { items: legacy ? [...(legacyHeader ? [legacyHeader] : []), ...legacy.items] : received.items };
  const entities = new Map<string, Json>();
  for (const mutation of arrayAt(json, 'frameworkUpdates', 'entityBatchUpdate', 'mutations')) {
    const key = stringAt(mutation, 'entityKey');
    const payload = objectAt(mutation, 'payload');
    if (key && payload) entities.set(key, payload);
  }
  const comments: Comment[] = [];
  let unreadable = 0;
  const unknown = new Set<string>();
  let next: string | null = legacy?.next ?? null;
  for (const item of continuation.items) {
    const thread = objectAt(item, 'commentThreadRenderer');
    // A full page reads no more comments (issue 33), but still finds the continuation, which comes last.
    const full = comments.length >= MAX_PAGE_ITEMS;
    if (thread && full) continue;
    if (thread) {
      const model = objectAt(thread, 'commentViewModel', 'commentViewModel');
      const renderer = objectAt(thread, 'comment', 'commentRenderer');
      const comment = model ? commentFromViewModel(model, entities) : renderer ? commentFromRenderer(renderer) : null;
      if (comment) comments.push(comment);
      else unreadable += 1;
      continue;
    }
    const loose = objectAt(item, 'commentViewModel') ?? objectAt(item, 'commentRenderer');
    if (loose && full) continue;
    if (loose) {
      const comment = 'commentKey' in loose ? commentFromViewModel(loose, entities) : commentFromRenderer(loose);
      if (comment) comments.push(comment);
      else unreadable += 1;
      continue;
    }
    const more = objectAt(item, 'continuationItemRenderer');
    if (more) next = continuationToken({ continuationItemRenderer: more }) ?? next;
    else if (isObject(item) && !objectAt(item, 'commentsHeaderRenderer')) unknown.add(Object.keys(item)[0] ?? 'an empty item');
  }
  if (comments.length === 0 && unreadable > 0) return changed(`${unreadable} comment threads in an unknown layout`);
  // Items of a kind we do not know and no comment: a generation no parser reads, not "no comments".
  if (comments.length === 0 && unknown.size > 0) return changed(`comments only in unknown items (${[...unknown].join(', ')})`);
  return { kind: 'ok', value: { items: comments, continuation: next, sorts: sortTokens(continuation.items) } };
}

export const parseComments = (response: UpstreamResponse): Outcome<CommentPage> => withDocument(response, readComments);
