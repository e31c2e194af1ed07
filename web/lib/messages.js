// The server's errors in words a person reads, chosen by the reply's `code` and, for a field,
// the validator's keyword and params: never by matching the API's English, which may change.

const FIELD = {
  alertEmails: 'alert recipient',
  email: 'email address',
  password: 'password',
  name: 'name',
  sessionId: 'session id',
  projectId: 'project id',
  groupId: 'crash group id',
  keyId: 'key id',
  teamId: 'team id',
  userId: 'user id',
  status: 'status',
  from: 'start date',
  to: 'end date',
  page: 'page',
  q: 'search',
};

function fieldName(path) {
  const parts = String(path ?? '')
    .replace(/^\//, '')
    .split('/')
    .filter(Boolean);
  const name = parts.find((p) => !/^\d+$/.test(p)) ?? '';
  const index = parts.find((p) => /^\d+$/.test(p));
  const label = FIELD[name] ?? (name || 'value');
  return index === undefined ? label : `${label} ${Number(index) + 1}`;
}

/**
 * One field problem as a sentence, worded from the validator's keyword and params (the API's
 * `code`, `keyword` and `params` are for programs; its English `message` is the last resort).
 */
export function describeProblem(path, { keyword, params = {}, message } = {}) {
  const f = fieldName(path);
  let what;
  if (keyword === 'format')
    what =
      params.format === 'email'
        ? 'is not a valid email address'
        : params.format === 'uuid'
          ? 'is not a valid id'
          : 'is not in the expected format';
  else if (keyword === 'pattern' || (keyword === 'minLength' && params.limit <= 1)) what = 'cannot be empty';
  else if (keyword === 'minLength') what = `is too short (at least ${params.limit} characters)`;
  else if (keyword === 'maxLength') what = `is too long (at most ${params.limit} characters)`;
  else if (keyword === 'maxItems') what = `has too many entries (at most ${params.limit})`;
  else if (keyword === 'enum') what = 'is not one of the allowed choices';
  else if (keyword === 'type' && (params.type === 'integer' || params.type === 'number')) what = 'must be a number';
  else if (keyword === 'minimum') what = `must be ${params.limit} or more`;
  else if (keyword === 'maximum') what = `must be ${params.limit} or less`;
  else what = String(message ?? 'is not valid');
  const sentence = `The ${f} ${what}.`;
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/** The message for an error answer `{error, code, details?}` of the given status. */
export function humanError(status, body) {
  const error = body?.error;
  if (Array.isArray(body?.details) && body.details.length) {
    return body.details
      .slice(0, 5)
      .map((d) => describeProblem(d.path, d))
      .join(' ');
  }
  switch (body?.code) {
    case 'invalid_path_parameter': // a hand-edited or cut link
      return `This link is broken: the ${FIELD[body.field] ?? body.field} in it is not valid. Check the address, or go back and open it again.`;
    case 'invalid_parameter':
      if (body.keyword) return describeProblem(body.field, body);
      break;
    case 'missing_field':
      return `The ${fieldName(body.field)} is required.`;
    case 'invalid_date':
      return `The ${FIELD[body.field] ?? body.field} is not a date: enter it as year-month-day, like 2026-11-21.`;
    case 'project_not_found':
      return 'This project does not exist, or it belongs to a team you are not in. A project made with the CLI shows here once an operator gives it to your team (npm run cli -- projects set-team).';
    case 'cross_site':
      return 'This request came from another site and was refused.';
  }
  if (status === 429) return 'Too many requests for now. Wait a minute, then try again.';
  if (status >= 500) return 'The server ran into a problem. Try again in a moment.';
  return error ?? `The server answered ${status}.`;
}
