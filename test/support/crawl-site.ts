/**
 * A loopback web site for the crawl, batch and job tests: a home page over a tree of distinct
 * HTML pages, written to trip a careless crawler, with an access log of every request (arrival
 * time included) so tests can show what was fetched, how often and how far apart.
 *
 *   /                      home: links to /p/1../p/8 and to every trap below
 *   /p/<k>                 page k of `pages` (k ≥ 1): a heading, a unique code word, links to its
 *                          children /p/<8k+1>../p/<8k+8> (fan-out 8, so with the home page at depth
 *                          0 pages 1–8 are at depth 1, 9–72 at 2, 73–584 at 3, 585–4680 at 4),
 *                          its parent, a neighbour and a "related" page. The same pages are linked
 *                          as written variants: `?utm_source=…` tracking parameters, `#fragment`s,
 *                          a trailing slash (`/p/<k>/` answers the same page) and absolute URLs.
 *   /about                 off-site and private-address links: `http://169.254.169.254/latest/meta-data/`,
 *                          `http://10.0.0.1/admin`, the site's own port on `127.0.0.1` (another
 *                          host), `https://example.org/…`, `mailto:` and `javascript:`
 *   /robots.txt            `User-agent: *`, `Disallow: /private/`, `Crawl-delay: <crawlDelay>`
 *                          (left out when 0) and `Sitemap: <origin>/sitemap_index.xml`
 *   /sitemap_index.xml     a sitemap index of two children: /sitemaps/pages-1.xml (plain) and
 *                          /sitemaps/pages-2.xml.gz (gzip); together they list the home page and
 *                          every page except each tenth (/p/10, /p/20, …), a tracking variant of
 *                          two of them, and one /private/ page. /sitemap.xml is a 404.
 *   /private/…             disallowed by robots.txt, linked from the home page, from every seventh
 *                          page and from the sitemap: any request here is a violation
 *   /loop/a, /loop/b       redirect to each other for ever
 *   /big                   a page just over 10 MB (over the service's page cap)
 *   /go/metadata           a redirect to http://169.254.169.254/latest/meta-data/
 *   /go/internal           a redirect to `http://127.0.0.1:<port>/latest/meta-data/` (this site)
 *   /latest/meta-data/     the canary: any request for it (on any host name) is counted
 *   anything else          404
 *
 * `url` names the site `http://localhost:<port>`. The canary behind /go/internal is reachable on
 * 127.0.0.1, so it proves something only when the service exempts the name `localhost` alone from
 * the public-address rule (`OUTBOUND_ALLOW_HOSTS=localhost`): then every hop to 127.0.0.1 must be
 * refused. The real metadata address is unreachable from tests anyway; its link and redirect are
 * there for the rule to refuse, and the canary counts a crawler that resolves them against the site.
 *
 * Listens on 127.0.0.1 and, when the machine has it, on ::1 at the same port, so `localhost`
 * reaches it whichever address it resolves to first. It runs on a worker thread of its own (see
 * `startCrawlSite`): call `flush()` before reading what it saw.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { gzipSync } from 'node:zlib';

export interface CrawlSiteOptions {
  /** Tree pages /p/1../p/<pages> (default 300). */
  pages?: number;
  /** Every answer waits this long before it is sent (default 0). */
  latencyMs?: number;
  /** robots.txt's Crawl-delay in seconds (default 0.05; 0 leaves the line out). */
  crawlDelay?: number;
}

export interface CrawlHit {
  /** Arrival, timed on the site's thread, as `performance.now()` milliseconds of the thread that started the site. */
  at: number;
  /** When the answer was sent or the connection closed (same clock); undefined until reported. */
  doneAt?: number;
  method: string;
  /** The Host header as sent. */
  host: string;
  /** Path and query as requested. */
  path: string;
  /** `pageKey(path)`: the path without query, a non-root trailing slash dropped. */
  key: string;
  userAgent: string;
}

