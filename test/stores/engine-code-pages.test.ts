import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import { cleanMappings, pageOutCode, pageOutEngineCode } from '../../src/stores/clickhouse/engineCodePages.ts';
import { openChdb } from '../../src/stores/clickhouse/chdb.ts';
import { migrateClickHouse } from '../../src/stores/migrations.ts';
import { ADMIN_TOKEN, tempDataDir } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';
import { ChildService, freePort } from '../reliability/child.ts';

// Once started, the service pages out the embedded engine's start-up code (issue 31: peak RSS).
// The kernel pages out only what no other process maps, and the other test worker runs the same
// engine library: what the kernel does is shown on a library this process alone has loaded.

const linux = process.platform === 'linux';
const zlib = linux
  ? [
      '/usr/lib/x86_64-linux-gnu/libz.so.1',
      '/lib/x86_64-linux-gnu/libz.so.1',
      '/usr/lib64/libz.so.1',
      '/usr/lib/libz.so.1',
    ].find((f) => fs.existsSync(f))
  : undefined;
const children: ChildService[] = [];
afterAll(async () => {
  await Promise.all(children.map((c) => c.stop('SIGKILL')));
});

const SMAPS = `7f101e400000-7f102756e000 r--p 00000000 fe:00 5311893                    /opt/app/node_modules/@chdb/lib-linux-x64-gnu/libchdb.so
Size:             148920 kB
Rss:               46008 kB
Shared_Clean:      40000 kB
Private_Clean:      6008 kB
Anonymous:             0 kB
7f102756e000-7f103f348000 r-xp 0916d000 fe:00 5311893                    /opt/app/node_modules/@chdb/lib-linux-x64-gnu/libchdb.so
Rss:              111692 kB
Private_Clean:    111692 kB
Anonymous:             0 kB
7f103f348000-7f103ffc4000 r--p 20f46000 fe:00 5311893                    /opt/app/node_modules/@chdb/lib-linux-x64-gnu/libchdb.so
Rss:               12768 kB
Anonymous:         12764 kB
7f1040000000-7f1040100000 r-xp 00000000 fe:00 17                         /usr/lib/x86_64-linux-gnu/libc.so.6
Rss:                 900 kB
Anonymous:             0 kB
7f1050000000-7f1050200000 rw-p 00000000 00:00 0
Rss:                2048 kB
Anonymous:          2048 kB
7f1060000000-7f1060001000 r--p 00000000 fe:00 99                         /tmp/libchdb.so.bak
Rss:                   4 kB
Anonymous:             0 kB
7f1070000000-7f1070002000 r-xp 00000000 fe:00 5311893                    /opt/app/node_modules/@chdb/lib-linux-x64-gnu/libchdb.so
Rss:                   8 kB
Anonymous:             0 kB`;

describe("the embedded engine's start-up code", () => {
  it("takes only the library's mappings whose pages are all the file's", () => {
    expect(cleanMappings(SMAPS)).toEqual([
      { start: 0x7f101e400000n, end: 0x7f102756e000n, residentKb: 46008, ownKb: 6008 },
      { start: 0x7f102756e000n, end: 0x7f103f348000n, residentKb: 111692, ownKb: 111692 },
      { start: 0x7f1070000000n, end: 0x7f1070002000n, residentKb: 8, ownKb: 0 },
    ]);
    expect(cleanMappings('')).toEqual([]);
  });

  it.skipIf(!zlib)("pages out a library's pages that this process holds alone", async () => {
    // A copy of a small library, loaded by this process only: no other process shares its pages.
    const copy = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-pages-')), 'libpaged.so');
    fs.copyFileSync(zlib as string, copy);
    // Written back before it is loaded: reclaim skips dirty file pages, and a fresh copy's stay
    // dirty until the kernel's flusher gets to them (seconds, or at once on a machine busy writing).
    const fd = fs.openSync(copy, 'r+');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    const lib = koffi.load(copy);
    expect(lib.func('const char *zlibVersion()')()).toMatch(/^\d/);
    // Asked again a few times: a page faulted in a moment ago may still wait in another CPU's
    // batch before it joins the lists reclaim takes pages from (CI's loaded run: nothing went).
    const first = pageOutCode(/\/libpaged\.so$/);
    if (!first.pagedOut) throw new Error(first.reason);
    expect(first.ownBeforeKb).toBeGreaterThan(0);
    const after = await waitFor(
      "half of the copy's own pages paged out",
      () => {
        const again = pageOutCode(/\/libpaged\.so$/);
        if (!again.pagedOut) throw new Error(again.reason);
        return again.ownAfterKb <= first.ownBeforeKb / 2 ? again : undefined;
      },
      2000,
      100,
    );
    expect(after.residentAfterKb).toBeLessThanOrEqual(first.residentBeforeKb / 2);
    // and it still runs, read back from the file
    expect(lib.func('const char *zlibVersion()')()).toMatch(/^\d/);
  });

  it.skipIf(!linux)("advises the engine's library, which answers queries after", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'flightrec-pages-'));
    const ch = await openChdb(dir);
    try {
      await migrateClickHouse(ch);
      const r = pageOutEngineCode();
      if (!r.pagedOut) throw new Error(r.reason);
      expect(r.advisedKb).toBeGreaterThan(100 * 1024);
      // the pages another test worker maps too stay; the ones this process holds alone go
      expect(r.ownAfterKb).toBeLessThanOrEqual(r.ownBeforeKb / 2);
      expect(await ch.query<{ n: number }>('SELECT count() AS n FROM events')).toEqual([{ n: 0 }]);
    } finally {
      await ch.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!linux)(
    'is paged out once the service listens, and says so in its log',
    async () => {
      const child = new ChildService({
        DATA_DIR: tempDataDir(),
        PORT: String(await freePort()),
        ADMIN_TOKEN,
        LOG_LEVEL: 'info',
      });
      children.push(child);
      await child.start();
      const line = await waitFor('the page-out log line', () =>
        child.output.split('\n').find((l) => l.includes("the embedded engine's start-up code")),
      );
      const logged = JSON.parse(line) as {
        pagedOut: boolean;
        advisedKb: number;
        ownBeforeKb: number;
        ownAfterKb: number;
      };
      expect(logged.pagedOut).toBe(true);
      expect(logged.advisedKb).toBeGreaterThan(100 * 1024);
      expect(logged.ownAfterKb).toBeLessThanOrEqual(logged.ownBeforeKb / 2);
      expect((await fetch(`${child.url}/health`)).status).toBe(200);
      await child.stop('SIGTERM');
    },
    120_000,
  );
});
