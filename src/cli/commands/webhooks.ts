import type { DeliveryAnswer, ListAnswer, WebhookAnswer } from '../answers.ts';
import { type Args, id, need, projectId } from '../args.ts';
import { table } from '../output.ts';
import type { ApiCommand } from './command.ts';

const hookRoute = (a: Args) => `/api/projects/${projectId(a)}/webhooks/${id(a.arg, 'WEBHOOK_ID', 'webhook')}`;

export const webhooks: Record<string, ApiCommand> = {
  'webhooks list': {
    request: (a) => ({ method: 'GET', route: `/api/projects/${projectId(a)}/webhooks` }),
    show: (json) =>
      table(
        (json as ListAnswer<WebhookAnswer>).items,
        [
          ['ID', (w) => w.id],
          ['URL', (w) => w.url],
          ['ALSO RECEIVES', (w) => w.events],
          ['ON', (w) => (w.enabled ? 'yes' : 'no')],
        ],
        80,
      ),
  },
  'webhooks create': {
    request: (a) => ({
      method: 'POST',
      route: `/api/projects/${projectId(a)}/webhooks`,
      body: {
        url: need(a.values.endpoint, '--endpoint'),
        events: [
          ...(a.values['new-groups'] ? ['crash_group.new'] : []),
          ...(a.values.regressions ? ['crash_group.regressed'] : []),
        ],
      },
    }),
    show(json) {
      const hook = json as WebhookAnswer;
      return `Webhook ${hook.url} (${hook.id})\nSigning secret (shown once, keep it): ${hook.secret}`;
    },
  },
  'webhooks delete': {
    request: (a) => ({ method: 'DELETE', route: hookRoute(a) }),
    show: (_json, a) => `Deleted ${a.arg}`,
  },
  'webhooks test': {
    request: (a) => ({ method: 'POST', route: `${hookRoute(a)}/test` }),
    show: (json) =>
      `Test delivery ${(json as { deliveryId: string }).deliveryId} queued: \`npm run cli -- webhooks deliveries --project …\` ` +
      'shows how it went',
  },
  'webhooks deliveries': {
    request: (a) => ({ method: 'GET', route: `/api/projects/${projectId(a)}/webhook-deliveries` }),
    show: (json) =>
      table((json as ListAnswer<DeliveryAnswer>).items, [
        ['CREATED', (d) => d.createdAt],
        ['WEBHOOK', (d) => d.webhookId],
        ['EVENT', (d) => d.event],
        ['STATUS', (d) => d.status],
        ['TRIES', (d) => d.attempts],
        ['HTTP', (d) => d.responseCode],
        ['ERROR', (d) => d.error],
      ]),
  },
};
