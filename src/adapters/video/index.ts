/**
 * The video (YouTube) adapter as a capability: InnerTube read as pure request/parse pairs on the
 * upstream runtime (docs/video.md).
 *
 * | variable | default |
 * |---|---|
 * | UPSTREAM_YOUTUBE_URL | https://www.youtube.com |
 * | YOUTUBE_TIMEOUT_MS | 15000 |
 * | PAGE_TOKEN_SECRET | shared with the microblog tokens; else a secret generated once and kept in the database |
 */
import type { Capability } from '../../core/capability.ts';
import type { Queryable } from '../../storage/db.ts';
import type { UpstreamRuntime } from '../kit/runtime.ts';
import { pageTokenSecretSetting, pageTokensFor } from '../x/secret.ts';
import { VideoClient, type VideoService, type VideoSettings } from './client.ts';
import { YOUTUBE_DEFAULT_URL } from './innertube.ts';

export { VideoClient } from './client.ts';
export type { VideoResult, VideoService } from './client.ts';
export { channelHandle, channelIdOrNull, channelRefFromUrl, channelScopeKey, playlistId, playlistIdFromUrl, videoId, videoIdFromUrl, type ChannelRef } from './ids.ts';
export { COMMENT_SORTS, SEARCH_SORTS, SEARCH_TYPES, type CommentSort, type SearchSort, type SearchType } from './requests.ts';
export type * from './types.ts';

/** The generated secret's row in `service_secrets`: video tokens are not microblog tokens. */
export const VIDEO_PAGE_TOKEN_SECRET_NAME = 'video_page_token';

export interface VideoCapabilitySettings extends VideoSettings {
  pageTokenSecret?: Buffer;
}

export const videoCapability: Capability<VideoCapabilitySettings, VideoService, { runtime: UpstreamRuntime; db?: Queryable }> = {
  name: 'video',
  settings(env) {
    return {
      baseUrl: env.url('UPSTREAM_YOUTUBE_URL') ?? YOUTUBE_DEFAULT_URL,
      timeoutMs: env.positiveInteger('YOUTUBE_TIMEOUT_MS') ?? 15_000,
      pageTokenSecret: pageTokenSecretSetting(env),
    };
  },
  start(settings, { runtime, db }) {
    return { client: new VideoClient(runtime, settings), pageTokens: pageTokensFor(settings.pageTokenSecret, db, VIDEO_PAGE_TOKEN_SECRET_NAME) };
  },
  close: async () => {},
};
