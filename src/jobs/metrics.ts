/**
 * What the job workers tell the metrics: pages by outcome, webhook deliveries by outcome, jobs
 * ending by status. The HTTP layer's metrics listen here (src/metrics), as they listen to the
 * upstream runtime: the workers never import the metrics module.
 */
import type { JobEvent, PageOutcome, WebhookOutcome } from '../core/job-events.ts';

export type { JobEvent } from '../core/job-events.ts';

export class JobMetrics {
  readonly #listeners = new Set<(event: JobEvent) => void>();

  observe(listener: (event: JobEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  page(outcome: PageOutcome): void {
    this.#emit({ type: 'page', outcome });
  }

  webhook(outcome: WebhookOutcome): void {
    this.#emit({ type: 'webhook', outcome });
  }


  #emit(event: JobEvent): void {
    for (const listener of this.#listeners) listener(event);
  }
}
