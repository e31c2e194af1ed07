import { h, append, badge, errorBox, fmtDate, withLoading } from '../lib/dom.js';
import { api, dash } from '../lib/api.js';
import { state, refreshProjects } from '../lib/router.js';
import { updateTop } from '../lib/header.js';
import { setupGuide } from '../lib/onboarding.js';

/** The plaintext key, shown once: the server keeps only its hash (and its first characters). */
function newKeyPanel(apiKey, onDone, scopes = ['ingest']) {
  const code = h('code.key', { 'data-testid': 'new-key', tabindex: '0' }, apiKey);
  const copied = h('span.hint', { 'aria-live': 'polite' });
  const panel = h(
    'div.key-once',
    { role: 'region', 'aria-label': 'New API key' },
    h(
      'p',
      h('strong', 'Copy this API key now.'),
      ' It is shown only once; flightrec keeps only its hash and its first characters (',
      h('code', `${apiKey.slice(0, 8)}…`),
      ') to tell it apart.',
    ),
    h(
      'div.key-row',
      code,
      h(
        'button',
        {
          type: 'button',
          id: 'copy-key',
          onclick: async () => {
            try {
              await navigator.clipboard.writeText(apiKey);
              copied.textContent = 'Copied.';
            } catch {
              // Clipboard needs a secure context: select it for a manual copy instead.
              getSelection().selectAllChildren(code);
              copied.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
            }
          },
        },
        'Copy',
      ),
      h(
        'button.link',
        {
          type: 'button',
          onclick: () => {
            panel.remove();
            onDone?.();
          },
        },
        'Done, hide it',
      ),
    ),
    copied,
    h(
      'p.hint',
      'Scopes: ',
      scopes.join(', '),
      '. Send it as ',
      h('code', 'Authorization: Bearer <key>'),
      scopes.includes('upload')
        ? [' (CI: ', h('code', 'FLIGHTREC_UPLOAD_KEY'), ' for ', h('code', 'npm run cli -- sourcemaps upload'), ')']
        : null,
      '.',
    ),
  );
  return panel;
}

/** A small inline rename: the text, a Rename button; the button turns into a form. */
function renamable({ text, label, id, maxlength, save, render = (t) => t, allowEmpty = false }) {
  const box = h('span.renamable');
  const show = (t) => {
    box.replaceChildren(
      h('span.renamable-text', render(t)),
      ' ',
      h('button.link', { type: 'button', id: `${id}-rename`, 'aria-label': `Rename ${label}` }, 'Rename'),
    );
    box.querySelector('button').addEventListener('click', () => edit(t));
  };
  const edit = (t) => {
    const input = h('input', {
      id: `${id}-input`,
      value: t ?? '',
      maxlength,
      'aria-label': `New ${label}`,
      required: !allowEmpty,
    });
    const err = h('span');
    const form = h(
      'form.rename',
      {
        onsubmit: async (e) => {
          e.preventDefault();
          err.replaceChildren();
          try {
            show(await save(input.value.trim() || null));
          } catch (x) {
            err.replaceChildren(errorBox(x));
          }
        },
      },
      input,
      h('button.primary', { type: 'submit' }, 'Save'),
      h('button.link', { type: 'button', onclick: () => show(t) }, 'Cancel'),
      err,
    );
    box.replaceChildren(form);
    input.focus();
    input.select();
  };
  show(text);
  return box;
}

function keyLabel(key) {
  return [
    h('code', key.prefix ? `${key.prefix}…` : 'frk_…'),
    ' ',
    key.name ? h('span', key.name) : h('span.hint', 'unnamed'),
  ];
}

