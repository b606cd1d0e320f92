/**
 * Export: the `export` attribute adds CSV and PNG downloads. Downloads are caught at the document
 * (the link click is composed) and their data: URLs decoded; expected CSV text is written by hand
 * from the fixtures.
 */
import { expect } from 'chai';
import type { AnalyticsChart } from '../src/analytics-chart.component.ts';
import { cleanup, frames, load, shadow } from './helpers.ts';

function toolbarButton(el: AnalyticsChart, label: string): HTMLButtonElement | undefined {
  return [...shadow(el).querySelectorAll<HTMLButtonElement>('[part="toolbar"] button')].find(
    (b) => b.textContent?.trim() === label,
  );
}

/** Clicks a button and returns the download it started (file name and URL), without saving it. */
async function download(button: HTMLButtonElement | undefined) {
  if (!button) throw new Error('no such button');
  let caught: HTMLAnchorElement | undefined;
  const onClick = (event: Event) => {
    const target = event.composedPath()[0];
    if (target instanceof HTMLAnchorElement && target.download) {
      caught = target;
      event.preventDefault();
    }
  };
  document.addEventListener('click', onClick, true);
  try {
    button.click();
  } finally {
    document.removeEventListener('click', onClick, true);
  }
  if (!caught) throw new Error('no download started');
  return { name: caught.download, href: caught.href };
}

describe('export', () => {
  afterEach(cleanup);

  it('shows no export buttons without the attribute', async () => {
    const el = await load('bar');
    expect(toolbarButton(el, 'CSV')).to.equal(undefined);
    expect(toolbarButton(el, 'PNG')).to.equal(undefined);
  });

  it('downloads the data as CSV, raw values, previous window beside the current one', async () => {
    const el = await load('single-line', { export: '' });
    const file = await download(toolbarButton(el, 'CSV'));
    expect(file.name).to.equal('sign-ups.csv');
    expect(file.href.startsWith('data:text/csv;charset=utf-8,')).to.be.true;
    const text = decodeURIComponent(file.href.slice('data:text/csv;charset=utf-8,'.length));
    expect(text).to.equal(
      [
        'Time,Count,Previous period time,Count (previous period)',
        '2024-03-01,5,2024-02-23,4',
        '2024-03-02,8,2024-02-24,6',
        '2024-03-03,0,2024-02-25,1',
        '2024-03-04,12,2024-02-26,10',
        '2024-03-05,7,2024-02-27,8',
        '2024-03-06,3,2024-02-28,2',
        '2024-03-07,9,2024-02-29,5',
        '',
      ].join('\r\n'),
    );
  });

  it('exports Samples with ISO timestamps and JSON cells, quoted', async () => {
    const el = await load('samples', { export: '' });
    expect(toolbarButton(el, 'PNG'), 'no PNG for a table').to.equal(undefined);
    const file = await download(toolbarButton(el, 'CSV'));
    const text = decodeURIComponent(file.href.slice('data:text/csv;charset=utf-8,'.length));
    expect(text).to.equal(
      'timestamp,json\r\n' +
        '2024-03-05T14:00:00.000Z,"{""event"":""signup"",""plan"":""pro""}"\r\n' +
        '2024-03-04T14:00:00.000Z,"{""event"":""view"",""plan"":""free""}"\r\n',
    );
  });

  it('downloads the chart as an opaque PNG of the canvas', async () => {
    const el = await load('bar', { export: '', theme: 'dark' });
    await frames(2);
    const file = await download(toolbarButton(el, 'PNG'));
    expect(file.name).to.equal('events-by-page.png');
    expect(file.href.startsWith('data:image/png;base64,')).to.be.true;
    const image = new Image();
    image.src = file.href;
    await image.decode();
    const canvas = shadow(el).querySelector('canvas') as HTMLCanvasElement;
    expect(image.width).to.equal(canvas.width);
    expect(image.height).to.equal(canvas.height);
    const probe = document.createElement('canvas');
    probe.width = image.width;
    probe.height = image.height;
    const ctx = probe.getContext('2d');
    ctx?.drawImage(image, 0, 0);
    // The dark theme background is painted into the image, fully opaque.
    expect([...(ctx?.getImageData(2, 2, 1, 1).data ?? [])]).to.deep.equal([0x0d, 0x11, 0x17, 255]);
  });

  it('names the file "chart" when the payload has no title', async () => {
    const el = await load('single-value', { export: '' });
    (el.payload as { title?: string }).title = undefined;
    const file = await download(toolbarButton(el, 'CSV'));
    expect(file.name).to.equal('chart.csv');
    const text = decodeURIComponent(file.href.slice('data:text/csv;charset=utf-8,'.length));
    expect(text).to.equal('Value,Previous period\r\n1250,1000\r\n');
  });
});
