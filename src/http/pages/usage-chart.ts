import { html, type Raw } from './html.js';

/**
 * A bar chart of a month's requests by day, as inline SVG (no script): one bar a day of `month` (`YYYY-MM`, UTC), its
 * height the day's count against the busiest day, each with its date and count as a tooltip and in a `data-` attribute.
 */
export function usageChart(month: string, days: { day: string; used: number }[]): Raw {
  const [year, mon] = month.split('-').map(Number);
  const length = new Date(Date.UTC(year, mon, 0)).getUTCDate();
  const byDay = new Map(days.map((d) => [d.day, d.used]));
  const most = Math.max(1, ...days.map((d) => d.used));
  const [width, height, bar] = [length * 14 + 40, 140, 10];
  const bars = Array.from({ length }, (_, i) => {
    const day = `${month}-${String(i + 1).padStart(2, '0')}`;
    const used = byDay.get(day) ?? 0;
    const h = Math.round((used / most) * 100);
    return html`<rect x="${30 + i * 14}" y="${110 - h}" width="${bar}" height="${h}" fill="#335" data-day="${day}" data-used="${used}"><title>${day}: ${used} requests</title></rect>`;
  });
  return html`<svg role="img" aria-label="Requests a day in ${month}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
<line x1="28" y1="110" x2="${width - 8}" y2="110" stroke="#999"/><text x="0" y="14">${most}</text><text x="0" y="110">0</text>
${bars}<text x="30" y="128">1</text><text x="${30 + (length - 1) * 14}" y="128">${length}</text></svg>`;
}
