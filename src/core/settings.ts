/**
 * What each setting means: its default, what it does and which feature needs it. The start-up
 * checks (`loadConfig`, then `checkSettings` in src/app.ts) say which variables exist and what
 * values they accept; this adds the words. `npm run docs:config` writes docs/configuration.md
 * from both (src/cli/config-doc.ts), and test/unit/config-doc.test.ts fails when a variable read
 * at start is missing here, when one listed here is no longer read, or when the file is stale.
 */

export interface SettingDoc {
  /** The variable, or a family of them: `CHAIN_RPC_<NAME>` with `each` naming the members. */
  name: string;
  /** The members of a family (`ETHEREUM`, `BASE`…), each read as `name` with them in place of `<…>`. */
  each?: readonly string[];
  /** The value used when the variable is unset or blank, as a person reads it. */
  default: string;
  meaning: string;
  /** Set for a variable the start does not read: who reads it, and when. */
  readBy?: string;
}

export interface SettingGroup {
  /** The feature that needs these settings (a section of docs/configuration.md). */
  feature: string;
  /** One line on the feature, with where to read more. */
  about: string;
  settings: readonly SettingDoc[];
}

const EVM_CHAINS = ['ETHEREUM', 'BASE', 'POLYGON', 'ARBITRUM', 'OPTIMISM', 'BSC'] as const;

