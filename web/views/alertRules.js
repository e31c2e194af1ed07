import { h, badge, errorBox, fmtDate, withLoading } from '../lib/dom.js';
import { api, dash, get, qs } from '../lib/api.js';

// The Alerts page of a project: its spike and crash-free rules, its webhooks (the secret shown
// once, right after creation) and the webhooks' delivery log.

const DELIVERY_KIND = { delivered: 'ok', retrying: 'warn', pending: 'info', failed: 'bad' };
const hostOf = (url) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

// A spike rule counts crashes and errors unless it names levels (messages: warning, info).
const counted = (r) => (r.levels ? ` (${r.levels.join(', ')} reports)` : '');
const condition = (r) =>
  r.kind === 'spike'
    ? `a crash group passes ${r.threshold} occurrences${counted(r)} in ${r.windowMinutes} min`
    : r.kind === 'crash_free'
      ? `crash-free sessions of a release fall below ${r.threshold} % over ${r.windowMinutes} min (at least ${r.minSessions} sessions)`
      : `crash-free sessions of a release are significantly below the previous release's (95 % intervals apart${r.threshold ? ` by more than ${r.threshold} pts` : ''}) over ${r.windowMinutes} min (at least ${r.minSessions} sessions)`;

// Each kind's threshold: its label and the value a new rule starts from.
const KINDS = {
  spike: {
    label: 'Spike: a crash group passes N occurrences',
    threshold: 50,
    window: 60,
    unit: 'Threshold (occurrences)',
  },
  crash_free: {
    label: 'Crash-free sessions of a release fall below X %',
    threshold: 99,
    window: 1440,
    unit: 'Threshold (%)',
  },
  crash_free_regression: {
    label: 'Crash-free sessions significantly below the previous release',
    threshold: 0,
    window: 1440,
    unit: 'Gap between the 95 % intervals (points; 0: any gap)',
  },
};

const recipients = (r) =>
  r.emails === null ? 'project’s alert recipients' : r.emails.length ? r.emails.join(', ') : 'no email';

function field(id, label, input, hint) {
  return h('div.field', h('label', { for: id }, label), input, hint ? h('p.hint', hint) : null);
}

