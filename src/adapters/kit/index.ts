/** The adapter kit: what every upstream adapter is made of and run by. */
export { createUpstreamRunner, describeError, DEFAULT_MAX_UPSTREAM_BYTES } from './runner.ts';
export type { BrowserSource, FetchOptions, RunOutcome, UpstreamLogger, UpstreamRunner, UpstreamRunnerOptions } from './runner.ts';
export type { Adapter, ParseOutcome, RequestContext, UpstreamMethod, UpstreamRequest, UpstreamResponse, Verdict } from './types.ts';
export { declaredCharset, decodeBody, headerValue } from './decode.ts';
