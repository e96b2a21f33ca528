// The finance page: sign in with a finance API key (scope transactions:read), filter and page the
// ledger, open a transaction's status history, see the summary per currency (a chart of succeeded,
// failed and in-flight money side by side, and the net per currency), and download the CSV. Preact +
// htm, no build step; data from /v1/transactions*, and /v1/api-keys/me for the key's scopes.
//
// Views: the signed-in page is a list of views (VIEWS below), one tab each, shown only when the key's
// scopes allow them. To add one, write a component taking `{ api, apiKey, scopes, onAuthError }`, add
// `{ id, label, component, allowed }` to VIEWS, and its calls to api.js; the tab bar appears with the
// second view the key may use.
import { h, render } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { ApiError, financeApi, keyProblemMessage } from './api.js';
import { AuditTrail } from './audit.js';
import { drawCurrencyChart, outcomeOf } from './charts.js';
import {
  exponentOf,
  formatMoney,
  formatTime,
  groupDigits,
  humanise,
  majorToMinor,
  shortId,
  utcInputToIso,
} from './format.js';
import { ApprovalQueue, ReconciliationRuns } from './operations.js';

const html = htm.bind(h);

const KEY_STORAGE = 'wallet-gateway.finance.key';
const KINDS = ['collection', 'payout', 'swap', 'card_topup', 'card_withdrawal', 'card_spend'];
const STATUSES = [
  'created',
  'unknown',
  'needs_review',
  'initiated',
  'pending',
  'processing',
  'success',
  'failed',
  'expired',
  'reversed',
];
const PAGE_SIZES = [10, 25, 50, 100, 200];

const EMPTY_FILTERS = {
  kind: '',
  status: '',
  direction: '',
  currency: '',
  customerId: '',
  cardId: '',
  beneficiaryId: '',
  reference: '',
  from: '',
  to: '',
  amountMin: '',
  amountMax: '',
  order: 'desc',
  limit: '25',
};

/**
 * The currencies present in the ledger and their minor-unit digits, from an unfiltered summary
 * (whose decimals the gateway writes with each currency's exponent, src/common/money.ts):
 * `[{code, exponent}]`, sorted. A currency the gateway has no exponent for is left out.
 */
function currenciesOf(summary) {
  const found = new Map();
  for (const row of summary?.totals ?? []) {
    const exponent = exponentOf(row.amountDecimal);
    if (exponent !== null && !found.has(row.currency)) found.set(row.currency, exponent);
  }
  return [...found].map(([code, exponent]) => ({ code, exponent })).sort((a, b) => a.code.localeCompare(b.code));
}

/**
 * The amount bounds of the form (major units of its currency) → minor units, or a RangeError
 * naming the field. Amounts need a currency: digits mean nothing without its exponent.
 */
function amountBounds(form, currencies) {
  const bounds = {};
  for (const [name, label] of [
    ['amountMin', 'Min amount'],
    ['amountMax', 'Max amount'],
  ]) {
    if (!String(form[name] ?? '').trim()) continue;
    const currency = currencies.find((c) => c.code === form.currency);
    if (!currency) throw new RangeError(`${label}: choose a currency first`);
    try {
      bounds[name] = majorToMinor(form[name], currency.exponent);
    } catch (error) {
      throw new RangeError(`${label}: ${error.message} in ${currency.code}`);
    }
  }
  return bounds;
}

/** The applied form → query parameters of the finance API (dates read as UTC, amounts in minor units). */
function queryFilters(form) {
  return {
    kind: form.kind,
    status: form.status,
    direction: form.direction,
    currency: form.currency,
    customerId: form.customerId.trim(),
    cardId: form.cardId.trim(),
    beneficiaryId: form.beneficiaryId.trim(),
    reference: form.reference.trim(),
    from: utcInputToIso(form.from),
    to: utcInputToIso(form.to),
    amountMin: form.amountMinMinor ?? '',
    amountMax: form.amountMaxMinor ?? '',
  };
}

function readStoredKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

function ErrorBox({ error, testId = 'error' }) {
  if (!error) return null;
  const fields = error instanceof ApiError ? error.errors : [];
  return html`<div class="error" role="alert" data-testid=${testId}>
    <strong>${error instanceof ApiError && error.status ? `Error ${error.status}` : 'Error'}:</strong> ${error.message}
    ${
      fields.length > 0 &&
      html`<ul>
        ${fields.map((f) => html`<li key=${f.field + f.message}><code>${f.field}</code>: ${f.message}</li>`)}
      </ul>`
    }
  </div>`;
}

