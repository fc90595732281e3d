/**
 * What the upstream runtime (src/adapters/kit/runtime.ts) tells its watchers: the metrics and the
 * operator's drift report. Here, in core, because those watchers sit in lower layers than the
 * adapters. Never a query, a body or a credential.
 */

/** Every verdict a call can end in (src/adapters/kit/types.ts, `CallOutcome`). */
export const VERDICTS = ['ok', 'empty', 'not_found', 'blocked', 'changed', 'timeout', 'unreachable', 'suspended'] as const;

/** The verdict of a call, for logs, metrics and the operator's drift report. */
export type Verdict = (typeof VERDICTS)[number];

/** What watchers (metrics, the drift report) are told. Never a query, a body or a credential. */
export type RuntimeEvent =
  | {
      type: 'call';
      upstream: string;
      operation: string;
      /** `aborted`: the caller went away before the call ended (not news about the upstream). */
      verdict: Verdict | 'aborted';
      /** The upstream's HTTP status, when an answer came. */
      status?: number;
      durationMs: number;
      /** Exchanges the call took (retries, token refreshes, session rotation). */
      attempts: number;
      /** When the call ended (ms since the epoch). */
      at: number;
    }
  | {
      type: 'circuit';
      upstream: string;
      /** `open`: calls are skipped until `openUntil`; `half_open`: one probe call decides; `closed`: normal. */
      state: 'open' | 'half_open' | 'closed';
      openUntil?: number;
      /** How many times in a row it opened (the back-off grows with it); 0 once closed. */
      trips: number;
      at: number;
    };
