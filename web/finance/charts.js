// The summary chart of one currency: total amount (major units) per kind of transaction, one
// stacked bar segment per status. Chart.js comes from its UMD build (window.Chart), loaded by
// index.html before this module runs.

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

/**
 * Chart.js configuration for one currency's totals (`[{kind, status, count, amountDecimal}]`).
 * Amounts become numbers only here, for bar heights; every figure shown as text stays a decimal
 * string.
 */
export function currencyChartConfig(currency, totals) {
  const kinds = [...new Set(totals.map((t) => t.kind))].sort();
  const statuses = [...new Set(totals.map((t) => t.status))].sort();
  const datasets = statuses.map((status) => ({
    label: status,
    backgroundColor: STATUS_COLOURS[status] ?? '#64748b',
    data: kinds.map((kind) => {
      const row = totals.find((t) => t.kind === kind && t.status === status);
      return row ? Number(row.amountDecimal) : 0;
    }),
    counts: kinds.map((kind) => totals.find((t) => t.kind === kind && t.status === status)?.count ?? 0),
  }));
  return {
    type: 'bar',
    data: { labels: kinds.map((k) => k.replace(/_/g, ' ')), datasets },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      plugins: {
        title: { display: true, text: `${currency}: amount by kind and status` },
        legend: { position: 'bottom' },
        tooltip: {
          callbacks: {
            label: (item) =>
              `${item.dataset.label}: ${item.formattedValue} ${currency} (${item.dataset.counts[item.dataIndex]} transactions)`,
          },
        },
      },
      scales: {
        x: { stacked: true },
        y: { stacked: true, beginAtZero: true, title: { display: true, text: currency } },
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
