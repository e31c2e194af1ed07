import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServiceWithProject, type ChildService } from './child.ts';
import { Ledger } from './load.ts';
import { sendWithRetry } from './transport.ts';
import { checkServiceStores, expectExactlyOnce } from './verify.ts';
import { openServiceStores } from './stores.ts';
import { ADMIN_TOKEN } from '../helpers/server.ts';
import { sleep, waitFor } from '../helpers/wait.ts';
import * as P from '../helpers/payloads.ts';
import { crashGroupKey, crashOccurrenceId, type CrashPayload } from '../../src/domain/crashGrouping.ts';
import { metricValue } from '../helpers/inspect.ts';

// Issues 31 and 34: kill -9 during a crash storm, with crashes acknowledged once fsync'd to the
// crash spool and recorded by its loader. Each restart takes over the spool and replays what
// the dead process had not recorded (or had recorded without deleting its segment). Checked in
// the stores afterwards: every acknowledged occurrence once, every group's counter exact, no
// group that was not reported, and each new group's alert job once, done, its summary written
// and its email sent under one Message-ID.
const KILLS = Number(process.env.KILLS ?? 3);
const CLIENTS = Number(process.env.LOAD_CLIENTS ?? 8);

let svc: ChildService | undefined;
afterAll(async () => {
  await svc?.stop('SIGKILL');
});

/** A storm of crash reports from `clients` sessions; new groups keep appearing while it runs. */
function crashStorm(opts: { baseUrl: () => string; auth: { authorization: string }; ledger: Ledger; clients: number }) {
  const { ledger } = opts;
  let stopping = false;
  let n = 0;
  const send = async (p: string, body: unknown) => {
    await sendWithRetry(opts.baseUrl, p, body, opts.auth, {
      onRetry: ({ status, error }) => {
        if (status === 'network') {
          ledger.retried.network++;
          ledger.networkErrors[error ?? '?'] = (ledger.networkErrors[error ?? '?'] ?? 0) + 1;
        } else if (status === 429) ledger.retried.tooMany++;
        else ledger.retried.server++;
      },
    });
    ledger.requests++;
  };
  const loops = Array.from({ length: opts.clients }, async () => {
    const start = P.sessionStart();
    await send('/ingest/session', start);
    ledger.sessions.add(start.sessionId);
    while (!stopping) {
      const i = n++;
      // a new group every 15 reports or so, the rest spread over the groups so far
      const g = Math.floor(Math.random() * (1 + i / 15));
      const c = P.crash(start.sessionId, {
        message: `Error: storm in fn${g}`,
        stackTrace: [`at fn${g} (storm.js:${g}:1)`, 'at b (b.js:2:2)', 'at c (c.js:3:3)', 'at d (d.js:4:4)'].join('\n'),
        timestamp: P.T0 + i,
        isFatal: i % 3 === 0,
      }) as CrashPayload;
      await send('/ingest/crash', c);
      if (Math.random() < 0.2) await send('/ingest/crash', c); // re-sent: the SDK was not sure of the answer
      ledger.crashes.set(crashOccurrenceId(c), crashGroupKey(c.stackTrace, c.message));
    }
  });
  const done = Promise.all(loops);
  return {
    async stop() {
      stopping = true;
      await done;
    },
  };
}

const metric = async (url: string, name: string) => metricValue(await (await fetch(`${url}/metrics`)).text(), name);

