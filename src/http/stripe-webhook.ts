/**
 * `POST /webhooks/stripe`: Stripe reports a paid invoice and the paying user's plans are renewed
 * (docs/spec/contract.md §3). Not an API endpoint: no bearer token, not metered, not in the endpoint table.
 *
 * - The signature is checked on the exact bytes received (the route has its own raw-body parser,
 *   inside its own Fastify scope, so the server's JSON parser is untouched): 400 when it fails.
 * - `invoice.paid`: one transaction records the event id and renews; a redelivered event finds its
 *   id and changes nothing. A database failure answers 500, nothing is half-done, Stripe retries.
 * - Everything else a correctly signed event can be answers 200, so Stripe stops retrying what
 *   retrying cannot fix. An invoice of a customer no user is linked to is not recorded: once the
 *   operator links the customer, resending the event from the Stripe dashboard renews.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { httpErrors, MESSAGES } from '../core/errors.ts';
import { assignPlan, renewPlans, type Renewal } from '../credits/renewal.ts';
import { invoiceCustomer, plansNamedByInvoice } from '../billing/stripe-invoice.ts';
import { isObject, type Json } from '../core/json.ts';
import { verifyStripeSignature } from '../billing/stripe-signature.ts';
import type { StripeWebhookConfig } from '../config.ts';
import type { InFlight } from './in-flight.ts';
import type { Services } from '../services.ts';

export const STRIPE_WEBHOOK_PATH = '/webhooks/stripe';

/** What a delivery of `invoice.paid` came to. */
export type InvoicePaidOutcome =
  | { kind: 'duplicate' }
  | { kind: 'unlinked'; customer: string | null }
  | { kind: 'misconfigured'; user: number; problems: string[] }
  | { kind: 'renewed'; user: number; renewed: Renewal[]; fromLines: boolean };

/** Thrown inside the transaction to roll back the event's row: the event stays unrecorded. */
class NotRecorded extends Error {
  readonly outcome: InvoicePaidOutcome;

  constructor(outcome: InvoicePaidOutcome) {
    super('not recorded');
    this.outcome = outcome;
  }
}

/** The text stored in `stripe_events.outcome`. */
function describe(outcome: InvoicePaidOutcome): string {
  switch (outcome.kind) {
    case 'misconfigured':
      return `configuration error, nothing renewed for user ${outcome.user}: ${outcome.problems.join('; ')}`;
    case 'renewed':
      if (outcome.renewed.length === 0) return `nothing to renew: user ${outcome.user} has no plan`;
      return `renewed for user ${outcome.user}: ${outcome.renewed.map((r) => `${r.product} ${r.plan} ${r.balance} credits`).join('; ')}`;
    case 'unlinked':
      return outcome.customer ? `customer ${outcome.customer} is not linked to a user` : 'the invoice names no customer';
    case 'duplicate':
      return 'already received';
  }
}

/**
 * Handles one `invoice.paid` event in one transaction: records its id (a duplicate stops here),
 * finds the linked user, then assigns and renews the plans the invoice's lines name, or, when no
 * line names one, renews every plan the user has.
 */
