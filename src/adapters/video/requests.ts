/** The video (YouTube) operations as pure request/parse pairs on the upstream runtime. */
import type { Adapter } from '../kit/types.ts';
import { YOUTUBE_DEFAULT_URL, innertubeRequest } from './innertube.ts';
import {
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
} from './parse.ts';
import type { ChannelPage, CommentPage, CommentsEntry, ItemPage, NextInfo, PlayerInfo, PlaylistPage, PlaylistVideoItem, SearchItem, TranscriptSegment, VideoItem } from './types.ts';

const UPSTREAM = 'youtube';
// InnerTube reads are POSTs that change nothing: safe to send twice.
const common = { upstream: UPSTREAM, baseUrl: YOUTUBE_DEFAULT_URL, idempotent: true } as const;

export const SEARCH_TYPES = ['video', 'channel', 'playlist'] as const;
export const SEARCH_SORTS = ['relevance', 'date', 'views', 'rating'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];
export type SearchSort = (typeof SEARCH_SORTS)[number];
export const COMMENT_SORTS = ['top', 'newest'] as const;
export type CommentSort = (typeof COMMENT_SORTS)[number];

/**
 * The search filter, as the web client encodes it: a protobuf with the sort order (field 1) and
 * a filters message (field 2) whose field 2 is the result type.
 */
export function searchParams(type?: SearchType, sort: SearchSort = 'relevance'): string | undefined {
  const sortCode = { relevance: 0, rating: 1, date: 2, views: 3 }[sort];
  const bytes: number[] = [];
  if (sortCode > 0) bytes.push(0x08, sortCode);
  if (type !== undefined) bytes.push(0x12, 0x02, 0x10, { video: 1, channel: 2, playlist: 3 }[type]);
  return bytes.length === 0 ? undefined : Buffer.from(bytes).toString('base64');
}

/** The Videos tab of a channel page. */
export const VIDEOS_TAB_PARAMS = 'EgZ2aWRlb3PyBgQKAjoA';

export const playerAdapter: Adapter<{ videoId: string }, PlayerInfo> = {
  ...common,
  operation: 'player',
  buildRequest: ({ videoId }, { baseUrl }) => innertubeRequest(baseUrl, 'player', { videoId, contentCheckOk: true, racyCheckOk: true }),
  parse: (response, { videoId }) => parsePlayer(response, videoId),
};

export const nextAdapter: Adapter<{ videoId: string }, NextInfo> = {
  ...common,
  operation: 'next',
  buildRequest: ({ videoId }, { baseUrl }) => innertubeRequest(baseUrl, 'next', { videoId }),
  parse: (response) => parseNext(response),
};

export const commentsEntryAdapter: Adapter<{ videoId: string }, CommentsEntry> = {
  ...common,
  operation: 'next',
  buildRequest: ({ videoId }, { baseUrl }) => innertubeRequest(baseUrl, 'next', { videoId }),
  parse: (response) => parseCommentsEntry(response),
};

export const commentsAdapter: Adapter<{ continuation: string }, CommentPage> = {
  ...common,
  operation: 'comments',
  buildRequest: ({ continuation }, { baseUrl }) => innertubeRequest(baseUrl, 'next', { continuation }),
  parse: (response) => parseComments(response),
};

/**
 * A caption track: its path and query on the configured base, asking for the json3 form, and
 * for YouTube's translation into `translateTo` (`tlang`) when given.
 */
export const timedTextAdapter: Adapter<{ path: string; translateTo?: string }, TranscriptSegment[]> = {
  ...common,
  operation: 'timedtext',
  buildRequest: ({ path, translateTo }, { baseUrl }) => {
    // Relative to the base, so a base URL with a path prefix keeps it (as the InnerTube calls do).
    const url = new URL(path.replace(/^\/+/, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    url.searchParams.set('fmt', 'json3');
    if (translateTo !== undefined) url.searchParams.set('tlang', translateTo);
    return { url: url.toString(), method: 'GET', headers: { accept: 'application/json', 'accept-language': 'en-US,en;q=0.9', cookie: 'SOCS=CAI' } };
  },
  parse: (response) => parseTimedText(response),
};

export const searchAdapter: Adapter<{ query: string; type?: SearchType; sort?: SearchSort } | { continuation: string }, ItemPage<SearchItem>> = {
  ...common,
  operation: 'search',
  buildRequest: (params, { baseUrl }) =>
    'continuation' in params
      ? innertubeRequest(baseUrl, 'search', { continuation: params.continuation })
      : innertubeRequest(baseUrl, 'search', { query: params.query, ...(searchParams(params.type, params.sort) ? { params: searchParams(params.type, params.sort) } : {}) }),
  parse: (response) => parseSearch(response),
};

export const resolveChannelAdapter: Adapter<{ path: string }, string> = {
  ...common,
  operation: 'resolve_url',
  buildRequest: ({ path }, { baseUrl }) => innertubeRequest(baseUrl, 'navigation/resolve_url', { url: `https://www.youtube.com${path}` }),
  parse: (response) => parseResolvedChannel(response),
};

export const channelAdapter: Adapter<{ channelId: string }, ChannelPage> = {
  ...common,
  operation: 'browse',
  buildRequest: ({ channelId }, { baseUrl }) => innertubeRequest(baseUrl, 'browse', { browseId: channelId, params: VIDEOS_TAB_PARAMS }),
  parse: (response) => parseChannel(response),
};

export const channelContinuationAdapter: Adapter<{ continuation: string }, ItemPage<VideoItem>> = {
  ...common,
  operation: 'browse',
  buildRequest: ({ continuation }, { baseUrl }) => innertubeRequest(baseUrl, 'browse', { continuation }),
  parse: (response) => parseChannelContinuation(response),
};

/** A playlist's page: `browse` of `VL` + its id. */
export const playlistAdapter: Adapter<{ playlistId: string }, PlaylistPage> = {
  ...common,
  operation: 'browse',
  buildRequest: ({ playlistId }, { baseUrl }) => innertubeRequest(baseUrl, 'browse', { browseId: `VL${playlistId}` }),
  parse: (response, { playlistId }) => parsePlaylist(response, playlistId),
};

export const playlistContinuationAdapter: Adapter<{ continuation: string }, ItemPage<PlaylistVideoItem>> = {
  ...common,
  operation: 'browse',
  buildRequest: ({ continuation }, { baseUrl }) => innertubeRequest(baseUrl, 'browse', { continuation }),
  parse: (response) => parsePlaylistContinuation(response),
};
