/**
 * The five forum (Reddit) endpoints: /v1/forum, /v1/forum/search, /v1/forum/post,
 * /v1/forum/comment, /v1/forum/user (docs/spec/contract.md §5 "Forum", docs/forum.md).
 * Each costs the `forum` price (3 by default) on success; "not found" (404) and an upstream that could not
 * be asked (502) are free.
 */
import { httpErrors } from '../core/errors.ts';
import { between, format, integer, max, oneOf, parsed, prohibits, required, requiredWithout, string, url, type TransformRule } from '../validation/rules.ts';
import { field, type Fields, type InputOf } from '../validation/schema.ts';
import { defineEndpoint, type Endpoint, type EndpointContext, type PriceText } from '../pipeline/endpoint.ts';
import {
  FORUM_TIME_RANGES,
  LISTING_SORTS,
  SEARCH_SORTS,
  bareId,
  commentIdsFromUrl,
  isFullname,
  postIdFromUrl,
  subredditName,
  userName,
  type ForumOutcome,
} from '../adapters/reddit/index.ts';

export const FORUM_MESSAGES = {
  notPostUrl: 'The url must be a Reddit post URL.',
  notCommentUrl: 'The url must be a Reddit comment URL.',
} as const;

const BILLING = { product: 'scraping', operation: 'forum' } as const;
const ERRORS = [403, 404, 502];

/** The handler gets the name without `r/` (`r/AskReddit` → `AskReddit`). */
const subredditRules = [string(), format(subredditName)] as const;
const afterField = {
  rules: [string(), format((value) => (isFullname(value) ? value : null))],
  description: 'The `after` cursor of the previous page (a fullname such as `t3_48dlnt`).',
  example: 't3_48dlnt',
} as const;
const timeRangeField = {
  rules: [string(), oneOf(FORUM_TIME_RANGES)],
  description: 'Time window of `top` and `controversial` (search: of every sort).',
} as const;
const limitField = { rules: [integer(), between(1, 100)], default: 25 } as const;

/** ok → `{"response": …}`; not found → 404; anything else → 502 (the runtime has logged why). */
/**
 * A post or a comment sent by its URL or by its id, exactly one of them: the handler gets what
 * `fromUrl` reads of the URL (the ids it names), or the bare id of kind `kind` (`t3`, `t1`).
 */
function urlOrId<U>(fromUrl: TransformRule<U>, kind: 't1' | 't3', docs: { url: string; example: string; id: string }) {
  return {
    url: field({ rules: [requiredWithout('id'), string(), url(), prohibits('id'), fromUrl], description: docs.url, example: docs.example }),
    id: field({ rules: [requiredWithout('url'), string(), prohibits('url'), format((value) => bareId(value, kind))], description: docs.id }),
  };
}

function answer<T>(outcome: ForumOutcome<T>): { body: { response: T } } {
  if (outcome.kind === 'ok') return { body: { response: outcome.value } };
  if (outcome.kind === 'not_found') throw httpErrors.notFound();
  throw httpErrors.badGateway();
}

const EXAMPLE_POST = {
  id: '2gmzqe',
  name: 't3_2gmzqe',
  subreddit: 'redditdev',
  title: '[PRAW] HTTPS enabled PRAW testing needed',
  author: 'bboe',
  score: 11,
  num_comments: 2,
  created_at: '2014-09-17T06:34:31.000000Z',
  url: 'https://www.reddit.com/r/redditdev/comments/2gmzqe/praw_https_enabled_praw_testing_needed/',
  permalink: 'https://www.reddit.com/r/redditdev/comments/2gmzqe/praw_https_enabled_praw_testing_needed/',
  selftext: 'PRAW client developers,\n\nI have made a PRAW branch to test using only HTTPS over the API…',
  over_18: false,
  is_self: true,
};

const EXAMPLE_REPLY = {
  id: 'cklhv0f',
  name: 't1_cklhv0f',
  author: 'bboe',
  body: "Yes it does. That fix is also in the master branch, we just haven't made a release for it (and we probably won't until 3.0).",
  score: 1,
  created_at: '2014-09-18T03:13:54.000000Z',
  parent_id: 't1_cklfmye',
  depth: 1,
  permalink: 'https://www.reddit.com/r/redditdev/comments/2gmzqe/praw_https_enabled_praw_testing_needed/cklhv0f/',
  replies: [],
};

