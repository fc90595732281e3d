/**
 * Reddit's upstream operations as adapter pairs (request builder + parser), on the paths Reddit
 * serves: with an app-only token, `https://oauth.reddit.com/<path>`; without, the public
 * `https://www.reddit.com/<path>.json`. Every request names the service in its User-Agent and
 * asks for `raw_json=1` (strings unescaped). Pure: the token is added by the client's auth
 * interceptor (client.ts), never by an adapter.
 */
import type { Adapter, UpstreamRequest } from '../kit/types.ts';
import { trimTrailing } from '../../core/text.ts';
import {
  parseCommentContext,
  parseCommentLocation,
  parsePostPage,
  parseSubredditAbout,
  parseThread,
  parseToken,
  parseUser,
} from './parse.ts';
import type { CommentLocation, ForumCommentAnswer, ForumThread, ForumUser, ListingParams, PostPage, SearchParams, UserParams } from './types.ts';

export const DEFAULT_USER_AGENT = 'server:gleaner:0.1.0 (forum endpoints of the gleaner scraping API)';

/** How one request reaches Reddit. */
export interface RedditAccess {
  /** Through the OAuth API (the token is added by the client's auth interceptor); false: an anonymous `.json` request. */
  oauth: boolean;
  userAgent: string;
}

/** An adapter's parameters: the operation's own, plus how to reach Reddit. */
export type WithAccess<P> = P & { access: RedditAccess };

type Query = Record<string, string | number | undefined>;

/** A GET of `path` on the base URL, in the anonymous `.json` form when there is no token. */
export function redditGet(baseUrl: string, path: string, query: Query, access: RedditAccess): UpstreamRequest {
  const url = new URL(`${trimTrailing(baseUrl, '/')}${path}${access.oauth ? '' : '.json'}`);
  url.searchParams.set('raw_json', '1');
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
  return { url: url.toString(), method: 'GET', headers: { 'User-Agent': access.userAgent, Accept: 'application/json' } };
}

/** `t=` only means something to the sorts that rank over a time window. */
const TIMED_SORTS = new Set(['top', 'controversial']);

export const listingAdapter: Adapter<WithAccess<ListingParams>, PostPage> = {
  upstream: 'reddit',
  operation: 'listing',
  buildRequest: (p, { baseUrl }) =>
    redditGet(
      baseUrl,
      `/r/${encodeURIComponent(p.subreddit).replace(/%2B/g, '+')}/${p.sort}`,
      { limit: p.limit, t: TIMED_SORTS.has(p.sort) ? p.timeRange : undefined, after: p.after },
      p.access,
    ),
  parse: (response) => parsePostPage(response),
};

export const searchAdapter: Adapter<WithAccess<SearchParams>, PostPage> = {
  upstream: 'reddit',
  operation: 'search',
  buildRequest: (p, { baseUrl }) =>
    redditGet(
      baseUrl,
      p.subreddit ? `/r/${encodeURIComponent(p.subreddit).replace(/%2B/g, '+')}/search` : '/search',
      { q: p.query, sort: p.sort, t: p.timeRange, limit: p.limit, after: p.after, restrict_sr: p.subreddit ? 1 : undefined, type: 'link' },
      p.access,
    ),
  parse: (response) => parsePostPage(response),
};

export const subredditAboutAdapter: Adapter<WithAccess<{ subreddit: string }>, { name: string }> = {
  upstream: 'reddit',
  operation: 'subreddit_about',
  buildRequest: (p, { baseUrl }) => redditGet(baseUrl, `/r/${encodeURIComponent(p.subreddit)}/about`, {}, p.access),
  parse: (response) => parseSubredditAbout(response),
};

export const threadAdapter: Adapter<WithAccess<{ postId: string }>, ForumThread> = {
  upstream: 'reddit',
  operation: 'thread',
  buildRequest: (p, { baseUrl }) => redditGet(baseUrl, `/comments/${p.postId}`, {}, p.access),
  parse: (response) => parseThread(response),
};

export const commentInfoAdapter: Adapter<WithAccess<{ commentId: string }>, CommentLocation> = {
  upstream: 'reddit',
  operation: 'comment_info',
  buildRequest: (p, { baseUrl }) => redditGet(baseUrl, '/api/info', { id: `t1_${p.commentId}` }, p.access),
  parse: (response) => parseCommentLocation(response),
};

export const commentContextAdapter: Adapter<WithAccess<{ postId: string; commentId: string }>, ForumCommentAnswer> = {
  upstream: 'reddit',
  operation: 'comment_context',
  buildRequest: (p, { baseUrl }) => redditGet(baseUrl, `/comments/${p.postId}/_/${p.commentId}`, {}, p.access),
  parse: (response, p) => parseCommentContext(response, p.commentId),
};

export const userAboutAdapter: Adapter<WithAccess<{ username: string }>, ForumUser> = {
  upstream: 'reddit',
  operation: 'user_about',
  buildRequest: (p, { baseUrl }) => redditGet(baseUrl, `/user/${encodeURIComponent(p.username)}/about`, {}, p.access),
  parse: (response) => parseUser(response),
};

export const userSubmittedAdapter: Adapter<WithAccess<UserParams>, PostPage> = {
  upstream: 'reddit',
  operation: 'user_submitted',
  buildRequest: (p, { baseUrl }) => redditGet(baseUrl, `/user/${encodeURIComponent(p.username)}/submitted`, { limit: 25, after: p.after }, p.access),
  parse: (response) => parsePostPage(response),
};

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
}

/** The app-only token request: `client_credentials` with HTTP Basic auth (Reddit's OAuth2 "application only" flow). */
export const tokenAdapter: Adapter<ClientCredentials & { userAgent: string }, { accessToken: string; expiresInSeconds: number }> = {
  upstream: 'reddit',
  operation: 'access_token',
  // Asking for a token twice is harmless.
  idempotent: true,
  buildRequest: (p, { baseUrl }) => ({
    url: `${trimTrailing(baseUrl, '/')}/api/v1/access_token`,
    method: 'POST',
    headers: {
      Authorization: `Basic ${Buffer.from(`${p.clientId}:${p.clientSecret}`).toString('base64')}`,
      'Content-Type': 'application/x-www-form-urlencoded',
      'User-Agent': p.userAgent,
      Accept: 'application/json',
    },
    body: 'grant_type=client_credentials',
  }),
  parse: (response) => parseToken(response),
};
