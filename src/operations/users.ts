/** Users: create, list, show, and the Stripe customer whose paid invoices renew their plans. */
import { EMAIL_TAKEN_MESSAGE, EmailTakenError, type UserView } from '../accounts/store.ts';
import { OperationError } from './errors.ts';
import { emailIssue, idIssue, stripeCustomerIssue, textIssue } from './rules.ts';
import type { OperationStores } from './stores.ts';

/** The user's id when it names one; `not_found` otherwise. */
export async function requireUser(stores: Pick<OperationStores, 'accounts'>, user: number): Promise<number> {
  OperationError.throwIfAny([idIssue('user', user)]);
  if (!(await stores.accounts.userExists(user))) throw OperationError.notFound(`There is no user ${user}.`);
  return user;
}

const emailTaken = (email: string) =>
  OperationError.conflict(new EmailTakenError(email).message, {
    field: 'email',
    message: EMAIL_TAKEN_MESSAGE,
    predicate: 'is already taken.',
  });

export interface CreatedUser {
  id: number;
  /** Its first API token and its secret key: shown once, stored only as hashes. */
  token: string;
  secret_key: string;
}

export async function createUser(stores: OperationStores, input: { name: string; email: string }): Promise<CreatedUser> {
  const name = typeof input.name === 'string' ? input.name.trim() : input.name;
  const email = typeof input.email === 'string' ? input.email.trim() : input.email;
  const nameIssue = textIssue('name', name, { required: true });
  const emailIssues = textIssue('email', email, { required: true });
  OperationError.throwIfAny([nameIssue, emailIssues ?? emailIssue(email)]);
  // Checked first for a clear answer; the unique index settles two creations at once.
  if (await stores.accounts.emailTaken(email)) throw emailTaken(email);
  return stores.accounts.createUser({ name, email }).catch((error: unknown) => {
    throw error instanceof EmailTakenError ? emailTaken(email) : error;
  });
}

export function listUsers(stores: OperationStores) {
  return stores.accounts.listUsers();
}

/** The same view as the user's own `GET /me`. */
export async function showUser(stores: OperationStores, input: { user: number }): Promise<UserView> {
  const view = await stores.accounts.view(await requireUser(stores, input.user));
  if (!view) throw OperationError.notFound(`There is no user ${input.user}.`);
  return view;
}

/** One customer per user, one user per customer; linking the same pair again is harmless. */
export async function linkStripeCustomer(stores: OperationStores, input: { user: number; customer: string }): Promise<{ user: number; stripe_customer: string }> {
  const user = await requireUser(stores, input.user);
  const customer = typeof input.customer === 'string' ? input.customer.trim() : input.customer;
  OperationError.throwIfAny([textIssue('customer', customer, { required: true }) ?? stripeCustomerIssue(customer)]);
  const linked = await stores.accounts.linkStripeCustomer(user, customer);
  if (!linked.ok) throw OperationError.conflict(`The Stripe customer ${customer} is already linked to user ${linked.userId}.`);
  return { user, stripe_customer: customer };
}

/** `previous`: the customer that was linked, or null. */
export async function unlinkStripeCustomer(stores: OperationStores, input: { user: number }): Promise<{ user: number; stripe_customer: null; previous: string | null }> {
  const user = await requireUser(stores, input.user);
  return { user, stripe_customer: null, previous: await stores.accounts.unlinkStripeCustomer(user) };
}
