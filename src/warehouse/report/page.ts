// The report page's script. `renderReport` runs in the browser: report.ts inlines its source
// (Function.prototype.toString) next to the bundled uPlot, so it must stay self-contained: no
// imports at runtime, only its arguments and the DOM. Text from the lake (token names, node ids)
// goes into the page through textContent only, never as HTML, as anyone can name a token.
import type uPlotClass from 'uplot';

export interface ChartSeries {
  label: string;
  values: Array<number | null>;
  /** Bars (stacked with the chart's other bar series when `stacked`) or a line. */
  style: 'line' | 'bars';
  /** 'y2' draws on a second scale with its axis on the right. */
  scale?: 'y' | 'y2';
}

export interface ChartSpec {
  title: string;
  caption: string;
  /** Unix seconds (time axis) or category labels. */
  x: { time: number[] } | { labels: string[] };
  series: ChartSeries[];
  yLabel: string;
  y2Label?: string;
  stacked?: boolean;
}

export interface TableSpec {
  title: string;
  caption: string;
  columns: string[];
  rows: Array<Array<string | number | null>>;
}

export interface Section {
  title: string;
  /** Why a section has nothing to show (no rows in its tables yet). */
  empty?: string;
  charts: ChartSpec[];
  tables: TableSpec[];
}

export interface ReportData {
  title: string;
  subtitle: string;
  sections: Section[];
}

/**
 * Runs before uPlot, which builds `new Intl.NumberFormat(navigator.language)` as it loads: a
 * language tag that Intl rejects (headless Chromium under LANG=C.UTF-8 says "en-US@posix") would
 * stop uPlot loading, and with it every chart. Such a browser gets Intl's own default locale.
 */
export function intlSafeLanguage(): void {
  try {
    new Intl.NumberFormat(navigator.language);
  } catch {
    Object.defineProperty(navigator, 'language', { value: new Intl.NumberFormat().resolvedOptions().locale, configurable: true });
  }
}

