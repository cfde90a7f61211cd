/**
 * The start-up's question to the PostgreSQL server: its version, the database, the user's
 * privileges and the state of the extensions the migrations create, in one statement, decided by
 * `unmetRequirement` (platform/postgres-requirements.ts, pure). `openRuntime` calls
 * `checkServerRequirements` after opening the database and before any migration.
 */
import pg from 'pg';
import { UnsupportedDatabaseError } from '../platform/database.js';
import { REQUIRED_EXTENSIONS, unmetRequirement, type ServerFacts } from '../platform/postgres-requirements.js';

/** One statement answering ServerFacts (extensions as a JSON array). */
export const SERVER_FACTS_SQL = `
  select current_setting('server_version_num')::int as version_num,
         current_setting('server_version') as version,
         current_database() as database,
         current_user as "user",
         (select rolsuper from pg_roles where rolname = current_user) as superuser,
         has_database_privilege(current_database(), 'CREATE') as can_create,
         (select coalesce(json_agg(json_build_object(
                    'name', n.name,
                    'available', a.name is not null,
                    'installed', a.installed_version is not null,
                    'trusted', coalesce((select v.trusted from pg_available_extension_versions v where v.name = a.name and v.version = a.default_version), false))), '[]')
            from unnest($1::text[]) as n(name) left join pg_available_extensions a on a.name = n.name) as extensions`;

interface ServerFactsRow {
  version_num: number;
  version: string;
  database: string;
  user: string;
  superuser: boolean | null;
  can_create: boolean;
  extensions: ServerFacts['extensions'];
}

/** ServerFacts from the row of SERVER_FACTS_SQL. */
function serverFactsOf(row: ServerFactsRow): ServerFacts {
  return {
    versionNum: row.version_num,
    version: row.version,
    database: row.database,
    user: row.user,
    superuser: row.superuser === true,
    canCreateInDatabase: row.can_create,
    extensions: row.extensions,
  };
}

/** What the server at `url` says about itself and the required extensions (its own connection, before any pool). */
export async function readServerFacts(url: string): Promise<ServerFacts> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    const { rows } = await client.query<ServerFactsRow>(SERVER_FACTS_SQL, [REQUIRED_EXTENSIONS]);
    return serverFactsOf(rows[0]!);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Refuses a server the service cannot run on, with the one-line reason (UnsupportedDatabaseError). */
export async function checkServerRequirements(url: string): Promise<void> {
  const unmet = unmetRequirement(await readServerFacts(url));
  if (unmet) throw new UnsupportedDatabaseError(unmet);
}