function keyRow(project, key, rerender) {
  const st = key.active
    ? badge('active', 'ok')
    : key.suspended
      ? badge('suspended', 'warn', "Off while the team's owner is suspended")
      : badge('deactivated', 'muted');
  const short = key.prefix ?? key.id.slice(0, 8);
  return h(
    'tr',
    { dataset: { key: key.id } },
    h(
      'td',
      { 'data-label': 'Key' },
      renamable({
        text: key.name,
        label: `key ${short}`,
        id: `key-${key.id}`,
        maxlength: 100,
        allowEmpty: true,
        render: (name) => keyLabel({ ...key, name }),
        save: async (name) => {
          const k = await api('PATCH', dash(`/projects/${project.id}/keys/${key.id}`), { name });
          key.name = k.name;
          return k.name;
        },
      }),
      key.prefix ? null : h('div.hint', 'made before key prefixes were kept'),
    ),
    h(
      'td',
      { 'data-label': 'Created' },
      fmtDate(key.createdAt),
      h('div.hint', key.createdByEmail ? `by ${key.createdByEmail}` : 'by the operator'),
    ),
    h('td', { 'data-label': 'Scopes' }, (key.scopes ?? []).join(', ') || '—'),
    h(
      'td',
      { 'data-label': 'Status' },
      st,
      key.deactivatedAt && !key.active ? h('div.hint', 'since ', fmtDate(key.deactivatedAt)) : null,
    ),
    h(
      'td',
      { 'data-label': 'Actions' },
      key.active
        ? h(
            'button.danger',
            {
              type: 'button',
              'aria-label': `Deactivate key ${short}${key.name ? ` (${key.name})` : ''}`,
              onclick: async (e) => {
                if (
                  !confirm(
                    `Deactivate ${short}…${key.name ? ` (${key.name})` : ''}? Apps using it get 401 within 5 seconds. This cannot be undone.`,
                  )
                )
                  return;
                e.target.disabled = true;
                try {
                  await api('POST', dash(`/projects/${project.id}/keys/${key.id}/deactivate`), {});
                  await refreshProjects();
                  rerender();
                } catch (err) {
                  e.target.replaceWith(errorBox(err));
                }
              },
            },
            'Deactivate',
          )
        : null,
    ),
  );
}

function alertForm(project) {
  const input = h('input', {
    id: `alerts-${project.id}`,
    type: 'text',
    inputmode: 'email',
    value: (project.alertEmails ?? []).join(', '),
    placeholder: 'ops@example.com, dev@example.com',
  });
  const status = h('div', { 'aria-live': 'polite' });
  return h(
    'form.inline',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        const list = input.value
          .split(/[,\s]+/)
          .map((x) => x.trim())
          .filter(Boolean);
        status.replaceChildren(h('span.hint', 'Saving…'));
        try {
          const p = await api('PATCH', dash(`/projects/${project.id}`), { alertEmails: list.length ? list : null });
          project.alertEmails = p.alertEmails;
          status.replaceChildren(h('span.hint', 'Saved.'));
        } catch (err) {
          status.replaceChildren(errorBox(err));
        }
      },
    },
    h('label', { for: `alerts-${project.id}` }, 'Crash alert recipients'),
    h('div.key-row', input, h('button', { type: 'submit' }, 'Save')),
    h(
      'p.hint',
      'Emailed on the first occurrence of each new crash group and by alert rules. ',
      project.teamId
        ? `Empty: every member of the team${project.teamName ? ` “${project.teamName}”` : ''}, at their own address.`
        : 'Empty: the server default (ALERT_EMAIL_TO).',
    ),
    status,
  );
}

// What each scope lets a key do, and which team role may give it (src/domain/apiKey.ts, ROLE_KEY_SCOPES).
const SCOPES = [
  {
    scope: 'ingest',
    label: 'Ingest',
    hint: 'send sessions, events and crashes: the key to embed in an app',
    roles: ['owner', 'member'],
  },
  {
    scope: 'upload',
    label: 'Upload',
    hint: 'upload source maps and R8/ProGuard mappings: a CI key',
    roles: ['owner', 'member'],
  },
  {
    scope: 'export',
    label: 'Export',
    hint: 'read the whole project out through /export: the team’s owner only',
    roles: ['owner'],
  },
];
const RULE_FIELDS = ['type', 'message', 'module', 'function'];

