/**
 * The operator's operations, written once: the admin API (src/endpoints/admin.ts) and the
 * command line (src/operator/commands.ts) are front ends over these. Each takes the stores it
 * needs and a typed input, checks its rules, and answers plain data or throws an OperationError
 * that each front end words in its own way. Nothing here knows about HTTP or the command line.
 */
export { OperationError, type Issue, type OperationErrorKind } from './errors.ts';
export type { OperationStores } from './stores.ts';
export * as rules from './rules.ts';
export { createUser, listUsers, showUser, linkStripeCustomer, unlinkStripeCustomer, requireUser, type CreatedUser } from './users.ts';
export { createToken, listTokens, revokeToken, rotateToken } from './tokens.ts';
export { grantCredits, setCredits, showCredits, auditCredits, type BalanceChange } from './credits.ts';
export { listPlans, assignPlan, renewPlans } from './plans.ts';
export { listPrices, setPrice } from './prices.ts';
export { upstreamReport, upstreamReportRows, type UpstreamReport } from './upstreams.ts';
export { listJobs, showJob, cancelJob, DEFAULT_JOB_LIST_LIMIT, MAX_JOB_LIST_LIMIT, type JobListRow, type JobDetail } from './jobs.ts';
