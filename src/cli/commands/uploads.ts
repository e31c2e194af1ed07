import { type Args, need, projectId } from '../args.ts';
import { type UploadFile, sourceMapFiles, uploadArtifacts } from '../artifacts.ts';
import { fail } from '../errors.ts';
import { adminToken } from '../http.ts';
import type { RunCommand } from './command.ts';

/** An upload of a release's files, named by `target` (the command's argument, `placeholder` in messages). */
const upload = (placeholder: string, files: (target: string, a: Args) => UploadFile[]): RunCommand => ({
  run(a, base) {
    const project = projectId(a);
    const release = need(a.values.release, '--release');
    const target = need(a.arg, placeholder);
    const key = a.values.key ?? process.env.FLIGHTREC_UPLOAD_KEY ?? adminToken(a.values.token);
    return uploadArtifacts(base, key, project, release, files(target, a), a.values.json);
  },
});

export const uploads: Record<string, RunCommand> = {
  'sourcemaps upload': upload('DIR', (dir, a) => {
    const files = sourceMapFiles(dir, a.values['url-prefix'] ?? '~/');
    if (files.length === 0) fail(`No source maps (*.map) under ${dir}`);
    return files;
  }),
  'mappings upload': upload('mapping.txt', (file) => [{ file, name: 'mapping.txt', kind: 'proguard' }]),
};
