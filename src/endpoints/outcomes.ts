/**
 * What an adapter's outcome answers, for the endpoints whose clients return `{kind, value}`
 * outcomes (microblog, video): the value, or the contract's 404 / 503 / 502. Free answers all:
 * the pipeline charges only a success.
 */
import { httpErrors } from '../core/errors.ts';

/** The value an outcome union carries in its `ok` member. */
type OkValue<O> = O extends { kind: 'ok'; value: infer T } ? T : never;

/** ok → the value; not found → 404; not configured → 503; anything else → 502 (the runtime has logged why). */
export function settle<O extends { kind: string }>(outcome: O): OkValue<O> {
  switch (outcome.kind) {
    case 'ok':
      return (outcome as unknown as { value: OkValue<O> }).value;
    case 'not_found':
      throw httpErrors.notFound();
    case 'not_configured':
      throw httpErrors.notConfigured();
    default:
      throw httpErrors.badGateway();
  }
}
