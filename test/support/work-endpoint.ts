/**
 * A billed endpoint that exists only in tests: it exercises the metered pipeline with work
 * whose outcome, duration and cost the test chooses.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { httpErrors } from '../../src/core/errors.ts';
import { integer, min, oneOf, string } from '../../src/validation/rules.ts';
import { defineEndpoint } from '../../src/pipeline/endpoint.ts';
import { ENDPOINTS } from '../../src/endpoints/table.ts';

export const workEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/test/work',
  summary: 'Test work',
  tag: 'Test',
  input: 'body',
  schema: {
    fields: {
      cost: { rules: [integer(), min(1)], default: 1 },
      max: { rules: [integer(), min(1)] },
      charge: { rules: [integer(), min(0)] },
      outcome: { rules: [string(), oneOf(['ok', 'fail', 'throw', 'upstream', 'overcharge'])], default: 'ok' },
      delay_ms: { rules: [integer(), min(0)], default: 0 },
      secret_key: { rules: [string()], secret: true },
      /** Free text the work ignores: it is only recorded in history. */
      note: { rules: [string()] },
    },
  },
  // Units of `web` (1 credit each by default), so units and credits are the same numbers here.
  billing: {
    product: 'scraping',
    operation: 'web',
    units: (input) => (input.max ? { min: input.cost, max: input.max } : input.cost),
  },
  history: true,
  success: { status: 200, description: 'Done.' },
  async handler({ input, signal, meter }) {
    const held = meter.held();
    if (input.delay_ms) {
      try {
        await sleep(input.delay_ms, undefined, { signal });
      } catch (error) {
        // As a download cut short by the abort reports itself.
        if (input.outcome === 'fail') throw httpErrors.badRequest('Unable to download the file.');
        throw error;
      }
    }
    switch (input.outcome) {
      case 'fail':
        throw httpErrors.badRequest('Unable to download the file.');
      case 'throw':
        throw new Error('internal detail that must not leak');
      case 'upstream':
        throw httpErrors.badGateway('The search engine did not answer, please retry.');
      case 'overcharge':
        return { body: { ok: true }, units: held + 1 };
      default:
        return { body: { ok: true, held }, units: input.charge };
    }
  },
});

export const TEST_ENDPOINTS = [...ENDPOINTS, workEndpoint];