const EXAMPLE_COMMENT = {
  id: 'cklfmye',
  name: 't1_cklfmye',
  author: 'paneer_burrito',
  body: 'Quick question: I remember reading about an issue where the proxy settings for https requests were not getting picked up…',
  score: 1,
  created_at: '2014-09-18T01:51:52.000000Z',
  parent_id: 't3_2gmzqe',
  depth: 0,
  permalink: 'https://www.reddit.com/r/redditdev/comments/2gmzqe/praw_https_enabled_praw_testing_needed/cklfmye/',
  replies: [EXAMPLE_REPLY],
};

/**
 * One /v1/forum row: a JSON body of `fields`, answered `{"response": …}` from what `read` asks
 * the forum client, billed at the `forum` price on a 200 (403, 404 and 502 are free).
 */
function forumRow<const F extends Fields>(row: {
  path: string;
  summary: string;
  description: (prices: PriceText) => string;
  fields: F;
  answer: string;
  example: unknown;
  read(context: EndpointContext<InputOf<F>>): Promise<ForumOutcome<unknown>>;
}): Endpoint {
  return defineEndpoint<F>({
    method: 'POST',
    path: row.path,
    summary: row.summary,
    description: row.description,
    tag: 'Forum',
    input: 'body',
    schema: { fields: row.fields },
    billing: BILLING,
    history: true,
    success: { status: 200, description: row.answer, example: { response: row.example } },
    errors: ERRORS,
    handler: async (context) => answer(await row.read(context)),
  });
}

/** The page a listing or a search asks for, as the forum client takes it. */
const pageOf = <S extends string>(input: { sort: S; time_range?: (typeof FORUM_TIME_RANGES)[number]; limit: number; after?: string }) => ({
  sort: input.sort,
  timeRange: input.time_range,
  limit: input.limit,
  after: input.after,
});

export const forumListingEndpoint = forumRow({
  path: '/v1/forum',
  summary: 'Posts of a subreddit',
  description: ({ credits }) =>
    `One page of a subreddit listing (\`/r/{subreddit}/{sort}\`), with Reddit's \`after\`/\`before\` cursors passed through. Costs ${credits('forum')}; an unknown, banned, private or quarantined subreddit (404) and an upstream failure (502) are free.`,
  fields: {
    subreddit: { rules: [required(), ...subredditRules], description: 'Name, with or without `r/`; `a+b` combines subreddits.', example: 'redditdev' },
    sort: { rules: [string(), oneOf(LISTING_SORTS)], default: 'hot' },
    time_range: timeRangeField,
    limit: limitField,
    after: afterField,
  },
  answer: 'Posts in Reddit\'s order, and the cursors of the neighbouring pages.',
  example: { subreddit: 'redditdev', posts: [EXAMPLE_POST], after: 't3_2gmzqe', before: null },
  read: ({ input, services, upstream }) => services.capabilities.forum().listing({ subreddit: input.subreddit, ...pageOf(input) }, upstream),
});

export const forumSearchEndpoint = forumRow({
  path: '/v1/forum/search',
  summary: 'Search posts',
  description: ({ credits }) =>
    `Reddit search (\`/search\`, or \`/r/{subreddit}/search\` restricted to it). No match is an empty page (200). Costs ${credits('forum')}; an unknown subreddit (404) and an upstream failure (502) are free.`,
  fields: {
    query: { rules: [required(), string(), max(512)], example: 'praw oauth' },
    subreddit: { rules: subredditRules, description: 'Search only this subreddit.' },
    sort: { rules: [string(), oneOf(SEARCH_SORTS)], default: 'relevance' },
    time_range: timeRangeField,
    limit: limitField,
    after: afterField,
  },
  answer: 'Matching posts in Reddit\'s order, and the cursors of the neighbouring pages.',
  example: { query: 'praw https', subreddit: 'redditdev', posts: [EXAMPLE_POST], after: null, before: null },
  read: ({ input, services, upstream }) => services.capabilities.forum().search({ query: input.query, subreddit: input.subreddit, ...pageOf(input) }, upstream),
});

