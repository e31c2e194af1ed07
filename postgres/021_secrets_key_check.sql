-- The server key's check value (docs/decisions.md, "Secrets at rest"): a known text sealed with
-- the key of the first process to start on this database. A process whose key does not open it
-- (a SECRETS_KEY other than the one every other process runs with, or a key generated into its
-- own DATA_DIR) refuses to start, instead of sealing secrets the others cannot open.
CREATE TABLE IF NOT EXISTS secrets_key_check
(
  id smallint PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  sealed text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
