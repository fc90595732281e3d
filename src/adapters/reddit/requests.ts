/**
 * Reddit's upstream operations as adapter pairs (request builder + parser), on the paths Reddit
 * serves: with an app-only token, `https://oauth.reddit.com/<path>`; without, the public
 * `https://www.reddit.com/<path>.json`. Every request names the service in its User-Agent and
 * asks for `raw_json=1` (strings unescaped). Pure: the token is added by the client's auth
 * interceptor (client.ts), never by an adapter.
 */
import type { Adapter, ParseOutcome, UpstreamRequest, UpstreamResponse } from '../kit/types.ts';
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

/**
 * One GET of Reddit's API as an adapter: `request` gives the path and query string of the
 * parameters (the `.json` form and the access are `redditGet`'s), `parse` reads the answer.
 */
function redditAdapter<P, T>(operation: string, request: (p: P) => { path: string; query?: Query }, parse: (response: UpstreamResponse, p: WithAccess<P>) => ParseOutcome<T>): Adapter<WithAccess<P>, T> {
  return {
    upstream: 'reddit',
    operation,
    buildRequest: (p, { baseUrl }) => {
      const { path, query } = request(p);
      return redditGet(baseUrl, path, query ?? {}, p.access);
    },
    parse,
  };
}

/** `/r/<name>`, a `+` between combined subreddits kept as it is. */
const subredditPath = (name: string) => `/r/${encodeURIComponent(name).replace(/%2B/g, '+')}`;

/** `t=` only means something to the sorts that rank over a time window. */
const TIMED_SORTS = new Set(['top', 'controversial']);

export const listingAdapter = redditAdapter<ListingParams, PostPage>(
  'listing',
  (p) => ({ path: `${subredditPath(p.subreddit)}/${p.sort}`, query: { limit: p.limit, t: TIMED_SORTS.has(p.sort) ? p.timeRange : undefined, after: p.after } }),
  parsePostPage,
);

export const searchAdapter = redditAdapter<SearchParams, PostPage>(
  'search',
  (p) => ({
    path: p.subreddit ? `${subredditPath(p.subreddit)}/search` : '/search',
    query: { q: p.query, sort: p.sort, t: p.timeRange, limit: p.limit, after: p.after, restrict_sr: p.subreddit ? 1 : undefined, type: 'link' },
  }),
  parsePostPage,
);

export const subredditAboutAdapter = redditAdapter<{ subreddit: string }, { name: string }>('subreddit_about', (p) => ({ path: `/r/${encodeURIComponent(p.subreddit)}/about` }), parseSubredditAbout);

export const threadAdapter = redditAdapter<{ postId: string }, ForumThread>('thread', (p) => ({ path: `/comments/${p.postId}` }), parseThread);

export const commentInfoAdapter = redditAdapter<{ commentId: string }, CommentLocation>('comment_info', (p) => ({ path: '/api/info', query: { id: `t1_${p.commentId}` } }), parseCommentLocation);

export const commentContextAdapter = redditAdapter<{ postId: string; commentId: string }, ForumCommentAnswer>(
  'comment_context',
  (p) => ({ path: `/comments/${p.postId}/_/${p.commentId}` }),
  (response, p) => parseCommentContext(response, p.commentId),
);

export const userAboutAdapter = redditAdapter<{ username: string }, ForumUser>('user_about', (p) => ({ path: `/user/${encodeURIComponent(p.username)}/about` }), parseUser);

export const userSubmittedAdapter = redditAdapter<UserParams, PostPage>(
  'user_submitted',
  (p) => ({ path: `/user/${encodeURIComponent(p.username)}/submitted`, query: { limit: 25, after: p.after } }),
  parsePostPage,
);

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
