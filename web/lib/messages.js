// The server's errors in words a person reads. The API keeps its precise, machine-shaped
// messages (JSON pointers, validator keywords) for scripts; the page says what to fix.

const FIELD = {
  alertEmails: 'alert recipient', email: 'email address', password: 'password', name: 'name',
  sessionId: 'session id', projectId: 'project id', groupId: 'crash group id', keyId: 'key id', teamId: 'team id',
  userId: 'user id', status: 'status', from: 'start date', to: 'end date', page: 'page', q: 'search',
};

function fieldName(path) {
  const parts = String(path ?? '').replace(/^\//, '').split('/').filter(Boolean);
  const name = parts.find((p) => !/^\d+$/.test(p)) ?? '';
  const index = parts.find((p) => /^\d+$/.test(p));
  const label = FIELD[name] ?? (name || 'value');
  return index === undefined ? label : `${label} ${Number(index) + 1}`;
}

/** One validator message as a sentence about the field. */
export function describeProblem(path, message) {
  const f = fieldName(path);
  const m = String(message ?? '');
  let what;
  if (/format "email"/.test(m)) what = 'is not a valid email address';
  else if (/format "uuid"/.test(m)) what = 'is not a valid id';
  else if (/must NOT have fewer than 1 characters|must match pattern/.test(m)) what = 'cannot be empty';
  else if (/must NOT have more than (\d+) characters/.test(m)) what = `is too long (at most ${m.match(/(\d+)/)[1]} characters)`;
  else if (/must NOT have fewer than (\d+) characters/.test(m)) what = `is too short (at least ${m.match(/(\d+)/)[1]} characters)`;
  else if (/must NOT have more than (\d+) items/.test(m)) what = `has too many entries (at most ${m.match(/(\d+)/)[1]})`;
  else if (/must be equal to one of the allowed values/.test(m)) what = 'is not one of the allowed choices';
  else if (/must be (integer|number)/.test(m)) what = 'must be a number';
  else if (/must be >= 1/.test(m)) what = 'must be 1 or more';
  else what = m.replace(/^must /, 'must ');
  const sentence = `The ${f} ${what}.`;
  return sentence.charAt(0).toUpperCase() + sentence.slice(1);
}

/** The message for an error answer `{error, details?}` of the given status. */
export function humanError(status, body) {
  const error = body?.error;
  if (Array.isArray(body?.details) && body.details.length) {
    return body.details.slice(0, 5).map((d) => describeProblem(d.path, d.message)).join(' ');
  }
  // "Invalid params parameter sessionId: must match format "uuid"" — a hand-edited or cut link.
  const param = /^Invalid (params|querystring) parameter (\w+): (.*)$/.exec(error ?? '');
  if (param) {
    return param[1] === 'params'
      ? `This link is broken: the ${FIELD[param[2]] ?? param[2]} in it is not valid. Check the address, or go back and open it again.`
      : describeProblem(param[2], param[3]);
  }
  if (/^Missing required field \/?(.*)$/.test(error ?? '')) return `The ${fieldName(error.replace(/^Missing required field /, ''))} is required.`;
  if (/^(from|to) (must be an ISO 8601 date|is not a valid calendar date|has an invalid UTC offset)/.test(error ?? '')) {
    return `The ${FIELD[error.split(' ')[0]]} is not a date: enter it as year-month-day, like 2026-11-21.`;
  }
  if (error === 'Project not found') {
    return 'This project does not exist, or it belongs to a team you are not in. A project made with the CLI shows here once an operator gives it to your team (npm run cli -- projects set-team).';
  }
  if (status === 429) return 'Too many requests for now. Wait a minute, then try again.';
  if (status >= 500) return 'The server ran into a problem. Try again in a moment.';
  if (status === 403 && /Cross-/.test(error ?? '')) return 'This request came from another site and was refused.';
  return error ?? `The server answered ${status}.`;
}
