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

/** An S3-compatible server a catalog reads `s3://` locations from (path-style, as moto serves them). */
export interface S3Endpoint {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * The Hive connector's settings for a catalog over a file metastore in `metastoreDir` and the local file system
 * (absolute paths, `local:///...`), and also over `s3` when given: the catalog `hive` of every server, and each
 * catalog a client adds with `createCatalogStatement`.
 */
export function hiveCatalogProperties(metastoreDir: string, s3?: S3Endpoint): Record<string, string> {
  return {
    'connector.name': 'hive',
    'hive.metastore': 'file',
    'hive.metastore.catalog.dir': `local://${metastoreDir}`,
    'fs.native-local.enabled': 'true',
    'local.location': '/',
    // Athena reads timestamps at millisecond precision, as does Trino's Hive connector by default.
    'hive.timestamp-precision': 'MILLISECONDS',
    // On S3 a projected partition with no objects is an empty listing; a local folder that does not exist is
    // the same thing, not an error.
    'hive.ignore-absent-partitions': 'true',
    ...(s3
      ? {
          'fs.native-s3.enabled': 'true',
          's3.endpoint': s3.endpoint,
          's3.region': s3.region,
          's3.path-style-access': 'true',
          's3.aws-access-key': s3.accessKeyId,
          's3.aws-secret-key': s3.secretAccessKey,
        }
      : {}),
  };
}

/** `CREATE CATALOG` of `properties` as `catalog` (a server started with `catalogsByStatement`). */
export function createCatalogStatement(catalog: string, properties: Record<string, string>): string {
  const { 'connector.name': connector, ...rest } = properties;
  const settings = Object.entries(rest).map(([key, value]) => `"${key}" = ${text(value)}`);
  // The connector's name is a bare word: Trino takes a quoted one as a different name.
  if (!/^[a-z_]+$/.test(connector ?? '')) throw new Error(`unexpected connector ${JSON.stringify(connector)}`);
  return `CREATE CATALOG ${identifier(catalog)} USING ${connector} WITH (\n  ${settings.join(',\n  ')}\n)`;
}

/** `DROP CATALOG` of a catalog added by `createCatalogStatement`. */
export function dropCatalogStatement(catalog: string): string {
  return `DROP CATALOG IF EXISTS ${identifier(catalog)}`;
}

/**
 * The statements creating `table` in `catalog` (by default `hive`), the events bucket standing at `bucketUrl`: a
 * local folder (`local:///abs/path`) or a bucket of an S3-compatible server (`s3://name`). `CREATE SCHEMA IF NOT
 * EXISTS`, then `CREATE TABLE`.
 */
export function createTableStatements(table: GlueTable, bucketUrl: string, catalog = 'hive'): string[] {
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
  const schema = `${identifier(catalog)}.${identifier(table.database)}`;
  const name = `${schema}.${identifier(table.name)}`;
  return [
    `CREATE SCHEMA IF NOT EXISTS ${schema}`,
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
