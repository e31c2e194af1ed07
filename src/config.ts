import os from 'node:os';
import path from 'node:path';

/** Every setting the service reads, parsed and checked in one place. */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  logLevel: string;
  /** LOG_REQUESTS: a line per request (Fastify's own); else only 5xx and slow requests get one. */
  logRequests: boolean;
  adminToken: string | undefined;
  /** SECRETS_KEY: seals webhook secrets at rest (unset: a key generated in DATA_DIR/secrets.key). */
  secretsKey: string | undefined;
  databaseUrl: string | undefined;
  /** `cluster`: CLICKHOUSE_CLUSTER, the clustered schema (replicated local tables, Distributed tables over them). */
  clickhouse:
    | { url: string; user: string; password: string; database: string; cluster: string | undefined }
    | undefined;
  /**
   * Inserts through ClickHouse's async_insert with wait_for_async_insert=1: the server gathers
   * the small inserts of many API processes into one part, and still answers only once the
   * rows are written, so a 2xx still means committed.
   */
  clickhouseAsyncInsert: boolean;
  /**
   * With the embedded ClickHouse: once started, advise the kernel to page out the engine
   * library's start-up code (src/stores/clickhouse/engineCodePages.ts).
   */
  chdbPageOut: boolean;
  /** Days the high-volume ClickHouse tables keep a row (TTL on its own timestamp); unset: forever. */
  retentionDays: number | undefined;
  /**
   * CRASH_LEDGER_DAYS: days an occurrence's id stays in the Postgres occurrence ledger, which
   * counts it once; the worker prunes older ids. A report retried after that is counted again in
   * the list's counters (ClickHouse still collapses it), so it must exceed any SDK retry delay.
   */
  crashLedgerDays: number;
  /** Bytes of accepted request bodies waiting for their insert, across tables; past it, 503. */
  ingestQueueBytes: number;
  /**
   * INGEST_SPOOL (default true): events and network bodies are acknowledged once fsync'd to a
   * local spool and loaded into ClickHouse in large inserts (docs/decisions.md, Ingestion spool);
   * undefined (INGEST_SPOOL=false): each body is acknowledged once its group-commit insert committed.
   */
  spool:
    | {
        root: string;
        instance: string;
        maxBytes: number;
        loadBytes: number;
        backlogLoadBytes: number;
        loadIntervalMs: number;
        staleMs: number;
      }
    | undefined;
  /**
   * With the spool: crash reports are acknowledged once fsync'd to their own spool (`.crashes`
   * under SPOOL_DIR) and recorded by the crash pipeline's loader, CRASH_PIPELINE_CONCURRENCY
   * records at a time (docs/decisions.md, "Crashes through the spool"). Undefined: recorded
   * inside the request, as with INGEST_SPOOL=false.
   */
  crashPipeline: { spool: NonNullable<Config['spool']>; concurrency: number } | undefined;
  /**
   * With the spool: session facts (release health's rows: a session's start, its first fatal
   * crash) are acknowledged once fsync'd to their own spool (`.facts` under SPOOL_DIR) and
   * inserted by its loader. Undefined: each waits for its group-commit insert.
   */
  factsSpool: Config['spool'];
  /** Bytes of /ingest request bodies being received, parsed and handled at once; past it, 503 before reading. */
  ingestInflightBytes: number;
  redisUrl: string | undefined;
  /** Namespace of every Redis key and channel, so deployments (or test runs) can share one Redis. */
  redisKeyPrefix: string;
  /** How long a Redis command may go unanswered before its caller goes on without Redis. */
  redisCommandTimeoutMs: number;
  smtpUrl: string | undefined;
  alertEmailFrom: string;
  alertEmailTo: string[];
  /** At most one alert email per project per window; new groups meanwhile come in one digest. */
  alertDigestWindowMs: number;
  publicUrl: string;
  /** Whether PUBLIC_URL was set; unset, it is the listening address and the start-up log warns. */
  publicUrlSet: boolean;
  openai: { apiKey: string; baseUrl: string | undefined; model: string } | undefined;
  /** Budget of one AI summary, retries included; past it the deterministic summary is used. */
  summaryTimeoutMs: number;
  /** The alert outbox worker: poll interval, lease, retry cap and backoff. */
  outbox: {
    pollMs: number;
    leaseMs: number;
    maxAttempts: number;
    backoffBaseMs: number;
    backoffMaxMs: number;
    /** Jobs a worker runs at once, and a project's webhook deliveries among them (the fair queue). */
    concurrency: number;
    projectConcurrency: number;
  };
  /** Alert rules and webhooks (docs/alerts.md, Rules and webhooks). */
  /** Alert rules: how often the rules' pass runs, and how many rules a project may have. */
  alertRules: { intervalMs: number; maxPerProject: number };
  webhooks: { timeoutMs: number; perMinute: number; allowPrivate: boolean; maxPerProject: number };
  rateLimits: { ingest: number; export: number; auth: number; dashboard: number };
  keyCacheTtlMs: number;
  bodyLimitBytes: number;
  /**
   * Slow clients must not pin connections: a request's headers must arrive within
   * headersTimeoutMs and the whole request within requestTimeoutMs, else 408 and the
   * connection is closed. Settable so a test can try it in seconds.
   */
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  runWorker: boolean;
  trustProxy: boolean;
  /** Rows per keyset chunk of a streamed export (stream=true). */
  exportChunkRows: number;
  /** Bytes (as the store sizes rows) at which a keyset chunk of a streamed export ends, whatever its rows. */
  exportChunkBytes: number;
  /** Incremental exports return only rows whose updatedAt is at least this old (late commits). */
  exportSyncLagMs: number;
  /** Event batches move their session's updatedAt at most this often (SessionTouches). */
  exportTouchIntervalMs: number;
  /** A day is counted once for the Releases page when it has been over and untouched this long. */
  releaseDayQuietMs: number;
  /** Streamed exports open at once per project (per API process); 429 beyond. */
  exportMaxStreams: number;
  /** A streamed export whose client reads nothing for this long is cut. */
  exportIdleTimeoutMs: number;
  /** Whether anyone may create an account at /api/auth/signup (a private install may close it). */
  signupEnabled: boolean;
  /**
   * Symbolication artifacts: the largest one accepted, a project's total (uncompressed bytes), the parsed maps kept
   * in memory, and the most memory one source map may decode to.
   */
  artifacts: { maxBytes: number; projectMaxBytes: number; cacheBytes: number; maxDecodedBytes: number };

  /** Emails per day to one address, and caused by one account (verification, invitations, confirmations, alerts). */
  mailCaps: { perAddress: number; perAccount: number };
  /** AI summary calls per project per UTC day; past it, the deterministic summary. */
  aiSummariesPerProjectPerDay: number;
  /** When set, GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>`. */
  metricsToken: string | undefined;
  /** WEB_CONCURRENCY: HTTP worker processes (node:cluster) sharing the port; 1 runs in this process. */
  webConcurrency: number;
  /** With WEB_CONCURRENCY > 1: where the primary serves the metrics summed over its workers. */
  metricsPort: number | undefined;
}

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

