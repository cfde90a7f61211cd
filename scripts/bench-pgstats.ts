/**
 * PostgreSQL's own counters for a benchmark run (`bench:submit --pg-stats`): per statement
 * (`pg_stat_statements` with `track_planning`), per table (`pg_stat_user_tables`: inserts, updates,
 * HOT updates) and for the whole server (`pg_stat_wal`), each divided by the run's documents. These
 * counts do not depend on the machine's speed, unlike CPU time under load.
 *
 * `pg_stat_statements` must be loaded when the server starts: `ensurePgStatStatements` sets
 * `shared_preload_libraries` with ALTER SYSTEM on the benchmark's own data directory and says
 * whether the server has to be restarted for it.
 */
import pg from 'pg';
import { renderTable } from './bench-support.js';

/** Sets up pg_stat_statements; true when the server must be restarted before it counts. */
export async function ensurePgStatStatements(db: pg.Client): Promise<boolean> {
  const { rows } = await db.query<{ libs: string }>(`select current_setting('shared_preload_libraries') as libs`);
  if (rows[0]!.libs.split(',').map((s) => s.trim()).includes('pg_stat_statements')) {
    await db.query('create extension if not exists pg_stat_statements');
    return false;
  }
  await db.query(`alter system set shared_preload_libraries = 'pg_stat_statements'`);
  await db.query(`alter system set pg_stat_statements.track_planning = on`);
  await db.query(`alter system set pg_stat_statements.max = 10000`);
  return true;
}

/** Zeroes the counters read by `printPgStats` (statements of every database, tables of this one, WAL). */
export async function resetPgStats(db: pg.Client): Promise<void> {
  await db.query('select pg_stat_statements_reset()');
  await db.query('select pg_stat_reset()');
  await db.query(`select pg_stat_reset_shared('wal')`);
  // The WAL's writes and fsyncs are counted in pg_stat_io from PostgreSQL 16 (in pg_stat_wal before).
  await db.query(`select pg_stat_reset_shared('io')`).catch(() => {});
}

const flat = (q: string) => q.replace(/\s+/g, ' ').trim();

/**
 * A statement as the table shows it: a read model batch's statement (its lock and checkpoint
 * first) by the tables it writes, any other by its first words.
 */
function label(query: string): string {
  const q = flat(query);
  if (!q.startsWith('with l as')) return q.slice(0, 110);
  const written = new Set<string>();
  for (const m of q.matchAll(/\b(?:insert into|update|delete from)\s+"?([a-z_]+)"?/g)) if (m[1] !== 'projection_checkpoints') written.add(m[1]!);
  return `batch with checkpoint; writes ${[...written].join(', ') || 'nothing'}`;
}

