/**
 * The video client behind /v1/video*: composes the InnerTube calls each endpoint needs and folds
 * their outcomes into one answer (a value, not found, or failed: the runtime has logged why).
 */
import type { CallContext, CallOutcome } from '../kit/types.ts';
import type { Upstream, UpstreamRuntime } from '../kit/runtime.ts';
import type { PageTokens } from '../x/page-token.ts';
import type { ChannelRef } from './ids.ts';
import { chaptersFromDescription, planTranscript } from './parse.ts';
import {
  channelAdapter,
  channelContinuationAdapter,
  commentsAdapter,
  commentsEntryAdapter,
  nextAdapter,
  playerAdapter,
  playlistAdapter,
  playlistContinuationAdapter,
  resolveChannelAdapter,
  searchAdapter,
  timedTextAdapter,
  type CommentSort,
  type SearchSort,
  type SearchType,
} from './requests.ts';
import type { ChannelInfo, Comment, ItemPage, PlaylistPage, PlaylistVideoItem, SearchItem, Transcript, Video, VideoItem } from './types.ts';
import { watchUrl } from './innertube.ts';

export type VideoResult<T> = { kind: 'ok'; value: T } | { kind: 'not_found' } | { kind: 'failed' };

const failed = { kind: 'failed' } as const;
const notFound = { kind: 'not_found' } as const;

/** A call's outcome as the endpoints see it: only `not_found` is the caller's 404. */
function settle<T>(outcome: CallOutcome<T>): VideoResult<T> {
  if (outcome.kind === 'ok') return { kind: 'ok', value: outcome.value };
  if (outcome.kind === 'not_found') return notFound;
  return failed;
}

export interface VideoSettings {
  baseUrl: string;
  timeoutMs: number;
}

export class VideoClient {
  readonly #upstream: Upstream;

  constructor(runtime: UpstreamRuntime, settings: VideoSettings) {
    this.#upstream = runtime.upstream({ timeoutMs: settings.timeoutMs, baseUrl: settings.baseUrl });
  }

