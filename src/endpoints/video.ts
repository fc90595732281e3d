/**
 * The six video (YouTube) endpoints (docs/video.md): a video's details, its transcript, search,
 * a channel's uploads, a playlist's entries and a video's comments, read from InnerTube. Search,
 * channel, playlist and comments page with opaque tokens bound to the query, channel, playlist or
 * video (and order) they came from.
 * 404 (not found, private, removed, age-restricted, region-blocked) and 502 are free.
 */
import { httpErrors, type FieldErrors } from '../core/errors.ts';
import { custom, isBlank, max, oneOf, parsed, prohibits, required, requiredWithout, string, url } from '../validation/rules.ts';
import { defineEndpoint, type HandlerServices } from '../pipeline/endpoint.ts';
import {
  COMMENT_SORTS,
  SEARCH_SORTS,
  SEARCH_TYPES,
  channelHandle,
  channelIdOrNull,
  channelRefFromUrl,
  channelScopeKey,
  playlistId,
  playlistIdFromUrl,
  videoId,
  videoIdFromUrl,
  type ChannelRef,
  type Comment,
  type PlaylistVideoItem,
  type SearchItem,
  type Video,
  type VideoItem,
} from '../adapters/video/index.ts';
import { settle } from './outcomes.ts';

export const VIDEO_MESSAGES = {
  videoUrl: 'The url must be a YouTube video URL.',
  videoId: 'The id must be an 11-character YouTube video id.',
  channelUrl: 'The url must be a YouTube channel URL (/channel/UC…, /@handle, /c/name or /user/name).',
  channelHandle: 'The handle must be a YouTube handle such as @name.',
  channelId: 'The id must be a YouTube channel id (UC followed by 22 characters).',
  language: 'The language must be a language code such as en or pt-BR.',
  translateTo: 'The translate to must be a language code such as en or pt-BR.',
  playlistUrl: 'The url must be a YouTube playlist URL (with list=PL…, UU… or OLAK5uy_…).',
  playlistId: 'The id must be a YouTube playlist id (PL…, UU…, OLAK5uy_…).',
  channelRequired: 'The url field is required when none of handle / id are present.',
  invalidToken: 'The next page token is invalid.',
  otherScope: (what: string) => `The next page token does not belong to this ${what}.`,
} as const;

/** A BCP 47 language code as sent (`en`, `pt-BR`), trimmed; null otherwise. */
const languageCode = (v: unknown) => (typeof v === 'string' && /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*$/.test(v.trim()) ? v.trim() : null);

const videoFields = {
  url: {
    rules: [requiredWithout('id'), string(), url(), parsed('video_url', (v) => (typeof v === 'string' ? videoIdFromUrl(v) : null), VIDEO_MESSAGES.videoUrl)],
    description: 'Any YouTube video URL: watch?v=, youtu.be/, shorts/, live/, embed/, on www., m., music. or the bare domain.',
    example: 'https://www.youtube.com/watch?v=jNQXAC9IVRw',
  },
  id: {
    rules: [parsed('video_id', videoId, VIDEO_MESSAGES.videoId, { describe: (s) => Object.assign(s, { type: 'string', pattern: '^[A-Za-z0-9_-]{11}$' }) }), prohibits('url')],
    description: 'The 11-character video id.',
  },
} as const;

const tokenField = { rules: [string()], description: "From the previous answer's pagination: the next page, for the same request." } as const;

/** A video's id from `url` or `id` as sent (null when neither reads as one: already reported). */
function videoIdOf(input: Record<string, unknown>): string | null {
  if (typeof input.url === 'string' && !isBlank(input.url)) return videoIdFromUrl(input.url);
  return videoId(input.id);
}

function channelRefOf(input: Record<string, unknown>): ChannelRef | null {
  if (typeof input.url === 'string' && !isBlank(input.url)) return channelRefFromUrl(input.url);
  if (typeof input.handle === 'string' && !isBlank(input.handle)) {
    const handle = channelHandle(input.handle);
    return handle ? { kind: 'path', path: `/${handle}` } : null;
  }
  const id = channelIdOrNull(input.id);
  return id ? { kind: 'id', id } : null;
}

const searchScope = (query: string, type: string | undefined, sort: string) => `video-search:${type ?? 'any'}:${sort}:${query}`;
const channelScope = (ref: ChannelRef) => `video-channel:${channelScopeKey(ref)}`;
const commentsScope = (id: string, sort: string) => `video-comments:${sort}:${id}`;
const playlistScope = (id: string) => `video-playlist:${id}`;

