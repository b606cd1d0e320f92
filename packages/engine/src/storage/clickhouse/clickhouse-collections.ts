import type { ClickHouseClient } from '@clickhouse/client-web';
import {
  BASE_VIEW,
  COLLECTIONS_TABLE,
  collectionView,
  quoteClickHouseIdentifier,
} from './clickhouse-schema.ts';

/**
 * Records a collection in a workspace's catalog and gives it its SQL-mode view (both
 * idempotent: any engine, and the export, may do it again). A collection really named `base`
 * becomes what `FROM base` reads.
 */
export async function registerCollection(
  client: ClickHouseClient,
  database: string,
  collection: string,
): Promise<void> {
  await client.insert({
    table: `${quoteClickHouseIdentifier(database)}.${quoteClickHouseIdentifier(COLLECTIONS_TABLE)}`,
    columns: ['name'],
    values: [{ name: collection }],
    format: 'JSONEachRow',
  });
  await client.command({ query: collectionView(database, collection, collection) });
  if (collection === BASE_VIEW) {
    await client.command({ query: collectionView(database, BASE_VIEW, collection) });
  }
}
