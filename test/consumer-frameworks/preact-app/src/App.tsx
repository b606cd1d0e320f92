// Registers <analytics-chart> and adds it to Preact's JSX.IntrinsicElements.
import '@analytics-chart/element/preact';
import { useState } from 'preact/hooks';

// The edge's URL and a query id minted by your backend; here read from the page's address
// (`?endpoint=…&id=…`) so the example runs against any edge.
const params = new URLSearchParams(location.search);
const endpoint = params.get('endpoint') ?? '/analytics/';
const queryId = params.get('id') ?? '';

export function App() {
  const [loaded, setLoaded] = useState<string>();
  return (
    <main>
      <analytics-chart
        query-id={queryId}
        endpoint={endpoint}
        theme="dark"
        height={320}
        lazy={false}
        onanalytics-chart-load={(event) => setLoaded(event.detail.payload.title ?? 'untitled')}
      />
      <p id="status">{loaded ? `Loaded: ${loaded}` : 'Loading…'}</p>
    </main>
  );
}
