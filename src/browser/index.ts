export { createBrowserPool, POOL_DEFAULTS } from './pool.ts';
export { browserStatus, isBrowserAvailable, type BrowserStatus } from './availability.ts';
export { browserCapability, browserPoolOptionsFromEnv, BROWSER_DEFAULTS } from './config.ts';
export { DEFAULT_CHROMIUM_PATH } from './launch.ts';
export { BROWSER_SANDBOX_MODES, type BrowserSandboxMode } from './sandbox.ts';
export type { BrowserPool, BrowserPoolOptions, BrowserPoolStats, BrowserRequest, FetchPageResult, RenderOptions } from './types.ts';
