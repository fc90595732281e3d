/**
 * GET /admin/upstreams: the upstream drift report (src/operations/upstreams.ts) for an owner
 * account's token: which upstream parser drifted, which upstream is refusing us, across every
 * server process. `gleaner upstreams` prints the same report. Unbilled, not recorded in history.
 */
import { Type } from '@sinclair/typebox';
import { attributeName } from '../validation/schema.ts';
import { defineEndpoint } from '../pipeline/endpoint.ts';
import { upstreamReport } from '../operations/index.ts';

const timestamp = Type.String({ description: 'ISO 8601 UTC with microseconds.', examples: ['2026-11-22T10:15:30.123000Z'] });
const nullableTimestamp = Type.Union([timestamp, Type.Null()]);
const status = Type.Union([Type.Integer(), Type.Null()], { description: "The upstream's HTTP status; null for `ok` and when no answer came." });
const counts = (window: string) =>
  Type.Record(Type.String(), Type.Integer({ minimum: 1 }), {
    description: `Calls per verdict in the 5-minute buckets that started within ${window}; verdicts without calls are left out.`,
  });
const mark = (what: string) =>
  Type.Union([Type.Object({ at: timestamp, status }), Type.Null()], { description: `The last call that came back \`${what}\`; null when none was recorded.` });

export const UpstreamsResponse = Type.Object({
  data: Type.Object({
    generated_at: timestamp,
    upstreams: Type.Array(
      Type.Object({
        upstream: Type.String(),
        circuit: Type.Object(
          {
            state: Type.Union([Type.Literal('closed'), Type.Literal('open'), Type.Literal('half_open')], {
              description: '`open`: calls are skipped until `open_until`; `half_open`: the next call is a probe that decides (an `open` circuit past its `open_until` shows as `half_open`).',
            }),
            open_until: nullableTimestamp,
            trips: Type.Integer({ description: 'Times in a row it opened; 0 once closed.' }),
            since: Type.Union([timestamp, Type.Null()], { description: 'When it took this state; null when no change was reported lately.' }),
          },
          { description: 'As of the last change any server process reported.' },
        ),
        operations: Type.Array(
          Type.Object({
            upstream: Type.String(),
            operation: Type.String(),
            last_verdicts: Type.Array(
              Type.Object({
                at: timestamp,
                verdict: Type.String({ description: 'ok, empty, not_found, blocked, changed, timeout, unreachable or suspended.' }),
                status,
                duration_ms: Type.Integer(),
              }),
              { description: 'Newest first, at most 20.' },
            ),
            last_hour: counts('the last hour'),
            last_day: counts('the last 24 hours'),
            last_changed: mark('changed'),
            last_blocked: mark('blocked'),
            last_seen: timestamp,
          }),
        ),
      }),
    ),
  }),
});

export const upstreamsEndpoint = defineEndpoint({
  method: 'GET',
  path: '/admin/upstreams',
  summary: 'Upstream drift report',
  description:
    'Per upstream, its circuit breaker; per operation on it, the last verdicts, the calls per verdict over the last hour and day, ' +
    'and the last `changed` (the parser cannot read the answer: the upstream changed) and `blocked` (refused) calls. ' +
    'Merged from every server process, a few seconds behind. A query field is refused (422): the report takes none.',
  tag: 'Admin',
  input: 'query',
  schema: { fields: {} },
  access: 'owner',
  history: false,
  // An ignored filter would answer more than was asked, as the other admin lists refuse it.
  async afterValidation({ input }, errors) {
    for (const name of Object.keys(input)) {
      if (name !== '_method') (errors[name] ??= []).push(`The ${attributeName(name)} field is prohibited.`);
    }
  },
  success: {
    status: 200,
    description: 'The report, upstreams and operations by name.',
    schema: UpstreamsResponse,
    example: {
      data: {
        generated_at: '2026-11-22T10:15:30.123000Z',
        upstreams: [
          {
            upstream: 'bing',
            circuit: { state: 'open', open_until: '2026-11-22T10:16:00.000000Z', trips: 2, since: '2026-11-22T10:15:00.000000Z' },
            operations: [
              {
                upstream: 'bing',
                operation: 'search',
                last_verdicts: [
                  { at: '2026-11-22T10:14:59.500000Z', verdict: 'blocked', status: 429, duration_ms: 312 },
                  { at: '2026-11-22T10:14:02.100000Z', verdict: 'ok', status: 200, duration_ms: 840 },
                ],
                last_hour: { ok: 41, blocked: 3 },
                last_day: { ok: 977, blocked: 3, changed: 1 },
                last_changed: { at: '2026-11-21T18:02:11.000000Z', status: 200 },
                last_blocked: { at: '2026-11-22T10:14:59.500000Z', status: 429 },
                last_seen: '2026-11-22T10:14:59.500000Z',
              },
            ],
          },
        ],
      },
    },
  },
  async handler({ services }) {
    return { body: { data: await upstreamReport(services.operations) } };
  },
});
