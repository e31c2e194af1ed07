-- The browser origins that may send to a project's /ingest (CORS). NULL: any origin, the
-- default, as an ingest key is meant to be shipped in apps; an empty array: no browser page.
-- Requests without an Origin header (native apps, servers) are never concerned.
ALTER TABLE projects ADD COLUMN IF NOT EXISTS allowed_origins text[];
