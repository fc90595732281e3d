/**
 * Timelines (SearchTimeline, UserTweets): a list of instructions that add, replace and pin
 * entries. Every `TimelineAddEntries`, `TimelineReplaceEntry` and `TimelinePinEntry` is read:
 * - posts come as `TimelineTimelineItem` entries and inside `TimelineTimelineModule` items
 *   (profile conversations, grids); modules of users (who to follow) hold none;
 * - promoted entries (ads) are skipped;
 * - the pinned post goes first, and a post is listed once;
 * - the `cursor-top` / `cursor-bottom` entries give the cursors, also when X sends them again
 *   inside a `TimelineReplaceEntry` (the replacement wins).
 */
import { CappedList, MAX_PAGE_ITEMS } from '../kit/limits.ts';
import type { ParseOutcome, UpstreamResponse } from '../kit/types.ts';
import { graphqlData, isRecord, mapTweet } from './parse.ts';
import type { PostItem, TimelinePage } from './types.ts';

type Json = Record<string, any>;

function isPromoted(entryId: unknown, content: unknown): boolean {
  if (typeof entryId === 'string' && /^promoted/i.test(entryId)) return true;
  return isRecord(content) && isRecord(content.itemContent) && content.itemContent.promotedMetadata !== undefined;
}

function cursorOf(entryId: unknown, content: Json): { direction: 'top' | 'bottom'; value: string } | null {
  const cursor = content.entryType === 'TimelineTimelineCursor' || content.__typename === 'TimelineTimelineCursor' ? content : content.itemContent;
  if (!isRecord(cursor) || typeof cursor.value !== 'string') return null;
  const type = typeof cursor.cursorType === 'string' ? cursor.cursorType.toLowerCase() : '';
  if (type === 'top' || (typeof entryId === 'string' && entryId.startsWith('cursor-top'))) return { direction: 'top', value: cursor.value };
  if (type === 'bottom' || (typeof entryId === 'string' && entryId.startsWith('cursor-bottom'))) return { direction: 'bottom', value: cursor.value };
  return null;
}

/** The post of an item's `itemContent`, when it holds one. */
function postOf(itemContent: unknown): PostItem | null {
  if (!isRecord(itemContent) || itemContent.promotedMetadata !== undefined) return null;
  if (itemContent.itemType !== 'TimelineTweet' && itemContent.__typename !== 'TimelineTweet') return null;
  return mapTweet(itemContent.tweet_results?.result);
}

/** Reads the instructions of one timeline page. */
export function readTimeline(instructions: unknown): TimelinePage {
  // A page holds 20 posts or so; a longer answer is not mapped past MAX_PAGE_ITEMS (issue 33), but its cursors, which come last, are still read.
  const pinned = new CappedList<PostItem>(MAX_PAGE_ITEMS);
  const posts = new CappedList<PostItem>(MAX_PAGE_ITEMS);
  const cursors: TimelinePage['cursors'] = { top: null, bottom: null };

  const readEntry = (entry: unknown, into: CappedList<PostItem>) => {
    if (!isRecord(entry) || !isRecord(entry.content)) return;
    const { entryId, content } = entry;
    if (isPromoted(entryId, content)) return;
    const cursor = cursorOf(entryId, content);
    if (cursor) {
      cursors[cursor.direction] = cursor.value;
      return;
    }
    if (into.full) return;
    if (Array.isArray(content.items)) {
      for (const moduleItem of content.items) {
        if (into.full) return;
        if (!isRecord(moduleItem) || isPromoted(moduleItem.entryId, moduleItem.item)) continue;
        const post = postOf(moduleItem.item?.itemContent);
        if (post) into.add(post);
      }
      return;
    }
    const post = postOf(content.itemContent);
    if (post) into.add(post);
  };

  for (const instruction of Array.isArray(instructions) ? instructions : []) {
    if (!isRecord(instruction)) continue;
    if (instruction.type === 'TimelineAddEntries' && Array.isArray(instruction.entries)) {
      for (const entry of instruction.entries) readEntry(entry, posts);
    } else if (instruction.type === 'TimelineReplaceEntry') {
      readEntry(instruction.entry, posts);
    } else if (instruction.type === 'TimelinePinEntry') {
      readEntry(instruction.entry, pinned);
    }
  }
  const seen = new Set<string>();
  const ordered = [...pinned.items, ...posts.items].filter((post) => !seen.has(post.id) && seen.add(post.id)).slice(0, MAX_PAGE_ITEMS);
  return { posts: ordered, cursors };
}

function timelineOutcome(data: ParseOutcome<Json>, locate: (data: Json) => unknown): ParseOutcome<TimelinePage> {
  if (data.kind !== 'ok') return data;
  const timeline = locate(data.value);
  if (!isRecord(timeline) || !Array.isArray(timeline.instructions)) return { kind: 'changed', reason: 'no timeline instructions in the answer' };
  return { kind: 'ok', value: readTimeline(timeline.instructions) };
}

/** SearchTimeline → one page of results. */
export function parseSearchTimeline(response: UpstreamResponse): ParseOutcome<TimelinePage> {
  return timelineOutcome(graphqlData(response), (data) => data.search_by_raw_query?.search_timeline?.timeline);
}

/** UserTweets → one page of the user's posts; a suspended or vanished user → not_found. */
export function parseUserTweets(response: UpstreamResponse): ParseOutcome<TimelinePage> {
  const data = graphqlData(response);
  if (data.kind !== 'ok') return data;
  const user = data.value.user?.result;
  if (!isRecord(user) || Object.keys(user).length === 0) return { kind: 'not_found', reason: 'no such user' };
  if (user.__typename === 'UserUnavailable') return { kind: 'not_found', reason: 'user unavailable' };
  // `timeline_v2` is the older name of the same object.
  return timelineOutcome(data, () => user.timeline?.timeline ?? user.timeline_v2?.timeline);
}
