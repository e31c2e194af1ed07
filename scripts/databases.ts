import pg from 'pg';

// Scratch Postgres databases, so runs on a shared server (CI, tests, the bench) do not see each
// other's rows. Identifiers cannot be bound as parameters, so names are checked instead.
const NAME = /^[a-z0-9_]+$/;

async function onAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

function checked(name: string): string {
  if (!NAME.test(name)) throw new Error(`database name must match ${NAME}, got "${name}"`);
  return name;
}

const drop = async (client: pg.Client, name: string) => {
  await client.query(`DROP DATABASE IF EXISTS ${checked(name)} WITH (FORCE)`);
};

export const createDatabase = (adminUrl: string, name: string) =>
  onAdmin(adminUrl, async (c) => {
    await c.query(`CREATE DATABASE ${checked(name)}`);
  });
export const dropDatabase = (adminUrl: string, name: string) => onAdmin(adminUrl, (c) => drop(c, name));

/** Drops every database whose name starts with `prefix` (a run's scratch databases). */
export const dropDatabasesNamed = (adminUrl: string, prefix: string) =>
  onAdmin(adminUrl, async (c) => {
    const left = await c.query<{ datname: string }>('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [
      checked(prefix),
    ]);
    for (const { datname } of left.rows) await drop(c, datname);
  });
