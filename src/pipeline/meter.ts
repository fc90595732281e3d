/**
 * Billing by units: the only place where prices become credits. A row declares its product, the
 * price-table operation its units cost and how many units to hold up front; the handler grows
 * the hold in units when the work reveals its size (`cover`) and may report fewer units used.
 * This class reads the prices, sizes the hold, extends it and computes the capture.
 */
import { httpErrors, type HttpError } from '../core/errors.ts';
import { price, type Operation, type PriceTable } from '../credits/prices.ts';
import type { CreditLedger } from '../credits/ledger.ts';
import type { Billing, Meter } from './endpoint.ts';

interface MeterOptions {
  billing: Billing<Record<string, unknown>> | undefined;
  input: Record<string, unknown>;
  prices: PriceTable;
  ledger: Pick<CreditLedger, 'hold' | 'extend' | 'balance'>;
  requestId: string;
  userId: number;
  /** The route, for messages about a handler that broke the billing rules. */
  route: string;
}

export class RequestMeter implements Meter {
  readonly #options: MeterOptions;
  /** The row's operation for this request. */
  readonly #rowOperation: Operation | undefined;
  /** Units held per operation, and the credits they hold (the ledger's one hold for the request). */
  readonly #units = new Map<Operation, number>();
  readonly #credits = new Map<Operation, number>();
  #holdTaken = false;

  constructor(options: MeterOptions) {
    this.#options = options;
    const operation = options.billing?.operation;
    this.#rowOperation = typeof operation === 'function' ? operation(options.input) : operation;
  }

  /** Credits held for this request, all operations together. */
  get heldCredits(): number {
    let total = 0;
    for (const credits of this.#credits.values()) total += credits;
    return total;
  }

  /** Takes the row's up-front hold: 403 when the balance is below its least amount. */
  async holdUpFront(): Promise<void> {
    const { billing, input } = this.#options;
    if (!billing) return;
    const wanted = billing.units?.(input) ?? 1;
    const range = typeof wanted === 'number' ? { min: wanted, max: wanted } : wanted;
    const operation = this.#operation();
    const unitPrice = this.#price(operation);
    const credits = (units: number) => (billing.credits ? billing.credits(units, unitPrice, input) : units * unitPrice);
    const min = credits(range.min);
    const max = credits(range.max);
    // A price of 0 makes the operation free: nothing to hold.
    if (max <= 0) return;
    const held = await this.#options.ledger.hold({ requestId: this.#options.requestId, userId: this.#options.userId, product: billing.product, min, max });
    if (held === 0) throw await this.#refusal(min);
    this.#holdTaken = true;
    this.#credits.set(operation, held);
    // A range hold keeps what the balance allowed: that many whole units (the price is linear there).
    this.#units.set(operation, held === max ? range.max : Math.floor(held / unitPrice));
  }

  held(operation?: Operation): number {
    return this.#units.get(this.#operation(operation)) ?? 0;
  }

  async cover(total: number, operation?: Operation): Promise<void> {
    const op = this.#operation(operation);
    if (!Number.isInteger(total) || total < 0) throw new RangeError(`${this.#options.route}: cannot cover ${total} units of ${op}.`);
    const missing = total - this.held(op);
    if (missing <= 0) return;
    const credits = missing * this.#price(op);
    if (credits > 0) {
      const { ledger, requestId, userId } = this.#options;
      const product = this.#billing().product;
      if (this.#holdTaken) {
        // The ledger grows a request's hold once: a row needs at most one growth after its first hold.
        const grown = await ledger.extend(requestId, credits);
        if (grown === 0) throw await this.#refusal(this.heldCredits + credits);
      } else {
        const held = await ledger.hold({ requestId, userId, product, min: credits, max: credits });
        if (held === 0) throw await this.#refusal(this.heldCredits + credits);
        this.#holdTaken = true;
      }
      this.#credits.set(op, (this.#credits.get(op) ?? 0) + credits);
    }
    this.#units.set(op, total);
  }

  async shortOf(units: number, operation?: Operation): Promise<HttpError> {
    return this.#refusal(units * this.#price(this.#operation(operation)));
  }

  /**
   * The 403 for a request that needs `required` credits in all: it names the product and the
   * balance the caller had before this request (what it holds is counted back in).
   */
  async #refusal(required: number): Promise<HttpError> {
    const product = this.#billing().product;
    const available = (await this.#options.ledger.balance(this.#options.userId, product).catch(() => null)) ?? 0;
    return httpErrors.insufficientCredits({ product, required, balance: available + this.heldCredits });
  }

  async affordable(operation?: Operation): Promise<number> {
    const op = this.#operation(operation);
    const unitPrice = this.#price(op);
    if (unitPrice === 0) return Number.POSITIVE_INFINITY;
    const balance = (await this.#options.ledger.balance(this.#options.userId, this.#billing().product)) ?? 0;
    return this.held(op) + Math.floor(balance / unitPrice);
  }

  /**
   * Credits to capture for a success: everything held, or, when the handler reports it used
   * fewer units of the row's operation, what those cost plus the other operations' holds.
   * A report of more units than were held is a fault (answered 500, nothing charged).
   */
  charge(usedUnits?: number): number {
    const billing = this.#options.billing;
    const all = this.heldCredits;
    if (!billing || usedUnits === undefined) return all;
    const held = this.#credits.get(this.#operation()) ?? 0;
    const unitPrice = this.#price(this.#operation());
    const used = billing.credits ? billing.credits(usedUnits, unitPrice, this.#options.input) : usedUnits * unitPrice;
    if (!Number.isInteger(usedUnits) || usedUnits < 0 || used > held) {
      throw new Error(`${this.#options.route} reported ${usedUnits} units used with ${this.held()} held.`);
    }
    return all - held + used;
  }

  #billing(): Billing<Record<string, unknown>> {
    const billing = this.#options.billing;
    if (!billing) throw new Error(`${this.#options.route} is not billed: it has no credits to grow.`);
    return billing;
  }

  #operation(operation?: Operation): Operation {
    if (operation) return operation;
    this.#billing();
    return this.#rowOperation as Operation;
  }

  #price(operation: Operation): number {
    return price(this.#options.prices, operation);
  }
}
