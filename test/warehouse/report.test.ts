// `chainlake report`: the HTML is self-contained, and in headless Chromium (the binary that the
// dev dependency @sparticuz/chromium carries, so `npm ci` is all a machine needs) every chart draws
// its series, with no console error, no failed script and no request leaving the file, under the
// machine's locale and under one Intl rejects; a chart that cannot be drawn says why in its card.
// Text from the lake cannot become markup. UPDATE_SCREENSHOT=1 (`make screenshot`) also refreshes
// docs/report.png.
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import packagedChromium from '@sparticuz/chromium';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportHtml } from '../../src/warehouse/report.js';
import type { ChartSpec, ReportData } from '../../src/warehouse/report/page.js';
import { cli, demoLake, sharedDemoLake } from '../lake-fixture.js';

let dir: string;
let lake: string;
let html: string;
let browser: Browser;
/** The browser's locale as the machine gives it (this Chromium takes it from the environment). */
let machine: BrowserContext;
/** A locale Intl rejects: what this Chromium says under LANG=C.UTF-8, forced whatever the machine's. */
let posix: BrowserContext;

beforeAll(async () => {
  // CHROMIUM_PATH picks another Chromium; by default the packaged one is unpacked into the tmp folder.
  const executablePath = process.env.CHROMIUM_PATH ?? (await packagedChromium.executablePath());
  if (!existsSync(executablePath)) throw new Error(`no Chromium at ${executablePath} (CHROMIUM_PATH)`);
  dir = mkdtempSync(join(tmpdir(), 'cl-report-'));
  lake = join(dir, 'lake');
  // A copy of the demo lake the suite builds once (this file adds a run to it).
  cpSync(await sharedDemoLake(), lake, { recursive: true });
  // A second run, so that the runs charts have more than one bar.
  await demoLake(['chain_metrics', 'avg_tps'], { lake });
  html = join(dir, 'report.html');
  const r = cli(['report', '--lake', lake, '--out', html]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^wrote .*report\.html \(\d+ charts, \d+ tables\)\n$/);
  browser = await chromium.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
  });
  const viewport = { width: 1280, height: 900 };
  machine = await browser.newContext({ viewport });
  posix = await browser.newContext({ viewport, locale: 'en-US@posix' });
});

afterAll(async () => {
  await browser?.close();
});

interface Opened {
  page: Page;
  problems: string[];
}

/** Opens a report, recording console errors and warnings, page errors and any request off the file. */
async function open(file: string, context = machine): Promise<Opened> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    // The readback warning comes from this test's own pixel counting, not from the page.
    if ((m.type() === 'error' || m.type() === 'warning') && !m.text().includes('willReadFrequently')) problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (r.url() !== `file://${file}`) problems.push(`request: ${r.url()}`);
  });
  await page.goto(`file://${file}`, { waitUntil: 'load' });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(undefined))));
  return { page, problems };
}

/**
 * uPlot draws on animation frames: waits until every chart's canvas has drawn or the test's own
 * time runs out, so that a loaded machine only makes this slower.
 */
async function drawn(page: Page): Promise<void> {
  await page
    .waitForFunction(
      (min) =>
        [...document.querySelectorAll('.plot canvas')].every((c) => {
          const d = (c as HTMLCanvasElement).getContext('2d')!.getImageData(0, 0, (c as HTMLCanvasElement).width, (c as HTMLCanvasElement).height).data;
          let n = 0;
          for (let i = 0; i < d.length && n <= min; i += 4) if (d[i + 3]! > 128 && Math.max(d[i]!, d[i + 1]!, d[i + 2]!) - Math.min(d[i]!, d[i + 1]!, d[i + 2]!) > 80) n++;
          return n > min;
        }),
      150,
      { timeout: 0 },
    )
    .catch(() => undefined);
}

