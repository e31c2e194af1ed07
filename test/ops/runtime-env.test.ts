import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import { SERVICE_ENV, SERVICE_NODE_ARGS } from '../../bench/service.ts';

// The process settings Node, glibc and libuv read at start-up are spelled in three places: `npm start`,
// the image, and the benches' SERVICE_ENV. The benches' figures hold for what ships only while the
// three agree (docs/decisions.md: glibc's thresholds and huge pages).

const startScript = (JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts
  .start;
const npmStart = Object.fromEntries(
  [...(startScript ?? '').matchAll(/\b([A-Z_]+)=\$\{\1:-([^}]*)\}/g)].map((m) => [m[1], m[2]]),
);
const imageEnv = Object.fromEntries(
  fs
    .readFileSync('Dockerfile', 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('ENV '))
    .flatMap((l) => [...l.slice(4).matchAll(/([A-Z_]+)=(\S+)/g)].map((m) => [m[1], m[2]])),
);

describe('start-up settings', () => {
  it('npm start sets what the benches measure, and an operator’s own value wins', () => {
    expect(npmStart).toEqual(SERVICE_ENV);
    expect(SERVICE_ENV.GLIBC_TUNABLES).toBe('glibc.malloc.hugetlb=1');
  });

  it('the image sets the same glibc malloc settings', () => {
    for (const k of ['MALLOC_MMAP_THRESHOLD_', 'MALLOC_TRIM_THRESHOLD_', 'GLIBC_TUNABLES'])
      expect({ [k]: imageEnv[k] }).toEqual({ [k]: SERVICE_ENV[k] });
  });

  it('npm start and the image start Node with the flags the benches use', () => {
    const imageCmd = JSON.parse(/^CMD (.*)$/m.exec(fs.readFileSync('Dockerfile', 'utf8'))?.[1] ?? '[]') as string[];
    for (const flag of SERVICE_NODE_ARGS) {
      expect(startScript?.split(' ')).toContain(flag);
      expect(imageCmd).toContain(flag);
    }
  });
});
