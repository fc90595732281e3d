/**
 * Pure readers of X's GraphQL answers: the post item and user mappings (both schema generations),
 * and what an answer says about the session that asked (rate-limited, refused) or about the
 * upstream (an HTML block page, a changed query id, GraphQL errors without data).
 *
 * Generations: until 2025 a user's fields sat under `legacy` (`screen_name`, `followers_count`...).
 * The 2026 schema leaves `legacy` absent or null and moves them to `core` (`screen_name`, `name`,
 * `created_at`), `avatar`, `profile_bio`, `relationship_counts`, `tweet_counts`, `privacy` and
 * `verification`. Both are read, field by field, so a half-migrated answer reads too.
 */
import { jsonOrUndefined } from '../kit/decode.ts';
import { headerValue } from '../kit/decode.ts';
import { firstItems, MAX_NESTED_ITEMS } from '../kit/limits.ts';
import { decodeEntities } from '../kit/html.ts';
import type { ParseOutcome, UpstreamResponse } from '../kit/types.ts';
import type { MicroblogUser, PostItem, PostMedia } from './types.ts';
import { elements, replaceTags } from '../../core/text.ts';

type Json = Record<string, any>;

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const MONTHS: Record<string, string> = {
  Jan: '01', Feb: '02', Mar: '03', Apr: '04', May: '05', Jun: '06', Jul: '07', Aug: '08', Sep: '09', Oct: '10', Nov: '11', Dec: '12',
};

/**
 * X's `Sat Dec 14 04:35:55 +0000 2013` (or an ISO date, as the embed source gives) as the
 * service's ISO 8601 with microseconds and Z; null when absent or unreadable.
 */
export function isoTimestamp(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const twitter = /^\w{3} (\w{3}) (\d{2}) (\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2}) (\d{4})$/.exec(value.trim());
  let millis: number;
  if (twitter) {
    const [, month, day, hh, mm, ss, sign, offH, offM, year] = twitter;
    if (!MONTHS[month]) return null;
    millis = Date.parse(`${year}-${MONTHS[month]}-${day}T${hh}:${mm}:${ss}${sign}${offH}:${offM}`);
  } else {
    millis = Date.parse(value);
  }
  if (Number.isNaN(millis)) return null;
  return new Date(millis).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The client name out of `<a href="…" rel="nofollow">Twitter Web App</a>`; null when there is none. */
export function sourceName(source: unknown): string | null {
  if (typeof source !== 'string' || source.trim() === '') return null;
  const [anchor] = elements(source, /<a\b/gi, /<\/a>/gi);
  const text = decodeEntities(replaceTags(anchor ? anchor[2] : source, '')).trim();
  return text === '' ? null : text;
}

/** `views.count` is a decimal string; null when X shows no count. */
export function viewCount(views: unknown): number | null {
  const count = isRecord(views) ? views.count : undefined;
  if (typeof count === 'number' && Number.isSafeInteger(count)) return count;
  if (typeof count === 'string' && /^\d+$/.test(count) && Number.isSafeInteger(Number(count))) return Number(count);
  return null;
}

const count = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** The highest-bitrate mp4 of a video's variants (`video_info.variants`); null when it has none. */
export function bestMp4(variants: unknown): string | null {
  if (!Array.isArray(variants)) return null;
  let best: { url: string; bitrate: number } | null = null;
  for (const variant of variants) {
    if (!isRecord(variant) || variant.content_type !== 'video/mp4' || typeof variant.url !== 'string') continue;
    const bitrate = typeof variant.bitrate === 'number' ? variant.bitrate : 0;
    if (!best || bitrate > best.bitrate) best = { url: variant.url, bitrate };
  }
  return best?.url ?? null;
}

const MEDIA_TYPES = new Set(['photo', 'video', 'animated_gif']);

/** `extended_entities.media` in upstream order (the embed source's `mediaDetails` has the same shape). */
export function mediaItems(media: unknown): PostMedia[] {
  if (!Array.isArray(media)) return [];
  return firstItems(media, MAX_NESTED_ITEMS).flatMap((item): PostMedia[] => {
    if (!isRecord(item) || !MEDIA_TYPES.has(item.type) || typeof item.media_url_https !== 'string') return [];
    return [{ type: item.type, image_url: item.media_url_https, video_url: item.type === 'photo' ? null : bestMp4(item.video_info?.variants) }];
  });
}