/** Per chart: pixels of a saturated colour on its canvas. Axes, grid and text are grey or black; series are coloured. */
function seriesPixels(page: Page): Promise<number[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('.plot')].map((plot) => {
      const canvas = plot.querySelector('canvas');
      if (!canvas) return 0;
      const d = canvas.getContext('2d')!.getImageData(0, 0, canvas.width, canvas.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3]! > 128 && Math.max(d[i]!, d[i + 1]!, d[i + 2]!) - Math.min(d[i]!, d[i + 1]!, d[i + 2]!) > 80) n++;
      return n;
    }),
  );
}

describe('chainlake report', () => {
  it('is one self-contained file: no external script, style or link, and a CSP that lets nothing load', () => {
    const text = readFileSync(html, 'utf8');
    expect(text).not.toMatch(/<script[^>]+src=/i);
    expect(text).not.toMatch(/<link\b/i);
    expect(text).not.toMatch(/@import|url\(\s*['"]?https?:/i);
    expect(text).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'; [^"]*script-src 'sha256-[^']+' 'sha256-[^']+'"/);
    expect(text).toContain('/*! https://github.com/leeoniya/uPlot (v1.6.32) */');
    expect(statSync(html).size).toBeLessThan(2_000_000);
  });

  it.each([
    { locale: "the machine's default locale", context: () => machine },
    { locale: 'a locale Intl rejects (en-US@posix)', context: () => posix },
  ])('draws every chart with its series in headless Chromium under $locale, without errors or requests', async ({ context }) => {
    if (context() === posix) {
      // The context does make the page's language one that Intl refuses, as uPlot meets it.
      const blank = await posix.newPage();
      expect(await blank.evaluate(() => navigator.language)).toBe('en-US@posix');
      await expect(blank.evaluate(() => new Intl.NumberFormat(navigator.language).format(1))).rejects.toThrow(/RangeError/);
      await blank.close();
    }
    const { page, problems } = await open(html, context());
    const data = (await page.evaluate(() => JSON.parse(document.getElementById('report-data')!.textContent!))) as ReportData;
    const charts = data.sections.flatMap((s) => s.charts);
    const titles = charts.map((c) => c.title);
    expect(titles).toEqual(expect.arrayContaining(['txCount per day', 'txCount per week', 'average transactions per second', 'transfers per day', 'internal transactions per week, by type', 'rewards paid per month (AVAX)', 'AVAX delegated per validator, by status', 'rows and requests per run', 'seconds, retries and 429s per run']));
    expect(await page.locator('.plot').count()).toBe(charts.length);
    expect(await page.locator('.plot canvas').count()).toBe(charts.length);
    await drawn(page);
    const pixels = await seriesPixels(page);
    pixels.forEach((n, i) => expect(n, `chart "${titles[i]}" draws no series`).toBeGreaterThan(150));
    // Legends name the series: chains, tokens, statuses.
    const legend = (title: string) => page.locator('figure.chart').filter({ has: page.locator('figcaption', { hasText: new RegExp(`^${title}$`) }) }).locator('.u-legend').innerText();
    expect(await legend('txCount per day')).toMatch(/43114[\s\S]*total|total[\s\S]*43114/);
    expect(await legend('transfers per day')).toContain('WAVAX');
    expect(await legend('AVAX delegated per validator, by status')).toMatch(/active[\s\S]*completed|completed[\s\S]*active/);
    // The runs section lists both runs.
    expect(await page.locator('figure', { hasText: 'sql/runs_recent.sql: newest first.' }).locator('tbody tr').count()).toBe(2);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows the error of a chart that cannot be drawn in its card, and draws the others', async () => {
    const good = (title: string): ChartSpec => ({ title, caption: `${title} caption`, x: { time: [1761955200, 1762041600, 1762128000] }, series: [{ label: 'a', values: [1, 3, 2], style: 'line' }], yLabel: 'y' });
    const data: ReportData = {
      title: 'one bad chart',
      subtitle: 'the rest of the page stays',
      sections: [
        {
          title: 'charts',
          // Data no lake gives: it throws in the renderer (x) and inside uPlot's drawing (values).
          charts: [good('first'), { ...good('no x'), x: null as never }, good('middle'), { ...good('no values'), series: [{ label: 'a', values: null as never, style: 'bars' }] }, good('last')],
          tables: [{ title: 'a table', caption: 'after the charts', columns: ['n'], rows: [[7]] }],
        },
      ],
    };
    const file = join(dir, 'bad-chart.html');
    writeFileSync(file, reportHtml(data));
    const { page, problems } = await open(file, posix);
    const card = (title: string) => page.locator('figure.chart').filter({ has: page.locator('figcaption', { hasText: new RegExp(`^${title}$`) }) });
    expect(await page.locator('.chart-error').allInnerTexts()).toEqual([
      "This chart could not be drawn (TypeError: Cannot use 'in' operator to search for 'time' in null).",
      expect.stringMatching(/^This chart could not be drawn \(TypeError: Cannot read properties of null \(reading '.+'\)\)\.$/),
    ]);
    expect(await card('no x').locator('.chart-error').count()).toBe(1);
    expect(await card('no values').locator('.chart-error').count()).toBe(1);
    expect(await card('no values').locator('canvas').count()).toBe(0);
    expect(await page.locator('.plot canvas').count()).toBe(3);
    await drawn(page);
    expect((await seriesPixels(page)).map((n) => n > 150)).toEqual([true, false, true, false, true]);
    expect(await page.locator('.table-wrap td').innerText()).toBe('7');
    // Each error once on the console (with its stack, for whoever debugs it), none uncaught.
    expect(problems).toEqual([expect.stringMatching(/^console error: TypeError: Cannot use 'in' operator/), expect.stringMatching(/^console error: TypeError: Cannot read properties of null/)]);
    await page.close();
  });

  it('a full-page screenshot of the report (UPDATE_SCREENSHOT=1: docs/report.png)', async () => {
    const { page } = await open(html);
    await drawn(page);
    const shot = join(dir, 'report.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(50_000);
    if (process.env.UPDATE_SCREENSHOT) {
      mkdirSync('docs', { recursive: true });
      copyFileSync(shot, 'docs/report.png');
    }
    await page.close();
  });

  it('an empty lake gives a report that says what is missing', async () => {
    // A lake a run was killed in before its first report: a _runs folder without one.
    const empty = join(dir, 'empty-lake');
    mkdirSync(join(empty, '_runs'), { recursive: true });
    const file = join(dir, 'empty.html');
    expect(cli(['report', '--lake', empty, '--out', file]).code).toBe(0);
    const { page, problems } = await open(file);
    const text = await page.locator('main').innerText();
    expect(text).toContain('No rows in chain_metrics or avg_tps yet.');
    expect(text).toContain('No run reports (_runs/) in this lake yet.');
    expect(await page.locator('.plot').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('text from the lake stays text: a hostile token name runs nothing and loads nothing', async () => {
    const evil = `</script><script>window.pwned = 1</script><img src="x" onerror="window.pwned = 2">`;
    const data: ReportData = {
      title: evil,
      subtitle: evil,
      sections: [
        {
          title: evil,
          charts: [{ title: evil, caption: evil, x: { labels: [evil, 'b'] }, series: [{ label: evil, values: [1, 2], style: 'bars' }], yLabel: evil }],
          tables: [{ title: evil, caption: evil, columns: [evil], rows: [[evil]] }],
        },
      ],
    };
    const file = join(dir, 'evil.html');
    writeFileSync(file, reportHtml(data));
    const { page, problems } = await open(file);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    expect(await page.locator('.table-wrap td').first().textContent()).toBe(evil);
    expect(await page.locator('figcaption').first().textContent()).toBe(evil);
    expect(await page.locator('img').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('refuses to write into the lake or over a folder (exit 2)', () => {
    expect(cli(['report', '--lake', lake, '--out', join(lake, 'r.html')])).toMatchObject({ code: 2, stderr: expect.stringContaining('is inside the lake') });
    expect(cli(['report', '--lake', lake, '--out', dir])).toMatchObject({ code: 2, stderr: expect.stringContaining('is a folder') });
    expect(cli(['report', '--lake', join(dir, 'nope')])).toMatchObject({ code: 2, stderr: expect.stringContaining('no such folder') });
  });
});
