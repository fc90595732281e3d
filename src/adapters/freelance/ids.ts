/**
 * Project references as users send them: a numeric id, or a project page on Freelancer.com or
 * one of its country sites (freelancer.co.uk, freelancer.in...), in the forms the site links:
 * `/projects/<id>`, `/projects/<category>/<slug>` (optionally `/details` or `/proposals` after
 * it, a legacy `.html` on the slug), with or without a query, a fragment or a trailing slash.
 */
import { parse as parseDomain } from 'tldts';
import { trimTrailing } from '../../core/text.ts';
import type { ProjectRef } from './types.ts';

const DIGITS = /^[1-9]\d{0,15}$/;
/** Tabs of a project page; they name the same project. */
const PAGE_TABS = new Set(['details', 'proposals']);
/** A path segment of a seo_url: no slash, no whitespace, no control character. */
const SEGMENT = /^[^/\s\x00-\x1f\x7f?#]+$/u;

/** A project id sent as digits or as a JSON integer, or null. */
export function projectId(value: unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : null;
  if (typeof value !== 'string' || !DIGITS.test(value.trim())) return null;
  const id = Number(value.trim());
  return Number.isSafeInteger(id) ? id : null;
}

/** Whether the host is Freelancer's: `freelancer.<public suffix>` or a subdomain of it. */
export function isFreelancerHost(hostname: string): boolean {
  const parsed = parseDomain(trimTrailing(hostname.toLowerCase(), '.'), { allowPrivateDomains: false });
  return parsed.domainWithoutSuffix === 'freelancer' && parsed.isIp !== true;
}

function decoded(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The project a Freelancer project URL names, or null when it is not one. */
export function projectRefFromUrl(value: string): ProjectRef | null {
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || !isFreelancerHost(url.hostname)) return null;
  const segments = url.pathname.split('/').filter((segment) => segment !== '').map(decoded);
  if (segments.some((segment) => segment === null)) return null;
  const [head, ...rest] = segments as string[];
  if (head?.toLowerCase() !== 'projects') return null;
  if (rest.length === 1) {
    const id = DIGITS.test(rest[0]) ? projectId(rest[0]) : null;
    return id === null ? null : { kind: 'id', id };
  }
  if (rest.length === 3 && PAGE_TABS.has(rest[2].toLowerCase())) rest.pop();
  if (rest.length !== 2) return null;
  const [category, slug] = [rest[0], rest[1].replace(/\.html$/i, '')];
  if (!SEGMENT.test(category) || !SEGMENT.test(slug)) return null;
  return { kind: 'seo_url', seoUrl: `${category}/${slug}` };
}
