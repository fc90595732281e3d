/** The price table: credits per operation (every server process uses a change within seconds). */
import { OperationError } from './errors.ts';
import { MAX_PRICE, MIN_PRICE, oneOfIssue, textIssue, wholeNumberIssue } from './rules.ts';
import type { OperationStores } from './stores.ts';

export function listPrices(stores: OperationStores): Promise<Array<{ operation: string; credits: number }>> {
  return stores.prices.list();
}

/** Only operations of the table may be priced. */
export async function setPrice(stores: OperationStores, input: { operation: string; credits: number }): Promise<{ operation: string; credits: number }> {
  const operation = typeof input.operation === 'string' ? input.operation.trim() : input.operation;
  const known = (await stores.prices.list()).map((p) => p.operation);
  OperationError.throwIfAny([
    textIssue('operation', operation, { required: true }) ?? oneOfIssue('operation', operation, known),
    wholeNumberIssue('credits', input.credits, MIN_PRICE, MAX_PRICE),
  ]);
  await stores.prices.set(operation, input.credits);
  return { operation, credits: input.credits };
}
