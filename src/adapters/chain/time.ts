/** A block's time (Unix seconds) as every timestamp on the wire: ISO 8601 UTC with microseconds (contract §1). */
export function blockTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
