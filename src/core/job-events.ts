/**
 * What the job workers report as they go (src/jobs), for whoever watches: the metrics count pages
 * by outcome and webhook deliveries by outcome. Here, at the bottom, so that the metrics module
 * can read the events without importing the job engine.
 */
export type PageOutcome = 'delivered' | 'failed' | 'skipped';
export type WebhookOutcome = 'delivered' | 'retry' | 'refused' | 'expired';

export type JobEvent =
  | { type: 'page'; outcome: PageOutcome }
  | { type: 'webhook'; outcome: WebhookOutcome };
