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
import { randomBytes } from 'node:crypto';
import type { Capability } from '../../core/capability.ts';
import { ConfigError } from '../../core/env.ts';
import type { Queryable } from '../../storage/db.ts';
import type { UpstreamRuntime } from '../kit/runtime.ts';
import { PageTokens } from '../x/page-token.ts';
import { storedSecret } from '../x/secret.ts';
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
    const secret = env.text('PAGE_TOKEN_SECRET');
    if (secret !== undefined && secret.length < 32) throw new ConfigError('PAGE_TOKEN_SECRET must be at least 32 characters long.', 'PAGE_TOKEN_SECRET');
    return {
      baseUrl: env.url('UPSTREAM_YOUTUBE_URL') ?? YOUTUBE_DEFAULT_URL,
      timeoutMs: env.positiveInteger('YOUTUBE_TIMEOUT_MS') ?? 15_000,
      pageTokenSecret: secret === undefined ? undefined : Buffer.from(secret, 'utf8'),
    };
  },
  start(settings, { runtime, db }) {
    let secret: Promise<Buffer> | undefined = settings.pageTokenSecret ? Promise.resolve(settings.pageTokenSecret) : undefined;
    const pageSecret = () => {
      secret ??= (db ? storedSecret(db, VIDEO_PAGE_TOKEN_SECRET_NAME) : Promise.resolve(randomBytes(32))).catch((error: unknown) => {
        // A database hiccup is asked again next time, not remembered.
        secret = undefined;
        throw error;
      });
      return secret;
    };
    return { client: new VideoClient(runtime, settings), pageTokens: new PageTokens(pageSecret) };
  },
  close: async () => {},
};
