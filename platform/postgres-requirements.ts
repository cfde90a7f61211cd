/**
 * What the service needs of its PostgreSQL server, and the one-line answer an operator gets
 * when the server falls short: a supported major version (15 to 18) and the `pg_trgm` and
 * `btree_gin` extensions in the service's database (the search index's trigram and GIN
 * indexes), or the right to create them (the migrations do). `unmetRequirement` decides from
 * the server's answer alone (a pure function, tested with made-up answers); the statement that
 * asks the server is in readmodels/server-requirements.ts, which the start-up calls.
 */

/** The PostgreSQL major versions the service runs on (each tested in CI: 18 embedded, 15 Debian's). */
export const SUPPORTED_MAJORS: readonly number[] = [15, 16, 17, 18];

/** The extensions the migrations create. */
export const REQUIRED_EXTENSIONS: readonly string[] = ['pg_trgm', 'btree_gin'];

export interface ServerFacts {
  /** `server_version_num`, e.g. 150018. */
  readonly versionNum: number;
  /** `server_version`, e.g. "15.18 (Debian 15.18-0+deb12u1)". */
  readonly version: string;
  readonly database: string;
  readonly user: string;
  readonly superuser: boolean;
  /** Whether the user may create objects (a trusted extension among them) in the database. */
  readonly canCreateInDatabase: boolean;
  readonly extensions: readonly {
    readonly name: string;
    /** The server has its files (the contrib package is installed). */
    readonly available: boolean;
    /** Created in this database already. */
    readonly installed: boolean;
    /** Marked trusted: a non-superuser with CREATE on the database may create it. */
    readonly trusted: boolean;
  }[];
}

/** The major version of `server_version_num` (150018 → 15). */
export const majorOf = (versionNum: number) => Math.floor(versionNum / 10000);

const listed = (majors: readonly number[]) => `${majors.slice(0, -1).join(', ')} or ${majors[majors.length - 1]}`;

/**
 * Why the service cannot run on this server, in one line for the operator (what was found, what
 * is supported, or the statement to run), or null when it can.
 */
export function unmetRequirement(facts: ServerFacts): string | null {
  const major = majorOf(facts.versionNum);
  if (!SUPPORTED_MAJORS.includes(major)) {
    const found = facts.version.split(' ')[0] || String(facts.versionNum);
    return `PostgreSQL ${found} is not supported: the service runs on PostgreSQL ${listed(SUPPORTED_MAJORS)}`;
  }
  for (const name of REQUIRED_EXTENSIONS) {
    const ext = facts.extensions.find((e) => e.name === name);
    if (!ext || ext.installed) continue;
    if (!ext.available) {
      return (
        `the PostgreSQL extension ${name} is not available on the server (PostgreSQL ${major}): install the server's contrib package ` +
        `(Debian/Ubuntu: postgresql-contrib; RHEL: postgresql${major}-contrib), then run as a superuser in database "${facts.database}": CREATE EXTENSION IF NOT EXISTS ${name};`
      );
    }
    const mayCreate = facts.superuser || (ext.trusted && facts.canCreateInDatabase);
    if (!mayCreate) {
      return (
        `the PostgreSQL extension ${name} is missing in database "${facts.database}" and user "${facts.user}" may not create it: ` +
        `run as a superuser in database "${facts.database}": CREATE EXTENSION IF NOT EXISTS ${name};`
      );
    }
  }
  return null;
}