function int(env: Env, name: string, def: number, min: number, max: number): number {
  const v = str(env, name);
  if (v === undefined) return def;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${v}"`);
  }
  return Number(v);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const v = str(env, name);
  if (v === undefined) return undefined;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(u.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${u.protocol}`);
  }
  return v;
}

function bool(env: Env, name: string, def: boolean): boolean {
  const v = str(env, name);
  if (v === undefined) return def;
  if (['1', 'true', 'yes'].includes(v.toLowerCase())) return true;
  if (['0', 'false', 'no'].includes(v.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${v}"`);
}

function emails(env: Env, name: string): string[] {
  const v = str(env, name);
  if (v === undefined) return [];
  const list = v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const e of list) {
    if (!/^[^\s@]+@[^\s@]+$/.test(e)) throw new ConfigError(`${name} has an invalid address "${e}"`);
  }
  return list;
}

function redisPrefix(env: Env): string {
  const v = str(env, 'REDIS_KEY_PREFIX') ?? 'flightrec';
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(v))
    throw new ConfigError(`REDIS_KEY_PREFIX must be 1-64 characters of A-Z a-z 0-9 _ . : -, got "${v}"`);
  return v;
}

function clickhouseCluster(env: Env, chUrl: string | undefined): string | undefined {
  const v = str(env, 'CLICKHOUSE_CLUSTER');
  if (v === undefined) return undefined;
  if (!chUrl)
    throw new ConfigError(
      'CLICKHOUSE_CLUSTER needs CLICKHOUSE_URL: the embedded ClickHouse (chDB) is one process on one machine, with no cluster to run on',
    );
  if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/.test(v))
    throw new ConfigError(`CLICKHOUSE_CLUSTER must be a cluster name from the server's remote_servers, got "${v}"`);
  return v;
}