export const forumPostEndpoint = forumRow({
  path: '/v1/forum/post',
  summary: 'A post with its comments',
  description: ({ credits }) =>
    `The post and its comment tree (\`/comments/{id}\`), replies nested; \`more_count\` counts the comment ids Reddit left unloaded. Send \`url\` or \`id\`, not both. Costs ${credits('forum')}; an unknown or deleted post (404) and an upstream failure (502) are free.`,
  // The handler gets the post's id.
  fields: urlOrId(parsed('reddit_post_url', (value) => (typeof value === 'string' ? postIdFromUrl(value) : null), FORUM_MESSAGES.notPostUrl), 't3', {
    url: 'Any reddit.com post URL (`www.`, `old.`, `new.`, `np.`) or `https://redd.it/{id}`.',
    example: 'https://www.reddit.com/r/redditdev/comments/2gmzqe/praw_https_enabled_praw_testing_needed/',
    id: '`2gmzqe` or `t3_2gmzqe`.',
  }),
  answer: 'The post\'s fields, its top-level comments with nested replies, and `more_count`.',
  example: { ...EXAMPLE_POST, comments: [EXAMPLE_COMMENT], more_count: 0 },
  read: ({ input, services, upstream }) => services.capabilities.forum().thread(input.url !== undefined ? input.url : input.id, upstream),
});

export const forumCommentEndpoint = forumRow({
  path: '/v1/forum/comment',
  summary: 'A comment with its replies',
  description: ({ credits }) =>
    `One comment (found with \`/api/info\`, unless the URL names its post) and its replies (\`/comments/{post}/_/{comment}\`); \`depth\` counts from this comment. Send \`url\` or \`id\`, not both. Costs ${credits('forum')}; an unknown comment (404) and an upstream failure (502) are free.`,
  // The handler gets the post's and the comment's ids.
  fields: urlOrId(parsed('reddit_comment_url', (value) => (typeof value === 'string' ? commentIdsFromUrl(value) : null), FORUM_MESSAGES.notCommentUrl), 't1', {
    url: 'A reddit.com comment permalink (`…/comments/{post}/{slug}/{comment}/`).',
    example: 'https://www.reddit.com/r/redditdev/comments/2gmzqe/praw_https_enabled_praw_testing_needed/cklfmye/',
    id: '`cklfmye` or `t1_cklfmye`.',
  }),
  answer: 'The comment\'s fields with nested replies, plus `subreddit` and `post_id`.',
  example: { ...EXAMPLE_COMMENT, subreddit: 'redditdev', post_id: '2gmzqe' },
  read: ({ input, services, upstream }) => services.capabilities.forum().comment(input.url !== undefined ? input.url : { commentId: input.id }, upstream),
});

export const forumUserEndpoint = forumRow({
  path: '/v1/forum/user',
  summary: 'A user\'s profile and recent posts',
  description: ({ credits }) =>
    `The profile (\`/user/{username}/about\`) and one page of submissions (\`/user/{username}/submitted\`). A suspended account answers \`is_suspended: true\` with no posts. Costs ${credits('forum')}; an unknown, deleted or shadow-banned user (404) and an upstream failure (502) are free.`,
  fields: {
    username: { rules: [required(), string(), format(userName)], description: 'With or without `u/`.', example: 'PyAPITestUser3' },
    after: afterField,
  },
  answer: 'The profile, and the user\'s posts newest first with the cursors of the neighbouring pages.',
  example: {
    user: { id: '6c1xj', name: 'PyAPITestUser3', created_at: '2011-11-29T07:49:13.000000Z', link_karma: 1, comment_karma: 0, is_suspended: false },
    posts: [EXAMPLE_POST],
    after: null,
    before: null,
  },
  read: ({ input, services, upstream }) => services.capabilities.forum().user({ username: input.username, after: input.after }, upstream),
});

export const FORUM_ENDPOINTS = [forumListingEndpoint, forumSearchEndpoint, forumPostEndpoint, forumCommentEndpoint, forumUserEndpoint];
