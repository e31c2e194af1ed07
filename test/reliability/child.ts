import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { ADMIN_TOKEN, tempDataDir } from '../helpers/server.ts';
import { freePort } from '../../scripts/freePort.ts';
import { sleep } from '../helpers/wait.ts';
export { freePort };

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The service as its own process (`node --import tsx src/main.ts`), as in production, so it
 * can be killed with a real signal and restarted on the same DATA_DIR.
 */
export class ChildService {
  proc: ChildProcess | undefined;
  /** stdout+stderr of every run, for diagnosis in a failure message. */
  output = '';
  readonly url: string;

  constructor(readonly env: Record<string, string>) {
    this.url = `http://127.0.0.1:${env.PORT}`;
  }

  /** Starts the process and waits until /health answers 200. */
  async start(timeoutMs = 60_000): Promise<void> {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        // test/setupDatabase.ts: the processes on one Postgres share its server key
        ...(process.env.SECRETS_KEY ? { SECRETS_KEY: process.env.SECRETS_KEY } : {}),
        ...this.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.proc = proc;
    this.output += `\n--- start pid ${proc.pid} ---\n`;
    proc.stdout!.on('data', (d) => (this.output += d));
    proc.stderr!.on('data', (d) => (this.output += d));
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (proc.exitCode !== null || proc.signalCode !== null) {
        throw new Error(
          `service exited during start (code ${proc.exitCode}, signal ${proc.signalCode}):\n${this.output.slice(-4000)}`,
        );
      }
      try {
        const r = await fetch(`${this.url}/health`, { signal: AbortSignal.timeout(1000) });
        if (r.status === 200) return;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    throw new Error(`service did not become healthy in ${timeoutMs} ms:\n${this.output.slice(-4000)}`);
  }

  /** Sends a signal and resolves with the exit code/signal once the process is gone. */
  async stop(
    signal: NodeJS.Signals,
    timeoutMs = 30_000,
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null)
      return { code: proc?.exitCode ?? null, signal: proc?.signalCode ?? null };
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      proc.once('exit', (code, sig) => resolve({ code, signal: sig })),
    );
    proc.kill(signal);
    const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * A service child process on a fresh DATA_DIR (or the environment's Postgres and Redis), started,
 * with one project created through the management API.
 */
export async function startServiceWithProject(
  name: string,
  env: Record<string, string> = {},
): Promise<{ svc: ChildService; dataDir: string; projectId: string; apiKey: string }> {
  const dataDir = tempDataDir();
  const svc = new ChildService({
    DATA_DIR: dataDir,
    PORT: String(await freePort()),
    ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_INGEST_PER_MIN: '10000000',
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL } : {}),
    ...env,
  });
  await svc.start();
  const created = await fetch(`${svc.url}/api/projects`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  if (created.status !== 201) throw new Error(`project create answered ${created.status}: ${await created.text()}`);
  const { project, apiKey } = (await created.json()) as { project: { id: string }; apiKey: string };
  return { svc, dataDir, projectId: project.id, apiKey };
}