/**
 * Workers share nothing but the stores, so every store must be a server: PGlite and chDB
 * belong to the one process that opened their directory (a second one cannot open it), and the
 * in-process rate limiter and key cache would count and invalidate per worker.
 */
function webConcurrency(env: Env, servers: { databaseUrl?: string; chUrl?: string; redisUrl?: string }): number {
  const n = int(env, 'WEB_CONCURRENCY', 1, 1, 256);
  if (n === 1) return n;
  const missing = [
    servers.databaseUrl ? null : "DATABASE_URL (embedded PGlite is one process's)",
    servers.chUrl ? null : "CLICKHOUSE_URL (embedded chDB is one process's)",
    servers.redisUrl ? null : 'REDIS_URL (rate limits and key invalidation would be per worker)',
  ].filter((x) => x !== null);
  if (missing.length)
    throw new ConfigError(
      `WEB_CONCURRENCY=${n} needs every store on a server; set ${missing.join(', ')}, or leave WEB_CONCURRENCY at 1`,
    );
  return n;
}

function spool(env: Env, dataDir: string): Config['spool'] {
  if (!bool(env, 'INGEST_SPOOL', true)) return undefined;
  const instance = str(env, 'SPOOL_INSTANCE') ?? `${os.hostname()}-${process.pid}`.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(instance))
    throw new ConfigError(
      `SPOOL_INSTANCE must be 1-128 characters of A-Z a-z 0-9 _ . - (not starting with a dot), got "${instance}"`,
    );
  // A load goes through the group commit, whose byte budget crash reports share: half of it at most.
  const maxLoad = Math.floor(
    int(env, 'INGEST_QUEUE_BYTES', 64 * 1024 * 1024, 1024 * 1024, 16 * 1024 * 1024 * 1024) / 2,
  );
  // The engine holds several times an insert's bytes while it parses it and writes its parts:
  // 2 MiB rather than 8 kept the embedded service's peak RSS 50-80 MB lower under the ingest
  // load (docs/bench.md, "Memory"). Under a backlog the loads are larger again (below): since the
  // engine's start-up code is paged out, that fits under 700 MB.
  const loadBytes = int(env, 'SPOOL_LOAD_BYTES', 2 * 1024 * 1024, 1024, maxLoad);
  return {
    root: path.resolve(str(env, 'SPOOL_DIR') ?? path.join(dataDir, 'spool')),
    instance,
    maxBytes: int(env, 'SPOOL_MAX_BYTES', 1024 * 1024 * 1024, 1024 * 1024, 2 ** 50),
    loadBytes,
    // Behind by more than this, the loader inserts this much at a time: the engine's fixed cost
    // per insert is shared by four times the rows (docs/bench.md, "Larger loads under a backlog").
    backlogLoadBytes: int(env, 'SPOOL_BACKLOG_LOAD_BYTES', Math.min(4 * loadBytes, maxLoad), loadBytes, maxLoad),
    // Rows are visible ≤ 2 s after their 201 (p99): half a second in the segment, then the insert.
    loadIntervalMs: int(env, 'SPOOL_LOAD_INTERVAL_MS', 500, 10, 60_000),
    staleMs: int(env, 'SPOOL_LOCK_STALE_MS', 30_000, 1000, 3_600_000),
  };
}

