/**
 * GET /metrics, never public by accident: on its own listener (METRICS_PORT, meant for a private
 * interface) and/or on the main port to `Authorization: Bearer <METRICS_TOKEN>` only. With neither
 * variable set there is no /metrics route at all.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { envReader } from '../core/env.ts';
import { httpErrors } from '../core/errors.ts';
import { GleanerMetrics, metricsSettings } from '../metrics/index.ts';
import { bearerToken } from '../pipeline/metered.ts';
import { ownListeners } from '../outbound/own-listeners.ts';
import type { Services } from '../services.ts';

export interface RegisteredMetrics {
  metrics: GleanerMetrics;
  settled: GleanerMetrics['settled'];
  url(): string | undefined;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

export async function registerMetrics(app: FastifyInstance, services: Services): Promise<RegisteredMetrics | undefined> {
  const settings = envReader(services.config.env).read((env) => metricsSettings(env));
  if (settings.port === undefined && settings.token === undefined) return undefined;

  const metrics = new GleanerMetrics({
    pools: () => services.capabilities.poolStats(),
    holds: async () => {
      const [row] = await services.db.query<{ count: number | string; credits: number | string }>(
        'SELECT count(*) AS count, COALESCE(sum(amount), 0) AS credits FROM credit_holds',
      );
      return { count: Number(row?.count ?? 0), credits: Number(row?.credits ?? 0) };
    },
    // The breaker's store: shared by the replicas in scaled mode, so every process reports the same circuits.
    circuits: () => services.capabilities.runtime.breaker.states(),
    jobs: async () => ({ byStatus: await services.jobs.store.countByStatus(), queues: await services.jobs.depth() }),
    monitors: () => services.monitors.store.countByStatus(),
  });
  // Every upstream call's verdict and every circuit change.
  const stopWatchingUpstreams = services.capabilities.observeUpstreams((event) => metrics.upstream(event));
  const stopWatchingJobs = services.jobs.observe((event) => metrics.job(event));
  // The wallet monitors' follower steps and event deliveries, per chain.
  const stopWatchingFollowers = services.monitors.observeFollower((event) => metrics.monitors.step(event));
  const stopWatchingMonitorDeliveries = services.monitors.observeDeliveries((event) => metrics.monitors.delivery(event));

  // Every answer, by route template (never the raw URL: ids would make one series per user).
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    if (route === '/metrics') return;
    metrics.request(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });

  const answer = async (_request: FastifyRequest, reply: FastifyReply) => reply.type(metrics.contentType).send(await metrics.text());

  if (settings.token !== undefined) {
    const expected = digest(settings.token);
    app.get('/metrics', async (request, reply) => {
      const given = bearerToken(request);
      if (!given || !timingSafeEqual(digest(given), expected)) throw httpErrors.unauthenticated();
      return answer(request, reply);
    });
  }

  let listener: FastifyInstance | undefined;
  let url: string | undefined;
  let forgetListener = () => {};
  if (settings.port !== undefined) {
    const port = settings.port;
    listener = Fastify({ logger: false });
    listener.get('/metrics', answer);
    app.addHook('onListen', async () => {
      const address = await listener!.listen({ host: services.config.host, port });
      forgetListener = ownListeners.add(listener!.addresses());
      url = `${address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '127.0.0.1')}/metrics`;
      app.log.info({ url }, 'metrics listener');
    });
  }
  app.addHook('onClose', async () => {
    stopWatchingUpstreams();
    stopWatchingJobs();
    stopWatchingFollowers();
    stopWatchingMonitorDeliveries();
    forgetListener();
    await listener?.close();
  });
  return { metrics, settled: (event) => metrics.settled(event), url: () => url };
}
