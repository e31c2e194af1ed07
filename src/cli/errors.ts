import type { ErrorAnswer, ValidationDetail } from './answers.ts';

/** A mistake the CLI can tell without the service (or a service it cannot reach): exit code 2. */
export function fail(msg: string): never {
  console.error(msg);
  process.exit(2);
}

/** A refusal on stderr: the error as a sentence, then the validator's details, which say which field and why. */
export function printError(res: Response, json: unknown, text: string, what = ''): void {
  const answer = (json ?? {}) as ErrorAnswer;
  console.error(
    what
      ? `Error ${res.status} ${what}: ${answer.error ?? text}`
      : plainError(res.status, String(answer.error ?? text)),
  );
  for (const d of Array.isArray(answer.details) ? answer.details : []) console.error(`  ${describeDetail(d)}`);
}

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

/** A server error as a sentence: "Invalid params parameter projectId" says little to a person. */
function plainError(status: number, error: string): string {
  const m = /^Invalid (params|querystring|body) parameter (\w+)$/.exec(error);
  const idHint = ' (an id looks like 2b0d7b3e-5c1a-4e0f-9d3b-1f2a3b4c5d6e)';
  if (m) return `Error ${status}: ${m[2]} is not valid${/Id$/.test(m[2] ?? '') ? idHint : ''}`;
  return `Error ${status}: ${error}`;
}