export function renderReport(data: ReportData, uPlot: typeof uPlotClass): void {
  const COLORS = ['#2563eb', '#ea580c', '#16a34a', '#9333ea', '#dc2626', '#0891b2', '#ca8a04', '#db2777', '#64748b'];
  const el = <K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const fmt = (v: number | null | undefined): string => {
    if (v === null || v === undefined || !Number.isFinite(v)) return '-';
    const a = Math.abs(v);
    if (a >= 1e15) return v.toExponential(3);
    if (a >= 1000 || Number.isInteger(v)) return Math.round(v).toLocaleString('en-US');
    return v.toLocaleString('en-US', { maximumSignificantDigits: 4 });
  };
  // Axis ticks: short (12.5k, 3.2M, 4.1e+21) so that they leave room for the axis label.
  const short = (v: number): string => {
    const a = Math.abs(v);
    if (a >= 1e15) return v.toExponential(1);
    for (const [d, u] of [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'k']] as Array<[number, string]>) if (a >= d) return `${+(v / d).toFixed(1)}${u}`;
    return String(+v.toFixed(2));
  };
  const utc = (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');

  function chart(spec: ChartSpec, host: HTMLElement): void {
    const isTime = 'time' in spec.x;
    const labels = 'labels' in spec.x ? spec.x.labels : [];
    const xs = 'time' in spec.x ? spec.x.time : labels.map((_, i) => i);
    // Stacked bars: each bar series is drawn as the running total up to it, tallest first, so the
    // smaller totals in front leave each series its own band. Legends show the series' own values.
    const order = spec.series.map((_, i) => i);
    const shown: Array<Array<number | null>> = spec.series.map((s) => s.values);
    if (spec.stacked) {
      const running = xs.map(() => 0);
      spec.series.forEach((s, i) => {
        if (s.style !== 'bars') return;
        shown[i] = s.values.map((v, j) => (running[j]! += v ?? 0));
      });
      order.reverse();
    }
    const bars = uPlot.paths.bars!({ size: [0.7, 48, 1], align: 0 });
    const series: uPlotClass.Series[] = [
      { label: isTime ? 'time (UTC)' : '', value: (_u, v) => (v === null ? '-' : isTime ? new Date(v * 1000).toISOString().slice(0, 16).replace('T', ' ') : (labels[v] ?? '')) },
    ];
    for (const i of order) {
      const s = spec.series[i]!;
      const color = COLORS[i % COLORS.length]!;
      const own = s.values;
      series.push({
        label: s.label,
        scale: s.scale ?? 'y',
        stroke: color,
        width: s.style === 'bars' ? 0 : 1.5,
        fill: s.style === 'bars' ? color + 'cc' : undefined,
        paths: s.style === 'bars' ? bars : undefined,
        points: { show: s.style === 'line' && xs.length <= 40 },
        value: (_u, _v, _si, idx) => (idx === null ? '-' : fmt(own[idx])),
      });
    }
    const axes: uPlotClass.Axis[] = [
      isTime
        ? {}
        : {
            values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? (labels[v] ?? '') : '')),
            splits: () => xs,
            rotate: 0,
          } as uPlotClass.Axis,
      { label: spec.yLabel, values: (_u, splits) => splits.map(short), size: 56 },
    ];
    if (spec.series.some((s) => s.scale === 'y2')) axes.push({ scale: 'y2', side: 1, label: spec.y2Label, values: (_u, splits) => splits.map(short), grid: { show: false }, size: 56 });
    const hasBars = spec.series.some((s) => s.style === 'bars');
    const width = Math.max(320, host.clientWidth);
    // uPlot draws on a microtask after its constructor returns; drawing in `batch` instead keeps
    // a chart's error inside the constructor, where its card catches it.
    new uPlot(
      {
        width,
        height: 260,
        tzDate: utc,
        series,
        axes,
        scales: {
          x: isTime ? { time: true } : { time: false, range: () => [-0.5, xs.length - 0.5] },
          y: hasBars ? { range: (_u, _min, max) => [0, max > 0 ? max * 1.05 : 1] } : {},
          y2: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] },
        },
        legend: { live: true },
        cursor: { drag: { x: isTime, y: false } },
      },
      [xs, ...order.map((i) => shown[i]!)] as uPlotClass.AlignedData,
      (u, init) => {
        host.append(u.root);
        u.batch(init);
      },
    );
  }

  function table(spec: TableSpec): HTMLElement {
    const wrap = el('div', 'table-wrap');
    const t = el('table');
    const head = el('tr');
    for (const c of spec.columns) head.append(el('th', undefined, c));
    t.append(el('thead'), el('tbody'));
    t.tHead!.append(head);
    for (const r of spec.rows) {
      const tr = el('tr');
      r.forEach((v) => tr.append(el('td', typeof v === 'number' ? 'num' : undefined, v === null ? '' : typeof v === 'number' ? fmt(v) : v)));
      t.tBodies[0]!.append(tr);
    }
    wrap.append(t);
    return wrap;
  }

  const root = document.getElementById('report')!;
  root.append(el('h1', undefined, data.title), el('p', 'subtitle', data.subtitle));
  const nav = el('nav');
  root.append(nav);
  data.sections.forEach((section, n) => {
    const sec = el('section');
    sec.id = `s${n}`;
    const link = el('a', undefined, section.title);
    link.href = `#s${n}`;
    nav.append(link);
    sec.append(el('h2', undefined, section.title));
    if (section.empty) sec.append(el('p', 'empty', section.empty));
    const grid = el('div', 'grid');
    sec.append(grid);
    root.append(sec);
    for (const spec of section.charts) {
      const card = el('figure', 'card chart');
      card.append(el('figcaption', 'title', spec.title), el('p', 'caption', spec.caption));
      const host = el('div', 'plot');
      card.append(host);
      grid.append(card);
      // One chart's error is shown in its card and leaves the others to draw.
      try {
        chart(spec, host);
      } catch (err) {
        const why = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
        host.replaceChildren(el('p', 'chart-error', `This chart could not be drawn (${why.slice(0, 300)}).`));
        console.error(err);
      }
    }
    for (const spec of section.tables) {
      const card = el('figure', 'card wide');
      card.append(el('figcaption', 'title', spec.title), el('p', 'caption', spec.caption), table(spec));
      grid.append(card);
    }
  });
}
