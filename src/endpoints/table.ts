/**
 * THE endpoint table: path → request schema → product → cost → handler. The server registers
 * exactly these routes, runs each through the metered pipeline, and generates /openapi.json
 * from the same rows.
 */
import type { Endpoint } from '../pipeline/endpoint.ts';
import { getMe, listRequests, patchMe } from './account.ts';
import { searchEndpoint } from './search.ts';
import { webEndpoint } from './web.ts';
import { mapEndpoint } from './map.ts';
import { JOB_ENDPOINTS } from './jobs.ts';
import { imageEndpoint, pdfEndpoint } from './extraction.ts';
import { FORUM_ENDPOINTS } from './forum.ts';
import { ADMIN_ENDPOINTS } from './admin.ts';
import { ADMIN_JOB_ENDPOINTS } from './admin-jobs.ts';
import { ADMIN_MONITOR_ENDPOINTS } from './admin-monitors.ts';
import { MICROBLOG_ENDPOINTS } from './microblog.ts';
import { VIDEO_ENDPOINTS } from './video.ts';
import { FREELANCE_ENDPOINTS } from './freelance.ts';
import { CHAIN_ENDPOINTS } from './chain.ts';
import { CHAIN_MONITOR_ENDPOINTS } from './chain-monitors.ts';
import { usageEndpoint } from './usage.ts';
import { upstreamsEndpoint } from './upstreams.ts';
import { WEBHOOK_SECRET_ENDPOINTS } from './webhook-secret.ts';

export const ENDPOINTS: readonly Endpoint[] = [
  searchEndpoint,
  webEndpoint,
  mapEndpoint,
  ...JOB_ENDPOINTS,
  pdfEndpoint,
  imageEndpoint,
  ...FORUM_ENDPOINTS,
  ...MICROBLOG_ENDPOINTS,
  ...VIDEO_ENDPOINTS,
  ...FREELANCE_ENDPOINTS,
  ...CHAIN_ENDPOINTS,
  ...CHAIN_MONITOR_ENDPOINTS,
  getMe,
  patchMe,
  listRequests,
  usageEndpoint,
  ...WEBHOOK_SECRET_ENDPOINTS,
  ...ADMIN_ENDPOINTS,
  ...ADMIN_JOB_ENDPOINTS,
  ...ADMIN_MONITOR_ENDPOINTS,
  upstreamsEndpoint,
];