/** A rule in words: "type ChunkLoadError, message Loading chunk * → chunk-load". */
function ruleText(r) {
  const on = RULE_FIELDS.filter((k) => r.match[k] !== undefined)
    .map((k) => `${k} ${r.match[k]}`)
    .join(', ');
  return `${on} → ${r.fingerprint.join(' · ')}`;
}

/**
 * The project's fingerprint rules: crashes that match a rule are one group whatever their
 * stacks. Read top to bottom, the first match wins; loaded when the section is opened.
 */
function fingerprintRules(project) {
  const list = h('ol.rules');
  const status = h('div', { 'aria-live': 'polite' });
  const base = dash(`/projects/${project.id}/fingerprint-rules`);
  const draw = (rules) =>
    list.replaceChildren(
      ...(rules.length
        ? rules.map((r) =>
            h(
              'li',
              { 'data-rule': r.id },
              h('code', ruleText(r)),
              ' ',
              h(
                'button',
                {
                  type: 'button',
                  'aria-label': `Delete rule ${ruleText(r)}`,
                  onclick: async () => {
                    try {
                      await api('DELETE', `${base}/${r.id}`);
                      await load();
                    } catch (err) {
                      status.replaceChildren(errorBox(err));
                    }
                  },
                },
                'Delete',
              ),
            ),
          )
        : [h('li.empty', 'No rules: every crash is grouped by its stack.')]),
    );
  const load = async () => draw((await api('GET', base)).items);
  const inputs = Object.fromEntries(
    RULE_FIELDS.map((k) => [
      k,
      h('input', { id: `fp-${k}-${project.id}`, maxlength: 200, placeholder: k === 'type' ? 'ChunkLoadError' : '*' }),
    ]),
  );
  const fingerprint = h('input', {
    id: `fp-fingerprint-${project.id}`,
    maxlength: 200,
    required: true,
    placeholder: 'chunk-load or {{default}}, checkout',
  });
  const form = h(
    'form.inline',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        const match = Object.fromEntries(
          RULE_FIELDS.filter((k) => inputs[k].value !== '').map((k) => [k, inputs[k].value]),
        );
        const parts = fingerprint.value
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean);
        try {
          await api('POST', base, { match, fingerprint: parts });
          for (const i of [...Object.values(inputs), fingerprint]) i.value = '';
          status.replaceChildren(h('span.hint', 'Rule added.'));
          await load();
        } catch (err) {
          status.replaceChildren(errorBox(err));
        }
      },
    },
    h(
      'div.form-grid',
      RULE_FIELDS.map((k) =>
        h('div', h('label', { for: `fp-${k}-${project.id}` }, k[0].toUpperCase() + k.slice(1)), inputs[k]),
      ),
    ),
    h('label', { for: `fp-fingerprint-${project.id}` }, 'Fingerprint ', h('span.hint', '(comma-separated)')),
    h('div.key-row', fingerprint, h('button', { type: 'submit' }, 'Add rule')),
  );
  const details = h(
    'details.fingerprint-rules',
    {
      ontoggle: () => {
        if (details.open) load().catch((err) => status.replaceChildren(errorBox(err)));
      },
    },
    h('summary', 'Fingerprint rules'),
    h(
      'p.hint',
      'Crashes that match a rule are one group, whatever their stacks. Patterns use * for any text and ' +
        'are case-sensitive; module and function must match one same frame. Read top to bottom; the first match wins. ' +
        '{{default}} in a fingerprint stands for the usual group key.',
    ),
    list,
    form,
    status,
  );
  return details;
}

