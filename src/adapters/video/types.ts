/** The wire shapes of /v1/video* (docs/video.md) and what the parsers hand the client. */

export interface ChannelRefItem {
  id: string | null;
  name: string | null;
  url: string | null;
}

export interface TranscriptLanguage {
  language: string;
  name: string;
  auto_generated: boolean;
}

/** A caption track as the player lists it; `path` is its URL's path and query (fetched on the configured base). */
export interface CaptionTrack extends TranscriptLanguage {
  path: string;
  /** The track the player would show by default (its audio track's default). */
  is_default: boolean;
  /** YouTube translates this track (`tlang`) into any of the player's translation languages. */
  is_translatable: boolean;
}

/** A language YouTube translates translatable tracks into. */
export interface TranslationLanguage {
  language: string;
  name: string;
}

export interface PlayerInfo {
  id: string;
  title: string;
  description: string;
  duration_seconds: number | null;
  view_count: number | null;
  keywords: string[];
  category: string | null;
  published_at: string | null;
  is_live: boolean;
  is_family_safe: boolean | null;
  is_unlisted: boolean | null;
  thumbnails: Thumbnail[];
  channel: ChannelRefItem;
  tracks: CaptionTrack[];
  translation_languages: TranslationLanguage[];
}

export interface Thumbnail {
  url: string;
  width: number | null;
  height: number | null;
}

export interface Chapter {
  title: string;
  start_seconds: number;
}

/** What the watch page (`/next`) adds: counts, chapters, the date it shows, and which generation it was read from. */
export interface NextInfo {
  like_count: number | null;
  view_count: number | null;
  comment_count: number | null;
  chapters: Chapter[];
  /** The date the page shows under the title ("Aug 24, 2019", "Premiered …"), as YYYY-MM-DD. */
  published_at: string | null;
  generation: 'primary-info' | 'description-header';
}

/** The §11 shape of `POST /v1/video`, plus two harmless extras (`is_family_safe`, `is_unlisted`). */
export interface Video {
  id: string;
  url: string;
  title: string;
  description: string;
  channel: ChannelRefItem;
  published_at: string | null;
  duration_seconds: number | null;
  view_count: number | null;
  like_count: number | null;
  comment_count: number | null;
  keywords: string[];
  category: string | null;
  is_live: boolean;
  thumbnails: Thumbnail[];
  chapters: Chapter[];
  captions: TranscriptLanguage[];
  is_family_safe: boolean | null;
  is_unlisted: boolean | null;
}

export interface TranscriptSegment {
  start: number;
  duration: number;
  text: string;
}

export interface Transcript {
  id: string;
  language: string;
  name: string;
  auto_generated: boolean;
  /** The track's own language when YouTube translated it into `language`; null otherwise. */
  translated_from: string | null;
  segments: TranscriptSegment[];
  text: string;
  available_languages: TranscriptLanguage[];
}

export interface VideoItem {
  type: 'video';
  id: string;
  url: string;
  title: string;
  channel: ChannelRefItem | null;
  duration_seconds: number | null;
  view_count: number | null;
  published_text: string | null;
  description_snippet: string | null;
  thumbnail_url: string;
  is_live: boolean;
}

export interface ChannelItem {
  type: 'channel';
  id: string;
  url: string;
  title: string;
  handle: string | null;
  subscriber_count: number | null;
  video_count: number | null;
  description_snippet: string | null;
}

export interface PlaylistItem {
  type: 'playlist';
  id: string;
  url: string;
  title: string;
  channel: ChannelRefItem | null;
  video_count: number | null;
}

export type SearchItem = VideoItem | ChannelItem | PlaylistItem;

export interface ItemPage<T> {
  items: T[];
  continuation: string | null;
}

export interface ChannelInfo {
  id: string;
  name: string;
  handle: string | null;
  url: string;
  description: string;
  subscriber_count: number | null;
  video_count: number | null;
  avatar_url: string | null;
}

export interface ChannelPage extends ItemPage<VideoItem> {
  channel: ChannelInfo;
}

export interface PlaylistInfo {
  id: string;
  url: string;
  title: string;
  description: string;
  channel: ChannelRefItem | null;
  video_count: number | null;
  view_count: number | null;
}

/** A playlist's entry: a video item and its position in the playlist (1-based, null when not shown). */
export interface PlaylistVideoItem extends VideoItem {
  position: number | null;
}

export interface PlaylistPage extends ItemPage<PlaylistVideoItem> {
  playlist: PlaylistInfo;
}

export interface Comment {
  id: string;
  text: string;
  author: { name: string | null; channel_id: string | null };
  like_count: number | null;
  reply_count: number | null;
  published_text: string | null;
  is_pinned: boolean;
  is_hearted: boolean;
  author_is_channel_owner: boolean;
}

export interface CommentPage extends ItemPage<Comment> {
  /** The header's sort menu (first page only): the continuation of each order. */
  sorts: { top: string | null; newest: string | null } | null;
}

/** The watch page's entry into its comment section. */
export interface CommentsEntry {
  /** Null when the section says comments are off. */
  continuation: string | null;
  /** False when the page holds no video at all (the player then says why). */
  hasVideo: boolean;
}