/** A user's names and id, from either generation. */
export function userIdentity(user: unknown): { id: string; username: string; name: string } | null {
  if (!isRecord(user)) return null;
  const legacy = isRecord(user.legacy) ? user.legacy : {};
  const core = isRecord(user.core) ? user.core : {};
  const username = core.screen_name ?? legacy.screen_name;
  const id = user.rest_id ?? legacy.id_str;
  if (typeof username !== 'string' || typeof id !== 'string') return null;
  const name = core.name ?? legacy.name;
  return { id, username, name: typeof name === 'string' ? name : username };
}

/** The tweet inside a `TweetWithVisibilityResults` (a limited-visibility wrapper), or the result itself. */
export function unwrapTweet(result: unknown): Json | null {
  if (!isRecord(result)) return null;
  if (result.__typename === 'TweetWithVisibilityResults') return isRecord(result.tweet) ? result.tweet : null;
  return result;
}

/** Tombstones (deleted, withheld) and unavailable posts (protected, suspended author). */
export function isGoneTweet(result: unknown): boolean {
  return isRecord(result) && (result.__typename === 'TweetTombstone' || result.__typename === 'TweetUnavailable');
}

/** A GraphQL tweet result as the post item; null for a tombstone or a result without a post. */
export function mapTweet(result: unknown): PostItem | null {
  const tweet = unwrapTweet(result);
  if (!tweet || isGoneTweet(tweet) || !isRecord(tweet.legacy)) return null;
  const legacy = tweet.legacy;
  const author = userIdentity(tweet.core?.user_results?.result);
  const id = typeof tweet.rest_id === 'string' ? tweet.rest_id : legacy.id_str;
  if (!author || typeof id !== 'string') return null;
  const note = tweet.note_tweet?.note_tweet_results?.result?.text;
  const text = typeof note === 'string' ? note : legacy.full_text;
  if (typeof text !== 'string') return null;
  return {
    id,
    tweet_url: `https://x.com/${author.username}/status/${id}`,
    text,
    like_count: count(legacy.favorite_count) ?? 0,
    view_count: viewCount(tweet.views),
    source: sourceName(tweet.source ?? legacy.source),
    sensitive: legacy.possibly_sensitive === true,
    media: mediaItems(legacy.extended_entities?.media),
    created_at: isoTimestamp(legacy.created_at),
    author,
    reply_count: count(legacy.reply_count),
    retweet_count: count(legacy.retweet_count),
    quote_count: count(legacy.quote_count),
    lang: typeof legacy.lang === 'string' ? legacy.lang : null,
  };
}

/** A GraphQL user result as the `/v1/mb/user` object; null when it is not a readable user. */
export function mapUser(result: unknown): MicroblogUser | null {
  if (!isRecord(result) || result.__typename === 'UserUnavailable') return null;
  const identity = userIdentity(result);
  if (!identity) return null;
  const legacy = isRecord(result.legacy) ? result.legacy : {};
  const core = isRecord(result.core) ? result.core : {};
  const description = legacy.description ?? result.profile_bio?.description;
  return {
    id: identity.id,
    username: identity.username,
    name: identity.name,
    description: typeof description === 'string' ? description : '',
    followers_count: count(legacy.followers_count) ?? count(result.relationship_counts?.followers) ?? 0,
    following_count: count(legacy.friends_count) ?? count(result.relationship_counts?.following) ?? 0,
    posts_count: count(legacy.statuses_count) ?? count(result.tweet_counts?.tweets) ?? 0,
    verified: result.is_blue_verified === true || legacy.verified === true || result.verification?.verified === true,
    created_at: isoTimestamp(core.created_at ?? legacy.created_at),
    profile_image_url: (result.avatar?.image_url ?? legacy.profile_image_url_https ?? null) as string | null,
    protected: (legacy.protected ?? result.privacy?.protected) === true,
  };
}

// ---------------------------------------------------------------------------------------------
// Reading an answer

/** What an answer says about the session that sent the request. */
export type SessionSignal =
  /** 429 or error code 88: this session may not run this operation until its window resets. */
  | { kind: 'rate_limited'; resetAt: number | null }
  /** 401, 403, code 32 (bad authentication), 326 (locked), 239 (bad guest token). */
  | { kind: 'refused'; status: number; code: number | null };

const REFUSAL_CODES = new Set([32, 64, 139, 239, 326]);

function errorCodes(body: unknown): number[] {
  if (!isRecord(body) || !Array.isArray(body.errors)) return [];
  return body.errors.flatMap((error: unknown) => (isRecord(error) && typeof error.code === 'number' ? [error.code] : []));
}

function hasData(body: Json): boolean {
  return isRecord(body.data) && Object.keys(body.data).length > 0;
}


