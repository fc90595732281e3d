/**
 * X's web-client configuration, kept in one data file (x-config.json beside this module, or the
 * file X_CONFIG_FILE names): the public bearer token, each operation's query id, and the feature
 * flags and field toggles the web client sends. X rotates them when it ships a new client, so an
 * operator updates data, not code. This module only checks the file's shape; reading it is the
 * capability's job.
 */
import { X_OPERATIONS, type XOperation } from './types.ts';

export interface XOperationConfig {
  queryId: string;
  /** Variables sent with every call of the operation; the call adds its own (tweetId, cursor...). */
  variables: Record<string, unknown>;
  features: Record<string, boolean>;
  fieldToggles: Record<string, boolean>;
}

export interface XConfig {
  bearerToken: string;
  userAgent: string;
  operations: Record<XOperation, XOperationConfig>;
}

/** The file shipped with the service. */
export const DEFAULT_X_CONFIG_FILE = new URL('./x-config.json', import.meta.url);

const QUERY_ID = /^[A-Za-z0-9_-]{10,64}$/;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function booleans(value: unknown, where: string): Record<string, boolean> {
  if (!isRecord(value)) throw new Error(`${where} must be an object of true/false flags`);
  for (const [name, flag] of Object.entries(value)) {
    if (typeof flag !== 'boolean') throw new Error(`${where}.${name} must be true or false`);
  }
  return value as Record<string, boolean>;
}

/**
 * Checks a parsed configuration file. An operation's `features` is either an object of flags or
 * the name of a set under `featureSets` (several operations share one set). Throws a message
 * naming the faulty entry.
 */
export function parseXConfig(data: unknown): XConfig {
  if (!isRecord(data)) throw new Error('the X configuration must be a JSON object');
  const { bearerToken, userAgent, operations, featureSets = {} } = data;
  if (typeof bearerToken !== 'string' || bearerToken.trim() === '') throw new Error('bearerToken must be a non-empty string');
  if (typeof userAgent !== 'string' || userAgent.trim() === '') throw new Error('userAgent must be a non-empty string');
  if (!isRecord(operations)) throw new Error('operations must be an object');
  if (!isRecord(featureSets)) throw new Error('featureSets must be an object');
  const parsed = {} as Record<XOperation, XOperationConfig>;
  for (const name of X_OPERATIONS) {
    const operation = operations[name];
    if (!isRecord(operation)) throw new Error(`operations.${name} is missing`);
    const { queryId, variables = {}, features = {}, fieldToggles = {} } = operation;
    if (typeof queryId !== 'string' || !QUERY_ID.test(queryId)) throw new Error(`operations.${name}.queryId must be a GraphQL query id`);
    if (!isRecord(variables)) throw new Error(`operations.${name}.variables must be an object`);
    let flags: Record<string, boolean>;
    if (typeof features === 'string') {
      if (!(features in featureSets)) throw new Error(`operations.${name}.features names the unknown feature set "${features}"`);
      flags = booleans(featureSets[features], `featureSets.${features}`);
    } else {
      flags = booleans(features, `operations.${name}.features`);
    }
    parsed[name] = { queryId, variables, features: flags, fieldToggles: booleans(fieldToggles, `operations.${name}.fieldToggles`) };
  }
  return { bearerToken: bearerToken.trim(), userAgent: userAgent.trim(), operations: parsed };
}
