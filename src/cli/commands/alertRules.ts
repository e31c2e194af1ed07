import type { AlertRuleAnswer, ListAnswer } from '../answers.ts';
import { type Args, id, list, need, projectId } from '../args.ts';
import { fail } from '../errors.ts';
import { table } from '../output.ts';
import { USAGE } from '../usage.ts';
import type { ApiCommand } from './command.ts';

/** A rule's fields as given (absent: left out). */
const ruleFields = (a: Args): Record<string, unknown> => {
  const num = (v: string | undefined, flag: string) => {
    if (v === undefined) return undefined;
    const n = Number(v);
    return Number.isFinite(n) && v.trim() !== '' ? n : fail(`${flag} must be a number, not "${v}"`);
  };
  const { values } = a;
  return {
    name: values.name,
    threshold: num(values.threshold, '--threshold'),
    windowMinutes: num(values.window, '--window'),
    minSessions: num(values['min-sessions'], '--min-sessions'),
    emails: values.emails === undefined ? undefined : values.emails === 'none' ? [] : list(values.emails),
    webhookIds: values.webhooks === undefined ? undefined : list(values.webhooks),
  };
};

const ruleLine = (r: AlertRuleAnswer) => {
  const when =
    r.kind === 'spike'
      ? `>= ${r.threshold} occurrences`
      : r.kind === 'crash_free'
        ? `< ${r.threshold}% crash-free`
        : `significantly below the previous release${r.threshold ? ` by > ${r.threshold} pts` : ''}`;
  return `${r.kind} ${when} in ${r.windowMinutes} min`;
};

const showRule = (json: unknown) => {
  const rule = json as AlertRuleAnswer;
  return `Rule "${rule.name}" (${rule.id}): ${ruleLine(rule)}${rule.enabled ? '' : ', off'}`;
};

const rulesRoute = (a: Args) => `/api/projects/${projectId(a)}/alert-rules`;

export const alertRules: Record<string, ApiCommand> = {
  'alert-rules list': {
    request: (a) => ({ method: 'GET', route: rulesRoute(a) }),
    show: (json) =>
      table((json as ListAnswer<AlertRuleAnswer>).items, [
        ['ID', (r) => r.id],
        ['NAME', (r) => r.name],
        ['FIRES WHEN', ruleLine],
        ['ON', (r) => (r.enabled ? 'yes' : 'no')],
      ]),
  },
  'alert-rules create': {
    request: (a) => ({
      method: 'POST',
      route: rulesRoute(a),
      body: { ...ruleFields(a), name: need(a.values.name, '--name'), kind: need(a.values.kind, '--kind') },
    }),
    show: showRule,
  },
  'alert-rules update': {
    request(a) {
      const route = `${rulesRoute(a)}/${id(a.arg, 'RULE_ID', 'alert rule')}`;
      const change = ruleFields(a);
      if (a.values.enable && a.values.disable) fail('Give --enable or --disable, not both');
      if (a.values.enable || a.values.disable) change.enabled = a.values.enable;
      if (Object.values(change).every((v) => v === undefined)) {
        fail(
          `Nothing to change: give --name, --threshold, --window, --min-sessions, --emails, --webhooks, --enable or --disable\n\n${USAGE}`,
        );
      }
      return { method: 'PATCH', route, body: change };
    },
    show: showRule,
  },
  'alert-rules delete': {
    request: (a) => ({ method: 'DELETE', route: `${rulesRoute(a)}/${id(a.arg, 'RULE_ID', 'alert rule')}` }),
    show: (_json, a) => `Deleted ${a.arg}`,
  },
};
