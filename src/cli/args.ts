import { parseArgs } from 'node:util';
import { fail } from './errors.ts';
import { USAGE } from './usage.ts';

/** The command line: its options, then the command (resource, action) and the command's argument. */
export function readArgs() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      token: { type: 'string' },
      json: { type: 'boolean', default: false },
      name: { type: 'string' },
      project: { type: 'string' },
      group: { type: 'string' },
      status: { type: 'string' },
      emails: { type: 'string' },
      origins: { type: 'string' },
      owner: { type: 'string' },
      team: { type: 'string' },
      release: { type: 'string' },
      scopes: { type: 'string' },
      key: { type: 'string' },
      'url-prefix': { type: 'string' },
      'no-team': { type: 'boolean', default: false },
      kind: { type: 'string' },
      threshold: { type: 'string' },
      window: { type: 'string' },
      'min-sessions': { type: 'string' },
      webhooks: { type: 'string' },
      endpoint: { type: 'string' },
      regressions: { type: 'boolean', default: false },
      'new-groups': { type: 'boolean', default: false },
      enable: { type: 'boolean', default: false },
      disable: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  const [resource, action, arg] = positionals;
  return { values, resource, action, arg };
}

export type Args = ReturnType<typeof readArgs>;

export const need = (v: string | undefined, flag: string): string => v ?? fail(`Missing ${flag}\n\n${USAGE}`);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id given on the command line, checked before any request: a typo gets a sentence, not a schema error. */
export function id(v: string | undefined, flag: string, what: string): string {
  if (v === undefined) return fail(`Missing ${flag}\n\n${USAGE}`);
  if (!UUID.test(v)) {
    const hint = what === 'project' ? ' (`npm run cli -- projects list` shows them)' : '';
    const article = /^[aeiou]/i.test(what) ? 'an' : 'a';
    return fail(
      `${flag} "${v}" is not ${article} ${what} id: ids look like 2b0d7b3e-5c1a-4e0f-9d3b-1f2a3b4c5d6e${hint}`,
    );
  }
  return v;
}

export const projectId = (a: Args) => id(a.values.project, '--project', 'project');

/** A comma-separated option's items, blanks left out. */
export const list = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
