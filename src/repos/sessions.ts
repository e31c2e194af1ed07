import type { Postgres } from '../stores/postgres/port.ts';
import { decideEnd, statusAfterEnd, type SessionStatus } from '../domain/sessionState.ts';
import { deviceFingerprint } from '../domain/crashGrouping.ts';

export interface Device {
  platform?: string;
  osVersion?: string;
  model?: string;
  brand?: string;
  appVersion?: string;
  appBuildNumber?: string;
  sdkVersion?: string;
  locale?: string;
  timezone?: string;
  screenWidth?: number;
  screenHeight?: number;
  networkType?: string;
}

export interface SessionStart {
  sessionId: string;
  device: Device;
  startedAt: number;
  userId?: string;
}

export function sessionsRepo(db: Postgres) {
  return {
    /** Idempotent on (project, sessionId): a repeat is silently ignored. */
    async start(projectId: string, s: SessionStart): Promise<void> {
      const d = s.device;
      await db.query(
        `INSERT INTO sessions (project_id, id, user_id, platform, os_version, model, brand, app_version,
           app_build_number, sdk_version, locale, timezone, screen_width, screen_height, network_type,
           device_fingerprint, started_at)
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)
         ON CONFLICT (project_id, id) DO NOTHING`,
        [
          projectId, s.sessionId, s.userId ?? null, d.platform ?? null, d.osVersion ?? null, d.model ?? null,
          d.brand ?? null, d.appVersion ?? null, d.appBuildNumber ?? null, d.sdkVersion ?? null, d.locale ?? null,
          d.timezone ?? null, d.screenWidth ?? null, d.screenHeight ?? null, d.networkType ?? null,
          deviceFingerprint(d), s.startedAt,
        ],
      );
    },

    async exists(projectId: string, sessionId: string): Promise<boolean> {
      const r = await db.query('SELECT 1 FROM sessions WHERE project_id = $1 AND id = $2', [projectId, sessionId]);
      return r.rows.length > 0;
    },

    /** 'ok' also covers an unknown session and a session already ended (retries are safe). */
    async end(projectId: string, sessionId: string, endedAt: number): Promise<'ok' | 'before-start'> {
      return db.tx(async (q) => {
        const r = await q.query<{ started_at: number; ended_at: number | null; status: SessionStatus }>(
          'SELECT started_at, ended_at, status FROM sessions WHERE project_id = $1 AND id = $2 FOR UPDATE',
          [projectId, sessionId],
        );
        const row = r.rows[0];
        if (!row) return 'ok';
        const decision = decideEnd({ startedAt: row.started_at, endedAt: row.ended_at }, endedAt);
        if (decision === 'before-start') return 'before-start';
        if (decision === 'apply') {
          await q.query('UPDATE sessions SET ended_at = $3, status = $4 WHERE project_id = $1 AND id = $2', [
            projectId, sessionId, endedAt, statusAfterEnd(row.status),
          ]);
        }
        return 'ok';
      });
    },

    /** Sets the flag once; returns whether this call changed it. */
    async markNetworkErrors(projectId: string, sessionId: string): Promise<boolean> {
      const r = await db.query(
        'UPDATE sessions SET has_network_errors = true WHERE project_id = $1 AND id = $2 AND NOT has_network_errors',
        [projectId, sessionId],
      );
      return r.rowCount > 0;
    },
  };
}

export type SessionsRepo = ReturnType<typeof sessionsRepo>;
