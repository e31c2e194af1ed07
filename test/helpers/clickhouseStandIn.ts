import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../scripts/freePort.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The ClickHouse HTTP stand-in (clickhouseShim.ts: chDB behind ClickHouse's HTTP interface), running. */
export interface ClickHouseStandIn {
  url: string;
  port: number;
  child: ChildProcess;
}

/**
 * Starts the stand-in in a process of its own on a free port, over `dataDir` (chDB binds one
 * data directory per process, so it cannot share the test's), and waits until it answers.
 */
export async function startClickHouseStandIn(dataDir: string): Promise<ClickHouseStandIn> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(root, 'test/helpers/clickhouseShim.ts'), String(port), dataDir],
    {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.once('exit', (code) => reject(new Error(`ClickHouse stand-in exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, port, child };
}
