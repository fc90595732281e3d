/**
 * How an operation says no. Each front end turns these into its own form: the admin API into
 * HTTP answers (404, 409, Laravel 422), the command line into exit codes (1, 2) and sentences.
 * An error carries both wordings of each broken rule, so the rule and its messages live here once.
 */

/** One broken rule of one input field. */
export interface Issue {
  /** The input field: the admin API's field name; the command line's option without dashes (`token` is `--token-id`). */
  field: string;
  /** Laravel 8's wording, as the admin API answers it in a 422: "The amount must be at least 1." */
  message: string;
  /** The same rule worded after the option's name, as the command line prints it: "must be at least 1." */
  predicate: string;
}

/**
 * - `not_found`: the user or token named does not exist (404; exit 1).
 * - `conflict`: the operation cannot be done in the current state (a customer linked to another
 *   user: 409; exit 1). A conflict on a field (an e-mail already taken) is Laravel's `unique`
 *   rule: the admin API answers it as a 422 on that field.
 * - `invalid`: the input breaks a rule (422 with every issue; exit 2 with the first).
 */
export type OperationErrorKind = 'not_found' | 'conflict' | 'invalid';

export class OperationError extends Error {
  readonly kind: OperationErrorKind;
  /** The broken rules, field by field: always set for `invalid`, set for a `conflict` on a field. */
  readonly issues: readonly Issue[];

  constructor(kind: OperationErrorKind, message: string, issues: readonly Issue[] = []) {
    super(message);
    this.name = 'OperationError';
    this.kind = kind;
    this.issues = issues;
  }

  /** Field → messages in Laravel's wording, in the order the rules were checked. */
  get errors(): Record<string, string[]> {
    const errors: Record<string, string[]> = {};
    for (const issue of this.issues) (errors[issue.field] ??= []).push(issue.message);
    return errors;
  }

  static notFound(message: string): OperationError {
    return new OperationError('not_found', message);
  }

  static conflict(message: string, issue?: Issue): OperationError {
    return new OperationError('conflict', message, issue ? [issue] : []);
  }

  /** The message names the first issue. */
  static invalid(first: Issue, ...others: Issue[]): OperationError {
    return new OperationError('invalid', `The ${first.field} ${first.predicate}`, [first, ...others]);
  }

  /** Throws `invalid` when any check found an issue. */
  static throwIfAny(issues: ReadonlyArray<Issue | undefined>): void {
    const [first, ...others] = issues.filter((issue): issue is Issue => issue !== undefined);
    if (first) throw OperationError.invalid(first, ...others);
  }
}