/** A playlist's id from `url` or `id` as sent (null when neither reads as one: already reported). */
function playlistIdOf(input: Record<string, unknown>): string | null {
  if (typeof input.url === 'string' && !isBlank(input.url)) return playlistIdFromUrl(input.url);
  return playlistId(input.id);
}

const sentToken = (input: Record<string, unknown>): string | null =>
  typeof input.next_page_token === 'string' && input.next_page_token.trim() !== '' ? input.next_page_token.trim() : null;

/** A token must be ours and be for this scope; `scope` is null when its own fields failed (already reported). */
async function checkToken(input: Record<string, unknown>, services: HandlerServices, scope: string | null, what: string, errors: FieldErrors): Promise<void> {
  const token = sentToken(input);
  if (token === null || scope === null || errors.next_page_token) return;
  const check = await services.capabilities.video().pageTokens.verify(token, scope, 'next');
  if (!check.ok) (errors.next_page_token ??= []).push(check.reason === 'other_scope' ? VIDEO_MESSAGES.otherScope(what) : VIDEO_MESSAGES.invalidToken);
}

/** The continuation inside a token the validation accepted. */
async function continuationOf(input: Record<string, unknown>, services: HandlerServices, scope: string): Promise<string | undefined> {
  const token = sentToken(input);
  if (token === null) return undefined;
  const check = await services.capabilities.video().pageTokens.verify(token, scope, 'next');
  if (!check.ok) throw httpErrors.fieldInvalid('next_page_token', VIDEO_MESSAGES.invalidToken);
  return check.cursor;
}

async function pagination(services: HandlerServices, page: { items: unknown[]; continuation: string | null }, scope: string) {
  // An empty page ends the list even when YouTube offers another continuation.
  if (page.items.length === 0 || page.continuation === null) return { next_page_token: null };
  return { next_page_token: await services.capabilities.video().pageTokens.sign(page.continuation, scope, 'next') };
}

const CHANNEL_REF = { id: 'UC4QobU6STFB0P71PMvOGN5A', name: 'jawed', url: 'https://www.youtube.com/channel/UC4QobU6STFB0P71PMvOGN5A' };

const EXAMPLE_VIDEO: Video = {
  id: 'jNQXAC9IVRw',
  url: 'https://www.youtube.com/watch?v=jNQXAC9IVRw',
  title: 'Me at the zoo',
  description: 'The first video on YouTube…',
  channel: CHANNEL_REF,
  published_at: '2005-04-24T03:31:52.000000Z',
  duration_seconds: 19,
  view_count: 348123456,
  like_count: 17654321,
  comment_count: 10234567,
  keywords: ['me at the zoo', 'jawed karim'],
  category: 'Film & Animation',
  is_live: false,
  thumbnails: [
    { url: 'https://i.ytimg.com/vi/jNQXAC9IVRw/hqdefault.jpg', width: 480, height: 360 },
    { url: 'https://i.ytimg.com/vi/jNQXAC9IVRw/maxresdefault.jpg', width: 1280, height: 720 },
  ],
  chapters: [],
  captions: [{ language: 'en', name: 'English', auto_generated: false }],
  is_family_safe: true,
  is_unlisted: false,
};

const EXAMPLE_ITEM: VideoItem = {
  type: 'video',
  id: 'jNQXAC9IVRw',
  url: 'https://www.youtube.com/watch?v=jNQXAC9IVRw',
  title: 'Me at the zoo',
  channel: CHANNEL_REF,
  duration_seconds: 19,
  view_count: 348123456,
  published_text: '19 years ago',
  description_snippet: null,
  thumbnail_url: 'https://i.ytimg.com/vi/jNQXAC9IVRw/hqdefault.jpg',
  is_live: false,
};

const EXAMPLE_COMMENT: Comment = {
  id: 'UgwSOM0QHBLysE3vZE54AaABAg',
  text: 'First!',
  author: { name: '@someone', channel_id: 'UCsXVk37bltHxD1rDPwtNM8Q' },
  like_count: 12,
  reply_count: 3,
  published_text: '2 years ago',
  is_pinned: false,
  is_hearted: false,
  author_is_channel_owner: false,
};

const ERRORS = [403, 404, 502];

