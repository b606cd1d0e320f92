// The dashboard's only script (served from /assets, so the CSP needs no 'unsafe-inline').
// Progressive enhancement: without it the range form reloads the page with ?range=.

const form = document.querySelector('form.range-picker');
const select = form?.querySelector('select[name="range"]');

if (form && select) {
  form.querySelector('button[type="submit"]')?.setAttribute('hidden', '');
  select.addEventListener('change', () => {
    const range = select.value;
    // Only charts whose definition allows the range get it; the edge would refuse others.
    for (const chart of document.querySelectorAll('analytics-chart[data-ranges]')) {
      if (chart.dataset.ranges.split(' ').includes(range)) chart.setAttribute('range', range);
    }
    const url = new URL(window.location.href);
    url.searchParams.set('range', range);
    window.history.replaceState(null, '', url);
  });
}

// A 401 from the edge means the session cookie is gone or expired: say so once.
document.addEventListener('analytics-chart-error', (event) => {
  if (event.detail?.status === 401) {
    document.querySelector('.session-ended')?.removeAttribute('hidden');
  }
});