function SignIn({ onSignedIn, notice }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState(notice);

  async function submit(event) {
    event.preventDefault();
    const typed = key.trim();
    if (!typed) return setMessage('Type a finance API key.');
    setBusy(true);
    setMessage(null);
    try {
      await financeApi(typed).list({}, undefined, 1);
      onSignedIn(typed);
    } catch (error) {
      setMessage(keyProblemMessage(error));
    } finally {
      setBusy(false);
    }
  }

  return html`<main class="sign-in">
    <h1>Finance</h1>
    <p>Sign in with a finance API key (scope <code>transactions:read</code>). The key stays in this tab only.</p>
    <form onSubmit=${submit} data-testid="sign-in-form">
      <label for="api-key">API key</label>
      <input
        id="api-key"
        name="api-key"
        type="password"
        autocomplete="off"
        spellcheck="false"
        placeholder="wgk_…"
        value=${key}
        onInput=${(e) => setKey(e.currentTarget.value)}
      />
      <button type="submit" disabled=${busy}>${busy ? 'Checking…' : 'Sign in'}</button>
    </form>
    ${message && html`<div class="error" role="alert" data-testid="sign-in-error">${message}</div>`}
  </main>`;
}

function Select({ label, name, value, options, onChange, allLabel = 'Any' }) {
  return html`<label>
    ${label}
    <select name=${name} value=${value} onChange=${(e) => onChange(name, e.currentTarget.value)}>
      ${allLabel !== null && html`<option value="">${allLabel}</option>`}
      ${options.map((o) => html`<option key=${o} value=${o}>${humanise(o)}</option>`)}
    </select>
  </label>`;
}

function Field({ label, name, value, onChange, type = 'text', placeholder = '', hint, inputMode, disabled }) {
  return html`<label>
    ${label}
    <input
      name=${name}
      type=${type}
      inputmode=${inputMode}
      disabled=${disabled}
      value=${value}
      placeholder=${placeholder}
      title=${hint}
      step=${type === 'datetime-local' ? 1 : undefined}
      onInput=${(e) => onChange(name, e.currentTarget.value)}
    />
  </label>`;
}

function Filters({ applied, currencies, onApply, onDownload, downloading }) {
  const [form, setForm] = useState(applied);
  const [formError, setFormError] = useState(null);
  const set = (name, value) => setForm((f) => ({ ...f, [name]: value }));
  /** The form with its amounts in minor units, or null (and the reason shown) when one is not an amount. */
  const checked = () => {
    try {
      const bounds = amountBounds(form, currencies);
      setFormError(null);
      return { ...form, amountMinMinor: bounds.amountMin, amountMaxMinor: bounds.amountMax };
    } catch (error) {
      setFormError(error);
      return null;
    }
  };
  const submit = (event) => {
    event.preventDefault();
    const filters = checked();
    if (filters) onApply(filters);
  };
  const reset = () => {
    setForm(EMPTY_FILTERS);
    setFormError(null);
    onApply(EMPTY_FILTERS);
  };
  const currency = currencies.find((c) => c.code === form.currency);
  const unit = currency ? `${currency.code}, ${currency.exponent} decimals` : 'choose a currency';
  return html`<form class="filters" onSubmit=${submit} data-testid="filters">
    <div class="filter-grid">
      <${Select} label="Kind" name="kind" value=${form.kind} options=${KINDS} onChange=${set} />
      <${Select} label="Status" name="status" value=${form.status} options=${STATUSES} onChange=${set} />
      <${Select}
        label="Direction"
        name="direction"
        value=${form.direction}
        options=${['credit', 'debit']}
        onChange=${set}
      />
      <${Select}
        label="Currency"
        name="currency"
        value=${form.currency}
        options=${currencies.map((c) => c.code)}
        onChange=${set}
      />
      <${Field} label="From (UTC)" name="from" type="datetime-local" value=${form.from} onChange=${set} />
      <${Field} label="To (UTC, exclusive)" name="to" type="datetime-local" value=${form.to} onChange=${set} />
      <${Field}
        label=${`Min amount (${unit})`}
        name="amountMin"
        inputMode="decimal"
        value=${form.amountMin}
        placeholder=${currency ? '1500.00' : ''}
        hint="In major units of the currency: 1500.50 USD, 1500 JPY"
        disabled=${!currency && !form.amountMin}
        onChange=${set}
      />
      <${Field}
        label=${`Max amount (${unit})`}
        name="amountMax"
        inputMode="decimal"
        value=${form.amountMax}
        hint="In major units of the currency, inclusive"
        disabled=${!currency && !form.amountMax}
        onChange=${set}
      />
      <${Field} label="Customer id" name="customerId" value=${form.customerId} onChange=${set} />
      <${Field} label="Beneficiary id" name="beneficiaryId" value=${form.beneficiaryId} onChange=${set} />
      <${Field} label="Card id" name="cardId" value=${form.cardId} onChange=${set} />
      <${Field} label="Reference" name="reference" value=${form.reference} onChange=${set} />
      <${Select}
        label="Order"
        name="order"
        value=${form.order}
        options=${['desc', 'asc']}
        allLabel=${null}
        onChange=${set}
      />
      <${Select}
        label="Page size"
        name="limit"
        value=${form.limit}
        options=${PAGE_SIZES.map(String)}
        allLabel=${null}
        onChange=${set}
      />
    </div>
    <div class="actions">
      <button type="submit" data-testid="apply-filters">Apply filters</button>
      <button type="button" class="secondary" onClick=${reset}>Reset</button>
      <button
        type="button"
        class="secondary"
        data-testid="download-csv"
        disabled=${downloading}
        onClick=${() => {
          const filters = checked();
          if (filters) onDownload(filters);
        }}
      >
        ${downloading ? 'Preparing CSV…' : 'Download CSV'}
      </button>
    </div>
    <${ErrorBox} error=${formError} testId="filter-error" />
  </form>`;
}