export const videoEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/video',
  summary: 'One video',
  description: ({ credits }) =>
    `A YouTube video's details by URL or id (send exactly one): title, description, channel, duration, exact view, like and comment counts (null when YouTube shows only a rounded figure), keywords, thumbnails, chapters and caption tracks. Costs ${credits('video')}; a private, removed, age-restricted or region-blocked video (404) and an upstream failure (502) are free.`,
  tag: 'Video',
  input: 'body',
  schema: { fields: videoFields },
  billing: { product: 'scraping', operation: 'video' },
  history: true,
  success: { status: 200, description: 'The video.', example: { response: EXAMPLE_VIDEO } },
  errors: ERRORS,
  async handler({ input, services, upstream }) {
    const id = input.url !== undefined ? input.url : input.id;
    return { body: { response: settle(await services.capabilities.video().client.video(id, upstream)) } };
  },
});

export const videoTranscriptEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/video/transcript',
  summary: "A video's transcript",
  description: ({ credits }) =>
    `The captions of a video as timed segments and one joined text: the track in \`language\` when the video has one (a manual track before an auto-generated one), else the video's original track (its default one, manual before auto-generated). With \`translate_to\`, that track translated by YouTube (as its player offers). Costs ${credits('video_transcript')}; no transcript at all, a translation YouTube does not offer, and an unavailable video answer 404; 404 and 502 are free.`,
  tag: 'Video',
  input: 'body',
  schema: {
    fields: {
      ...videoFields,
      language: {
        rules: [string(), parsed('language', languageCode, VIDEO_MESSAGES.language)],
        description: "A BCP 47 language code (`en`, `pt-BR`); `en` also matches `en-GB`. A video without a track in that language gives its original track (`language` in the answer says which).",
        example: 'en',
      },
      translate_to: {
        rules: [string(), parsed('translate_to', languageCode, VIDEO_MESSAGES.translateTo)],
        description: "Translate the track into this language, as YouTube's player does (`tlang`): when the track is translatable and YouTube offers the language. A track already in that language is given as it is.",
        example: 'de',
      },
    },
  },
  billing: { product: 'scraping', operation: 'video_transcript' },
  history: true,
  success: {
    status: 200,
    description: 'The transcript.',
    example: {
      response: {
        id: 'jNQXAC9IVRw',
        language: 'en',
        name: 'English',
        auto_generated: false,
        translated_from: null,
        segments: [{ start: 1.2, duration: 2.16, text: 'All right, so here we are in front of the elephants' }],
        text: 'All right, so here we are in front of the elephants',
        available_languages: [{ language: 'en', name: 'English', auto_generated: false }],
      },
    },
  },
  errors: ERRORS,
  async handler({ input, services, upstream }) {
    const id = input.url !== undefined ? input.url : input.id;
    return { body: { response: settle(await services.capabilities.video().client.transcript(id, input.language, input.translate_to, upstream)) } };
  },
});

export const videoSearchEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/video/search',
  summary: 'Search videos',
  description: ({ credits }) =>
    `YouTube search, one page at a time (about 20 results). \`type\` keeps one kind of result (video, channel or playlist); \`sort\` orders them. No match is an empty page (200). Costs ${credits('video_search')}; 502 is free.`,
  tag: 'Video',
  input: 'body',
  schema: {
    fields: {
      query: { rules: [required(), string(), max(200)], example: 'me at the zoo' },
      type: { rules: [string(), oneOf(SEARCH_TYPES)], description: 'Only this kind of result; all kinds when absent.' },
      sort: { rules: [string(), oneOf(SEARCH_SORTS)], default: 'relevance' },
      next_page_token: tokenField,
    },
  },
  async afterValidation({ input, services }, errors) {
    if (errors.query || errors.type || errors.sort || typeof input.query !== 'string') return;
    const sort = typeof input.sort === 'string' && input.sort !== '' ? input.sort : 'relevance';
    const type = typeof input.type === 'string' && input.type !== '' ? input.type : undefined;
    await checkToken(input, services, searchScope(input.query, type, sort), 'query', errors);
  },
  billing: { product: 'scraping', operation: 'video_search' },
  history: true,
  success: { status: 200, description: 'One page of results and the token of the next.', example: { response: [EXAMPLE_ITEM], pagination: { next_page_token: 'eyJjIjoi…' } } },
  errors: [403, 502],
  async handler({ input, services, upstream }) {
    const scope = searchScope(input.query, input.type, input.sort);
    const continuation = await continuationOf(input, services, scope);
    const page = settle(await services.capabilities.video().client.search(input.query, input.type, input.sort, continuation, upstream));
    const response: SearchItem[] = page.items;
    return { body: { response, pagination: await pagination(services, page, scope) } };
  },
});

