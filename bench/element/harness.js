// In-page harness of the element benchmark (served as a classic script before the bundle).
// "Payload arrived" is when the response body has been read: Response#text resolving for the data
// route, which both the element and the raw Chart.js baseline use.
(() => {
  const nativeText = Response.prototype.text;
  const arrivals = [];
  Response.prototype.text = async function text() {
    const body = await nativeText.call(this);
    if (this.url.includes('/api/data')) arrivals.push(performance.now());
    return body;
  };
  const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

  function host() {
    const div = document.createElement('div');
    div.style.width = '800px';
    document.body.append(div);
    return div;
  }

  window.bench = {
    /** Mounts one chart; times from payload arrival to the load event (drawn) and the next frame. */
    async element(id) {
      const el = document.createElement('analytics-chart');
      el.setAttribute('query-id', id);
      el.setAttribute('lazy', 'false');
      const before = arrivals.length;
      const loaded = new Promise((resolve) =>
        el.addEventListener('analytics-chart-load', resolve, { once: true }),
      );
      const attached = performance.now();
      host().append(el);
      await loaded;
      const drawn = performance.now();
      await frame();
      const painted = performance.now();
      const arrived = arrivals[before];
      return { draw: drawn - arrived, frame: painted - arrived, total: drawn - attached };
    },

    /** The same data drawn by Chart.js directly (UMD build, all parts registered). */
    async raw(id, decimate) {
      const started = performance.now();
      const response = await fetch('/api/data', {
        headers: { Authorization: `Bearer ${id}`, Accept: 'application/json' },
      });
      const text = await response.text();
      const arrived = performance.now();
      const payload = JSON.parse(text);
      const div = host();
      div.style.position = 'relative';
      div.style.height = '300px';
      const canvas = document.createElement('canvas');
      div.append(canvas);
      const values = payload.series[0].values;
      const options = { animation: false, responsive: true, maintainAspectRatio: false };
      const config = decimate
        ? {
            type: 'line',
            data: { datasets: [{ data: values.map((y, x) => ({ x, y })), pointRadius: 0 }] },
            options: {
              ...options,
              parsing: false,
              normalized: true,
              scales: { x: { type: 'linear' } },
              plugins: { decimation: { enabled: true, algorithm: 'lttb' } },
            },
          }
        : { type: 'line', data: { labels: payload.labels, datasets: [{ data: values }] }, options };
      new window.Chart(canvas, config);
      const drawn = performance.now();
      await frame();
      const painted = performance.now();
      return { draw: drawn - arrived, frame: painted - arrived, total: drawn - started };
    },

    /** n times: a new element, attached, loaded, detached. */
    async cycles(n, id) {
      for (let i = 0; i < n; i++) {
        const el = document.createElement('analytics-chart');
        el.setAttribute('query-id', id);
        el.setAttribute('lazy', 'false');
        const loaded = new Promise((resolve) =>
          el.addEventListener('analytics-chart-load', resolve, { once: true }),
        );
        document.body.append(el);
        await loaded;
        el.remove();
      }
      return Object.keys(window.AnalyticsChartInstances?.() ?? {}).length;
    },

    /** One element attached and detached n times (the reconnection path). */
    async reattach(n, id) {
      const el = document.createElement('analytics-chart');
      el.setAttribute('query-id', id);
      el.setAttribute('lazy', 'false');
      const parent = host();
      for (let i = 0; i < n; i++) {
        parent.append(el);
        await el.updateComplete;
        await frame();
        el.remove();
      }
      parent.remove();
    },
  };
})();
