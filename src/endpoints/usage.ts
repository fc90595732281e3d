/**
 * GET /usage: what the caller spent, per UTC day and product, over the last `days` days (the
 * dashboard's chart), with each balance's plan. Unbilled and not recorded in history.
 */
import { Type } from '@sinclair/typebox';
import { between, integer } from '../validation/rules.ts';
import { defineEndpoint } from '../pipeline/endpoint.ts';
import { findPlan } from '../credits/plans.ts';
import { isProduct } from '../credits/products.ts';

const day = Type.String({ format: 'date', description: 'A UTC day, YYYY-MM-DD.' });

export const UsageResponse = Type.Object({
  days: Type.Integer({ description: 'Days covered, today (UTC) included.' }),
  from: day,
  to: day,
  products: Type.Array(
    Type.Object({
      product: Type.String(),
      balance: Type.Integer(),
      plan: Type.Union([Type.String(), Type.Null()], { description: 'The monthly plan, null when none.' }),
      monthly_credits: Type.Union([Type.Integer(), Type.Null()], { description: "The plan's credits per renewal (balances are reset to it, no roll-over)." }),
    }),
  ),
  data: Type.Array(
    Type.Object({
      date: day,
      product: Type.String(),
      requests: Type.Integer({ description: 'Requests recorded in history, failures included.' }),
      credits: Type.Integer({ description: 'Credits charged, refunds deducted; includes what wallet monitors were charged (delivered events, daily address fees), which are not requests.' }),
    }),
    { description: 'Days without requests are left out.' },
  ),
});

export const usageEndpoint = defineEndpoint({
  method: 'GET',
  path: '/usage',
  operationId: 'getUsage',
  summary: 'Credits and requests per day',
  description: 'Per UTC day and product, from the request history and the credit ledger; `products` gives each balance with its plan.',
  tag: 'Account',
  input: 'query',
  schema: { fields: { days: { rules: [integer(), between(1, 366)], default: 30, description: 'How many days back, today included.' } } },
  history: false,
  success: {
    status: 200,
    description: 'Usage of the window, oldest day first.',
    schema: UsageResponse,
    example: {
      days: 30,
      from: '2026-10-24',
      to: '2026-11-22',
      products: [{ product: 'scraping', balance: 9990, plan: 'starter', monthly_credits: 10000 }],
      data: [{ date: '2026-11-22', product: 'scraping', requests: 4, credits: 10 }],
    },
  },
  async handler({ input, user, services }) {
    const now = new Date();
    const usage = await services.history.usage(user.id, input.days, now);
    return {
      body: {
        days: input.days,
        from: usage.since.toISOString().slice(0, 10),
        to: now.toISOString().slice(0, 10),
        products: usage.plans.map((p) => ({
          ...p,
          monthly_credits: p.plan && isProduct(p.product) ? (findPlan(p.product, p.plan)?.credits ?? null) : null,
        })),
        data: usage.daily,
      },
    };
  },
});
