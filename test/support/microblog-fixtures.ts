/**
 * Minimal hand-written X answers of both schema generations, for the microblog unit and
 * integration tests: users (legacy fields, or 2026 `core`/`avatar` with `legacy` absent or null),
 * posts, timelines (items, modules, pins, cursors, promoted entries) and the embed source.
 */

export type Generation = 'legacy' | '2026';

export interface UserSpec {
  id: string;
  screen_name: string;
  name?: string;
  generation?: Generation;
  description?: string;
  followers?: number;
  following?: number;
  posts?: number;
  blueVerified?: boolean;
  legacyVerified?: boolean;
  protected?: boolean;
  created_at?: string;
  avatar?: string;
  /** 2026 generation: send `legacy: null` instead of leaving it out. */
  nullLegacy?: boolean;
}

export function userResult(spec: UserSpec): Record<string, unknown> {
  const name = spec.name ?? spec.screen_name;
  const created = spec.created_at ?? 'Sat Dec 14 04:35:55 +0000 2013';
  const avatar = spec.avatar ?? `https://pbs.twimg.com/profile_images/${spec.id}/a_normal.jpg`;
  if ((spec.generation ?? '2026') === 'legacy') {
    return {
      __typename: 'User',
      rest_id: spec.id,
      is_blue_verified: spec.blueVerified ?? false,
      legacy: {
        screen_name: spec.screen_name,
        name,
        created_at: created,
        description: spec.description ?? '',
        followers_count: spec.followers ?? 10,
        friends_count: spec.following ?? 5,
        statuses_count: spec.posts ?? 100,
        verified: spec.legacyVerified ?? false,
        protected: spec.protected ?? false,
        profile_image_url_https: avatar,
      },
    };
  }
  return {
    __typename: 'User',
    rest_id: spec.id,
    is_blue_verified: spec.blueVerified ?? false,
    ...(spec.nullLegacy ? { legacy: null } : {}),
    core: { screen_name: spec.screen_name, name, created_at: created },
    avatar: { image_url: avatar },
    profile_bio: { description: spec.description ?? '' },
    relationship_counts: { followers: spec.followers ?? 10, following: spec.following ?? 5 },
    tweet_counts: { tweets: spec.posts ?? 100, media_tweets: 1 },
    privacy: { protected: spec.protected ?? false },
    verification: { verified: spec.legacyVerified ?? false },
  };
}

export interface MediaSpec {
  type: 'photo' | 'video' | 'animated_gif';
  image: string;
  /** [bitrate, url, content type] */
  variants?: Array<[number | undefined, string, string]>;
}

export interface TweetSpec {
  id: string;
  user: UserSpec;
  text?: string;
  note?: string;
  likes?: number;
  views?: string | null;
  source?: string | null;
  sensitive?: boolean;
  media?: MediaSpec[];
  created_at?: string;
  /** Wrap in TweetWithVisibilityResults. */
  limited?: boolean;
}

export function tweetResult(spec: TweetSpec): Record<string, unknown> {
  const legacy: Record<string, unknown> = {
    id_str: spec.id,
    full_text: spec.text ?? `post ${spec.id}`,
    favorite_count: spec.likes ?? 1,
    reply_count: 2,
    retweet_count: 3,
    quote_count: 4,
    lang: 'en',
    created_at: spec.created_at ?? 'Fri Feb 06 21:09:45 +0000 2026',
    user_id_str: spec.user.id,
  };
  if (spec.sensitive !== undefined) legacy.possibly_sensitive = spec.sensitive;
  if (spec.media) {
    legacy.extended_entities = {
      media: spec.media.map((m) => ({
        type: m.type,
        media_url_https: m.image,
        ...(m.variants ? { video_info: { variants: m.variants.map(([bitrate, url, content_type]) => ({ ...(bitrate === undefined ? {} : { bitrate }), url, content_type })) } } : {}),
      })),
    };
  }
  const tweet: Record<string, unknown> = {
    __typename: 'Tweet',
    rest_id: spec.id,
    core: { user_results: { result: userResult(spec.user) } },
    legacy,
    source: spec.source === undefined ? '<a href="https://mobile.twitter.com" rel="nofollow">Twitter Web App</a>' : spec.source,
    views: spec.views === null ? { state: 'Enabled' } : { count: spec.views ?? '1234', state: 'EnabledWithCount' },
  };
  if (spec.source === null) delete tweet.source;
  if (spec.note !== undefined) tweet.note_tweet = { is_expandable: true, note_tweet_results: { result: { id: 'n1', text: spec.note } } };
  return spec.limited ? { __typename: 'TweetWithVisibilityResults', tweet } : tweet;
}