/** The crash and facts spools' loads: at most 256 KiB, the same size whether or not the loader is behind. */
function smallLoads(events: NonNullable<Config['spool']>): { loadBytes: number; backlogLoadBytes: number } {
  const bytes = Math.min(events.loadBytes, 256 * 1024);
  return { loadBytes: bytes, backlogLoadBytes: bytes };
}

/**
 * The crash spool sits inside the events spool's root under a dot name, which every version of
 * the events spool skips when it looks for orphaned directories (a plain name would be taken
 * over, found without segments of its own, and removed). Its loads are smaller than the events':
 * a batch's Postgres statements grow with its reports (the occurrence ledger takes a row each),
 * and embedded Postgres runs them on the thread that answers requests. 256 KiB (~500 reports)
 * kept a storm's p99 under 100 ms where 512 KiB blocked for 40-80 ms a statement (docs/decisions.md,
 * "Crash batches": "A storm is read once per distinct stack"); a quarter of the byte budget.
 */
function crashPipeline(env: Env, events: Config['spool']): Config['crashPipeline'] {
  if (!events) return undefined;
  return {
    spool: {
      ...events,
      root: path.join(events.root, '.crashes'),
      maxBytes: Math.max(1024 * 1024, Math.floor(events.maxBytes / 4)),
      ...smallLoads(events),
    },
    concurrency: int(env, 'CRASH_PIPELINE_CONCURRENCY', 8, 1, 256),
  };
}

/**
 * The facts spool sits beside the crash spool under a dot name (see crashPipeline). A fact is a
 * line of ~300 bytes; its loads are small and frequent, like the events'.
 */
function factsSpool(events: Config['spool']): Config['factsSpool'] {
  if (!events) return undefined;
  return {
    ...events,
    root: path.join(events.root, '.facts'),
    maxBytes: Math.max(1024 * 1024, Math.floor(events.maxBytes / 16)),
    ...smallLoads(events),
  };
}

function secretToken(env: Env, name: string): string | undefined {
  const v = str(env, name);
  if (v !== undefined && v.length < 16) throw new ConfigError(`${name} must be at least 16 characters`);
  return v;
}

/**
 * PUBLIC_URL's default: the address this process listens on, so links in mail and webhooks work
 * on any PORT; a loopback or wildcard host is written as localhost, an IPv6 one in brackets.
 */
