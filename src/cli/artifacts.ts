import fs from 'node:fs';
import path from 'node:path';
import type { ArtifactAnswer } from './answers.ts';
import { fail, printError } from './errors.ts';
import { request } from './http.ts';

export interface UploadFile {
  file: string;
  name: string;
  kind: 'sourcemap' | 'minified' | 'proguard';
}

/** The .map files under `dir`, and the minified files that point to one with sourceMappingURL, named prefix + path under dir. */
export function sourceMapFiles(dir: string, prefix: string): UploadFile[] {
  const out: UploadFile[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(full);
        continue;
      }
      const name = prefix + path.relative(dir, full).split(path.sep).join('/');
      if (e.name.endsWith('.map')) out.push({ file: full, name, kind: 'sourcemap' });
      else if (/\.(m?js|cjs|bundle|jsbundle)$/.test(e.name)) {
        const fd = fs.openSync(full, 'r');
        const size = fs.fstatSync(fd).size;
        const tail = Buffer.alloc(Math.min(size, 4096));
        fs.readSync(fd, tail, 0, tail.length, Math.max(0, size - tail.length));
        fs.closeSync(fd);
        if (/\/\/[#@]\s*sourceMappingURL=(?!data:)\S+\s*$/m.test(tail.toString('utf8')))
          out.push({ file: full, name, kind: 'minified' });
      }
    }
  };
  let stat: fs.Stats;
  try {
    stat = fs.statSync(dir);
  } catch {
    return fail(`No such directory: ${dir}`);
  }
  if (!stat.isDirectory()) return fail(`Not a directory: ${dir}`);
  walk(dir);
  return out;
}

/** Uploads each file as the raw, gzip'd body of one request; stops at the first refusal. */
export async function uploadArtifacts(
  base: string,
  key: string,
  project: string,
  release: string,
  files: UploadFile[],
  json: boolean,
) {
  const zlib = await import('node:zlib');
  const results: unknown[] = [];
  for (const f of files) {
    let content: Buffer;
    try {
      content = fs.readFileSync(f.file);
    } catch (e) {
      return fail(`Cannot read ${f.file}: ${(e as Error).message}`);
    }
    const url = `${base}/api/projects/${encodeURIComponent(project)}/releases/${encodeURIComponent(release)}/artifacts?name=${encodeURIComponent(f.name)}&kind=${f.kind}`;
    const {
      res,
      json: answer,
      text,
    } = await request(base, url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key}`,
        'content-type': 'application/octet-stream',
        'content-encoding': 'gzip',
      },
      body: zlib.gzipSync(content),
    });
    if (!res.ok) {
      printError(res, answer, text, `uploading ${f.file} as ${f.name}`);
      process.exit(1);
    }
    const body = answer as ArtifactAnswer;
    results.push(body.artifact);
    if (!json)
      console.log(`${body.replaced ? 'Replaced' : 'Uploaded'} ${f.kind} ${f.name} (${body.artifact.size} bytes)`);
  }
  if (json) console.log(JSON.stringify(results, null, 2));
  else
    process.stdout.write(`\n${files.length} artifact${files.length === 1 ? '' : 's'} of release ${release} uploaded\n`);
}
