/**
 * Rows of one read-model table as a batched projection sees them: the rows a batch touches are
 * read in one statement, the batch's events change them in memory in log order (exactly as the
 * statements of one event after another would), and every changed row is written back in one
 * multi-row upsert. A batch of any size then costs one read and one write per table.
 *
 * Values are kept as PostgreSQL prints them (timestamps, JSON and bigints as text), so a row
 * written back unchanged is equal to the stored one, to the microsecond.
 */
import type { Knex } from 'knex';

export type ColumnType = 'text' | 'timestamptz' | 'jsonb' | 'bigint' | 'integer' | 'boolean';

export interface TableShape {
  readonly table: string;
  /** The primary key's columns. */
  readonly key: readonly string[];
  /** Every column with its type. */
  readonly columns: Readonly<Record<string, ColumnType>>;
}

export type Row = Record<string, unknown>;

/** Most bind parameters in one statement (PostgreSQL allows 65,535). */
const MAX_PARAMETERS = 60_000;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Multi-row insert in as few statements as the parameter limit allows (one for any usual batch). */
export async function insertRows(
  trx: Knex.Transaction,
  table: string,
  rows: readonly Row[],
  conflict?: { key: readonly string[]; merge: boolean },
): Promise<void> {
  if (rows.length === 0) return;
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / Object.keys(rows[0]!).length));
  for (let i = 0; i < rows.length; i += perStatement) {
    const insert = trx(table).insert(rows.slice(i, i + perStatement));
    if (!conflict) await insert;
    else if (conflict.merge) await insert.onConflict([...conflict.key]).merge();
    else await insert.onConflict([...conflict.key]).ignore();
  }
}

export class BatchRows {
  /** Loaded or created rows by key; null: known not to exist. */
  private readonly rows = new Map<string, Row | null>();
  private readonly changed = new Set<string>();
  private readonly selectList: string;

  constructor(readonly shape: TableShape) {
    this.selectList = Object.entries(shape.columns)
      .map(([name, type]) => (type === 'timestamptz' || type === 'jsonb' || type === 'bigint' ? `${quote(name)}::text as ${quote(name)}` : quote(name)))
      .join(', ');
  }

  private keyOf(values: readonly unknown[]): string {
    return JSON.stringify(values.map((v) => (v === null || v === undefined ? null : String(v))));
  }

  /** Reads the rows of these keys that are not known yet (one statement for any usual batch). */
  async load(trx: Knex.Transaction, keys: readonly (readonly unknown[])[]): Promise<void> {
    const wanted = new Map<string, readonly unknown[]>();
    for (const k of keys) {
      const id = this.keyOf(k);
      if (!this.rows.has(id)) wanted.set(id, k);
    }
    if (wanted.size === 0) return;
    const list = [...wanted.values()];
    const perStatement = Math.floor(MAX_PARAMETERS / this.shape.key.length);
    for (let i = 0; i < list.length; i += perStatement) {
      const chunk = list.slice(i, i + perStatement);
      const tuple = (n: number) => (n === 1 ? '?' : `(${Array.from({ length: n }, () => '?').join(', ')})`);
      const keyColumns = this.shape.key.length === 1 ? quote(this.shape.key[0]!) : `(${this.shape.key.map(quote).join(', ')})`;
      const { rows } = await trx.raw(
        `select ${this.selectList} from ${quote(this.shape.table)} where ${keyColumns} in (${chunk.map(() => tuple(this.shape.key.length)).join(', ')})`,
        chunk.flatMap((k) => k.map((v) => String(v))),
      );
      for (const row of rows as Row[]) this.rows.set(this.keyOf(this.shape.key.map((c) => row[c])), row);
    }
    for (const id of wanted.keys()) if (!this.rows.has(id)) this.rows.set(id, null);
  }

  /** The row (undefined: it does not exist). The key must have been loaded or set. */
  get(key: readonly unknown[]): Row | undefined {
    const id = this.keyOf(key);
    const row = this.rows.get(id);
    if (row === undefined && !this.rows.has(id)) throw new Error(`${this.shape.table}: row ${id} was not loaded`);
    return row ?? undefined;
  }

  /** Creates the row or replaces it whole. */
  put(row: Row): void {
    const full: Row = {};
    for (const column of Object.keys(this.shape.columns)) full[column] = row[column] ?? null;
    const id = this.keyOf(this.shape.key.map((c) => full[c]));
    this.rows.set(id, full);
    this.changed.add(id);
  }

  /** Changes some columns of an existing row; a missing row stays missing (an UPDATE of no row). */
  update(key: readonly unknown[], change: (row: Row) => Row): void {
    const row = this.get(key);
    if (row) this.put({ ...row, ...change(row) });
  }

  /** Writes every changed row: one insert … on conflict do update. */
  async flush(trx: Knex.Transaction): Promise<void> {
    const rows: Row[] = [];
    for (const id of this.changed) {
      const row = this.rows.get(id)!;
      const out: Row = {};
      for (const [column, type] of Object.entries(this.shape.columns)) {
        const v = row[column];
        out[column] = type === 'jsonb' && v !== null && typeof v !== 'string' ? JSON.stringify(v) : v;
      }
      rows.push(out);
    }
    this.changed.clear();
    await insertRows(trx, this.shape.table, rows, { key: this.shape.key, merge: true });
  }
}
