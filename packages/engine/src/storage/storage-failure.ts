/**
 * The failures of a storage that the engine answers for itself, whatever the driver: a query
 * stopped at its time limit (504), work over the memory limit (503 for a query, 413 for
 * ingest), the storage out of reach (503). Any other failure is unexpected (500).
 */
export type StorageFailure = 'timed-out' | 'out-of-memory' | 'unavailable';