export interface CrawlSite {
  /** `http://localhost:<port>`, no trailing slash. */
  url: string;
  port: number;
  /** Tree pages on the site. */
  pages: number;
  /** The Crawl-delay robots.txt announces, in seconds. */
  crawlDelay: number;
  /** Requests whose key equals `pageKey(path)` (variants of one page count together). */
  hits(path: string): number;
  /** Every request's path and query, in order of arrival, one entry per request. */
  fetchedPaths(): string[];
  /** Requests for /latest/meta-data/ (must stay 0). */
  canaryHits(): number;
  /** Requests under /private/ (must stay 0 for a crawl: robots.txt disallows them). */
  privateHits(): number;
  /** Most page requests (robots.txt and sitemaps left out) the site was answering at once. */
  maxInFlight(): number;
  /** The paths of the requests in flight when that most was first reached. */
  busiest(): string[];
  /** Every request, in order of arrival. */
  log: readonly CrawlHit[];
  /** Resolves once every request that reached the site so far is in `log` and the counts. */
  flush(): Promise<void>;
  /** Keys of every page a crawl can deliver: `/`, `/about`, `/p/1`…`/p/<pages>`. */
  pagePaths: readonly string[];
  /** Keys of the pages the sitemaps list (the /private/ one left out). */
  sitemapPaths: readonly string[];
  /** robots.txt, the sitemaps and /sitemap.xml: what a crawl reads that is not a page. */
  metaPaths: readonly string[];
  /** The unique code word in page `key`'s text (deliverable pages only). */
  codeWord(key: string): string;
  close(): Promise<void>;
}

const SITEMAP_INDEX = '/sitemap_index.xml';
const SITEMAP_PLAIN = '/sitemaps/pages-1.xml';
const SITEMAP_GZIP = '/sitemaps/pages-2.xml.gz';
const CANARY = '/latest/meta-data/';
export const FAN_OUT = 8;
/** Just over the service's 10 MB page cap. */
const BIG_PAGE_BYTES = 10 * 1024 * 1024 + 4096;

/**
 * What a page is, whatever variant names it: `/p/5/?utm_source=x#top` → `/p/5`, and a full URL
 * to its path the same way (`http://localhost:1234/p/5/` → `/p/5`).
 */
export function pageKey(pathOrUrl: string): string {
  const { pathname } = new URL(pathOrUrl, 'http://site.invalid');
  return pathname.length > 1 ? pathname.replace(/\/+$/, '') || '/' : pathname;
}

/** Depth of tree page k (1-based) below the home page: 1 for 1–8, 2 for 9–72, ... */
export function treeDepth(k: number): number {
  let depth = 1;
  while (k > FAN_OUT) {
    k = Math.floor((k - 1) / FAN_OUT);
    depth++;
  }
  return depth;
}

const parentOf = (k: number) => Math.floor((k - 1) / FAN_OUT);
const childrenOf = (k: number, pages: number) => Array.from({ length: FAN_OUT }, (_, i) => FAN_OUT * k + 1 + i).filter((c) => c <= pages);
const inSitemap = (k: number) => k % 10 !== 0;

