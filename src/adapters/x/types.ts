/** What the microblog (X) adapter produces: the wire shapes of docs/spec/contract.md §5 "Microblog". */

export interface PostMedia {
  type: 'photo' | 'video' | 'animated_gif';
  image_url: string;
  /** The highest-bitrate mp4 variant; null for photos. */
  video_url: string | null;
}

export interface PostAuthor {
  id: string;
  username: string;
  name: string;
}

/** The post item of the interface document, plus the extra fields contract §5 allows. */
export interface PostItem {
  id: string;
  tweet_url: string;
  text: string;
  like_count: number;
  /** Null when the upstream shows no count (and always on the embed source). */
  view_count: number | null;
  /** The publishing client's name (the anchor's text); null on the embed source. */
  source: string | null;
  sensitive: boolean;
  media: PostMedia[];
  /** ISO 8601 with microseconds and Z, like every timestamp of the service. */
  created_at: string | null;
  author: PostAuthor;
  reply_count: number | null;
  retweet_count: number | null;
  quote_count: number | null;
  lang: string | null;
}

/** The `/v1/mb/user` response object. */
export interface MicroblogUser {
  id: string;
  username: string;
  name: string;
  description: string;
  followers_count: number;
  following_count: number;
  posts_count: number;
  verified: boolean;
  created_at: string | null;
  profile_image_url: string | null;
  /** Not on the wire: a protected account's posts are not readable (404 on user-tweets). */
  protected: boolean;
}

/** One page of a timeline (search results, a user's posts). */
export interface TimelinePage {
  posts: PostItem[];
  /** X's cursors: `top` reads newer entries, `bottom` older ones. */
  cursors: { top: string | null; bottom: string | null };
}

export type SearchProduct = 'latest' | 'top';
export const SEARCH_PRODUCTS: readonly SearchProduct[] = ['latest', 'top'];

/** The GraphQL operations the service runs. */
export type XOperation = 'TweetResultByRestId' | 'SearchTimeline' | 'UserByScreenName' | 'UserTweets';
export const X_OPERATIONS: readonly XOperation[] = ['TweetResultByRestId', 'SearchTimeline', 'UserByScreenName', 'UserTweets'];