/** `x-rate-limit-reset` (epoch seconds) in milliseconds, or null. */
export function rateLimitReset(response: UpstreamResponse): number | null {
  const reset = Number(headerValue(response.headers, 'x-rate-limit-reset'));
  return Number.isFinite(reset) && reset > 0 ? reset * 1000 : null;
}

/** True when the session has used up this operation's window (`x-rate-limit-remaining: 0`). */
export function windowExhausted(response: UpstreamResponse): boolean {
  return headerValue(response.headers, 'x-rate-limit-remaining')?.trim() === '0';
}

export function sessionSignal(response: UpstreamResponse): SessionSignal | null {
  const body = jsonOrUndefined(response.body);
  const codes = isRecord(body) && !hasData(body) ? errorCodes(body) : [];
  if (response.status === 429 || codes.includes(88)) return { kind: 'rate_limited', resetAt: rateLimitReset(response) };
  if (response.status === 401 || response.status === 403) return { kind: 'refused', status: response.status, code: codes.find((c) => REFUSAL_CODES.has(c)) ?? null };
  const refusal = codes.find((c) => REFUSAL_CODES.has(c));
  if (refusal !== undefined) return { kind: 'refused', status: response.status, code: refusal };
  return null;
}

function looksLikeHtml(response: UpstreamResponse): boolean {
  const type = headerValue(response.headers, 'content-type') ?? '';
  return /html/i.test(type) || /^\s*</.test(response.body);
}

/**
 * The `data` of a GraphQL answer, or why there is none. HTML (a Cloudflare or block page) is
 * `blocked`; a 404 with an empty body (X's answer to an unknown query id), unreadable JSON and
 * `errors` without data are `changed`.
 */
export function graphqlData(response: UpstreamResponse): ParseOutcome<Json> {
  if (response.status === 404 && response.body.trim() === '') return { kind: 'changed', reason: '404 with an empty body: the query id may have changed' };
  if (looksLikeHtml(response)) return { kind: 'blocked', reason: `an HTML page with status ${response.status} (a block or challenge page)` };
  if (response.status === 429) return { kind: 'blocked', reason: 'rate-limited (429)' };
  const body = jsonOrUndefined(response.body);
  if (!isRecord(body)) return { kind: 'changed', reason: `an answer that is not a JSON object (status ${response.status})` };
  if (!hasData(body)) {
    const messages = Array.isArray(body.errors) ? body.errors.map((e: unknown) => (isRecord(e) ? `${e.code ?? ''} ${e.message ?? ''}`.trim() : '')).join('; ') : '';
    if (errorCodes(body).includes(88)) return { kind: 'blocked', reason: 'rate-limited (code 88)' };
    if (messages) return { kind: 'changed', reason: `GraphQL errors without data: ${messages}` };
    if (response.status >= 200 && response.status < 300 && isRecord(body.data)) return { kind: 'ok', value: body.data };
    return { kind: 'changed', reason: `no data (status ${response.status})` };
  }
  if (response.status < 200 || response.status >= 300) return { kind: 'blocked', reason: `status ${response.status}` };
  return { kind: 'ok', value: body.data };
}

/** TweetResultByRestId → the post item; a tombstone, an unavailable or an absent post → not_found. */
export function parseTweetResult(response: UpstreamResponse): ParseOutcome<PostItem> {
  const data = graphqlData(response);
  if (data.kind !== 'ok') return data;
  const result = data.value.tweetResult?.result;
  if (!isRecord(result) || Object.keys(result).length === 0) return { kind: 'not_found', reason: 'no such post' };
  const tweet = unwrapTweet(result);
  if (!tweet || isGoneTweet(tweet)) return { kind: 'not_found', reason: `post ${tweet?.__typename ?? 'missing'}` };
  const item = mapTweet(tweet);
  return item ? { kind: 'ok', value: item } : { kind: 'changed', reason: 'a post without the fields the mapping needs' };
}

/** UserByScreenName → the user; an unknown or suspended (`UserUnavailable`) account → not_found. */
export function parseUserResult(response: UpstreamResponse): ParseOutcome<MicroblogUser> {
  const data = graphqlData(response);
  if (data.kind !== 'ok') return data;
  const result = data.value.user?.result;
  if (!isRecord(result) || Object.keys(result).length === 0) return { kind: 'not_found', reason: 'no such user' };
  if (result.__typename === 'UserUnavailable') return { kind: 'not_found', reason: `user unavailable: ${result.reason ?? 'suspended'}` };
  const user = mapUser(result);
  return user ? { kind: 'ok', value: user } : { kind: 'changed', reason: 'a user without the fields the mapping needs' };
}