function codeWordOf(key: string): string {
  const tail = key === '/' ? 'home' : key.slice(1).replace(/\//g, '-');
  return `codeword-${tail}`;
}

function html(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>
<body>
<header><nav><a href="/">Home</a> <a href="/about">About</a></nav></header>
<main><article>
${body}
</article></main>
<footer><p>Crawl test site</p></footer>
</body></html>`;
}

interface SiteConfig {
  pages: number;
  latencyMs: number;
  crawlDelay: number;
}

/** What the site's thread tells the test's thread. Times are absolute (`timeOrigin + now()`). */
type SiteMessage =
  | { type: 'listening'; port: number }
  | { type: 'hit'; index: number; at: number; method: string; host: string; path: string; key: string; userAgent: string }
  | { type: 'done'; index: number; at: number }
  | { type: 'busiest'; paths: string[] }
  | { type: 'flushed'; id: number }
  | { type: 'closed' };

type SiteCommand = { type: 'flush'; id: number } | { type: 'close' };

/**
 * Starts the site on a worker thread of its own: the arrival times it records are then not
 * delayed by whatever occupies this thread's event loop (an in-process service and its embedded
 * database), so the gaps between two requests are the gaps on the wire. The log, counts and
 * in-flight figures are mirrored here as the thread reports them; `flush()` waits until every
 * request that reached the site so far is in them.
 */
export async function startCrawlSite(options: CrawlSiteOptions = {}): Promise<CrawlSite> {
  const config: SiteConfig = { pages: options.pages ?? 300, latencyMs: options.latencyMs ?? 0, crawlDelay: options.crawlDelay ?? 0.05 };
  if (!Number.isSafeInteger(config.pages) || config.pages < 1) throw new RangeError(`pages must be a positive integer (got ${config.pages})`);
  const { pages, crawlDelay } = config;

  const log: CrawlHit[] = [];
  let busiest: string[] = [];
  const flushes = new Map<number, () => void>();
  let nextFlush = 0;
  let closed: (() => void) | undefined;
  const toLocal = (absolute: number) => absolute - performance.timeOrigin;

  const worker = new Worker(new URL(import.meta.url), { workerData: { crawlSite: config } });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (message: SiteMessage) => {
      switch (message.type) {
        case 'listening':
          resolve(message.port);
          break;
        case 'hit':
          log[message.index] = { at: toLocal(message.at), method: message.method, host: message.host, path: message.path, key: message.key, userAgent: message.userAgent };
          break;
        case 'done':
          if (log[message.index]) log[message.index].doneAt = toLocal(message.at);
          break;
        case 'busiest':
          busiest = message.paths;
          break;
        case 'flushed':
          flushes.get(message.id)?.();
          flushes.delete(message.id);
          break;
        case 'closed':
          closed?.();
          break;
      }
    });
  });
  worker.on('error', (error) => {
    // The site's thread died: tests reading it would see a frozen log, so say it loudly.
    console.error('the crawl test site stopped:', error);
  });
  const command = (message: SiteCommand) => worker.postMessage(message);

  const pagePaths = ['/', '/about', ...Array.from({ length: pages }, (_, i) => `/p/${i + 1}`)];
  const sitemapPaths = ['/', ...Array.from({ length: pages }, (_, i) => i + 1).filter(inSitemap).map((k) => `/p/${k}`)];
  const metaPaths = ['/robots.txt', SITEMAP_INDEX, SITEMAP_PLAIN, SITEMAP_GZIP, '/sitemap.xml'];
  const arrived = () => log.filter((hit): hit is CrawlHit => hit !== undefined);

  return {
    url: `http://localhost:${port}`,
    port,
    pages,
    crawlDelay,
    hits: (path) => {
      const key = pageKey(path);
      return arrived().filter((hit) => hit.key === key).length;
    },
    fetchedPaths: () => arrived().map((hit) => hit.path),
    canaryHits: () => arrived().filter((hit) => hit.key === pageKey(CANARY)).length,
    privateHits: () => arrived().filter((hit) => hit.key === '/private' || hit.key.startsWith('/private/')).length,
    maxInFlight: () => busiest.length,
    busiest: () => [...busiest],
    log,
    pagePaths,
    sitemapPaths,
    metaPaths,
    codeWord: codeWordOf,
    flush: () =>
      new Promise<void>((resolve) => {
        const id = nextFlush++;
        flushes.set(id, resolve);
        command({ type: 'flush', id });
      }),
    close: async () => {
      await new Promise<void>((resolve) => {
        closed = resolve;
        command({ type: 'close' });
      });
      await worker.terminate();
    },
  };
}

