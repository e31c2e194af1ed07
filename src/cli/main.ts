import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

// The CLI is a client of the management API: embedded stores belong to the server process.
const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  projects list                          every project: id, name, team, created
  projects create --name NAME [--owner EMAIL | --team ID]
                                         create a project and its first API key; with --owner or
                                         --team it belongs to that team (its dashboard shows it)
  projects get --project ID              show a project
  projects rename --project ID --name NAME
  projects set-team --project ID (--owner EMAIL | --team ID | --no-team)
                                         give the project to a team: the team the account EMAIL
                                         owns, or team ID; its members see it in the dashboard
  projects set-alert-emails --project ID --emails a@x,b@y   (empty --emails resets to ALERT_EMAIL_TO)
  projects set-origins --project ID --origins https://app.example.com,https://b.example.com
                                         browser origins that may send to /ingest (CORS); empty
                                         --origins: any origin (the default); --origins none: no page
  keys create --project ID [--name NAME] [--scopes ingest,export,upload]
                                         create another API key for a project (default scopes
                                         ingest,export; CI's upload key: --scopes upload)
  keys deactivate KEY_ID                 deactivate a key (answers 401 within 5 s)
  crash-groups get --project ID --group ID
  crash-groups set-status --project ID --group ID --status open|acknowledged|resolved|ignored
  sourcemaps upload --project ID --release VERSION[+BUILD] DIR [--url-prefix ~/]
                                         upload a build's source maps (*.map) and the minified
                                         files that name them (sourceMappingURL), named by their
                                         path under DIR: ~/assets/index-8f3a2c.js.map
  mappings upload --project ID --release VERSION[+BUILD] mapping.txt
                                         upload an Android build's R8/ProGuard mapping
  alert-rules list --project ID
  alert-rules create --project ID --name NAME --kind spike|crash_free|crash_free_regression [--threshold N]
                     [--window MINUTES] [--min-sessions N] [--emails a@x,b@y|none] [--webhooks ID,ID]
                                         spike: a group passes N occurrences in the window;
                                         crash_free: a release falls below N % crash-free sessions;
                                         crash_free_regression: a release's crash-free sessions are
                                         significantly below the previous release's (95 % intervals)
                                         (no --emails: the project's alert recipients)
  alert-rules update --project ID RULE_ID [--name NAME] [--threshold N] [--window MINUTES]
                     [--min-sessions N] [--emails a@x,b@y|none] [--webhooks ID,ID] [--enable|--disable]
  alert-rules delete --project ID RULE_ID
  webhooks list --project ID
  webhooks create --project ID --endpoint URL [--new-groups] [--regressions]
                                         prints the signing secret, shown once
  webhooks delete --project ID WEBHOOK_ID
  webhooks test --project ID WEBHOOK_ID  send a signed test delivery (see it in webhooks deliveries)
  webhooks deliveries --project ID       the delivery log, newest first

Options:
  --url URL      service address (default $FLIGHTREC_URL or http://127.0.0.1:$PORT, PORT default 3000)
  --token TOKEN  admin token (default $ADMIN_TOKEN, else the file DATA_DIR/admin-token)
  --key KEY      for uploads: a project key with the upload scope (default $FLIGHTREC_UPLOAD_KEY,
                 else the admin token); CI should use such a key, never the app's ingest key
  --json         print the service's JSON answer (for scripts); without it, tables and sentences`;

/** One validation detail as a line a person reads: the field, then what is wrong with it. */
function describeDetail(d: ValidationDetail): string {
  const field = (d.path ?? '').replace(/^\//, '').replace(/\//g, '.') || 'body';
  let msg = d.message ?? 'is invalid';
  if (/must be equal to one of the allowed values/.test(msg))
    msg = `must be one of ${ENUMS[field] ?? 'the allowed values'}`;
  else
    msg = msg
      .replace(/must match format "email"/, 'must be an email address')
      .replace(/must match format "uuid"/, 'must be an id like 2b0d7b3e-…');
  return `${field}: ${msg}`;
}

// The fields whose allowed values a person types on this command line.
const ENUMS: Record<string, string> = { status: 'open, acknowledged, resolved, ignored' };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An id given on the command line, checked before any request: a typo gets a sentence, not a schema error. */
function id(v: string | undefined, flag: string, what: string): string {
  if (v === undefined) return fail(`Missing ${flag}\n\n${USAGE}`);
  if (!UUID.test(v)) {
    const hint = what === 'project' ? ' (`npm run cli -- projects list` shows them)' : '';
    return fail(`${flag} "${v}" is not a ${what} id: ids look like 2b0d7b3e-5c1a-4e0f-9d3b-1f2a3b4c5d6e${hint}`);
  }
  return v;
}

/** A server error as a sentence: "Invalid params parameter projectId" says little to a person. */
function plainError(status: number, error: string): string {
  const m = /^Invalid (params|querystring|body) parameter (\w+)$/.exec(error);
  const idHint = ' (an id looks like 2b0d7b3e-5c1a-4e0f-9d3b-1f2a3b4c5d6e)';
  if (m) return `Error ${status}: ${m[2]} is not valid${/Id$/.test(m[2] ?? '') ? idHint : ''}`;
  return `Error ${status}: ${error}`;
}

// The management API's answers, as far as this CLI reads them (the routes are in README.md, "Management API and CLI").
interface ValidationDetail {
  path?: string;
  message?: string;
  allowedValues?: unknown;
}
interface ErrorAnswer {
  error?: string;
  details?: ValidationDetail[];
}
interface ProjectAnswer {
  id: string;
  name: string;
  teamId: string | null;
  createdAt: string;
}
interface ProjectCreatedAnswer {
  project: ProjectAnswer;
  apiKey: string;
}
interface KeyCreatedAnswer {
  key: { id: string; prefix: string | null; name: string | null };
  apiKey: string;
}
interface WebhookAnswer {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret?: string;
}
interface DeliveryAnswer {
  createdAt: string;
  webhookId: string;
  event: string;
  status: string;
  attempts: number;
  responseCode: number | null;
  error: string | null;
}
interface AlertRuleAnswer {
  id: string;
  name: string;
  kind: string;
  threshold: number | null;
  windowMinutes: number;
  enabled: boolean;
}
interface ListAnswer<T> {
  items: T[];
}
interface ArtifactAnswer {
  artifact: { size: number };
  replaced: boolean;
}

/** Rows as an aligned text table, a header line first; a cell is cut to `max` characters. */
function table<T>(rows: T[], columns: [string, (r: T) => unknown][], max = 60): string {
  if (!rows.length) return '(none)';
  const cell = (v: unknown) => {
    const t = v === null || v === undefined || v === '' ? '-' : Array.isArray(v) ? v.join(',') || '-' : String(v);
    const line = t.replace(/\s+/g, ' ');
    return line.length > max ? `${line.slice(0, max - 1)}…` : line;
  };
  const header = columns.map(([h]) => h);
  const cells = rows.map((r) => columns.map(([, f]) => cell(f(r))));
  const widths = header.map((h, i) => cells.reduce((w, row) => Math.max(w, row[i]?.length ?? 0), h.length));
  const line = (c: string[]) => c.map((x, i) => (i === c.length - 1 ? x : x.padEnd(widths[i] ?? 0))).join('  ');
  return [line(header), ...cells.map(line)].join('\n');
}

/** One object as "field: value" lines (nested values as compact JSON). */
function fields(o: Record<string, unknown>): string {
  const w = Math.max(...Object.keys(o).map((k) => k.length));
  const text = (v: unknown): string => {
    if (v === null || v === undefined) return '-';
    if (Array.isArray(v) && v.every((x) => typeof x !== 'object')) return v.join(', ') || '-';
    return typeof v === 'object' ? JSON.stringify(v) : String(v);
  };
  return Object.entries(o)
    .map(([k, v]) => `${`${k}:`.padEnd(w + 1)} ${text(v)}`)
    .join('\n');
}

function fail(msg: string): never {
  console.error(msg);
  process.exit(2);
}

/**
 * One request to the service, its answer read as JSON (text that is not JSON becomes
 * `{error: text}`); a service that cannot be reached ends the CLI with a message that says so.
 */
async function request(
  base: string,
  url: string,
  init: RequestInit,
): Promise<{ res: Response; json: unknown; text: string }> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (err) {
    return fail(`Cannot reach the service at ${base}: ${(err as Error).message}. Is it running (npm start)?`);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = { error: text };
  }
  return { res, json, text };
}

function adminToken(explicit: string | undefined): string {
  if (explicit) return explicit;
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN;
  const file = path.resolve(process.env.DATA_DIR ?? './.data', 'admin-token');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return fail(`No admin token: pass --token, set ADMIN_TOKEN, or start the server once so it writes ${file}`);
  }
}

async function main() {
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
  if (values.help || !resource) {
    console.log(USAGE);
    return;
  }
  const base = (values.url ?? process.env.FLIGHTREC_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`).replace(
    /\/$/,
    '',
  );
  const need = (v: string | undefined, flag: string) => v ?? fail(`Missing ${flag}\n\n${USAGE}`);

  const projectId = () => id(values.project, '--project', 'project');

  /** A rule's fields as given (absent: left out). */
  const ruleFields = (): Record<string, unknown> => {
    const num = (v: string | undefined, flag: string) => {
      if (v === undefined) return undefined;
      const n = Number(v);
      return Number.isFinite(n) && v.trim() !== '' ? n : fail(`${flag} must be a number, not "${v}"`);
    };
    const list = (v: string | undefined) =>
      (v ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
    return {
      name: values.name,
      threshold: num(values.threshold, '--threshold'),
      windowMinutes: num(values.window, '--window'),
      minSessions: num(values['min-sessions'], '--min-sessions'),
      emails: values.emails === undefined ? undefined : values.emails === 'none' ? [] : list(values.emails),
      webhookIds: values.webhooks === undefined ? undefined : list(values.webhooks),
    };
  };

  const teamChange = (): Record<string, string | null> | null => {
    if (values.owner) return { teamOwnerEmail: values.owner };
    if (values.team) return { teamId: id(values.team, '--team', 'team') };
    if (values['no-team']) return { teamId: null };
    return null;
  };

  if (cmd0(resource, action) === 'sourcemaps upload' || cmd0(resource, action) === 'mappings upload') {
    const project = projectId();
    const release = need(values.release, '--release');
    const target = need(arg, resource === 'sourcemaps' ? 'DIR' : 'mapping.txt');
    const key = values.key ?? process.env.FLIGHTREC_UPLOAD_KEY ?? adminToken(values.token);
    const files =
      resource === 'sourcemaps'
        ? sourceMapFiles(target, values['url-prefix'] ?? '~/')
        : [{ file: target, name: 'mapping.txt', kind: 'proguard' as const }];
    if (files.length === 0) fail(`No source maps (*.map) under ${target}`);
    return uploadArtifacts(base, key, project, release, files, values.json);
  }

  let method = 'POST';
  let route: string;
  let body: unknown;
  const cmd = `${resource} ${action ?? ''}`.trim();
  switch (cmd) {
    case 'projects create':
      route = '/api/projects';
      body = { name: need(values.name, '--name') };
      break;
    case 'projects rename':
      method = 'PATCH';
      route = `/api/projects/${projectId()}`;
      body = { name: need(values.name, '--name') };
      break;
    case 'projects set-team':
      method = 'PATCH';
      route = `/api/projects/${projectId()}`;
      body = teamChange() ?? fail(`Missing --owner EMAIL, --team ID or --no-team\n\n${USAGE}`);
      break;
    case 'projects get':
      method = 'GET';
      route = `/api/projects/${projectId()}`;
      break;
    case 'projects set-alert-emails': {
      method = 'PATCH';
      route = `/api/projects/${projectId()}`;
      const list = (values.emails ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      body = { alertEmails: list.length ? list : null };
      break;
    }
    case 'projects set-origins': {
      method = 'PATCH';
      route = `/api/projects/${projectId()}`;
      const raw = (values.origins ?? '').trim();
      const list = raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      body = { allowedOrigins: raw.toLowerCase() === 'none' ? [] : list.length ? list : null };
      break;
    }
    case 'keys create':
      route = `/api/projects/${projectId()}/keys`;
      body =
        values.name || values.scopes
          ? {
              ...(values.name ? { name: values.name } : {}),
              ...(values.scopes
                ? {
                    scopes: values.scopes
                      .split(',')
                      .map((x) => x.trim())
                      .filter(Boolean),
                  }
                : {}),
            }
          : undefined;
      break;
    case 'keys deactivate':
      route = `/api/keys/${id(arg, 'KEY_ID', 'key')}/deactivate`;
      break;
    case 'crash-groups get':
      method = 'GET';
      route = `/api/projects/${projectId()}/crash-groups/${id(values.group, '--group', 'crash group')}`;
      break;
    case 'crash-groups set-status':
      method = 'PATCH';
      route = `/api/projects/${projectId()}/crash-groups/${id(values.group, '--group', 'crash group')}`;
      body = { status: need(values.status, '--status') };
      break;
    case 'alert-rules list':
    case 'webhooks list':
    case 'webhooks deliveries':
      method = 'GET';
      route = `/api/projects/${projectId()}/${cmd === 'alert-rules list' ? 'alert-rules' : cmd === 'webhooks list' ? 'webhooks' : 'webhook-deliveries'}`;
      break;
    case 'alert-rules create': {
      route = `/api/projects/${projectId()}/alert-rules`;
      body = { ...ruleFields(), name: need(values.name, '--name'), kind: need(values.kind, '--kind') };
      break;
    }
    case 'webhooks create':
      route = `/api/projects/${projectId()}/webhooks`;
      body = {
        url: need(values.endpoint, '--endpoint'),
        events: [
          ...(values['new-groups'] ? ['crash_group.new'] : []),
          ...(values.regressions ? ['crash_group.regressed'] : []),
        ],
      };
      break;
    case 'alert-rules delete':
    case 'webhooks delete':
      method = 'DELETE';
      route =
        `/api/projects/${projectId()}/${resource}/` +
        (resource === 'webhooks' ? id(arg, 'WEBHOOK_ID', 'webhook') : id(arg, 'RULE_ID', 'alert rule'));
      break;
    case 'webhooks test':
      route = `/api/projects/${projectId()}/webhooks/${id(arg, 'WEBHOOK_ID', 'webhook')}/test`;
      break;
    case 'alert-rules update': {
      method = 'PATCH';
      route = `/api/projects/${projectId()}/alert-rules/${id(arg, 'RULE_ID', 'alert rule')}`;
      const change = ruleFields();
      if (values.enable || values.disable) change.enabled = values.enable;
      if (Object.values(change).every((v) => v === undefined)) {
        fail(
          `Nothing to change: give --name, --threshold, --window, --min-sessions, --emails, --webhooks, --enable or --disable\n\n${USAGE}`,
        );
      }
      body = change;
      break;
    }
    case 'projects list':
      method = 'GET';
      route = '/api/projects';
      break;
    default:
      return fail(`Unknown command "${cmd}"\n\n${USAGE}`);
  }

  const token = adminToken(values.token);
  const call = (m: string, r: string, b: unknown) =>
    request(base, base + r, {
      method: m,
      headers: { authorization: `Bearer ${token}`, ...(b !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: b !== undefined ? JSON.stringify(b) : undefined,
    });

  let { res, json, text } = await call(method, route, body);
  // A project created with --owner/--team is given to that team in a second request.
  const team = cmd === 'projects create' ? teamChange() : null;
  if (res.ok && team) {
    const created = json as ProjectCreatedAnswer;
    ({ res, json, text } = await call('PATCH', `/api/projects/${created.project.id}`, team));
    if (res.ok) json = { ...created, project: json };
    else
      console.error(
        `The project ${created.project.id} was created (API key, shown once: ${created.apiKey}) but not given to the team:`,
      );
  }
  if (values.json) {
    console.log(JSON.stringify(json, null, 2));
  } else if (!res.ok) {
    printError(res, json, text);
  } else if (cmd === 'projects create') {
    const { project, apiKey } = json as ProjectCreatedAnswer;
    console.log(`Project ${project.name} (${project.id})\nAPI key (shown once, keep it): ${apiKey}`);
    if (!project.teamId) {
      // Without a team no dashboard user sees the project, and its alert links open nothing.
      console.log(
        `\nIt belongs to no team yet, so no one sees it in the dashboard. Give it to yours:\n` +
          `  npm run cli -- projects set-team --project ${project.id} --owner you@example.com`,
      );
    }
  } else if (cmd === 'projects set-team' || cmd === 'projects rename') {
    const project = json as ProjectAnswer;
    console.log(`Project ${project.name} (${project.id})${project.teamId ? `, team ${project.teamId}` : ', no team'}`);
  } else if (cmd === 'keys create') {
    const { key, apiKey } = json as KeyCreatedAnswer;
    console.log(
      `Key ${key.prefix}… ${key.name ? `"${key.name}" ` : ''}(${key.id})\nAPI key (shown once, keep it): ${apiKey}`,
    );
  } else if (cmd === 'webhooks create') {
    const hook = json as WebhookAnswer;
    console.log(`Webhook ${hook.url} (${hook.id})\nSigning secret (shown once, keep it): ${hook.secret}`);
  } else if (method === 'DELETE') {
    console.log(`Deleted ${arg}`);
  } else if (cmd === 'keys deactivate') {
    console.log(`Key ${arg} deactivated`);
  } else {
    console.log(human(cmd, json));
  }
  if (!res.ok) process.exit(1);
}

/** A refusal on stderr: the error as a sentence, then the validator's details, which say which field and why. */
function printError(res: Response, json: unknown, text: string, what = ''): void {
  const answer = (json ?? {}) as ErrorAnswer;
  console.error(
    what
      ? `Error ${res.status} ${what}: ${answer.error ?? text}`
      : plainError(res.status, String(answer.error ?? text)),
  );
  for (const d of Array.isArray(answer.details) ? answer.details : []) console.error(`  ${describeDetail(d)}`);
}

const ruleLine = (r: AlertRuleAnswer) => {
  const when =
    r.kind === 'spike'
      ? `>= ${r.threshold} occurrences`
      : r.kind === 'crash_free'
        ? `< ${r.threshold}% crash-free`
        : `significantly below the previous release${r.threshold ? ` by > ${r.threshold} pts` : ''}`;
  return `${r.kind} ${when} in ${r.windowMinutes} min`;
};

/** A successful answer as a person reads it: a table for a list, "field: value" lines for one thing. */
function human(cmd: string, json: unknown): string {
  switch (cmd) {
    case 'projects list':
      return table((json as ListAnswer<ProjectAnswer>).items, [
        ['ID', (p) => p.id],
        ['NAME', (p) => p.name],
        ['TEAM', (p) => p.teamId ?? 'none'],
        ['CREATED', (p) => p.createdAt],
      ]);
    case 'alert-rules list':
      return table((json as ListAnswer<AlertRuleAnswer>).items, [
        ['ID', (r) => r.id],
        ['NAME', (r) => r.name],
        ['FIRES WHEN', ruleLine],
        ['ON', (r) => (r.enabled ? 'yes' : 'no')],
      ]);
    case 'alert-rules create':
    case 'alert-rules update': {
      const rule = json as AlertRuleAnswer;
      return `Rule "${rule.name}" (${rule.id}): ${ruleLine(rule)}${rule.enabled ? '' : ', off'}`;
    }
    case 'webhooks list':
      return table(
        (json as ListAnswer<WebhookAnswer>).items,
        [
          ['ID', (w) => w.id],
          ['URL', (w) => w.url],
          ['ALSO RECEIVES', (w) => w.events],
          ['ON', (w) => (w.enabled ? 'yes' : 'no')],
        ],
        80,
      );
    case 'webhooks deliveries':
      return table((json as ListAnswer<DeliveryAnswer>).items, [
        ['CREATED', (d) => d.createdAt],
        ['WEBHOOK', (d) => d.webhookId],
        ['EVENT', (d) => d.event],
        ['STATUS', (d) => d.status],
        ['TRIES', (d) => d.attempts],
        ['HTTP', (d) => d.responseCode],
        ['ERROR', (d) => d.error],
      ]);
    case 'webhooks test':
      return (
        `Test delivery ${(json as { deliveryId: string }).deliveryId} queued: \`npm run cli -- webhooks deliveries --project …\` ` +
        'shows how it went'
      );
    case 'crash-groups set-status': {
      const group = json as { id: string; status: string };
      return `Crash group ${group.id}: ${group.status}`;
    }
    default:
      return fields(json as Record<string, unknown>);
  }
}

const cmd0 = (resource: string, action: string | undefined) => `${resource} ${action ?? ''}`.trim();

interface UploadFile {
  file: string;
  name: string;
  kind: 'sourcemap' | 'minified' | 'proguard';
}

/** The .map files under `dir`, and the minified files that point to one with sourceMappingURL, named prefix + path under dir. */
function sourceMapFiles(dir: string, prefix: string): UploadFile[] {
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
async function uploadArtifacts(
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

main().catch((err) => fail(String(err)));
