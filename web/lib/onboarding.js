import { h } from './dom.js';
import { navigate } from './router.js';

// What a new project needs to receive its first session: a key, the SDK call, and a curl to
// try the pipe without an app. Shown on an empty project's Sessions page and after creation.

function copyBlock(id, text, label) {
  const pre = h('pre.snippet', { id, tabindex: '0' }, h('code', text));
  const said = h('span.hint', { 'aria-live': 'polite' });
  return h(
    'div.snippet-box',
    pre,
    h(
      'div.key-row',
      h(
        'button',
        {
          type: 'button',
          'aria-label': `Copy ${label}`,
          onclick: async () => {
            try {
              await navigator.clipboard.writeText(text);
              said.textContent = 'Copied.';
            } catch {
              // The clipboard needs a secure context: select the text for a manual copy instead.
              getSelection().selectAllChildren(pre);
              said.textContent = 'Selected: press Ctrl+C (⌘C) to copy.';
            }
          },
        },
        'Copy',
      ),
      said,
    ),
  );
}

/** apiKey: the app's ingest-only key when it was just created (shown once), else null. */
export function setupGuide(projectId, apiKey) {
  const origin = location.origin;
  const key = apiKey ?? 'frk_…';
  const sessionId = crypto.randomUUID();
  const sdk = [
    "import * as flightrec from '@flightrec/sdk';",
    '',
    `flightrec.init({ apiKey: '${key}', endpoint: '${origin}',`,
    "  device: { appVersion: '1.0.0' }, autoSession: true });",
  ].join('\n');
  const curl = [
    `curl -s -X POST ${origin}/ingest/session \\`,
    `  -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' \\`,
    `  -d '{"sessionId":"${sessionId}","startedAt":${Date.now()},"userId":"first-test",`,
    `       "device":{"platform":"ios","osVersion":"17.2","appVersion":"1.0.0"}}'`,
  ].join('\n');
  return h(
    'section.card.setup',
    { 'aria-labelledby': 'setup-title' },
    h('h2', { id: 'setup-title' }, 'Send your first session'),
    apiKey
      ? h(
          'p',
          'Your app’s key is filled in below: it can send data and read nothing back, so it is safe to ship in an app. ',
          'It is shown only this once: copy it now.',
        )
      : h(
          'p',
          'You need this project’s API key (',
          h('code', 'frk_…'),
          '). It was shown once, when it was made; if you do not have it, ',
          h('a', { href: '#/projects' }, 'create a new ingest-only key on Projects & keys'),
          ' and put it in place of ',
          h('code', 'frk_…'),
          ' below.',
        ),
    h('h3', '1. In your app, with the SDK'),
    // Not on npm yet: the package is built from the flightrec repository.
    h(
      'p.hint',
      'Install it from a clone of the flightrec repository (it is not on npm yet): after ',
      h('code', 'npm install'),
      ', run ',
      h('code', 'cd sdk && npm pack'),
      ', then in your app ',
      h('code', 'npm install /path/to/flightrec/sdk/flightrec-sdk-0.1.0.tgz'),
      '. It works with import and require.',
    ),
    copyBlock('snippet-sdk', sdk, 'the SDK snippet'),
    h('h3', '2. Or try it now from a terminal'),
    copyBlock('snippet-curl', curl, 'the curl command'),
    h(
      'p.hint',
      'The session appears on the Sessions page as soon as it arrives. ',
      h(
        'button.link',
        { type: 'button', id: 'check-sessions', onclick: () => navigate(`#/p/${projectId}/sessions`) },
        'Check for sessions',
      ),
    ),
  );
}