/** The site itself, on its worker thread: answers requests and reports each to the test's thread. */
async function serveSite(config: SiteConfig, report: (message: SiteMessage) => void, commands: { on(event: 'message', listener: (command: SiteCommand) => void): unknown }): Promise<void> {
  const { pages, latencyMs, crawlDelay } = config;
  const now = () => performance.timeOrigin + performance.now();
  let port = 0;
  let count = 0;
  const inFlight = new Set<{ path: string }>();
  let most = 0;
  let big: Buffer | undefined;
  const gzipped = new Map<string, Buffer>();
  const meta = new Set(['/robots.txt', SITEMAP_INDEX, SITEMAP_PLAIN, SITEMAP_GZIP, '/sitemap.xml']);

  const homePage = (origin: string) => {
    const links = childrenOf(0, pages).map((c, i) => {
      // /p/1 is linked plainly; the others as variants of themselves.
      const href = [`/p/${c}`, `/p/${c}/`, `/p/${c}?utm_source=home&utm_medium=link`, `/p/${c}#intro`, `${origin}/p/${c}`][i % 5];
      return `<li><a href="${href}">Section ${c}</a></li>`;
    });
    return html(
      'Crawl test site',
      `<h1>Crawl test site</h1>
<p>The home page of the crawl test site. Its ${codeWordOf('/')} is unique to it.</p>
<ul>${links.join('\n')}</ul>
<p>Also: <a href="/p/1?utm_campaign=again">page one again</a>, <a href="#top">this page</a>, <a href="/?utm_source=self">home</a>,
<a href="/about">about us</a>, <a href="/private/">the private area</a>, <a href="/loop/a">a loop</a>, <a href="/big">a very large page</a>,
<a href="/go/metadata">cloud metadata</a>, <a href="/go/internal">an internal page</a>, <a href="https://example.org/elsewhere">another site</a>.</p>`,
    );
  };

  const treePage = (k: number, origin: string) => {
    const children = childrenOf(k, pages).map((c, i) => {
      const href = [`/p/${c}`, `/p/${c}/`, `/p/${c}?utm_source=tree&utm_content=${k}`, `/p/${c}#details`][i % 4];
      return `<li><a href="${href}">Page ${c}</a></li>`;
    });
    const parent = parentOf(k);
    const parentHref = parent === 0 ? '/?utm_source=up' : `/p/${parent}/`;
    const next = (k % pages) + 1;
    const related = ((k * 37) % pages) + 1;
    const extra = k % 7 === 0 ? ` <a href="/private/notes-${k}">private notes</a>` : '';
    return html(
      `Page ${k}`,
      `<h1 id="top">Page ${k}</h1>
<p>This is page ${k} of the crawl test site, at depth ${treeDepth(k)}. Its ${codeWordOf(`/p/${k}`)} appears on no other page.</p>
<p>Up: <a href="${parentHref}">the parent page</a>. Next: <a href="${origin}/p/${next}?utm_medium=next">page ${next}</a>.
Related: <a href="/p/${related}?utm_campaign=related#top">page ${related}</a>. <a href="#top">Back to the top</a>.${extra}</p>
<ul>${children.join('\n')}</ul>`,
    );
  };

  const aboutPage = (origin: string) =>
    html(
      'About',
      `<h1>About</h1>
<p>About the crawl test site. Its ${codeWordOf('/about')} is unique to it.</p>
<ul>
<li><a href="http://169.254.169.254/latest/meta-data/">instance metadata</a></li>
<li><a href="http://10.0.0.1/admin">the router</a></li>
<li><a href="http://127.0.0.1:${port}/latest/meta-data/">this machine by address</a></li>
<li><a href="https://example.org/about">an off-site page</a></li>
<li><a href="mailto:someone@example.org">write to us</a></li>
<li><a href="javascript:void(0)">a script link</a></li>
<li><a href="${origin}/">home, absolute</a></li>
</ul>`,
    );

  const urlset = (origin: string, entries: string[]) =>
    `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
${entries.map((path) => `<url><loc>${origin}${path.replace(/&/g, '&amp;')}</loc><lastmod>2026-01-01</lastmod></url>`).join('\n')}
</urlset>
`;

  const listed = Array.from({ length: pages }, (_, i) => i + 1).filter(inSitemap);
  const half = Math.ceil(listed.length / 2);
  const plainEntries = (): string[] => ['/', ...listed.slice(0, half).map((k) => `/p/${k}`), '/p/1?utm_source=sitemap'];
  const gzipEntries = (): string[] => [...listed.slice(half).map((k) => `/p/${k}`), `/p/${listed[listed.length - 1]}?utm_source=sitemap&utm_medium=gz`, '/private/from-sitemap'];

  const answer = (path: string, origin: string): { status: number; headers: Record<string, string>; body: string | Buffer } => {
    const page = (body: string) => ({ status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body });
    const key = pageKey(path);
    if (key === '/') return page(homePage(origin));
    if (key === '/about') return page(aboutPage(origin));
    const tree = /^\/p\/(\d+)$/.exec(key);
    if (tree && Number(tree[1]) >= 1 && Number(tree[1]) <= pages && String(Number(tree[1])) === tree[1]) return page(treePage(Number(tree[1]), origin));
    if (key === '/robots.txt') {
      const lines = ['User-agent: *', 'Disallow: /private/', ...(crawlDelay > 0 ? [`Crawl-delay: ${crawlDelay}`] : []), '', `Sitemap: ${origin}${SITEMAP_INDEX}`, ''];
      return { status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: lines.join('\n') };
    }
    if (key === SITEMAP_INDEX) {
      const body = `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>${origin}${SITEMAP_PLAIN}</loc></sitemap>
<sitemap><loc>${origin}${SITEMAP_GZIP}</loc></sitemap>
</sitemapindex>
`;
      return { status: 200, headers: { 'content-type': 'application/xml' }, body };
    }
    if (key === SITEMAP_PLAIN) return { status: 200, headers: { 'content-type': 'application/xml' }, body: urlset(origin, plainEntries()) };
    if (key === SITEMAP_GZIP) {
      let body = gzipped.get(origin);
      if (!body) gzipped.set(origin, (body = gzipSync(urlset(origin, gzipEntries()))));
      return { status: 200, headers: { 'content-type': 'application/gzip' }, body };
    }
    if (key.startsWith('/private')) return page(html('Private', '<h1>Private</h1><p>Nobody should have fetched this.</p>'));
    if (key === '/loop/a') return { status: 302, headers: { location: '/loop/b' }, body: '' };
    if (key === '/loop/b') return { status: 302, headers: { location: '/loop/a' }, body: '' };
    if (key === '/big') {
      if (!big) {
        const head = Buffer.from('<!DOCTYPE html><html><head><title>Big</title></head><body><p>');
        const tail = Buffer.from('</p></body></html>');
        big = Buffer.concat([head, Buffer.alloc(BIG_PAGE_BYTES - head.length - tail.length, 'a'), tail]);
      }
      return { status: 200, headers: { 'content-type': 'text/html; charset=utf-8' }, body: big };
    }
    if (key === '/go/metadata') return { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' }, body: '' };
    if (key === '/go/internal') return { status: 302, headers: { location: `http://127.0.0.1:${port}${CANARY}` }, body: '' };
    if (pageKey(CANARY) === key) return { status: 200, headers: { 'content-type': 'text/plain' }, body: 'ami-id\ninstance-id\niam/\n' };
    return { status: 404, headers: { 'content-type': 'text/html; charset=utf-8' }, body: html('Not found', '<h1>Not found</h1>') };
  };

  const handler: http.RequestListener = (request, response) => {
    const at = now();
    const index = count++;
    const path = request.url ?? '/';
    const host = request.headers.host ?? '';
    const key = pageKey(path);
    report({ type: 'hit', index, at, method: request.method ?? 'GET', host, path, key, userAgent: String(request.headers['user-agent'] ?? '') });
    const busy = { path };
    if (!meta.has(key)) {
      inFlight.add(busy);
      if (inFlight.size > most) {
        most = inFlight.size;
        report({ type: 'busiest', paths: [...inFlight].map((entry) => entry.path) });
      }
    }
    response.once('close', () => {
      inFlight.delete(busy);
      report({ type: 'done', index, at: now() });
    });
    request.resume();
    const origin = `http://${host || `localhost:${port}`}`;
    const send = () => {
      try {
        const { status, headers, body } = answer(path, origin);
        response.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
        response.end(request.method === 'HEAD' ? undefined : body);
      } catch (error) {
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end(String(error));
      }
    };
    if (latencyMs > 0) setTimeout(send, latencyMs);
    else send();
  };

  const v4 = http.createServer(handler);
  await new Promise<void>((resolve) => v4.listen(0, '127.0.0.1', resolve));
  port = (v4.address() as AddressInfo).port;
  const v6 = http.createServer(handler);
  const v6Listening = await new Promise<boolean>((resolve) => {
    v6.once('error', () => resolve(false));
    v6.listen(port, '::1', () => resolve(true));
  });
  const servers = v6Listening ? [v4, v6] : [v4];
  commands.on('message', (command) => {
    if (command.type === 'flush') {
      report({ type: 'flushed', id: command.id });
    } else {
      void Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      ).then(() => report({ type: 'closed' }));
    }
  });
  report({ type: 'listening', port });
}

