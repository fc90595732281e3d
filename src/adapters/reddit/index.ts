/**
 * Public entry of the forum (Reddit) adapter behind /v1/forum*, and the reading of its settings:
 * REDDIT_CLIENT_ID / REDDIT_CLIENT_SECRET (both or neither), REDDIT_USER_AGENT,
 * UPSTREAM_REDDIT_URL, UPSTREAM_REDDIT_AUTH_URL, REDDIT_TIMEOUT_MS.
 */
import type { Capability } from '../../core/capability.ts';
import { ConfigError } from '../../core/env.ts';
import type { UpstreamRuntime } from '../kit/runtime.ts';
import { ForumClient } from './client.ts';
import { DEFAULT_USER_AGENT, type ClientCredentials } from './requests.ts';

export { ForumClient } from './client.ts';
export type { ForumOutcome, ListingAnswer, SearchAnswer, UserAnswer } from './client.ts';
export { bareId, commentIdsFromUrl, isFullname, postIdFromUrl, subredditName, userName } from './ids.ts';
export { DEFAULT_USER_AGENT } from './requests.ts';
export { FORUM_TIME_RANGES, LISTING_SORTS, SEARCH_SORTS } from './types.ts';
export type { ForumComment, ForumCommentAnswer, ForumPost, ForumThread, ForumUser, PostPage } from './types.ts';

/** With credentials, the OAuth API host; without, the public site's `.json` pages. */
export const DEFAULT_OAUTH_URL = 'https://oauth.reddit.com';
export const DEFAULT_PUBLIC_URL = 'https://www.reddit.com';
export const DEFAULT_AUTH_URL = 'https://www.reddit.com';

export interface ForumSettings {
  credentials?: ClientCredentials;
  baseUrl: string;
  authUrl: string;
  userAgent: string;
  timeoutMs: number;
}

export interface ForumDeps {
  runtime: UpstreamRuntime;
}

export const forumCapability: Capability<ForumSettings, ForumClient, ForumDeps> = {
  name: 'forum',
  settings(env) {
    const clientId = env.text('REDDIT_CLIENT_ID');
    const clientSecret = env.text('REDDIT_CLIENT_SECRET');
    // One without the other is a typo or a half-done deployment: say so rather than go anonymous.
    if (clientId && !clientSecret) throw new ConfigError('REDDIT_CLIENT_SECRET must be set when REDDIT_CLIENT_ID is.', 'REDDIT_CLIENT_SECRET');
    if (clientSecret && !clientId) throw new ConfigError('REDDIT_CLIENT_ID must be set when REDDIT_CLIENT_SECRET is.', 'REDDIT_CLIENT_ID');
    const credentials = clientId && clientSecret ? { clientId, clientSecret } : undefined;
    return {
      credentials,
      baseUrl: env.url('UPSTREAM_REDDIT_URL') ?? (credentials ? DEFAULT_OAUTH_URL : DEFAULT_PUBLIC_URL),
      authUrl: env.url('UPSTREAM_REDDIT_AUTH_URL') ?? DEFAULT_AUTH_URL,
      userAgent: env.text('REDDIT_USER_AGENT') ?? DEFAULT_USER_AGENT,
      timeoutMs: env.positiveInteger('REDDIT_TIMEOUT_MS') ?? 15_000,
    };
  },
  start: (settings, deps) => new ForumClient({ ...settings, runtime: deps.runtime }),
  // Nothing to close: connections belong to the outbound client.
  close: async () => {},
};