export async function handleInvoicePaid(services: Pick<Services, 'db' | 'ledger'>, eventId: string, invoice: Json): Promise<InvoicePaidOutcome> {
  try {
    return await services.db.transaction(async (tx) => {
      const inserted = await tx.query(
        `INSERT INTO stripe_events (event_id, type, outcome) VALUES ($1, 'invoice.paid', 'processing')
         ON CONFLICT (event_id) DO NOTHING RETURNING event_id`,
        [eventId],
      );
      if (inserted.length === 0) return { kind: 'duplicate' } as const;

      const customer = invoiceCustomer(invoice);
      const [user] = customer ? await tx.query<{ id: number }>('SELECT id FROM users WHERE stripe_customer_id = $1', [customer]) : [];
      if (!user) throw new NotRecorded({ kind: 'unlinked', customer });
      const userId = Number(user.id);

      const named = plansNamedByInvoice(invoice);
      let outcome: InvoicePaidOutcome;
      if (named.problems.length > 0) {
        outcome = { kind: 'misconfigured', user: userId, problems: named.problems };
      } else if (named.plans.length > 0) {
        const renewed: Renewal[] = [];
        for (const { product, plan } of named.plans) renewed.push(await assignPlan(services.ledger, userId, product, plan, tx));
        outcome = { kind: 'renewed', user: userId, renewed, fromLines: true };
      } else {
        outcome = { kind: 'renewed', user: userId, renewed: await renewPlans(services.ledger, { userId }, tx), fromLines: false };
      }
      await tx.query('UPDATE stripe_events SET outcome = $2 WHERE event_id = $1', [eventId, describe(outcome)]);
      return outcome;
    });
  } catch (error) {
    if (error instanceof NotRecorded) return error.outcome;
    throw error;
  }
}

async function deliver(request: FastifyRequest, services: Services, config: StripeWebhookConfig, inFlight: InFlight) {
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const check = verifyStripeSignature(raw, request.headers['stripe-signature'], { secret: config.secret, toleranceSeconds: config.toleranceSeconds });
  if (!check.ok) {
    request.log.warn({ reason: check.reason }, 'refused a Stripe webhook delivery: %s', check.message);
    throw httpErrors.badRequest(check.message);
  }

  let event: unknown;
  try {
    event = JSON.parse(raw.toString('utf8'));
  } catch {
    throw httpErrors.badRequest(MESSAGES.invalidJson);
  }
  if (!isObject(event) || typeof event.id !== 'string' || event.id === '' || typeof event.type !== 'string') {
    throw httpErrors.badRequest('The body is not a Stripe event (no id or type).');
  }
  if (event.type !== 'invoice.paid') return { received: true, ignored: `event type ${event.type}` };
  const invoice = isObject(event.data) && isObject(event.data.object) ? event.data.object : null;
  if (!invoice) throw httpErrors.badRequest('The invoice.paid event carries no invoice (data.object).');

  // Counted with the requests in flight, so a shutdown waits for its transaction.
  const untrack = inFlight.track(new AbortController());
  let outcome: InvoicePaidOutcome;
  try {
    outcome = await handleInvoicePaid(services, event.id, invoice);
  } finally {
    untrack();
  }

  const log = { stripeEvent: event.id, outcome: outcome.kind };
  switch (outcome.kind) {
    case 'duplicate':
      request.log.info(log, 'Stripe event already received; nothing changed');
      return { received: true, duplicate: true };
    case 'unlinked': {
      const reason = describe(outcome);
      request.log.warn(
        { ...log, customer: outcome.customer },
        'Stripe invoice.paid not applied: %s; link it (gleaner users link-stripe) and resend the event from the Stripe dashboard',
        reason,
      );
      return { received: true, ignored: reason };
    }
    case 'misconfigured': {
      const reason = describe(outcome);
      request.log.warn({ ...log, user: outcome.user }, 'Stripe invoice.paid not applied: %s; fix the price metadata, then gleaner plans assign', reason);
      return { received: true, ignored: reason };
    }
    case 'renewed':
      if (outcome.renewed.length === 0) request.log.warn({ ...log, user: outcome.user }, 'Stripe invoice.paid: %s', describe(outcome));
      else request.log.info({ ...log, user: outcome.user, renewed: outcome.renewed }, 'Stripe invoice.paid: plans renewed');
      return { received: true, renewed: outcome.renewed };
  }
}

/**
 * Adds the route in its own scope: the raw-body parser below replaces the server's parsers there
 * only. Error answers (400, 500) go through the server's error handler as for any route.
 */
export async function registerStripeWebhook(app: FastifyInstance, services: Services, options: { config: StripeWebhookConfig; inFlight: InFlight }): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    scope.post(STRIPE_WEBHOOK_PATH, (request) => deliver(request, services, options.config, options.inFlight));
  });
}