if (!isMainThread && (workerData as { crawlSite?: SiteConfig } | null)?.crawlSite && parentPort) {
  const channel = parentPort;
  await serveSite((workerData as { crawlSite: SiteConfig }).crawlSite, (message) => channel.postMessage(message), channel);
}

// ---- Reading a job back over the HTTP API (crawl and batch tests) ------------------------------

export type JobKind = 'crawl' | 'batch';

/** Statuses a job never leaves (contract §9). */
export const FINAL_JOB_STATUSES = ['completed', 'cancelled', 'failed', 'stopped_no_credits'] as const;

/** Laravel-8-style timestamp: ISO 8601 UTC with microseconds (contract §1). */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export interface JobPage {
  url: string;
  status_code: number;
  content: string;
  links?: string[];
}

export interface JobAnswer {
  id: string;
  status: string;
  total: number;
  completed: number;
  credits_used: number;
  created_at: string;
  expires_at: string;
  data: JobPage[];
  next: string | null;
}

/** GET `url` (a job's URL, or a `next` link) with the token: the status and the parsed body. */
export async function getJson(url: string, token: string, method = 'GET'): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(url, { method, headers: { accept: 'application/json', authorization: `Bearer ${token}` } });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text };
}

/** GET /v1/<kind>/<id> on `base`; fails unless it answers 200. */
export async function readJob(base: string, kind: JobKind, id: string, token: string): Promise<JobAnswer> {
  const r = await getJson(`${base}/v1/${kind}/${id}`, token);
  if (r.status !== 200) throw new Error(`GET /v1/${kind}/${id} answered ${r.status}: ${r.text.slice(0, 500)}`);
  return r.body as JobAnswer;
}

