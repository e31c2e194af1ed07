import pg from 'pg';

// Scratch Postgres databases, so runs on a shared server (CI, tests, the bench) do not see each
// other's rows. Identifiers cannot be bound as parameters, so names are checked instead.
const NAME = /^[a-z0-9_]+$/;

async function onAdmin(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

function checked(name: string): string {
  if (!NAME.test(name)) throw new Error(`database name must match ${NAME}, got "${name}"`);
  return name;
}

export const createDatabase = (adminUrl: string, name: string) => onAdmin(adminUrl, `CREATE DATABASE ${checked(name)}`);
export const dropDatabase = (adminUrl: string, name: string) => onAdmin(adminUrl, `DROP DATABASE IF EXISTS ${checked(name)} WITH (FORCE)`);
