/**
 * The blocked-domain rule of /v1/web (docs/spec/contract.md §5, docs/web.md): platforms that have
 * their own scrapers are refused, the domain and every subdomain. Hostnames are compared in their
 * canonical ASCII form (the WHATWG URL parser lower-cases, turns IDN into punycode and folds
 * full-width dots), so `WWW.Facebook.COM.`, `ｆａｃｅｂｏｏｋ.com` and `m.facebook.com` are one
 * case. `name.*` entries match the name under every public suffix (`google.*` blocks
 * `google.co.uk` and `www.google.com.br`), which needs a public-suffix list: `tldts`.
 */
import { domainToASCII } from 'node:url';
import { isIP } from 'node:net';
import { parse } from 'tldts';
import { trimTrailing } from '../../core/text.ts';

/** The contract's list; WEB_BLOCKED_DOMAINS adds to it. */
export const DEFAULT_BLOCKED_DOMAINS: readonly string[] = [
  'google.*',
  'upwork.com',
  'fiverr.com',
  'facebook.com',
  'x.com',
  'twitter.com',
  'instagram.com',
  'linkedin.com',
  // youtube.com with every subdomain (www., m., music.) and YouTube's country sites (youtube.co.uk, youtube.de).
  'youtube.*',
  'youtu.be',
  'youtube-nocookie.com',
  'tiktok.com',
  'pinterest.com',
  'reddit.com',
  // Freelancer.com and its country sites (freelancer.co.uk, freelancer.in, freelancer.com.au...), served by /v1/freelance/*.
  'freelancer.*',
];

export interface DomainBlocklist {
  /** True when `hostname` (any case, IDN or punycode, trailing dot or not) is a blocked domain or under one. */
  isBlocked(hostname: string): boolean;
  /** The entries in canonical form, for logs and docs. */
  readonly entries: readonly string[];
}

/**
 * A hostname in the form the network uses: lower case, punycode, no trailing dot(s), no IPv6
 * brackets. Undefined when it is not a valid hostname.
 */
export function canonicalHostname(hostname: string): string | undefined {
  let host = hostname.trim();
  if (host.startsWith('[') && host.endsWith(']')) return host.slice(1, -1).toLowerCase();
  if (isIP(host) === 6) return host.toLowerCase();
  // Full-width and ideographic dots are label separators too (UTS #46), as browsers read them.
  host = host.replace(/[\u3002\uFF0E\uFF61]/g, '.');
  host = trimTrailing(host, '.');
  if (host === '') return undefined;
  const ascii = domainToASCII(host);
  return ascii === '' ? undefined : trimTrailing(ascii, '.');
}

/** Throws a TypeError naming the entry when it is not a domain or `name.*`. */
export function createDomainBlocklist(extra: readonly string[] = []): DomainBlocklist {
  const domains = new Set<string>();
  const anySuffix = new Set<string>();
  for (const raw of [...DEFAULT_BLOCKED_DOMAINS, ...extra]) {
    const entry = raw.trim().replace(/^\*\./, '').replace(/^\./, '');
    if (entry === '') continue;
    if (entry.endsWith('.*')) {
      const name = canonicalHostname(entry.slice(0, -2));
      if (name === undefined || name.includes('.')) throw new TypeError(`Invalid blocked domain "${raw}": a "name.*" entry takes one label`);
      anySuffix.add(name);
      continue;
    }
    const domain = canonicalHostname(entry);
    if (domain === undefined || isIP(domain) !== 0 || !domain.includes('.')) {
      throw new TypeError(`Invalid blocked domain "${raw}": expected a domain such as example.com or name.*`);
    }
    domains.add(domain);
  }

  return {
    entries: [...[...anySuffix].map((name) => `${name}.*`), ...domains],
    isBlocked(hostname) {
      const host = canonicalHostname(hostname);
      if (host === undefined || isIP(host) !== 0) return false;
      // The host itself, then each parent domain: `a.b.example.com`, `b.example.com`, ...
      for (let suffix = host; ; ) {
        if (domains.has(suffix)) return true;
        const dot = suffix.indexOf('.');
        if (dot === -1) break;
        suffix = suffix.slice(dot + 1);
      }
      if (anySuffix.size > 0) {
        const name = parse(host, { allowPrivateDomains: false }).domainWithoutSuffix;
        if (name !== null && anySuffix.has(name)) return true;
      }
      return false;
    },
  };
}