export const videoChannelEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/video/channel',
  summary: "A channel's videos",
  description: ({ credits }) =>
    `A YouTube channel by URL, @handle or id (send exactly one): the channel (with its subscriber and video counts, null when YouTube shows only a rounded figure) and its uploads, newest first, one page at a time; every page carries the channel. Costs ${credits('video_channel')}; an unknown or removed channel (404) and 502 are free.`,
  tag: 'Video',
  input: 'body',
  schema: {
    fields: {
      url: {
        rules: [
          custom('required_without_all', (value, context) => !isBlank(value) || !isBlank(context.input.handle) || !isBlank(context.input.id), VIDEO_MESSAGES.channelRequired, { implicit: true, needsValid: false }),
          string(),
          url(),
          parsed('channel_url', (v) => (typeof v === 'string' ? channelRefFromUrl(v) : null), VIDEO_MESSAGES.channelUrl),
          prohibits('handle'),
          prohibits('id'),
        ],
        description: 'A channel URL: /channel/UC…, /@handle, /c/name or /user/name, with any tab after it.',
        example: 'https://www.youtube.com/@creativecommons',
      },
      handle: { rules: [string(), parsed('channel_handle', channelHandle, VIDEO_MESSAGES.channelHandle), prohibits('id')], description: 'With or without @.', example: '@creativecommons' },
      id: { rules: [string(), parsed('channel_id', channelIdOrNull, VIDEO_MESSAGES.channelId)], description: 'The channel id: UC and 22 characters.', example: 'UCTwECeGqMZee77BjdoYtI2Q' },
      next_page_token: tokenField,
    },
  },
  async afterValidation({ input, services }, errors) {
    if (errors.url || errors.handle || errors.id) return;
    const ref = channelRefOf(input);
    await checkToken(input, services, ref ? channelScope(ref) : null, 'channel', errors);
  },
  billing: { product: 'scraping', operation: 'video_channel' },
  history: true,
  success: {
    status: 200,
    description: 'The channel and one page of its videos.',
    example: {
      response: {
        channel: { id: 'UC4QobU6STFB0P71PMvOGN5A', name: 'jawed', handle: '@jawed', url: 'https://www.youtube.com/channel/UC4QobU6STFB0P71PMvOGN5A', description: '', subscriber_count: null, video_count: 1, avatar_url: 'https://yt3.googleusercontent.com/…' },
        videos: [EXAMPLE_ITEM],
      },
      pagination: { next_page_token: null },
    },
  },
  errors: ERRORS,
  async handler({ input, services, upstream }) {
    // The rules handed over what they read: a reference from the URL, `@name` from the handle.
    const ref: ChannelRef | null = input.url ?? (input.handle !== undefined ? { kind: 'path', path: `/${input.handle}` } : input.id !== undefined ? { kind: 'id', id: input.id } : null);
    if (!ref) throw httpErrors.fieldInvalid('url', VIDEO_MESSAGES.channelRequired);
    const scope = channelScope(ref);
    const continuation = await continuationOf(input, services, scope);
    const client = services.capabilities.video().client;
    if (continuation !== undefined) {
      // Every page carries the channel (§11): read alongside the next page of videos.
      const [first, more] = await Promise.all([client.channel(ref, upstream), client.channelMore(continuation, upstream)]);
      const page = settle(more);
      return { body: { response: { channel: settle(first).channel, videos: page.items }, pagination: await pagination(services, page, scope) } };
    }
    const page = settle(await client.channel(ref, upstream));
    return { body: { response: { channel: page.channel, videos: page.items }, pagination: await pagination(services, page, scope) } };
  },
});

const EXAMPLE_PLAYLIST_VIDEO: PlaylistVideoItem = { ...EXAMPLE_ITEM, position: 1 };