function StatusBadge({ status }) {
  return html`<span class=${`badge status-${status}`}>${humanise(status)}</span>`;
}

function TransactionsTable({ rows, selectedId, onOpen }) {
  if (rows.length === 0)
    return html`<p class="empty" data-testid="no-transactions">No transactions match these filters.</p>`;
  // The columns that matter first: when, how much (amount and fee), how it ended, what, and the way
  // into its history. A wide box shows a table (the first column stays in view while the rest
  // scroll sideways inside .table-scroll); a narrow one shows each row as a card (style.css), so the
  // amounts and the History button are always in view.
  return html`<div class="table-scroll rows" data-testid="transactions-scroll"><table class="transactions cards" data-testid="transactions">
    <thead>
      <tr>
        <th class="pin">Created</th>
        <th class="num">Amount</th>
        <th class="num">Fee</th>
        <th>Status</th>
        <th>Kind</th>
        <th></th>
        <th>Direction</th>
        <th>Reference</th>
        <th>Customer</th>
        <th>Description</th>
      </tr>
    </thead>
    <tbody>
      ${rows.map(
        (t) =>
          html`<tr
            key=${t.id}
            data-testid="transaction-row"
            data-id=${t.id}
            class=${t.id === selectedId ? 'selected' : ''}
          >
            <td class="pin" data-label="Created">${formatTime(t.createdAt)}</td>
            <td class="num" data-label="Amount" data-testid="amount">
              ${formatMoney(t.amount, t.currency, t.amountDecimal)}
            </td>
            <td class="num" data-label="Fee" data-testid="amount">
              ${formatMoney(t.fee, t.currency, t.feeDecimal, t.amountDecimal)}
            </td>
            <td data-label="Status"><${StatusBadge} status=${t.status} /></td>
            <td data-label="Kind">${humanise(t.kind)}</td>
            <td class="action">
              <button type="button" class="link" data-testid="open-history" onClick=${() => onOpen(t.id)}>
                History
              </button>
            </td>
            <td data-label="Direction">${t.direction}</td>
            <td class="reference" data-label="Reference" title=${t.reference}><code>${t.reference}</code></td>
            <td data-label="Customer" title=${t.customerId ?? ''}><code>${shortId(t.customerId)}</code></td>
            <td class="description" data-label="Description" title=${t.description ?? ''}>${t.description ?? ''}</td>
          </tr>`,
      )}
    </tbody>
  </table></div>`;
}

function DetailRow({ label, children }) {
  return html`<div class="detail-row">
    <dt>${label}</dt>
    <dd>${children}</dd>
  </div>`;
}

