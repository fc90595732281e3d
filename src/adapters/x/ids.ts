/**
 * X post ids and usernames as callers send them. Pure: a post URL is read from its text, never
 * fetched (a t.co link that only a redirect would resolve is not a post URL here).
 */
import { httpUrlOrNull } from '../../validation/rules.ts';

const POST_PATH = /^\/(?:[A-Za-z0-9_]{1,15}|i|i\/web)\/status(?:es)?\/(\d{1,20})(?:\/.*)?$/;
const POST_HOSTS = new Set(['x.com', 'www.x.com', 'mobile.x.com', 'twitter.com', 'www.twitter.com', 'mobile.twitter.com']);
const POST_ID = /^\d{1,20}$/;
const USERNAME = /^@?[A-Za-z0-9_]{1,15}$/;

/** The post id an x.com (or twitter.com) post URL names, or null. */
export function xPostIdFromUrl(value: string): string | null {
  const parsed = httpUrlOrNull(value);
  if (!parsed || !POST_HOSTS.has(parsed.hostname.toLowerCase())) return null;
  return POST_PATH.exec(parsed.pathname)?.[1] ?? null;
}

/** A post id as sent, as a string: digits (ids exceed JSON numbers), or a positive safe integer; else null. */
export function xPostId(value: unknown): string | null {
  if (typeof value === 'string') return POST_ID.test(value) ? value : null;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return String(value);
  return null;
}

/** A username as sent (`XDevelopers`, `@XDevelopers`), without its `@`; null when it is not one. */
export function xUsername(value: string): string | null {
  const trimmed = value.trim();
  return USERNAME.test(trimmed) ? trimmed.replace(/^@/, '') : null;
}
