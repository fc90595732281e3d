/**
 * Metrics declared by their name, help text and labels, registered in one registry: the plain
 * series the code updates as things happen (the ones read at scrape time declare a `collect`).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export function seriesIn(registry: Registry) {
  const registers = [registry];
  return {
    counter: <L extends string>(name: string, help: string, labelNames: readonly L[]) => new Counter<L>({ name, help, labelNames, registers }),
    gauge: <L extends string>(name: string, help: string, labelNames: readonly L[]) => new Gauge<L>({ name, help, labelNames, registers }),
    histogram: <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]) => new Histogram<L>({ name, help, labelNames, buckets, registers }),
  };
}
