/**
 * The five microblog (X) endpoints (docs/spec/contract.md §5 "Microblog", docs/microblog.md):
 * a post by URL or id (GraphQL with a guest token, or the public embed source), search and a
 * user's posts with opaque page tokens, and a user's profile. Search, user and user-tweets need
 * logged-in sessions (X_ACCOUNTS); without them they answer 503, uncharged.
 */
import { httpErrors, type FieldErrors } from '../core/errors.ts';
import { max, oneOf, parsed, prohibits, required, requiredWithout, string, url } from '../validation/rules.ts';
import { defineEndpoint, type EndpointContext, type HandlerServices, type PriceText } from '../pipeline/endpoint.ts';
import { SEARCH_PRODUCTS, searchScope, userScope, type CallContext, type MicroblogUser, type PageDirection, type PostItem, type TimelinePage, type XClient, type XResult } from '../adapters/x/index.ts';
import { settle } from './outcomes.ts';
import { xPostId, xPostIdFromUrl, xUsername } from '../adapters/x/ids.ts';

export const MICROBLOG_MESSAGES = {
  postUrl: 'The url must be a link to a post on x.com.',
  postId: 'The id must be a post id (digits only).',
  username: 'The username must be an X username (1 to 15 letters, digits or underscores).',
  invalidToken: (field: string) => `The ${field.replace(/_/g, ' ')} is invalid.`,
  otherScope: (field: string, what: 'query' | 'user') => `The ${field.replace(/_/g, ' ')} does not belong to this ${what}.`,
} as const;

/**
 * A post by URL or id, exactly one: neither is "The url field is required when id is not
 * present.", both is "The id field prohibits url from being present.". Either way the handler
 * gets the post id.
 */
const postFields = {
  url: {
    rules: [requiredWithout('id'), string(), url(), parsed('post_url', (v) => (typeof v === 'string' ? xPostIdFromUrl(v) : null), MICROBLOG_MESSAGES.postUrl)],
    example: 'https://x.com/XDevelopers/status/2019881223666233717',
  },
  id: {
    rules: [parsed('post_id', xPostId, MICROBLOG_MESSAGES.postId, { describe: (s) => Object.assign(s, { type: 'string', pattern: '^\\d{1,20}$' }) }), prohibits('url')],
    description: 'The post id; send it as a string (ids exceed JSON numbers).',
  },
} as const;

/** The handler gets the username without its `@`. */
const usernameField = {
  rules: [required(), string(), parsed('username', (v) => (typeof v === 'string' ? xUsername(v) : null), MICROBLOG_MESSAGES.username)],
  example: 'XDevelopers',
  description: 'The screen name, with or without @.',
} as const;

/** One token at most: both is "The next page token field prohibits previous page token from being present.". */
const tokenFields = {
  next_page_token: { rules: [string(), prohibits('previous_page_token')], description: 'From the previous answer\'s pagination: the next (older) page.' },
  previous_page_token: { rules: [string()], description: 'From the previous answer\'s pagination: the previous (newer) page.' },
} as const;

/** The token sent, if any: which field, and its direction. */
function sentToken(input: Record<string, unknown>): { field: 'next_page_token' | 'previous_page_token'; direction: PageDirection; token: string } | null {
  if (typeof input.next_page_token === 'string' && input.next_page_token.trim() !== '') return { field: 'next_page_token', direction: 'next', token: input.next_page_token.trim() };
  if (typeof input.previous_page_token === 'string' && input.previous_page_token.trim() !== '') return { field: 'previous_page_token', direction: 'previous', token: input.previous_page_token.trim() };
  return null;
}

/**
 * Token rules, after the schema's (which allow one token at most): signed by this service, for
 * this query or user. `scope` is null when the field it is built from is itself invalid (already
 * reported); a token field the schema refused is not checked further.
 */
async function checkTokens(input: Record<string, unknown>, services: HandlerServices, scope: string | null, what: 'query' | 'user', errors: FieldErrors): Promise<void> {
  const sent = sentToken(input);
  if (!sent || scope === null || errors[sent.field]) return;
  const check = await services.capabilities.microblog().pageTokens.verify(sent.token, scope, sent.direction);
  if (!check.ok) (errors[sent.field] ??= []).push(check.reason === 'other_scope' ? MICROBLOG_MESSAGES.otherScope(sent.field, what) : MICROBLOG_MESSAGES.invalidToken(sent.field));
}

