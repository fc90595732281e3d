/** API tokens: issue, list, revoke, rotate. Plain tokens are answered once; only hashes are stored. */
import { OperationError } from './errors.ts';
import { DEFAULT_TOKEN_NAME, idIssue, textIssue } from './rules.ts';
import { requireUser } from './users.ts';
import type { OperationStores } from './stores.ts';

const noActiveToken = (token: number) => OperationError.notFound(`There is no active token ${token}.`);

/** A blank or missing name is the default one. */
export async function createToken(stores: OperationStores, input: { user: number; name?: string }): Promise<{ id: number; user: number; token: string }> {
  const user = await requireUser(stores, input.user);
  const given = typeof input.name === 'string' ? input.name.trim() : input.name;
  const name = given === undefined || given === '' ? DEFAULT_TOKEN_NAME : given;
  OperationError.throwIfAny([textIssue('name', name, { required: true })]);
  const created = await stores.accounts.createToken(user, name);
  return { id: created.id, user, token: created.token };
}

/** Without their secrets; revoked tokens show when they were revoked. */
export async function listTokens(stores: OperationStores, input: { user: number }) {
  return stores.accounts.listTokens(await requireUser(stores, input.user));
}

/** Refused at once by every server process. */
export async function revokeToken(stores: OperationStores, input: { token: number }): Promise<{ revoked: number }> {
  OperationError.throwIfAny([idIssue('token', input.token)]);
  if (!(await stores.accounts.revokeToken(input.token))) throw noActiveToken(input.token);
  return { revoked: input.token };
}

/** Revokes the token and issues a new one of the same user and name, in one step. */
export async function rotateToken(stores: OperationStores, input: { token: number }): Promise<{ id: number; user: number; token: string; replaced: number }> {
  OperationError.throwIfAny([idIssue('token', input.token)]);
  const rotated = await stores.accounts.rotateToken(input.token);
  if (!rotated) throw noActiveToken(input.token);
  return rotated;
}
