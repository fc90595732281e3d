/**
 * A billed endpoint that exists only in tests: it exercises the metered pipeline with work
 * whose outcome, duration and cost the test chooses.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { httpErrors } from '../../src/http/errors.ts';
import { integer, min, oneOf, string } from '../../src/validation/rules.ts';
import type { Endpoint } from '../../src/endpoints/types.ts';
import { ENDPOINTS } from '../../src/endpoints/table.ts';

export const workEndpoint: Endpoint<{ cost: number; max?: number; charge?: number; outcome: string; delay_ms: number; secret_key?: string }> = {
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
    },
  },
  billing: {
    product: 'scraping',
    cost: (input) => (input.max ? { min: input.cost, max: input.max } : input.cost),
  },
  history: true,
  success: { status: 200, description: 'Done.' },
  async handler({ input, signal, held }) {
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
        return { body: { ok: true }, cost: held + 1 };
      default:
        return { body: { ok: true, held }, cost: input.charge };
    }
  },
};

export const TEST_ENDPOINTS = [...ENDPOINTS, workEndpoint];
