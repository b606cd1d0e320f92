import { type ChartLoadError, networkError, toChartLoadError } from './chart-load-error.ts';

/** What a renewal endpoint answers: a fresh id and its expiry (ISO instant). */
export interface RenewedQueryId {
  id: string;
  expiresAt?: string;
}

/**
 * Asks the host's renewal endpoint for a fresh id in exchange for an expired one: `POST {"id": old}`
 * as JSON. Resolves to the new id or rejects with a {@link ChartLoadError}.
 */
export async function renewQueryId(
  tokenUrl: URL,
  expiredId: string,
  credentials: RequestCredentials,
  signal: AbortSignal,
  fetchImpl: typeof fetch = fetch,
): Promise<string> {
  let response: Response;
  try {
    response = await fetchImpl(tokenUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ id: expiredId }),
      credentials,
      signal,
      cache: 'no-store',
    });
  } catch (error) {
    if (signal.aborted) throw error;
    throw networkError();
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    throw toChartLoadError(response.status, body, response.headers.get('Retry-After'));
  }
  const id = (body as Partial<RenewedQueryId> | undefined)?.id;
  if (typeof id !== 'string' || id === '') {
    const error: ChartLoadError = {
      status: response.status,
      code: 'expired',
      message: 'The renewal endpoint did not return a new chart id.',
    };
    throw error;
  }
  return id;
}
