// The summary chart of one currency: for each kind of transaction, the money that succeeded, the
// money that failed (failed, expired, reversed) and the money still in flight (every other status),
// as three bars side by side, never stacked: a bar's height is what it says (1,500 USD succeeded is
// a 1,500 bar, whatever failed beside it). Chart.js comes from its UMD build (window.Chart), loaded
// by index.html before this module runs.
import { exponentOf, minorToDecimal } from './format.js';

/** Colours per status, shared by the chart and the status badges (style.css). */
export const STATUS_COLOURS = {
  created: '#94a3b8',
  unknown: '#a855f7',
  needs_review: '#e11d48',
  initiated: '#38bdf8',
  pending: '#f59e0b',
  processing: '#0ea5e9',
  success: '#16a34a',
  failed: '#dc2626',
  expired: '#6b7280',
  reversed: '#be185d',
};

/** The chart's series: which statuses each one adds up, in the order they are drawn. */
export const OUTCOMES = [
  { key: 'succeeded', label: 'Succeeded', colour: STATUS_COLOURS.success, statuses: ['success'] },
  { key: 'failed', label: 'Failed', colour: STATUS_COLOURS.failed, statuses: ['failed', 'expired', 'reversed'] },
  { key: 'inFlight', label: 'Pending / in flight', colour: STATUS_COLOURS.pending, statuses: null },
];

/** The series a status belongs to. */
export function outcomeOf(status) {
  return OUTCOMES.find((o) => o.statuses?.includes(status)) ?? OUTCOMES[OUTCOMES.length - 1];
}

/**
 * Sums of one currency's totals (`[{kind, status, count, amount, amountDecimal}]`) per series and
 * kind, in exact minor units (BigInt): `{kinds, exponent, series: [{key, label, colour, minor: [..],
 * counts: [..]}]}`.
 */
export function outcomeTotals(totals) {
  const kinds = [...new Set(totals.map((t) => t.kind))].sort();
  const exponent = totals.map((t) => exponentOf(t.amountDecimal)).find((e) => e !== null) ?? 0;
  const series = OUTCOMES.map((o) => ({
    key: o.key,
    label: o.label,
    colour: o.colour,
    minor: kinds.map(() => 0n),
    counts: kinds.map(() => 0),
  }));
  for (const t of totals) {
    const s = series[OUTCOMES.indexOf(outcomeOf(t.status))];
    const i = kinds.indexOf(t.kind);
    s.minor[i] += BigInt(t.amount);
    s.counts[i] += t.count;
  }
  return { kinds, exponent, series };
}

/**
 * Chart.js configuration for one currency's totals. Amounts become numbers only here, for bar
 * heights; every figure shown as text stays a decimal string (`decimals` of each dataset).
 */
export function currencyChartConfig(currency, totals) {
  const { kinds, exponent, series } = outcomeTotals(totals);
  const datasets = series
    .filter((s) => s.counts.some((n) => n > 0))
    .map((s) => {
      const decimals = s.minor.map((m) => minorToDecimal(m, exponent));
      return {
        label: s.label,
        outcome: s.key,
        backgroundColor: s.colour,
        data: decimals.map(Number),
        decimals,
        counts: s.counts,
      };
    });
  return {
    type: 'bar',
    data: { labels: kinds.map((k) => k.replace(/_/g, ' ')), datasets },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      plugins: {
        title: { display: true, text: `${currency}: succeeded, failed and in flight by kind` },
        legend: { position: 'bottom' },
        tooltip: {
          callbacks: {
            label: (item) =>
              `${item.dataset.label}: ${item.dataset.decimals[item.dataIndex]} ${currency} ` +
              `(${item.dataset.counts[item.dataIndex]} transactions)`,
          },
        },
      },
      scales: {
        x: { stacked: false },
        y: { stacked: false, beginAtZero: true, title: { display: true, text: currency } },
      },
    },
  };
}

/** Draws the chart on `canvas`; returns a function that removes it. */
export function drawCurrencyChart(canvas, currency, totals) {
  const Chart = globalThis.Chart;
  if (!Chart) throw new Error('Chart.js did not load (/finance/vendor/chart.umd.min.js).');
  const chart = new Chart(canvas, currencyChartConfig(currency, totals));
  return () => chart.destroy();
}
