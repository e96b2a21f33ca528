// Finance operations on the page: the payout approval queue (approve/reject, scope payouts:approve)
// and reconciliation reports (scope reconciliation:read; starting one needs reconciliation:write).
// The page shows a section only to a key whose scopes allow it (app.js). Self-contained: each section
// calls the gateway with the signed-in key and says so when the key lacks the scope, without signing
// out. Every refusal of an action (approve, reject, start a report, export) is shown to the person
// until the next action: reloading the list afterwards never clears it.
import { h } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import htm from 'htm';
import { ApiError, attachmentName, queryString } from './api.js';
import { formatMoney } from './format.js';

const html = htm.bind(h);

/** One call with the key; JSON answer, or an ApiError from the problem+json. */
async function request(key, method, path, { params, body, accept = 'application/json' } = {}) {
  const headers = { Authorization: `Bearer ${key}`, Accept: accept };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  // Approve/reject move money: every click is a new request with its own key.
  if (method === 'POST' && path.startsWith('/v1/payouts/')) headers['Idempotency-Key'] = crypto.randomUUID();
  let response;
  try {
    response = await fetch(path + queryString(params ?? {}), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
    });
  } catch (error) {
    throw new ApiError(0, { detail: `The gateway could not be reached (${error.message}).` });
  }
  if (!response.ok) {
    let problem = null;
    try {
      problem = await response.json();
    } catch {
      // Not JSON: the status alone.
    }
    throw new ApiError(response.status, problem);
  }
  return accept === 'application/json' ? response.json() : response;
}

/** What a section shows for an error: the scope it needs on 403, else the problem's detail. */
function problemText(error, scope) {
  if (error.status === 403 && error.code === 'forbidden') return `This key lacks the ${scope} scope.`;
  return error.message;
}

/** What to tell the person whose decision on a payout was refused. */
function decisionRefusal(error) {
  if (error.code === 'approver_is_creator') return 'This key created the payout: another key must decide it.';
  if (error.code === 'invalid_state_transition')
    return `${error.message} Someone may have decided it already, or its approval lapsed.`;
  return problemText(error, 'payouts:approve');
}