/** The project's own packages: frames in them count as the app's when crashes are grouped. */
function inAppForm(project) {
  const input = h('input', {
    id: `inapp-${project.id}`,
    type: 'text',
    value: (project.inAppPackages ?? []).join(', '),
    placeholder: 'com.acme., @acme/, AcmeKit',
  });
  const status = h('div', { 'aria-live': 'polite' });
  return h(
    'form.inline',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        const list = [
          ...new Set(
            input.value
              .split(/[,\s]+/)
              .map((x) => x.trim())
              .filter(Boolean),
          ),
        ];
        status.replaceChildren(h('span.hint', 'Saving…'));
        try {
          const p = await api('PATCH', dash(`/projects/${project.id}`), { inAppPackages: list });
          project.inAppPackages = p.inAppPackages;
          status.replaceChildren(h('span.hint', 'Saved.'));
        } catch (err) {
          status.replaceChildren(errorBox(err));
        }
      },
    },
    h('label', { for: `inapp-${project.id}` }, 'In-app packages'),
    h('div.key-row', input, h('button', { type: 'submit' }, 'Set packages')),
    h(
      'p.hint',
      'Module or class prefixes of your own code. Crashes are grouped on your app’s frames first; frames of these packages count as yours even where they look like a library’s.',
    ),
    status,
  );
}

function newKeyForm(project, keysBody, slot, rerender) {
  const role = state.teams.find((t) => t.id === project.teamId)?.role ?? 'member';
  const name = h('input', {
    id: `key-name-${project.id}`,
    maxlength: 100,
    placeholder: 'e.g. iOS app, CI upload, warehouse export',
  });
  const checks = SCOPES.map((x) => {
    const allowed = x.roles.includes(role);
    return h(
      'label.check',
      h('input', {
        type: 'checkbox',
        name: `key-scope-${project.id}`,
        value: x.scope,
        checked: x.scope === 'ingest',
        disabled: !allowed,
      }),
      ' ',
      h('strong', x.label),
      h('span.hint', ` — ${x.hint}`),
    );
  });
  return h(
    'form.inline.new-key',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        const btn = e.target.querySelector('button[type=submit]');
        const scopes = checks
          .map((l) => l.querySelector('input'))
          .filter((i) => i.checked)
          .map((i) => i.value);
        if (!scopes.length) {
          slot.replaceChildren(errorBox(new Error('Pick at least one scope for the key.')));
          return;
        }
        btn.disabled = true;
        try {
          const r = await api('POST', dash(`/projects/${project.id}/keys`), {
            name: name.value.trim() || undefined,
            scopes,
          });
          const key = { ...r.key, active: true, suspended: false, deactivatedAt: null };
          project.keys.unshift(key);
          state.newKeys[project.id] = r.apiKey;
          keysBody.prepend(keyRow(project, key, rerender));
          name.value = '';
          slot.replaceChildren(newKeyPanel(r.apiKey, undefined, key.scopes ?? scopes));
          slot.querySelector('[data-testid=new-key]')?.focus();
        } catch (err) {
          slot.replaceChildren(errorBox(err));
        } finally {
          btn.disabled = false;
        }
      },
    },
    h('label', { for: `key-name-${project.id}` }, 'New key ', h('span.hint', '(name it after where it will be used)')),
    h(
      'fieldset.scopes',
      h('legend', 'Scopes'),
      checks,
      role === 'owner' ? null : h('p.hint', 'Export keys are made by the team’s owner.'),
    ),
    h('div.key-row', name, h('button', { type: 'submit' }, 'Create key')),
  );
}

