/**
 * Minimal Reddit JSON written in code, in the shapes Reddit serves (`Listing`, `t3`, `t1`, `more`,
 * `t2`, `t5`), for the forum unit and integration tests. Only the fields the parsers read, plus
 * a few they must ignore.
 */

export type Thing = { kind: string; data: Record<string, unknown> };

export function listing(children: Thing[], cursors: { after?: string | null; before?: string | null } = {}): Thing {
  return { kind: 'Listing', data: { modhash: '', dist: children.length, children, after: cursors.after ?? null, before: cursors.before ?? null } };
}

export function post(id: string, overrides: Record<string, unknown> = {}): Thing {
  const subreddit = (overrides.subreddit as string | undefined) ?? 'testsub';
  const permalink = `/r/${subreddit}/comments/${id}/post_${id}/`;
  return {
    kind: 't3',
    data: {
      id,
      name: `t3_${id}`,
      subreddit,
      subreddit_id: 't5_abc',
      title: `Post ${id} & <friends>`,
      author: `author_${id}`,
      score: 42,
      ups: 42,
      num_comments: 3,
      created: 1700000000.5,
      created_utc: 1699971200.25,
      url: `https://www.reddit.com${permalink}`,
      permalink,
      selftext: `Body of ${id}`,
      selftext_html: '<div>ignored</div>',
      over_18: false,
      is_self: true,
      ...overrides,
    },
  };
}

export function comment(id: string, overrides: Record<string, unknown> = {}, replies: Thing[] = []): Thing {
  return {
    kind: 't1',
    data: {
      id,
      name: `t1_${id}`,
      author: `user_${id}`,
      body: `Comment ${id}`,
      body_html: '<div>ignored</div>',
      score: 5,
      created_utc: 1699971300,
      parent_id: 't3_p1',
      link_id: 't3_p1',
      subreddit: 'testsub',
      permalink: `/r/testsub/comments/p1/post_p1/${id}/`,
      replies: replies.length ? listing(replies) : '',
      ...overrides,
    },
  };
}

/** A "load more comments" stub holding `ids`; no ids is Reddit's "continue this thread" stub. */
export function more(ids: string[], parentId = 't3_p1'): Thing {
  return {
    kind: 'more',
    data: ids.length
      ? { count: ids.length, name: `t1_${ids[0]}`, id: ids[0], parent_id: parentId, depth: 0, children: ids }
      : { count: 0, name: 't1__', id: '_', parent_id: parentId, depth: 10, children: [] },
  };
}

export function thread(postThing: Thing, comments: Thing[]): Thing[] {
  return [listing([postThing]), listing(comments)];
}

export function user(name: string, overrides: Record<string, unknown> = {}): Thing {
  return {
    kind: 't2',
    data: { id: 'u1abc', name, created_utc: 1322552953.0, link_karma: 10, comment_karma: 20, is_employee: false, ...overrides },
  };
}

/** What Reddit answers for a suspended account's about page. */
export function suspendedUser(name: string): Thing {
  return { kind: 't2', data: { name, is_suspended: true, awardee_karma: 0, awarder_karma: 0, is_blocked: false, total_karma: 0 } };
}

export function subredditAbout(name: string): Thing {
  return { kind: 't5', data: { display_name: name, name: 't5_abc', subscribers: 10 } };
}

export const WHOA_THERE_PAGE =
  '<!doctype html><html><head><title>Too Many Requests</title></head><body><h1>whoa there, pardner!</h1><p>we\'re sorry, but you appear to be a bot and we\'ve seen too many requests from you lately.</p></body></html>';

export const NETWORK_POLICY_PAGE =
  '<!DOCTYPE html><html><head><title>Blocked</title></head><body><h1>You\'ve been blocked by network security.</h1><p>If you think you\'ve been blocked by mistake, file a ticket below and we\'ll look into it.</p></body></html>';