/** A status move's decision and reason for people: "approved: invoice checked", "rejected", a reason alone, or "". */
function noteOf(change) {
  const parts = [change.decision, change.reason].filter((part) => typeof part === 'string' && part !== '');
  return parts.join(': ');
}

function TransactionDetail({ api, id, onClose, onAuthError }) {
  const [state, setState] = useState({ loading: true, transaction: null, error: null });

  const load = useCallback(
    async (refresh) => {
      setState((s) => ({ ...s, loading: true, error: null }));
      try {
        setState({ loading: false, transaction: await api.get(id, refresh), error: null });
      } catch (error) {
        if (onAuthError(error)) return;
        setState((s) => ({ ...s, loading: false, error }));
      }
    },
    [api, id],
  );
  useEffect(() => void load(false), [load]);

  const t = state.transaction;
  return html`<section class="detail" data-testid="transaction-detail" aria-label="Transaction detail">
    <header>
      <h2>Transaction <code>${shortId(id)}</code></h2>
      <div>
        <button
          type="button"
          class="secondary"
          disabled=${state.loading}
          onClick=${() => load(true)}
          data-testid="refresh-transaction"
        >
          Check at provider
        </button>
        <button type="button" class="secondary" onClick=${onClose} data-testid="close-detail">Close</button>
      </div>
    </header>
    <${ErrorBox} error=${state.error} testId="detail-error" />
    ${state.loading && !t && html`<p>Loading…</p>`}
    ${
      t &&
      html`<dl class="details">
          <${DetailRow} label="Id"><code>${t.id}</code><//>
          <${DetailRow} label="Kind">${humanise(t.kind)} (${t.direction})<//>
          <${DetailRow} label="Status"><${StatusBadge} status=${t.status} /><//>
          <${DetailRow} label="Amount">${formatMoney(t.amount, t.currency, t.amountDecimal)}<//>
          <${DetailRow} label="Fee">${formatMoney(t.fee, t.currency, t.feeDecimal, t.amountDecimal)}<//>
          ${
            t.counterCurrency &&
            html`<${DetailRow} label="Counter amount">
              ${formatMoney(t.counterAmount, t.counterCurrency, t.counterAmountDecimal)}
              ${t.exchangeRate ? ` at rate ${t.exchangeRate}` : ''}
            <//>`
          }
          <${DetailRow} label="Reference"><code>${t.reference}</code><//>
          <${DetailRow} label="Provider id"><code>${t.providerId ?? '—'}</code><//>
          <${DetailRow} label="Customer"><code>${t.customerId ?? '—'}</code><//>
          ${t.beneficiaryId && html`<${DetailRow} label="Beneficiary"><code>${t.beneficiaryId}</code><//>`}
          ${t.cardId && html`<${DetailRow} label="Card"><code>${t.cardId}</code><//>`}
          <${DetailRow} label="Description">${t.description ?? '—'}<//>
          ${t.failureReason && html`<${DetailRow} label="Failure reason">${t.failureReason}<//>`}
          <${DetailRow} label="Created">${formatTime(t.createdAt)}<//>
          <${DetailRow} label="Completed">${formatTime(t.completedAt)}<//>
        </dl>
        <h3>Status history</h3>
        <div class="table-scroll rows"><table class="history cards" data-testid="status-history">
          <thead>
            <tr>
              <th>At</th>
              <th>From</th>
              <th>To</th>
              <th>Source</th>
              <th>Decision / reason</th>
            </tr>
          </thead>
          <tbody>
            ${(t.statusHistory ?? []).map(
              (c, i) =>
                html`<tr key=${i} data-testid="status-change">
                  <td data-label="At">${formatTime(c.at)}</td>
                  <td data-label="From">${c.from ? html`<${StatusBadge} status=${c.from} />` : '—'}</td>
                  <td data-label="To"><${StatusBadge} status=${c.to} /></td>
                  <td data-label="Source">${c.source}</td>
                  <td class="note" data-label="Decision / reason" data-testid="status-note">${noteOf(c) || null}</td>
                </tr>`,
            )}
          </tbody>
        </table></div>`
    }
  </section>`;
}

function CurrencyChart({ currency, totals }) {
  const canvas = useRef(null);
  useEffect(() => drawCurrencyChart(canvas.current, currency, totals), [currency, totals]);
  return html`<div class="chart-box">
    <canvas
      ref=${canvas}
      data-testid=${`chart-${currency}`}
      role="img"
      aria-label=${`${currency} totals chart`}
    ></canvas>
  </div>`;
}

