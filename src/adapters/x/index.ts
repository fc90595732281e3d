/** Public entry of the microblog (X) adapter behind the /v1/mb* endpoints. */
export { xCapability, X_DEFAULT_URLS } from './capability.ts';
export type { Microblog, XDeps, XSettings } from './capability.ts';
export { XClient } from './client.ts';
export type { CallContext, XResult } from './client.ts';
export { PageTokens, searchScope, userScope } from './page-token.ts';
export type { PageDirection, PageTokenCheck } from './page-token.ts';
export { SEARCH_PRODUCTS } from './types.ts';
export type { MicroblogUser, PostItem, PostMedia, SearchProduct, TimelinePage } from './types.ts';
