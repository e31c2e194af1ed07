export const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  projects list                          every project: id, name, team, created
  projects create --name NAME [--owner EMAIL | --team ID]
                                         create a project and its first API key; with --owner or
                                         --team it belongs to that team (its dashboard shows it)
  projects get --project ID              show a project
  projects rename --project ID --name NAME
  projects set-team --project ID (--owner EMAIL | --team ID | --no-team)
                                         give the project to a team: the team the account EMAIL
                                         owns, or team ID; its members see it in the dashboard
  projects set-alert-emails --project ID --emails a@x,b@y   (empty --emails resets to ALERT_EMAIL_TO)
  projects set-origins --project ID --origins https://app.example.com,https://b.example.com
                                         browser origins that may send to /ingest (CORS); empty
                                         --origins: any origin (the default); --origins none: no page
  keys create --project ID [--name NAME] [--scopes ingest,export,upload]
                                         create another API key for a project (default scopes
                                         ingest,export; CI's upload key: --scopes upload)
  keys deactivate KEY_ID                 deactivate a key (answers 401 within 5 s)
  crash-groups get --project ID --group ID
  crash-groups set-status --project ID --group ID --status open|acknowledged|resolved|ignored
  sourcemaps upload --project ID --release VERSION[+BUILD] DIR [--url-prefix ~/]
                                         upload a build's source maps (*.map) and the minified
                                         files that name them (sourceMappingURL), named by their
                                         path under DIR: ~/assets/index-8f3a2c.js.map
  mappings upload --project ID --release VERSION[+BUILD] mapping.txt
                                         upload an Android build's R8/ProGuard mapping
  alert-rules list --project ID
  alert-rules create --project ID --name NAME --kind spike|crash_free|crash_free_regression [--threshold N]
                     [--window MINUTES] [--min-sessions N] [--emails a@x,b@y|none] [--webhooks ID,ID]
                                         spike: a group passes N occurrences in the window;
                                         crash_free: a release falls below N % crash-free sessions;
                                         crash_free_regression: a release's crash-free sessions are
                                         significantly below the previous release's (95 % intervals)
                                         (no --emails: the project's alert recipients)
  alert-rules update --project ID RULE_ID [--name NAME] [--threshold N] [--window MINUTES]
                     [--min-sessions N] [--emails a@x,b@y|none] [--webhooks ID,ID] [--enable|--disable]
  alert-rules delete --project ID RULE_ID
  webhooks list --project ID
  webhooks create --project ID --endpoint URL [--new-groups] [--regressions]
                                         prints the signing secret, shown once
  webhooks delete --project ID WEBHOOK_ID
  webhooks test --project ID WEBHOOK_ID  send a signed test delivery (see it in webhooks deliveries)
  webhooks deliveries --project ID       the delivery log, newest first

Options:
  --url URL      service address (default $FLIGHTREC_URL or http://127.0.0.1:$PORT, PORT default 3000)
  --token TOKEN  admin token (default $ADMIN_TOKEN, else the file DATA_DIR/admin-token)
  --key KEY      for uploads: a project key with the upload scope (default $FLIGHTREC_UPLOAD_KEY,
                 else the admin token); CI should use such a key, never the app's ingest key
  --json         print the service's JSON answer (for scripts); without it, tables and sentences`;
