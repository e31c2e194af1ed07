import { randomBytes, randomUUID } from 'node:crypto';
import type { PostgresRepos } from '../repos/index.ts';
import { ruleEmailsOf, type NewRule } from '../repos/alertRules.ts';
import type { Webhook } from '../repos/webhooks.ts';
import { enqueueDelivery, type Delivery } from '../repos/webhookDeliveries.ts';
import { memberEmailsOfTeam } from '../repos/accounts.ts';
import {
  judgesReleases,
  RULE_DEFAULTS,
  thresholdProblem,
  type AlertRule,
  type RuleKind,
} from '../domain/alertRules.ts';
import { deliveryBody, TEST_EVENT, webhookUrlProblem } from '../domain/webhooks.ts';
import { sealSecret } from '../lib/secretBox.ts';
import { ConflictError, NotFoundError, ProjectNotFoundError, ValidationError } from '../domain/errors.ts';
import { recipientRows } from '../domain/alertRecipients.ts';
import { normalizeEmail } from './accounts.ts';

export interface RuleInput {
  name?: string;
  kind?: RuleKind;
  threshold?: number;
  windowMinutes?: number;
  minSessions?: number;
  cooldownMinutes?: number;
  emails?: string[] | null;
  webhookIds?: string[];
  enabled?: boolean;
  levels?: string[] | null;
}

export interface WebhookInput {
  url?: string;
  events?: string[];
  enabled?: boolean;
}

/** Who changes a rule: the operator (ADMIN_TOKEN) vouches for its addresses, a member only for members'. */
export type Actor = 'operator' | 'member';

/**
 * A project's alert rules and webhooks: the management API's and the dashboard's use cases.
 * Callers have already checked access to the project (the admin token, or team membership).
 */
