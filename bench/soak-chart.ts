import { escapeHtml } from '../src/lib/escape-html.js';

/** The soak's chart (bench/soak.ts): one panel a measure, minute by minute, as a standalone SVG file. */

/** What the soak records each minute (bench/soak.ts); the chart draws the measures, the JSON keeps all. */
export interface SoakSample {
  minute: number;
  /** The service's RSS at the minute's end. */
  rssMiB: number;
  /** The highest RSS of the minute (the kernel's high-water mark, reset each minute), null where it cannot be reset. */
  rssPeakMiB: number | null;
  /** The API thread's V8 heap used (prom-client's `nodejs_heap_size_used_bytes`). */
  heapUsedMiB: number;
  /** The API thread's V8 heap reserved (`nyc_listings_thread_heap_bytes`); null before it was recorded. */
  heapTotalMiB: number | null;
  /** The background thread's V8 heap, used and reserved (`nyc_listings_thread_heap_bytes`); null before it was recorded. */
  backgroundHeapUsedMiB: number | null;
  backgroundHeapTotalMiB: number | null;
  eventLoopLagP99Ms: number;
  /** The API thread's longest event-loop wait in the minute (ms); absent in runs before it was recorded. */
  eventLoopLagMaxMs?: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers of the minute, and answers by class (`2xx`, ..., `failed`). */
  requests: number;
  statuses: Record<string, number>;
  webhookLagP99Seconds: number;
  webhooksPending: number;
  /** The minute's answers slower than a second: how many, and the span (UTC) from the first one's ask to the last one's answer. */
  slow: { count: number; from: string; to: string } | null;
}

const PANELS: { title: string; unit: string; values: (s: SoakSample) => number }[] = [
  { title: 'Service RSS', unit: 'MiB', values: (s) => s.rssMiB },
  { title: "Service RSS, the minute's peak", unit: 'MiB', values: (s) => s.rssPeakMiB ?? 0 },
  { title: 'V8 heap used, API thread', unit: 'MiB', values: (s) => s.heapUsedMiB },
  { title: 'V8 heap reserved, API thread', unit: 'MiB', values: (s) => s.heapTotalMiB ?? 0 },
  { title: 'V8 heap reserved, background thread', unit: 'MiB', values: (s) => s.backgroundHeapTotalMiB ?? 0 },
  { title: 'Latency p99', unit: 'ms', values: (s) => s.p99Ms },
  { title: 'Latency p50', unit: 'ms', values: (s) => s.p50Ms },
  { title: 'Event-loop lag p99', unit: 'ms', values: (s) => s.eventLoopLagP99Ms },
  { title: 'Webhook lag p99', unit: 's', values: (s) => s.webhookLagP99Seconds },
];

/** The chart of `samples` under `title`: a panel a measure, its line, its range and the 5-minute mark. */
export function soakChart(samples: SoakSample[], title: string): string {
  const [width, height, pad] = [420, 150, 36];
  const panels = PANELS.map((panel, i) => {
    const values = samples.map(panel.values);
    const most = Math.max(1e-9, ...values);
    const x = (minute: number) => pad + ((minute - 1) / Math.max(1, samples.length - 1)) * (width - pad - 10);
    const y = (v: number) => height - 24 - (v / most) * (height - 48);
    const points = samples.map((s, j) => `${x(s.minute).toFixed(1)},${y(values[j]).toFixed(1)}`).join(' ');
    const [left, top] = [(i % 2) * width, 30 + Math.floor(i / 2) * height];
    return `<g transform="translate(${left},${top})">
<text x="${pad}" y="14" font-weight="bold">${escapeHtml(panel.title)} (${panel.unit})</text>
<text x="2" y="${y(most) + 4}">${Math.round(most * 10) / 10}</text><text x="2" y="${height - 20}">0</text>
<line x1="${pad}" y1="${height - 24}" x2="${width - 10}" y2="${height - 24}" stroke="#999"/>
${samples.length > 5 ? `<line x1="${x(5)}" y1="20" x2="${x(5)}" y2="${height - 24}" stroke="#c33" stroke-dasharray="3,3"/>` : ''}
<polyline fill="none" stroke="#335" stroke-width="1.5" points="${points}"/>
<text x="${pad}" y="${height - 6}">minute 1</text><text x="${width - 70}" y="${height - 6}">minute ${samples.length}</text></g>`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * width}" height="${30 + Math.ceil(PANELS.length / 2) * height}" font-family="sans-serif" font-size="11">
<text x="10" y="18" font-size="13">${escapeHtml(title)} (the dashed line: the first 5 minutes, left out of the targets)</text>
${panels.join('\n')}
</svg>
`;
}
