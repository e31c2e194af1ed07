import { h, errorBox } from './dom.js';
import { api, dash, qs } from './api.js';

/**
 * Upload a release's source maps or R8/ProGuard mapping.txt from the page (CI should do it with
 * an upload key: docs/sdk.md, "Build uploads"); the stack is read again with them.
 */
export function uploadBlock(projectId, appVersion, onDone) {
  const release = h('input', {
    id: 'up-release',
    value: appVersion ?? '',
    required: true,
    placeholder: '1.4.0 or 1.4.0+312',
    autocomplete: 'off',
  });
  const files = h('input', {
    id: 'up-files',
    type: 'file',
    multiple: true,
    accept: '.map,.txt,.js,.mjs,.cjs,.bundle,.jsbundle',
  });
  const msg = h('div', { 'aria-live': 'polite' });
  const button = h('button.primary', { type: 'submit' }, 'Upload');
  const form = h(
    'form.upload',
    {
      onsubmit: async (e) => {
        e.preventDefault();
        if (!files.files?.length || !release.value.trim()) return;
        button.disabled = true;
        msg.replaceChildren(h('p.hint', 'Uploading…'));
        try {
          for (const f of files.files) {
            await api(
              'POST',
              dash(
                `/projects/${projectId}/releases/${encodeURIComponent(release.value.trim())}/artifacts${qs({ name: f.name })}`,
              ),
              f,
            );
          }
          msg.replaceChildren(
            h('p.hint', `${files.files.length} file${files.files.length === 1 ? '' : 's'} uploaded.`),
          );
          onDone();
        } catch (err) {
          msg.replaceChildren(errorBox(err));
        } finally {
          button.disabled = false;
        }
      },
    },
    h(
      'p.hint',
      'Source maps (.map, named as the bundle plus .map) or an Android mapping.txt of the release; CI can do this with an upload key (see the SDK docs, "Build uploads"). iOS dSYMs are not supported.',
    ),
    h('label', { for: 'up-release' }, 'Release (app version, or version+build)'),
    release,
    h('label', { for: 'up-files' }, 'Files'),
    files,
    h('div.actions', button),
    msg,
  );
  return h('details.upload-box', h('summary', 'Upload source maps or mapping.txt'), form);
}