export const videoPlaylistEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/video/playlist',
  summary: "A playlist's videos",
  description: ({ credits }) =>
    `A YouTube playlist by URL (any with \`list=\`) or id (send exactly one): the playlist (title, description, owner, exact video and view counts or null) and its videos in order, one page at a time (up to 100); every page carries the playlist. Costs ${credits('video_playlist')}; an unknown, private or removed playlist (404) and 502 are free.`,
  tag: 'Video',
  input: 'body',
  schema: {
    fields: {
      url: {
        rules: [requiredWithout('id'), string(), url(), parsed('playlist_url', (v) => (typeof v === 'string' ? playlistIdFromUrl(v) : null), VIDEO_MESSAGES.playlistUrl)],
        description: 'A YouTube URL with the playlist in `list=`: /playlist?list=…, a watch URL inside the playlist, youtu.be/…?list=….',
        example: 'https://www.youtube.com/playlist?list=PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE',
      },
      id: {
        rules: [parsed('playlist_id', playlistId, VIDEO_MESSAGES.playlistId, { describe: (s) => Object.assign(s, { type: 'string', pattern: '^(?:PL|UU|OLAK5uy_|EC|FL|LL|PU|UL|TL)[A-Za-z0-9_-]{10,64}$' }) }), prohibits('url')],
        description: 'The playlist id (PL…, a channel\'s uploads UU…, an album OLAK5uy_…). Mixes (RD…) have no pages and are refused.',
      },
      next_page_token: tokenField,
    },
  },
  async afterValidation({ input, services }, errors) {
    if (errors.url || errors.id) return;
    const id = playlistIdOf(input);
    await checkToken(input, services, id ? playlistScope(id) : null, 'playlist', errors);
  },
  billing: { product: 'scraping', operation: 'video_playlist' },
  history: true,
  success: {
    status: 200,
    description: 'The playlist and one page of its videos.',
    example: {
      response: {
        playlist: {
          id: 'PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE',
          url: 'https://www.youtube.com/playlist?list=PLbH1eKIlLs3ab6VRa0TkbQAUehmIAQCPE',
          title: 'Licensing basics',
          description: '',
          channel: CHANNEL_REF,
          video_count: 42,
          view_count: 1234,
        },
        videos: [EXAMPLE_PLAYLIST_VIDEO],
      },
      pagination: { next_page_token: 'eyJjIjoi…' },
    },
  },
  errors: ERRORS,
  async handler({ input, services, upstream }) {
    // The rules handed over the id, read from the URL or as sent.
    const id = input.url !== undefined ? input.url : input.id;
    const scope = playlistScope(id);
    const continuation = await continuationOf(input, services, scope);
    const client = services.capabilities.video().client;
    if (continuation !== undefined) {
      // Every page carries the playlist: read alongside the next page of videos.
      const [first, more] = await Promise.all([client.playlist(id, upstream), client.playlistMore(continuation, upstream)]);
      const page = settle(more);
      return { body: { response: { playlist: settle(first).playlist, videos: page.items }, pagination: await pagination(services, page, scope) } };
    }
    const page = settle(await client.playlist(id, upstream));
    return { body: { response: { playlist: page.playlist, videos: page.items }, pagination: await pagination(services, page, scope) } };
  },
});

export const videoCommentsEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/video/comments',
  summary: "A video's comments",
  description: ({ credits }) =>
    `Top-level comments of a video by URL or id (send exactly one), \`top\` (YouTube's order) or \`newest\` first, one page at a time (about 20). Comments turned off is an empty page (200). Costs ${credits('video_comments')}; an unavailable video (404) and 502 are free.`,
  tag: 'Video',
  input: 'body',
  schema: { fields: { ...videoFields, sort: { rules: [string(), oneOf(COMMENT_SORTS)], default: 'top' }, next_page_token: tokenField } },
  async afterValidation({ input, services }, errors) {
    if (errors.url || errors.id || errors.sort) return;
    const id = videoIdOf(input);
    const sort = typeof input.sort === 'string' && input.sort !== '' ? input.sort : 'top';
    await checkToken(input, services, id ? commentsScope(id, sort) : null, 'video and sort order', errors);
  },
  billing: { product: 'scraping', operation: 'video_comments' },
  history: true,
  success: { status: 200, description: 'One page of comments and the token of the next.', example: { response: [EXAMPLE_COMMENT], pagination: { next_page_token: 'eyJjIjoi…' } } },
  errors: ERRORS,
  async handler({ input, services, upstream }) {
    const id = input.url !== undefined ? input.url : input.id;
    const scope = commentsScope(id, input.sort);
    const continuation = await continuationOf(input, services, scope);
    const page = settle(await services.capabilities.video().client.comments(id, input.sort, continuation, upstream));
    return { body: { response: page.items, pagination: await pagination(services, page, scope) } };
  },
});

export const VIDEO_ENDPOINTS = [videoEndpoint, videoTranscriptEndpoint, videoSearchEndpoint, videoChannelEndpoint, videoPlaylistEndpoint, videoCommentsEndpoint];