/** What "Net" means on this page (and in GET /v1/transactions/summary's `net`, docs/finance.md). */
const NET_MEANING =
  'Net = money in − money out − fees, over the transactions that succeeded (with these filters). ' +
  "Money in: collections and other credits, and what a swap brought into the currency (its target amount). " +
  "Money out: payouts and other debits, and a swap's source amount. Fees: every succeeded transaction's fee.";

/** The summary's net of one currency (`{moneyInDecimal, moneyOutDecimal, feesDecimal, netDecimal}`), or null: nothing succeeded. */
function NetFlow({ currency, flow }) {
  const money = (decimal) => (flow ? `${groupDigits(decimal)} ${currency}` : '—');
  return html`<dl class="net" data-testid="net-flow" data-currency=${currency}>
    <div><dt>In (succeeded)</dt><dd data-testid="net-in">${money(flow?.moneyInDecimal)}</dd></div>
    <div><dt>Out (succeeded)</dt><dd data-testid="net-out">${money(flow?.moneyOutDecimal)}</dd></div>
    <div><dt>Fees</dt><dd data-testid="net-fees">${money(flow?.feesDecimal)}</dd></div>
    <div><dt>Net</dt><dd data-testid="net-net">${money(flow?.netDecimal)}</dd></div>
  </dl>`;
}

