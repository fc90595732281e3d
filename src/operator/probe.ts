/**
 * `gleaner upstreams probe`: one fixed, harmless call per configured upstream, made now from this
 * process through the same runtime the server uses (so the same adapters, parsers and outbound
 * rules), and the verdict of each. An operator runs it after a deploy, or from cron, to see which
 * upstream blocks us and which parser drifted (`changed`). Nothing is billed or recorded.
 */
import type { Config } from '../config.ts';
import { createCapabilities } from '../capabilities.ts';
import { outboundCapability } from '../outbound/config.ts';
import { describeError, redactUrls } from '../adapters/kit/runtime.ts';
import type { Verdict } from '../core/upstream-events.ts';

export interface ProbeResult {
  upstream: string;
  operation: string;
  verdict: Verdict;
  status: number | null;
  duration_ms: number;
  /** Why it is not `ok` (URLs cut to their origin). */
  reason: string | null;
}

export async function probeUpstreams(config: Config, options: { timeoutMs?: number } = {}): Promise<ProbeResult[]> {
  const outbound = outboundCapability.start(config.outbound);
  try {
    const capabilities = await createCapabilities(config, { outbound });
    try {
      const probes = capabilities.probes();
      // All at once: a slow upstream does not hold the others' verdicts back.
      return await Promise.all(
        probes.map(async (probe): Promise<ProbeResult> => {
          const started = performance.now();
          const signal = AbortSignal.timeout(options.timeoutMs ?? 60_000);
          let verdict: Verdict;
          let status: number | null = null;
          let reason: string | null = null;
          try {
            const outcome = await probe.run({ signal });
            verdict = outcome.kind;
            status = outcome.status ?? null;
            reason = 'reason' in outcome && outcome.reason ? redactUrls(outcome.reason) : null;
          } catch (error) {
            // Only the probe's own time limit aborts a call here; anything else thrown is a failure to call.
            verdict = signal.aborted ? 'timeout' : 'unreachable';
            reason = describeError(error);
          }
          return { upstream: probe.upstream, operation: probe.operation, verdict, status, duration_ms: Math.round(performance.now() - started), reason };
        }),
      );
    } finally {
      await capabilities.close();
    }
  } finally {
    await outboundCapability.close(outbound);
  }
}