export function alertRulesView(projectId) {
  const base = dash(`/projects/${projectId}`);
  const rulesBox = h('div');
  const hooksBox = h('div');
  const logBox = h('div');
  const formSlot = h('div');
  let hooks = [];

  const refresh = async () => {
    hooks = (await get(`${base}/webhooks`)).items;
    await Promise.all([
      withLoading(rulesBox, renderRules, 'Loading rules…'),
      withLoading(hooksBox, renderHooks, 'Loading webhooks…'),
      withLoading(logBox, renderLog, 'Loading deliveries…'),
    ]);
  };

  async function renderRules() {
    const rules = (await get(`${base}/alert-rules`)).items;
    const list = rules.length
      ? h(
          'div.table-wrap',
          h(
            'table.stack-sm',
            { id: 'alert-rules' },
            h(
              'thead',
              h(
                'tr',
                ['Rule', 'Fires when', 'Email', 'Webhooks', ''].map((c) => h('th', { scope: 'col' }, c)),
              ),
            ),
            h(
              'tbody',
              rules.map((r) =>
                h(
                  'tr',
                  { dataset: { rule: r.id } },
                  h('td', { 'data-label': 'Rule' }, r.name, ' ', r.enabled ? null : badge('off', 'muted')),
                  h('td', { 'data-label': 'Fires when' }, condition(r)),
                  h('td', { 'data-label': 'Email' }, recipients(r)),
                  h(
                    'td',
                    { 'data-label': 'Webhooks' },
                    r.webhookIds.map((id) => hostOf(hooks.find((w) => w.id === id)?.url ?? 'deleted')).join(', ') ||
                      '—',
                  ),
                  h(
                    'td',
                    { 'data-label': '' },
                    h(
                      'button.link',
                      {
                        type: 'button',
                        'aria-label': `Edit the rule ${r.name}`,
                        onclick: () => {
                          const form = ruleForm(r);
                          formSlot.replaceChildren(form);
                          form.scrollIntoView({ block: 'nearest' });
                          form.querySelector('input')?.focus();
                        },
                      },
                      'Edit',
                    ),
                    ' ',
                    h(
                      'button.link',
                      {
                        type: 'button',
                        onclick: () => act(() => api('PATCH', `${base}/alert-rules/${r.id}`, { enabled: !r.enabled })),
                      },
                      r.enabled ? 'Turn off' : 'Turn on',
                    ),
                    ' ',
                    h(
                      'button.link',
                      {
                        type: 'button',
                        onclick: () =>
                          confirm(`Delete the rule “${r.name}”?`) &&
                          act(() => api('DELETE', `${base}/alert-rules/${r.id}`)),
                      },
                      'Delete',
                    ),
                  ),
                ),
              ),
            ),
          ),
        )
      : h('p.empty', 'No rules yet. New crash groups and regressions are alerted without any.');
    formSlot.replaceChildren(ruleForm());
    return h('div', list, formSlot);
  }

  /** The form of a new rule, or of `rule` being edited (PATCH). */
  function ruleForm(rule) {
    const editing = Boolean(rule);
    const status = h('div', { 'aria-live': 'assertive' });
    const name = h('input', {
      id: 'rule-name',
      required: true,
      maxlength: 200,
      placeholder: 'Crash storm',
      value: rule?.name,
    });
    const kind = h(
      'select',
      { id: 'rule-kind', disabled: editing },
      Object.entries(KINDS).map(([k, x]) => h('option', { value: k, selected: rule?.kind === k }, x.label)),
    );
    const k0 = KINDS[rule?.kind ?? 'spike'];
    const threshold = h('input', {
      id: 'rule-threshold',
      type: 'number',
      required: true,
      min: 0,
      step: 'any',
      value: rule?.threshold ?? k0.threshold,
    });
    const windowMinutes = h('input', {
      id: 'rule-window',
      type: 'number',
      min: 1,
      max: 43200,
      value: rule?.windowMinutes ?? k0.window,
    });
    const minSessions = h('input', { id: 'rule-min-sessions', type: 'number', min: 1, value: rule?.minSessions || 50 });
    const minBox = field(
      'rule-min-sessions',
      'Minimum sessions',
      minSessions,
      'A release with fewer sessions in the window is not judged.',
    );
    const thresholdLabel = h('label', { for: 'rule-threshold' }, k0.unit);
    minBox.hidden = (rule?.kind ?? 'spike') === 'spike';
    const levels = h(
      'select',
      { id: 'rule-levels' },
      h('option', { value: '', selected: !rule?.levels }, 'Crashes and errors'),
      h(
        'option',
        { value: 'warning,info', selected: rule?.levels?.join(',') === 'warning,info' },
        'Messages (warning, info)',
      ),
      h('option', { value: 'fatal', selected: rule?.levels?.join(',') === 'fatal' }, 'Fatal crashes only'),
    );
    const levelsBox = field('rule-levels', 'Counts', levels);
    levelsBox.hidden = (rule?.kind ?? 'spike') !== 'spike';
    kind.addEventListener('change', () => {
      const x = KINDS[kind.value];
      minBox.hidden = kind.value === 'spike';
      levelsBox.hidden = kind.value !== 'spike';
      threshold.value = x.threshold;
      windowMinutes.value = x.window;
      thresholdLabel.textContent = x.unit;
    });
    const mode = rule ? (rule.emails === null ? 'project' : rule.emails.length ? 'list' : 'none') : 'project';
    const emailMode = h(
      'select',
      { id: 'rule-email-mode' },
      h('option', { value: 'project', selected: mode === 'project' }, 'The project’s alert recipients'),
      h('option', { value: 'list', selected: mode === 'list' }, 'These addresses'),
      h('option', { value: 'none', selected: mode === 'none' }, 'No email (webhooks only)'),
    );
    const emails = h('input', {
      id: 'rule-emails',
      type: 'text',
      placeholder: 'a@example.com, b@example.com',
      hidden: mode !== 'list',
      value: rule?.emails?.join(', '),
    });
    emailMode.addEventListener('change', () => {
      emails.hidden = emailMode.value !== 'list';
    });
    const hookChecks = hooks.map((w) =>
      h(
        'label.check',
        h('input', {
          type: 'checkbox',
          value: w.id,
          name: 'rule-webhook',
          checked: rule?.webhookIds.includes(w.id),
        }),
        ' ',
        w.url,
      ),
    );
    const submit = h('button.primary', { type: 'submit' }, editing ? 'Save rule' : 'Add rule');
    return h(
      'form.card',
      {
        id: 'rule-form',
        dataset: editing ? { editing: rule.id } : {},
        onsubmit: async (e) => {
          e.preventDefault();
          status.replaceChildren();
          const body = {
            name: name.value,
            ...(editing ? {} : { kind: kind.value }),
            threshold: Number(threshold.value),
            windowMinutes: Number(windowMinutes.value),
            emails:
              emailMode.value === 'project'
                ? null
                : emailMode.value === 'none'
                  ? []
                  : emails.value.split(/[\s,;]+/).filter(Boolean),
            webhookIds: hookChecks
              .map((l) => l.querySelector('input'))
              .filter((i) => i.checked)
              .map((i) => i.value),
            ...(kind.value !== 'spike' ? { minSessions: Number(minSessions.value) } : {}),
            ...(kind.value === 'spike' && levels.value ? { levels: levels.value.split(',') } : {}),
          };
          submit.disabled = true;
          try {
            await api(
              editing ? 'PATCH' : 'POST',
              editing ? `${base}/alert-rules/${rule.id}` : `${base}/alert-rules`,
              body,
            );
            await refresh();
          } catch (err) {
            status.replaceChildren(errorBox(err));
            submit.disabled = false;
          }
        },
      },
      h('h3', editing ? `Edit the rule “${rule.name}”` : 'New rule'),
      field('rule-name', 'Name', name),
      field('rule-kind', 'Fires when', kind, editing ? 'A rule keeps its kind: make a new rule for another.' : null),
      h('div.field', thresholdLabel, threshold),
      field('rule-window', 'Window (minutes)', windowMinutes),
      minBox,
      levelsBox,
      field(
        'rule-email-mode',
        'Email',
        emailMode,
        'Addresses of people outside the team get alerts once they confirm.',
      ),
      emails,
      hookChecks.length
        ? h('fieldset', h('legend', 'Webhooks'), hookChecks)
        : h('p.hint', 'Add a webhook below to post this rule’s alerts too.'),
      status,
      submit,
      editing
        ? [' ', h('button.link', { type: 'button', onclick: () => formSlot.replaceChildren(ruleForm()) }, 'Cancel')]
        : null,
    );
  }

  async function renderHooks() {
    const list = hooks.length
      ? h(
          'div.table-wrap',
          h(
            'table.stack-sm',
            { id: 'webhooks' },
            h(
              'thead',
              h(
                'tr',
                ['URL', 'Also receives', ''].map((c) => h('th', { scope: 'col' }, c)),
              ),
            ),
            h(
              'tbody',
              hooks.map((w) =>
                h(
                  'tr',
                  { dataset: { webhook: w.id } },
                  h(
                    'td',
                    { 'data-label': 'URL' },
                    h('code.wrap', w.url),
                    ' ',
                    w.enabled ? null : badge('off', 'muted'),
                  ),
                  h(
                    'td',
                    { 'data-label': 'Also receives' },
                    [
                      w.events.includes('crash_group.new') && 'new crash groups',
                      w.events.includes('crash_group.regressed') && 'regressions',
                    ]
                      .filter(Boolean)
                      .join(', ') || '—',
                  ),
                  h(
                    'td',
                    { 'data-label': '' },
                    w.enabled
                      ? h(
                          'button.link',
                          {
                            type: 'button',
                            'aria-label': `Send a test delivery to ${w.url}`,
                            onclick: async (e) => {
                              const note =
                                e.target.parentElement.querySelector('.test-note') ??
                                h('span.hint.test-note', { role: 'status' });
                              e.target.after(note);
                              try {
                                await api('POST', `${base}/webhooks/${w.id}/test`, {});
                                note.textContent = ' Test delivery queued: see Deliveries below.';
                                await withLoading(logBox, renderLog, 'Loading deliveries…');
                              } catch (err) {
                                note.replaceChildren(errorBox(err));
                              }
                            },
                          },
                          'Send a test delivery',
                        )
                      : null,
                    ' ',
                    h(
                      'button.link',
                      {
                        type: 'button',
                        onclick: () =>
                          confirm(`Delete the webhook ${w.url}?`) &&
                          act(() => api('DELETE', `${base}/webhooks/${w.id}`)),
                      },
                      'Delete',
                    ),
                  ),
                ),
              ),
            ),
          ),
        )
      : h('p.empty', 'No webhooks yet.');
    return h('div', list, hookForm());
  }

  function hookForm() {
    const status = h('div', { 'aria-live': 'assertive' });
    const url = h('input', {
      id: 'webhook-url',
      type: 'url',
      required: true,
      placeholder: 'https://example.com/flightrec or https://hooks.slack.com/services/…',
    });
    const newGroups = h('input', { id: 'webhook-new', type: 'checkbox', checked: true });
    const regressions = h('input', { id: 'webhook-regressions', type: 'checkbox', checked: true });
    const submit = h('button.primary', { type: 'submit' }, 'Add webhook');
    return h(
      'form.card',
      {
        id: 'webhook-form',
        onsubmit: async (e) => {
          e.preventDefault();
          status.replaceChildren();
          submit.disabled = true;
          try {
            const w = await api('POST', `${base}/webhooks`, {
              url: url.value,
              events: [newGroups.checked && 'crash_group.new', regressions.checked && 'crash_group.regressed'].filter(
                Boolean,
              ),
            });
            await refresh();
            // Shown once: the server keeps it to sign deliveries and never returns it again.
            hooksBox.prepend(
              h(
                'div.key-once',
                { id: 'webhook-secret', role: 'region', 'aria-label': 'Webhook signing secret' },
                h('p', 'Signing secret of ', h('code.wrap', w.url), ' — copy it now, it is not shown again:'),
                h('div.key-row', h('code.key', { tabindex: '0' }, w.secret)),
                h('p.hint', 'Verify the X-Flightrec-Signature header of each delivery with it (see the README).'),
              ),
            );
          } catch (err) {
            status.replaceChildren(errorBox(err));
            submit.disabled = false;
          }
        },
      },
      h('h3', 'New webhook'),
      field(
        'webhook-url',
        'URL',
        url,
        'Each alert is POSTed as JSON and signed with HMAC-SHA256; a Slack incoming-webhook URL gets Slack’s text message.',
      ),
      h('label.check', newGroups, ' Also post new crash groups (their first occurrence)'),
      h('label.check', regressions, ' Also post regressions (a resolved crash back in a new version)'),
      status,
      submit,
    );
  }

  async function renderLog() {
    const items = (await get(`${base}/webhook-deliveries${qs({ limit: 50 })}`)).items;
    if (!items.length) return h('p.empty', 'No deliveries yet.');
    return h(
      'div.table-wrap',
      h(
        'table.stack-sm',
        { id: 'webhook-deliveries' },
        h(
          'thead',
          h(
            'tr',
            ['Created (UTC)', 'Webhook', 'Event', 'Status', 'Attempts', 'Response', 'Latency', 'Error'].map((c) =>
              h('th', { scope: 'col' }, c),
            ),
          ),
        ),
        h(
          'tbody',
          items.map((d) =>
            h(
              'tr',
              { dataset: { delivery: d.id } },
              h('td', { 'data-label': 'Created (UTC)' }, fmtDate(d.createdAt)),
              h('td', { 'data-label': 'Webhook' }, hostOf(hooks.find((w) => w.id === d.webhookId)?.url ?? '—')),
              h('td', { 'data-label': 'Event' }, d.event),
              h('td', { 'data-label': 'Status' }, badge(d.status, DELIVERY_KIND[d.status] ?? 'muted')),
              h('td.num', { 'data-label': 'Attempts' }, String(d.attempts)),
              h('td.num', { 'data-label': 'Response' }, d.responseCode === null ? '—' : String(d.responseCode)),
              h('td.num', { 'data-label': 'Latency' }, d.latencyMs === null ? '—' : `${d.latencyMs} ms`),
              h('td', { 'data-label': 'Error' }, d.error ?? '—'),
            ),
          ),
        ),
      ),
    );
  }

  async function act(fn) {
    try {
      await fn();
      await refresh();
    } catch (err) {
      rulesBox.prepend(errorBox(err));
    }
  }

  const top = h('div');
  withLoading(
    top,
    async () => {
      await refresh();
      return h(
        'p.hint',
        'Rules are checked about once a minute; each fires once per crossing and again only after it was back below.',
      );
    },
    'Loading…',
  );
  return h(
    'section',
    h('h1', 'Alerts'),
    top,
    h('h2', 'Rules'),
    rulesBox,
    h('h2', 'Webhooks'),
    hooksBox,
    h(
      'h2',
      'Deliveries',
      ' ',
      h(
        'button.link',
        {
          type: 'button',
          id: 'deliveries-refresh',
          onclick: () => withLoading(logBox, renderLog, 'Loading deliveries…'),
        },
        'Refresh',
      ),
    ),
    logBox,
  );
}