  /** The player (metadata, captions) and the watch page (likes): both, or no answer. */
  async video(videoId: string, context: CallContext): Promise<VideoResult<Video>> {
    const [player, next] = await Promise.all([this.#upstream.call(playerAdapter, { videoId }, context), this.#upstream.call(nextAdapter, { videoId }, context)]);
    const info = settle(player);
    if (info.kind !== 'ok') return info;
    const page = settle(next);
    if (page.kind !== 'ok') return failed;
    const { tracks, ...details } = info.value;
    // The watch page's chapter markers when it has them, else those written in the description.
    const chapters = page.value.chapters.length > 0 ? page.value.chapters : chaptersFromDescription(details.description);
    return {
      kind: 'ok',
      value: {
        id: details.id,
        url: watchUrl(details.id),
        title: details.title,
        description: details.description,
        channel: details.channel,
        // The player's exact time; else the date the watch page shows.
        published_at: details.published_at ?? page.value.published_at,
        duration_seconds: details.duration_seconds,
        view_count: details.view_count ?? page.value.view_count,
        like_count: page.value.like_count,
        comment_count: page.value.comment_count,
        keywords: details.keywords,
        category: details.category,
        is_live: details.is_live,
        thumbnails: details.thumbnails,
        chapters,
        captions: tracks.map(({ language, name, auto_generated }) => ({ language, name, auto_generated })),
        is_family_safe: details.is_family_safe,
        is_unlisted: details.is_unlisted,
      },
    };
  }

  /**
   * The transcript in `language` (else the original track), translated by YouTube into
   * `translateTo` when asked (`planTranscript`).
   */
  async transcript(videoId: string, language: string | undefined, translateTo: string | undefined, context: CallContext): Promise<VideoResult<Transcript>> {
    const player = settle(await this.#upstream.call(playerAdapter, { videoId }, context));
    if (player.kind !== 'ok') return player;
    const plan = planTranscript(player.value.tracks, player.value.translation_languages, language, translateTo);
    if (!plan) return notFound;
    const { track, translation } = plan;
    const outcome = await this.#upstream.call(timedTextAdapter, { path: track.path, ...(translation ? { translateTo: translation.language } : {}) }, context);
    // A track that reads empty has no transcript to give.
    if (outcome.kind === 'empty') return notFound;
    const segments = settle(outcome);
    if (segments.kind !== 'ok') return segments;
    return {
      kind: 'ok',
      value: {
        id: videoId,
        language: translation?.language ?? track.language,
        name: translation?.name ?? track.name,
        auto_generated: track.auto_generated,
        translated_from: translation ? track.language : null,
        segments: segments.value,
        text: segments.value.map((segment) => segment.text).join(' '),
        available_languages: player.value.tracks.map(({ language: code, name, auto_generated }) => ({ language: code, name, auto_generated })),
      },
    };
  }

  async search(query: string, type: SearchType | undefined, sort: SearchSort, continuation: string | undefined, context: CallContext): Promise<VideoResult<ItemPage<SearchItem>>> {
    const params = continuation !== undefined ? { continuation } : { query, type, sort };
    const page = settle(await this.#upstream.call(searchAdapter, params, context));
    if (page.kind !== 'ok' || type === undefined) return page;
    // A type filter asked for one kind: drop the others YouTube mixes in.
    return { kind: 'ok', value: { ...page.value, items: page.value.items.filter((item) => item.type === type) } };
  }

  /** The first page of a channel's uploads, with the channel. */
  async channel(ref: ChannelRef, context: CallContext): Promise<VideoResult<{ channel: ChannelInfo } & ItemPage<VideoItem>>> {
    let channelId: string;
    if (ref.kind === 'id') channelId = ref.id;
    else {
      const resolved = settle(await this.#upstream.call(resolveChannelAdapter, { path: ref.path }, context));
      if (resolved.kind !== 'ok') return resolved;
      channelId = resolved.value;
    }
    return settle(await this.#upstream.call(channelAdapter, { channelId }, context));
  }

  async channelMore(continuation: string, context: CallContext): Promise<VideoResult<ItemPage<VideoItem>>> {
    return settle(await this.#upstream.call(channelContinuationAdapter, { continuation }, context));
  }

  /** The first page of a playlist's entries, with the playlist. */
  async playlist(playlistId: string, context: CallContext): Promise<VideoResult<PlaylistPage>> {
    return settle(await this.#upstream.call(playlistAdapter, { playlistId }, context));
  }

  async playlistMore(continuation: string, context: CallContext): Promise<VideoResult<ItemPage<PlaylistVideoItem>>> {
    return settle(await this.#upstream.call(playlistContinuationAdapter, { continuation }, context));
  }

  /** One page of comments: the first through the watch page (and its sort menu), later ones by continuation. */
  async comments(videoId: string, sort: CommentSort, continuation: string | undefined, context: CallContext): Promise<VideoResult<ItemPage<Comment>>> {
    if (continuation !== undefined) return settle(await this.#upstream.call(commentsAdapter, { continuation }, context));
    const entry = settle(await this.#upstream.call(commentsEntryAdapter, { videoId }, context));
    if (entry.kind !== 'ok') return entry;
    if (!entry.value.hasVideo) {
      // No video on the watch page: the player says whether it is gone or we are refused.
      const player = settle(await this.#upstream.call(playerAdapter, { videoId }, context));
      return player.kind === 'ok' ? failed : player;
    }
    if (entry.value.continuation === null) return { kind: 'ok', value: { items: [], continuation: null } };
    const first = settle(await this.#upstream.call(commentsAdapter, { continuation: entry.value.continuation }, context));
    if (first.kind !== 'ok') return first;
    if (sort === 'top') return { kind: 'ok', value: { items: first.value.items, continuation: first.value.continuation } };
    const newest = first.value.sorts?.newest;
    // Comments without a sort menu (none yet) have nothing to reorder.
    if (!newest) return first.value.items.length === 0 ? { kind: 'ok', value: { items: [], continuation: null } } : failed;
    const page = settle(await this.#upstream.call(commentsAdapter, { continuation: newest }, context));
    return page.kind === 'ok' ? { kind: 'ok', value: { items: page.value.items, continuation: page.value.continuation } } : page;
  }

  /** One fixed, harmless call for `gleaner upstreams probe`: a long-lived public video's player. */
  probe(context: CallContext): Promise<CallOutcome<unknown>> {
    return this.#upstream.call(playerAdapter, { videoId: 'jNQXAC9IVRw' }, context);
  }
}

/** What the endpoints use: the client and the page tokens. */
export interface VideoService {
  client: VideoClient;
  pageTokens: PageTokens;
}