/** Prints the counters since `resetPgStats`, per document of the run; `top`: statements shown. */
export async function printPgStats(db: pg.Client, documents: number, top = 30): Promise<void> {
  // Table counters are flushed by each backend at the end of a transaction (at most every second).
  await new Promise((r) => setTimeout(r, 1500));
  const per = (n: number | string) => Number(n) / documents;
  const { rows: st } = await db.query<{
    query: string; calls: string; rows: string; exec: number; plan: number; plans: string;
    dirtied: string; written: string; wal_records: string; wal_fpi: string; wal_bytes: string;
  }>(
    `select query, calls, rows, total_exec_time as exec, total_plan_time as plan, plans,
            shared_blks_dirtied as dirtied, shared_blks_written as written, wal_records, wal_fpi, wal_bytes
       from pg_stat_statements
      where dbid = (select oid from pg_database where datname = current_database())
        and query not like '%pg_stat%'
      order by total_exec_time + total_plan_time desc`,
  );
  const sum = (f: (r: (typeof st)[number]) => number) => st.reduce((s, r) => s + f(r), 0);
  const totalMs = sum((r) => r.exec + r.plan);
  console.log(
    `\nPostgreSQL's counters per document (${documents} documents; pg_stat_statements, this database): ` +
      `${per(sum((r) => Number(r.calls))).toFixed(2)} statements, ${per(totalMs).toFixed(3)} ms exec+plan ` +
      `(plan ${per(sum((r) => r.plan)).toFixed(3)} ms, ${per(sum((r) => Number(r.plans))).toFixed(2)} plans), ` +
      `WAL ${per(sum((r) => Number(r.wal_records))).toFixed(1)} records, ${per(sum((r) => Number(r.wal_fpi))).toFixed(2)} FPI, ` +
      `${(per(sum((r) => Number(r.wal_bytes))) / 1024).toFixed(2)} KB`,
  );
  console.log(
    renderTable(
      ['statement', 'calls', 'rows', 'exec+plan ms', 'plan ms', 'blks dirtied', 'blks written', 'WAL rec', 'FPI', 'WAL bytes'],
      st.slice(0, top).map((r) => [
        label(r.query),
        per(r.calls).toFixed(3),
        per(r.rows).toFixed(3),
        per(r.exec + r.plan).toFixed(4),
        per(r.plan).toFixed(4),
        per(r.dirtied).toFixed(3),
        per(r.written).toFixed(3),
        per(r.wal_records).toFixed(2),
        per(r.wal_fpi).toFixed(3),
        per(r.wal_bytes).toFixed(0),
      ]),
    ),
  );
  // PostgreSQL 18 also times (auto)vacuum and (auto)analyze per table: their workers' CPU counts in PostgreSQL's.
  const { rows: has18 } = await db.query(`select 1 from pg_attribute where attrelid = 'pg_stat_user_tables'::regclass and attname = 'total_autovacuum_time'`);
  const timed = has18.length > 0;
  const { rows: tables } = await db.query<{ relname: string; ins: string; upd: string; hot: string; del: string; av: string; aa: string; avt: number | null; aat: number | null }>(
    `select relname, n_tup_ins as ins, n_tup_upd as upd, n_tup_hot_upd as hot, n_tup_del as del, autovacuum_count as av, autoanalyze_count as aa,
            ${timed ? 'total_autovacuum_time' : 'null::float8'} as avt, ${timed ? 'total_autoanalyze_time' : 'null::float8'} as aat
       from pg_stat_user_tables where n_tup_ins + n_tup_upd + n_tup_del + autovacuum_count + autoanalyze_count > 0
      order by n_tup_ins + n_tup_upd + n_tup_del desc`,
  );
  const ms = (v: number | null) => (v === null ? '-' : (v / documents).toFixed(4));
  console.log('rows written per document, by table (pg_stat_user_tables), and the autovacuum and autoanalyze runs in all with their time per document:');
  console.log(
    renderTable(
      ['table', 'inserted', 'updated', 'of which HOT', 'deleted', 'autovacuums', 'ms', 'autoanalyzes', 'ms'],
      tables.map((t) => [t.relname, per(t.ins).toFixed(3), per(t.upd).toFixed(3), per(t.hot).toFixed(3), per(t.del).toFixed(3), t.av, ms(t.avt), t.aa, ms(t.aat)]),
    ),
  );
  if (timed) {
    const sumOf = (f: (t: (typeof tables)[number]) => number | null) => tables.reduce((s, t) => s + (f(t) ?? 0), 0);
    console.log(`  autovacuum ${(sumOf((t) => t.avt) / documents).toFixed(3)} ms and autoanalyze ${(sumOf((t) => t.aat) / documents).toFixed(3)} ms per document (wall time of the workers)`);
  }
  const { rows: wal } = await db.query<{ wal_records: string; wal_fpi: string; wal_bytes: string; wal_buffers_full: string }>(
    'select wal_records, wal_fpi, wal_bytes, wal_buffers_full from pg_stat_wal',
  );
  const w = wal[0]!;
  const { rows: ck } = await db.query<{ checkpoint_timeout: string; max_wal_size: string }>(
    `select current_setting('checkpoint_timeout') as checkpoint_timeout, current_setting('max_wal_size') as max_wal_size`,
  );
  console.log(
    `pg_stat_wal (the whole server, per document): ${per(w.wal_records).toFixed(1)} records, ${per(w.wal_fpi).toFixed(2)} full-page images, ` +
      `${(per(w.wal_bytes) / 1024).toFixed(2)} KB, ${w.wal_buffers_full} times the WAL buffers were full in all ` +
      `(checkpoint_timeout ${ck[0]!.checkpoint_timeout}, max_wal_size ${ck[0]!.max_wal_size})`,
  );
  // PostgreSQL 18 counts the WAL's writes and fsyncs in pg_stat_io, earlier versions in pg_stat_wal.
  const { rows: walColumns } = await db.query(`select 1 from pg_attribute where attrelid = 'pg_stat_wal'::regclass and attname = 'wal_sync'`);
  const { rows: io } = await db.query<{ writes: string | null; fsyncs: string | null }>(
    walColumns.length > 0
      ? 'select wal_write::text as writes, wal_sync::text as fsyncs from pg_stat_wal'
      : `select sum(writes)::text as writes, sum(fsyncs)::text as fsyncs from pg_stat_io where object = 'wal'`,
  );
  const { rows: xact } = await db.query<{ commits: string }>('select xact_commit::text as commits from pg_stat_database where datname = current_database()');
  console.log(
    `  the WAL written ${per(io[0]?.writes ?? 0).toFixed(2)} times and flushed (fsync) ${per(io[0]?.fsyncs ?? 0).toFixed(2)} times per document; ` +
      `${per(xact[0]!.commits).toFixed(2)} transactions committed per document in this database`,
  );
}
