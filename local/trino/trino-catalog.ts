import { trinoLiteral } from '../../shared/engines/athena-literals.js';
import { EVENTS_BUCKET, type GlueTable } from './glue-tables.js';

// The stack's Glue tables as Trino Hive tables over a local folder laid out like the events bucket. Athena's
// partition projection properties become the Hive connector's projection properties, which Trino stores in the
// metastore under Athena's own names (`projection.dt.type`, `storage.location.template`), so the tables carry the
// same parameters the Glue tables do. A projection property without a mapping here is an error, not a silent gap.

const trinoTypes: Record<string, string> = {
  string: 'varchar',
  bigint: 'bigint',
  double: 'double',
  boolean: 'boolean',
  date: 'date',
  timestamp: 'timestamp(3)',
  'array<string>': 'array(varchar)',
};

/** Per-column projection keys (`projection.<column>.<key>`) and how each becomes a Trino column property. */
const columnProjection: Record<string, (value: string) => string> = {
  type: (value) => `partition_projection_type = ${text(value.toUpperCase())}`,
  format: (value) => `partition_projection_format = ${text(value)}`,
  range: (value) =>
    `partition_projection_range = ARRAY[${value
      .split(',')
      .map((v) => text(v.trim()))
      .join(', ')}]`,
  interval: (value) => `partition_projection_interval = ${Number.parseInt(value, 10)}`,
  'interval.unit': (value) => `partition_projection_interval_unit = ${text(value.toUpperCase())}`,
  values: (value) => `partition_projection_values = ARRAY[${value.split(',').map(text).join(', ')}]`,
  digits: (value) => `partition_projection_digits = ${Number.parseInt(value, 10)}`,
};

/** Table parameters that carry no meaning for reading Parquet through the Hive connector. */
const ignoredParameters = new Set(['EXTERNAL', 'classification']);

/**
 * The statements creating `table` in catalog `hive`, the events bucket standing at `bucketUrl`: a local folder
 * (`local:///abs/path`) or a bucket of an S3-compatible server (`s3://name`). `CREATE SCHEMA IF NOT EXISTS`, then
 * `CREATE TABLE`.
 */
export function createTableStatements(table: GlueTable, bucketUrl: string): string[] {
  const location = (value: string) => value.replace(`s3://${EVENTS_BUCKET}`, bucketUrl);
  const columnProperties = new Map<string, string[]>();
  let enabled = false;
  let template: string | undefined;
  for (const [key, value] of Object.entries(table.parameters)) {
    if (ignoredParameters.has(key)) continue;
    if (key === 'projection.enabled') enabled = value === 'true';
    else if (key === 'storage.location.template') template = location(value);
    else {
      const column = table.partitionKeys.find((c) => key.startsWith(`projection.${c.name}.`));
      const property = column ? columnProjection[key.slice(`projection.${column.name}.`.length)] : undefined;
      if (!column || !property) throw new Error(`table ${table.name}: no Trino equivalent of parameter ${key}`);
      columnProperties.set(column.name, [...(columnProperties.get(column.name) ?? []), property(value)]);
    }
  }
  const column = (c: { name: string; type: string }) => {
    const type = trinoTypes[c.type];
    if (!type) throw new Error(`table ${table.name}: no Trino type for Glue type ${c.type}`);
    const properties = columnProperties.get(c.name);
    return `  ${identifier(c.name)} ${type}${properties ? ` WITH (${properties.join(', ')})` : ''}`;
  };
  const tableProperties = [
    `external_location = ${text(location(table.location))}`,
    `format = 'PARQUET'`,
    `partitioned_by = ARRAY[${table.partitionKeys.map((c) => text(c.name)).join(', ')}]`,
    `partition_projection_enabled = ${enabled}`,
    ...(template ? [`partition_projection_location_template = ${text(template)}`] : []),
  ];
  const name = `hive.${identifier(table.database)}.${identifier(table.name)}`;
  return [
    `CREATE SCHEMA IF NOT EXISTS hive.${identifier(table.database)}`,
    `CREATE TABLE ${name} (\n${[...table.columns, ...table.partitionKeys].map(column).join(',\n')}\n) WITH (\n  ${tableProperties.join(',\n  ')}\n)`,
  ];
}

function text(value: string): string {
  return trinoLiteral({ type: 'string', value });
}

function identifier(name: string): string {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`unexpected Glue name ${JSON.stringify(name)}`);
  return `"${name}"`;
}