export function alertRulesService(
  repos: Pick<PostgresRepos, 'pg' | 'alertRules' | 'webhooks' | 'deliveries' | 'recipients' | 'projects'>,
  opts: { allowPrivateWebhooks: boolean; maxRules: number; maxWebhooks: number; secretsKey: Buffer },
) {
  const { pg: db, alertRules: rules, webhooks: hooks, deliveries, recipients, projects } = repos;

  async function project(projectId: string) {
    const p = await projects.getProject(projectId);
    if (!p) throw new ProjectNotFoundError();
    return p;
  }

  /** Rule addresses join the confirmation flow of the project's list: a non-member gets one confirmation email first. */
  async function syncRecipients(projectId: string, by: Actor, written: string[]) {
    const p = await project(projectId);
    const teamId = await projects.teamOf(projectId);
    const { list, confirmed } = recipientRows({
      projectList: p.alertEmails,
      ruleEmails: await ruleEmailsOf(db, projectId),
      members: teamId === null ? [] : await memberEmailsOfTeam(db, teamId),
      vouched: by === 'operator' ? written : [],
    });
    await recipients.sync(projectId, list, confirmed);
  }

  async function checked(projectId: string, r: NewRule): Promise<NewRule> {
    const problems: { path: string; message: string }[] = [];
    const threshold = thresholdProblem(r.kind, r.threshold);
    if (threshold) problems.push({ path: '/threshold', message: threshold });
    const known = new Set(await hooks.existing(projectId, r.webhookIds));
    r.webhookIds.forEach((id, i) => {
      if (!known.has(id)) problems.push({ path: `/webhookIds/${i}`, message: 'no such webhook in this project' });
    });
    if (problems.length) throw new ValidationError(problems);
    return r;
  }

  const cleanEmails = (e: string[] | null | undefined) =>
    e === null || e === undefined ? e : [...new Set(e.map(normalizeEmail))];

  return {
    async listRules(projectId: string): Promise<AlertRule[]> {
      await project(projectId);
      return rules.list(projectId);
    },

    async getRule(projectId: string, id: string): Promise<AlertRule> {
      const r = await rules.get(projectId, id);
      if (!r)
        throw (await projects.getProject(projectId))
          ? new NotFoundError('Alert rule not found')
          : new ProjectNotFoundError();
      return r;
    },

    async createRule(
      projectId: string,
      input: Required<Pick<RuleInput, 'name' | 'kind'>> & RuleInput,
      by: Actor,
    ): Promise<AlertRule> {
      await project(projectId);
      // A regression rule's threshold (the gap in points) defaults to 0; the others name theirs.
      const threshold = input.threshold ?? (input.kind === 'crash_free_regression' ? 0 : undefined);
      if (threshold === undefined) {
        throw new ValidationError([{ path: '/threshold', message: 'a threshold is required for this kind' }]);
      }
      const r = await checked(projectId, {
        name: input.name.trim(),
        kind: input.kind,
        threshold,
        windowMinutes: input.windowMinutes ?? RULE_DEFAULTS.windowMinutes[input.kind],
        minSessions: input.minSessions ?? (judgesReleases(input.kind) ? RULE_DEFAULTS.minSessions : 0),
        cooldownMinutes: input.cooldownMinutes ?? RULE_DEFAULTS.cooldownMinutes,
        emails: cleanEmails(input.emails) ?? null,
        webhookIds: [...new Set(input.webhookIds ?? [])],
        enabled: input.enabled ?? true,
        levels: input.levels ?? null,
      });
      const rule = await rules.create(projectId, r, opts.maxRules);
      if (!rule)
        throw new ConflictError(
          `A project has at most ${opts.maxRules} alert rules (ALERT_RULES_MAX_PER_PROJECT): delete one first`,
        );
      await syncRecipients(projectId, by, rule.emails ?? []);
      return rule;
    },

    async updateRule(projectId: string, id: string, input: RuleInput, by: Actor): Promise<AlertRule> {
      const cur = await this.getRule(projectId, id);
      const emails = cleanEmails(input.emails);
      const next = await checked(projectId, {
        name: input.name?.trim() ?? cur.name,
        kind: input.kind ?? cur.kind,
        threshold: input.threshold ?? cur.threshold,
        windowMinutes: input.windowMinutes ?? cur.windowMinutes,
        minSessions: input.minSessions ?? cur.minSessions,
        cooldownMinutes: input.cooldownMinutes ?? cur.cooldownMinutes,
        emails: emails === undefined ? cur.emails : emails,
        webhookIds: input.webhookIds ? [...new Set(input.webhookIds)] : cur.webhookIds,
        enabled: input.enabled ?? cur.enabled,
        levels: input.levels === undefined ? cur.levels : input.levels,
      });
      const rule = await rules.replace(projectId, id, next);
      if (!rule) throw new NotFoundError('Alert rule not found');
      if (emails !== undefined) await syncRecipients(projectId, by, rule.emails ?? []);
      return rule;
    },

    async deleteRule(projectId: string, id: string, by: Actor): Promise<void> {
      await this.getRule(projectId, id);
      await rules.remove(projectId, id);
      await syncRecipients(projectId, by, []);
    },

    async listWebhooks(projectId: string): Promise<Webhook[]> {
      await project(projectId);
      return hooks.list(projectId);
    },

    /** The secret is in this answer only: it is kept to sign deliveries, never shown again. */
    async createWebhook(
      projectId: string,
      input: { url: string; events?: string[] },
    ): Promise<Webhook & { secret: string }> {
      await project(projectId);
      const problem = webhookUrlProblem(input.url, opts.allowPrivateWebhooks);
      if (problem) throw new ValidationError([{ path: '/url', message: problem }]);
      const secret = `whsec_${randomBytes(32).toString('base64url')}`;
      // stored sealed with the server key: the database's files alone do not give it away
      const sealed = sealSecret(opts.secretsKey, secret);
      const w = await hooks.create(
        projectId,
        { url: input.url, events: [...new Set(input.events ?? [])], secret: sealed },
        opts.maxWebhooks,
      );
      if (!w)
        throw new ConflictError(
          `A project has at most ${opts.maxWebhooks} webhooks (WEBHOOKS_MAX_PER_PROJECT): delete one first`,
        );
      return { ...w, secret };
    },

    async updateWebhook(projectId: string, id: string, input: WebhookInput): Promise<Webhook> {
      await project(projectId);
      if (input.url !== undefined) {
        const problem = webhookUrlProblem(input.url, opts.allowPrivateWebhooks);
        if (problem) throw new ValidationError([{ path: '/url', message: problem }]);
      }
      const w = await hooks.update(projectId, id, { ...input, events: input.events && [...new Set(input.events)] });
      if (!w) throw new NotFoundError('Webhook not found');
      return w;
    },

    async deleteWebhook(projectId: string, id: string): Promise<void> {
      await project(projectId);
      if (!(await hooks.remove(projectId, id))) throw new NotFoundError('Webhook not found');
    },

    /**
     * A test delivery: a signed `webhook.test` event through the outbox and the webhook job, as
     * every alert goes (retries, backoff, the delivery log), so it checks the real path.
     */
    async testWebhook(projectId: string, id: string): Promise<{ deliveryId: string; status: 'pending' }> {
      const p = await project(projectId);
      const w = (await hooks.list(projectId)).find((x) => x.id === id);
      if (!w) throw new NotFoundError('Webhook not found');
      if (!w.enabled) {
        throw new ValidationError([{ path: '/enabled', message: 'the webhook is turned off: turn it on to test it' }]);
      }
      const deliveryId = randomUUID();
      const body = deliveryBody(
        w.url,
        TEST_EVENT,
        {
          text: `[${p.name}] Test delivery from flightrec: this webhook receives the project's alerts.`,
          link: null,
          projectId,
          webhookId: id,
        },
        new Date(),
      );
      await db.tx((q) => enqueueDelivery(q, projectId, id, TEST_EVENT, body, deliveryId));
      return { deliveryId, status: 'pending' };
    },

    async deliveries(projectId: string, webhookId: string | undefined, limit: number): Promise<Delivery[]> {
      await project(projectId);
      return deliveries.list(projectId, webhookId, limit);
    },
  };
}

export type AlertRulesService = ReturnType<typeof alertRulesService>;