/** The cursor of a token the validation accepted. */
async function cursorOf(input: Record<string, unknown>, services: HandlerServices, scope: string): Promise<{ cursor?: string; paging: boolean }> {
  const sent = sentToken(input);
  if (!sent) return { paging: false };
  const check = await services.capabilities.microblog().pageTokens.verify(sent.token, scope, sent.direction);
  if (!check.ok) throw httpErrors.fieldInvalid(sent.field, MICROBLOG_MESSAGES.invalidToken(sent.field));
  return { cursor: check.cursor, paging: true };
}

/**
 * The pagination object: `next` reads older posts (X's bottom cursor), `previous` newer ones (the
 * top cursor). An empty page ends the list (null); the first page has no previous page.
 */
async function pagination(services: HandlerServices, page: TimelinePage, scope: string, paging: boolean) {
  const tokens = services.capabilities.microblog().pageTokens;
  const hasPosts = page.posts.length > 0;
  return {
    next_page_token: hasPosts && page.cursors.bottom ? await tokens.sign(page.cursors.bottom, scope, 'next') : null,
    previous_page_token: hasPosts && paging && page.cursors.top ? await tokens.sign(page.cursors.top, scope, 'previous') : null,
  };
}

/** The rows that read as a logged-in user: unavailable (503, before any hold) without X_ACCOUNTS. */
const hasSessions = (services: HandlerServices): boolean => services.capabilities.microblog().client.hasSessions;

const callContext = (context: EndpointContext<unknown>) => context.upstream;

const EXAMPLE_POST: PostItem = {
  id: '2019881223666233717',
  tweet_url: 'https://x.com/XDevelopers/status/2019881223666233717',
  text: 'Officially launching X API Pay-Per-Use…',
  like_count: 5569,
  view_count: 2525462,
  source: 'Twitter Web App',
  sensitive: false,
  media: [{ type: 'video', image_url: 'https://pbs.twimg.com/ext_tw_video_thumb/1/pu/img/a.jpg', video_url: 'https://video.twimg.com/ext_tw_video/1/pu/vid/1280x720/a.mp4' }],
  created_at: '2026-02-06T21:09:45.000000Z',
  author: { id: '2244994945', username: 'XDevelopers', name: 'Developers' },
  reply_count: 783,
  retweet_count: 832,
  quote_count: 573,
  lang: 'en',
};

/** A row answering one post by its URL or id, as `read` gets it (the GraphQL API or the embed source); 404 and 502 are free. */
function postRow(row: {
  path: string;
  summary: string;
  description: (prices: PriceText) => string;
  operation: 'mb_tweet' | 'mb_legacy';
  example: PostItem;
  read(client: XClient, id: string, context: CallContext): Promise<XResult<PostItem>>;
}) {
  return defineEndpoint({
    method: 'POST',
    path: row.path,
    summary: row.summary,
    description: row.description,
    tag: 'Microblog',
    input: 'body',
    schema: { fields: postFields },
    billing: { product: 'scraping', operation: row.operation },
    history: true,
    success: { status: 200, description: 'The post item.', example: { response: row.example } },
    errors: [403, 404, 502],
    async handler(context) {
      const { input, services } = context;
      return { body: { response: settle(await row.read(services.capabilities.microblog().client, input.url !== undefined ? input.url : input.id, callContext(context))) } };
    },
  });
}

export const mbTweetEndpoint = postRow({
  path: '/v1/mb/tweet',
  summary: 'One microblog post',
  description: ({ credits }) => `A post on X by URL or id (send exactly one), read through X's GraphQL API with a guest token. ${credits('mb_tweet')}; a deleted or unavailable post (404) and upstream failures (502) are free.`,
  operation: 'mb_tweet',
  example: EXAMPLE_POST,
  read: (client, id, context) => client.tweet(id, context),
});

export const mbLegacyEndpoint = postRow({
  path: '/v1/mb-legacy',
  summary: 'One microblog post (embed source)',
  description: ({ credits }) => `The same post item read from X's public embed (syndication) source, which needs no session; it has no view count or source (null). ${credits('mb_legacy')}; 404 and 502 are free.`,
  operation: 'mb_legacy',
  example: { ...EXAMPLE_POST, view_count: null, source: null },
  read: (client, id, context) => client.legacyTweet(id, context),
});

const searchScopeOf = (input: Record<string, unknown>): string | null =>
  typeof input.query === 'string' && input.query.trim() !== '' ? searchScope(input.query.trim(), typeof input.product === 'string' ? input.product : 'latest') : null;

