/**
 * The user dashboard at /dashboard: static files (src/dashboard/public) and the chart library
 * (uPlot, from node_modules: nothing comes from a CDN), read once at start-up and served from a
 * fixed list, so no request path ever reaches the file system. Every answer carries a strict
 * Content-Security-Policy: scripts and styles from this server only, no inline code, calls to
 * this server only.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';

export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

const PUBLIC = new URL('../dashboard/public/', import.meta.url);
const resolve = createRequire(import.meta.url).resolve;

/** URL → file and type. uPlot is a small, dependency-free canvas chart library (~50 KB). */
const FILES: Array<{ url: string; path: string | URL; type: string }> = [
  { url: '/dashboard', path: new URL('index.html', PUBLIC), type: 'text/html; charset=utf-8' },
  { url: '/dashboard/assets/dashboard.js', path: new URL('dashboard.js', PUBLIC), type: 'text/javascript; charset=utf-8' },
  { url: '/dashboard/assets/dashboard.css', path: new URL('dashboard.css', PUBLIC), type: 'text/css; charset=utf-8' },
  { url: '/dashboard/vendor/uPlot.iife.min.js', path: resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  { url: '/dashboard/vendor/uPlot.min.css', path: resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' },
  { url: '/dashboard/assets/gleaner.svg', path: new URL('gleaner.svg', PUBLIC), type: 'image/svg+xml' },
  { url: '/favicon.svg', path: new URL('gleaner.svg', PUBLIC), type: 'image/svg+xml' },
];

/** gleaner's mark (a square with an ear of wheat), and the mark with the name for the docs page's top bar. */
export const BRAND = {
  mark: readFileSync(new URL('gleaner.svg', PUBLIC)),
  wordmark: readFileSync(new URL('gleaner-wordmark.svg', PUBLIC)),
};

/** /favicon.ico, which browsers ask for on any page without an icon of its own: the mark as a 32-pixel PNG, drawn once. */
let faviconPng: Promise<Buffer> | undefined;
const favicon = () => (faviconPng ??= import('sharp').then(({ default: sharp }) => sharp(BRAND.mark, { density: 96 }).resize(32, 32).png().toBuffer()));

/** Registers the dashboard's routes; `allow` records each path for the 405/Allow answers. */
export function registerDashboard(app: FastifyInstance, allow: (path: string, method: string) => void): void {
  for (const file of FILES) {
    const body = readFileSync(file.path);
    allow(file.url, 'GET');
    app.get(file.url, async (_request, reply) => reply.headers(SECURITY_HEADERS).type(file.type).send(body));
  }
  allow('/favicon.ico', 'GET');
  app.get('/favicon.ico', async (_request, reply) => reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'public, max-age=86400' }).type('image/png').send(await favicon()));
}