function Summary({ summary, error, loading }) {
  const net = Object.fromEntries((summary?.net ?? []).map((flow) => [flow.currency, flow]));
  const byCurrency = new Map();
  for (const row of summary?.totals ?? []) {
    if (!byCurrency.has(row.currency)) byCurrency.set(row.currency, []);
    byCurrency.get(row.currency).push(row);
  }
  const currencies = [...byCurrency.keys()].sort();
  return html`<section
    class="summary"
    data-testid="summary"
    aria-label="Summary"
    aria-busy=${loading ? 'true' : 'false'}
  >
    <h2>
      Summary
      ${
        summary &&
        html`<small
          >${summary.from || summary.to ? `${formatTime(summary.from)} → ${formatTime(summary.to)}` : 'all time'}</small
        >`
      }
    </h2>
    <${ErrorBox} error=${error} testId="summary-error" />
    <p class="net-meaning" data-testid="net-meaning">${NET_MEANING}</p>
    ${loading && html`<p class="loading">Loading…</p>`}
    ${summary && currencies.length === 0 && html`<p class="empty">No transactions in this period.</p>`}
    <div class="currencies">
      ${currencies.map((currency) => {
        const rows = byCurrency.get(currency);
        return html`<article key=${currency} class="currency" data-testid="summary-currency" data-currency=${currency}>
          <h3>${currency}</h3>
          <${NetFlow} currency=${currency} flow=${net[currency]} />
          <${CurrencyChart} currency=${currency} totals=${rows} />
          <div class="table-scroll rows"><table class="totals cards">
            <thead>
              <tr>
                <th>Kind</th>
                <th>Status</th>
                <th>Outcome</th>
                <th class="num">Count</th>
                <th class="num">Amount</th>
                <th class="num">Fees</th>
              </tr>
            </thead>
            <tbody>
              ${rows.map(
                (r) =>
                  html`<tr key=${r.kind + r.status} data-testid="summary-row">
                    <td data-label="Kind">${humanise(r.kind)}</td>
                    <td data-label="Status"><${StatusBadge} status=${r.status} /></td>
                    <td data-label="Outcome" class="wrap">${outcomeOf(r.status).label}</td>
                    <td class="num" data-label="Count">${r.count}</td>
                    <td class="num" data-label="Amount" data-testid="amount">
                      ${formatMoney(r.amount, currency, r.amountDecimal)}
                    </td>
                    <td class="num" data-label="Fees" data-testid="amount">
                      ${formatMoney(r.fee, currency, r.feeDecimal, r.amountDecimal)}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table></div>
        </article>`;
      })}
    </div>
  </section>`;
}

function LedgerView({ api, onAuthError }) {
  const [filters, setFilters] = useState(EMPTY_FILTERS);
  // Bumped by every "Apply", so that applying the same filters again reloads.
  const [version, setVersion] = useState(0);
  // cursors[i] is the cursor of page i (null for the first page).
  const [cursors, setCursors] = useState([null]);
  const [page, setPage] = useState({ key: null, data: [], nextCursor: null, error: null });
  const [summary, setSummary] = useState({ key: null, value: null, error: null });
  const [selectedId, setSelectedId] = useState(null);
  const [download, setDownload] = useState({ busy: false, message: null, error: null });
  // The currencies of the whole ledger (for the currency select and the amounts' exponent).
  const [currencies, setCurrencies] = useState([]);

  useEffect(() => {
    let live = true;
    api
      .summary({})
      .then((all) => live && setCurrencies(currenciesOf(all)))
      .catch((error) => live && onAuthError(error));
    return () => {
      live = false;
    };
  }, [api]);

  // Each answer remembers the request it answers; until the current request's answer is in,
  // the list (or summary) is loading, so stale rows are never shown as current.
  const cursor = cursors[cursors.length - 1];
  const listKey = JSON.stringify([version, filters, cursor]);
  const summaryKey = JSON.stringify([version, queryFilters(filters)]);
  const pageLoading = page.key !== listKey;
  const summaryLoading = summary.key !== summaryKey;

  useEffect(() => {
    let live = true;
    api
      .list({ ...queryFilters(filters), order: filters.order }, cursor ?? undefined, filters.limit)
      .then(
        (result) => live && setPage({ key: listKey, data: result.data, nextCursor: result.nextCursor, error: null }),
      )
      .catch((error) => live && !onAuthError(error) && setPage({ key: listKey, data: [], nextCursor: null, error }));
    return () => {
      live = false;
    };
  }, [listKey]);

  useEffect(() => {
    let live = true;
    api
      .summary(queryFilters(filters))
      .then((value) => live && setSummary({ key: summaryKey, value, error: null }))
      .catch((error) => live && !onAuthError(error) && setSummary({ key: summaryKey, value: null, error }));
    return () => {
      live = false;
    };
  }, [summaryKey]);

  const apply = (form) => {
    setFilters({ ...form });
    setVersion((v) => v + 1);
    setCursors([null]);
    setSelectedId(null);
  };

  const downloadCsv = async (form) => {
    setDownload({ busy: true, message: null, error: null });
    try {
      const { blob, filename } = await api.exportCsv({ ...queryFilters(form), order: form.order });
      const url = URL.createObjectURL(blob);
      const anchor = document.createElement('a');
      anchor.href = url;
      anchor.download = filename;
      document.body.append(anchor);
      anchor.click();
      anchor.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      setDownload({ busy: false, message: `Downloaded ${filename}`, error: null });
    } catch (error) {
      if (!onAuthError(error)) setDownload({ busy: false, message: null, error });
    }
  };

  const pageNumber = cursors.length;
  return html`<div class="ledger">
    <${Filters}
      key=${currencies.length}
      applied=${filters}
      currencies=${currencies}
      onApply=${apply}
      onDownload=${downloadCsv}
      downloading=${download.busy}
    />
    ${download.message && html`<p class="notice" role="status" data-testid="download-status">${download.message}</p>`}
    <${ErrorBox} error=${download.error} testId="download-error" />
    <div class="columns">
      <section
        class="list"
        aria-label="Transactions"
        aria-busy=${pageLoading ? 'true' : 'false'}
        data-testid="transactions-section"
      >
        <h2>Transactions</h2>
        <${ErrorBox} error=${page.error} testId="list-error" />
        <${TransactionsTable} rows=${page.data} selectedId=${selectedId} onOpen=${setSelectedId} />
        <nav class="pager" aria-label="Pages">
          <button
            type="button"
            class="secondary"
            data-testid="previous-page"
            disabled=${pageNumber === 1 || pageLoading}
            onClick=${() => setCursors((c) => c.slice(0, -1))}
          >
            ← Previous
          </button>
          <span data-testid="page-number">Page ${pageNumber}</span>
          <button
            type="button"
            class="secondary"
            data-testid="next-page"
            disabled=${!page.nextCursor || pageLoading}
            onClick=${() => setCursors((c) => [...c, page.nextCursor])}
          >
            Next →
          </button>
        </nav>
      </section>
      ${
        selectedId &&
        html`<${TransactionDetail}
          key=${selectedId}
          api=${api}
          id=${selectedId}
          onClose=${() => setSelectedId(null)}
          onAuthError=${onAuthError}
        />`
      }
    </div>
    <${Summary}
      summary=${summary.value}
      error=${summary.error}
      loading=${summaryLoading}
    />
  </div>`;
}

/** Payout approvals and reconciliation reports (operations.js), one view: each section only when the key may use it. */
function OperationsView({ apiKey, scopes }) {
  return html`<div class="operations-view">
    ${scopes.includes('payouts:approve') && html`<${ApprovalQueue} apiKey=${apiKey} />`}
    ${
      scopes.includes('reconciliation:read') &&
      html`<${ReconciliationRuns} apiKey=${apiKey} canStart=${scopes.includes('reconciliation:write')} />`
    }
  </div>`;
}

/**
 * The views of the signed-in page, one tab each (the tab bar shows from two views on), each shown
 * only when `allowed(scopes)` holds for the key's scopes (GET /v1/api-keys/me): a finance key
 * (transactions:read only) sees the ledger alone, not tabs that would answer 403. A view is a
 * component taking `{ api, apiKey, scopes, onAuthError }`: `api` is financeApi(key) (api.js),
 * `onAuthError(error)` sends a refused key back to sign-in and returns true, else false.
 */
const VIEWS = [
  { id: 'ledger', label: 'Ledger', component: LedgerView, allowed: () => true },
  {
    id: 'operations',
    label: 'Approvals and reports',
    component: OperationsView,
    allowed: (scopes) => scopes.includes('payouts:approve') || scopes.includes('reconciliation:read'),
  },
  { id: 'audit', label: 'Audit trail', component: AuditTrail, allowed: (scopes) => scopes.includes('audit:read') },
];

function Dashboard({ apiKey, onSignOut }) {
  const api = useRef(financeApi(apiKey)).current;
  const [viewId, setViewId] = useState(VIEWS[0].id);
  // The key's scopes; until they are known (or if they cannot be read), the ledger alone.
  const [scopes, setScopes] = useState([]);

  /** A 401/403 while signed in: the key was revoked or changed; back to sign-in. */
  const onAuthError = useCallback(
    (error) => {
      if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
        onSignOut(keyProblemMessage(error));
        return true;
      }
      return false;
    },
    [onSignOut],
  );

  useEffect(() => {
    let live = true;
    api
      .me()
      .then((me) => live && setScopes(Array.isArray(me.scopes) ? me.scopes : []))
      .catch((error) => live && onAuthError(error));
    return () => {
      live = false;
    };
  }, [api]);

  const views = VIEWS.filter((v) => v.allowed(scopes));
  const view = views.find((v) => v.id === viewId) ?? views[0];
  return html`<div class="dashboard">
    <header class="top">
      <h1>Finance</h1>
      <button type="button" class="secondary" onClick=${() => onSignOut(null)} data-testid="sign-out">Sign out</button>
    </header>
    ${
      views.length > 1 &&
      html`<nav class="tabs" role="tablist" aria-label="Views">
        ${views.map(
          (v) =>
            html`<button
              key=${v.id}
              type="button"
              role="tab"
              aria-selected=${v.id === view.id ? 'true' : 'false'}
              class=${v.id === view.id ? 'tab active' : 'tab'}
              data-testid=${`tab-${v.id}`}
              onClick=${() => setViewId(v.id)}
            >
              ${v.label}
            </button>`,
        )}
      </nav>`
    }
    <${view.component} key=${view.id} api=${api} apiKey=${apiKey} scopes=${scopes} onAuthError=${onAuthError} />
  </div>`;
}

function App() {
  const [apiKey, setApiKey] = useState(readStoredKey);
  const [notice, setNotice] = useState(null);
  const signIn = (key) => {
    sessionStorage.setItem(KEY_STORAGE, key);
    setNotice(null);
    setApiKey(key);
  };
  const signOut = useCallback((message) => {
    sessionStorage.removeItem(KEY_STORAGE);
    setNotice(message);
    setApiKey(null);
  }, []);
  return apiKey
    ? html`<${Dashboard} key=${apiKey} apiKey=${apiKey} onSignOut=${signOut} />`
    : html`<${SignIn} onSignedIn=${signIn} notice=${notice} />`;
}

const root = document.getElementById('app');
root.replaceChildren(); // drop the "Loading…" placeholder
render(html`<${App} />`, root);
