/**
 * A `fetch` that keeps at most `limit` requests open at once; the others wait their turn. A
 * request stays open until its answer's body has been read to the end, failed or been
 * cancelled, since the connection under it is busy until then. The ClickHouse client reads or
 * cancels every body it receives.
 */
export function boundedFetch(
  limit: number,
  platform: typeof fetch = globalThis.fetch,
): typeof fetch {
  let open = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else open--;
  };
  return async (input, init) => {
    if (open < limit) open++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    let response: Response;
    try {
      response = await platform(input, init);
    } catch (error) {
      release();
      throw error;
    }
    if (!response.body) {
      release();
      return response;
    }
    const reader = response.body.getReader();
    let released = false;
    const finish = () => {
      if (released) return;
      released = true;
      release();
    };
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const chunk = await reader.read();
          if (chunk.done) {
            finish();
            controller.close();
          } else controller.enqueue(chunk.value);
        } catch (error) {
          finish();
          controller.error(error);
        }
      },
      cancel(reason) {
        finish();
        return reader.cancel(reason);
      },
    });
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
