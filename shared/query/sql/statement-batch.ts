import type { SqlQuery } from './sql.js';

// Several printed statements as one: each statement becomes a branch of a UNION ALL, tagged with its index and
// numbered in its own order, its columns renamed apart (`s<index>_<column>`) so every branch keeps its own types
// (the other branches' columns are NULL). One statement is one listing of each partition it reads and one 10 MB
// minimum on Athena, where a statement per query lists the same partitions and pays the minimum again. The rows
// come back split per statement, as each statement alone would have answered them.

/** One statement of a batch, with what its rows hold and the order they come in. */
export interface BatchedStatement {
  query: SqlQuery;
  /** Its output columns as printed: identifiers from the printers' allow-lists, never request data. */
  columns: readonly string[];
  /** Its ORDER BY as printed (output columns): the order its rows keep once split back. Empty: one row or any order. */
  order: readonly { column: string; direction: 'asc' | 'desc' }[];
}

const identifier = /^[a-z_][a-z0-9_]*$/;

export function printStatementBatch(statements: readonly BatchedStatement[]): {
  query: SqlQuery;
  /** The batch statement's rows as each statement's own, in the batch's order. */
  split<Row extends Record<string, unknown>>(rows: readonly Row[]): Row[][];
} {
  for (const { columns, order } of statements)
    for (const name of [...columns, ...order.map((o) => o.column)])
      if (!identifier.test(name)) throw new Error(`not a column name: ${name}`);
  const slot = (index: number, column: string) => `s${index}_${column}`;
  const branches = statements.map(({ query, columns, order }, index) => {
    const orderBy = order.map((o) => `${o.column} ${o.direction.toUpperCase()}`).join(', ');
    const own = new Set(columns);
    const outputs = statements.flatMap((other, o) =>
      other.columns.map((column) =>
        o === index && own.has(column) ? `${column} AS ${slot(o, column)}` : `NULL AS ${slot(o, column)}`,
      ),
    );
    return `SELECT ${index} AS batch_statement, row_number() OVER (${orderBy ? `ORDER BY ${orderBy}` : ''}) AS batch_row, ${outputs.join(', ')}\nFROM (\n${query.sql}\n) statement_${index}`;
  });
  return {
    query: {
      sql: branches.join('\nUNION ALL\n'),
      params: statements.flatMap(({ query }) => query.params),
    },
    split<Row extends Record<string, unknown>>(rows: readonly Row[]) {
      const answers: { row: number; values: Row }[][] = statements.map(() => []);
      for (const row of rows) {
        const index = Number(row.batch_statement);
        const statement = statements[index];
        if (!statement) throw new Error(`batch row of no statement: ${String(row.batch_statement)}`);
        const values: Record<string, unknown> = {};
        for (const column of statement.columns) values[column] = row[slot(index, column)] ?? null;
        answers[index]!.push({ row: Number(row.batch_row), values: values as Row });
      }
      return answers.map((answer) => answer.sort((a, b) => a.row - b.row).map(({ values }) => values));
    },
  };
}