export function listeningUrl(host: string, port: number): string {
  const local = ['', '0.0.0.0', '::', '127.0.0.1', '::1', 'localhost'].includes(host);
  const h = local ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

export function loadConfig(env: Env = process.env): Config {
  const chUrl = url(env, 'CLICKHOUSE_URL', ['http:', 'https:']);
  const chCluster = clickhouseCluster(env, chUrl);
  const workers = webConcurrency(env, {
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    chUrl,
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
  });
  const openaiKey = str(env, 'OPENAI_API_KEY');
  const eventsSpool = spool(env, path.resolve(str(env, 'DATA_DIR') ?? './.data'));
  const adminToken = str(env, 'ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN must be at least 16 characters');
  }
  const secretsKey = str(env, 'SECRETS_KEY');
  if (secretsKey !== undefined && secretsKey.length < 32) {
    throw new ConfigError('SECRETS_KEY must be at least 32 characters (e.g. `openssl rand -base64 32`)');
  }
  const requestTimeoutMs = int(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  const headersTimeoutMs = int(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 3_600_000);
  // Node refuses a server whose headers may take longer than the whole request.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${requestTimeoutMs})`,
    );
  }
  return {
    host: str(env, 'HOST') ?? '127.0.0.1',
    port: int(env, 'PORT', 3000, 0, 65535),
    dataDir: path.resolve(str(env, 'DATA_DIR') ?? './.data'),
    logLevel: str(env, 'LOG_LEVEL') ?? 'info',
    logRequests: bool(env, 'LOG_REQUESTS', false),
    adminToken,
    secretsKey,
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    clickhouse: chUrl
      ? {
          url: chUrl,
          user: str(env, 'CLICKHOUSE_USER') ?? 'default',
          password: str(env, 'CLICKHOUSE_PASSWORD') ?? '',
          database: str(env, 'CLICKHOUSE_DATABASE') ?? 'default',
          cluster: chCluster,
        }
      : undefined,
    clickhouseAsyncInsert: bool(env, 'CLICKHOUSE_ASYNC_INSERT', false),
    chdbPageOut: bool(env, 'CHDB_PAGE_OUT', true),
    retentionDays: str(env, 'RETENTION_DAYS') === undefined ? undefined : int(env, 'RETENTION_DAYS', 0, 1, 36_500),
    crashLedgerDays: int(env, 'CRASH_LEDGER_DAYS', 30, 1, 36_500),
    ingestQueueBytes: int(env, 'INGEST_QUEUE_BYTES', 64 * 1024 * 1024, 1024 * 1024, 16 * 1024 * 1024 * 1024),
    spool: eventsSpool,
    crashPipeline: crashPipeline(env, eventsSpool),
    factsSpool: factsSpool(eventsSpool),
    ingestInflightBytes: int(env, 'INGEST_INFLIGHT_BYTES', 32 * 1024 * 1024, 1024, 16 * 1024 * 1024 * 1024),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisKeyPrefix: redisPrefix(env),
    redisCommandTimeoutMs: int(env, 'REDIS_COMMAND_TIMEOUT_MS', 500, 10, 60_000),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    alertEmailFrom: str(env, 'ALERT_EMAIL_FROM') ?? 'flightrec <alerts@flightrec.local>',
    alertEmailTo: emails(env, 'ALERT_EMAIL_TO'),
    alertDigestWindowMs: int(env, 'ALERT_DIGEST_WINDOW_MS', 300_000, 0, 86_400_000),
    publicUrl: (
      url(env, 'PUBLIC_URL', ['http:', 'https:']) ??
      listeningUrl(str(env, 'HOST') ?? '127.0.0.1', int(env, 'PORT', 3000, 0, 65535))
    ).replace(/\/$/, ''),
    publicUrlSet: url(env, 'PUBLIC_URL', ['http:', 'https:']) !== undefined,
    openai: openaiKey
      ? {
          apiKey: openaiKey,
          baseUrl: url(env, 'OPENAI_BASE_URL', ['http:', 'https:']),
          model: str(env, 'OPENAI_MODEL') ?? 'gpt-4o-mini',
        }
      : undefined,
    summaryTimeoutMs: int(env, 'OPENAI_TIMEOUT_MS', 15_000, 100, 600_000),
    outbox: {
      pollMs: int(env, 'OUTBOX_POLL_MS', 2_000, 10, 3_600_000),
      leaseMs: int(env, 'OUTBOX_LEASE_MS', 120_000, 100, 86_400_000),
      maxAttempts: int(env, 'OUTBOX_MAX_ATTEMPTS', 8, 1, 100),
      backoffBaseMs: int(env, 'OUTBOX_BACKOFF_BASE_MS', 5_000, 1, 86_400_000),
      backoffMaxMs: int(env, 'OUTBOX_BACKOFF_MAX_MS', 3_600_000, 1, 86_400_000),
      concurrency: int(env, 'OUTBOX_CONCURRENCY', 8, 1, 256),
      projectConcurrency: int(env, 'OUTBOX_PROJECT_CONCURRENCY', 2, 1, 256),
    },
    alertRules: {
      intervalMs: int(env, 'ALERT_RULES_INTERVAL_MS', 60_000, 10, 86_400_000),
      maxPerProject: int(env, 'ALERT_RULES_MAX_PER_PROJECT', 100, 1, 10_000),
    },
    webhooks: {
      timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      perMinute: int(env, 'WEBHOOK_MAX_PER_MINUTE', 60, 1, 100_000),
      allowPrivate: bool(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      maxPerProject: int(env, 'WEBHOOKS_MAX_PER_PROJECT', 20, 1, 1_000),
    },
    rateLimits: {
      ingest: int(env, 'RATE_LIMIT_INGEST_PER_MIN', 600, 1, 1e9),
      export: int(env, 'RATE_LIMIT_EXPORT_PER_MIN', 60, 1, 1e9),
      auth: int(env, 'RATE_LIMIT_AUTH_PER_MIN', 20, 1, 1e9),
      dashboard: int(env, 'RATE_LIMIT_DASHBOARD_PER_MIN', 300, 1, 1e9),
    },
    keyCacheTtlMs: int(env, 'KEY_CACHE_TTL_MS', 4000, 0, 5000),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 5 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    headersTimeoutMs,
    requestTimeoutMs,
    runWorker: bool(env, 'RUN_WORKER', true),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    // Also on the embedded engine: smaller chunks shortened other queries' waits little and
    // lengthened the stream a lot (docs/reliability.md, Security).
    exportChunkRows: int(env, 'EXPORT_CHUNK_ROWS', 50_000, 1, 1_000_000),
    exportChunkBytes: int(env, 'EXPORT_CHUNK_BYTES', 8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    exportSyncLagMs: int(env, 'EXPORT_SYNC_LAG_MS', 5000, 0, 3_600_000),
    exportTouchIntervalMs: int(env, 'EXPORT_TOUCH_INTERVAL_MS', 10_000, 1, 3_600_000),
    // Far longer than an insert takes and than ClickHouse nodes' clocks drift (src/domain/releaseHealth.ts).
    releaseDayQuietMs: int(env, 'RELEASE_DAY_QUIET_MS', 600_000, 0, 30 * 86_400_000),
    exportMaxStreams: int(env, 'EXPORT_MAX_STREAMS', 4, 1, 10_000),
    exportIdleTimeoutMs: int(env, 'EXPORT_IDLE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    signupEnabled: bool(env, 'SIGNUP_ENABLED', true),
    artifacts: {
      maxBytes: int(env, 'ARTIFACT_MAX_BYTES', 50 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
      projectMaxBytes: int(env, 'ARTIFACT_PROJECT_MAX_BYTES', 1024 * 1024 * 1024, 1024, 1024 * 1024 * 1024 * 1024),
      cacheBytes: int(env, 'ARTIFACT_CACHE_BYTES', 256 * 1024 * 1024, 0, 64 * 1024 * 1024 * 1024),
      // a source map's decoded form (src/domain/symbolication/sourceMapSize.ts); past it, a 422 at upload
      maxDecodedBytes: int(env, 'ARTIFACT_MAX_DECODED_BYTES', 128 * 1024 * 1024, 1024 * 1024, 64 * 1024 * 1024 * 1024),
    },

    mailCaps: {
      perAddress: int(env, 'MAIL_ADDRESS_DAILY_MAX', 20, 1, 1_000_000),
      perAccount: int(env, 'MAIL_ACCOUNT_DAILY_MAX', 50, 1, 1_000_000),
    },
    aiSummariesPerProjectPerDay: int(env, 'AI_SUMMARIES_PER_PROJECT_PER_DAY', 20, 0, 1_000_000),
    metricsToken: secretToken(env, 'METRICS_TOKEN'),
    webConcurrency: workers,
    metricsPort: workers > 1 ? int(env, 'METRICS_PORT', 9464, 1, 65535) : undefined,
  };
}