/** Payouts awaiting approval, oldest first, with Approve and Reject (another client than the creator). */
export function ApprovalQueue({ apiKey }) {
  // `listError`: the list could not be read (cleared by the next good read). `refusal`: the last
  // decision was refused (kept until the next decision, whatever the list does meanwhile).
  const [state, setState] = useState({ rows: [], listError: null, refusal: null, notice: null, busy: null });
  const load = useCallback(async () => {
    try {
      const page = await request(apiKey, 'GET', '/v1/transactions', {
        params: { kind: 'payout', status: 'awaiting_approval', order: 'asc', limit: 50 },
      });
      setState((s) => ({ ...s, rows: page.data, listError: null }));
    } catch (error) {
      setState((s) => ({ ...s, rows: [], listError: problemText(error, 'transactions:read') }));
    }
  }, [apiKey]);
  useEffect(() => {
    void load();
  }, [load]);

  async function decide(row, decision) {
    const reason = decision === 'reject' ? window.prompt('Why is this payout rejected?') || undefined : undefined;
    setState((s) => ({ ...s, busy: row.id, notice: null, refusal: null }));
    try {
      const payout = await request(apiKey, 'POST', `/v1/payouts/${encodeURIComponent(row.id)}/${decision}`, {
        body: reason ? { reason } : {},
      });
      setState((s) => ({ ...s, busy: null, notice: `Payout ${row.reference}: ${payout.status.replace(/_/g, ' ')}.` }));
    } catch (error) {
      const verb = decision === 'approve' ? 'approved' : 'rejected';
      setState((s) => ({
        ...s,
        busy: null,
        refusal: `Payout ${row.reference} was not ${verb}: ${decisionRefusal(error)}`,
      }));
    }
    await load();
  }

  const error = state.refusal ?? state.listError;
  return html`<section class="operations" aria-label="Payout approvals" data-testid="approval-queue">
    <h2>Payouts awaiting approval</h2>
    ${state.notice && html`<p class="notice" role="status" data-testid="approval-notice">${state.notice}</p>`}
    ${state.refusal && html`<div class="error" role="alert" data-testid="approval-error">${state.refusal}</div>`}
    ${state.listError && html`<div class="error" role="alert" data-testid="approval-list-error">${state.listError}</div>`}
    ${state.rows.length === 0 && !error && html`<p class="empty">No payout is waiting for approval.</p>`}
    ${
      state.rows.length > 0 &&
      html`<div class="table-scroll rows">
        <table class="transactions cards">
          <thead>
            <tr>
              <th>Created</th>
              <th class="num">Amount</th>
              <th>Decision</th>
              <th>Reference</th>
              <th>Description</th>
            </tr>
          </thead>
          <tbody>
            ${state.rows.map(
              (row) =>
                html`<tr key=${row.id} data-testid="approval-row">
                  <td data-label="Created">${row.createdAt.slice(0, 16).replace('T', ' ')}</td>
                  <td class="num" data-label="Amount" data-testid="amount">
                    ${formatMoney(row.amount, row.currency, row.amountDecimal)}
                  </td>
                  <td class="action">
                    <button type="button" disabled=${state.busy === row.id} onClick=${() => decide(row, 'approve')}>
                      Approve
                    </button>
                    <button
                      type="button"
                      class="secondary"
                      disabled=${state.busy === row.id}
                      onClick=${() => decide(row, 'reject')}
                    >
                      Reject
                    </button>
                  </td>
                  <td class="reference" data-label="Reference" title=${row.reference}><code>${row.reference}</code></td>
                  <td class="description" data-label="Description">${row.description ?? ''}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>`
    }
  </section>`;
}

const CLASSES = ['matched', 'status_mismatch', 'amount_mismatch', 'missing_at_provider', 'unknown_locally'];

/** Yesterday as [from, to) dates (UTC), the default period of a new report. */
function yesterday() {
  const today = new Date().toISOString().slice(0, 10);
  const from = new Date(Date.parse(today) - 86_400_000).toISOString().slice(0, 10);
  return { from, to: today };
}

/**
 * Reconciliation reports: the latest runs with their totals per class, CSV export, and (`canStart`:
 * the key holds reconciliation:write) a form to start one. A refused start or export is shown as an
 * error until the next action.
 */
export function ReconciliationRuns({ apiKey, canStart }) {
  const [runs, setRuns] = useState({ data: [], error: null });
  const [period, setPeriod] = useState(yesterday);
  const [notice, setNotice] = useState(null);
  const [refusal, setRefusal] = useState(null);
  const load = useCallback(async () => {
    try {
      const page = await request(apiKey, 'GET', '/v1/reconciliation-runs', { params: { limit: 10 } });
      setRuns({ data: page.data, error: null });
    } catch (error) {
      setRuns({ data: [], error: problemText(error, 'reconciliation:read') });
    }
  }, [apiKey]);
  useEffect(() => {
    void load();
  }, [load]);

  async function start(event) {
    event.preventDefault();
    setNotice(null);
    setRefusal(null);
    try {
      const run = await request(apiKey, 'POST', '/v1/reconciliation-runs', {
        body: { from: `${period.from}T00:00:00Z`, to: `${period.to}T00:00:00Z` },
      });
      setNotice(`Report ${run.id.slice(0, 8)} queued.`);
    } catch (error) {
      const detail =
        error.code === 'reconciliation_run_in_progress'
          ? 'a report for this period is already running.'
          : [problemText(error, 'reconciliation:write'), ...error.errors.map((e) => e.message)].join(' ');
      setRefusal(`The report was not started: ${detail}`);
    }
    await load();
  }

  async function download(run) {
    setNotice(null);
    setRefusal(null);
    try {
      const response = await request(apiKey, 'GET', `/v1/reconciliation-runs/${run.id}/export`, { accept: 'text/csv' });
      const url = URL.createObjectURL(await response.blob());
      const link = document.createElement('a');
      link.href = url;
      link.download = attachmentName(response.headers.get('content-disposition'), `reconciliation-${run.id}.csv`);
      link.click();
      URL.revokeObjectURL(url);
    } catch (error) {
      setRefusal(`The report's CSV could not be downloaded: ${problemText(error, 'reconciliation:read')}`);
    }
  }

  return html`<section class="operations" aria-label="Reconciliation reports" data-testid="reconciliation-runs">
    <h2>Reconciliation reports</h2>
    <form class="filters" onSubmit=${start} data-testid="reconciliation-form">
      <label
        >From (UTC)<input
          type="date"
          value=${period.from}
          onInput=${(e) => setPeriod({ ...period, from: e.target.value })}
      /></label>
      <label
        >To (exclusive)<input
          type="date"
          value=${period.to}
          onInput=${(e) => setPeriod({ ...period, to: e.target.value })}
      /></label>
      ${canStart && html`<button type="submit">Start a report</button>`}
      <button type="button" class="secondary" onClick=${load}>Refresh</button>
    </form>
    ${notice && html`<p class="notice" role="status" data-testid="reconciliation-notice">${notice}</p>`}
    ${refusal && html`<div class="error" role="alert" data-testid="reconciliation-refusal">${refusal}</div>`}
    ${runs.error && html`<div class="error" role="alert" data-testid="reconciliation-error">${runs.error}</div>`}
    ${
      runs.data.length > 0 &&
      html`<div class="table-scroll rows">
        <table class="transactions cards runs">
          <thead>
            <tr>
              <th>Period</th>
              <th>Status</th>
              <th>CSV</th>
              <th>Progress</th>
              ${CLASSES.map((c) => html`<th key=${c}>${c.replace(/_/g, ' ')}</th>`)}
            </tr>
          </thead>
          <tbody>
            ${runs.data.map(
              (run) =>
                html`<tr key=${run.id} data-testid="reconciliation-run">
                  <td data-label="Period">
                    ${run.from.slice(0, 16).replace('T', ' ')} → ${run.to.slice(0, 16).replace('T', ' ')}
                  </td>
                  <td data-label="Status"><span class=${`badge status-${run.status}`}>${run.status}</span></td>
                  <td class="action">
                    <button type="button" class="secondary" onClick=${() => download(run)}>Export</button>
                  </td>
                  <td data-label="Progress">${run.processed} / ${run.total}</td>
                  ${CLASSES.map(
                    (c) =>
                      html`<td key=${c} class="num" data-label=${c.replace(/_/g, ' ')}>${run.totals[c] ?? 0}</td>`,
                  )}
                </tr>`,
            )}
          </tbody>
        </table>
      </div>`
    }
  </section>`;
}