describe('kill -9 during a crash storm (crashes through the spool)', () => {
  it(`survives ${KILLS} SIGKILLs: every acknowledged crash counted once, each new group alerted once`, async () => {
    const started = await startServiceWithProject('crash-storm-restart', {
      INGEST_SPOOL: 'true',
      SPOOL_LOAD_INTERVAL_MS: '200',
      RATE_LIMIT_EXPORT_PER_MIN: '1000000',
      ALERT_EMAIL_TO: 'ops@example.com',
      ALERT_DIGEST_WINDOW_MS: '0',
      // a job leased by a killed worker is taken again within seconds, not the default 2 minutes
      OUTBOX_LEASE_MS: '3000',
    });
    svc = started.svc;
    const { dataDir, apiKey, projectId } = started;
    const auth = { authorization: `Bearer ${apiKey}` };

    const ledger = new Ledger();
    const storm = crashStorm({ baseUrl: () => svc!.url, auth, ledger, clients: CLIENTS });
    for (let k = 0; k < KILLS; k++) {
      const before = ledger.crashes.size;
      while (ledger.crashes.size < before + 30) await sleep(50);
      await sleep(200 + Math.random() * 1500);
      expect((await svc.stop('SIGKILL')).signal).toBe('SIGKILL');
      await svc.start();
    }
    const beforeEnd = ledger.crashes.size;
    while (ledger.crashes.size < beforeEnd + 30) await sleep(50);
    await storm.stop();
    expect(ledger.retried.network).toBeGreaterThan(0); // the kills did cut requests off

    // Visible once the crash spool is empty and every new group's alert job is done.
    const spoolEmpty = async () => (await metric(svc!.url, 'flightrec_crash_spool_bytes')) === 0;
    await waitFor('the crash spool loaded', spoolEmpty, 60_000);
    const groupIds: string[] = await waitFor(
      'every group exported',
      async () => {
        const r = await fetch(`${svc!.url}/export/crashes?limit=1000`, { headers: auth });
        const data = ((await r.json()) as { data: { id: string }[] }).data;
        return data.length === new Set(ledger.crashes.values()).size ? data.map((g) => g.id) : undefined;
      },
      60_000,
    );
    let states: unknown[] = [];
    await waitFor(
      'every alert job done',
      async () => {
        states = await Promise.all(
          groupIds.map(async (id) => {
            const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
            const r = await fetch(`${svc!.url}/api/projects/${projectId}/crash-groups/${id}`, { headers });
            return ((await r.json()) as { alert: { status: string } | null }).alert;
          }),
        );
        return states.every((s) => (s as { status?: string } | null)?.status === 'done');
      },
      90_000,
    ).catch((err: unknown) => {
      const pending = states.filter((x) => (x as { status?: string } | null)?.status !== 'done');
      throw new Error(`${String(err)}: ${JSON.stringify(pending.slice(0, 5))}`);
    });

    expect(await svc.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    const check = await checkServiceStores(dataDir, projectId, ledger);
    const stores = await openServiceStores(dataDir, process.env.DATABASE_URL);
    let jobs: { group_id: string; status: string; sent: boolean; summary: string | null }[];
    try {
      jobs = (
        await stores.pg.query<{ group_id: string; status: string; sent: boolean; summary: string | null }>(
          `SELECT o.group_id::text AS group_id, o.status, o.sent_at IS NOT NULL AS sent, g.summary
         FROM alert_outbox o JOIN crash_groups g ON g.id = o.group_id
         WHERE o.project_id = $1 AND o.kind = 'new_crash_group'`,
          [projectId],
        )
      ).rows;
    } finally {
      await stores.close();
    }
    // Emails: one Message-ID per alert (a digest names several groups under one).
    const mailDir = path.join(dataDir, 'mail');
    const mails = fs
      .readdirSync(mailDir)
      .filter((f) => f.endsWith('.eml'))
      .map((f) => fs.readFileSync(path.join(mailDir, f), 'utf8'));
    const alertIds = new Map<string, Set<string>>();
    for (const m of mails) {
      const group = /^X-Flightrec-Crash-Group: (\S+)$/m.exec(m)?.[1];
      const id = /^Message-ID: (\S+)$/im.exec(m)?.[1];
      if (group && id) alertIds.set(group, (alertIds.get(group) ?? new Set()).add(id));
    }
    console.log(
      'crash storm restart:',
      JSON.stringify({
        kills: KILLS,
        requests: ledger.requests,
        retried: ledger.retried,
        crashes: ledger.crashes.size,
        groups: groupIds.length,
        mails: mails.length,
        check: check.crashes,
      }),
    );

    expectExactlyOnce(check);
    expect(check.crashes.stored).toBe(check.crashes.acked);
    expect(jobs.map((j) => j.group_id).sort()).toEqual([...groupIds].sort());
    expect(jobs.filter((j) => j.status !== 'done' || !j.sent || j.summary === null)).toEqual([]);
    expect([...alertIds.values()].filter((ids) => ids.size !== 1)).toEqual([]);
  }, 300_000);
});