function projectCard(project, rerender) {
  const keysBody = h(
    'tbody',
    project.keys.map((k) => keyRow(project, k, rerender)),
  );
  const slot = h('div');
  return h(
    'article.card.project',
    { 'data-project': project.name },
    h(
      'header.card-head',
      h(
        'h2',
        renamable({
          text: project.name,
          label: `project ${project.name}`,
          id: `project-${project.id}`,
          maxlength: 200,
          save: async (name) => {
            const p = await api('PATCH', dash(`/projects/${project.id}`), { name });
            project.name = p.name;
            await refreshProjects();
            updateTop();
            return p.name;
          },
        }),
      ),
      h('span.hint', project.teamName),
      h(
        'nav.actions',
        { 'aria-label': `${project.name} links` },
        h('a', { href: `#/p/${project.id}/sessions` }, 'Sessions'),
        h('a', { href: `#/p/${project.id}/crashes` }, 'Crashes'),
      ),
    ),
    h('p.hint.project-id', 'Project id ', h('code', project.id)),
    slot,
    h('h3', 'API keys'),
    project.keys.length
      ? h(
          'div.table-wrap',
          h(
            'table.keys.stack-sm',
            h(
              'thead',
              h(
                'tr',
                ['Key', 'Created (UTC)', 'Scopes', 'Status'].map((c) => h('th', { scope: 'col' }, c)),
                h('th', { scope: 'col' }, h('span.sr-only', 'Actions')),
              ),
            ),
            keysBody,
          ),
        )
      : h('p.empty', 'No keys yet.'),
    newKeyForm(project, keysBody, slot, rerender),
    h(
      'p.hint',
      'Give an app’s key the ingest scope only: anyone holding the app can read its key. CI gets an upload key, a warehouse an export key.',
    ),
    alertForm(project),
    inAppForm(project),
    fingerprintRules(project),
  );
}

export function projectsView() {
  const root = h('section');
  const list = h('div.cards');
  const created = h('div');
  const rerender = () =>
    withLoading(list, async () =>
      h(
        'div.cards',
        state.projects.map((p) => projectCard(p, rerender)),
      ),
    );

  const name = h('input', { id: 'project-name', required: true, maxlength: 200, placeholder: 'My iOS app' });
  const keyName = h('input', { id: 'project-key-name', maxlength: 100, placeholder: 'e.g. iOS app' });
  const teams = state.teams.filter((t) => !t.ownerSuspended);
  const team =
    teams.length > 1
      ? h(
          'select',
          { id: 'project-team', 'aria-label': 'Team' },
          teams.map((t) => h('option', { value: t.id }, `${t.name}${t.role === 'owner' ? '' : ' (member)'}`)),
        )
      : null;
  const err = h('div');
  const form = h(
    'form.inline.card',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        err.replaceChildren();
        const btn = form.querySelector('button[type=submit]');
        btn.disabled = true;
        try {
          const r = await api('POST', dash('/projects'), {
            name: name.value,
            teamId: team ? team.value : undefined,
            keyName: keyName.value.trim() || undefined,
          });
          name.value = '';
          keyName.value = '';
          // the setup snippet (here and on the sessions page) carries the app's ingest-only key
          state.newKeys[r.project.id] = r.ingestApiKey;
          await refreshProjects();
          root.querySelector('.empty-projects')?.remove();
          updateTop();
          created.replaceChildren(
            h(
              'div.card',
              h('h2', `Project “${r.project.name}” created`),
              newKeyPanel(r.apiKey),
              h('p', h('a', { href: `#/p/${r.project.id}/sessions`, id: 'goto-sessions' }, 'Go to its sessions →')),
              setupGuide(r.project.id, r.ingestApiKey),
            ),
          );
          rerender();
          created.querySelector('[data-testid=new-key]')?.focus();
        } catch (x) {
          err.replaceChildren(errorBox(x));
        } finally {
          btn.disabled = false;
        }
      },
    },
    h('h2', 'New project'),
    h(
      'div.form-grid',
      h('div', h('label', { for: 'project-name' }, 'Name'), name),
      h(
        'div',
        h('label', { for: 'project-key-name' }, 'Name of its first key ', h('span.hint', '(optional)')),
        keyName,
      ),
      team ? h('div', h('label', { for: 'project-team' }, 'Team'), team) : null,
    ),
    h('div.key-row', h('button.primary', { type: 'submit', id: 'create-project' }, 'Create project')),
    err,
  );

  // append() skips a missing part; Node.append would print it as the word "null".
  append(root, [
    h('h1', 'Projects & keys'),
    state.projects.length
      ? null
      : h('p.empty.empty-projects', 'No project yet. Create one to get an API key for your app.'),
    form,
    created,
    list,
  ]);
  rerender();
  return root;
}
