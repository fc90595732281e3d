/**
 * The forum (Reddit) objects as the service answers them (docs/spec/contract.md §5 "Forum
 * responses"), and the parameters of each upstream operation.
 */

export const LISTING_SORTS = ['hot', 'new', 'top', 'rising', 'controversial'] as const;
export const SEARCH_SORTS = ['relevance', 'hot', 'top', 'new', 'comments'] as const;
export const FORUM_TIME_RANGES = ['hour', 'day', 'week', 'month', 'year', 'all'] as const;

export type ListingSort = (typeof LISTING_SORTS)[number];
export type SearchSort = (typeof SEARCH_SORTS)[number];
export type ForumTimeRange = (typeof FORUM_TIME_RANGES)[number];

export interface ForumPost {
  /** Without the `t3_` prefix. */
  id: string;
  /** The fullname, `t3_…`. */
  name: string;
  subreddit: string;
  title: string;
  author: string;
  score: number;
  num_comments: number;
  /** `created_utc` as ISO 8601 with microseconds and `Z`. */
  created_at: string;
  /** The link as Reddit gives it (a self post links to itself). */
  url: string;
  /** Absolute, `https://www.reddit.com/r/…`. */
  permalink: string;
  selftext: string;
  over_18: boolean;
  is_self: boolean;
}

export interface ForumComment {
  id: string;
  name: string;
  author: string;
  body: string;
  score: number;
  created_at: string;
  parent_id: string;
  /** Level in the returned tree: 0 for its top comments. */
  depth: number;
  permalink: string;
  replies: ForumComment[];
}

/** One page of posts, with Reddit's cursors passed through. */
export interface PostPage {
  posts: ForumPost[];
  after: string | null;
  before: string | null;
}

export interface ForumThread extends ForumPost {
  comments: ForumComment[];
  /** Comment ids Reddit left unloaded in "more" stubs ("continue this thread" stubs hold none). */
  more_count: number;
}

export interface ForumCommentAnswer extends ForumComment {
  subreddit: string;
  /** The post the comment belongs to, without `t3_`. */
  post_id: string;
}

export interface ForumUser {
  /** Null when Reddit withholds it (a suspended account). */
  id: string | null;
  name: string;
  created_at: string | null;
  link_karma: number | null;
  comment_karma: number | null;
  is_suspended: boolean;
}

/** What /api/info says about one comment: enough to ask for its context. */
export interface CommentLocation {
  commentId: string;
  postId: string;
  subreddit: string;
}

// Parameters of the upstream operations, as the client hands them to the request builders.

export interface ListingParams {
  subreddit: string;
  sort: ListingSort;
  timeRange?: ForumTimeRange;
  limit: number;
  after?: string;
}

export interface SearchParams {
  query: string;
  subreddit?: string;
  sort?: SearchSort;
  timeRange?: ForumTimeRange;
  limit: number;
  after?: string;
}

export interface UserParams {
  username: string;
  after?: string;
}