export const tombstone = (): Record<string, unknown> => ({ __typename: 'TweetTombstone', tombstone: { text: { text: 'This Post was deleted by the Post author.' } } });
export const unavailable = (reason = 'Protected'): Record<string, unknown> => ({ __typename: 'TweetUnavailable', reason });

export const tweetResultBody = (result: unknown) => JSON.stringify({ data: { tweetResult: result === undefined ? {} : { result } } });
export const userBody = (result: unknown) => JSON.stringify({ data: result === undefined ? {} : { user: { result } } });

// Timelines ------------------------------------------------------------------------------------

export const itemEntry = (tweet: Record<string, unknown>, options: { promoted?: boolean; entryId?: string } = {}) => ({
  entryId: options.entryId ?? `${options.promoted ? 'promoted-tweet' : 'tweet'}-${(tweet.rest_id as string) ?? (tweet.tweet as any)?.rest_id}`,
  sortIndex: '1',
  content: {
    entryType: 'TimelineTimelineItem',
    __typename: 'TimelineTimelineItem',
    itemContent: {
      itemType: 'TimelineTweet',
      __typename: 'TimelineTweet',
      tweet_results: { result: tweet },
      ...(options.promoted ? { promotedMetadata: { advertiser_results: {} } } : {}),
    },
  },
});

export const moduleEntry = (id: string, tweets: Array<Record<string, unknown>>, users: Array<Record<string, unknown>> = []) => ({
  entryId: `profile-conversation-${id}`,
  sortIndex: '1',
  content: {
    entryType: 'TimelineTimelineModule',
    __typename: 'TimelineTimelineModule',
    displayType: 'VerticalConversation',
    items: [
      ...tweets.map((tweet, index) => ({
        entryId: `profile-conversation-${id}-tweet-${index}`,
        item: { itemContent: { itemType: 'TimelineTweet', __typename: 'TimelineTweet', tweet_results: { result: tweet } } },
      })),
      ...users.map((user, index) => ({
        entryId: `profile-conversation-${id}-user-${index}`,
        item: { itemContent: { itemType: 'TimelineUser', __typename: 'TimelineUser', user_results: { result: user } } },
      })),
    ],
  },
});

export const cursorEntry = (direction: 'top' | 'bottom', value: string) => ({
  entryId: `cursor-${direction}-${value.length}`,
  sortIndex: '0',
  content: { entryType: 'TimelineTimelineCursor', __typename: 'TimelineTimelineCursor', value, cursorType: direction === 'top' ? 'Top' : 'Bottom' },
});

export const addEntries = (entries: unknown[]) => ({ type: 'TimelineAddEntries', entries });
export const pinEntry = (tweet: Record<string, unknown>) => ({ type: 'TimelinePinEntry', entry: itemEntry(tweet) });
export const replaceEntry = (entry: { entryId: string }) => ({ type: 'TimelineReplaceEntry', entry_id_to_replace: entry.entryId, entry });

export const searchBody = (instructions: unknown[]) => JSON.stringify({ data: { search_by_raw_query: { search_timeline: { timeline: { instructions } } } } });
export const userTweetsBody = (instructions: unknown[]) =>
  JSON.stringify({ data: { user: { result: { __typename: 'User', timeline: { timeline: { instructions: [{ type: 'TimelineClearCache' }, ...instructions] } } } } } });

// The embed (syndication) source ----------------------------------------------------------------

export function syndicationBody(spec: { id: string; screen_name: string; text?: string; likes?: number; sensitive?: boolean; media?: 'photo' | 'video' }): string {
  const body: Record<string, unknown> = {
    __typename: 'Tweet',
    id_str: spec.id,
    text: spec.text ?? `embed post ${spec.id}`,
    favorite_count: spec.likes ?? 7,
    conversation_count: 2,
    lang: 'en',
    created_at: '2026-02-06T21:09:45.000Z',
    user: { id_str: '99', name: 'Embed User', screen_name: spec.screen_name, is_blue_verified: false },
  };
  if (spec.sensitive !== undefined) body.possibly_sensitive = spec.sensitive;
  if (spec.media === 'photo') body.mediaDetails = [{ type: 'photo', media_url_https: 'https://pbs.twimg.com/media/p.jpg' }];
  if (spec.media === 'video') {
    body.mediaDetails = [{ type: 'video', media_url_https: 'https://pbs.twimg.com/thumb/v.jpg', video_info: { variants: [{ content_type: 'application/x-mpegURL', url: 'https://video.twimg.com/v.m3u8' }, { bitrate: 256000, content_type: 'video/mp4', url: 'https://video.twimg.com/low.mp4' }, { bitrate: 2176000, content_type: 'video/mp4', url: 'https://video.twimg.com/high.mp4' }] } }];
    body.video = { variants: [{ type: 'video/mp4', src: 'https://video.twimg.com/low.mp4' }] };
  }
  return JSON.stringify(body);
}
