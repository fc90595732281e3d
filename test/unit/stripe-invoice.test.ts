/** Reading a Stripe invoice: the paying customer, and the plans its lines name through metadata. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { invoiceCustomer, plansNamedByInvoice } from '../../src/billing/stripe-invoice.ts';

const invoice = (...lines: unknown[]) => ({ object: 'invoice', customer: 'cus_A', lines: { object: 'list', data: lines, has_more: false } });
/** A line as API versions before 2025-03-31 send it: the price, with its metadata, on the line. */
const classicLine = (metadata: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  id: 'il_1',
  object: 'line_item',
  amount: 5000,
  metadata: {},
  price: { id: 'price_1', object: 'price', metadata },
  ...extra,
});
const named = (i: ReturnType<typeof invoice>) => plansNamedByInvoice(i).plans.map((p) => [p.product, p.plan.name, p.plan.credits]);

describe('invoiceCustomer', () => {
  test('an id, or the expanded customer object', () => {
    assert.equal(invoiceCustomer({ customer: 'cus_A' }), 'cus_A');
    assert.equal(invoiceCustomer({ customer: { id: 'cus_B', object: 'customer' } }), 'cus_B');
    assert.equal(invoiceCustomer({ customer: null }), null);
    assert.equal(invoiceCustomer({ customer: '' }), null);
    assert.equal(invoiceCustomer({}), null);
    assert.equal(invoiceCustomer({ customer: { object: 'customer' } }), null);
  });
});

describe('plansNamedByInvoice', () => {
  test('price metadata names the product and plan (case-insensitive, trimmed)', () => {
    const paid = invoice(classicLine({ gleaner_product: 'Scraping', gleaner_plan: ' Growth ' }));
    assert.deepEqual(plansNamedByInvoice(paid).problems, []);
    assert.deepEqual(named(paid), [['scraping', 'growth', 55_000]]);
  });

  test('newer API versions: the expanded price under pricing.price_details, or the line metadata', () => {
    const expanded = {
      id: 'il_2',
      amount: 1000,
      metadata: {},
      pricing: { type: 'price_details', price_details: { price: { id: 'price_2', metadata: { gleaner_product: 'extraction', gleaner_plan: 'starter' } }, product: 'prod_2' } },
    };
    const onLine = {
      id: 'il_3',
      amount: 1000,
      metadata: { gleaner_product: 'blockchain', gleaner_plan: 'scale' },
      pricing: { type: 'price_details', price_details: { price: 'price_3', product: 'prod_3' } },
    };
    assert.deepEqual(named(invoice(expanded, onLine)), [
      ['extraction', 'starter', 10_000],
      ['blockchain', 'scale', 1_250_000],
    ]);
  });

  test('price metadata wins over line metadata', () => {
    const line = classicLine({ gleaner_product: 'scraping', gleaner_plan: 'business' }, { metadata: { gleaner_product: 'scraping', gleaner_plan: 'starter' } });
    assert.deepEqual(named(invoice(line)), [['scraping', 'business', 115_000]]);
  });

  test('lines without the keys name nothing; no lines at all is no plan either', () => {
    assert.deepEqual(plansNamedByInvoice(invoice(classicLine({ other: 'x' }), { id: 'il_tax', amount: 100 })), { plans: [], problems: [] });
    assert.deepEqual(plansNamedByInvoice({ customer: 'cus_A' }), { plans: [], problems: [] });
    assert.deepEqual(plansNamedByInvoice({ lines: { data: 'nope' } }), { plans: [], problems: [] });
  });

  test('a plan change: the credit for unused time (negative line) is skipped, the new plan counts', () => {
    const unused = classicLine({ gleaner_product: 'scraping', gleaner_plan: 'growth' }, { id: 'il_old', amount: -2500, proration: true });
    const remaining = classicLine({ gleaner_product: 'scraping', gleaner_plan: 'business' }, { id: 'il_new', amount: 5000, proration: true });
    assert.deepEqual(named(invoice(unused, remaining)), [['scraping', 'business', 115_000]]);
  });

  test('the same plan on two lines counts once; two products both count', () => {
    const a = classicLine({ gleaner_product: 'scraping', gleaner_plan: 'growth' });
    const b = classicLine({ gleaner_product: 'extraction', gleaner_plan: 'growth' });
    assert.deepEqual(named(invoice(a, a, b)), [
      ['scraping', 'growth', 55_000],
      ['extraction', 'growth', 55_000],
    ]);
  });

  test('metadata that names no valid product and plan is a problem, each described', () => {
    const result = plansNamedByInvoice(
      invoice(
        classicLine({ gleaner_product: 'gold', gleaner_plan: 'growth' }, { id: 'il_a' }),
        classicLine({ gleaner_product: 'extraction', gleaner_plan: 'scale' }, { id: 'il_b' }),
        classicLine({ gleaner_plan: 'growth' }, { id: 'il_c' }),
        classicLine({ gleaner_product: 'scraping' }, { id: 'il_d' }),
        classicLine({ gleaner_product: 'scraping', gleaner_plan: 'growth' }, { id: 'il_e' }),
        classicLine({ gleaner_product: 'scraping', gleaner_plan: 'business' }, { id: 'il_f' }),
      ),
    );
    assert.deepEqual(result.problems, [
      'line 1 (il_a): gleaner_product "gold" is not one of scraping, extraction, blockchain',
      'line 2 (il_b): extraction has no plan "scale" (starter, growth, business, enterprise)',
      'line 3 (il_c): gleaner_plan is set but gleaner_product is missing',
      'line 4 (il_d): gleaner_product is set but gleaner_plan is missing',
      'line 6 (il_f): names scraping plan business, an earlier line names growth',
    ]);
  });
});