export const SETTINGS: readonly SettingGroup[] = [
  {
    feature: 'Server',
    about: 'Every process: where it listens, stores its data and logs.',
    settings: [
      { name: 'PORT', default: '`8080`', meaning: 'Port of the API (0: any free port).' },
      { name: 'HOST', default: '`0.0.0.0`', meaning: 'Address the API listens on (`127.0.0.1`: this machine only).' },
      { name: 'DATA_DIR', default: '`./data`', meaning: 'The embedded database, its lock file and the admin socket the command line talks to.' },
      { name: 'LOG_LEVEL', default: '`info`', meaning: 'How much the JSON log says.' },
      { name: 'TRUST_PROXY', default: 'off', meaning: 'Trust `X-Forwarded-*` (behind a load balancer): client addresses and the scheme of links come from them.' },
      { name: 'BODY_LIMIT_BYTES', default: '`1048576`', meaning: 'Largest request body (413 above).' },
      { name: 'OWNER_EMAIL', default: '`owner@localhost`', meaning: 'E-mail of the owner account created on the first start.' },
      { name: 'TOKEN_CACHE_MS', default: '`2000`', meaning: 'How long a process reuses a token look-up (`0`: every request asks the database). A revocation evicts it at once in every process.' },
      { name: 'SHUTDOWN_GRACE_MS', default: '`25000`', meaning: 'On SIGTERM, how long requests in flight may finish before they are aborted (their holds released).' },
      { name: 'SHUTDOWN_DRAIN_MS', default: '`0` (`5000` in the image)', meaning: 'On SIGTERM/SIGINT, first this long with `/ready` answering 503 while requests are still served, so a balancer stops sending new ones (docs/deployment.md).' },
    ],
  },
  {
    feature: 'Database and Redis',
    about: 'The embedded PostgreSQL (PGlite) in `DATA_DIR` by default; a PostgreSQL server and Redis for several replicas (docs/deployment.md).',
    settings: [
      { name: 'DATABASE_URL', default: '— (embedded PGlite)', meaning: 'A PostgreSQL server (`postgres://…`), for the scaled mode.' },
      { name: 'DATABASE_POOL_SIZE', default: '`10`', meaning: 'Connections per process to PostgreSQL.' },
      {
        name: 'DATABASE_PREPARED_STATEMENTS',
        default: 'on',
        meaning: '`off` for PgBouncer in transaction mode (before 1.21).',
        readBy: 'the PostgreSQL connection, when it opens',
      },
      { name: 'REDIS_URL', default: '—', meaning: 'Redis shared by the replicas: throttle counters, the search cache, X session state, upstream circuits, per-user bounds on the pools.' },
      { name: 'REDIS_PREFIX', default: '`gleaner:`', meaning: 'Prefix of every Redis key (several deployments on one Redis).' },
    ],
  },
  {
    feature: 'Credits',
    about: 'Credits are held while a request runs and captured only on success.',
    settings: [
      { name: 'HOLD_TTL_SECONDS', default: '`600`', meaning: 'Credits held by a process that died come back after this long.' },
      { name: 'HOLD_SWEEP_INTERVAL_MS', default: '`30000`', meaning: 'How often expired holds are swept.' },
      { name: 'PAGE_TOKEN_SECRET', default: 'generated once, kept in the database', meaning: 'HMAC key of the page tokens of the microblog, freelance, video and chain-transaction endpoints (at least 32 characters).' },
    ],
  },
  {
    feature: 'Metrics',
    about: 'Prometheus metrics, off unless one of these is set (docs/operations.md).',
    settings: [
      { name: 'METRICS_PORT', default: '— (off)', meaning: 'Serve `GET /metrics` on this port, on its own listener (same `HOST`).' },
      { name: 'METRICS_TOKEN', default: '— (off)', meaning: 'Serve `GET /metrics` on the API port to `Authorization: Bearer <token>` only (16 characters or more).' },
    ],
  },
  {
    feature: 'Payments (Stripe)',
    about: 'Plans renewed when Stripe says an invoice was paid (docs/operator.md, Payments).',
    settings: [
      { name: 'STRIPE_WEBHOOK_SECRET', default: '— (no route)', meaning: 'Signing secret (`whsec_…`) of the Stripe webhook endpoint; enables `POST /webhooks/stripe`.' },
      { name: 'STRIPE_WEBHOOK_TOLERANCE_SECONDS', default: '`300`', meaning: "Largest difference between a Stripe signature's timestamp and now." },
    ],
  },
  {
    feature: 'Outbound requests',
    about: 'The one HTTP client every fetch goes through: public addresses only, caps, the egress proxy (docs/outbound.md).',
    settings: [
      {
        name: 'OUTBOUND_ALLOW_HOSTS',
        default: '—',
        meaning:
          'Hosts exempted from the public-address rule, comma-separated: a host on every port, `host:port` or `[v6]:port` on that port only (`localhost,127.0.0.1` to try the API on pages of your own machine). The service never fetches its own API and metrics listeners.',
      },
      { name: 'PROXY_URL', default: '—', meaning: 'Egress proxy (`http://user:pass@host:port`); needed by `proxy_country`.' },
      { name: 'PROXY_COUNTRY_USERNAME', default: '`{username}-country-{country}`', meaning: "How the proxy's username names a country." },
      { name: 'OUTBOUND_TIMEOUT_MS', default: '`30000`', meaning: 'Deadline of one outbound request.' },
      { name: 'OUTBOUND_CONNECT_TIMEOUT_MS', default: '`10000`', meaning: 'Deadline of one connection.' },
      { name: 'OUTBOUND_HEADERS_TIMEOUT_MS', default: '`15000`', meaning: "Deadline of an answer's headers." },
      { name: 'OUTBOUND_USER_AGENT', default: '`Mozilla/5.0 (compatible; gleaner/0.1)`', meaning: 'Sent when a request sets none (search engines send their own browser headers).' },
    ],
  },
  {
    feature: 'Upstream suspension',
    about: 'An upstream that blocks us, or keeps failing, is left alone for a while (search engines, Reddit, X, the captcha solver; never pages of `/v1/web`).',
    settings: [
      { name: 'UPSTREAM_SUSPEND_MS', default: '`30000`', meaning: 'First suspension, doubled each time the upstream fails again at once; `0` turns suspension off.' },
      { name: 'UPSTREAM_SUSPEND_MAX_MS', default: '`900000`', meaning: 'Longest suspension (at least `UPSTREAM_SUSPEND_MS`).' },
      { name: 'UPSTREAM_FAILURES_TO_SUSPEND', default: '`3`', meaning: 'Failures in a row (no answer, a timeout) that suspend an upstream; a block page suspends it at once.' },
    ],
  },
  {
    feature: 'PDF (`/v1/pdf`)',
    about: 'PDFium in worker threads (docs/pdf.md).',
    settings: [
      { name: 'PDF_THREADS', default: 'cores + 1', meaning: 'PDF worker threads.' },
      { name: 'PDF_TIMEOUT_MS', default: '`60000`', meaning: 'Time limit of one document.' },
      { name: 'PDF_MAX_HEAP_MB', default: '`1024`', meaning: 'Heap limit of each thread (at least 64).' },
      { name: 'PDF_MAX_MEMORY_MB', default: '`512`', meaning: "Ceiling of each PDF engine's WebAssembly memory (64–2048); a document that needs more is refused, free." },
      { name: 'PDF_MAX_QUEUE', default: '128 per thread', meaning: 'Documents waiting for a thread; past it `/v1/pdf` answers 503 (free, `Retry-After`).' },
      { name: 'PDF_MAX_QUEUE_MB', default: '`256`', meaning: 'Memory the admitted documents may hold together; past it `/v1/pdf` answers 503.' },
    ],
  },
  {
    feature: 'OCR (`/v1/image`, scanned PDF pages)',
    about: 'Tesseract engines, started with the server (docs/ocr.md).',
    settings: [
      { name: 'OCR_WORKERS', default: 'cores', meaning: 'OCR engines.' },
      { name: 'OCR_TIMEOUT_MS', default: '`30000`', meaning: 'Time limit of one image.' },
      { name: 'OCR_MAX_PIXELS', default: '`50000000`', meaning: 'Largest image, in pixels (a decompression bomb is refused).' },
      { name: 'OCR_RECYCLE_AFTER', default: '`200`', meaning: 'Images an engine reads before it is replaced (its memory given back).' },
      { name: 'OCR_MAX_QUEUE', default: '16 per engine', meaning: 'Images allowed to wait; past it `/v1/image` answers 503.' },
      { name: 'OCR_MODEL_DIR', default: '— (the bundled `best_int` model)', meaning: 'A folder holding another `eng.traineddata` (or `.gz`), e.g. a "fast" model: more images per second for a little accuracy.' },
    ],
  },
  {
    feature: 'Search (`/v1/engine-search`)',
    about: 'An ordered chain of engines, the next one tried when one fails (docs/search-engines.md).',
    settings: [
      { name: 'SEARCH_ENGINES', default: '`bing,duckduckgo,brave,mojeek,startpage` (Google first when Chromium is found)', meaning: 'The engines, in order.' },
      { name: 'SEARCH_CACHE_TTL', default: '`0` (off)', meaning: 'Seconds an identical search is answered from the cache (billed the same).' },
      { name: 'SEARCH_TIMEOUT_MS', default: '`15000`', meaning: 'Deadline of one search page from an engine, its retry included.' },
      {
        name: 'UPSTREAM_<ENGINE>_URL',
        each: ['GOOGLE', 'BING', 'DUCKDUCKGO', 'BRAVE', 'MOJEEK', 'STARTPAGE'],
        default: "the engine's own site",
        meaning: 'Base URL of each engine (`GOOGLE`, `BING`, `DUCKDUCKGO`, `BRAVE`, `MOJEEK`, `STARTPAGE`).',
      },
    ],
  },
  {
    feature: 'Forum (`/v1/forum*`)',
    about: 'Reddit (docs/forum.md).',
    settings: [
      { name: 'REDDIT_CLIENT_ID', default: '—', meaning: 'Reddit app-only OAuth, with `REDDIT_CLIENT_SECRET` (both or neither); without them, anonymous `.json` requests.' },
      { name: 'REDDIT_CLIENT_SECRET', default: '—', meaning: "The app's secret." },
      { name: 'REDDIT_USER_AGENT', default: '`server:gleaner:0.1.0 (…)`', meaning: 'User-Agent of every Reddit request.' },
      { name: 'REDDIT_TIMEOUT_MS', default: '`15000`', meaning: 'Deadline of one Reddit request.' },
      { name: 'UPSTREAM_REDDIT_URL', default: '`https://oauth.reddit.com` (anonymous: `https://www.reddit.com`)', meaning: "Reddit's API." },
      { name: 'UPSTREAM_REDDIT_AUTH_URL', default: '`https://www.reddit.com`', meaning: "Reddit's token endpoint." },
    ],
  },
  {
    feature: 'Microblog (`/v1/mb*`)',
    about: 'X (docs/microblog.md).',
    settings: [
      { name: 'X_ACCOUNTS', default: '—', meaning: 'Logged-in X sessions, `auth_token:ct0` pairs, comma-separated: search, user and user-tweets answer 503 without them.' },
      { name: 'X_CONFIG_FILE', default: '`src/adapters/x/x-config.json`', meaning: "X's bearer token, query ids and feature flags (replace it when X rotates them)." },
      { name: 'X_TIMEOUT_MS', default: '`15000`', meaning: 'Deadline of one request to X.' },
      { name: 'UPSTREAM_X_URL', default: '`https://x.com`', meaning: "X's GraphQL host." },
      { name: 'UPSTREAM_X_API_URL', default: '`https://api.x.com`', meaning: "X's guest-token host." },
      { name: 'UPSTREAM_X_SYNDICATION_URL', default: '`https://cdn.syndication.twimg.com`', meaning: "X's embed host (`/v1/mb-legacy`)." },
    ],
  },
  {
    feature: 'Freelance (`/v1/freelance/*`)',
    about: 'Freelancer.com (docs/freelance.md).',
    settings: [
      { name: 'UPSTREAM_FREELANCER_URL', default: '`https://www.freelancer.com`', meaning: "Freelancer.com's site, whose `/api/projects/0.1/` serves the endpoints." },
      { name: 'FREELANCER_OAUTH_TOKEN', default: '—', meaning: 'Sent as `freelancer-oauth-v1`; the public project endpoints answer without it.' },
      { name: 'FREELANCER_TIMEOUT_MS', default: '`15000`', meaning: 'Deadline of one Freelancer request.' },
      { name: 'FREELANCER_SKILLS_TTL_MS', default: '`21600000` (6 h)', meaning: 'How long the skill catalogue is kept.' },
    ],
  },
  {
    feature: 'Video (`/v1/video*`)',
    about: 'YouTube (docs/video.md).',
    settings: [
      { name: 'UPSTREAM_YOUTUBE_URL', default: '`https://www.youtube.com`', meaning: "YouTube's site (InnerTube and caption tracks)." },
      { name: 'YOUTUBE_TIMEOUT_MS', default: '`15000`', meaning: 'Deadline of one YouTube request, its retry included.' },
    ],
  },
  {
    feature: 'Blockchain (`/v1/chain/*`, wallet monitors)',
    about: 'EVM chains and Bitcoin; a chain without its node answers 503 (docs/blockchain.md).',
    settings: [
      { name: 'CHAIN_RPC_<NAME>', each: EVM_CHAINS, default: '—', meaning: 'JSON-RPC endpoint of an EVM chain: `ETHEREUM`, `BASE`, `POLYGON`, `ARBITRUM`, `OPTIMISM`, `BSC`.' },
      {
        name: 'CHAIN_ID_<NAME>',
        each: EVM_CHAINS,
        default: "the chain's own (Ethereum 1, Base 8453, Polygon 137, Arbitrum 42161, Optimism 10, BSC 56)",
        meaning: 'The id the EVM node must answer to `eth_chainId` (checked at start, after a failed call and every 10 minutes; another id makes the chain a free 502). Set it for a private network or a local fork (31337).',
      },
      { name: 'CHAIN_ESPLORA_BITCOIN', default: '—', meaning: 'Esplora-compatible REST API for Bitcoin (your own electrs/esplora, mempool.space\'s `/api`).' },
      { name: 'CHAIN_BITCOIN_NETWORK', default: '`mainnet`', meaning: 'The Bitcoin network addresses must belong to (`mainnet`, `testnet`, `signet`, `regtest`).' },
      {
        name: 'CHAIN_CONFIRMATIONS_<NAME>',
        each: [...EVM_CHAINS, 'BITCOIN'],
        default: 'Ethereum 12, Base 10, Polygon 32, Arbitrum 20, Optimism 10, BSC 15, Bitcoin 6',
        meaning: "Confirmations after which a block counts as final (0–64); a monitor's default.",
      },
      { name: 'CHAIN_EXPLORER_URL', default: '—', meaning: 'Etherscan-v2-compatible indexer for EVM history and token lists; without it, history is read from the node over bounded windows.' },
      { name: 'CHAIN_EXPLORER_KEY', default: '—', meaning: "The indexer's API key." },
      { name: 'CHAIN_HISTORY_BLOCKS', default: '`100`', meaning: "Without an indexer: newest blocks scanned for an address's native transactions." },
      { name: 'CHAIN_HISTORY_LOG_BLOCKS', default: '`10000`', meaning: 'Without an indexer: newest blocks searched for its token transfer logs.' },
      { name: 'CHAIN_LOG_RANGE', default: '`5000`', meaning: 'Most blocks one `eth_getLogs` spans.' },
      { name: 'CHAIN_TIMEOUT_MS', default: '`20000`', meaning: 'Deadline of one chain call, its retry included.' },
      { name: 'CHAIN_POLL_MS', default: '`2000`', meaning: "How often wallet monitors poll each chain's head." },
    ],
  },
  {
    feature: 'Browser (`bypass_captcha`, Google search)',
    about: 'A headless Chromium pool, off when no Chromium is found (docs/browser.md).',
    settings: [
      { name: 'CHROMIUM_PATH', default: '`/usr/bin/chromium`', meaning: 'The Chromium to run.' },
      {
        name: 'BROWSER_SANDBOX',
        default: '`auto`',
        meaning: "Chromium's sandbox: `auto` runs it sandboxed where the machine gives unprivileged user namespaces and otherwise without, saying why at start; `on` keeps the browser off instead; `off` never sandboxes it. As root the browser pool starts only with `off` (browser requests answer 503 \"not configured\" otherwise) (docs/browser.md, \"The sandbox\").",
      },
      { name: 'BROWSER_MAX_BROWSERS', default: '`1`', meaning: 'Browser processes.' },
      { name: 'BROWSER_MAX_PAGES', default: '`11`', meaning: 'Pages open at once.' },
      { name: 'BROWSER_TIMEOUT_MS', default: '`20000`', meaning: 'Deadline of one page in the pool.' },
      { name: 'BROWSER_PAGE_MEMORY_MB', default: '`640`', meaning: "A page's renderer is killed past this resident memory, the request failing uncharged." },
      { name: 'BROWSER_USER_CONCURRENCY', default: 'half the page slots', meaning: "Pages one user renders at once; further ones wait in the user's own queue (across replicas with `REDIS_URL`)." },
    ],
  },
  {
    feature: 'Web pages (`/v1/web`, `/v1/map`, crawls)',
    about: 'Plain fetches, browser renders and the page-conversion processes (docs/web.md).',
    settings: [
      { name: 'WEB_BLOCKED_DOMAINS', default: '—', meaning: "Domains added to the blocked list (`example.com`, `name.*` for every public suffix)." },
      { name: 'WEB_TIMEOUT_MS', default: '`30000`', meaning: 'Deadline of a plain fetch.' },
      { name: 'WEB_BROWSER_TIMEOUT_MS', default: '`90000`', meaning: 'Deadline of a browser render.' },
      { name: 'WEB_FORMAT_PROCESSES', default: '`2`', meaning: 'Child processes that turn pages into Markdown or text and read links, off the event loop.' },
      { name: 'WEB_FORMAT_TIMEOUT_MS', default: '`30000`', meaning: 'Time limit of one page in a conversion process (past it: 422 on `format`, free).' },
      { name: 'WEB_FORMAT_MAX_HEAP_MB', default: '`1024`', meaning: 'Heap limit of each conversion process (at least 64).' },
      { name: 'WEB_FORMAT_MAX_QUEUE', default: '16 per process', meaning: 'Pages waiting for a conversion process; past it 503 (free, `Retry-After`).' },
      { name: 'POOL_USER_CONCURRENCY', default: 'half of each pool, at least 1', meaning: 'Workers one user keeps busy at once in each CPU pool: conversion processes, PDF threads, OCR engines (across replicas with `REDIS_URL`).' },
    ],
  },
  {
    feature: 'Captcha solver (`bypass_captcha`)',
    about: 'A createTask/getTaskResult service: 2Captcha, Anti-Captcha, CapSolver (docs/browser.md).',
    settings: [
      { name: 'CAPTCHA_SOLVER_URL', default: '—', meaning: "The solver's API, with `CAPTCHA_SOLVER_KEY` (both or neither)." },
      { name: 'CAPTCHA_SOLVER_KEY', default: '—', meaning: "The solver's API key." },
      { name: 'CAPTCHA_SOLVER_FLAVOR', default: '`anticaptcha`', meaning: "Its task names (`capsolver` for CapSolver's)." },
      { name: 'CAPTCHA_SOLVER_POLL_MS', default: '`3000`', meaning: 'How often a task is polled (read when a solver is set).' },
      { name: 'CAPTCHA_SOLVER_TIMEOUT_MS', default: '`60000`', meaning: 'Time limit of one solve (read when a solver is set).' },
    ],
  },
  {
    feature: 'Jobs (`/v1/crawl`, `/v1/batch`, webhooks)',
    about: 'The durable queue under crawls, batches and webhook deliveries (docs/jobs.md, docs/webhooks.md).',
    settings: [
      { name: 'JOB_CONCURRENCY', default: '`4`', meaning: 'Pages this process fetches at once; `0`: no job workers here (jobs are still created, read and cancelled).' },
      { name: 'JOB_HOST_CONCURRENCY', default: '`2`', meaning: 'Pages in flight per target host, across every process and job.' },
      { name: 'JOB_POLL_SECONDS', default: '`5` embedded, `0.5` on PostgreSQL', meaning: 'How often an idle queue is checked for tasks coming due (a new task wakes the workers at once).' },
      { name: 'JOB_SUPERVISE_SECONDS', default: '`10`', meaning: 'How often the tasks of dead workers are looked for and handed on.' },
      { name: 'WEBHOOK_RETRY_BASE_SECONDS', default: '`30`', meaning: 'First wait before a failed webhook delivery is retried; doubles up to an hour, for 24 hours.' },
      { name: 'ALLOW_IGNORE_ROBOTS', default: '`false`', meaning: '`true` lets a `/v1/map` request say `ignore_robots: true` and list the URLs robots.txt disallows for the crawler; elsewhere that is a 422.' },
    ],
  },
  {
    feature: 'MCP over stdio (`gleaner mcp`)',
    about: 'The command an AI agent starts; it relays to a running server (docs/mcp.md).',
    settings: [
      { name: 'GLEANER_URL', default: '`http://127.0.0.1:8080`', meaning: 'The server `gleaner mcp` calls.', readBy: '`gleaner mcp`' },
      { name: 'GLEANER_TOKEN', default: '—', meaning: 'The API token, when `--token` is not given.', readBy: '`gleaner mcp`' },
    ],
  },
];

/** Every variable a setting stands for: itself, or each member of its family. */
export function variablesOf(setting: SettingDoc): string[] {
  if (!setting.each) return [setting.name];
  return setting.each.map((member) => setting.name.replace(/<[A-Z]+>/, member));
}
