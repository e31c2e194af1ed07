import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { InsertBatcher, QueueBudget } from '../stores/clickhouse/batcher.ts';
import type { RateLimiter } from './rateLimiter.ts';
import type { Spool } from '../stores/spool/spool.ts';
import type { CrashPipeline } from '../pipeline/crashPipeline.ts';

/** What the metrics read at scrape time, from the parts that own the numbers. */
export interface MetricSources {
  batchers: InsertBatcher[];
  budget: QueueBudget;
  /** With INGEST_SPOOL. */
  spool?: Spool;
  /** With INGEST_SPOOL: crash reports' spool and loader. */
  crashPipeline?: CrashPipeline;
  /** Batches of crash reports decided twice (their precounted groups met the ledger). */
  recountedCrashBatches?: () => number;
  /** With INGEST_SPOOL: session facts' spool. */
  factsSpool?: Spool;
  limiters: RateLimiter[];
  outboxBacklog: () => Promise<{ pending: number; retrying: number; failed: number; oldestPendingSeconds: number }>;
}

/**
 * The process's Prometheus metrics (`GET /metrics`). One registry per service instance, not
 * prom-client's global one: tests run several services in one process. Labels are bounded:
 * routes are Fastify's route templates, never raw URLs.
 */
export function createMetrics(src: MetricSources) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'flightrec_' });

  const requests = new Counter({
    name: 'flightrec_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'flightrec_http_request_duration_seconds',
    help: 'HTTP request latency by route template',
    labelNames: ['route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const rows = new Counter({
    name: 'flightrec_ingest_rows_total',
    help: 'Rows in /ingest bodies (events, requests; 1 for a session or crash), by route and status',
    labelNames: ['route', 'status'] as const,
    registers: [registry],
  });
  // The limiters count; each counter takes what they counted since the last scrape.
  const limiterCounter = (name: string, help: string, read: (l: RateLimiter) => number) => {
    const counted = new Map<string, number>();
    new Counter({
      name,
      help,
      labelNames: ['limiter'] as const,
      registers: [registry],
      collect() {
        for (const l of src.limiters) {
          const n = read(l);
          this.inc({ limiter: l.name }, n - (counted.get(l.name) ?? 0));
          counted.set(l.name, n);
        }
      },
    });
  };
  limiterCounter(
    'flightrec_rate_limit_rejections_total',
    'Requests refused with 429, by limiter (ingest, export, auth, dashboard)',
    (l) => l.rejections,
  );
  limiterCounter(
    'flightrec_rate_limit_redis_fallbacks_total',
    'Requests counted by this process alone because Redis did not answer in REDIS_COMMAND_TIMEOUT_MS, by limiter',
    (l) => l.redisFallbacks,
  );
  const streamsStarted = new Counter({
    name: 'flightrec_export_streams_total',
    help: 'Streamed exports (stream=true), by outcome (completed, failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const streamsOpen = new Gauge({
    name: 'flightrec_export_streams_open',
    help: 'Streamed exports being sent now',
    registers: [registry],
  });
  const insertSeconds = new Histogram({
    name: 'flightrec_clickhouse_insert_duration_seconds',
    help: 'Group-commit inserts into ClickHouse, by table and outcome',
    labelNames: ['table', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const insertRows = new Counter({
    name: 'flightrec_clickhouse_insert_rows_total',
    help: 'Rows (events, requests, occurrences) in group-commit inserts, by table and outcome',
    labelNames: ['table', 'outcome'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'flightrec_ingest_queue_rows',
    help: 'Rows accepted and waiting for their ClickHouse insert, by table',
    labelNames: ['table'] as const,
    registers: [registry],
    collect() {
      for (const b of src.batchers) this.set({ table: b.table }, b.queuedRows);
    },
  });
  new Gauge({
    name: 'flightrec_ingest_queue_bytes',
    help: 'Bytes of accepted bodies waiting for their ClickHouse insert (all tables; 503 past INGEST_QUEUE_BYTES)',
    registers: [registry],
    collect() {
      this.set(src.budget.bytes);
    },
  });
  const spool = src.spool;
  if (spool) {
    new Gauge({
      name: 'flightrec_spool_bytes',
      help: 'Bytes of acknowledged bodies in the ingest spool, not yet loaded into ClickHouse (503 past SPOOL_MAX_BYTES)',
      registers: [registry],
      collect() {
        this.set(spool.bytes);
      },
    });
    new Gauge({
      name: 'flightrec_spool_oldest_unloaded_seconds',
      help: 'Age of the oldest acknowledged body not yet loaded into ClickHouse',
      registers: [registry],
      collect() {
        this.set(spool.oldestUnloadedSeconds());
      },
    });
    new Gauge({
      name: 'flightrec_spool_loader_lag_seconds',
      help: 'Seconds from the oldest body of the last committed load being spooled to its commit',
      registers: [registry],
      collect() {
        this.set(spool.loaderLagSeconds);
      },
    });
    new Gauge({
      name: 'flightrec_spool_loaded_rows',
      help: 'Rows (events, requests) loaded from the spool into ClickHouse since start',
      registers: [registry],
      collect() {
        this.set(spool.loadedRows);
      },
    });
    new Gauge({
      name: 'flightrec_spool_corrupt_records',
      help: 'Spans of acknowledged spool records that failed their checksum (acknowledged data lost), set aside beside the spool since start',
      registers: [registry],
      collect() {
        this.set(spool.corruptRecords);
      },
    });
    new Gauge({
      name: 'flightrec_spool_refused_bodies',
      help: 'Acknowledged bodies ClickHouse refused for good, set aside beside the spool since start',
      registers: [registry],
      collect() {
        this.set(spool.refusedRecords);
      },
    });
  }
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  const facts = src.factsSpool;
  if (facts) {
    gauge(
      'flightrec_facts_spool_bytes',
      'Bytes of acknowledged session facts (release health) not yet loaded (503 past a sixteenth of SPOOL_MAX_BYTES)',
      () => facts.bytes,
    );
    gauge(
      'flightrec_facts_spool_oldest_unloaded_seconds',
      'Age of the oldest acknowledged session fact not yet loaded',
      () => facts.oldestUnloadedSeconds(),
    );
    gauge(
      'flightrec_facts_spool_refused_facts',
      'Acknowledged session facts ClickHouse refused for good, set aside beside their spool since start',
      () => facts.refusedRecords,
    );
  }
  // With or without the crash spool: a report recorded in its request is a batch of one.
  const recounted = src.recountedCrashBatches;
  if (recounted) {
    gauge(
      'flightrec_crash_batches_recounted',
      "Crash batches rolled back and decided again since start: a new group's occurrence was counted already (a new fingerprint rule or source map moved it)",
      recounted,
    );
  }
  const crashes = src.crashPipeline;
  if (crashes) {
    const cs = crashes.spool;
    gauge(
      'flightrec_crash_spool_bytes',
      'Bytes of acknowledged crash reports not yet recorded (503 past a quarter of SPOOL_MAX_BYTES)',
      () => cs.bytes,
    );
    gauge(
      'flightrec_crash_spool_oldest_unloaded_seconds',
      'Age of the oldest acknowledged crash report not yet recorded',
      () => cs.oldestUnloadedSeconds(),
    );
    gauge(
      'flightrec_crash_spool_loaded_reports',
      'Crash reports recorded from the crash spool since start',
      () => cs.loadedRows,
    );
    gauge(
      'flightrec_crash_spool_batch_retries',
      'Crash batches failed by a retryable error (a store down) since start',
      () => crashes.batchRetries,
    );
    const steps = new Histogram({
      name: 'flightrec_pipeline_step_duration_seconds',
      help: "Steps of the crash pipeline's loader, by step and outcome (ok, retryable, permanent)",
      labelNames: ['pipeline', 'step', 'outcome'] as const,
      registers: [registry],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    });
    const setAside = new Counter({
      name: 'flightrec_pipeline_set_aside_total',
      help: "Acknowledged records set aside for good (kept in the spool's refused file), by step and reason",
      labelNames: ['pipeline', 'step', 'reason'] as const,
      registers: [registry],
    });
    crashes.observeStep = (step, outcome, seconds) => steps.observe({ pipeline: 'crash', step, outcome }, seconds);
    crashes.onSetAside = ({ step, reason }) => setAside.inc({ pipeline: 'crash', step, reason });
  }
  const oldest = new Gauge({
    name: 'flightrec_outbox_oldest_pending_seconds',
    help: 'Age of the oldest pending alert job',
    registers: [registry],
  });
  new Gauge({
    name: 'flightrec_outbox_jobs',
    help: 'Alert outbox jobs not done: pending, retrying (pending after a failed attempt), failed for good',
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      try {
        const b = await src.outboxBacklog();
        this.set({ state: 'pending' }, b.pending);
        this.set({ state: 'retrying' }, b.retrying);
        this.set({ state: 'failed' }, b.failed);
        oldest.set(b.oldestPendingSeconds);
      } catch {
        // A scrape during a Postgres outage still answers; the gauges keep their last values.
      }
    },
  });

  for (const b of src.batchers) {
    b.observe = (table, n, _bytes, seconds, ok) => {
      const outcome = ok ? 'ok' : 'error';
      insertSeconds.observe({ table, outcome }, seconds);
      insertRows.inc({ table, outcome }, n);
    };
  }

  return {
    registry,
    request(method: string, route: string, status: number, seconds: number, ingestRows: number | undefined) {
      requests.inc({ method, route, status: String(status) });
      duration.observe({ route }, seconds);
      if (ingestRows !== undefined) rows.inc({ route, status: String(status) }, ingestRows);
    },
    streamStarted: () => streamsOpen.inc(),
    streamEnded(ok: boolean) {
      streamsOpen.dec();
      streamsStarted.inc({ outcome: ok ? 'completed' : 'failed' });
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
