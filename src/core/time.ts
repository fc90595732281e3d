/** Laravel 8 serialises dates as ISO 8601 UTC with microseconds (contract §1): `2026-11-26T10:00:00.123000Z`. */
export function isoMicros(date: Date | number | string): string {
  return new Date(date).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