export const mbSearchEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/mb/search',
  summary: 'Microblog search',
  description: ({ credits }) =>
    `Posts matching a query (X search syntax), newest first (\`latest\`) or ranked (\`top\`), one page at a time: pass back \`next_page_token\` or \`previous_page_token\` (one of them) with the same query. Needs X_ACCOUNTS (503 otherwise). Throttled to 60 requests a minute per user. ${credits('mb_search')}; 404, 502 and 503 are free.`,
  tag: 'Microblog',
  input: 'body',
  schema: {
    fields: {
      query: { rules: [required(), string(), max(500)], example: 'from:XDevelopers api' },
      product: { rules: [string(), oneOf(SEARCH_PRODUCTS)], default: 'latest' },
      ...tokenFields,
    },
  },
  async afterValidation({ input, services }, errors) {
    const product = input.product === undefined || input.product === null || input.product === '' ? 'latest' : input.product;
    await checkTokens(input, services, errors.product ? null : searchScopeOf({ ...input, product }), 'query', errors);
  },
  available: hasSessions,
  billing: { product: 'scraping', operation: 'mb_search' },
  throttle: { maxAttempts: 60, windowSeconds: 60, per: 'user' },
  history: true,
  success: { status: 200, description: 'One page of posts and the tokens of the pages around it.', example: { response: [EXAMPLE_POST], pagination: { next_page_token: 'eyJjIjoi…', previous_page_token: null } } },
  errors: [403, 404, 429, 502, 503],
  async handler(context) {
    const { input, services } = context;
    const scope = searchScope(input.query, input.product);
    const { cursor, paging } = await cursorOf(input, services, scope);
    const page = settle(await services.capabilities.microblog().client.search(input.query, input.product, cursor, callContext(context)));
    return { body: { response: page.posts, pagination: await pagination(services, page, scope, paging) } };
  },
});

/** The wire form of a user: the adapter's `protected` flag stays inside. */
function publicUser({ protected: _protected, ...user }: MicroblogUser) {
  return user;
}

export const mbUserEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/mb/user',
  summary: 'Microblog user profile',
  description: ({ credits }) => `A user's profile by username. Needs X_ACCOUNTS (503 otherwise). ${credits('mb_user')}; an unknown or suspended user (404), 502 and 503 are free.`,
  tag: 'Microblog',
  input: 'body',
  schema: { fields: { username: usernameField } },
  available: hasSessions,
  billing: { product: 'scraping', operation: 'mb_user' },
  history: true,
  success: {
    status: 200,
    description: 'The profile.',
    example: {
      response: {
        id: '2244994945',
        username: 'XDevelopers',
        name: 'Developers',
        description: 'The voice of the X Dev team…',
        followers_count: 695695,
        following_count: 762,
        posts_count: 4319,
        verified: true,
        created_at: '2013-12-14T04:35:55.000000Z',
        profile_image_url: 'https://pbs.twimg.com/profile_images/1683501992314798080/xl1POYLw_normal.jpg',
      },
    },
  },
  errors: [403, 404, 502, 503],
  async handler(context) {
    const { input, services } = context;
    return { body: { response: publicUser(settle(await services.capabilities.microblog().client.user(input.username, callContext(context)))) } };
  },
});

const userScopeOf = (input: Record<string, unknown>): string | null => {
  const username = typeof input.username === 'string' ? xUsername(input.username) : null;
  return username === null ? null : userScope(username);
};

export const mbUserTweetsEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/mb/user-tweets',
  summary: 'A user\'s recent posts',
  description: ({ credits }) =>
    `A user's posts, newest first, the pinned post first, including posts X lists inside conversation modules; one page at a time with \`next_page_token\` or \`previous_page_token\` (one of them) for the same user. Needs X_ACCOUNTS (503 otherwise). ${credits('mb_user_tweets')}; an unknown, suspended or protected user (404), 502 and 503 are free.`,
  tag: 'Microblog',
  input: 'body',
  schema: { fields: { username: usernameField, ...tokenFields } },
  async afterValidation({ input, services }, errors) {
    await checkTokens(input, services, errors.username ? null : userScopeOf(input), 'user', errors);
  },
  available: hasSessions,
  billing: { product: 'scraping', operation: 'mb_user_tweets' },
  history: true,
  success: { status: 200, description: 'One page of posts and the tokens of the pages around it.', example: { response: [EXAMPLE_POST], pagination: { next_page_token: 'eyJjIjoi…', previous_page_token: null } } },
  errors: [403, 404, 502, 503],
  async handler(context) {
    const { input, services } = context;
    const username = input.username;
    const scope = userScope(username);
    const { cursor, paging } = await cursorOf(input, services, scope);
    const page = settle(await services.capabilities.microblog().client.userTweets(username, cursor, callContext(context)));
    return { body: { response: page.posts, pagination: await pagination(services, page, scope, paging) } };
  },
});

export const MICROBLOG_ENDPOINTS = [mbTweetEndpoint, mbLegacyEndpoint, mbSearchEndpoint, mbUserEndpoint, mbUserTweetsEndpoint];
