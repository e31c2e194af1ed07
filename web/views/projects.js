import { h, badge, errorBox, fmtDate, withLoading } from '../lib/dom.js';
import { api } from '../lib/api.js';
import { state, refreshProjects, updateTop } from '../app.js';

/** The plaintext key, shown once: the server keeps only its hash. */
function newKeyPanel(apiKey, onDone) {
  const code = h('code.key', { 'data-testid': 'new-key', tabindex: '0' }, apiKey);
  const copied = h('span.hint', { 'aria-live': 'polite' });
  const panel = h('div.key-once', { role: 'region', 'aria-label': 'New API key' },
    h('p', h('strong', 'Copy this API key now.'), ' It is shown only once; flightrec stores only its hash.'),
    h('div.key-row', code,
      h('button', {
        type: 'button', id: 'copy-key',
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
      }, 'Copy'),
      h('button.link', { type: 'button', onclick: () => { panel.remove(); onDone?.(); } }, 'Done, hide it'),
    ),
    copied,
    h('p.hint', 'Send it as ', h('code', 'Authorization: Bearer <key>'), ' to ', h('code', '/ingest/*'), ' and ', h('code', '/export/*'), '.'),
  );
  return panel;
}

function keyRow(project, key, rerender) {
  const st = key.active ? badge('active', 'ok') : key.suspended ? badge('suspended', 'warn', "Off while the team's owner is suspended") : badge('deactivated', 'muted');
  return h('tr',
    h('td', h('code', key.id.slice(0, 8)), h('span.sr-only', key.id)),
    h('td', fmtDate(key.createdAt)),
    h('td', st),
    h('td', key.active
      ? h('button.danger', {
        type: 'button', 'aria-label': `Deactivate key ${key.id.slice(0, 8)}`,
        onclick: async (e) => {
          if (!confirm('Deactivate this key? Apps using it get 401 within 5 seconds. This cannot be undone.')) return;
          e.target.disabled = true;
          try {
            await api('POST', `/api/dashboard/projects/${project.id}/keys/${key.id}/deactivate`, {});
            await refreshProjects();
            rerender();
          } catch (err) {
            e.target.replaceWith(errorBox(err));
          }
        },
      }, 'Deactivate')
      : key.deactivatedAt ? h('span.hint', `since ${fmtDate(key.deactivatedAt)}`) : null),
  );
}

function alertForm(project) {
  const input = h('input', {
    id: `alerts-${project.id}`, type: 'text', inputmode: 'email', value: (project.alertEmails ?? []).join(', '),
    placeholder: 'ops@example.com, dev@example.com',
  });
  const status = h('span.hint', { 'aria-live': 'polite' });
  return h('form.inline', {
    onsubmit: async (e) => {
      e.preventDefault();
      const list = input.value.split(/[,\s]+/).map((x) => x.trim()).filter(Boolean);
      status.textContent = 'Saving…';
      try {
        const p = await api('PATCH', `/api/dashboard/projects/${project.id}`, { alertEmails: list.length ? list : null });
        project.alertEmails = p.alertEmails;
        status.textContent = 'Saved.';
      } catch (err) {
        status.textContent = err.message;
      }
    },
  },
    h('label', { for: `alerts-${project.id}` }, 'Crash alert recipients'),
    h('div.key-row', input, h('button', { type: 'submit' }, 'Save')),
    h('p.hint', 'Emailed on the first occurrence of each new crash group. Empty: the server default (ALERT_EMAIL_TO).'),
    status,
  );
}

function projectCard(project, rerender) {
  const keysBody = h('tbody', project.keys.map((k) => keyRow(project, k, rerender)));
  const slot = h('div');
  return h('article.card.project', { 'data-project': project.name },
    h('header.card-head',
      h('h2', project.name),
      h('span.hint', project.teamName),
      h('nav.actions', { 'aria-label': `${project.name} links` },
        h('a', { href: `#/p/${project.id}/sessions` }, 'Sessions'),
        h('a', { href: `#/p/${project.id}/crashes` }, 'Crashes')),
    ),
    h('p.hint', 'Project id ', h('code', project.id)),
    slot,
    h('h3', 'API keys'),
    h('div.table-wrap', h('table',
      h('thead', h('tr', h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Created'), h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col' }, h('span.sr-only', 'Actions')))),
      keysBody)),
    h('button', {
      type: 'button',
      onclick: async (e) => {
        e.target.disabled = true;
        try {
          const r = await api('POST', `/api/dashboard/projects/${project.id}/keys`, {});
          project.keys.unshift({ ...r.key, active: true, suspended: false, deactivatedAt: null });
          keysBody.prepend(keyRow(project, project.keys[0], rerender));
          slot.replaceChildren(newKeyPanel(r.apiKey));
        } catch (err) {
          slot.replaceChildren(errorBox(err));
        } finally {
          e.target.disabled = false;
        }
      },
    }, 'New key'),
    alertForm(project),
  );
}

export function projectsView() {
  const root = h('section');
  const list = h('div.cards');
  const created = h('div');
  const rerender = () => withLoading(list, async () => h('div.cards', state.projects.map((p) => projectCard(p, rerender))));

  const name = h('input', { id: 'project-name', required: true, maxlength: 200, placeholder: 'My iOS app' });
  const teams = state.teams.filter((t) => !t.ownerSuspended);
  const team = teams.length > 1
    ? h('select', { id: 'project-team', 'aria-label': 'Team' }, teams.map((t) => h('option', { value: t.id }, `${t.name}${t.role === 'owner' ? '' : ' (member)'}`)))
    : null;
  const err = h('div');
  const form = h('form.inline.card', {
    onsubmit: async (e) => {
      e.preventDefault();
      err.replaceChildren();
      const btn = form.querySelector('button');
      btn.disabled = true;
      try {
        const r = await api('POST', '/api/dashboard/projects', { name: name.value, teamId: team ? team.value : undefined });
        name.value = '';
        await refreshProjects();
        root.querySelector('.empty-projects')?.remove();
        updateTop();
        created.replaceChildren(
          h('div.card', h('h2', `Project “${r.project.name}” created`), newKeyPanel(r.apiKey),
            h('p', h('a', { href: `#/p/${r.project.id}/sessions`, id: 'goto-sessions' }, 'Go to its sessions →'))));
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
    h('label', { for: 'project-name' }, 'Name'),
    h('div.key-row', name, team, h('button.primary', { type: 'submit', id: 'create-project' }, 'Create project')),
    err,
  );

  root.append(
    h('h1', 'Projects & keys'),
    state.projects.length ? null : h('p.empty.empty-projects', 'No project yet. Create one to get an API key for your app.'),
    form, created, list,
  );
  rerender();
  return root;
}
