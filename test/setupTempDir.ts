import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

// Every test server, its embedded stores (~50 MB each) and whatever a test makes with
// `os.tmpdir()` land in one directory per test file, removed when the file ends. Without it a run
// left gigabytes behind, and a CI machine with little disk ran out part way (ENOSPC). Child
// processes and Chromium inherit TMPDIR, so theirs land here too. The run's own directory
// (test/globalSetup.ts) catches what a file that dies before its hooks leaves.
const fileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'file-'));
process.env.TMPDIR = fileDir;
afterAll(() => fs.rmSync(fileDir, { recursive: true, force: true }));
