export { createBrowserPool, POOL_DEFAULTS } from './pool.ts';
export { isBrowserAvailable } from './availability.ts';
export { browserCapability, browserPoolOptionsFromEnv, BROWSER_DEFAULTS } from './config.ts';
export { DEFAULT_CHROMIUM_PATH } from './launch.ts';
export type { BrowserPool, BrowserPoolOptions, BrowserPoolStats, BrowserRequest, FetchPageResult, RenderOptions } from './types.ts';
