/**
 * Rows keyed by a UUID (jobs, monitors, webhook events): a string that is not one names no row,
 * and is never sent to the database, which would refuse it as a `uuid`.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (value: string): boolean => UUID.test(value);
