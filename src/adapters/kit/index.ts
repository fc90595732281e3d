/** The adapter kit: what every upstream adapter is made of and run by. */
export { createUpstreamRuntime, decodedResponse, describeError, redactUrls, retrying, DEFAULT_MAX_UPSTREAM_BYTES, DEFAULT_RETRY } from './runtime.ts';
export type { Attempt, BrowserSource, CallOptions, Exchange, Interceptor, RetryPolicy, Send, Upstream, UpstreamProfile, UpstreamRuntime, UpstreamRuntimeOptions } from './runtime.ts';
export { CircuitBreaker, DEFAULT_BREAKER_POLICY, MemoryBreakerStore, RedisBreakerStore, transition } from './breaker.ts';
export type { BreakerPolicy, BreakerRedisClient, BreakerStore, CircuitState } from './breaker.ts';
export type { Adapter, CallContext, CallOutcome, ParseOutcome, RequestContext, RuntimeEvent, UpstreamLogger, UpstreamMethod, UpstreamRequest, UpstreamResponse, Verdict } from './types.ts';
export { VERDICTS } from './types.ts';
export { declaredCharset, decodeBody, headerValue } from './decode.ts';