/**
 * Polls the job until `until` holds (by default: a final status), every 250 ms, for at most
 * `timeoutMs`; the timeout's error tells the last status seen.
 */
export async function waitForJob(
  base: string,
  kind: JobKind,
  id: string,
  token: string,
  timeoutMs: number,
  until: (job: JobAnswer) => boolean = (job) => (FINAL_JOB_STATUSES as readonly string[]).includes(job.status),
): Promise<JobAnswer> {
  const deadline = Date.now() + timeoutMs;
  let last: JobAnswer | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await readJob(base, kind, id, token);
      if (until(last)) return last;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const seen = last ? `status ${last.status}, completed ${last.completed}, credits_used ${last.credits_used}` : `no answer (${String(lastError)})`;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${kind} ${id}: ${seen}`);
}

/**
 * Every result of a job, following `next` from the first answer to the last. Checks the paging
 * contract on the way: at most 100 pages per answer, `next` the absolute URL of the same job with
 * `skip` advanced by what was answered, null on the last answer.
 */
export async function readAllResults(base: string, kind: JobKind, id: string, token: string): Promise<{ first: JobAnswer; answers: JobAnswer[]; data: JobPage[] }> {
  const answers: JobAnswer[] = [];
  const data: JobPage[] = [];
  let url: string | null = `${base}/v1/${kind}/${id}`;
  let skip = 0;
  while (url) {
    const r = await getJson(url, token);
    if (r.status !== 200) throw new Error(`GET ${url} answered ${r.status}: ${r.text.slice(0, 500)}`);
    const answer = r.body as JobAnswer;
    if (!Array.isArray(answer.data)) throw new Error(`GET ${url}: data is not a list`);
    if (answer.data.length > 100) throw new Error(`GET ${url}: ${answer.data.length} pages in one answer (at most 100)`);
    answers.push(answer);
    data.push(...answer.data);
    skip += answer.data.length;
    if (answer.next !== null) {
      const next = new URL(answer.next);
      if (next.pathname !== `/v1/${kind}/${id}`) throw new Error(`next ${answer.next} is not this job's URL`);
      if (next.searchParams.get('skip') !== String(skip)) throw new Error(`next ${answer.next}: expected skip=${skip}`);
      if (answer.data.length === 0) throw new Error(`GET ${url}: an empty answer with a next link`);
    }
    url = answer.next;
    if (answers.length > 1000) throw new Error('more than 1000 answers: next never ends');
  }
  return { first: answers[0], answers, data };
}
